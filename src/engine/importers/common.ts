// What every importer shares: the error it throws, and the one builder that turns another tool's
// requests into a run file, so an imported run is summarised, judged and swept by the same code as
// a measured one (metrics.ts, attribution.ts, fit.ts). Importers only map fields: they never compute
// a statistic of their own.
import { analyzeTiming, annotateRequests } from '../attribution';
import { isObject, num, str as jsonStr } from '../json';
import { analyzeSweep, meanDecodingBatch, meanPromptTokens } from '../fit';
import { summarize, tpotOf } from '../metrics';
import { redactEndpoint } from '../redact';
import { newRunId } from '../runId';
import { RUN_FORMAT, RUN_VERSION, TOOL_NAME, TOOL_VERSION } from '../runFormat';
import type { EndpointSpec, ImportedFrom, RequestRecord, RunFile, SloSpec, Summary, SweepPoint, WorkloadSpec } from '../types';

// ---- Readers of another tool's parsed file (untrusted JSON or YAML) ----

/** A parsed object of another tool's file. */
export type Obj = Readonly<Record<string, unknown>>;
export const isObj = (x: unknown): x is Obj => isObject(x);
/** The object, or an empty one. */
export const obj = (x: unknown): Obj => (isObj(x) ? x : {});
export const list = (x: unknown): readonly unknown[] => (Array.isArray(x) ? x : []);
/** A non-empty string, else undefined (a tool's "" means "not given"). */
export const str = (x: unknown): string | undefined => jsonStr(x) || undefined;
export { num };

/** A file that cannot be imported: the message names the file and what is wrong with it. Nothing is written. */
export class ImportError extends Error {
  constructor(
    readonly file: string,
    problem: string,
  ) {
    super(`${file}: ${problem}`);
    this.name = 'ImportError';
  }
}

/** One run of the other tool (a GuideLLM benchmark, a vLLM result): its requests and how they were sent. */
export interface ImportedPoint {
  /** The requests, in the order they were sent; `index` is given by the builder. */
  readonly requests: readonly Omit<RequestRecord, 'index'>[];
  /** How the tool sent them, as far as its file says (concurrency or rate, max tokens…). */
  readonly workload: WorkloadSpec;
  /** The tool's own measured duration, s (vLLM duration, GuideLLM's benchmark duration); else first send to last end. */
  readonly durationS?: number;
  /** A sweep point's value on the sweep's dimension. */
  readonly value?: number;
  /** A label of the tool's own when it has one ("synchronous", "constant@4.00"); else made from the value. */
  readonly label?: string;
  /** The figures the tool reported for this point, under its own names. */
  readonly reported?: Readonly<Record<string, number>>;
}

export interface ImportedRunParts {
  readonly from: ImportedFrom;
  /** ISO time the tool's run started (from the file; else the earliest request's start). */
  readonly startedAt: string;
  readonly endedAt?: string;
  /** The endpoint as the file names it (url "" when it does not; api "openai-chat" or "openai-completions" as the tool's backend says). */
  readonly endpoint: EndpointSpec;
  /** One point: a plain run. Several: a sweep over `dimension`, one point each. */
  readonly points: readonly ImportedPoint[];
  readonly dimension?: 'concurrency' | 'rate' | 'promptTokens';
  readonly slo?: SloSpec;
}

/** A point's label from its value, as sweep.ts labels a measured sweep's points (not imported from there: it pulls in the runner). */
function pointLabel(dimension: 'concurrency' | 'rate' | 'promptTokens', value: number): string {
  return dimension === 'concurrency' ? `c=${value}` : dimension === 'rate' ? `${value}/s` : `${value} tok`;
}

/** Requests indexed in order over all points, with their stalls judged over all of them. */
function judged(points: readonly ImportedPoint[], workload: WorkloadSpec, from: ImportedFrom) {
  const records: RequestRecord[] = [];
  for (const p of points) {
    for (const r of p.requests) {
      // a request's TPOT as a measured run's client stores it (meanDecodingBatch reads it)
      const tpotMs = r.tpotMs ?? tpotOf(r as RequestRecord);
      records.push({ ...r, index: records.length, ...(tpotMs !== undefined ? { tpotMs } : {}) } as RequestRecord);
    }
  }
  // without start times, requests cannot be lined up across each other: no culprits are named
  const analysis = from.startTimes === 'none' ? undefined : analyzeTiming(records, workload);
  const requests = analysis ? annotateRequests(records, analysis) : records;
  return { requests, analysis };
}

function durationOf(records: readonly RequestRecord[]): number {
  let start = Infinity;
  let end = -Infinity;
  for (const r of records) {
    if (r.warmup) continue;
    start = Math.min(start, r.sentAt);
    end = Math.max(end, r.sentAt + (r.e2eMs ?? 0));
  }
  return end > start ? (end - start) / 1000 : 0;
}

/** The run file of an imported result: summary, stalls, sweep fit and verdicts computed here, as for a measured run. */
export function importedRun(p: ImportedRunParts): RunFile {
  if (p.points.length === 0) throw new Error('an imported run needs at least one point');
  const first = p.points[0]!;
  const { requests, analysis } = judged(p.points, first.workload, p.from);
  const totalS = p.points.reduce((t, pt, i) => t + (pt.durationS ?? durationOf(slice(requests, p.points, i))), 0);
  const summary: Summary = summarize(requests, first.workload, { durationS: totalS, ...(analysis ? { analysis } : {}) });
  const run: RunFile = {
    format: RUN_FORMAT,
    version: RUN_VERSION,
    id: newRunId(new Date(Date.parse(p.startedAt) || Date.now())),
    startedAt: p.startedAt,
    ...(p.endedAt !== undefined ? { endedAt: p.endedAt } : {}),
    tool: { name: TOOL_NAME, version: TOOL_VERSION },
    endpoint: redactEndpoint(p.endpoint),
    workload: first.workload,
    requests,
    summary,
    importedFrom: p.from,
  };
  if (p.points.length === 1 && p.dimension === undefined) return run;
  const dimension = p.dimension ?? 'concurrency';
  const points: SweepPoint[] = p.points.map((pt, i) => {
    const records = slice(requests, p.points, i);
    const durationS = pt.durationS ?? durationOf(records);
    const meanBatch = dimension === 'promptTokens' || p.from.startTimes === 'none' ? undefined : decodingBatch(records);
    const measuredPrompt = meanPromptTokens(records);
    const value = pt.value;
    return {
      label: pt.label ?? (value !== undefined ? pointLabel(dimension, value) : `#${i + 1}`),
      ...(dimension === 'concurrency' && value !== undefined ? { concurrency: value } : {}),
      ...(dimension === 'rate' && value !== undefined ? { rate: value } : {}),
      ...(dimension === 'promptTokens' && value !== undefined ? { promptTokens: value } : {}),
      summary: summarize(records, pt.workload, { durationS, ...(analysis ? { analysis } : {}) }),
      requestIndexes: records.map((r) => r.index),
      ...(meanBatch !== undefined ? { meanBatch } : {}),
      ...(measuredPrompt !== undefined ? { measuredPromptTokens: measuredPrompt } : {}),
      ...(pt.reported ? { reported: pt.reported } : {}),
    };
  });
  return { ...run, sweep: { dimension, points, ...analyzeSweep(dimension, points, p.slo), ...(p.slo ? { slo: p.slo } : {}) } };
}

/**
 * The mean decoding batch of a point. A source that keeps only each request's first and last token
 * (GuideLLM) has no step times: its steps are spread evenly between the two, as that tool itself
 * spreads them (np.linspace over its iterations), for this figure only; nothing of it is stored.
 */
function decodingBatch(records: readonly RequestRecord[]): number | undefined {
  const measured = meanDecodingBatch(records);
  if (measured !== undefined || records.some((r) => r.chunkTimesMs.length > 0)) return measured;
  const spread = records.map((r) => {
    if (r.ttftMs === undefined || r.e2eMs === undefined || r.outputTokens < 2) return r;
    const steps = Math.min(r.outputTokens, 256);
    const first = r.ttftMs;
    const gap = (r.e2eMs - first) / (steps - 1);
    return { ...r, chunkTimesMs: Array.from({ length: steps }, (_, j) => first + j * gap) };
  });
  return meanDecodingBatch(spread);
}

/** The records of point i (they are contiguous, in point order). */
function slice(requests: readonly RequestRecord[], points: readonly ImportedPoint[], i: number): RequestRecord[] {
  let from = 0;
  for (let k = 0; k < i; k++) from += points[k]!.requests.length;
  return requests.slice(from, from + points[i]!.requests.length);
}
