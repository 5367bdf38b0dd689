// docs/metrics.md shows the metric catalogue (src/present/metricCatalogue.ts) between its markers,
// as metricTableMarkdown() writes it: a metric added to the catalogue and not to the docs fails here.
// `UPDATE_DOCS=1 node --import tsx --test test/unit/docTables.test.ts` rewrites the table in place.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { metricTableMarkdown } from '../../src/present/metricCatalogue';

const DOC = join(__dirname, '..', '..', 'docs', 'metrics.md');
const START = '<!-- metrics:start -->';
const END = '<!-- metrics:end -->';

/** The document with the text between its markers replaced by `table`; throws when the markers are missing or out of order. */
function withTable(doc: string, table: string): string {
  const start = doc.indexOf(START);
  const end = doc.indexOf(END);
  if (start < 0 || end < start) throw new Error(`docs/metrics.md needs the markers ${START} and ${END}, in that order`);
  return `${doc.slice(0, start + START.length)}\n${table}\n${doc.slice(end)}`;
}

test('withTable replaces only what lies between the markers', () => {
  assert.equal(withTable(`a\n${START}\nold\n${END}\nb`, '| x |'), `a\n${START}\n| x |\n${END}\nb`);
  assert.throws(() => withTable(`${END}\n${START}`, 'x'), /markers/);
});

test('docs/metrics.md shows the metric catalogue between its markers', { skip: existsSync(DOC) ? false : 'docs/metrics.md does not exist yet (its author adds it with the metrics:start and metrics:end markers)' }, () => {
  const doc = readFileSync(DOC, 'utf8');
  const want = withTable(doc, metricTableMarkdown());
  if (process.env.UPDATE_DOCS === '1') {
    if (want !== doc) writeFileSync(DOC, want);
    return;
  }
  assert.equal(doc, want, 'docs/metrics.md is not the catalogue: run UPDATE_DOCS=1 node --import tsx --test test/unit/docTables.test.ts');
});
