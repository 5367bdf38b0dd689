// docs/cli.md's option reference is the one src/cli/reference.ts writes from the options table: an
// option added, removed or reworded without the page fails here. `UPDATE_DOCS=1` rewrites the block.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cliReference, defaultCell } from '../../src/cli/reference';
import { OPTIONS, option } from '../../src/jobs/options';
import type { OptionSpec } from '../../src/jobs/options';

const PAGE = join(__dirname, '../../docs/cli.md');
const START = '<!-- cli-options:start -->';
const END = '<!-- cli-options:end -->';

/** The page's text between the markers, and the page with `block` put there instead. */
function splitPage(page: string): { block: string; withBlock: (block: string) => string } {
  const a = page.indexOf(START);
  const b = page.indexOf(END);
  assert.ok(a >= 0 && b > a, `docs/cli.md must hold ${START} then ${END}`);
  const head = page.slice(0, a + START.length);
  const tail = page.slice(b);
  return { block: page.slice(a + START.length, b), withBlock: (block) => `${head}\n${block}${tail}` };
}

test('docs/cli.md holds the reference generated from the options table', () => {
  const page = readFileSync(PAGE, 'utf8');
  const { block, withBlock } = splitPage(page);
  const generated = cliReference();
  if (process.env.UPDATE_DOCS === '1' && block !== `\n${generated}`) writeFileSync(PAGE, withBlock(generated));
  else assert.equal(block, `\n${generated}`, 'docs/cli.md is out of date: run UPDATE_DOCS=1 node --import tsx --test test/unit/cliReference.test.ts');
});

test('every option of the table has its row, with its flag and help', () => {
  const text = cliReference();
  for (const o of OPTIONS) {
    assert.ok(text.includes(`${o.flag}`), `${o.flag} is missing`);
    assert.ok(text.includes(o.help.slice(0, 20).replaceAll('*', '\\*').replaceAll('|', '\\|')), `${o.flag}'s help is missing`);
  }
});

test('an option added to the table changes the reference (the page would fail above)', () => {
  const added: OptionSpec = { key: 'newThing', flag: '--new-thing', kind: 'int', min: 1, max: 9, commands: ['run'], group: 'Load', value: 'N', help: 'a new option', defaults: { run: 3 } };
  const text = cliReference([...OPTIONS, added]);
  assert.notEqual(text, cliReference());
  assert.match(text, /^\| `--new-thing N` \| `run` \| 3 \| {2}\| a new option\. A whole number from 1 to 9\. \|$/m);
});

test('defaults: one value where every command agrees, else per command, then the note', () => {
  assert.equal(defaultCell(option('batchSize')), '512');
  assert.equal(defaultCell(option('requests')), 'run: 10; sweep: 16; ab: 100');
  assert.equal(defaultCell(option('parallel')), 'prefill-dial: 4; serve: 4; run: the concurrency; sweep: the largest concurrency');
  assert.equal(defaultCell(option('json')), '');
});
