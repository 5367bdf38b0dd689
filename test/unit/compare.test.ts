// The comparison on hand-checked cases: verdicts, the percentiles too few samples cannot judge, the
// smallest detectable change and the sample-size advice, the regression gate, and the checks that
// refuse two different workloads.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { adviseSampleSize, compareRuns, compareSides, requestsToDetect, sideOf, timeBlocks, valuesNeeded } from '../../src/engine/analysis/compare';
import type { CompareRow, RowKey, Side } from '../../src/engine/analysis/compare';
import { applyGate, GateSyntaxError, parseGate } from '../../src/engine/analysis/compareGate';
import { comparability } from '../../src/engine/analysis/comparable';
import { rowSentence } from '../../src/present/compareText';
import type { RequestRecord, RunFile } from '../../src/engine/core/types';
import { fixtureRun } from '../support/fixtureRuns';

function request(index: number, fields: Partial<RequestRecord>): RequestRecord {
  return { index, warmup: false, scheduledAt: 0, sentAt: 0, outputTokens: 10, tokenSource: 'usage', chunkTimesMs: [], ...fields };
}

/** Requests with the given TTFTs, each streaming 10 tokens `step` ms apart after its first. */
function side(ttfts: readonly number[], step = 10): Side {
  const requests = ttfts.map((t, i) => {
    const times = Array.from({ length: 10 }, (_, k) => t + k * step);
    return request(i, { ttftMs: t, e2eMs: times[9]!, chunkTimesMs: times });
  });
  return { runId: 's', startedAt: '', requests, groups: [requests.map((_, i) => i)], timeShare: requests.map((r) => r.e2eMs! / 1000) };
}

const row = (rows: readonly CompareRow[], key: RowKey): CompareRow => rows.find((r) => r.key === key)!;
const spread = (n: number, centre: number, width: number): number[] => Array.from({ length: n }, (_, i) => centre - width / 2 + (width * i) / (n - 1));

test('constant samples: every resample gives the same difference, so the interval is that difference', () => {
  const c = compareSides(side(new Array(40).fill(100)), side(new Array(40).fill(110)), { resamples: 300 });
  const r = row(c.rows, 'ttft.p50');
  assert.equal(r.diff, 10);
  assert.equal(r.diffPct, 10);
  assert.deepEqual(r.ci, [10, 10]);
  assert.deepEqual(r.ciPct, [10, 10]);
  assert.equal(r.verdict, 'slower');
  assert.equal(rowSentence(r), 'TTFT p50 10.0% slower, 95% CI 10.0–10.0%');
  // the same streams after the first token: TPOT and ITL are equal on both sides, with no spread at all
  assert.equal(row(c.rows, 'tpot.p50').verdict, 'no-difference');
  assert.equal(row(c.rows, 'itl.p50').diff, 0);
});

test('a latency that falls is faster; throughput that falls is slower', () => {
  const c = compareSides(side(spread(60, 100, 20), 10), side(spread(60, 100, 20), 12), { resamples: 500 });
  assert.equal(row(c.rows, 'tpot.p50').verdict, 'slower');
  assert.equal(row(c.rows, 'throughput').verdict, 'slower', 'longer streams in the same time share: fewer tokens per second');
  const back = compareSides(side(spread(60, 100, 20), 12), side(spread(60, 100, 20), 10), { resamples: 500 });
  assert.equal(row(back.rows, 'tpot.p50').verdict, 'faster');
  assert.equal(row(back.rows, 'throughput').verdict, 'faster');
  assert.match(rowSentence(row(back.rows, 'tpot.p50')), /^TPOT p50 16\.7% faster, 95% CI [\d.]+–[\d.]+%$/);
});

test('a percentile needs five values beyond it on each side: p99 of 100 requests cannot be judged', () => {
  assert.equal(valuesNeeded(50), 10);
  assert.equal(valuesNeeded(90), 50);
  assert.equal(valuesNeeded(99), 500);
  assert.equal(valuesNeeded(undefined), 10);
  const c = compareSides(side(spread(100, 100, 20)), side(spread(100, 110, 20)), { resamples: 200 });
  const p99 = row(c.rows, 'ttft.p99');
  assert.equal(p99.verdict, 'too-few');
  assert.equal(p99.needs, 500);
  assert.ok(p99.diff! > 0, 'the values are still shown');
  assert.equal(p99.ci, undefined, 'but no interval');
  assert.equal(rowSentence(p99), 'TTFT p99: too few samples to judge (p99 needs 500 a side; BASE has 100)');
  // ITL p99 counts gaps: 100 requests × 9 gaps = 900 values, enough
  assert.notEqual(row(c.rows, 'itl.p99').verdict, 'too-few');
  const tiny = compareSides(side([1, 2, 3]), side([1, 2, 3]), { resamples: 100 });
  assert.ok(tiny.rows.every((r) => r.verdict === 'too-few'), 'fewer than 10 requests: nothing is judged');
});

test('no difference: the interval straddles 0, and says the smallest change these samples detect', () => {
  const c = compareSides(side(spread(200, 100, 40)), side(spread(200, 100, 40)), { resamples: 1000 });
  const r = row(c.rows, 'ttft.p50');
  assert.equal(r.verdict, 'no-difference');
  assert.ok(r.ciPct![0] < 0 && r.ciPct![1] > 0);
  // (1.96 + 0.84) standard errors
  assert.ok(Math.abs(r.mdePct! - 2.8015852181 * r.sePct!) < 1e-6);
  assert.match(rowSentence(r), /^TTFT p50: no difference we can detect \(95% CI −[\d.]+% to \+[\d.]+%; these samples detect changes of [\d.]+% or more\)$/);
});

test('sample-size advice: the error shrinks as 1/√n, so a change half the size needs four times the requests', () => {
  const r: CompareRow = { key: 'ttft.p50', metric: 'ttft', stat: 'p50', unit: 'ms', verdict: 'no-difference', samples: { base: 100, next: 100 }, sePct: 2 };
  // σ² = se² / (1/100 + 1/100) = 200; m = 2σ²(1.96 + 0.84)² / change² = 400 · 7.8489 / 16 = 196.2 → 197
  assert.equal(requestsToDetect(r, { base: 100, next: 100 }, 4), 197);
  assert.equal(requestsToDetect(r, { base: 100, next: 100 }, 2), 785);
  // p99 never below what its tail needs
  assert.equal(requestsToDetect({ ...r, key: 'ttft.p99', stat: 'p99' }, { base: 100, next: 100 }, 50), 500);
  const advice = adviseSampleSize(fixtureRun({ requests: 120, seed: 4 }), 5, { resamples: 300 });
  const p50 = advice.find((a) => a.key === 'ttft.p50')!;
  const p99 = advice.find((a) => a.key === 'ttft.p99')!;
  assert.ok(p50.requests! > 0 && p99.requests! >= 500, JSON.stringify({ p50, p99 }));
});

test('the gate: one number for all, or per figure; fails only when the whole interval is beyond it', () => {
  assert.throws(() => parseGate('lots'), GateSyntaxError);
  assert.throws(() => parseGate('ttft.p42=3%'), /no figure "ttft.p42"/);
  assert.throws(() => parseGate('ttft.p99=x'), GateSyntaxError);
  const one = parseGate('2%');
  assert.equal(one.named.size, 0);
  assert.equal(one.thresholds.get('tpot.p50'), 2);
  const per = parseGate('ttft.p99=10%, tpot=3,throughput=5%');
  assert.deepEqual([...per.thresholds.entries()].sort(), [['throughput', 5], ['tpot.mean', 3], ['tpot.p50', 3], ['tpot.p90', 3], ['tpot.p99', 3], ['ttft.p99', 10]]);
  const c = compareSides(side(new Array(40).fill(100), 10), side(new Array(40).fill(104), 10), { resamples: 200 });
  const at = (pct: string) => applyGate(c, parseGate(pct)).results.find((r) => r.key === 'ttft.p50')!.outcome;
  assert.equal(at('ttft.p50=3%'), 'fail', '+4% everywhere is beyond 3%');
  assert.equal(at('ttft.p50=5%'), 'pass');
  const all = applyGate(c, parseGate('3%'));
  assert.ok(all.skipped.some((s) => s.key === 'ttft.p99'), 'unjudgeable rows are skipped under one number for all');
  assert.equal(applyGate(c, parseGate('ttft.p99=3%')).results[0]!.outcome, 'cannot-judge', 'and named when gated by name');
  const metric = applyGate(c, parseGate('ttft=3%'));
  assert.ok(metric.skipped.some((s) => s.key === 'ttft.p99') && metric.results.every((r) => r.outcome !== 'cannot-judge'), 'a metric alone skips its unjudgeable rows');
});

test('comparability: a different load, prompt length, max tokens or API is refused; cache, buffering and failures are said first', () => {
  const a = fixtureRun({ seed: 1, requests: 30 });
  const same = comparability(a, fixtureRun({ seed: 2, requests: 30 }));
  assert.deepEqual(same.filter((p) => p.severity === 'refuse'), []);
  const b: RunFile = { ...a, workload: { ...a.workload, maxTokens: a.workload.maxTokens + 1, mode: { kind: 'closed', concurrency: 99 } }, endpoint: { ...a.endpoint, api: 'ollama' } };
  const kinds = comparability(a, b).filter((p) => p.severity === 'refuse').map((p) => p.kind).sort();
  assert.deepEqual(kinds, ['api', 'load', 'max-tokens']);
  assert.equal(comparability(a, b, { sameRequests: true }).find((p) => p.kind === 'api')!.severity, 'warn', 'an A/B sends the same requests to both APIs');
  const warm: RunFile = { ...a, workload: { ...a.workload, prefixCache: 'warm' }, summary: { ...a.summary, buffering: { detected: true, evidence: [], bufferedStreams: 1, streams: 1 } } };
  const told = comparability({ ...a, workload: { ...a.workload, prefixCache: 'cold' } }, warm);
  assert.deepEqual(told.map((p) => [p.kind, p.severity]).filter(([k]) => k === 'cache' || k === 'buffering'), [['cache', 'warn'], ['buffering', 'warn']]);
});

test('runs: sides are the successful measured requests, grouped by repetition; an A/B pair is resampled paired', () => {
  const run = fixtureRun({ seed: 5, requests: 60, errorRate: 0.1, warmup: 2 });
  const s = sideOf(run);
  assert.equal(s.requests.length, run.summary.completed);
  assert.ok(s.requests.every((r) => !r.warmup && r.error === undefined));
  const measured = run.requests.filter((r) => !r.warmup);
  const repeated: RunFile = { ...run, requests: run.requests.map((r) => ({ ...r, repeat: measured.indexOf(r) % 3 === 0 ? 0 : 1 })) };
  assert.equal(sideOf(repeated).groups.length, 2);
  // a run against itself: the point differences are 0 and the point value is the summary's own
  // (the fixture's summary counts a failed request's tokens in its throughput, the engine does not: a run without failures)
  const clean = fixtureRun({ seed: 5, requests: 60, errorRate: 0, warmup: 2 });
  const self = compareRuns(clean, clean, { resamples: 200 });
  assert.equal(row(self.rows, 'ttft.p50').diff, 0);
  assert.equal(row(self.rows, 'ttft.p50').base, clean.summary.ttftMs.p50);
  assert.equal(row(self.rows, 'itl.p90').base, clean.summary.itlMs.p90);
  assert.ok(Math.abs(row(self.rows, 'throughput').base! - clean.summary.outputTokensPerSecond) < 1e-9 * clean.summary.outputTokensPerSecond);
  const ab = (side: 'A' | 'B'): RunFile => ({ ...repeated, ab: { pairId: 'p', side, otherId: 'o', blocks: 2, blockRequests: 30 } });
  assert.equal(compareRuns(ab('A'), ab('B'), { resamples: 100 }).method.resampling, 'paired blocks, then requests');
  assert.equal(compareRuns(repeated, repeated, { resamples: 100 }).method.resampling, 'repetitions, then requests');
});

test('a run without repetitions is resampled in blocks of consecutive requests, at least as many as were in flight', () => {
  // 100 requests, 16 in flight at a time (each 320 ms, a wave every 320 ms): blocks of 16, so 6 of them
  const wave = (i: number): RequestRecord => request(i, { sentAt: Math.floor(i / 16) * 320, ttftMs: 20, e2eMs: 320 });
  const blocks = timeBlocks(Array.from({ length: 100 }, (_, i) => wave(i)));
  assert.equal(blocks.length, 6);
  assert.deepEqual(blocks.flat().sort((a, b) => a - b), Array.from({ length: 100 }, (_, i) => i));
  // one at a time: √100 = 10 a block
  assert.equal(timeBlocks(Array.from({ length: 100 }, (_, i) => request(i, { sentAt: i * 100, e2eMs: 100 }))).length, 10);
  assert.equal(timeBlocks([request(0, { e2eMs: 1 })]).length, 1);
});

test('a hiccup that slowed one wave of a run is noise within that run, not a regression, when blocks are drawn whole', () => {
  // two runs of the same server; in BASE one wave of 16 in-flight requests was slowed by a pause (+40%)
  const run = (slowWave: boolean): Side => {
    const requests = Array.from({ length: 96 }, (_, i) => {
      const step = slowWave && Math.floor(i / 16) === 2 ? 14 : 10;
      const times = Array.from({ length: 32 }, (_, k) => 20 + k * (step + ((i * 7 + k) % 5) * 0.05));
      return request(i, { sentAt: Math.floor(i / 16) * 400, ttftMs: 20, e2eMs: times[31]!, outputTokens: 32, chunkTimesMs: times });
    });
    return { runId: 'r', startedAt: '', requests, groups: timeBlocks(requests), whole: true, timeShare: requests.map((r) => r.e2eMs! / 1000) };
  };
  const blocked = compareSides(run(true), run(false), { resamples: 1000 });
  assert.equal(blocked.method.resampling, 'time blocks');
  assert.equal(row(blocked.rows, 'tpot.p90').verdict, 'no-difference', rowSentence(row(blocked.rows, 'tpot.p90')));
  // the same requests drawn one by one take the slow wave for a slower run
  const loose = (s: Side): Side => ({ ...s, groups: [s.requests.map((_, i) => i)], whole: false });
  const byRequest = compareSides(loose(run(true)), loose(run(false)), { resamples: 1000 });
  assert.equal(row(byRequest.rows, 'tpot.p90').verdict, 'faster', rowSentence(row(byRequest.rows, 'tpot.p90')));
});
