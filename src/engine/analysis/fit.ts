// The model of an endpoint fitted from a sweep, and what it implies. Pure: no I/O, no clock, so the
// webview can import it as well as the engine.
//
// The model every explanation of the batching trade-off uses: one engine step decodes one token for
// each of the B sequences in the batch and costs base + k·B ms, so
//   TPOT(B)       = base + k·B                      (each user's time per output token)
//   throughput(B) = 1000·B / (base + k·B) tokens/s  (rises with B, saturating)
//   ceiling       = lim B→∞ throughput = 1000 / k tokens/s
//   e2e           ≈ TTFT + (N − 1)·TPOT for an N-token reply
// and prefill adds TTFT ≈ a + b·promptTokens, a prefill rate of 1000 / b tokens/s.
import type {
  PrefillDialConfig,
  PrefillFit,
  RequestRecord,
  RunFile,
  SloSpec,
  SweepFit,
  SweepKnee,
  SweepPick,
  SweepPoint,
  SweepResidual,
  SweepVerdict,
  Summary,
} from '../core/types';

/**
 * The sweep's fact when no SLO was given, as the run file stores it: neutral, naming no surface's
 * control. Each surface adds how to give one there (src/present/sweepText.ts, surfaceWords.ts).
 */
export const NO_SLO = 'No SLO given: no operating point can be named.';

// ---- The closed forms ----

export function tpotAt(baseMs: number, kMs: number, batch: number): number {
  return baseMs + kMs * batch;
}

/** Output tokens/s of the whole batch: B tokens every TPOT(B) ms. */
export function throughputAt(baseMs: number, kMs: number, batch: number): number {
  return (1000 * batch) / tpotAt(baseMs, kMs, batch);
}

/** The asymptote of throughputAt; undefined when k ≤ 0 (the model has no ceiling). */
export function ceilingTokensPerSecond(kMs: number): number | undefined {
  return kMs > 0 ? 1000 / kMs : undefined;
}

/** The batch at which TPOT reaches the SLO: (slo − base) / k. 0 when even B = 0 misses; undefined without a slope. */
export function batchAtTpot(baseMs: number, kMs: number, tpotSloMs: number): number | undefined {
  if (!(kMs > 0)) return undefined;
  return Math.max(0, (tpotSloMs - baseMs) / kMs);
}

// ---- Least squares ----

export interface LinearFit {
  readonly intercept: number;
  readonly slope: number;
  /** 1 − SSres/SStot; 1 when every y is equal and fitted exactly. */
  readonly r2: number;
  /** y − ŷ, in input order. */
  readonly residuals: readonly number[];
}

/** Ordinary least squares y ≈ intercept + slope·x. Undefined with fewer than 2 distinct x. */
export function linearFit(xs: readonly number[], ys: readonly number[]): LinearFit | undefined {
  const n = Math.min(xs.length, ys.length);
  if (n < 2) return undefined;
  let sx = 0;
  let sy = 0;
  for (let i = 0; i < n; i++) {
    sx += xs[i]!;
    sy += ys[i]!;
  }
  const mx = sx / n;
  const my = sy / n;
  let sxx = 0;
  let sxy = 0;
  let syy = 0;
  for (let i = 0; i < n; i++) {
    const dx = xs[i]! - mx;
    const dy = ys[i]! - my;
    sxx += dx * dx;
    sxy += dx * dy;
    syy += dy * dy;
  }
  // Distinct x are needed; relative tolerance so that 1e-12 noise on equal x does not fake a slope.
  if (sxx <= 1e-12 * Math.max(1, mx * mx) * n) return undefined;
  const slope = sxy / sxx;
  const intercept = my - slope * mx;
  const residuals: number[] = [];
  let ssRes = 0;
  for (let i = 0; i < n; i++) {
    const r = ys[i]! - (intercept + slope * xs[i]!);
    residuals.push(r);
    ssRes += r * r;
  }
  const r2 = syy > 0 ? 1 - ssRes / syy : ssRes <= 1e-18 ? 1 : 0;
  return { intercept, slope, r2, residuals };
}

// ---- The decoding batch a sweep point really ran at ----

/**
 * The B of TPOT(B) = base + k·B, as measured from the client: for each measured request with TPOT,
 * at every token after its first (each one is a decode step), count the streams that were decoding
 * then (first token already out, last token not yet), and average over its steps; then average
 * over requests.
 *
 * Why not the concurrency: in a closed loop at concurrency C the batch is C only in steady state.
 * Between one request's end and the next one's first token a slot decodes nothing, the tail of a
 * point drains to 1, and beyond the server's parallel slots extra requests wait in a queue (they
 * raise TTFT, not the batch). Each of these makes the true B smaller than C, so a fit over C
 * underestimates k. Averaging per step (not per unit of time) matches how TPOT is formed: a
 * request's TPOT is the mean of its step durations, so mean TPOT = base + k·mean(B) holds exactly.
 */
export function meanDecodingBatch(requests: readonly RequestRecord[]): number | undefined {
  // Every stream that produced tokens occupies the batch, warmups and failures included.
  const spans: { first: number; last: number }[] = [];
  for (const r of requests) {
    const c = r.chunkTimesMs;
    if (c.length === 0) continue;
    spans.push({ first: r.sentAt + c[0]!, last: r.sentAt + c[c.length - 1]! });
  }
  if (spans.length === 0) return undefined;
  const firsts = spans.map((s) => s.first).sort((a, b) => a - b);
  const lasts = spans.map((s) => s.last).sort((a, b) => a - b);
  let sum = 0;
  let n = 0;
  for (const r of requests) {
    if (r.warmup || r.error || r.tpotMs === undefined) continue;
    const c = r.chunkTimesMs;
    if (c.length < 2) continue;
    // Chunks of one step reach the client a little apart; judge "before this step" with a margin
    // of a quarter of this stream's step so that a neighbour's token of the same step is not
    // mistaken for an earlier one.
    const tol = 0.25 * ((c[c.length - 1]! - c[0]!) / (c.length - 1));
    let steps = 0;
    for (let j = 1; j < c.length; j++) {
      const t = r.sentAt + c[j]! - tol;
      // decoding at t: first token before t and last token at or after t
      steps += countBelow(firsts, t) - countBelow(lasts, t);
    }
    sum += Math.max(1, steps / (c.length - 1));
    n++;
  }
  return n > 0 ? sum / n : undefined;
}

/** Number of sorted values strictly below x. */
function countBelow(sorted: readonly number[], x: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (sorted[mid]! < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Mean prompt tokens the server reported, over measured successful requests. */
export function meanPromptTokens(requests: readonly RequestRecord[]): number | undefined {
  let sum = 0;
  let n = 0;
  for (const r of requests) {
    if (r.warmup || r.error || r.promptTokens === undefined) continue;
    sum += r.promptTokens;
    n++;
  }
  return n > 0 ? sum / n : undefined;
}

// ---- TPOT(B) fit ----

export interface TpotFitInput {
  readonly label: string;
  /** The B: the measured mean decoding batch or the concurrency. */
  readonly batch: number;
  /** Mean TPOT of the point (the mean, not a percentile: only the mean is linear in B). */
  readonly tpotMs: number;
}

export interface TpotFitResult {
  readonly fit?: SweepFit;
  readonly baseMs?: number;
  readonly kMs?: number;
  readonly r2?: number;
  readonly residuals: readonly SweepResidual[];
  readonly verdicts: readonly SweepVerdict[];
}

/** Below this R² the straight line does not describe the endpoint. */
const POOR_R2 = 0.9;
/** TPOT falling by more than this share (and 1 ms) as B grows breaks the model. */
const NON_MONOTONE_SHARE = 0.05;

export function fitTpot(points: readonly TpotFitInput[]): TpotFitResult {
  const pts = points.filter((p) => Number.isFinite(p.batch) && Number.isFinite(p.tpotMs) && p.tpotMs > 0);
  const verdicts: SweepVerdict[] = [];
  const lf = linearFit(
    pts.map((p) => p.batch),
    pts.map((p) => p.tpotMs),
  );
  if (!lf) {
    verdicts.push({ kind: 'too-few-points', message: 'Fewer than two batch sizes with a TPOT: no fit.' });
    return { residuals: [], verdicts };
  }
  const residuals: SweepResidual[] = pts.map((p, i) => ({
    label: p.label,
    batch: p.batch,
    tpotMs: p.tpotMs,
    predictedMs: lf.intercept + lf.slope * p.batch,
    residualMs: lf.residuals[i]!,
  }));
  const distinct = new Set(pts.map((p) => Math.round(p.batch * 100))).size;
  if (distinct < 3) {
    verdicts.push({ kind: 'too-few-points', message: `Only ${distinct} batch sizes: a line through two points always fits (R² = 1 says nothing).` });
  } else if (lf.r2 < POOR_R2) {
    verdicts.push({ kind: 'poor-fit', message: `R² = ${lf.r2.toFixed(2)} (< ${POOR_R2}): TPOT is not a straight line in the batch here; treat base, k and the ceiling as rough.` });
  }
  const sorted = [...pts].sort((a, b) => a.batch - b.batch);
  for (let i = 1; i < sorted.length; i++) {
    const prev = sorted[i - 1]!;
    const cur = sorted[i]!;
    if (cur.tpotMs < prev.tpotMs * (1 - NON_MONOTONE_SHARE) && prev.tpotMs - cur.tpotMs > 1) {
      verdicts.push({
        kind: 'non-monotone',
        message: `TPOT falls from ${prev.tpotMs.toFixed(1)} ms (${prev.label}) to ${cur.tpotMs.toFixed(1)} ms (${cur.label}) as the batch grows: something other than batching dominates (noise, caching, a changing load).`,
      });
      break;
    }
  }
  if (lf.intercept < 0 && lf.slope > 0) {
    const meanTpot = pts.reduce((a, p) => a + p.tpotMs, 0) / pts.length;
    verdicts.push({
      kind: 'negative-base',
      message:
        lf.intercept > -0.1 * meanTpot
          ? `The fitted base is about zero (${lf.intercept.toFixed(2)} ms): nearly all of a step's cost grows with the batch, so batching buys almost no throughput (compute-bound: a small model on a busy CPU).`
          : `The fitted base is negative (${lf.intercept.toFixed(1)} ms): TPOT grows faster than linearly in the batch, so the steps are not base + k·B (a shared or oversubscribed CPU, memory pressure); the ceiling is not to be trusted.`,
    });
  }
  const ceiling = ceilingTokensPerSecond(lf.slope);
  if (ceiling === undefined) {
    verdicts.push({
      kind: 'not-rising',
      message: `TPOT does not rise with the batch (k = ${lf.slope.toFixed(3)} ms): no throughput ceiling can be derived; the endpoint is not batch-bound in this range, or extra requests only queue.`,
    });
  }
  return {
    baseMs: lf.intercept,
    kMs: lf.slope,
    r2: lf.r2,
    ...(ceiling !== undefined ? { fit: { baseMs: lf.intercept, kMs: lf.slope, ceilingTokensPerSecond: ceiling, r2: lf.r2 } } : {}),
    residuals,
    verdicts,
  };
}

// ---- TTFT(prompt tokens) fit ----

export interface PrefillFitInput {
  readonly promptTokens: number;
  /** Mean TTFT at concurrency 1. */
  readonly ttftMs: number;
}

export function fitPrefill(points: readonly PrefillFitInput[]): PrefillFit | undefined {
  const lf = linearFit(
    points.map((p) => p.promptTokens),
    points.map((p) => p.ttftMs),
  );
  if (!lf) return undefined;
  return {
    aMs: lf.intercept,
    bMsPerToken: lf.slope,
    ...(lf.slope > 0 ? { prefillTokensPerSecond: 1000 / lf.slope } : {}),
    r2: lf.r2,
    residualsMs: lf.residuals,
  };
}

// ---- The knee ----

/** A doubling that buys less than this share of throughput is past the knee. */
const KNEE_GAIN = 0.15;

/**
 * The knee of throughput against the swept dimension: the first point after which one doubling of
 * the dimension buys less than `threshold` more throughput (gains between points that are not a
 * doubling apart are converted to a per-doubling rate: (t₂/t₁)^(1/log₂(x₂/x₁)) − 1). With base 20 ms
 * and k 1 ms, 64 → 128 buys 13%: the knee is at 64. Undefined when every step still pays.
 */
export function findKnee(
  points: readonly { readonly label: string; readonly x: number; readonly throughput: number }[],
  threshold = KNEE_GAIN,
): SweepKnee | undefined {
  const order = points
    .map((p, index) => ({ ...p, index }))
    .filter((p) => p.x > 0 && Number.isFinite(p.throughput))
    .sort((a, b) => a.x - b.x);
  for (let i = 0; i + 1 < order.length; i++) {
    const a = order[i]!;
    const b = order[i + 1]!;
    if (b.x === a.x) continue;
    const gain = a.throughput > 0 ? Math.pow(Math.max(0, b.throughput) / a.throughput, 1 / Math.log2(b.x / a.x)) - 1 : Infinity;
    if (gain < threshold) return { index: a.index, label: a.label, gainPerDoubling: gain, threshold };
  }
  return undefined;
}

// ---- SLOs, the operating point, the max-throughput point ----

/** Which SLOs the summary's p99 misses (ITL judged on the pooled ITL p99). Empty when all are met. */
export function sloMissed(summary: Summary, slo: SloSpec | undefined): (keyof SloSpec)[] {
  if (!slo) return [];
  const missed: (keyof SloSpec)[] = [];
  const check = (key: keyof SloSpec, value: number | undefined) => {
    const limit = slo[key];
    if (limit === undefined) return;
    if (value === undefined || !Number.isFinite(value) || value > limit) missed.push(key);
  };
  check('ttftMs', summary.ttftMs.p99);
  check('tpotMs', summary.tpotMs.p99);
  check('itlMs', summary.itlMs.p99);
  check('e2eMs', summary.e2eMs.p99);
  return missed;
}

function hasSlo(slo: SloSpec | undefined): slo is SloSpec {
  return !!slo && (slo.ttftMs !== undefined || slo.tpotMs !== undefined || slo.itlMs !== undefined || slo.e2eMs !== undefined);
}

/**
 * The operating point for interactive work: among points with no failed request whose p99 meets
 * every SLO, the one of highest goodput (ties: higher throughput). Goodput is the summary's when the
 * runner had the SLO; otherwise, for a point whose p99 meets every SLO, requests/s stands in for it.
 */
export function pickOperatingPoint(points: readonly SweepPoint[], slo: SloSpec | undefined): SweepPick | undefined {
  if (!hasSlo(slo)) return undefined;
  let best: SweepPick | undefined;
  points.forEach((p, index) => {
    const s = p.summary;
    if (s.completed === 0 || s.failed > 0 || sloMissed(s, slo).length > 0) return;
    const goodput = s.goodput ?? s.requestsPerSecond;
    if (
      !best ||
      goodput > best.goodput! ||
      (goodput === best.goodput && s.outputTokensPerSecond > best.outputTokensPerSecond)
    ) {
      best = { index, label: p.label, goodput, outputTokensPerSecond: s.outputTokensPerSecond };
    }
  });
  return best;
}

/** The point of highest output tokens/s, for offline or batch work where latency does not matter. */
export function pickMaxThroughput(points: readonly SweepPoint[]): SweepPick | undefined {
  let best: SweepPick | undefined;
  points.forEach((p, index) => {
    const s = p.summary;
    if (s.completed === 0) return;
    if (!best || s.outputTokensPerSecond > best.outputTokensPerSecond) {
      best = { index, label: p.label, ...(s.goodput !== undefined ? { goodput: s.goodput } : {}), outputTokensPerSecond: s.outputTokensPerSecond };
    }
  });
  return best;
}

// ---- Saturation: when a sweep stops early ----

/** More than this share of a point's requests failing means the endpoint is saturated (or broken). */
const SATURATION_ERROR_SHARE = 0.05;

/**
 * Whether `cur` shows the endpoint saturated, given the point before it. The rule:
 *  - errors: more than 5% of the point's requests failed (429s, timeouts, resets...); or
 *  - for concurrency and rate sweeps: throughput rose by less than 5% over the previous point while
 *    latency climbed (e2e p50 up by more than 20%, or TTFT p50 up by more than 50%): more load
 *    only lengthens queues. A prompt-length sweep changes the work per request, so only errors count.
 * Returns the reason, or undefined.
 */
export function saturationReason(
  dimension: 'concurrency' | 'rate' | 'promptTokens',
  prev: Summary | undefined,
  cur: Summary,
): string | undefined {
  const total = cur.completed + cur.failed;
  if (total > 0 && cur.failed / total > SATURATION_ERROR_SHARE) {
    return `${cur.failed} of ${total} requests failed (${kinds(cur)})`;
  }
  if (!prev || dimension === 'promptTokens') return undefined;
  if (prev.outputTokensPerSecond <= 0 || cur.completed === 0) return undefined;
  const gain = cur.outputTokensPerSecond / prev.outputTokensPerSecond - 1;
  if (gain >= 0.05) return undefined;
  const e2eUp = ratio(cur.e2eMs.p50, prev.e2eMs.p50);
  const ttftUp = ratio(cur.ttftMs.p50, prev.ttftMs.p50);
  if (e2eUp > 1.2 || ttftUp > 1.5) {
    return `throughput ${gain >= 0 ? 'rose' : 'fell'} ${(Math.abs(gain) * 100).toFixed(0)}% while e2e p50 rose ${((e2eUp - 1) * 100).toFixed(0)}% and TTFT p50 rose ${((ttftUp - 1) * 100).toFixed(0)}%`;
  }
  return undefined;
}

function ratio(a: number | undefined, b: number | undefined): number {
  if (a === undefined || b === undefined || !(b > 0)) return 1;
  return a / b;
}

function kinds(s: Summary): string {
  return Object.entries(s.errorsByKind)
    .filter(([, n]) => (n ?? 0) > 0)
    .map(([k, n]) => `${k} ${n}`)
    .join(', ') || 'errors';
}

// ---- Everything a sweep object carries beside its points ----

/** The run file's `sweep` fields this analysis fills (their meaning is written there); the verdicts always. */
export type SweepAnalysis = Pick<
  NonNullable<RunFile['sweep']>,
  'fit' | 'fitX' | 'residuals' | 'sloBatch' | 'knee' | 'operatingPoint' | 'maxThroughputPoint' | 'prefillFit'
> & { readonly verdicts: readonly SweepVerdict[] };

/**
 * The analysis of a sweep's points. Concurrency sweeps get the TPOT(B) fit (B = meanBatch when every
 * point has one, else the concurrency) and a knee over concurrency; rate sweeps a knee over the rate
 * and the TPOT fit over the measured batch when it is known; prompt-length sweeps the prefill fit.
 */
export function analyzeSweep(
  dimension: 'concurrency' | 'rate' | 'promptTokens',
  points: readonly SweepPoint[],
  slo: SloSpec | undefined,
): SweepAnalysis {
  const verdicts: SweepVerdict[] = [];
  const ok = points.filter((p) => p.summary.completed > 0);
  let out: Omit<SweepAnalysis, 'verdicts'> = {};

  if (dimension === 'concurrency' || dimension === 'rate') {
    const measured = ok.every((p) => p.meanBatch !== undefined);
    const fitX: 'meanBatch' | 'concurrency' | undefined = measured ? 'meanBatch' : dimension === 'concurrency' ? 'concurrency' : undefined;
    if (fitX) {
      const tf = fitTpot(
        ok
          .filter((p) => p.summary.tpotMs.count > 0)
          .map((p) => ({ label: p.label, batch: (fitX === 'meanBatch' ? p.meanBatch : p.concurrency) ?? NaN, tpotMs: p.summary.tpotMs.mean })),
      );
      verdicts.push(...tf.verdicts);
      out = { ...out, fitX, residuals: tf.residuals, ...(tf.fit ? { fit: tf.fit } : {}) };
      if (tf.fit && slo?.tpotMs !== undefined) {
        const b = batchAtTpot(tf.fit.baseMs, tf.fit.kMs, slo.tpotMs);
        if (b !== undefined) out = { ...out, sloBatch: b };
      }
    }
    const knee = findKnee(ok.map((p) => ({ label: p.label, x: (dimension === 'rate' ? p.rate : p.concurrency) ?? NaN, throughput: p.summary.outputTokensPerSecond })));
    if (knee) out = { ...out, knee };
    if (knee && knee.gainPerDoubling < 0 && knee.index === 0) {
      verdicts.push({
        kind: 'throughput-falls',
        message: `Throughput falls as soon as ${dimension} rises past ${knee.label}: the endpoint is already saturated there (compute-bound, or the machine is shared).`,
      });
    }
  } else {
    const pf = fitPrefill(
      ok
        .filter((p) => p.summary.ttftMs.count > 0)
        .map((p) => ({ promptTokens: p.measuredPromptTokens ?? p.promptTokens ?? NaN, ttftMs: p.summary.ttftMs.mean }))
        .filter((p) => Number.isFinite(p.promptTokens)),
    );
    if (pf) {
      out = { ...out, prefillFit: pf };
      if (pf.r2 < POOR_R2 && ok.length >= 3) verdicts.push({ kind: 'poor-fit', message: `Prefill fit R² = ${pf.r2.toFixed(2)}: TTFT is not linear in the prompt length here.` });
      if (!(pf.bMsPerToken > 0)) verdicts.push({ kind: 'not-rising', message: 'TTFT does not rise with the prompt length: no prefill rate can be derived (a prefix cache?).' });
    } else {
      verdicts.push({ kind: 'too-few-points', message: 'Fewer than two prompt lengths with a TTFT: no prefill fit.' });
    }
  }

  const failing = points.filter((p) => p.summary.failed > 0);
  if (failing.length > 0) {
    verdicts.push({ kind: 'errors', message: `Requests failed at ${failing.map((p) => p.label).join(', ')}.` });
  }
  const maxThroughputPoint = pickMaxThroughput(points);
  if (maxThroughputPoint) out = { ...out, maxThroughputPoint };
  if (!hasSlo(slo)) {
    verdicts.push({ kind: 'no-slo', message: NO_SLO });
  } else {
    const op = pickOperatingPoint(points, slo);
    if (op) out = { ...out, operatingPoint: op };
    else verdicts.push({ kind: 'no-point-meets-slo', message: 'No point meets every SLO at p99 without failures.' });
  }
  return { ...out, verdicts };
}

// ---- The chunked-prefill dial ----

/** The figures the dial compares, per configuration. */
export interface DialFigures {
  readonly batchSize: number;
  readonly tpotP99Ms: number;
  readonly stallCount: number;
  readonly stallTotalMs: number;
  readonly stallShare: number;
  readonly longTtftP50Ms: number;
  readonly longTtftP99Ms: number;
  readonly longCount: number;
  /** Failed requests, decodes and long prompts together. */
  readonly failed: number;
  readonly outputTokensPerSecond: number;
}

export function dialFigures(config: PrefillDialConfig): DialFigures {
  const d = config.decode.summary;
  const l = config.long.summary;
  return {
    batchSize: config.batchSize,
    tpotP99Ms: d.tpotMs.p99 ?? d.tpotMs.max,
    stallCount: d.stalls.count,
    stallTotalMs: d.stalls.totalMs,
    stallShare: d.stalls.shareOfDecode,
    longTtftP50Ms: l.ttftMs.p50 ?? l.ttftMs.mean,
    longTtftP99Ms: l.ttftMs.p99 ?? l.ttftMs.max,
    longCount: l.completed,
    failed: d.failed + l.failed,
    outputTokensPerSecond: d.outputTokensPerSecond,
  };
}
