// The statistics every surface shows. Definitions follow vLLM's `bench serve` (calculate_metrics in
// vllm/benchmarks/serve.py) so that numbers can be compared with it; see README "Metrics".
import type { ErrorKind, RequestRecord, SloSpec, Summary, WorkloadSpec } from './types';
import { summarizeStalls } from './stalls';
import { gapsOf, percentile, stats } from './stats';

/** The percentile an SLO is judged at for `sloMissed`. */
export const SLO_PERCENTILE = 99;

/** TPOT of one request, vLLM's way: (e2e − TTFT) / (output tokens − 1), only with more than one token. */
export function tpotOf(r: RequestRecord): number | undefined {
  if (r.outputTokens > 1 && r.ttftMs !== undefined && r.e2eMs !== undefined) {
    return (r.e2eMs - r.ttftMs) / (r.outputTokens - 1);
  }
  return undefined;
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

/** When a request stopped occupying the endpoint: its last byte when known (after the last token). */
function endOf(r: RequestRecord): number {
  const last = r.chunkTimesMs.length > 0 ? r.chunkTimesMs[r.chunkTimesMs.length - 1]! : 0;
  return r.sentAt + Math.max(r.lastByteMs ?? 0, r.e2eMs ?? 0, last, r.headersMs ?? 0, r.firstChunkMs ?? 0);
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
    for (const gap of gapsOf(r.chunkTimesMs)) itls.push(gap);
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
