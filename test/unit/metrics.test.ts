import { test } from 'node:test';
import assert from 'node:assert/strict';
import { summarize, tpotOf, meetsSlo } from '../../src/engine/analysis/metrics';
import { percentile, stats } from '../../src/engine/core/stats';
import { defaultWorkload } from '../../src/engine/core/workload';
import type { RequestRecord } from '../../src/engine/core/types';

// Reference values printed by numpy 2.4 (np.percentile default method "linear", np.std ddof=0).
const SAMPLE = [12.5, 3.25, 7.0, 101.75, 44.0, 0.5, 19.125, 63.0, 8.875];
const SORTED = [...SAMPLE].sort((a, b) => a - b);

test('percentile matches numpy (linear interpolation) on reference values', () => {
  const numpy: [number, number][] = [
    [0, 0.5], [10, 2.7], [25, 7.0], [50, 12.5], [90, 70.75], [95, 86.24999999999999],
    [99, 98.64999999999999], [99.9, 101.44000000000004], [100, 101.75],
  ];
  for (const [p, want] of numpy) assert.equal(percentile(SORTED, p), want, `p${p}`);
  assert.equal(percentile([0.1, 0.2, 0.3], 90), 0.28);
  assert.equal(percentile([0.1, 0.2, 0.3], 99), 0.298);
  assert.equal(percentile([42], 99), 42);
  assert.ok(Number.isNaN(percentile([], 50)));
  assert.throws(() => percentile(SORTED, 101), RangeError);
});

test('percentile by hand: 1..10 at p95 is 9 + 0.55', () => {
  const xs = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10];
  assert.ok(Math.abs(percentile(xs, 95) - 9.55) < 1e-12);
  assert.equal(percentile(xs, 50), 5.5);
});

test('stats: mean, population std, min, max and p-keys', () => {
  const s = stats(SAMPLE, [50, 90, 99]);
  assert.equal(s.count, 9);
  assert.ok(Math.abs(s.mean - 28.88888888888889) < 1e-12);
  assert.ok(Math.abs(s.std - 32.33083347533553) < 1e-12);
  assert.equal(s.min, 0.5);
  assert.equal(s.max, 101.75);
  assert.equal(s.p50, 12.5);
  assert.equal(s.p90, 70.75);
  assert.equal(s.p99, 98.64999999999999);
  assert.equal(s.p95, undefined, 'only the configured percentiles');
  assert.ok(Math.abs(stats([0.1, 0.2, 0.3], [50]).std - 0.0816496580927726) < 1e-15);
  // the input is not reordered
  assert.equal(SAMPLE[0], 12.5);
});

test('stats of an empty sample is count 0 and zeros, never NaN (JSON-safe)', () => {
  const s = stats([], [50, 99.9]);
  assert.deepEqual({ ...s }, { count: 0, mean: 0, std: 0, min: 0, max: 0, p50: 0, 'p99.9': 0 });
});

let nextIndex = 0;
function rec(over: Partial<RequestRecord> & { chunkTimesMs: number[] }): RequestRecord {
  const t = over.chunkTimesMs;
  return {
    index: nextIndex++,
    warmup: false,
    scheduledAt: 1_000_000,
    sentAt: 1_000_000,
    ttftMs: t[0],
    e2eMs: t.length ? t[t.length - 1]! + 1 : undefined,
    outputTokens: t.length,
    tokenSource: 'chunks',
    ...over,
  };
}

test('TPOT = (e2e − TTFT)/(tokens − 1), only for more than one token', () => {
  assert.equal(tpotOf(rec({ chunkTimesMs: [100, 110, 120, 130], e2eMs: 160, outputTokens: 4 })), 20);
  assert.equal(tpotOf(rec({ chunkTimesMs: [100], e2eMs: 150, outputTokens: 1 })), undefined);
  // usage says 7 tokens in 4 chunks (speculative decoding): the token count, not the chunk count, divides
  assert.equal(tpotOf(rec({ chunkTimesMs: [100, 110, 120, 130], e2eMs: 160, outputTokens: 7, tokenSource: 'usage' })), 10);
});

test('summarize: warmup excluded, ITL pooled over requests, TPOT skips one-token replies', () => {
  const w = defaultWorkload({ percentiles: [50, 99] });
  const reqs = [
    rec({ warmup: true, chunkTimesMs: [5000, 9000], e2eMs: 9000 }), // a cold start, must not count
    rec({ sentAt: 1_000_000, chunkTimesMs: [100, 110, 130], e2eMs: 130, promptTokens: 10 }), // itl 10, 20; tpot 15
    rec({ sentAt: 1_000_050, chunkTimesMs: [200, 240], e2eMs: 240, promptTokens: 20 }), // itl 40; tpot 40
    rec({ sentAt: 1_000_100, chunkTimesMs: [300], e2eMs: 300, promptTokens: 30 }), // one token: no tpot, no itl
  ];
  const s = summarize(reqs, w);
  assert.equal(s.completed, 3);
  assert.equal(s.failed, 0);
  assert.equal(s.ttftMs.count, 3);
  assert.equal(s.ttftMs.mean, 200);
  assert.equal(s.ttftMs.max, 300, 'the warmup TTFT of 5000 is excluded');
  assert.deepEqual([s.tpotMs.count, s.tpotMs.mean], [2, 27.5]);
  assert.deepEqual([s.itlMs.count, s.itlMs.min, s.itlMs.max], [3, 10, 40]);
  assert.equal(s.itlMs.mean, (10 + 20 + 40) / 3);
  assert.equal(s.e2eMs.mean, (130 + 240 + 300) / 3);
  assert.equal(s.totalInputTokens, 60);
  assert.equal(s.totalOutputTokens, 6);
  // duration: first measured send (1_000_000) to last measured end (1_000_100 + 300) = 0.4 s
  assert.ok(Math.abs(s.durationS - 0.4) < 1e-9);
  assert.ok(Math.abs(s.requestsPerSecond - 7.5) < 1e-9);
  assert.ok(Math.abs(s.outputTokensPerSecond - 15) < 1e-9);
  assert.ok(Math.abs(s.totalTokensPerSecond - 165) < 1e-9);
  assert.equal(s.goodput, undefined, 'no SLO, no goodput');
  assert.equal(s.sloMissed, undefined);
  assert.equal(s.tokenSource, 'chunks');
  assert.equal(s.ttfoMs, undefined, 'no reasoning, no TTFO');
});

test('E2E and TPOT end at the last token: a late last byte (usage chunk, [DONE]) lengthens neither, only the measured span', () => {
  const late = rec({ sentAt: 1_000_000, chunkTimesMs: [100, 110, 120, 130], e2eMs: 130, lastByteMs: 400 });
  assert.equal(tpotOf(late), 10, '(130 − 100) / 3, not (400 − 100) / 3');
  const s = summarize([late, rec({ sentAt: 1_000_000, chunkTimesMs: [50, 70], e2eMs: 70, lastByteMs: 75 })], defaultWorkload({ percentiles: [50] }));
  assert.deepEqual([s.e2eMs.min, s.e2eMs.max], [70, 130]);
  assert.deepEqual([s.tpotMs.min, s.tpotMs.max], [10, 20]);
  // without the runner's wall time, the span runs to the last byte: the endpoint was busy until then
  assert.ok(Math.abs(s.durationS - 0.4) < 1e-9, `duration ${s.durationS}`);
});

test('summarize: the runner’s measured wall time wins over the records’ span', () => {
  const s = summarize([rec({ chunkTimesMs: [10, 20], e2eMs: 20 })], defaultWorkload(), { durationS: 2 });
  assert.equal(s.durationS, 2);
  assert.equal(s.requestsPerSecond, 0.5);
});

test('summarize: failures counted by kind, excluded from latencies and token totals', () => {
  const reqs = [
    rec({ chunkTimesMs: [100, 120], e2eMs: 120 }),
    rec({ chunkTimesMs: [], outputTokens: 0, ttftMs: undefined, e2eMs: undefined, httpStatus: 500, error: { kind: 'http', status: 500, message: 'HTTP 500' } }),
    rec({ chunkTimesMs: [], outputTokens: 0, ttftMs: undefined, e2eMs: undefined, error: { kind: 'http', status: 429, message: 'HTTP 429' } }),
    rec({ chunkTimesMs: [50, 60, 70], e2eMs: 70, error: { kind: 'reset', message: 'socket hang up' } }),
  ];
  const s = summarize(reqs, defaultWorkload());
  assert.equal(s.completed, 1);
  assert.equal(s.failed, 3);
  assert.deepEqual(s.errorsByKind, { http: 2, reset: 1 });
  assert.equal(s.ttftMs.count, 1);
  assert.equal(s.totalOutputTokens, 2, 'a failed request’s partial tokens do not count (vLLM counts them as 0)');
});

test('goodput: requests/s meeting every SLO (ttft, tpot, e2e) per request, as vLLM', () => {
  const reqs = [
    rec({ chunkTimesMs: [100, 110, 120], e2eMs: 120 }), // ttft 100, tpot 10, e2e 120: good
    rec({ chunkTimesMs: [600, 610, 620], e2eMs: 620 }), // ttft 600: misses ttft
    rec({ chunkTimesMs: [100, 200, 300], e2eMs: 300 }), // tpot 100: misses tpot
    rec({ chunkTimesMs: [400], e2eMs: 400 }), // one token: tpot counted as 0 → good
  ];
  const w = defaultWorkload({ slo: { ttftMs: 500, tpotMs: 50 } });
  const s = summarize(reqs, w, { durationS: 2 });
  assert.equal(s.goodput, 1, '2 good requests over 2 s');
  assert.deepEqual(s.sloMissed, ['ttftMs', 'tpotMs']);
  assert.equal(meetsSlo(reqs[0]!, { e2eMs: 120 }), true, 'the SLO bound is inclusive (≤)');
  assert.equal(meetsSlo(reqs[0]!, { e2eMs: 119.9 }), false);
  const met = summarize(reqs, defaultWorkload({ slo: { ttftMs: 1000, tpotMs: 200, e2eMs: 1000, itlMs: 150 } }), { durationS: 2 });
  assert.equal(met.goodput, 2);
  assert.deepEqual(met.sloMissed, []);
});

test('sloMissed judges the p99 of each metric, ITL pooled', () => {
  const reqs = Array.from({ length: 100 }, (_, i) => rec({ chunkTimesMs: [100, 110, i === 99 ? 400 : 120], e2eMs: i === 99 ? 400 : 120 }));
  const s = summarize(reqs, defaultWorkload({ slo: { itlMs: 100, e2eMs: 300 } }));
  // ITL sample: 199 gaps of 10 and one of 290 → p99 stays near 10; e2e p99 interpolates 120..400 → 122.8
  assert.deepEqual(s.sloMissed, []);
  const s2 = summarize(reqs, defaultWorkload({ slo: { itlMs: 9 } }));
  assert.deepEqual(s2.sloMissed, ['itlMs']);
  assert.equal(s2.goodput, undefined, 'ITL alone is not a per-request goodput SLO in vLLM');
});

test('SLO missed when nothing succeeded', () => {
  const s = summarize([rec({ chunkTimesMs: [], outputTokens: 0, error: { kind: 'connect', message: 'refused' } })], defaultWorkload({ slo: { ttftMs: 500 } }));
  assert.deepEqual(s.sloMissed, ['ttftMs']);
  assert.equal(s.goodput, 0);
});

test('token source, TTFO with reasoning, malformed and multi-token totals', () => {
  const a = rec({ chunkTimesMs: [50, 60, 300, 310], e2eMs: 310, ttfoMs: 300, reasoningTokens: 2, tokenSource: 'usage', multiTokenChunks: 1, malformedEvents: 2 });
  const b = rec({ chunkTimesMs: [40, 50], e2eMs: 50, ttfoMs: 40, tokenSource: 'chunks', malformedEvents: 1 });
  const s = summarize([a, b], defaultWorkload());
  assert.equal(s.tokenSource, 'mixed');
  assert.ok(s.ttfoMs);
  assert.equal(s.ttfoMs.max, 300);
  assert.equal(s.ttftMs.max, 50);
  assert.equal(s.malformedEvents, 3);
  assert.equal(s.multiTokenChunks, 1);
  assert.equal(summarize([a], defaultWorkload()).tokenSource, 'usage');
});

test('summarize of nothing is all zeros', () => {
  const s = summarize([], defaultWorkload());
  assert.equal(s.completed, 0);
  assert.equal(s.durationS, 0);
  assert.equal(s.requestsPerSecond, 0);
  assert.equal(s.stalls.count, 0);
  assert.doesNotThrow(() => JSON.stringify(s));
});
