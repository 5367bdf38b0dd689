// The runner's accounting and its progress reports, on a fake clock.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { IndexSet, ProgressTicker, RunningMedian, RunTally } from '../../src/engine/run/runTally';
import { percentile } from '../../src/engine/core/stats';
import { Rng } from '../../src/engine/core/random';
import type { RequestRecord } from '../../src/engine/core/types';
import { FakeClock } from '../support/fakeClock';

const rec = (index: number, over: Partial<RequestRecord> = {}): RequestRecord => ({
  index,
  warmup: false,
  scheduledAt: 0,
  sentAt: 0,
  outputTokens: 4,
  tokenSource: 'usage',
  chunkTimesMs: [10, 20, 30, 40],
  ttftMs: 10,
  e2eMs: 40,
  ...over,
});

test('tally: measured requests counted once each (finished = succeeded + failed), warmup apart, in flight, TTFT p50 and tokens/s so far', async () => {
  const clock = new FakeClock();
  const tally = new RunTally('run-1', 3, clock);
  tally.sent(0, true);
  tally.chunk(0);
  assert.deepEqual(tally.progress(), { runId: 'run-1', succeeded: 0, failed: 0, finished: 0, total: 3, inFlight: 1, elapsedS: 0 });
  tally.returned();
  assert.equal(tally.record(rec(0, { warmup: true, ttftMs: 5000 })), true);
  tally.startPhase();
  tally.sent(1, false);
  tally.sent(2, false);
  tally.sent(3, false);
  for (let i = 0; i < 3; i++) tally.chunk(1);
  tally.chunk(2);
  await clock.run(clock.now() + 500);
  let p = tally.progress();
  assert.deepEqual([p.succeeded, p.failed, p.finished, p.inFlight], [0, 0, 0, 3]);
  assert.equal(p.outputTokensPerSecond, 4 / 0.5, 'chunks of requests still in flight count');
  assert.equal(p.ttftP50Ms, undefined, 'the warmup TTFT is not shown');
  tally.returned();
  assert.equal(tally.record(rec(1, { outputTokens: 6, ttftMs: 100 })), true);
  tally.returned();
  assert.equal(tally.record(rec(2, { ttftMs: 300, outputTokens: 0, error: { kind: 'reset', message: 'x' } })), true);
  assert.equal(tally.record(rec(1, { outputTokens: 99 })), false, 'a request is recorded once');
  p = tally.progress();
  assert.deepEqual([p.succeeded, p.failed, p.finished, p.total, p.inFlight], [1, 1, 2, 3, 1]);
  assert.equal(p.ttftP50Ms, 100, 'over successful measured requests');
  assert.equal(p.outputTokensPerSecond, 6 / 0.5, 'a finished request counts its output tokens, not its chunks');
  assert.equal(p.elapsedS, 0.5);
  tally.returned();
  tally.record(rec(3, { ttftMs: 200 }));
  tally.endPhase();
  await clock.run(clock.now() + 250);
  tally.endPhase();
  assert.equal(tally.phaseSeconds(), 0.5, 'the first end of the phase counts');
  p = tally.progress();
  assert.deepEqual([p.succeeded, p.finished, p.inFlight, p.ttftP50Ms], [2, 3, 0, 150]);
  assert.equal(p.elapsedS, 0.75);
  assert.deepEqual(tally.records().map((r) => r.index), [0, 1, 2, 3]);
});

test('tally: without a planned total (--duration) Progress has none; before the phase, no duration', () => {
  const tally = new RunTally('d', undefined, new FakeClock());
  assert.equal('total' in tally.progress(), false);
  assert.equal(tally.phaseSeconds(), 0);
  assert.deepEqual(tally.records(), []);
});

test('progress: the first at once, then every 100 ms, a last one at stop; a throwing listener changes nothing', async () => {
  const clock = new FakeClock();
  const t0 = clock.now();
  const at: number[] = [];
  let calls = 0;
  const ticker = new ProgressTicker(() => {
    at.push(clock.now() - t0);
    if (++calls === 2) throw new Error('listener bug');
  }, clock);
  assert.deepEqual(at, [0]);
  await clock.run(t0 + 350);
  assert.deepEqual(at, [0, 100, 200, 300]);
  ticker.stop();
  assert.deepEqual(at, [0, 100, 200, 300, 350]);
  ticker.stop();
  await clock.run(t0 + 1000);
  assert.equal(at.length, 5, 'nothing after stop');
  assert.equal(clock.pendingTimers, 0);
});

test("the TTFT median so far, kept as records come (no sort at each report), is the sorted list's p50 after every record", () => {
  const rng = new Rng(7);
  const m = new RunningMedian();
  const all: number[] = [];
  assert.equal(m.median(), undefined);
  for (let i = 0; i < 3000; i++) {
    // ties, runs up and down, and spread values
    const x = i % 7 === 0 ? 50 : i % 11 === 0 ? 3000 - i : Math.round(rng.next() * 1000) / 8;
    m.add(x);
    all.push(x);
    const sorted = all.slice().sort((a, b) => a - b);
    assert.equal(m.median(), percentile(sorted, 50), `after ${i + 1}`);
  }
  assert.equal(m.count, 3000);
});

test('the indexes recorded: bits for a run\'s indexes, a set for any other number', () => {
  const s = new IndexSet();
  const given = [0, 7, 8, 1023 * 8 + 7, 8192, 100_000, 3, 2 ** 30, -1, 2.5, 5_000_000];
  for (const i of given) {
    assert.equal(s.has(i), false, `${i} not yet`);
    s.add(i);
    assert.equal(s.has(i), true, `${i} once added`);
  }
  for (const i of [1, 6, 9, 8190, 8193, 99_999, 100_001, 2 ** 30 + 1, -2, 2.25, 4_999_999]) assert.equal(s.has(i), false, `${i} never added`);
  for (const i of given) assert.equal(s.has(i), true, `${i} still there after the others grew the bits`);
});
