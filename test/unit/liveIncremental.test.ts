// The live report's model kept as updates come (webview/report: LiveLanes, LiveSeries, SortedSamples,
// applyLive in place): after every update of a replayed run, the same lanes, per-second series and
// TTFT samples as building them from everything so far; and an update's cost does not grow with the
// records already held (counted in lane moves and samples touched, not timed).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Progress, RequestRecord, RunFile, StreamDelta } from '../../src/engine/core/types';
import { applyLive } from '../../webview/report/liveState';
import type { LiveState } from '../../webview/report/liveState';
import { addToLanes, buildLanes, laneCounts, LiveLanes, seriesRequests, stallRuleOf, streamLane, withInFlight } from '../../webview/report/lanes';
import type { Lane, LaneModel } from '../../webview/report/lanes';
import { LiveSeries, perSecond } from '../../webview/report/series';
import { SortedSamples } from '../../webview/report/cdf';
import { fixtureRun } from '../support/fixtureRuns';

const seriesOf = (l: Lane) => ({ sent: l.sent, end: l.end, chunks: l.chunks, outputTokens: l.request.outputTokens });
const end = (r: RequestRecord): number => r.sentAt + Math.max(r.e2eMs ?? 0, r.lastByteMs ?? 0);

/** The run as the host sends it: every `stepMs`, the records finished since the last update and the new chunks of those in flight. */
function* replay(run: RunFile, stepMs: number): Generator<{ records: RequestRecord[]; streams: StreamDelta[]; progress: Progress }> {
  const t0 = Math.min(...run.requests.map((r) => r.scheduledAt));
  const last = Math.max(...run.requests.map(end));
  const sentCount = new Map<number, number>();
  for (let t = t0 + stepMs; t < last + 2 * stepMs; t += stepMs) {
    const records = run.requests.filter((r) => end(r) > t - stepMs && end(r) <= t);
    const streams: StreamDelta[] = [];
    for (const r of run.requests) {
      if (r.sentAt > t || end(r) <= t) continue;
      const from = sentCount.get(r.index) ?? 0;
      const upTo = r.chunkTimesMs.filter((c) => r.sentAt + c <= t).length;
      if (!sentCount.has(r.index) || upTo > from) streams.push({ index: r.index, scheduledAt: r.scheduledAt, sentAt: r.sentAt, from, chunkMs: r.chunkTimesMs.slice(from, upTo) });
      sentCount.set(r.index, upTo);
    }
    yield { records, streams, progress: { runId: run.id, succeeded: 0, failed: 0, finished: 0, inFlight: streams.length, elapsedS: (t - t0) / 1000, at: t } };
  }
}

/** The lanes built from everything so far, as live mode did before it kept them. */
function fromScratch(run: RunFile, state: LiveState, t0: number, nowMs: number): LaneModel {
  const finished = addToLanes(buildLanes({ ...run, requests: [] }, t0), [...state.records.values()], stallRuleOf(run));
  return withInFlight(finished, [...state.streams.values()].map((s) => streamLane(s, t0, nowMs)));
}

test('live: lanes, tokens and requests in flight per second, and TTFT samples kept as updates come equal those built from everything so far', () => {
  const run = fixtureRun({ seed: 5, requests: 60, warmup: 2, concurrency: 6, chunksPerRequest: 40, errorRate: 0.1 });
  const t0 = Math.min(...run.requests.map((r) => Math.min(r.scheduledAt, r.sentAt)));
  const rule = stallRuleOf(run);
  let state = applyLive(undefined, { type: 'liveStart', runId: run.id, run: { ...run, requests: [] } })!;
  const lanes = new LiveLanes(t0);
  const series = new LiveSeries();
  const ttfts = new SortedSamples();
  let updates = 0;
  let sawBoth = false;
  for (const u of replay(run, 150)) {
    state = applyLive(state, { type: 'liveUpdate', runId: run.id, ...u })!;
    for (const r of u.records) {
      series.add(seriesOf(lanes.finish(r, rule)));
      if (!r.warmup && !r.error && r.ttftMs !== undefined) ttfts.add(r.ttftMs);
    }
    const now = u.progress.at! - t0;
    lanes.fly(state.streams, state.changed, now);
    const kept = lanes.model();
    const whole = fromScratch(run, state, t0, now);
    assert.deepEqual(kept.lanes.map((l) => [l.request.index, l.inFlight === true, l.chunks.length, l.end]), whole.lanes.map((l) => [l.request.index, l.inFlight === true, l.chunks.length, l.end]), `update ${updates}: the lanes`);
    assert.deepEqual([...kept.laneOf].sort((a, b) => a[0] - b[0]), [...whole.laneOf].sort((a, b) => a[0] - b[0]));
    assert.equal(kept.chunkCount, whole.chunkCount);
    assert.deepEqual(kept.counts, laneCounts(whole), 'stalled, failed and in-flight lanes counted as they change');
    assert.ok(kept.endMs >= whole.endMs);
    const want = perSecond(seriesRequests(whole));
    const got = series.perSecond([...lanes.inFlight()].map(seriesOf));
    assert.deepEqual(got.seconds, want.seconds);
    got.tokensPerSecond.forEach((v, i) => assert.ok(Math.abs(v - want.tokensPerSecond[i]!) < 1e-9, `tokens/s at ${i}: ${v} against ${want.tokensPerSecond[i]}`));
    got.inFlight.forEach((v, i) => assert.ok(Math.abs(v - want.inFlight[i]!) < 1e-9, `in flight at ${i}: ${v} against ${want.inFlight[i]}`));
    const last7 = series.perSecond([...lanes.inFlight()].map(seriesOf), 7);
    assert.deepEqual(last7.seconds, want.seconds.slice(-7), 'the last seven seconds');
    last7.tokensPerSecond.forEach((v, i) => assert.ok(Math.abs(v - want.tokensPerSecond.slice(-7)[i]!) < 1e-9));
    last7.inFlight.forEach((v, i) => assert.ok(Math.abs(v - want.inFlight.slice(-7)[i]!) < 1e-9));
    const ok = whole.lanes.filter((l) => !l.inFlight && !l.request.warmup && !l.request.error && l.request.ttftMs !== undefined).map((l) => l.request.ttftMs!);
    assert.deepEqual([...ttfts.values], ok.sort((a, b) => a - b));
    sawBoth ||= kept.lanes.some((l) => l.inFlight) && kept.lanes.some((l) => !l.inFlight);
    updates++;
  }
  assert.ok(updates > 20 && sawBoth, `${updates} updates, finished and in-flight lanes together`);
  assert.equal(lanes.model().lanes.length, run.requests.length);
  const tail = series.perSecond([], 5);
  assert.equal(tail.seconds.length, 5, 'the last five seconds only');
  assert.deepEqual(tail.seconds, perSecond(seriesRequests(lanes.model())).seconds.slice(-5));
});

test('live: an update with a new request moves only the lanes that start after it, however many are held', () => {
  const run = fixtureRun({ seed: 9, requests: 3000, warmup: 0, concurrency: 8, chunksPerRequest: 8, errorRate: 0 });
  const rule = stallRuleOf(run);
  const sorted = run.requests.slice().sort((a, b) => a.scheduledAt - b.scheduledAt || a.sentAt - b.sentAt || a.index - b.index);
  const lanes = new LiveLanes(Math.min(...run.requests.map((r) => r.scheduledAt)));
  for (const r of sorted.slice(0, -8)) lanes.finish(r, rule);
  const model = lanes.model();
  const before = model.lanes.slice();
  // the last eight to start finish out of order: each goes in its place among the last few
  for (const r of sorted.slice(-8).reverse()) lanes.finish(r, rule);
  const after = lanes.model().lanes;
  assert.equal(after.length, run.requests.length);
  assert.equal(lanes.model().lanes, model.lanes, 'the same array, not a copy');
  for (let i = 0; i < before.length; i++) assert.equal(after[i], before[i], `lane ${i} stayed where it was`);
  assert.deepEqual(after.slice(-8).map((l) => l.request.index), sorted.slice(-8).map((r) => r.index));
});
