// Trace files (`--trace`): the Mooncake JSONL and Azure CSV readers (good files, every refusal by its
// line, the limits), the format told from the content, and the prompts built from a trace: the same
// hash id gives the same text, a prompt's length is what the trace states as the servers count it.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { azureTimeMs, blockText, MAX_TRACE_TOKENS, parseTrace, readTrace, TRACE_BLOCK_TOKENS, TRACE_WORDS, traceFormatOfText, tracePrompt, traceSource, traceText, TraceError, uniqueText } from '../../src/engine/prompts/traces';
import type { TraceEntry } from '../../src/engine/prompts/traces';
import { syntheticChatCounter } from '../../src/localServer/tokenCount';
import { PRESETS } from '../../src/localServer/synthetic';
import { sharedWords, words } from '../support/words';

const dir = realpathSync(mkdtempSync(join(tmpdir(), 'traces-')));
after(() => rmSync(dir, { recursive: true, force: true }));

const jsonl = (...lines: unknown[]): string => lines.map((l) => (typeof l === 'string' ? l : JSON.stringify(l))).join('\n');

/** Throws a TraceError whose message holds every part (and names `line` when given). */
function refuses(text: string, parts: readonly (string | RegExp)[], line?: number, format?: 'mooncake' | 'azure'): void {
  assert.throws(() => parseTrace(text, 'f', format), (e: unknown) => {
    assert.ok(e instanceof TraceError, String(e));
    for (const p of parts) assert.match(e.message, typeof p === 'string' ? new RegExp(p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')) : p);
    if (line !== undefined) {
      assert.equal(e.line, line, e.message);
      assert.ok(e.message.startsWith(`f:${line}: `), e.message);
    }
    return true;
  });
}

test('Mooncake JSONL: the FAST25 lines, in time order, times from the earliest, blank lines, CRLF and a BOM', () => {
  const text = '\uFEFF' + [
    JSON.stringify({ timestamp: 1000, input_length: 655, output_length: 52, hash_ids: [46, 47] }),
    '',
    JSON.stringify({ timestamp: 27482, input_length: 655, output_length: 52, hash_ids: [46, 47] }),
    JSON.stringify({ timestamp: 10535, input_length: 672, output_length: 26, hash_ids: [46, 47] }),
    JSON.stringify({ timestamp: 10535, input_length: 100 }),
  ].join('\r\n');
  const t = parseTrace(text, 'f.jsonl');
  assert.equal(t.format, 'mooncake');
  assert.deepEqual(t.entries.map((e) => [e.line, e.atMs]), [[0, 0], [2, 9535], [3, 9535], [1, 26482]]);
  assert.deepEqual(t.entries[0], { line: 0, atMs: 0, inputLength: 655, outputLength: 52, hashIds: [46, 47] });
  assert.deepEqual(t.entries[2], { line: 3, atMs: 9535, inputLength: 100 }, 'output_length and hash_ids are optional');
  // a fractional timestamp, hash_ids empty or null (no sharing)
  assert.deepEqual(parseTrace(jsonl({ timestamp: 0.5, input_length: 3, hash_ids: [] }, { timestamp: 2.25, input_length: 3, hash_ids: null })).entries.map((e) => [e.atMs, e.hashIds]), [[0, undefined], [1.75, undefined]]);
});

test('Mooncake JSONL: every refusal names its line', () => {
  const ok = { timestamp: 0, input_length: 10, output_length: 4 };
  refuses(jsonl(ok, '{not json'), ['not valid JSON'], 2);
  refuses(jsonl(ok, '[1,2]'), ['expected a JSON object'], 2);
  for (const key of ['text_input', 'messages', 'payload', 'session_id', 'delay']) refuses(jsonl(ok, { ...ok, [key]: 'x' }), [`"${key}"`, 'not replayed here'], 2);
  refuses(jsonl({ input_length: 10 }), ['needs a "timestamp"'], 1);
  for (const ts of [-1, 'soon', 1e14]) refuses(jsonl(ok, { ...ok, timestamp: ts }), ['"timestamp" must be a number of ms'], 2);
  for (const n of [0, 1.5, '10', MAX_TRACE_TOKENS + 1, null]) refuses(jsonl({ ...ok, input_length: n }), ['"input_length" must be a whole number from 1 to 1,048,576'], 1);
  refuses(jsonl({ timestamp: 0 }), ['"input_length"', 'got nothing'], 1);
  for (const n of [0, -3, 2.5, MAX_TRACE_TOKENS + 1]) refuses(jsonl(ok, ok, { ...ok, output_length: n }), ['"output_length" must be a whole number'], 3);
  refuses(jsonl({ ...ok, hash_ids: 7 }), ['"hash_ids" must be a list'], 1);
  refuses(jsonl({ ...ok, hash_ids: [-1] }), ['"hash_ids[0]" must be a whole number from 0 to 4,294,967,295'], 1);
  refuses(jsonl({ ...ok, hash_ids: [1.5] }), ['"hash_ids[0]"'], 1);
  refuses(jsonl({ ...ok, hash_ids: [2 ** 32] }), ['"hash_ids[0]"'], 1);
  // AIPerf's rule: the last block holds 1 to 512 tokens
  refuses(jsonl({ ...ok, input_length: 513, hash_ids: [1] }), ['"hash_ids" has 1 block of 512 tokens for an input_length of 513: it needs 2'], 1);
  refuses(jsonl({ ...ok, input_length: 512, hash_ids: [1, 2] }), ['has 2 blocks', 'it needs 1'], 1);
  assert.equal(parseTrace(jsonl({ ...ok, input_length: 1024, hash_ids: [1, 2] })).entries[0]!.inputLength, 1024);
  assert.equal(parseTrace(jsonl({ ...ok, input_length: 513, hash_ids: [1, 2] })).entries[0]!.inputLength, 513);
  refuses('\n\n', ['no requests in the trace']);
});

test('Azure CSV: the published files\' rows, times relative to the earliest with their 100 ns digits', () => {
  const text = [
    'TIMESTAMP,ContextTokens,GeneratedTokens',
    '2023-11-16 18:17:03.9799600,4808,10',
    '2023-11-16 18:17:04.0319600,3180,8',
    '',
    '2023-11-16 18:17:04.0781490,110,27',
  ].join('\n');
  const t = parseTrace(text, 'AzureLLMInferenceTrace_code.csv');
  assert.equal(t.format, 'azure');
  assert.deepEqual(t.entries.map((e) => e.line), [0, 1, 2]);
  assert.deepEqual(t.entries.map((e) => [e.inputLength, e.outputLength]), [[4808, 10], [3180, 8], [110, 27]]);
  assert.ok(Math.abs(t.entries[1]!.atMs - 52) < 1e-3, String(t.entries[1]!.atMs));
  assert.ok(Math.abs(t.entries[2]!.atMs - 98.189) < 1e-3, String(t.entries[2]!.atMs));
  assert.equal(t.entries[0]!.hashIds, undefined);
  // the columns found by name, in any order and case; an offset and a T are read as ISO's
  const other = parseTrace('generatedtokens,TIMESTAMP,contexttokens\n5,2024-05-10T00:00:01+01:00,7\n6,2024-05-09 23:00:00.5Z,8\n', 'x.csv');
  assert.deepEqual(other.entries.map((e) => [e.line, e.atMs, e.inputLength, e.outputLength]), [[1, 0, 8, 6], [0, 500, 7, 5]], '00:00:01+01:00 is 23:00:01Z');
  assert.equal(azureTimeMs('2023-11-16 18:17:03.9799600'), Date.UTC(2023, 10, 16, 18, 17, 3) + 979.96);
});

test('Azure CSV: every refusal names its line', () => {
  const head = 'TIMESTAMP,ContextTokens,GeneratedTokens';
  refuses('TIME,Context,Generated\n1,2,3', ["expected the Azure LLM inference trace's header (TIMESTAMP,ContextTokens,GeneratedTokens)"], 1, 'azure');
  refuses(`${head}\n2023-11-16 18:17:03.97,10`, ['expected 3 cells'], 2);
  for (const ts of ['1700000000', '2023-11-16', '2023-02-30 10:00:00', '2023-13-01 10:00:00', '2023-11-16 25:00:00', 'yesterday']) {
    refuses(`${head}\n2023-11-16 18:17:03.97,10,5\n${ts},10,5`, ['TIMESTAMP must be a date and time as in Azure\'s files'], 3);
  }
  for (const n of ['0', '-5', '1.5', 'ten', '', '2000000']) refuses(`${head}\n2023-11-16 18:17:03.97,${n},5`, ['"ContextTokens" must be a whole number from 1 to 1,048,576'], 2);
  refuses(`${head}\n2023-11-16 18:17:03.97,10,0`, ['"GeneratedTokens" must be a whole number'], 2);
  refuses(`${head}\n`, ['no requests in the trace'], undefined, 'azure');
});

test('limits: the request count, the bytes read, and what the file is (a FIFO, a folder, missing)', async () => {
  const lines = jsonl(...Array.from({ length: 6 }, (_, i) => ({ timestamp: i, input_length: 1 })));
  assert.equal(parseTrace(lines, 'f', 'mooncake', 6).entries.length, 6);
  assert.throws(() => parseTrace(lines, 'f', 'mooncake', 5), (e: unknown) => e instanceof TraceError && e.line === 6 && /f:6: more than 5 requests: replay a part of the trace \(head -n 5\)/.test(e.message));
  const csv = `TIMESTAMP,ContextTokens,GeneratedTokens\n${Array.from({ length: 4 }, () => '2023-11-16 18:17:03.97,10,5').join('\n')}`;
  assert.throws(() => parseTrace(csv, 'f', 'azure', 3), /f:5: more than 3 requests/);
  const file = join(dir, 'big.jsonl');
  writeFileSync(file, lines);
  assert.equal((await readTrace(file)).entries.length, 6);
  await assert.rejects(readTrace(file, undefined, 64), (e: unknown) => e instanceof TraceError && /cannot read the trace .*big\.jsonl: larger than 64 bytes/.test(e.message));
  execFileSync('mkfifo', [join(dir, 'pipe.jsonl')]);
  await assert.rejects(readTrace(join(dir, 'pipe.jsonl')), /not a regular file \(a FIFO\)/);
  mkdirSync(join(dir, 'folder.jsonl'));
  await assert.rejects(readTrace(join(dir, 'folder.jsonl')), /not a regular file \(a folder\)/);
  await assert.rejects(readTrace(join(dir, 'none.jsonl')), /cannot read the trace .*none\.jsonl: does not exist/);
  await assert.rejects(readTrace('/proc/self/environ'), /files under \/proc, \/sys and \/dev are never read/);
});

test('the format is told from the content, the extension only when the content does not say', async () => {
  const csv = 'TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:17:03.97,10,5\n';
  const moon = jsonl({ timestamp: 0, input_length: 4 });
  assert.equal(traceFormatOfText(csv, 'trace.jsonl'), 'azure');
  assert.equal(traceFormatOfText(moon, 'trace.csv'), 'mooncake');
  assert.equal(traceFormatOfText('\n\n  ' + moon, 'x'), 'mooncake');
  assert.equal(traceFormatOfText('garbage', 'trace.CSV'), 'azure');
  assert.equal(traceFormatOfText('garbage', 'trace.txt'), 'mooncake');
  writeFileSync(join(dir, 'mislabelled.jsonl'), csv);
  assert.equal((await readTrace(join(dir, 'mislabelled.jsonl'))).format, 'azure');
  // a format given is the one read: a CSV read as Mooncake is refused at its first line
  await assert.rejects(readTrace(join(dir, 'mislabelled.jsonl'), 'mooncake'), /mislabelled\.jsonl:1: not valid JSON/);
});

const entry = (inputLength: number, hashIds?: number[], outputLength?: number): TraceEntry => ({ line: 0, atMs: 0, inputLength, ...(hashIds ? { hashIds } : {}), ...(outputLength ? { outputLength } : {}) });

test('block text: the same hash id gives the same text at every use, different ids part at the first word', () => {
  assert.equal(blockText(46), blockText(46));
  assert.equal(words(blockText(46)).length, TRACE_BLOCK_TOKENS);
  for (const [a, b] of [[0, 1], [46, 47], [5, 5 + TRACE_WORDS.length * TRACE_WORDS.length], [1_000_000, 3]] as const) {
    const shared = sharedWords(blockText(a), blockText(b));
    assert.ok(shared < 3, `${a} and ${b} share ${shared} words`);
  }
  assert.equal(sharedWords(blockText(7), blockText(8)), 0, 'ids that differ in their last digit part at once');
  // prompts: the same ids at the same places give the same text; the first different id parts them there
  const a = traceText(entry(1300, [1, 2, 3]), 0, 0);
  const b = traceText(entry(1300, [1, 2, 9]), 1, 0);
  const c = traceText(entry(1300, [1, 2, 3]), 2, 5);
  assert.equal(sharedWords(a, b), 2 * TRACE_BLOCK_TOKENS);
  assert.equal(a, c, 'neither the request nor the seed changes a block');
  // the last block, partial: the first words of the same block's text (a longer prompt's block holds it whole)
  const short = traceText(entry(1100, [1, 2, 3]), 3, 0);
  assert.equal(sharedWords(short, a), 1100);
  assert.equal(words(short).length, 1100);
});

test('every word a trace\'s prompts are made of is one token to the bundled server\'s synthetic models', () => {
  for (const preset of ['tiny', 'small'] as const) {
    const count = syntheticChatCounter(PRESETS[preset].vocab);
    const one = count([{ role: 'user', content: 'the' }]);
    for (const w of TRACE_WORDS) {
      for (const form of [w, w[0]!.toUpperCase() + w.slice(1)]) assert.equal(count([{ role: 'user', content: `the ${form}` }]) - one, 1, `${preset}: "${form}"`);
    }
  }
});

test('prompt lengths: exactly input_length words (the test servers\' count); the synthetic model adds its template\'s tokens only (within 2% from 1,100 tokens)', () => {
  const count = syntheticChatCounter(PRESETS.tiny.vocab);
  const template = new Set<number>();
  for (const [n, ids] of [[1, [4]], [511, [4]], [512, [4]], [513, [4, 5]], [2048, [4, 5, 6, 7]], [3000, undefined], [700, undefined], [1100, [9, 8, 7]]] as const) {
    const text = traceText(entry(n, ids ? [...ids] : undefined), 12, 3);
    assert.equal(words(text).length, n, `${n} tokens${ids ? '' : ' (no hash ids)'}`);
    const served = count([{ role: 'user', content: text }]);
    template.add(served - n - (words(text)[0]!.length - 1)); // the first word follows "user\n": spelled a letter a token
    if (n >= 1100) assert.ok(Math.abs(served - n) / n <= 0.02, `the synthetic model counts ${served} for ${n}`);
  }
  assert.equal(template.size, 1, `the same template overhead for every prompt: ${[...template].join(', ')}`);
  assert.ok([...template][0]! < 20);
});

test('without hash_ids each request has text of its own, which no block text starts like', () => {
  const texts = Array.from({ length: 300 }, (_, i) => uniqueText(i, 64, 9));
  const firsts = new Set(texts.map((t) => words(t)[0]));
  assert.equal(firsts.size, TRACE_WORDS.length, 'the first words cycle through every capitalised word');
  for (let i = 1; i < TRACE_WORDS.length; i++) assert.equal(sharedWords(texts[0]!, texts[i]!), 0, `request ${i}`);
  assert.ok(sharedWords(texts[0]!, texts[TRACE_WORDS.length]!) <= 1);
  for (const id of [0, 1, 99, 1234]) assert.equal(sharedWords(texts[0]!, blockText(id)), 0);
  assert.equal(uniqueText(3, 64, 9), uniqueText(3, 64, 9), 'seeded');
  assert.notEqual(uniqueText(3, 64, 9), uniqueText(3, 64, 10));
});

test('the trace as a prompt source: measured request k is the k-th line in time order, tagged with its line; warmups share no block', () => {
  const t = parseTrace(jsonl({ timestamp: 50, input_length: 600, output_length: 7, hash_ids: [1, 2] }, { timestamp: 10, input_length: 30 }));
  const src = traceSource(t, 1);
  const first = src.promptFor(5, false, 0);
  assert.deepEqual(first.tags, { traceLine: 1 });
  assert.equal(first.prompt.maxTokens, undefined, 'no output_length: the workload\'s max tokens');
  const second = src.promptFor(6, false, 1);
  assert.deepEqual(second.tags, { traceLine: 0 });
  assert.equal(second.prompt.maxTokens, 7, "output_length is the prompt's own max tokens");
  assert.equal(second.prompt.estimatedTokens, 600);
  assert.match(second.prompt.source!, /^synthetic \(trace line 1\)$/);
  assert.equal(second.prompt.messages[0]!.content, traceText(t.entries[1]!, 6, 1));
  const warm = src.promptFor(0, true, 1);
  assert.equal(warm.tags, undefined);
  assert.equal(words(warm.prompt.messages[0]!.content).length, 600);
  assert.equal(sharedWords(warm.prompt.messages[0]!.content, blockText(1)), 0, 'a warmup puts none of the trace\'s blocks in the cache');
  assert.deepEqual(tracePrompt(t.entries[0]!, 2, 1).messages, src.promptFor(2, false, 0).prompt.messages);
});
