// The extension host compares a run with its baseline on a worker thread (src/extension/compareThread.ts):
// the bootstrap over two runs of thousands of requests takes seconds, which on the host's thread would
// freeze the editor. Here under node with the real bundle (dist/files.js, built by esbuild.mjs's own
// options, which the thread runs as COMPARE_ROLE): this thread stays responsive while two runs of 4,000
// requests are compared, the answer is the engine's (the CLI's) to the last digit, a file that cannot
// be read is said, a comparison past its deadline is stopped and the next works on a fresh thread, and
// without the bundle the host's thread does it with fewer resamples.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { compareRuns } from '../../src/engine/analysis/compare';
import { comparability } from '../../src/engine/analysis/comparable';
import { Scrubber, scrubRun } from '../../src/engine/core/redact';
import type { RunFile } from '../../src/engine/core/types';
import { readRunFile, writeRunFile } from '../../src/engine/files/runFile';
import { CompareThread, IN_HOST_RESAMPLES, type CompareThreadOptions } from '../../src/extension/compareThread';
import { compareFiles } from '../../src/extension/compareWork';
import { fixtureRun } from '../support/fixtureRuns';

const root = join(__dirname, '..', '..');
let dir = '';
let workerFile = '';
const threads: CompareThread[] = [];
const paths = { base: '', next: '', small: '', smaller: '' };

function thread(o: Partial<CompareThreadOptions> = {}): { thread: CompareThread; log: string[]; inThread: number[] } {
  const log: string[] = [];
  const inThread: number[] = [];
  const t = new CompareThread({
    workerFile,
    inThread: (job) => { inThread.push(job.resamples ?? -1); return compareFiles(readRunFile, job); },
    log: (l) => log.push(l),
    ...o,
  });
  threads.push(t);
  return { thread: t, log, inThread };
}

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'compare-thread-'));
  const { targets, optionsFor } = await import('../../esbuild.mjs');
  const target = targets.find((t) => t.outfile === 'dist/files.js');
  assert.ok(target, 'esbuild.mjs builds dist/files.js');
  workerFile = join(dir, 'files.js');
  await build({ ...optionsFor(target), absWorkingDir: root, outfile: workerFile, sourcemap: false, logLevel: 'silent' });
  const base = fixtureRun({ seed: 81, requests: 4000, concurrency: 16, id: 'base-4000' });
  const next = fixtureRun({ seed: 82, requests: 4000, concurrency: 16, id: 'next-4000' });
  const write = async (run: RunFile, name: string) => { const p = join(dir, name); await writeRunFile(p, scrubRun(run, new Scrubber())); return p; };
  paths.base = await write(base, 'base.json');
  paths.next = await write(next, 'next.json');
  paths.small = await write(fixtureRun({ seed: 83, requests: 40, id: 'small-a' }), 'small-a.json');
  paths.smaller = await write(fixtureRun({ seed: 84, requests: 40, id: 'small-b' }), 'small-b.json');
});

after(() => {
  for (const t of threads) t.dispose();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test('two runs of 4,000 requests compared on the thread while this one stays responsive; the answer is the engine\'s', async () => {
  const { thread: t } = thread();
  let last = performance.now();
  let maxGapMs = 0;
  const ticker = setInterval(() => { const now = performance.now(); maxGapMs = Math.max(maxGapMs, now - last); last = now; }, 5);
  const t0 = performance.now();
  let pair;
  try {
    pair = await t.compare(paths.base, paths.next);
    await new Promise((r) => setTimeout(r, 20));
  } finally {
    clearInterval(ticker);
  }
  const ms = performance.now() - t0;
  console.log(`4,000 + 4,000 requests compared on the thread in ${ms.toFixed(0)} ms (${pair.comparison.method.resamples} resamples); this thread's longest pause ${maxGapMs.toFixed(1)} ms`);
  assert.ok(ms > 300, `long enough to have held this thread (${ms.toFixed(0)} ms)`);
  assert.ok(maxGapMs < 200, `this thread was held ${maxGapMs.toFixed(0)} ms`);
  // the same seed and resamples as `llm-profiler compare BASE NEW`: the same numbers
  const [b, n] = [await readRunFile(paths.base), await readRunFile(paths.next)];
  assert.deepEqual(pair.comparison, compareRuns(b, n));
  assert.equal(pair.comparison.base.runId, 'base-4000');
  assert.deepEqual(pair.problems, comparability(b, n));
  assert.ok(!pair.problems.some((p) => p.severity === 'refuse'), 'the same workload');
});

test('a file that cannot be read is said, and the thread goes on to the next', async () => {
  const { thread: t } = thread();
  const cut = join(dir, 'cut.json');
  writeFileSync(cut, '{"format":"llm-profiler.run","version":1,');
  await assert.rejects(t.compare(paths.small, cut), (e: Error) => /cut\.json|JSON|end/i.test(e.message));
  const pair = await t.compare(paths.small, paths.smaller);
  assert.equal(pair.comparison.next.runId, 'small-b');
});

test('a comparison past its deadline is stopped; the next starts a fresh thread', async () => {
  const { thread: t, log } = thread({ deadlineMs: 50 });
  await assert.rejects(t.compare(paths.base, paths.next), /took too long/);
  assert.match(log.join('\n'), /stopped after 50 ms/);
  const { thread: t2 } = thread({ deadlineMs: 60_000 });
  const pair = await t2.compare(paths.small, paths.smaller);
  assert.equal(pair.comparison.base.runId, 'small-a');
});

test('without the bundle, the host\'s thread compares with fewer resamples, and says why', async () => {
  const { thread: t, log, inThread } = thread({ workerFile: join(dir, 'missing.js') });
  const pair = await t.compare(paths.small, paths.smaller);
  assert.deepEqual(inThread, [IN_HOST_RESAMPLES]);
  assert.equal(pair.comparison.method.resamples, IN_HOST_RESAMPLES);
  assert.match(log[0] ?? '', /cannot start \(.*missing\.js is missing\); comparing on the extension host's thread with 500 resamples/);
});
