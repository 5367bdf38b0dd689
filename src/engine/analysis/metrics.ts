// The statistics every surface shows. Definitions follow vLLM's `bench serve` (calculate_metrics in
// vllm/benchmarks/serve.py) so that numbers can be compared with it; see README "Metrics".
import type { ErrorKind, RequestRecord, RetryReason, SloSpec, Summary, WorkloadSpec } from '../core/types';
import { analyzeTiming } from './attribution';
import type { TimingAnalysis } from './attribution';
import { summarizeServer, ttftTail } from './phases';
import { summarizePrefixCache } from './prefixCache';
import { summarizeSchedule } from './schedule';
import { summarizeStalls } from './stalls';
import { summarizeTurns } from './turns';
import { summarizeToolCalls } from './toolCalls';
import { verdictsOf } from './verdicts';
import { gapsOf, percentile, stats } from '../core/stats';

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
  /** The stall attribution and buffering verdict over these requests, when already made (runAssembly). */
  readonly analysis?: TimingAnalysis;
  /** Requests outside `requests` that the analysis may blame (the prefill dial's long prompts): their prompt sizes name them. */
  readonly culprits?: readonly RequestRecord[];
}

/** The per-request samples and totals of the successful measured requests. */
interface Samples {
  readonly ttfts: number[];
  readonly ttfos: number[];
  readonly tpots: number[];
  readonly itls: number[];
  readonly e2es: number[];
  totalInputTokens: number;
  totalOutputTokens: number;
  /** Some request streamed reasoning (TTFO is then reported). */
  reasoning: boolean;
  /** Requests whose token count came from the server's usage. */
  usage: number;
}

function samplesOf(ok: readonly RequestRecord[]): Samples {
  const s: Samples = { ttfts: [], ttfos: [], tpots: [], itls: [], e2es: [], totalInputTokens: 0, totalOutputTokens: 0, reasoning: false, usage: 0 };
  for (const r of ok) {
    if (r.ttftMs !== undefined) s.ttfts.push(r.ttftMs);
    if (r.ttfoMs !== undefined) s.ttfos.push(r.ttfoMs);
    if ((r.reasoningTokens ?? 0) > 0 || (r.ttfoMs !== undefined && r.ttftMs !== undefined && r.ttfoMs !== r.ttftMs)) s.reasoning = true;
    const tpot = tpotOf(r);
    if (tpot !== undefined) s.tpots.push(tpot);
    for (const gap of gapsOf(r.chunkTimesMs)) s.itls.push(gap);
    if (r.e2eMs !== undefined) s.e2es.push(r.e2eMs);
    s.totalInputTokens += r.promptTokens ?? 0;
    s.totalOutputTokens += r.outputTokens;
    if (r.tokenSource === 'usage') s.usage++;
  }
  return s;
}

/** First measured send to last measured end (its last byte), s: the duration when the runner clocked none. */
function spanSeconds(measured: readonly RequestRecord[]): number {
  if (measured.length === 0) return 0;
  let start = Infinity;
  let end = -Infinity;
  for (const r of measured) {
    start = Math.min(start, r.sentAt);
    end = Math.max(end, endOf(r));
  }
  return Math.max(0, (end - start) / 1000);
}

/** The SLO keys whose p99 misses, as `sloMissed`. */
function missedSlos(slo: SloSpec, s: Samples, succeeded: number): (keyof SloSpec)[] {
  const missed: (keyof SloSpec)[] = [];
  const judge = (key: keyof SloSpec, sample: readonly number[]) => {
    const limit = slo[key];
    if (limit === undefined) return;
    if (sample.length === 0) {
      // No evidence is not a pass when nothing succeeded; a metric that simply cannot exist
      // (ITL of one-token replies) is not held against the run.
      if (succeeded === 0) missed.push(key);
      return;
    }
    if (percentile([...sample].sort((a, b) => a - b), SLO_PERCENTILE) > limit) missed.push(key);
  };
  judge('ttftMs', s.ttfts);
  judge('tpotMs', s.tpots);
  judge('itlMs', s.itls);
  judge('e2eMs', s.e2es);
  return missed;
}

/**
 * A request stopped before its end by whoever ran the benchmark (error kind `aborted`): the user's
 * Cancel in a run of ours; in an imported run, the tool's own stop (GuideLLM's incomplete requests,
 * AIPerf's deliberate cancellations). Neither a success nor a failure; src/present/outcomeText.ts
 * says which stop it was.
 */
export function cancelledByUser(r: Pick<RequestRecord, 'error'>): boolean {
  return r.error?.kind === 'aborted';
}

/** The failures of the measured requests by kind and HTTP status, the attempts sent again, and the stream oddities counted. */
function failuresOf(measured: readonly RequestRecord[]): Pick<Summary, 'errorsByKind' | 'errorsByStatus' | 'retries' | 'malformedEvents' | 'multiTokenChunks'> {
  const errorsByKind: Partial<Record<ErrorKind, number>> = {};
  const errorsByStatus: Record<string, number> = {};
  const retries: Partial<Record<RetryReason, number>> = {};
  let statuses = 0;
  let retried = 0;
  let malformedEvents = 0;
  let multiTokenChunks = 0;
  for (const r of measured) {
    // a request the user's Cancel stopped is not a failure of the endpoint: counted apart (Summary.cancelled)
    if (r.error && !cancelledByUser(r)) errorsByKind[r.error.kind] = (errorsByKind[r.error.kind] ?? 0) + 1;
    if (r.error?.kind === 'http' && r.error.status !== undefined) {
      const key = String(r.error.status);
      errorsByStatus[key] = (errorsByStatus[key] ?? 0) + 1;
      statuses++;
    }
    for (const t of r.retries ?? []) {
      retries[t.reason] = (retries[t.reason] ?? 0) + 1;
      retried++;
    }
    malformedEvents += r.malformedEvents ?? 0;
    multiTokenChunks += r.multiTokenChunks ?? 0;
  }
  return { errorsByKind, ...(statuses > 0 ? { errorsByStatus } : {}), ...(retried > 0 ? { retries } : {}), malformedEvents, multiTokenChunks };
}

/** For each prefill stall of the successful requests, its largest culprit's prompt: "all from prefills of prompts ≥ N tokens". */
function culpritPromptTokensOf(ok: readonly RequestRecord[], analysis: TimingAnalysis, byIndex: ReadonlyMap<number, RequestRecord>): number[] {
  const out: number[] = [];
  for (const r of ok) {
    for (const st of analysis.stalls.get(r.index) ?? []) {
      let largest: number | undefined;
      for (const c of st.culprits) {
        const p = byIndex.get(c)?.promptTokens;
        if (p !== undefined && (largest === undefined || p > largest)) largest = p;
      }
      if (largest !== undefined) out.push(largest);
    }
  }
  return out;
}

/** Where the time went: the stalls with their causes, the buffering verdict, the server's own timings, the prefix cache, and the verdicts over them. */
function explained(requests: readonly RequestRecord[], ok: readonly RequestRecord[], workload: WorkloadSpec, ttftMs: Summary['ttftMs'], options: SummarizeOptions):
  Pick<Summary, 'stalls' | 'buffering' | 'server' | 'prefixCache' | 'byTurn' | 'schedule' | 'verdicts'> {
  const pcts = workload.percentiles;
  const analysis = options.analysis ?? analyzeTiming(requests, workload);
  // the requests a stall may blame, by index: the run's, and those outside it (the prefill dial's long prompts)
  const byIndex = new Map<number, RequestRecord>();
  for (const r of options.culprits ?? []) byIndex.set(r.index, r);
  for (const r of requests) byIndex.set(r.index, r);
  const stalls = summarizeStalls(ok, workload.stallFactor, workload.stallFloorMs, { attributed: analysis.stalls, found: analysis.found, promptTokens: (i) => byIndex.get(i)?.promptTokens });
  const buffering = analysis.buffering.verdict;
  const server = summarizeServer(ok, pcts);
  const prefixCache = summarizePrefixCache(ok, workload.prefixCache ?? 'warm', pcts);
  const byTurn = summarizeTurns(ok, pcts);
  const schedule = summarizeSchedule(requests.filter((r) => !r.warmup), workload.mode, pcts);
  // the verdicts split the TTFT tail only where the server said its part (verdicts.ts)
  const tail = server ? ttftTail(ok, ttftMs.p99) : undefined;
  const verdicts = verdictsOf({
    mode: workload.mode,
    completed: ok.length,
    ttftMs,
    stalls,
    culpritPromptTokens: culpritPromptTokensOf(ok, analysis, byIndex),
    buffering,
    ...(server ? { server } : {}),
    ...(prefixCache ? { prefixCache } : {}),
    ...(byTurn ? { byTurn } : {}),
    ...(schedule ? { schedule } : {}),
    ...(tail ? { tail } : {}),
  });
  return { stalls, buffering, ...(server ? { server } : {}), ...(prefixCache ? { prefixCache } : {}), ...(byTurn ? { byTurn } : {}), ...(schedule ? { schedule } : {}), ...(verdicts.length > 0 ? { verdicts } : {}) };
}

/**
 * The run's summary over its measured (non-warmup) requests. Latencies are over successful requests
 * only, token counts over successful requests only (as vLLM counts a failed request's output as 0).
 * Requests the user's Cancel stopped are `cancelled`, neither completed nor failed.
 */
export function summarize(requests: readonly RequestRecord[], workload: WorkloadSpec, options: SummarizeOptions = {}): Summary {
  const pcts = workload.percentiles;
  const measured = requests.filter((r) => !r.warmup);
  const ok = measured.filter((r) => r.error === undefined);
  const cancelled = measured.filter(cancelledByUser).length;
  const { errorsByKind, errorsByStatus, retries, malformedEvents, multiTokenChunks } = failuresOf(measured);
  const s = samplesOf(ok);
  const durationS = options.durationS ?? spanSeconds(measured);
  const per = (x: number) => (durationS > 0 ? x / durationS : 0);
  const slo = workload.slo;
  const goodput = hasGoodputSlo(slo) ? per(ok.filter((r) => meetsSlo(r, slo)).length) : undefined;
  const sloMissed = slo ? missedSlos(slo, s, ok.length) : undefined;
  const ttftMs = stats(s.ttfts, pcts);
  const { stalls, buffering, server, prefixCache, byTurn, schedule, verdicts } = explained(requests, ok, workload, ttftMs, options);
  const toolCalls = summarizeToolCalls(ok, pcts);
  return {
    completed: ok.length,
    failed: measured.length - ok.length - cancelled,
    ...(cancelled > 0 ? { cancelled } : {}),
    errorsByKind,
    ...(errorsByStatus ? { errorsByStatus } : {}),
    ...(retries ? { retries } : {}),
    durationS,
    totalInputTokens: s.totalInputTokens,
    totalOutputTokens: s.totalOutputTokens,
    requestsPerSecond: per(ok.length),
    outputTokensPerSecond: per(s.totalOutputTokens),
    totalTokensPerSecond: per(s.totalInputTokens + s.totalOutputTokens),
    ttftMs,
    ...(s.reasoning ? { ttfoMs: stats(s.ttfos, pcts) } : {}),
    tpotMs: stats(s.tpots, pcts),
    itlMs: stats(s.itls, pcts),
    e2eMs: stats(s.e2es, pcts),
    ...(goodput !== undefined ? { goodput } : {}),
    ...(sloMissed !== undefined ? { sloMissed } : {}),
    stalls,
    malformedEvents,
    tokenSource: s.usage === 0 ? 'chunks' : s.usage === ok.length ? 'usage' : 'mixed',
    multiTokenChunks,
    buffering,
    ...(server ? { server } : {}),
    ...(prefixCache ? { prefixCache } : {}),
    ...(byTurn ? { byTurn } : {}),
    ...(schedule ? { schedule } : {}),
    ...(verdicts ? { verdicts } : {}),
    ...(toolCalls ? { toolCalls } : {}),
  };
}
