// What every importer shares: the error it throws, and the one builder that turns another tool's
// requests into a run file, so an imported run is summarised, judged and swept by the same code as
// a measured one (metrics.ts, attribution.ts, fit.ts). Importers only map fields: they never compute
// a statistic of their own.
import { analyzeTiming, annotateRequests } from '../../analysis/attribution';
import { isObject, str as jsonStr } from '../../core/json';
import { analyzeSweep, meanDecodingBatch, meanPromptTokens } from '../../analysis/fit';
import { summarize, tpotOf } from '../../analysis/metrics';
import { redactEndpoint } from '../../core/redact';
import { newRunId } from '../../core/runId';
import { RUN_FORMAT, RUN_VERSION, TOOL_NAME, TOOL_VERSION } from '../../core/runFormat';
import { runFileProblem } from '../../core/runSchema';
import type { EndpointSpec, ImportedFrom, RequestRecord, RunFile, SloSpec, Summary, SweepPoint, WorkloadSpec } from '../../core/types';

// ---- Readers of another tool's parsed file (untrusted JSON or YAML) ----

/** A parsed object of another tool's file. */
export type Obj = Readonly<Record<string, unknown>>;
export const isObj = (x: unknown): x is Obj => isObject(x);
/** The object, or an empty one. */
export const obj = (x: unknown): Obj => (isObj(x) ? x : {});
export const list = (x: unknown): readonly unknown[] => (Array.isArray(x) ? x : []);
/** A non-empty string, else undefined (a tool's "" means "not given"). */
export const str = (x: unknown): string | undefined => jsonStr(x) || undefined;

/** A file that cannot be imported: the message names the file and what is wrong with it. Nothing is written. */
/** What every importer is given. */
export interface ImportOptions {
  /** Percentiles for the summary (default 50, 90, 95, 99). */
  readonly percentiles?: readonly number[];
}

export class ImportError extends Error {
  constructor(
    readonly file: string,
    problem: string,
  ) {
    super(`${file}: ${problem}`);
    this.name = 'ImportError';
  }
}

// ---- The range of every number read (a figure no run can have is refused, naming its field) ----

/** The longest duration read, 1 year in seconds: longer is no benchmark (and 1e308 s is no date). */
export const YEAR_S = 365 * 24 * 3600;
/** The last second of the year 9999: a later time is no run's, and cannot be written as a date. */
const LAST_EPOCH_S = 253_402_300_799;

/** What a number of another tool's file may be. */
export interface Range {
  readonly min: number;
  readonly max: number;
  readonly integer?: boolean;
  /** 0 is allowed too, below `min` (a run's duration: nothing divided by it then). */
  readonly orZero?: boolean;
  /** Its words in the refusal: "expected …". */
  readonly what: string;
}

export const RANGE = {
  seconds: { min: 0, max: YEAR_S, what: 'a duration from 0 to a year (31536000 s)' },
  /** A run's duration, which rates are divided by: 5e-324 s would make them infinite. */
  runSeconds: { min: 1e-6, max: YEAR_S, orZero: true, what: 'a duration of 0, or from 0.000001 s to a year (31536000 s)' },
  ms: { min: 0, max: YEAR_S * 1000, what: 'a duration from 0 to a year (31536000000 ms)' },
  epochS: { min: 0, max: LAST_EPOCH_S, what: 'a time in seconds since 1970, before the year 10000' },
  epochNs: { min: 0, max: LAST_EPOCH_S * 1e9, what: 'a time in nanoseconds since 1970, before the year 10000' },
  /** A monotonic clock's reading (Python's time.perf_counter()), whose zero is anywhere. */
  clockS: { min: -1e12, max: 1e12, what: 'a clock reading in seconds (within ±1e12)' },
  count: { min: 0, max: 1e9, integer: true, what: 'a whole number from 0 to 1000000000' },
  /** An average of counts (a mean output length). */
  meanCount: { min: 0, max: 1e9, what: 'a number from 0 to 1000000000' },
  concurrency: { min: 1, max: 1e7, integer: true, what: 'a whole number from 1 to 10000000' },
  rate: { min: 1e-6, max: 1e9, what: 'a rate from 0.000001 to 1000000000 requests per second' },
  measuredRate: { min: 0, max: 1e9, what: 'a rate from 0 to 1000000000 requests per second' },
  burstiness: { min: 1e-6, max: 1e6, what: 'a burstiness from 0.000001 to 1000000' },
} as const satisfies Record<string, Range>;

/** A number of the file outside its range. Thrown by inRange; `withFields` makes it the importer's ImportError. */
export class FieldError extends Error {
  override readonly name = 'FieldError';
}

/** The field's name, built only when it is needed (a 300 000-request file names none). */
export type Field = string | (() => string);

/** A number as the refusal shows it: as written in JSON (1e+308), NaN and ±Infinity (YAML's .nan, .inf) by name. */
function shown(x: number): string {
  return Number.isFinite(x) ? JSON.stringify(x) : String(x);
}

/** Whether x (a number) is in `range`: the fast test of a loop over millions of values, before any name is made. */
export function within(x: number, range: Range): boolean {
  if (x === 0 && range.orZero) return true;
  return Number.isFinite(x) && x >= range.min && x <= range.max && (!range.integer || Number.isInteger(x));
}

/** The refusal of `value` at `field`, in the file's own unit when it has one. */
export function outOfRange(field: string, value: number, range: Range, unit = ''): FieldError {
  return new FieldError(`"${field}" is ${shown(value)}${unit ? ` ${unit}` : ''}: expected ${range.what}`);
}

/**
 * The number `value` when it is one in `range`; undefined when it is not a number at all (absent,
 * null, a string: the tools write those for "not measured"); a FieldError naming `field` otherwise.
 * `scale` turns it into the unit of `range` (AIPerf's ns into ms), `unit` names the file's own.
 */
export function inRange(value: unknown, range: Range, field: Field, scale = 1, unit = ''): number | undefined {
  if (typeof value !== 'number') return undefined;
  const x = value * scale;
  if (within(x, range)) return x;
  throw outOfRange(typeof field === 'string' ? field : field(), value, range, unit);
}

/** `read()`, with a number out of its range refused as an ImportError of `file` (after `where`, e.g. "line 3: "). */
export function withFields<T>(file: string, read: () => T, where = ''): T {
  try {
    return read();
  } catch (e) {
    if (e instanceof FieldError) throw new ImportError(file, `${where}${e.message}`);
    throw e;
  }
}

/** The smallest and largest of many numbers (a spread, Math.min(...xs), overflows the stack past ~120 000). */
export function extent(xs: Iterable<number>): { min: number; max: number } {
  let min = Infinity;
  let max = -Infinity;
  for (const x of xs) {
    if (x < min) min = x;
    if (x > max) max = x;
  }
  return { min, max };
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
  if (p.points.length === 1 && p.dimension === undefined) return writable(run);
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
  return writable({ ...run, sweep: { dimension, points, ...analyzeSweep(dimension, points, p.slo), ...(p.slo ? { slo: p.slo } : {}) } });
}

/** The start of the refusal of a run that could not be written: the importers' range checks should leave none (the fuzzer holds them to it). */
export const UNWRITABLE = 'the result was read, but the run made of it would not be a valid run file';

/** A place in the run: made into a path ("run.requests[3].e2eMs") only for the one number that is not finite. */
interface Place {
  readonly value: object;
  readonly parent?: Place;
  readonly key: string | number;
}

function pathOf(place: Place | undefined, key: string | number): string {
  const parts: (string | number)[] = [key];
  for (let p = place; p?.parent !== undefined; p = p.parent) parts.unshift(p.key);
  return parts.reduce<string>((path, k) => (typeof k === 'number' ? `${path}[${k}]` : `${path}.${k}`), 'run');
}

/** Where a run holds a number JSON cannot write (NaN, ±Infinity: written as null, which the reader refuses); undefined when none. */
function nonFinitePath(run: RunFile): string | undefined {
  // no recursion (a list of 300 000 requests is one level); objects and lists are visited from a list of places
  const todo: Place[] = [{ value: run, key: 'run' }];
  for (let place = todo.pop(); place !== undefined; place = todo.pop()) {
    const v = place.value;
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        const x: unknown = v[i];
        if (typeof x === 'number') {
          if (!Number.isFinite(x)) return pathOf(place, i);
        } else if (typeof x === 'object' && x !== null) todo.push({ value: x, parent: place, key: i });
      }
      continue;
    }
    for (const k in v) {
      const x: unknown = (v as Record<string, unknown>)[k];
      if (typeof x === 'number') {
        if (!Number.isFinite(x)) return pathOf(place, k);
      } else if (typeof x === 'object' && x !== null) todo.push({ value: x, parent: place, key: k });
    }
  }
  return undefined;
}

/** The run, when it would be written and read back as it is: the last line of defence against a figure out of range. */
function writable(run: RunFile): RunFile {
  const file = run.importedFrom?.file ?? 'the file';
  const bad = nonFinitePath(run);
  if (bad !== undefined) throw new ImportError(file, `${UNWRITABLE}: ${bad} is not a finite number`);
  const problem = runFileProblem(run);
  if (problem) throw new ImportError(file, `${UNWRITABLE}: ${problem.kind === 'field' ? `${problem.path} (${problem.detail})` : problem.kind}`);
  return run;
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
