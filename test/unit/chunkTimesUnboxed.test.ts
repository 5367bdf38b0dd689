// A run's chunk times stay arrays of unboxed doubles (8 bytes each) when the run is written and
// scrubbed, however often. An optimized function that reads, by index, the elements of arrays of
// every kind (chunk times, lists of records, of strings) makes V8 turn each array of doubles it reads
// into an array of boxed numbers, three times the heap: a saved hour of chunk times took 3.6 kB a
// request instead of 1.5 (`npm run bench:soak`). runFile.ts and redact.ts read them through
// builtins (every, at), which never do.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { Scrubber } from '../../src/engine/core/redact';
import { serializeRunFile } from '../../src/engine/files/runFile';
import type { RunFile } from '../../src/engine/core/types';

setFlagsFromString('--allow-natives-syntax');
const hasDoubleElements = runInNewContext('(a) => %HasDoubleElements(a)') as (a: unknown) => boolean;

/** Chunk times as the client stamps them (doubles pushed one by one), beside arrays of other kinds. */
function run(): { run: RunFile; arrays: number[][] } {
  const arrays: number[][] = [];
  const requests = Array.from({ length: 2000 }, (_, index) => {
    const chunkTimesMs: number[] = [];
    for (let i = 0; i < 60; i++) chunkTimesMs.push(20.125 + i * 10.5 + index / 7);
    arrays.push(chunkTimesMs);
    return { index, chunkTimesMs, notes: ['a server word', 1.5], retries: [{ reason: 'status' }] };
  });
  return { run: { format: 'llm-profiler.run', version: 1, id: 'r', endpoint: { url: 'http://127.0.0.1:1', api: 'openai-chat' }, requests } as unknown as RunFile, arrays };
}

test('writing a run, many times over, leaves its chunk times unboxed', () => {
  const { run: r, arrays } = run();
  assert.ok(arrays.every(hasDoubleElements));
  for (let i = 0; i < 10; i++) serializeRunFile(r, new Scrubber(['sk-test-secret-123456']));
  const boxed = arrays.filter((a) => !hasDoubleElements(a)).length;
  assert.equal(boxed, 0, `${boxed} of ${arrays.length} chunk-time arrays were turned into boxed numbers`);
});

test('scrubbing a run, many times over, leaves its chunk times unboxed', () => {
  const { run: r, arrays } = run();
  const scrubber = new Scrubber(['sk-test-secret-123456']);
  for (let i = 0; i < 10; i++) scrubber.scrubValue(r);
  const boxed = arrays.filter((a) => !hasDoubleElements(a)).length;
  assert.equal(boxed, 0, `${boxed} of ${arrays.length} chunk-time arrays were turned into boxed numbers`);
});
