// The statistics every surface shows. Definitions follow vLLM's `bench serve` (calculate_metrics in
// vllm/benchmarks/serve.py) so that numbers can be compared with it; see README "Metrics".
import type { ErrorKind, RequestRecord, SloSpec, Stats, Summary, WorkloadSpec } from './types';
import { summarizeStalls } from './stalls';

/** The percentile an SLO is judged at for `sloMissed`. */
export const SLO_PERCENTILE = 99;

// numpy's _lerp: the two-sided form keeps the result exact at t = 0 and t = 1; it agrees with numpy to
// within ~1e-15 relative (summation order differs), exactly on the tested values.
function lerp(a: number, b: number, t: number): number {
  const diff = b - a;
  return t >= 0.5 ? b - diff * (1 - t) : a + diff * t;
}

/**
 * The p-th percentile (0–100) of an ascending array, by linear interpolation between the closest
 * ranks: numpy.percentile's default method ("linear"). NaN for an empty array.
 */
export function percentile(sorted: readonly number[], p: number): number {
  const n = sorted.length;
  if (n === 0) return Number.NaN;
  if (!(p >= 0 && p <= 100)) throw new RangeError(`percentile must be within 0..100, got ${p}`);
  const h = ((n - 1) * p) / 100;
  const lo = Math.floor(h);
  if (lo >= n - 1) return sorted[n - 1]!;
  return lerp(sorted[lo]!, sorted[lo + 1]!, h - lo);
}

/** The key under which a percentile is stored: 50 → "p50", 99.9 → "p99.9". */
export function percentileKey(p: number): `p${string}` {
  return `p${p}`;
}

/**
 * count, mean, population std (ddof = 0, numpy's default, as vLLM reports), min, max and each
 * percentile. An empty sample gives count 0 and zeros, as vLLM does (`np.mean(x or 0)`), so the
 * run file never holds NaN (which JSON cannot carry).
 */
export function stats(values: readonly number[], percentiles: readonly number[]): Stats {
  const out: Record<string, number> = { count: values.length, mean: 0, std: 0, min: 0, max: 0 };
  if (values.length === 0) {
    for (const p of percentiles) out[percentileKey(p)] = 0;
    return out as unknown as Stats;
  }
  const sorted = [...values].sort((a, b) => a - b);
  let sum = 0;
  for (const v of sorted) sum += v;
  const mean = sum / sorted.length;
  let sq = 0;
  for (const v of sorted) sq += (v - mean) * (v - mean);
  out.mean = mean;
  out.std = Math.sqrt(sq / sorted.length);
  out.min = sorted[0]!;
  out.max = sorted[sorted.length - 1]!;
  for (const p of percentiles) out[percentileKey(p)] = percentile(sorted, p);
  return out as unknown as Stats;
}

/** TPOT of one request, vLLM's way: (e2e − TTFT) / (output tokens − 1), only with more than one token. */
export function tpotOf(r: RequestRecord): number | undefined {
  if (r.outputTokens > 1 && r.ttftMs !== undefined && r.e2eMs !== undefined) {
    return (r.e2eMs - r.ttftMs) / (r.outputTokens - 1);
  }
  return undefined;
}

/** The gaps between consecutive content chunks of one request (its ITLs), ms. */
export function itlsOf(r: RequestRecord): number[] {
  const t = r.chunkTimesMs;
  const out: number[] = [];
  for (let i = 1; i < t.length; i++) out.push(t[i]! - t[i - 1]!);
  return out;
}

/** Whether a successful request meets every per-request SLO that vLLM's goodput judges (ttft, tpot, e2e). */
export function meetsSlo(r: RequestRecord, slo: SloSpec): boolean {
  if (slo.ttftMs !== undefined && !(r.ttftMs !== undefined && r.ttftMs <= slo.ttftMs)) return false;
  // vLLM: "if output_len <= 1, we regard tpot as 0 for goodput"
  if (slo.tpotMs !== undefined && !((tpotOf(r) ?? 0) <= slo.tpotMs)) return false;
  if (slo.e2eMs !== undefined && !(r.e2eMs !== undefined && r.e2eMs <= slo.e2eMs)) return false;
  return true;
}

function hasGoodputSlo(slo: SloSpec | undefined): slo is SloSpec {
  return slo !== undefined && (slo.ttftMs !== undefined || slo.tpotMs !== undefined || slo.e2eMs !== undefined);
}

function endOf(r: RequestRecord): number {
  const last = r.chunkTimesMs.length > 0 ? r.chunkTimesMs[r.chunkTimesMs.length - 1]! : 0;
  return r.sentAt + Math.max(r.e2eMs ?? 0, last, r.headersMs ?? 0, r.firstChunkMs ?? 0);
}

export interface SummarizeOptions {
  /**
   * Wall time of the measured phase, s, as the runner clocked it (vLLM's dur_s). Without it, first
   * measured send to last measured end.
   */
  readonly durationS?: number;
}

/**
 * The run's summary over its measured (non-warmup) requests. Latencies are over successful requests
 * only, token counts over successful requests only (as vLLM counts a failed request's output as 0).
 */
export function summarize(requests: readonly RequestRecord[], workload: WorkloadSpec, options: SummarizeOptions = {}): Summary {
  const pcts = workload.percentiles;
  const measured = requests.filter((r) => !r.warmup);
  const ok = measured.filter((r) => r.error === undefined);

  const errorsByKind: Partial<Record<ErrorKind, number>> = {};
  for (const r of measured) if (r.error) errorsByKind[r.error.kind] = (errorsByKind[r.error.kind] ?? 0) + 1;

  const ttfts: number[] = [];
  const ttfos: number[] = [];
  const tpots: number[] = [];
  const itls: number[] = [];
  const e2es: number[] = [];
  let totalInputTokens = 0;
  let totalOutputTokens = 0;
  let reasoning = false;
  let usage = 0;
  for (const r of ok) {
    if (r.ttftMs !== undefined) ttfts.push(r.ttftMs);
    if (r.ttfoMs !== undefined) ttfos.push(r.ttfoMs);
    if ((r.reasoningTokens ?? 0) > 0 || (r.ttfoMs !== undefined && r.ttftMs !== undefined && r.ttfoMs !== r.ttftMs)) reasoning = true;
    const tpot = tpotOf(r);
    if (tpot !== undefined) tpots.push(tpot);
    for (const gap of itlsOf(r)) itls.push(gap);
    if (r.e2eMs !== undefined) e2es.push(r.e2eMs);
    totalInputTokens += r.promptTokens ?? 0;
    totalOutputTokens += r.outputTokens;
    if (r.tokenSource === 'usage') usage++;
  }

  let malformedEvents = 0;
  let multiTokenChunks = 0;
  for (const r of measured) {
    malformedEvents += r.malformedEvents ?? 0;
    multiTokenChunks += r.multiTokenChunks ?? 0;
  }

  let durationS = options.durationS;
  if (durationS === undefined) {
    if (measured.length === 0) durationS = 0;
    else {
      let start = Infinity;
      let end = -Infinity;
      for (const r of measured) {
        start = Math.min(start, r.sentAt);
        end = Math.max(end, endOf(r));
      }
      durationS = Math.max(0, (end - start) / 1000);
    }
  }
  const per = (x: number) => (durationS! > 0 ? x / durationS! : 0);

  const slo = workload.slo;
  let goodput: number | undefined;
  let sloMissed: (keyof SloSpec)[] | undefined;
  if (hasGoodputSlo(slo)) goodput = per(ok.filter((r) => meetsSlo(r, slo)).length);
  if (slo) {
    sloMissed = [];
    const judge = (key: keyof SloSpec, sample: readonly number[]) => {
      const limit = slo[key];
      if (limit === undefined) return;
      if (sample.length === 0) {
        // No evidence is not a pass when nothing succeeded; a metric that simply cannot exist
        // (ITL of one-token replies) is not held against the run.
        if (ok.length === 0) sloMissed!.push(key);
        return;
      }
      if (percentile([...sample].sort((a, b) => a - b), SLO_PERCENTILE) > limit) sloMissed!.push(key);
    };
    judge('ttftMs', ttfts);
    judge('tpotMs', tpots);
    judge('itlMs', itls);
    judge('e2eMs', e2es);
  }

  const tokenSource = usage === 0 ? 'chunks' : usage === ok.length ? 'usage' : 'mixed';

  const summary: Summary = {
    completed: ok.length,
    failed: measured.length - ok.length,
    errorsByKind,
    durationS,
    totalInputTokens,
    totalOutputTokens,
    requestsPerSecond: per(ok.length),
    outputTokensPerSecond: per(totalOutputTokens),
    totalTokensPerSecond: per(totalInputTokens + totalOutputTokens),
    ttftMs: stats(ttfts, pcts),
    ...(reasoning ? { ttfoMs: stats(ttfos, pcts) } : {}),
    tpotMs: stats(tpots, pcts),
    itlMs: stats(itls, pcts),
    e2eMs: stats(e2es, pcts),
    ...(goodput !== undefined ? { goodput } : {}),
    ...(sloMissed !== undefined ? { sloMissed } : {}),
    stalls: summarizeStalls(ok, workload.stallFactor, workload.stallFloorMs),
    malformedEvents,
    tokenSource,
    multiTokenChunks,
  };
  return summary;
}
