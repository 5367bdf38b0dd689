// A worker thread that dies (--workers): the CLI from its bundle against a real step server on
// 127.0.0.1, one of its threads ended for real by the worker-exit failpoint (src/engine/run/failpoints.ts:
// process.exit in that thread after its Nth finished request). The run goes on on the other thread and
// ends; what the dead thread had in flight is recorded as lost (error kind "worker", with why), and that
// is exactly what the server's own log shows as received but never recorded by the client; an open
// loop's arrivals go to the living thread, and the slots of --max-concurrency the dead one held come free.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseRunFile } from '../../src/engine/files/runFile';
import type { RunFile } from '../../src/engine/core/types';
import { FAILPOINT_EXIT_CODE, FAILPOINTS_ENV } from '../../src/engine/run/failpoints';
import { buildCli, runCliProcess } from '../support/cli';
import type { CliProcessResult } from '../support/cli';
import { startStepServer } from '../support/stepServer';
import type { StepServer } from '../support/stepServer';
import type { ScriptedRequestLog } from '../support/scriptedServer';

before(buildCli);

const SEED = 1000;

const posts = (s: StepServer): ScriptedRequestLog[] => s.log.filter((l) => l.path === '/v1/chat/completions');

/** The CLI's `run` against the server with `args`, thread 2 of 2 ended after its `after`th finished request (or `failpoints`); the run file read back. */
async function runWithDeadThread(s: StepServer, args: readonly string[], after: number, failpoints = `worker-exit:2@${after}`): Promise<{ r: CliProcessResult; run: RunFile; dir: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'faults-workers-'));
  const out = join(dir, 'run.json');
  // replies of different lengths: a closed loop's streams end at different steps, so a thread that
  // dies has requests in flight (the step server ends streams of one length together)
  writeFileSync(join(dir, 'prompts.jsonl'), [11, 17, 23, 29, 37, 19, 31].map((n) => JSON.stringify({ prompt: `say ${n} words`, max_tokens: n })).join('\n'));
  args = args.map((a) => a.replace('DATASET', join(dir, 'prompts.jsonl')));
  const r = await runCliProcess(
    ['run', '--url', s.url, '--api', 'openai-chat', '--warmup', '0', '--seed', String(SEED), '--workers', '2', '--out', out, ...args],
    { env: { [FAILPOINTS_ENV]: failpoints, LLM_PROFILER_STATE: join(dir, 'state') }, killMs: 60_000 },
  );
  assert.ok(existsSync(out), `no run file; stderr:\n${r.stderr}`);
  return { r, run: parseRunFile(readFileSync(out, 'utf8')), dir };
}

/**
 * Against the server's log: every request it received is in the run once, and those it received but
 * the client holds no answer for are exactly the ones recorded as lost with the thread.
 */
function checkLost(run: RunFile, log: readonly ScriptedRequestLog[], total: number): RunFile['requests'] {
  const indexes = run.requests.map((q) => q.index).sort((a, b) => a - b);
  assert.deepEqual(indexes, Array.from({ length: total }, (_, i) => i), 'every request recorded once');
  const received = new Set(log.map((l) => l.seed! - SEED));
  assert.equal(received.size, log.length, 'each request reached the server once');
  const answered = new Set(run.requests.filter((q) => !q.error).map((q) => q.index));
  const lost = run.requests.filter((q) => q.error?.kind === 'worker');
  assert.equal(lost.length + answered.size, run.requests.length, `no other failures: ${JSON.stringify(run.summary.errorsByKind)}`);
  for (const i of answered) assert.ok(received.has(i), `request ${i} answered but never received`);
  const unanswered = [...received].filter((i) => !answered.has(i)).sort((a, b) => a - b);
  assert.deepEqual(lost.map((q) => q.index), unanswered, 'lost = received by the server, never answered to the client');
  assert.ok(lost.length >= 1, 'the thread had requests in flight when it died');
  for (const q of lost) assert.ok(q.sentAt > 0 && q.chunkTimesMs.length === 0);
  return lost;
}

/** The most requests the server had open at once, from its own record. */
function maxOverlap(log: readonly ScriptedRequestLog[]): number {
  const events = log.flatMap((l) => [[l.receivedAt, 1] as const, [l.endedAt ?? Infinity, -1] as const]).sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let cur = 0;
  let max = 0;
  for (const [, d] of events) max = Math.max(max, (cur += d));
  return max;
}

test('closed loop, a thread dies: the other goes on to the count, what the dead one had in flight is lost and said, nothing else', async () => {
  const s = await startStepServer({ stepMs: 10, ttftMs: 20 });
  let dir = '';
  try {
    const got = await runWithDeadThread(s, ['--concurrency', '6', '--requests', '40', '--dataset', 'DATASET'], 5);
    dir = got.dir;
    const { r, run } = got;
    assert.equal(r.code, 1, `exit code as for failed requests; stderr:\n${r.stderr}`);
    const lost = checkLost(run, posts(s), 40);
    assert.ok(lost.length <= 3, `the dead thread ran 3 of the 6 streams, lost ${lost.length}`);
    const why = `worker thread 2 of 2 exited (code ${FAILPOINT_EXIT_CODE}); the run went on with 3 of 6 streams`;
    for (const q of lost) assert.equal(q.error?.message, why);
    assert.equal(run.summary.failed, lost.length);
    assert.equal(run.summary.completed, 40 - lost.length);
    assert.equal(run.summary.errorsByKind.worker, lost.length);
    assert.ok(r.stdout.includes(`Lost: ${lost.length} ${lost.length === 1 ? 'request' : 'requests'} in flight when ${why}`), r.stdout);
    assert.match(r.stdout, new RegExp(`Errors: ${lost.length} of 40 \\(worker ${lost.length}\\)`));
    assert.deepEqual(readdirSync(dir).filter((n) => n.endsWith('.journal.jsonl')), [], 'the run file is in place: its journal went');
    console.log(`# closed loop: ${lost.length} lost with the thread; ${run.summary.completed} answered`);
  } finally {
    await s.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  }
});

test('open loop, a thread dies: every arrival is still sent (its unsent ones by the living thread), the in-flight ones lost', async () => {
  const s = await startStepServer({ stepMs: 10, ttftMs: 20 });
  let dir = '';
  try {
    const got = await runWithDeadThread(s, ['--rate', '40', '--requests', '40', '--dataset', 'DATASET'], 4);
    dir = got.dir;
    const { r, run } = got;
    assert.equal(r.code, 1, r.stderr);
    const log = posts(s);
    assert.equal(log.length, 40, 'the server received every arrival of the schedule');
    const lost = checkLost(run, log, 40);
    for (const q of lost) assert.equal(q.error?.message, `worker thread 2 of 2 exited (code ${FAILPOINT_EXIT_CODE}); its arrivals went to the other threads`);
    // each arrival keeps its place in the schedule: those handed on were due when they were due
    const sorted = [...run.requests].sort((a, b) => a.index - b.index);
    for (let i = 1; i < sorted.length; i++) assert.ok(sorted[i]!.scheduledAt >= sorted[i - 1]!.scheduledAt);
    console.log(`# open loop: ${lost.length} lost with the thread`);
  } finally {
    await s.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  }
});

test('open loop with --max-concurrency, a thread dies: the slots it held come free, the cap is reached again', async () => {
  const s = await startStepServer({ stepMs: 10, ttftMs: 20 });
  let dir = '';
  try {
    const got = await runWithDeadThread(s, ['--rate', '200', '--max-concurrency', '4', '--requests', '40', '--dataset', 'DATASET'], 3);
    dir = got.dir;
    const { r, run } = got;
    assert.equal(r.code, 1, r.stderr);
    const log = posts(s);
    assert.equal(log.length, 40, 'the server received every arrival');
    const lost = checkLost(run, log, 40);
    // after the last lost request reached the server (the thread died after that), 4 in flight again:
    // without its slots given back, the living thread would have had 4 − lost at most
    const lastLost = Math.max(...lost.map((q) => log.find((l) => l.seed === SEED + q.index)!.receivedAt));
    const after = maxOverlap(log.filter((l) => l.receivedAt > lastLost + 1));
    assert.equal(after, 4, `in flight after the death: at most ${after} (lost ${lost.length})`);
  } finally {
    await s.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  }
});

test('every thread dies: the run ends (no wait for threads that are gone), with what finished and what was lost', async () => {
  const s = await startStepServer({ stepMs: 10, ttftMs: 20 });
  let dir = '';
  try {
    const got = await runWithDeadThread(s, ['--concurrency', '4', '--requests', '40', '--dataset', 'DATASET'], 0, 'worker-exit:1@3,worker-exit:2@4');
    dir = got.dir;
    const { r, run } = got;
    assert.equal(r.code, 1, r.stderr);
    const log = posts(s);
    assert.ok(log.length < 40, `the server got ${log.length}: the run stopped when no thread was left`);
    const lost = run.requests.filter((q) => q.error?.kind === 'worker');
    const answered = new Set(run.requests.filter((q) => !q.error).map((q) => q.index));
    assert.equal(lost.length + answered.size, run.requests.length);
    assert.deepEqual(lost.map((q) => q.index), log.map((l) => l.seed! - SEED).filter((i) => !answered.has(i)).sort((a, b) => a - b));
    // the first to die says the run went on with the other's 2 streams, the last that none was left
    const whys = new Set(lost.map((q) => q.error!.message));
    for (const why of whys) assert.match(why, /^worker thread [12] of 2 exited \(code 70\); (the run went on with 2 of 4 streams|no thread was left to go on)$/);
    assert.ok([...whys].some((w) => w.endsWith('no thread was left to go on')), [...whys].join('\n'));
    for (const why of whys) assert.ok(r.stdout.includes(`in flight when ${why}`), r.stdout);
  } finally {
    await s.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  }
});
