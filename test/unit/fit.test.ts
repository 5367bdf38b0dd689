import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  analyzeSweep,
  batchAtTpot,
  ceilingTokensPerSecond,
  findKnee,
  fitPrefill,
  fitTpot,
  linearFit,
  meanDecodingBatch,
  pickMaxThroughput,
  pickOperatingPoint,
  saturationReason,
  sloMissed,
  throughputAt,
  tpotAt,
} from '../../src/engine/analysis/fit';
import type { RequestRecord, Stats, Summary, SweepPoint } from '../../src/engine/core/types';

function stats(mean: number, p50 = mean, p99 = mean, count = 10): Stats {
  return { count, mean, std: 0, min: p50, max: p99, p50, p90: p99, p95: p99, p99 };
}

function summary(o: {
  tps: number;
  rps?: number;
  tpot: number;
  tpotP99?: number;
  ttft?: number;
  ttftP99?: number;
  e2e?: number;
  goodput?: number;
  failed?: number;
  completed?: number;
}): Summary {
  return {
    completed: o.completed ?? 10,
    failed: o.failed ?? 0,
    errorsByKind: o.failed ? { http: o.failed } : {},
    durationS: 1,
    totalInputTokens: 0,
    totalOutputTokens: 0,
    requestsPerSecond: o.rps ?? 1,
    outputTokensPerSecond: o.tps,
    totalTokensPerSecond: o.tps,
    ttftMs: stats(o.ttft ?? 100, o.ttft ?? 100, o.ttftP99 ?? o.ttft ?? 100),
    tpotMs: stats(o.tpot, o.tpot, o.tpotP99 ?? o.tpot),
    itlMs: stats(o.tpot),
    e2eMs: stats(o.e2e ?? 1000),
    ...(o.goodput !== undefined ? { goodput: o.goodput } : {}),
    stalls: { count: 0, totalMs: 0, shareOfDecode: 0, worst: [], factor: 3, floorMs: 50 },
    malformedEvents: 0,
    tokenSource: 'usage',
    multiTokenChunks: 0,
  };
}

function modelPoint(base: number, k: number, b: number, extra: Partial<SweepPoint> = {}): SweepPoint {
  const tpot = tpotAt(base, k, b);
  return {
    label: `c=${b}`,
    concurrency: b,
    summary: summary({ tps: throughputAt(base, k, b), rps: throughputAt(base, k, b) / 100, tpot, tpotP99: tpot * 1.1 }),
    requestIndexes: [],
    ...extra,
  };
}

test('the worked example: base 20 ms, k 1 ms', () => {
  assert.equal(tpotAt(20, 1, 64), 84);
  assert.equal(Math.round(throughputAt(20, 1, 64)), 762);
  assert.equal(tpotAt(20, 1, 128), 148);
  assert.equal(Math.round(throughputAt(20, 1, 128)), 865);
  // a doubling of the batch buys 13% throughput for 76% more TPOT
  // (the gain is 13.5%: the 13% truncates it, as 865 / 762 = 1.135 does)
  assert.equal(Math.floor((throughputAt(20, 1, 128) / throughputAt(20, 1, 64) - 1) * 100), 13);
  assert.equal(Math.floor((865 / 762 - 1) * 100), 13);
  assert.equal(Math.round((tpotAt(20, 1, 128) / tpotAt(20, 1, 64) - 1) * 100), 76);
  assert.equal(ceilingTokensPerSecond(1), 1000);
  // the TPOT SLO of 84 ms is crossed at B = 64
  assert.equal(batchAtTpot(20, 1, 84), 64);
  assert.equal(batchAtTpot(20, 1, 10), 0);
  assert.equal(batchAtTpot(20, 0, 50), undefined);
});

test('linearFit recovers an exact line, R² = 1, zero residuals; undefined without two distinct x', () => {
  const lf = linearFit([1, 2, 4, 8], [22, 24, 28, 36])!;
  assert.ok(Math.abs(lf.intercept - 20) < 1e-9);
  assert.ok(Math.abs(lf.slope - 2) < 1e-9);
  assert.ok(Math.abs(lf.r2 - 1) < 1e-12);
  for (const r of lf.residuals) assert.ok(Math.abs(r) < 1e-9);
  assert.equal(linearFit([3], [1]), undefined);
  assert.equal(linearFit([2, 2, 2], [1, 2, 3]), undefined);
  // a hand-computed case: x 0,1,2 y 1,3,2 → slope 0.5, intercept 1.5, R² 0.25
  const h = linearFit([0, 1, 2], [1, 3, 2])!;
  assert.ok(Math.abs(h.slope - 0.5) < 1e-12);
  assert.ok(Math.abs(h.intercept - 1.5) < 1e-12);
  assert.ok(Math.abs(h.r2 - 0.25) < 1e-12);
  assert.deepEqual(h.residuals.map((r) => +r.toFixed(9)), [-0.5, 1, -0.5]);
});

test('fitTpot on exact model data gives base, k, the ceiling and no verdict', () => {
  const r = fitTpot([1, 2, 4, 8, 16, 32, 64, 128].map((b) => ({ label: `c=${b}`, batch: b, tpotMs: tpotAt(20, 1, b) })));
  assert.ok(r.fit);
  assert.ok(Math.abs(r.fit.baseMs - 20) < 1e-9);
  assert.ok(Math.abs(r.fit.kMs - 1) < 1e-9);
  assert.ok(Math.abs(r.fit.ceilingTokensPerSecond - 1000) < 1e-6);
  assert.ok(r.fit.r2 > 0.999999);
  assert.deepEqual(r.verdicts, []);
  assert.equal(r.residuals.length, 8);
  assert.equal(r.residuals[6]!.predictedMs.toFixed(6), '84.000000');
});

test('fitTpot says when the model does not fit', () => {
  const noisy = fitTpot([
    { label: 'a', batch: 1, tpotMs: 30 },
    { label: 'b', batch: 2, tpotMs: 12 },
    { label: 'c', batch: 4, tpotMs: 40 },
    { label: 'd', batch: 8, tpotMs: 15 },
  ]);
  const kinds = noisy.verdicts.map((v) => v.kind);
  assert.ok(kinds.includes('poor-fit'), kinds.join());
  assert.ok(kinds.includes('non-monotone'), kinds.join());

  const flat = fitTpot([1, 2, 4].map((b) => ({ label: `${b}`, batch: b, tpotMs: 30 - b })));
  assert.equal(flat.fit, undefined, 'no ceiling without a rising TPOT');
  assert.ok(flat.verdicts.some((v) => v.kind === 'not-rising'));
  assert.ok(flat.kMs! < 0);

  const two = fitTpot([
    { label: 'a', batch: 1, tpotMs: 21 },
    { label: 'b', batch: 2, tpotMs: 22 },
  ]);
  assert.ok(two.fit);
  assert.ok(two.verdicts.some((v) => v.kind === 'too-few-points'));
  assert.ok(fitTpot([{ label: 'a', batch: 1, tpotMs: 21 }]).verdicts.some((v) => v.kind === 'too-few-points'));
});

test('fitPrefill gives the prefill rate from TTFT ≈ a + b·tokens', () => {
  const pf = fitPrefill([128, 512, 2048].map((n) => ({ promptTokens: n, ttftMs: 15 + 0.25 * n })))!;
  assert.ok(Math.abs(pf.aMs - 15) < 1e-9);
  assert.ok(Math.abs(pf.bMsPerToken - 0.25) < 1e-12);
  assert.ok(Math.abs(pf.prefillTokensPerSecond! - 4000) < 1e-6);
  assert.ok(pf.r2 > 0.999999);
  assert.equal(fitPrefill([{ promptTokens: 1, ttftMs: 1 }]), undefined);
});

test('the knee: the first point after which a doubling buys < 15% throughput', () => {
  const pts = [1, 2, 4, 8, 16, 32, 64, 128, 256].map((b) => ({ label: `c=${b}`, x: b, throughput: throughputAt(20, 1, b) }));
  const knee = findKnee(pts)!;
  assert.equal(knee.label, 'c=64');
  assert.equal(Math.floor(knee.gainPerDoubling * 100), 13);
  assert.equal(knee.threshold, 0.15);
  // a stricter threshold moves it later, a looser one earlier
  assert.equal(findKnee(pts, 0.05), undefined, '128 → 256 still buys 7%');
  assert.equal(findKnee(pts, 0.3)!.label, 'c=32');
  // still scaling everywhere: no knee
  assert.equal(findKnee(pts.slice(0, 4)), undefined);
  // steps that are not doublings are converted to a per-doubling gain: 1 → 4 with ×1.2 is ~9.5% per doubling
  const k2 = findKnee([
    { label: 'a', x: 1, throughput: 100 },
    { label: 'b', x: 4, throughput: 120 },
  ])!;
  assert.equal(k2.label, 'a');
  assert.ok(Math.abs(k2.gainPerDoubling - (Math.sqrt(1.2) - 1)) < 1e-12);
  // throughput falling is past the knee too
  assert.equal(findKnee([{ label: 'a', x: 2, throughput: 100 }, { label: 'b', x: 4, throughput: 90 }])!.label, 'a');
});

test('the operating point: highest goodput whose p99 meets every SLO; max throughput beside it', () => {
  const points = [1, 2, 4, 8, 16, 32, 64, 128].map((b) => modelPoint(20, 1, b));
  // the p99 TPOT is 1.1 × the model's TPOT: at B = 32 that is 57.2 ms, at 64 92.4 ms
  const slo = { tpotMs: 60 };
  const op = pickOperatingPoint(points, slo)!;
  assert.equal(op.label, 'c=32');
  assert.equal(pickMaxThroughput(points)!.label, 'c=128');
  assert.equal(pickOperatingPoint(points, { tpotMs: 10 }), undefined);
  assert.equal(pickOperatingPoint(points, undefined), undefined);
  // summary goodput wins over requests/s when present, and a point with failures is not eligible
  const g = [
    modelPoint(20, 1, 1, { summary: summary({ tps: 10, tpot: 21, goodput: 5 }) }),
    modelPoint(20, 1, 2, { summary: summary({ tps: 20, tpot: 22, goodput: 3 }) }),
    modelPoint(20, 1, 4, { summary: summary({ tps: 40, tpot: 24, goodput: 9, failed: 1 }) }),
  ];
  assert.equal(pickOperatingPoint(g, { tpotMs: 50 })!.label, 'c=1');
  assert.deepEqual(sloMissed(summary({ tps: 1, tpot: 30, ttft: 400, ttftP99: 600 }), { ttftMs: 500, tpotMs: 50 }), ['ttftMs']);
  assert.deepEqual(sloMissed(summary({ tps: 1, tpot: 30 }), undefined), []);
});

test('analyzeSweep of a concurrency sweep: fit over the measured batch, knee, operating point, sloBatch', () => {
  // measured batch slightly below the concurrency, as in a real closed loop
  const points = [1, 2, 4, 8, 16, 32, 64, 128].map((c) => {
    const b = c === 1 ? 1 : c * 0.9;
    const p = modelPoint(20, 1, b);
    return { ...p, label: `c=${c}`, concurrency: c, meanBatch: b };
  });
  const a = analyzeSweep('concurrency', points, { tpotMs: 60 });
  assert.equal(a.fitX, 'meanBatch');
  assert.ok(Math.abs(a.fit!.baseMs - 20) < 1e-9 && Math.abs(a.fit!.kMs - 1) < 1e-9);
  assert.ok(Math.abs(a.sloBatch! - 40) < 1e-9);
  assert.equal(a.operatingPoint!.label, 'c=32');
  assert.equal(a.maxThroughputPoint!.label, 'c=128');
  assert.ok(a.knee);
  assert.deepEqual(a.verdicts, []);
  // without SLO: says so; with the concurrency as B (no measured batch) k comes out lower
  const b = analyzeSweep('concurrency', points.map(({ meanBatch: _m, ...p }) => p), undefined);
  assert.equal(b.fitX, 'concurrency');
  assert.ok(b.fit!.kMs < 0.95);
  assert.ok(b.verdicts.some((v) => v.kind === 'no-slo'));
});

test('analyzeSweep of a prompt-length sweep gives the prefill fit', () => {
  const points: SweepPoint[] = [128, 512, 2048].map((n) => ({
    label: `p=${n}`,
    concurrency: 1,
    promptTokens: n,
    measuredPromptTokens: n + 10,
    summary: summary({ tps: 10, tpot: 20, ttft: 30 + 0.5 * (n + 10) }),
    requestIndexes: [],
  }));
  const a = analyzeSweep('promptTokens', points, { ttftMs: 2000 });
  assert.ok(Math.abs(a.prefillFit!.bMsPerToken - 0.5) < 1e-9);
  assert.ok(Math.abs(a.prefillFit!.prefillTokensPerSecond! - 2000) < 1e-6);
  assert.equal(a.fit, undefined);
  assert.equal(a.operatingPoint!.label, 'p=128');
});

test('saturation: errors, or throughput flat while latency climbs', () => {
  const a = summary({ tps: 100, tpot: 20, e2e: 1000, ttft: 100 });
  assert.equal(saturationReason('concurrency', undefined, a), undefined);
  assert.match(saturationReason('concurrency', a, summary({ tps: 150, tpot: 30, failed: 2, completed: 8 }))!, /2 of 10 requests failed \(http 2\)/);
  assert.equal(saturationReason('concurrency', a, summary({ tps: 150, tpot: 30, e2e: 1500 })), undefined, 'still scaling');
  assert.match(saturationReason('concurrency', a, summary({ tps: 102, tpot: 30, e2e: 1300 }))!, /throughput rose 2%/);
  assert.match(saturationReason('rate', a, summary({ tps: 99, tpot: 20, e2e: 1000, ttft: 200 }))!, /TTFT p50 rose 100%/);
  assert.equal(saturationReason('concurrency', a, summary({ tps: 101, tpot: 20, e2e: 1010 })), undefined, 'flat but latency too');
  assert.equal(saturationReason('promptTokens', a, summary({ tps: 50, tpot: 20, e2e: 3000 })), undefined);
});

function rec(index: number, sentAt: number, chunks: number[], extra: Partial<RequestRecord> = {}): RequestRecord {
  const ttft = chunks[0]!;
  const e2e = chunks[chunks.length - 1]!;
  return {
    index,
    warmup: false,
    scheduledAt: sentAt,
    sentAt,
    ttftMs: ttft,
    e2eMs: e2e,
    tpotMs: chunks.length > 1 ? (e2e - ttft) / (chunks.length - 1) : undefined,
    outputTokens: chunks.length,
    tokenSource: 'chunks',
    chunkTimesMs: chunks,
    ...extra,
  };
}

test('meanDecodingBatch counts the streams decoding at each step', () => {
  // two streams in lock-step, 10 ms steps, same start: B = 2 at every step
  const steps = (n: number, first: number) => Array.from({ length: n }, (_, i) => first + 10 * i);
  assert.equal(meanDecodingBatch([rec(0, 0, steps(5, 10)), rec(1, 0, steps(5, 10.2))]), 2);
  // one stream of 9 steps alone, a second one joining for its last 4 steps (first token at 60)
  const a = rec(0, 0, steps(9, 10)); // tokens at 10..90
  const b = rec(1, 50, steps(4, 10)); // tokens at 60..90 (absolute)
  // a's 8 decode steps (20..90): B = 1 at 20..60 (b's first token at 60 is not yet decoding), 2 at 70, 80, 90 → 11/8
  // b's 3 decode steps (70, 80, 90): B = 2 → 2; mean (11/8 + 2) / 2
  assert.ok(Math.abs(meanDecodingBatch([a, b])! - (11 / 8 + 2) / 2) < 1e-9);
  assert.equal(meanDecodingBatch([]), undefined);
  assert.equal(meanDecodingBatch([rec(0, 0, [5])]), undefined);
});

test('verdicts for a line that is not a batching engine: negative base, throughput falling at once', () => {
  // TPOT growing faster than linearly (an oversubscribed CPU): base comes out negative
  const pts = [1, 2, 4, 8].map((c) => ({
    label: `c=${c}`,
    concurrency: c,
    meanBatch: c,
    summary: summary({ tps: 34 / Math.sqrt(c), tpot: 15 * Math.pow(c, 1.3) }),
    requestIndexes: [],
  }));
  const a = analyzeSweep('concurrency', pts, undefined);
  const kinds = a.verdicts.map((v) => v.kind);
  assert.ok(kinds.includes('negative-base'), kinds.join());
  assert.ok(kinds.includes('throughput-falls'), kinds.join());
  assert.equal(a.knee!.label, 'c=1');
});

test('a base of about zero is told apart from a clearly negative one', () => {
  const nearZero = fitTpot([1, 2, 4, 8].map((b) => ({ label: `${b}`, batch: b, tpotMs: 2.37 * b - 0.47 })));
  assert.match(nearZero.verdicts.find((v) => v.kind === 'negative-base')!.message, /about zero/);
  const negative = fitTpot([1, 2, 4, 8].map((b) => ({ label: `${b}`, batch: b, tpotMs: 15 * b - 12 })));
  assert.match(negative.verdicts.find((v) => v.kind === 'negative-base')!.message, /faster than linearly/);
  assert.equal(fitTpot([1, 2, 4].map((b) => ({ label: `${b}`, batch: b, tpotMs: 20 + b }))).verdicts.length, 0);
});
