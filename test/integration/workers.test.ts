// --workers N against a real scripted server on 127.0.0.1 and its own receive log: the closed loop's
// count and concurrency held across threads, the open loop's schedule and --max-concurrency, one time
// base, prompt references as one loop gives them, cancellation, and the CLI from its bundle.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runWorkload } from '../../src/engine/run/runner';
import { parseRunFile } from '../../src/engine/files/runFile';
import { arrivalGapsMs } from '../../src/engine/run/scheduler';
import { defaultWorkload } from '../../src/engine/core/workload';
import type { Progress, Prompt, RequestRecord, RunFile } from '../../src/engine/core/types';
import { buildCli, runCliProcess } from '../support/cli';
import { withServer } from '../support/withServer';
import { startScriptedServer } from '../support/scriptedServer';
import type { ScriptedRequestLog, ScriptedServer } from '../support/scriptedServer';

const posts = (s: ScriptedServer): ScriptedRequestLog[] => s.log.filter((l) => l.path === '/v1/chat/completions');

/** The most requests the server had open at once, from its own record. */
function maxOverlap(intervals: { start: number; end: number }[]): number {
  const events = intervals.flatMap((i) => [[i.start, 1] as const, [i.end, -1] as const]).sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let cur = 0;
  let max = 0;
  for (const [, d] of events) max = Math.max(max, (cur += d));
  return max;
}

/**
 * The worker threads' clocks against the server's (this thread's), by what must come after what: a
 * chunk arrives (sentAt + its chunk time, read on a worker) after the server wrote it (read here). A
 * thread on another time base, behind by more than 0.1 ms, fails it. And requests come in in the order
 * they were sent: sentAt is read once undici has written the request, on its worker, so two sends
 * close together may be received the other way round, but by no more than `slackMs`.
 */
function checkTimeBase(run: RunFile, log: readonly ScriptedRequestLog[], seed: number, slackMs: number): void {
  const bySeed = new Map(log.map((l) => [l.seed, l]));
  let closest = Infinity;
  for (const r of run.requests) {
    const l = bySeed.get(seed + r.index);
    assert.ok(l, `request ${r.index} reached the server`);
    const writes = l.writes.filter((x) => x.kind === 'content');
    assert.equal(r.chunkTimesMs.length, writes.length);
    r.chunkTimesMs.forEach((ms, i) => {
      const after = r.sentAt + ms - writes[i]!.at;
      closest = Math.min(closest, after);
      assert.ok(after > -0.1, `request ${r.index}, chunk ${i}: arrived ${after.toFixed(3)} ms after the server wrote it (a thread's clock off?)`);
    });
  }
  let worst = 0;
  const sent = [...run.requests].sort((a, b) => a.sentAt - b.sentAt);
  for (let i = 1; i < sent.length; i++) {
    const a = bySeed.get(seed + sent[i - 1]!.index)!;
    const b = bySeed.get(seed + sent[i]!.index)!;
    if (a.receivedAt > b.receivedAt) worst = Math.max(worst, sent[i]!.sentAt - sent[i - 1]!.sentAt);
  }
  console.log(`# chunk arrival − server write: min ${closest.toFixed(3)} ms; requests received out of send order by up to ${worst.toFixed(3)} ms of sentAt`);
  assert.ok(worst < slackMs, `requests sent ${worst} ms apart were received in the other order`);
}

/** Out-of-order slack, ms: 1 on a quiet machine; this one runs the server, two threads and other work on two cores. */
const ORDER_SLACK_MS = Number(process.env.WORKERS_ORDER_SLACK_MS ?? 25);

const prompt = (maxTokens: number, text: string): Prompt => ({ messages: [{ role: 'user', content: text }], maxTokens, source: 'test' });

before(buildCli);

test('closed loop on 2 threads: exactly the requests asked for, never more than C in flight, one index order, one time base', async () => {
  await withServer({ ttftMs: 8, itlMs: 3 }, async (s, { endpoint }) => {
    const progress: Progress[] = [];
    const seen: RequestRecord[] = [];
    const seed = 50;
    const run = await runWorkload(endpoint, defaultWorkload({ mode: { kind: 'closed', concurrency: 5 }, requests: 23, warmup: 3, maxTokens: 6, seed, workers: 2 }), {
      onProgress: (p) => progress.push(p),
      onRecord: (r) => seen.push(r),
    });
    assert.equal(run.workload.workers, 2);
    assert.equal(run.connection?.connections, 5, '3 + 2 warmed connections');
    assert.equal(run.connection?.connectMs.length, 5);
    assert.deepEqual(run.requests.map((r) => r.index), Array.from({ length: 26 }, (_, i) => i));
    assert.deepEqual(run.requests.map((r) => r.warmup), [true, true, true, ...new Array(23).fill(false)]);
    assert.equal(run.summary.completed, 23);
    assert.equal(run.summary.ttftMs.count, 23);
    assert.equal(seen.length, 26, 'onRecord for every request, warmup included');
    const log = posts(s);
    assert.equal(log.length, 26, 'the server got exactly 3 warmup and 23 measured requests');
    assert.deepEqual(log.map((l) => l.seed).sort((a, b) => a! - b!), Array.from({ length: 26 }, (_, i) => seed + i));
    const measured = log.filter((l) => l.seed! >= seed + 3);
    const overlap = maxOverlap(measured.map((l) => ({ start: l.receivedAt, end: l.endedAt ?? l.receivedAt })));
    assert.ok(overlap <= 5 && overlap >= 4, `max in flight seen by the server: ${overlap}`);
    // the warmup ended before the first measured request was sent, on both threads
    const lastWarmEnd = Math.max(...run.requests.filter((r) => r.warmup).map((r) => r.sentAt + r.e2eMs!));
    assert.ok(Math.min(...run.requests.filter((r) => !r.warmup).map((r) => r.sentAt)) >= lastWarmEnd - 0.1);
    checkTimeBase(run, log, seed, ORDER_SLACK_MS);
    // every record's output as the server wrote it
    for (const r of run.requests) assert.equal(r.outputTokens, 6);
    const last = progress.at(-1)!;
    assert.equal(last.finished, 23);
    assert.equal(last.inFlight, 0);
  });
});

test('a live view on 2 threads: the streams in flight arrive with their chunk times, as the records have them', async () => {
  await withServer({ ttftMs: 5, itlMs: 15 }, async (_s, { endpoint }) => {
    const deltas: NonNullable<Progress['streams']>[number][] = [];
    const run = await runWorkload(endpoint, defaultWorkload({ mode: { kind: 'closed', concurrency: 4 }, requests: 8, warmup: 0, maxTokens: 12, workers: 2 }), {
      onProgress: (p) => deltas.push(...(p.streams ?? [])),
      streams: true,
    });
    assert.equal(run.summary.completed, 8);
    const withChunks = deltas.filter((d) => d.chunkMs.length > 0);
    assert.ok(withChunks.length >= 4, `deltas with chunks: ${withChunks.length}`);
    for (const d of withChunks) {
      const r = run.requests.find((q) => q.index === d.index)!;
      assert.ok(d.sentAt <= r.sentAt && r.sentAt - d.sentAt < 1000, `request ${d.index}: handed to the client ${r.sentAt - d.sentAt} ms before it was written`);
      assert.deepEqual(d.chunkMs, r.chunkTimesMs.slice(d.from, d.from + d.chunkMs.length), `request ${d.index} from chunk ${d.from}`);
    }
  });
});

test('closed loop with --duration: every thread stops claiming at the same instant', async () => {
  await withServer({ ttftMs: 5, itlMs: 5 }, async (s, { endpoint }) => {
    const run = await runWorkload(endpoint, defaultWorkload({ mode: { kind: 'closed', concurrency: 4 }, durationS: 0.5, warmup: 0, maxTokens: 4, workers: 2 }));
    const measured = run.requests.filter((r) => !r.warmup);
    assert.ok(measured.length >= 8, `sent ${measured.length}`);
    const first = Math.min(...measured.map((r) => r.sentAt));
    const last = Math.max(...measured.map((r) => r.sentAt));
    assert.ok(last - first < 500 + ORDER_SLACK_MS, `last sent ${last - first} ms after the first`);
    assert.deepEqual(measured.map((r) => r.index), Array.from({ length: measured.length }, (_, i) => i), 'indexes without a gap');
    assert.equal(posts(s).length, measured.length);
    assert.ok(run.summary.durationS >= 0.5 && run.summary.durationS < 3, `measured phase ${run.summary.durationS} s`);
  });
});

test('open loop on 2 threads: the same seeded schedule as one loop, sends on time, --max-concurrency held across threads', async () => {
  await withServer({ ttftMs: 20, itlMs: 4 }, async (s, { endpoint }) => {
    const seed = 7;
    const w = defaultWorkload({ mode: { kind: 'open', rate: 150, burstiness: 1 }, requests: 40, warmup: 0, maxTokens: 4, seed, workers: 2 });
    const run = await runWorkload(endpoint, w);
    assert.equal(run.workload.workers, 2);
    assert.equal(run.summary.completed, 40);
    const byIndex = [...run.requests].sort((a, b) => a.index - b.index);
    const gap = arrivalGapsMs(seed, 150, 1);
    let due = byIndex[0]!.scheduledAt;
    for (const r of byIndex) {
      assert.ok(Math.abs(r.scheduledAt - due) < 0.01, `arrival ${r.index}: scheduled ${r.scheduledAt - due} ms off the one-loop schedule`);
      assert.ok(r.sentAt >= r.scheduledAt - 0.01, `arrival ${r.index} sent ${r.scheduledAt - r.sentAt} ms early`);
      due += gap();
    }
    const lag = byIndex.map((r) => r.sentAt - r.scheduledAt).sort((a, b) => a - b);
    console.log(`# 2 threads, open loop: send lag p50 ${lag[20]!.toFixed(2)} ms, max ${lag.at(-1)!.toFixed(2)} ms`);
    assert.ok(lag[20]! < 250, `median send lag ${lag[20]} ms`);
    checkTimeBase(run, posts(s), seed, ORDER_SLACK_MS);
    s.clearLog();

    // capped: at most 3 in flight over both threads, and the arrivals take their slots in order
    const capped = await runWorkload(endpoint, defaultWorkload({ mode: { kind: 'open', rate: 400, burstiness: 1, maxConcurrency: 3 }, requests: 30, warmup: 0, maxTokens: 4, seed, workers: 2 }));
    assert.equal(capped.summary.completed, 30);
    const log = posts(s);
    assert.equal(log.length, 30);
    const overlap = maxOverlap(log.map((l) => ({ start: l.receivedAt, end: l.endedAt! })));
    assert.equal(overlap, 3, `max in flight seen by the server: ${overlap}`);
    s.clearLog();

    // capped at 1: one request at a time over both threads, so the server sees them in the order the
    // arrivals took the slot, which is their order (k), as one loop's
    const single = await runWorkload(endpoint, defaultWorkload({ mode: { kind: 'open', rate: 400, burstiness: 1, maxConcurrency: 1 }, requests: 12, warmup: 0, maxTokens: 2, seed, workers: 2 }));
    assert.equal(single.summary.completed, 12);
    const one = posts(s);
    assert.deepEqual(one.map((l) => l.seed), Array.from({ length: 12 }, (_, i) => seed + i), 'arrivals sent in their order');
    assert.equal(maxOverlap(one.map((l) => ({ start: l.receivedAt, end: l.endedAt! }))), 1);
  });
});

test('prompts on 2 threads: the same texts, references and repeats as one loop gives', async () => {
  await withServer({ ttftMs: 2, itlMs: 1 }, async (s, { endpoint }) => {
    const prompts = [prompt(3, 'alpha'), prompt(5, 'beta'), prompt(3, 'alpha'), prompt(4, 'gamma')];
    const w = defaultWorkload({ mode: { kind: 'closed', concurrency: 3 }, requests: 11, warmup: 2, prefixCache: 'warm' });
    const one = await runWorkload(endpoint, { ...w, workers: 1 }, { prompts });
    const oneTexts = posts(s).map((l) => [l.seed, (l.body.messages as { content: string }[])[0]!.content] as const);
    s.clearLog();
    const two = await runWorkload(endpoint, { ...w, workers: 2 }, { prompts });
    const twoTexts = posts(s).map((l) => [l.seed, (l.body.messages as { content: string }[])[0]!.content] as const);
    assert.equal(one.workload.workers, undefined);
    assert.equal(two.workload.workers, 2);
    const pick = (r: RunFile) => r.requests.map((q) => [q.index, q.warmup, q.outputTokens, q.repeatOf, q.promptRef]);
    assert.deepEqual(pick(two), pick(one));
    assert.deepEqual(two.prompts, one.prompts);
    const bySeed = (xs: (readonly [number | undefined, string])[]) => [...xs].sort((a, b) => a[0]! - b[0]!);
    assert.deepEqual(bySeed(twoTexts), bySeed(oneTexts), 'each seed (request) got the same text');
  });
});

test('cancel on 2 threads: returns at once, keeps what finished, marks what was in flight aborted', async () => {
  await withServer({ ttftMs: 5, itlMs: 20 }, async (s, { endpoint }) => {
    const ac = new AbortController();
    let abortedAt = 0;
    let finished = 0;
    // cancelled once 4 have finished, with others in flight on both threads
    const onRecord = () => {
      if (++finished === 4) {
        abortedAt = performance.now();
        ac.abort();
      }
    };
    const run = await runWorkload(endpoint, defaultWorkload({ mode: { kind: 'closed', concurrency: 4 }, requests: 200, warmup: 0, maxTokens: 10, workers: 2 }), { signal: ac.signal, onRecord });
    const took = performance.now() - abortedAt;
    console.log(`# cancellation on 2 threads returned in ${took.toFixed(1)} ms`);
    assert.ok(took < 600, `cancel took ${took} ms`);
    assert.equal(run.cancelled, true);
    const aborted = run.requests.filter((r) => r.error?.kind === 'aborted');
    const done = run.requests.filter((r) => !r.error);
    assert.ok(done.length >= 4, `finished before the cancel: ${done.length}`);
    assert.ok(aborted.length >= 1 && aborted.length <= 4, `in flight when cancelled: ${aborted.length}`);
    assert.ok(aborted.some((r) => r.chunkTimesMs.length > 0), 'an aborted request keeps the chunks it had');
    assert.equal(run.requests.length, posts(s).length, 'a record for every request the server got');
    assert.deepEqual(run.requests.map((r) => r.index), Array.from({ length: run.requests.length }, (_, i) => i));
    assert.ok(run.requests.length < 200);
  });
});

test('CLI from the bundle: `run --workers 2` sends from dist/worker.js and records the threads', async () => {
  const s = await startScriptedServer({ ttftMs: 5, itlMs: 2 });
  const dir = mkdtempSync(join(tmpdir(), 'workers-'));
  try {
    const out = join(dir, 'run.json');
    const r = await runCliProcess(['run', '--url', s.url, '--api', 'openai-chat', '--requests', '12', '--concurrency', '3', '--warmup', '1', '--max-tokens', '4', '--workers', '2', '--out', out]);
    assert.equal(r.code, 0, r.stderr);
    const run = parseRunFile(readFileSync(out, 'utf8'));
    assert.equal(run.workload.workers, 2);
    assert.equal(run.summary.completed, 12);
    assert.equal(posts(s).length, 13);
    const bad = await runCliProcess(['run', '--url', s.url, '--workers', '0']);
    assert.equal(bad.code, 2, bad.stderr);
    assert.match(bad.stderr, /--workers/);
  } finally {
    await s.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
