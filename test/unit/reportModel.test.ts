// The report panel's pure modules: CDFs, per-second series, axis ticks, formatting, lanes, run
// validation and live-mode bookkeeping.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildCdf } from '../../webview/report/cdf';
import { perSecond } from '../../webview/report/series';
import { niceTicks } from '../../webview/report/ticks';
import { formatDelta, formatMs, formatNumber, formatPercent } from '../../src/present/units';
import { buildLanes, CAUSE_RULE, itlSamples, prefillSpan, stallCulprits, stallRuleOf, stallWindow, STALL_KINDS } from '../../webview/report/lanes';
import { BAND_THRESHOLD, barText, whereBars } from '../../webview/report/whereView';
import { asRun } from '../../webview/report/validate';

/** The panel's sentence for a run it cannot draw (what asRun gives it), or undefined. */
const runProblem = (value: unknown): string | undefined => {
  const checked = asRun(value);
  return 'error' in checked ? checked.error : undefined;
};
import { applyLive } from '../../webview/report/liveState';
import { fixtureRun, fixtureWhereRun, prefillSpanOf, unknownVersionRun } from '../support/fixtureRuns';
import { runFileProblem } from '../../src/engine/core/runSchema';
import { phasesOf } from '../../src/engine/analysis/phases';

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

test('lanes take the engine\'s stalls, with their cause, when the run has them; old files keep the rule', () => {
  const run = fixtureWhereRun({ seed: 9, requests: 30 });
  assert.equal(stallRuleOf(run).fromRecords, true);
  const m = buildLanes(run);
  let n = 0;
  for (const l of m.lanes) {
    const own = l.request.stalls ?? [];
    assert.equal(l.stalls.length / 2, own.length, `request ${l.request.index}: exactly the engine's stalls`);
    own.forEach((st, k) => {
      assert.equal(STALL_KINDS[l.stallKinds[k]!], st.cause);
      assert.deepEqual(l.stallCulprits[k], st.culprits);
      // the gap ends at the chunk atChunk
      assert.ok(Math.abs(l.stalls[2 * k]! + l.stalls[2 * k + 1]! - l.chunks[st.atChunk]!) < 1e-6);
      n++;
    });
  }
  assert.ok(n > 0);
  assert.deepEqual(m.stallKinds.map((k) => STALL_KINDS[k]).sort(), [...new Set(run.requests.flatMap((r) => (r.stalls ?? []).map((s) => s.cause)))].sort());
  // an old file: no stalls on its records, no causes in its summary: found by the rule, kind "rule"
  const old = fixtureRun({ seed: 9, requests: 30 });
  assert.equal(stallRuleOf(old).fromRecords, false);
  const mo = buildLanes(old);
  assert.ok(mo.lanes.some((l) => l.stalls.length > 0));
  for (const l of mo.lanes) for (const k of l.stallKinds) assert.equal(k, CAUSE_RULE);
  // a run the engine judged: a record without stalls had none, even with a gap the rule would call one
  const judged = { ...old, summary: { ...old.summary, stalls: { ...old.summary.stalls, byCause: { prefill: 0, buffering: 0, unknown: 0 } } } };
  assert.ok(buildLanes(judged).lanes.every((l) => l.stalls.length === 0));
});

test('a stall\'s culprits: their lanes and prefill spans (first token back by the server\'s prompt time)', () => {
  const run = fixtureWhereRun({ seed: 10, requests: 40 });
  const m = buildLanes(run);
  const worst = run.summary.stalls.worst.filter((w) => w.cause === 'prefill');
  assert.ok(worst.length > 0);
  for (const w of worst) {
    const cs = stallCulprits(m, w);
    assert.deepEqual(cs.map((c) => c.index), w.culprits!.map((c) => c.index));
    for (const c of cs) {
      const r = run.requests.find((q) => q.index === c.index)!;
      const [s, e] = prefillSpanOf(r)!;
      assert.ok(Math.abs(c.start - (s - m.t0)) < 1e-3 && Math.abs(c.end - (e - m.t0)) < 1e-3);
      assert.equal(m.lanes[c.lane]!.request.index, c.index);
      // the culprit's prefill ran in the gap and ended with it
      const g = stallWindow(m, w)!;
      assert.ok(c.start < g.end && c.end > g.start, 'overlaps the stall');
    }
    // without culprits in the summary entry, the record's own stall names them
    const bare = { ...w, culprits: undefined };
    assert.deepEqual(stallCulprits(m, bare).map((c) => c.index), w.culprits!.map((c) => c.index));
  }
  // a request without server timings: its whole TTFT
  const old = buildLanes(fixtureRun({ seed: 10, requests: 5 }));
  const l = old.lanes.find((x) => x.firstToken !== undefined)!;
  assert.deepEqual(prefillSpan(l), { start: l.sent, end: l.firstToken });
});

test('where the time went: a bar per request in start order up to the threshold, then four TTFT bands', () => {
  const run = fixtureWhereRun({ seed: 12, requests: 40 });
  const m = buildLanes(run);
  const { bars, banded } = whereBars(m);
  assert.equal(banded, false);
  const ok = m.lanes.map((l) => l.request).filter((r) => !r.warmup && !r.error && r.ttftMs !== undefined);
  assert.deepEqual(bars.map((b) => b.index), ok.map((r) => r.index));
  for (const b of bars) {
    const sum = b.phases.segments.reduce((a, s) => a + s.ms, 0);
    assert.ok(Math.abs(sum - b.phases.e2eMs) < 1e-6, 'segments add up to E2E');
    assert.match(barText(b), /^Request #\d+ \(server's timings\): /);
    assert.doesNotMatch(barText(b, true), /decode/);
  }
  const big = fixtureRun({ seed: 12, requests: BAND_THRESHOLD + 30, chunksPerRequest: 8, errorRate: 0 });
  const bb = whereBars(buildLanes(big));
  assert.equal(bb.banded, true);
  assert.deepEqual(bb.bars.map((b) => b.label), ['TTFT p0–p50', 'TTFT p50–p90', 'TTFT p90–p99', 'TTFT p99–p100']);
  assert.equal(bb.bars.reduce((a, b) => a + b.count, 0), BAND_THRESHOLD + 30);
  assert.ok(bb.bars.every((b) => b.phases.evidence === 'client'), 'an old file: the client\'s inference');
  assert.match(barText(bb.bars[0]!), /^TTFT p0–p50 \(\d+ requests, mean\) \(client's inference\)/);
});

test('the "where" fixtures are valid run files and consistent with themselves', () => {
  for (const run of [fixtureWhereRun({ seed: 13 }), fixtureWhereRun({ seed: 14, buffered: true }), fixtureWhereRun({ seed: 15, prefixCache: 'warm' })]) {
    assert.equal(runFileProblem(JSON.parse(JSON.stringify(run))), undefined, run.id);
    for (const r of run.requests) {
      const st = r.serverTimings;
      if (!st) continue;
      // client TTFT = server TTFT + transport; the server's TTFT = queue + prefill
      assert.ok(Math.abs(r.ttftMs! - st.serverTtftMs! - r.transportMs!) < 1e-6);
      assert.ok(Math.abs(st.serverTtftMs! - st.queueMs! - st.promptMs!) < 1e-6);
      assert.equal(phasesOf(r)!.evidence, 'server');
    }
    const s = run.summary;
    assert.equal(s.stalls.byCause!.prefill + s.stalls.byCause!.buffering + s.stalls.byCause!.unknown, s.stalls.count);
    for (const w of s.stalls.worst) {
      const own = run.requests.find((r) => r.index === w.requestIndex)!.stalls!.find((x) => x.atChunk === w.atChunk)!;
      assert.equal(own.cause, w.cause);
      assert.deepEqual(own.culprits, w.culprits!.map((c) => c.index));
    }
    const m = run.serverMetrics!;
    assert.equal(m.samples.running.length, m.samples.atMs.length);
    assert.equal(m.samples.kvCacheUsage.length, m.samples.atMs.length);
  }
  assert.equal(fixtureWhereRun({ seed: 14, buffered: true }).summary.buffering!.detected, true);
  assert.equal(fixtureWhereRun({ seed: 13 }).summary.buffering!.detected, false);
  const warm = fixtureWhereRun({ seed: 15, prefixCache: 'warm' }).summary.prefixCache!;
  assert.ok(warm.warmRequests > 0 && warm.warmTtftMs!.p50! < warm.coldTtftMs!.p50!);
});
