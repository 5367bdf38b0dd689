// Sweeps (one workload at several concurrencies, rates or prompt lengths) and the chunked-prefill
// dial (one mixed workload at several prefill chunk sizes), each stored as ONE run file whose
// `requests` hold every point's requests, re-indexed in order.
import { analyzeSweep, meanDecodingBatch, meanPromptTokens, saturationReason } from '../analysis/fit';
import { analyzeTiming, annotateRequests } from '../analysis/attribution';
import { summarize } from '../analysis/metrics';
import { newRunId } from '../core/runId';
import { RUN_FORMAT, RUN_VERSION } from '../core/runFormat';
import { runWorkload } from './runner';
import { SizingCache } from './sizing';
import { PromptRecords } from '../core/sentWith';
import type { RunOptions } from './plan';
import type {
  EndpointSpec,
  NetworkSpec,
  PrefillDial,
  PrefillDialConfig,
  Progress,
  Prompt,
  RequestRecord,
  RunFile,
  Summary,
  SweepPoint,
  WorkloadSpec,
} from '../core/types';

export type SweepDimension = 'concurrency' | 'rate' | 'promptTokens';

export interface SweepSpec {
  readonly dimension: SweepDimension;
  /** The values swept, in the order run (e.g. 1, 2, 4, 8). */
  readonly values: readonly number[];
  /**
   * The workload of every point; per point the swept field is replaced (the closed-loop concurrency,
   * the open-loop rate, or the synthetic prompt length at concurrency 1). `requests` (or `durationS`)
   * is per point; `slo` feeds each point's goodput and the operating point.
   */
  readonly workload: WorkloadSpec;
  /** Stop after a point that shows saturation (fit.ts `saturationReason`). Default true. */
  readonly stopOnSaturation?: boolean;
}

export interface SweepOptions {
  readonly apiKey?: string;
  readonly network?: NetworkSpec;
  readonly signal?: AbortSignal;
  /** Progress over the whole sweep: `done`/`failed`/`total` count every point's requests. */
  onProgress?(p: Progress): void;
  /** Each finished request, with its index in the sweep's run file. */
  onRecord?(r: RequestRecord): void;
  /** Each finished point (its requestIndexes already point into the final run file). */
  onPoint?(point: SweepPoint, index: number): void;
  readonly prompts?: readonly Prompt[];
  readonly runId?: string;
  /** Recorded in the run file when the API kind was detected (`--api auto`). */
  readonly detectedApi?: boolean;
  /** A passing state worth a line (RunOptions.onStatus: sizing the prompts). */
  onStatus?(message: string): void;
}

/** 1, 2, 4, … up to and including `limit` (and `limit` itself when it is not a power of two). */
export function defaultConcurrencies(limit = 32): number[] {
  const out: number[] = [];
  for (let c = 1; c < limit; c *= 2) out.push(c);
  out.push(Math.max(1, Math.floor(limit)));
  return out;
}

export function pointLabel(dimension: SweepDimension, value: number): string {
  return dimension === 'concurrency' ? `c=${value}` : dimension === 'rate' ? `${value}/s` : `${value} tok`;
}

/** The workload of one point of a sweep. */
function pointWorkload(dimension: SweepDimension, base: WorkloadSpec, value: number): WorkloadSpec {
  switch (dimension) {
    case 'concurrency':
      return { ...base, mode: { kind: 'closed', concurrency: value } };
    case 'rate': {
      const m = base.mode;
      return {
        ...base,
        mode: {
          kind: 'open',
          rate: value,
          burstiness: m.kind === 'open' ? m.burstiness : 1,
          ...(m.kind === 'open' && m.maxConcurrency !== undefined ? { maxConcurrency: m.maxConcurrency } : {}),
        },
      };
    }
    case 'promptTokens':
      return {
        ...base,
        mode: { kind: 'closed', concurrency: 1 },
        prompt: { kind: 'synthetic', tokens: value, sharedPrefix: base.prompt.kind === 'synthetic' ? base.prompt.sharedPrefix : false, ...(base.prompt.kind === 'synthetic' && base.prompt.sizing ? { sizing: base.prompt.sizing } : {}) },
      };
  }
}

/** Measured requests counted so far, as Progress counts them. */
interface Counts {
  readonly succeeded: number;
  readonly failed: number;
}

const NO_COUNTS: Counts = { succeeded: 0, failed: 0 };

function addCounts(...parts: readonly Counts[]): Counts {
  let succeeded = 0;
  let failed = 0;
  for (const c of parts) {
    succeeded += c.succeeded;
    failed += c.failed;
  }
  return { succeeded, failed };
}

/** A finished point's counts, from its summary. */
function countsOf(s: Summary): Counts {
  return { succeeded: s.completed, failed: s.failed };
}

/**
 * One run file made of several runs (a sweep's points, the dial's configurations), collected as they
 * finish: requests re-indexed, stall indexes remapped, the runs' prompt lists made one, their counts
 * added for the progress of the whole.
 */
class Collector {
  readonly id: string;
  readonly requests: RequestRecord[] = [];
  readonly prompts = new PromptRecords();
  /** Measured requests counted in the runs added so far (their summaries: `counts = addCounts(counts, …)`). */
  counts = NO_COUNTS;
  readonly #runs: RunFile[] = [];
  readonly #offsets: number[] = [];
  /** The next global index free: a run's local index k becomes (its first) + k, gaps kept, so live records and the file agree. */
  #next = 0;
  readonly #startedMs = performance.now();

  constructor(runId: string | undefined) {
    this.id = runId ?? newRunId();
  }

  /** The global index a point's local index will get, so live records and the file agree. */
  globalIndex(pointIndex: number, localIndex: number): number {
    return (this.#offsets[pointIndex] ?? this.#next) + localIndex;
  }

  begin(pointIndex: number): void {
    this.#offsets[pointIndex] = this.#next;
  }

  /** Adds a run's records; returns their global indexes and the run summary with stalls remapped. */
  add(run: RunFile): { indexes: number[]; summary: Summary; records: RequestRecord[] } {
    this.#runs.push(run);
    const sorted = [...run.requests].sort((a, b) => a.index - b.index);
    const promptRef = this.prompts.merge(run.prompts);
    const map = new Map<number, number>();
    const indexes: number[] = [];
    const records: RequestRecord[] = [];
    const base = this.#next;
    for (const r of sorted) {
      const g = base + r.index;
      this.#next = Math.max(this.#next, g + 1);
      map.set(r.index, g);
      // a point's repeatOf names an earlier request of the same point: mapped before this one (its index is lower)
      const rec = {
        ...r,
        index: g,
        ...(r.repeatOf !== undefined ? { repeatOf: map.get(r.repeatOf) ?? r.repeatOf } : {}),
        ...(r.promptRef !== undefined ? { promptRef: promptRef(r.promptRef) } : {}),
      };
      this.requests.push(rec);
      records.push(rec);
      indexes.push(g);
    }
    const s = run.summary;
    const summary: Summary = {
      ...s,
      stalls: {
        ...s.stalls,
        worst: s.stalls.worst.map((st) => ({
          ...st,
          requestIndex: map.get(st.requestIndex) ?? st.requestIndex,
          ...(st.culprits ? { culprits: st.culprits.map((c) => ({ ...c, index: map.get(c.index) ?? c.index })) } : {}),
        })),
      },
    };
    return { indexes, summary, records };
  }

  /** One run's progress, seen as the progress of the whole (`before`: what earlier runs counted). */
  progress(p: Progress, total: number | undefined, before: Counts): Progress {
    const c = addCounts(before, p);
    const { total: _pointTotal, ...rest } = p;
    return {
      ...rest,
      runId: this.id,
      succeeded: c.succeeded,
      failed: c.failed,
      finished: c.succeeded + c.failed,
      ...(total !== undefined ? { total } : {}),
      elapsedS: (performance.now() - this.#startedMs) / 1000,
    };
  }

  /** The fields the whole takes from its runs: its span, whether it was cancelled, the tool; and the first run. */
  head(signal: AbortSignal | undefined, noneMessage: string) {
    const runs = this.#runs;
    const first = runs[0];
    if (!first) throw new Error(noneMessage);
    const last = runs[runs.length - 1]!;
    const cancelled = runs.some((r) => r.cancelled) || signal?.aborted === true;
    const head = {
      format: RUN_FORMAT,
      version: RUN_VERSION,
      id: this.id,
      startedAt: first.startedAt,
      ...(last.endedAt !== undefined ? { endedAt: last.endedAt } : {}),
      ...(cancelled ? { cancelled: true } : {}),
      tool: first.tool,
    };
    return { head, first };
  }

  /**
   * Every request with its stalls judged over all of them (global indexes; culprits may be in another
   * run, as in the dial), and the summary over them, over the runs' measured time only: the gaps
   * between them (preflight, warming, warmup) are not load.
   */
  judged(workload: WorkloadSpec): { requests: RequestRecord[]; summary: Summary } {
    const durationS = this.#runs.reduce((t, r) => t + r.summary.durationS, 0);
    const analysis = analyzeTiming(this.requests, workload);
    const requests = annotateRequests(this.requests, analysis);
    return { requests, summary: summarize(requests, workload, { durationS, analysis }) };
  }
}

/** The options every point's runWorkload gets from the sweep's. */
function pointRunOptions(options: SweepOptions, onProgress: ((p: Progress) => void) | undefined, sizingCache: SizingCache): RunOptions {
  return {
    // synthetic prompts sized once per length: the later points start from what the earlier ones found
    sizingCache,
    ...(options.onStatus ? { onStatus: options.onStatus } : {}),
    ...(options.apiKey !== undefined ? { apiKey: options.apiKey } : {}),
    ...(options.network !== undefined ? { network: options.network } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.prompts ? { prompts: options.prompts } : {}),
    ...(options.detectedApi ? { detectedApi: true } : {}),
    ...(onProgress ? { onProgress } : {}),
  };
}

/** A finished point: its summary and requests (already in the sweep's file) and what the fits need. */
function sweepPoint(dimension: SweepDimension, value: number, added: { indexes: number[]; summary: Summary; records: RequestRecord[] }): SweepPoint {
  const meanBatch = dimension === 'promptTokens' ? undefined : meanDecodingBatch(added.records);
  const measuredPrompt = meanPromptTokens(added.records);
  return {
    label: pointLabel(dimension, value),
    ...(dimension === 'concurrency' ? { concurrency: value } : {}),
    ...(dimension === 'rate' ? { rate: value } : {}),
    ...(dimension === 'promptTokens' ? { concurrency: 1, promptTokens: value } : {}),
    summary: added.summary,
    requestIndexes: added.indexes,
    ...(meanBatch !== undefined ? { meanBatch } : {}),
    ...(measuredPrompt !== undefined ? { measuredPromptTokens: measuredPrompt } : {}),
  };
}

/**
 * Runs `spec.values` one after another through `runWorkload`, stopping early when a point shows the
 * endpoint saturated, and returns one run file with `sweep` holding the points, the TPOT(B) fit (or
 * the prefill fit), the knee, the operating point and the verdicts. A cancelled sweep keeps every
 * finished point (and the partial one) and is marked `cancelled`. An error starting the first point
 * (endpoint down, bad workload) is thrown; one at a later point ends the sweep there, keeping the rest.
 */
export async function runSweep(endpoint: EndpointSpec, spec: SweepSpec, options: SweepOptions = {}): Promise<RunFile> {
  if (spec.values.length === 0) throw new Error('a sweep needs at least one value');
  for (const v of spec.values) {
    if (!(Number.isFinite(v) && v > 0)) throw new Error(`bad ${spec.dimension} value ${v}: must be a positive number`);
  }
  const collector = new Collector(options.runId);
  const id = collector.id;
  const points: SweepPoint[] = [];
  let stoppedEarly: { afterLabel: string; reason: string; asked: number } | undefined;
  const perPoint = spec.workload.requests !== undefined ? spec.workload.requests : undefined;
  const total = perPoint !== undefined ? perPoint * spec.values.length : undefined;
  const report = options.onProgress;
  const onProgress = report ? (p: Progress) => report(collector.progress(p, total, collector.counts)) : undefined;
  const sizingCache = new SizingCache();

  for (let i = 0; i < spec.values.length; i++) {
    if (options.signal?.aborted) break;
    const value = spec.values[i]!;
    const label = pointLabel(spec.dimension, value);
    const workload = pointWorkload(spec.dimension, spec.workload, value);
    collector.begin(i);
    let run: RunFile;
    try {
      run = await runWorkload(endpoint, workload, {
        ...pointRunOptions(options, onProgress, sizingCache),
        ...(options.onRecord ? { onRecord: (r: RequestRecord) => options.onRecord!({ ...r, index: collector.globalIndex(i, r.index) }) } : {}),
        runId: `${id}#${i}`,
      });
    } catch (err) {
      if (i === 0) throw err;
      stoppedEarly = { afterLabel: points[points.length - 1]!.label, reason: `${label} could not run: ${err instanceof Error ? err.message : String(err)}`, asked: spec.values.length };
      break;
    }
    const point = sweepPoint(spec.dimension, value, collector.add(run));
    collector.counts = addCounts(collector.counts, countsOf(point.summary));
    points.push(point);
    options.onPoint?.(point, i);
    if (run.cancelled) break;
    if (spec.stopOnSaturation !== false && i + 1 < spec.values.length) {
      const why = saturationReason(spec.dimension, points[i - 1]?.summary, point.summary);
      if (why) {
        stoppedEarly = { afterLabel: label, reason: why, asked: spec.values.length };
        break;
      }
    }
  }

  const { head, first } = collector.head(options.signal, 'the sweep was cancelled before its first point finished');
  const { workload, sweep } = sweepSection(spec, points, stoppedEarly);
  return {
    ...head,
    endpoint: first.endpoint,
    workload,
    // one list for the sweep: every point sends the same prompts with the same settings
    ...(collector.prompts.list.length > 0 ? { prompts: collector.prompts.list } : {}),
    ...(first.connection ? { connection: first.connection } : {}),
    // pooled over every point (the sweep's view is in `sweep.points`)
    ...collector.judged(spec.workload),
    sweep,
  };
}

/**
 * What a sweep's run file records of its points, the same for a sweep that ended and one recovered
 * from its journal (recover.ts): the first point's workload (every point's differs from it only in the
 * swept field) and the sweep with its fit over the points.
 */
export function sweepSection(
  spec: Pick<SweepSpec, 'dimension' | 'values' | 'workload'>,
  points: readonly SweepPoint[],
  stoppedEarly?: NonNullable<RunFile['sweep']>['stoppedEarly'],
): { workload: WorkloadSpec; sweep: NonNullable<RunFile['sweep']> } {
  const slo = spec.workload.slo;
  return {
    workload: pointWorkload(spec.dimension, spec.workload, spec.values[0]!),
    sweep: {
      dimension: spec.dimension,
      points,
      ...analyzeSweep(spec.dimension, points, slo),
      ...(slo ? { slo } : {}),
      ...(stoppedEarly ? { stoppedEarly } : {}),
    },
  };
}

// ---- The chunked-prefill dial ----

/**
 * The dial as its run file records it (core/types.ts PrefillDial: the short decodes, the long prompts'
 * sizes and rate, each configuration's duration), with the chunk sizes to compare and the workload.
 */
export interface PrefillDialSpec extends Omit<PrefillDial, 'configs'> {
  /** Prefill chunk sizes to compare, tokens per step (at least two). */
  readonly batchSizes: readonly number[];
  /** The rest of the workload (timeouts, seed, SLO, stall factor and floor, percentiles). */
  readonly workload: WorkloadSpec;
}

/** A server the dial profiles: started once per chunk size, stopped after. */
export interface DialServer {
  readonly endpoint: EndpointSpec;
  stop(): Promise<void>;
}

export interface PrefillDialOptions {
  /** Starts the server with the given prefill chunk (the local server: startLocalServer({ batchSize })). */
  startServer(batchSize: number): Promise<DialServer>;
  readonly apiKey?: string;
  readonly signal?: AbortSignal;
  onProgress?(p: Progress): void;
  onConfig?(config: PrefillDialConfig, index: number): void;
  readonly runId?: string;
}

/** The two workloads of every dial configuration: the short decodes (closed loop) and the long prompts (open loop). */
function dialWorkloads(spec: PrefillDialSpec): { decodeWorkload: WorkloadSpec; longWorkload: WorkloadSpec } {
  // --duration, not a request count: the decodes and the long prompts must overlap for the whole run
  const { requests: _perRun, ...rest } = spec.workload;
  const decodeWorkload: WorkloadSpec = {
    ...rest,
    mode: { kind: 'closed', concurrency: spec.decodeStreams },
    durationS: spec.durationS,
    warmup: 0,
    maxTokens: spec.shortMaxTokens,
    prompt: { kind: 'synthetic', tokens: spec.shortPromptTokens, sharedPrefix: false },
  };
  const longWorkload: WorkloadSpec = {
    ...decodeWorkload,
    mode: { kind: 'open', rate: spec.longRate, burstiness: 1, maxConcurrency: 4 },
    maxTokens: spec.longMaxTokens,
    prompt: { kind: 'synthetic', tokens: spec.longPromptTokens, sharedPrefix: false },
    // the long prompts' own seed, the same in every configuration
    seed: spec.workload.seed + 1,
  };
  return { decodeWorkload, longWorkload };
}

/**
 * One configuration: the decodes and the long prompts at once against one server. Each run's
 * progress is reported with the other's latest counts beside it.
 */
function runConfig(
  endpoint: EndpointSpec,
  decodeWorkload: WorkloadSpec,
  longWorkload: WorkloadSpec,
  runId: string,
  options: PrefillDialOptions,
  onProgress: (p: Progress, others: Counts) => void,
): Promise<[RunFile, RunFile]> {
  const common = {
    ...(options.apiKey !== undefined ? { apiKey: options.apiKey } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
  };
  let decodeSoFar = NO_COUNTS;
  let longSoFar = NO_COUNTS;
  return Promise.all([
    runWorkload(endpoint, decodeWorkload, { ...common, runId: `${runId}d`, onProgress: (p) => onProgress((decodeSoFar = p), longSoFar) }),
    runWorkload(endpoint, longWorkload, { ...common, runId: `${runId}l`, onProgress: (p) => onProgress((longSoFar = p), decodeSoFar) }),
  ]);
}

/**
 * For each chunk size: start the server, run the short decodes (closed loop, `decodeStreams`) and
 * the long prompts (open loop, `longRate`) against it at the same time for `durationS`, stop it.
 * The result is one run file: `requests` hold every configuration's requests, `prefillDial.configs`
 * the per-configuration summaries of the decodes (TPOT p99, stalls) and of the long prompts (TTFT).
 */
export async function runPrefillDial(spec: PrefillDialSpec, options: PrefillDialOptions): Promise<RunFile> {
  if (spec.batchSizes.length < 2) throw new Error('the prefill dial needs at least two batch sizes to compare');
  for (const b of spec.batchSizes) if (!(Number.isInteger(b) && b >= 1)) throw new Error(`bad batch size ${b}: must be a whole number ≥ 1`);
  const collector = new Collector(options.runId);
  const configs: PrefillDialConfig[] = [];
  const { decodeWorkload, longWorkload } = dialWorkloads(spec);

  for (let i = 0; i < spec.batchSizes.length; i++) {
    if (options.signal?.aborted) break;
    const batchSize = spec.batchSizes[i]!;
    const server = await options.startServer(batchSize);
    let decodeRun: RunFile;
    let longRun: RunFile;
    try {
      const beforeThis = collector.counts;
      const onProgress = (p: Progress, others: Counts) => options.onProgress?.(collector.progress(p, undefined, addCounts(beforeThis, others)));
      [decodeRun, longRun] = await runConfig(server.endpoint, decodeWorkload, longWorkload, `${collector.id}#${i}`, options, onProgress);
    } finally {
      await server.stop();
    }
    const d = collector.add(decodeRun);
    const l = collector.add(longRun);
    // The decodes' stalls come from the long prompts' prefills, which ran in the other run: judge them together.
    d.summary = summarize(d.records, decodeWorkload, { durationS: decodeRun.summary.durationS, analysis: analyzeTiming([...d.records, ...l.records], decodeWorkload), culprits: l.records });
    collector.counts = addCounts(collector.counts, countsOf(d.summary), countsOf(l.summary));
    const config: PrefillDialConfig = {
      batchSize,
      label: `batch ${batchSize}`,
      decode: { summary: d.summary, requestIndexes: d.indexes },
      long: { summary: l.summary, requestIndexes: l.indexes },
    };
    configs.push(config);
    options.onConfig?.(config, i);
    if (decodeRun.cancelled || longRun.cancelled) break;
  }

  const { head, first } = collector.head(options.signal, 'the prefill dial was cancelled before its first configuration finished');
  return {
    ...head,
    // each configuration had its own server (and port): the first one's endpoint stands for them
    endpoint: first.endpoint,
    workload: decodeWorkload,
    ...collector.judged(decodeWorkload),
    prefillDial: {
      configs,
      decodeStreams: spec.decodeStreams,
      shortPromptTokens: spec.shortPromptTokens,
      shortMaxTokens: spec.shortMaxTokens,
      longPromptTokens: spec.longPromptTokens,
      longMaxTokens: spec.longMaxTokens,
      longRate: spec.longRate,
      durationS: spec.durationS,
    },
  };
}

