// The report panel's pure modules: CDFs, per-second series, axis ticks, formatting, lanes, run
// validation and live-mode bookkeeping.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildCdf } from '../../webview/report/cdf';
import { perSecond } from '../../webview/report/series';
import { niceTicks } from '../../webview/report/ticks';
import { formatDelta, formatMs, formatNumber, formatPercent } from '../../src/present/units';
import { buildLanes, itlSamples, stallWindow } from '../../webview/report/lanes';
import { runProblem } from '../../webview/report/validate';
import { applyLive } from '../../webview/report/liveState';
import { fixtureRun, unknownVersionRun } from '../support/fixtureRuns';

test('CDF: y is the share of samples at or below x, ties collapsed, ends kept', () => {
  assert.deepEqual(buildCdf([3, 1, 2, 2]), [{ x: 1, y: 0.25 }, { x: 2, y: 0.75 }, { x: 3, y: 1 }]);
  const big = Array.from({ length: 100_000 }, (_, i) => (i * 7919) % 100_000);
  const c = buildCdf(big, 200);
  assert.ok(c.length <= 200 && c.length > 150);
  assert.deepEqual(c[0], { x: 0, y: 1 / 100_000 });
  assert.deepEqual(c.at(-1), { x: 99_999, y: 1 });
  for (let i = 1; i < c.length; i++) assert.ok(c[i]!.x > c[i - 1]!.x && c[i]!.y > c[i - 1]!.y);
  assert.deepEqual(buildCdf([]), []);
});

test('per second: tokens land in their second, in-flight is time-weighted', () => {
  const s = perSecond([
    { sent: 0, end: 1500, chunks: [100, 200, 1200], outputTokens: 3 },
    { sent: 500, end: 1000, chunks: [900], outputTokens: 4 },
  ]);
  assert.deepEqual(s.seconds, [0, 1]);
  assert.deepEqual(s.tokensPerSecond, [6, 1 / 0.5]); // the last, half-covered second is scaled to a rate
  assert.equal(s.inFlight[0], 1.5);
  assert.equal(s.inFlight[1], 1); // 0.5 s busy over a 0.5 s bucket
});

test('nice ticks are round and cover the range', () => {
  const { step, ticks } = niceTicks(0, 9800, 6);
  assert.equal(step, 2000);
  assert.deepEqual(ticks, [0, 2000, 4000, 6000, 8000]);
  assert.equal(niceTicks(0.3, 0.9, 5).step, 0.1);
});

test('formatting is fixed to en-US and keeps three significant figures', () => {
  assert.equal(formatMs(1.23456), '1.23 ms');
  assert.equal(formatMs(45.678), '45.7 ms');
  assert.equal(formatMs(1234.5), '1,235 ms');
  assert.equal(formatMs(12_345), '12.3 s');
  assert.equal(formatMs(undefined), '–');
  assert.equal(formatMs(NaN), '–');
  assert.equal(formatNumber(812.4, 'tok/s'), '812 tok/s');
  assert.equal(formatPercent(0.1234), '12.3 %');
  assert.equal(formatDelta(100, 120), '+20 ms (+20.0 %)');
  assert.equal(formatDelta(100, 80), '−20 ms (−20.0 %)');
  assert.equal(formatMs(41), '41 ms');
  assert.equal(formatMs(5.25), '5.25 ms');
  assert.equal(formatMs(125_000), '125 s');
});

test('lanes: start order, times since the run start, stalls above the threshold', () => {
  const run = fixtureRun({ seed: 3, requests: 30, warmup: 2 });
  const m = buildLanes(run);
  assert.equal(m.lanes.length, 32);
  for (let i = 1; i < m.lanes.length; i++) assert.ok(m.lanes[i]!.scheduled >= m.lanes[i - 1]!.scheduled);
  assert.equal(Math.min(...m.lanes.map((l) => l.scheduled)), 0);
  assert.equal(m.chunkCount, run.requests.reduce((a, r) => a + r.chunkTimesMs.length, 0));
  // every stall the engine reported is a stall on its lane, at the same place
  for (const s of run.summary.stalls.worst) {
    const w = stallWindow(m, s)!;
    const lane = m.lanes[w.lane]!;
    let found = false;
    for (let k = 0; k < lane.stalls.length; k += 2) if (Math.abs(lane.stalls[k]! - w.start) < 1e-6) found = true;
    assert.ok(found, `stall of request ${s.requestIndex} at ${s.startMs} drawn`);
  }
  const itl = itlSamples(m);
  assert.equal(itl.itl.length, run.requests.filter((r) => !r.warmup).reduce((a, r) => a + Math.max(0, r.chunkTimesMs.length - 1), 0));
});

test('validation names what is wrong', () => {
  assert.equal(runProblem(fixtureRun()), undefined);
  assert.match(runProblem(unknownVersionRun())!, /version 2.*reads version 1/);
  assert.match(runProblem({ hello: 1 })!, /not an LLM Profiler run file/);
  assert.match(runProblem(null)!, /not an LLM Profiler run file/);
  assert.match(runProblem({ ...fixtureRun(), summary: undefined })!, /no "summary"/);
});

test('live: updates for another run id are dropped; end replaces the records', () => {
  const run = fixtureRun({ requests: 5, warmup: 0 });
  const empty = { ...run, requests: [] };
  let s = applyLive(undefined, { type: 'liveStart', runId: 'a', run: empty })!;
  const progress = { runId: 'a', succeeded: 1, failed: 0, finished: 1, inFlight: 2, elapsedS: 1 };
  s = applyLive(s, { type: 'liveUpdate', runId: 'a', progress, records: run.requests.slice(0, 2) })!;
  assert.equal(s.records.size, 2);
  assert.equal(applyLive(s, { type: 'liveUpdate', runId: 'b', progress, records: run.requests }), undefined);
  assert.equal(applyLive(undefined, { type: 'liveUpdate', runId: 'a', progress, records: [] }), undefined);
  s = applyLive(s, { type: 'liveEnd', runId: 'a', run })!;
  assert.equal(s.ended, true);
  assert.equal(s.records.size, 5);
  assert.equal(applyLive(s, { type: 'liveUpdate', runId: 'a', progress, records: [] }), undefined, 'nothing after the end');
});

test('lanes list every gap above twice the median ITL, longest first (the zoomed-out draw path)', () => {
  const run = fixtureRun({ seed: 8, requests: 20, warmup: 0 });
  const m = buildLanes(run);
  for (const l of m.lanes) {
    const c = l.chunks;
    const expected: number[] = [];
    for (let i = 1; i < c.length; i++) if (c[i]! - c[i - 1]! > l.bigGapMs) expected.push(c[i - 1]!);
    const listed: number[] = [];
    for (let k = 0; k < l.bigGaps.length; k += 2) {
      listed.push(l.bigGaps[k]!);
      if (k > 0) assert.ok(l.bigGaps[k + 1]! <= l.bigGaps[k - 1]!, 'sorted longest first');
    }
    assert.deepEqual(listed.sort((a, b) => a - b), expected);
  }
});
