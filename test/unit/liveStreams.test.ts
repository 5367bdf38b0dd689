// Requests in flight during a live run: the tally's stream deltas (Progress.streams), the host's fold
// of them between two liveUpdates (src/extension/liveStreams.ts), and the page's streams and
// provisional lanes (webview/report/liveState.ts, lanes.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RunTally } from '../../src/engine/run/runTally';
import type { RequestRecord, RunFile, StreamDelta } from '../../src/engine/core/types';
import { LiveStreams } from '../../src/extension/liveStreams';
import { applyLive } from '../../webview/report/liveState';
import { buildLanes, laneUntil, streamLane, withInFlight } from '../../webview/report/lanes';
import { fixtureRun } from '../support/fixtureRuns';
import { FakeClock } from '../support/fakeClock';

const rec = (index: number, over: Partial<RequestRecord> = {}): RequestRecord => ({
  index, warmup: false, scheduledAt: 1000, sentAt: 1000, outputTokens: 3, tokenSource: 'chunks', chunkTimesMs: [10, 20, 30], ttftMs: 10, e2eMs: 30, ...over,
});

test('tally streams: each request once when sent, then only the chunks since the last report, until its record', async () => {
  const clock = new FakeClock();
  const tally = new RunTally('run-s', 3, clock, { streams: true });
  tally.sent(0, false, 5000, 4990);
  tally.sent(1, true, 5001);
  let p = tally.progress();
  assert.deepEqual(p.streams, [
    { index: 0, scheduledAt: 4990, sentAt: 5000, from: 0, chunkMs: [] },
    { index: 1, warmup: true, scheduledAt: 5001, sentAt: 5001, from: 0, chunkMs: [] },
  ], 'a request is announced when sent, before any chunk');
  assert.equal(p.at, clock.origin + clock.now());
  tally.chunk(0, 12.5);
  tally.chunk(0, 20);
  p = tally.progress();
  assert.deepEqual(p.streams, [{ index: 0, scheduledAt: 4990, sentAt: 5000, from: 0, chunkMs: [12.5, 20] }], 'only what changed: request 1 had no chunk');
  assert.deepEqual(tally.progress().streams, [], 'nothing new, nothing sent');
  tally.chunk(0, 31);
  tally.chunk(1, 8);
  p = tally.progress();
  assert.deepEqual(p.streams?.map((d) => [d.index, d.from, d.chunkMs]), [[0, 2, [31]], [1, 0, [8]]], 'deltas, never the history again');
  tally.chunk(0, 40);
  tally.returned();
  tally.record(rec(0, { sentAt: 5000, chunkTimesMs: [12.5, 20, 31, 40] }));
  assert.deepEqual(tally.progress().streams, [], 'a request with its record streams no more (its record has every chunk)');
  assert.equal(p.outputTokensPerSecond, undefined);
});

test('tally streams: a report carries at most the cap of chunk times; the rest follow in order in the next', () => {
  const tally = new RunTally('run-c', undefined, new FakeClock(), { streams: true, streamChunksPerReport: 5 });
  tally.sent(0, false, 1);
  tally.sent(1, false, 2);
  for (let i = 0; i < 4; i++) tally.chunk(0, i);
  for (let i = 0; i < 4; i++) tally.chunk(1, 100 + i);
  const a = tally.progress().streams!;
  assert.equal(a.reduce((n, d) => n + d.chunkMs.length, 0), 5);
  const b = tally.progress().streams!;
  assert.equal(b.reduce((n, d) => n + d.chunkMs.length, 0), 3);
  // folded together they are every chunk, in order, each once
  const host = new LiveStreams();
  host.add(a);
  host.add(b);
  assert.deepEqual(host.all().map((d) => [d.index, d.chunkMs]), [[0, [0, 1, 2, 3]], [1, [100, 101, 102, 103]]]);
});

test('tally: without streams (no one reads the progress) no chunk time is kept and progress has no streams', () => {
  const tally = new RunTally('run-n', 1, new FakeClock());
  tally.sent(0, false, 1);
  tally.chunk(0, 5);
  const p = tally.progress();
  assert.equal(p.streams, undefined);
  assert.equal(p.at, undefined);
});

test('host: deltas of several reports gathered into one per stream for the next liveUpdate; a record drops its stream', () => {
  const s = new LiveStreams();
  const d = (index: number, from: number, chunkMs: number[]): StreamDelta => ({ index, scheduledAt: 10, sentAt: 11, from, chunkMs });
  s.add([d(0, 0, [1, 2]), d(1, 0, [])]);
  s.add([d(0, 2, [3])]);
  assert.deepEqual(s.take().map((x) => [x.index, x.from, x.chunkMs]), [[0, 0, [1, 2, 3]], [1, 0, []]]);
  assert.deepEqual(s.take(), []);
  s.add([d(0, 3, [4])]);
  assert.deepEqual(s.take().map((x) => [x.index, x.from, x.chunkMs]), [[0, 3, [4]]]);
  s.add([d(1, 0, [9])], [rec(1)]);
  assert.deepEqual(s.take(), [], 'the record came with the last chunks: no delta for it');
  assert.deepEqual(s.all().map((x) => [x.index, x.from, x.chunkMs]), [[0, 0, [1, 2, 3, 4]]], 'a page that comes back gets each stream whole');
});

test('page: streams grow by their deltas (a resend is not counted twice), become lanes in flight, and a record replaces its lane', () => {
  const run: RunFile = { ...fixtureRun({ requests: 2, warmup: 0, chunksPerRequest: 4 }), requests: [] };
  const t0 = Date.parse(run.startedAt);
  let st = applyLive(undefined, { type: 'liveStart', runId: run.id, run, streams: [{ index: 0, scheduledAt: t0, sentAt: t0 + 5, from: 0, chunkMs: [10, 20] }] })!;
  assert.deepEqual(st.streams.get(0)?.chunkMs, [10, 20]);
  const progress = { runId: run.id, succeeded: 0, failed: 0, finished: 0, inFlight: 2, elapsedS: 0.1, at: t0 + 100 };
  st = applyLive(st, { type: 'liveUpdate', runId: run.id, progress, records: [], streams: [
    { index: 0, scheduledAt: t0, sentAt: t0 + 5, from: 1, chunkMs: [20, 30] },
    { index: 1, scheduledAt: t0 + 1, sentAt: t0 + 6, from: 0, chunkMs: [] },
  ] })!;
  assert.deepEqual(st.streams.get(0)?.chunkMs, [10, 20, 30], 'the overlap is skipped');
  assert.deepEqual([...st.changed].sort(), [0, 1]);
  const finished = buildLanes({ ...run, requests: [] }, t0);
  const lanes = [...st.streams.values()].map((s) => streamLane(s, t0, 100));
  let model = withInFlight(finished, lanes);
  assert.equal(model.lanes.length, 2);
  assert.ok(model.lanes.every((l) => l.inFlight));
  assert.deepEqual([...model.lanes[0]!.chunks], [15, 25, 35], 'chunks at sent + their time');
  assert.equal(model.lanes[1]!.end, 100, 'a lane waiting for its first token reaches now');
  assert.equal(model.lanes[1]!.firstToken, undefined);
  assert.equal(laneUntil(model.lanes[1]!, 150).end, 150);
  assert.equal(model.chunkCount, 3);
  const done = rec(0, { scheduledAt: t0, sentAt: t0 + 5, chunkTimesMs: [10, 20, 30, 40], outputTokens: 4, e2eMs: 40 });
  st = applyLive(st, { type: 'liveUpdate', runId: run.id, progress, records: [done], streams: [{ index: 0, scheduledAt: t0, sentAt: t0 + 5, from: 3, chunkMs: [40] }] })!;
  assert.equal(st.streams.has(0), false, 'a stream with its record is gone, a late delta ignored');
  model = withInFlight(buildLanes({ ...run, requests: [done] }, t0), [...st.streams.values()].map((s) => streamLane(s, t0, 120)));
  assert.deepEqual(model.lanes.map((l) => [l.request.index, l.inFlight === true]), [[0, false], [1, true]]);
  assert.equal(model.chunkCount, 4);
  st = applyLive(st, { type: 'liveEnd', runId: run.id, run: { ...run, requests: [done] } })!;
  assert.equal(st.streams.size, 0);
});
