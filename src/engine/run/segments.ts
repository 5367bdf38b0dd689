// A workload run in segments over one set of warmed connections: the repetitions of `run --repeat N`,
// back to back, and each side of `ab` (abRun.ts), whose blocks take turns with the other side's.
// Preflight, connection warming and the warmup happen once; each segment is then a measured phase of
// its own (runner.ts measuredPhase), its requests tagged with its number (requests[].repeat) and its
// wall time clocked apart, so that the pooled summary's throughput is over the segments' summed time
// (never the gaps between them: the other side's blocks) and each segment keeps its own summary.
// Segments run on one event loop: a workload that needs worker threads is refused (WorkloadError).
import type { ConnectionInfo, EndpointClient, EndpointSpec, AbRecord, Progress, RunFile, WorkloadSpec } from '../core/types';
import { realClock } from '../core/clock';
import { newRunId } from '../core/runId';
import { validateWorkload, WorkloadError } from '../core/workload';
import { createEndpointClient } from '../transport/client';
import { networkRecord } from '../transport/connections';
import { preflight, PreflightError } from '../transport/detect';
import { clientOptions, Planner, promptSource } from './plan';
import type { RunOptions } from './plan';
import { assembleRunFile } from './runAssembly';
import type { SegmentParts } from './runAssembly';
import { abortable, measuredPhase, warmupPhase } from './runner';
import { ProgressTicker, RunTally } from './runTally';
import { sleep } from './scheduler';
import { Sender } from './sender';
import { unsized } from './promptLength';
import { streamsOf, threadsFor, withWorkers } from './workers/coordinator';

/** How long closing a side's connections may take on the way out of a cancelled run. */
const CLOSE_GRACE_MS = 30;

/** `promise`'s value, or undefined when `signal` aborts first (a rejection still rejects). */
async function untilAborted<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<{ readonly value: T } | undefined> {
  if (signal?.aborted) {
    promise.catch(() => undefined);
    return undefined;
  }
  const aborted = abortable(signal);
  try {
    const settled = promise.then((value) => ({ value }));
    settled.catch(() => undefined);
    return await Promise.race([settled, aborted.promise.then(() => undefined)]);
  } finally {
    aborted.dispose();
  }
}

/** Refuses a workload that one event loop cannot send well: segments have no worker threads. */
export function checkOneLoop(w: WorkloadSpec, what: string): void {
  const threads = threadsFor(w);
  if (threads > 1) {
    throw new WorkloadError(`${what} sends from one event loop, and this workload wants ${threads} worker threads (${streamsOf(w)} streams${w.workers !== undefined ? `, --workers ${w.workers}` : ''}): give --workers 1, or fewer streams`);
  }
}

export interface SegmentedSideInput {
  readonly endpoint: EndpointSpec;
  readonly workload: WorkloadSpec;
  /** The key, network, prompts, run id and onRecord; its signal and onProgress are the caller's to use. */
  readonly options: RunOptions;
  /** The measured requests planned over all segments (the progress's total), when known. */
  readonly total?: number;
  /** Segments send the same workload positions again (repetitions): their prompts are marked as repeats. */
  readonly repeats: boolean;
  /** Named in a preflight error ("B: …"), when there are two sides. */
  readonly name?: string;
}

/** One segment: which workload positions it sends, and how many. */
export interface SegmentSpec {
  /** Its number: its requests' `repeat`. */
  readonly index: number;
  /** The workload position of its first measured request. */
  readonly firstK: number;
  /** Measured requests; absent: until `durationS` has passed. */
  readonly requests?: number;
  readonly durationS?: number;
  /** The open loop's arrival seed. */
  readonly seed: number;
  /** Warm the connections again first (the side sat idle while the other side ran). */
  readonly rewarm?: boolean;
}

/** One endpoint's run in segments: its client, planner, tally and records over every segment. */
export class SegmentedSide {
  readonly runId: string;
  readonly #input: SegmentedSideInput;
  readonly #w: WorkloadSpec;
  readonly #tally: RunTally;
  readonly #startedAt = new Date().toISOString();
  readonly #segments: SegmentParts[] = [];
  #planner: Planner | undefined;
  #client: EndpointClient | undefined;
  #sender: Sender | undefined;
  #connection: ConnectionInfo | undefined;
  /** The record index the next segment's first request gets. */
  #nextIndex: number;
  #durationS = 0;

  constructor(input: SegmentedSideInput) {
    this.#input = input;
    // segments send the workload's words as they are: both sides of an A/B the very same text
    this.#w = unsized(validateWorkload(input.workload));
    this.runId = input.options.runId ?? newRunId();
    this.#tally = new RunTally(this.runId, input.total, realClock, { streams: input.options.streams === true && input.options.onProgress !== undefined });
    this.#nextIndex = this.#w.warmup;
  }

  progress(): Progress {
    return this.#tally.progress();
  }

  /** Reads the prompts, preflights the endpoint and warms its connections; false when cancelled meanwhile. Rejects with PreflightError. */
  async open(signal: AbortSignal | undefined): Promise<boolean> {
    const o = this.#input.options;
    const endpoint = this.#input.endpoint;
    this.#planner = new Planner(this.#w, await promptSource(this.#w, o.prompts, o.warmupPrompts), endpoint, this.#input.repeats);
    try {
      const net = { ...(o.apiKey !== undefined ? { apiKey: o.apiKey } : {}), ...(o.network ? { network: o.network } : {}) };
      if (!(await untilAborted(preflight(endpoint, net), signal))) return false;
      this.#client = createEndpointClient(endpoint, clientOptions(this.#w, o.apiKey, o.network));
      const warmed = await untilAborted(this.#client.warm(), signal);
      if (!warmed) return false;
      this.#connection = warmed.value;
    } catch (e) {
      const name = this.#input.name;
      if (name !== undefined && e instanceof PreflightError) throw new PreflightError(`${name}: ${e.message}`);
      throw e;
    }
    this.#sender = new Sender(this.#client, this.#tally, o);
    return true;
  }

  /** The warmup requests (not measured); false when cancelled. */
  async warmup(signal: AbortSignal | undefined): Promise<boolean> {
    const done = await untilAborted(warmupPhase(this.#w, this.#planner!, this.#sender!, signal), signal);
    if (done) return true;
    await this.#sender!.cancel();
    return false;
  }

  /** Sends one segment; false when cancelled (what finished is kept, what was in flight recorded as aborted). */
  async segment(spec: SegmentSpec, signal: AbortSignal | undefined): Promise<boolean> {
    const sender = this.#sender!;
    // A connection the server closed while this side sat idle is opened again here, not in a measured request.
    if (spec.rewarm && !(await untilAborted(this.#client!.warm().catch(() => undefined), signal))) return false;
    sender.segment = spec.index;
    const startedAt = new Date().toISOString();
    const t0 = realClock.now();
    if (this.#segments.length === 0) this.#tally.startPhase();
    const span = {
      firstIndex: this.#nextIndex,
      firstK: spec.firstK,
      ...(spec.requests !== undefined ? { requests: spec.requests } : {}),
      ...(spec.durationS !== undefined ? { durationS: spec.durationS } : {}),
      seed: spec.seed,
    };
    const sent = await untilAborted(measuredPhase(this.#w, span, this.#planner!, sender, signal), signal);
    if (!sent) await sender.cancel();
    const durationS = (realClock.now() - t0) / 1000;
    this.#segments.push({ index: spec.index, startedAt, durationS });
    this.#durationS += durationS;
    if (sent) this.#nextIndex += sent.value;
    return sent !== undefined;
  }

  /** The side's run file: every segment's requests, the pooled summary over their summed time, each segment's own. */
  runFile(cancelled: boolean, ab?: AbRecord): RunFile {
    this.#tally.endPhase();
    const o = this.#input.options;
    const reopened = this.#client?.connection()?.reopened;
    const connection = this.#connection ? { ...this.#connection, ...(reopened ? { reopened } : {}) } : undefined;
    const prompts = this.#planner?.prompts ?? [];
    return assembleRunFile({
      id: this.runId,
      startedAt: this.#startedAt,
      endedAt: new Date().toISOString(),
      cancelled,
      endpoint: this.#input.endpoint,
      network: networkRecord(this.#input.endpoint.url, o.network),
      ...(o.detectedApi ? { detectedApi: true } : {}),
      workload: withWorkers(this.#w, 1),
      ...(connection ? { connection } : {}),
      ...(prompts.length > 0 ? { prompts } : {}),
      requests: this.#tally.records(),
      durationS: this.#durationS,
      segments: this.#segments,
      ...(ab ? { ab } : {}),
    });
  }

  /** Closes the connections (a cancelled run does not wait for them long). */
  async close(cancelled: boolean): Promise<void> {
    if (!this.#client) return;
    const closing = this.#client.close().catch(() => undefined);
    if (cancelled) await Promise.race([closing, sleep(CLOSE_GRACE_MS, undefined)]);
    else await closing;
  }
}

/** `run --repeat N`'s extra: told when each repetition starts (a live view's "repetition 2/3"). */
export interface RepeatOptions extends RunOptions {
  onRepetition?(index: number): void;
}

/**
 * Runs a workload `repeats` times in a row over the same warmed connections (the warmup once, before
 * the first) and returns one run file: every repetition's requests (`repeat`: its number), each
 * repetition's summary (`repeats`), and the pooled summary. Each repetition sends the same requests,
 * prompts and seeds as the first: the same workload again, as running the command again with the same
 * seed would. Rejects only before the first request, as runWorkload does.
 */
export async function runRepeated(endpoint: EndpointSpec, workload: WorkloadSpec, repeats: number, options: RepeatOptions = {}): Promise<RunFile> {
  const w = validateWorkload(workload);
  if (!(Number.isInteger(repeats) && repeats >= 1)) throw new WorkloadError(`invalid repeat count: must be a whole number ≥ 1, got ${repeats}`);
  checkOneLoop(w, '--repeat');
  const signal = options.signal;
  const side = new SegmentedSide({ endpoint, workload: w, options, ...(w.requests !== undefined ? { total: w.requests * repeats } : {}), repeats: true });
  const onProgress = options.onProgress;
  const ticker = onProgress ? new ProgressTicker(() => onProgress(side.progress())) : undefined;
  try {
    let going = (await side.open(signal)) && (await side.warmup(signal));
    for (let r = 0; r < repeats && going; r++) {
      options.onRepetition?.(r);
      const spec = { index: r, firstK: 0, seed: w.seed, ...(w.requests !== undefined ? { requests: w.requests } : {}), ...(w.durationS !== undefined ? { durationS: w.durationS } : {}) };
      going = await side.segment(spec, signal);
    }
    return side.runFile(!going || signal?.aborted === true);
  } finally {
    ticker?.stop();
    await side.close(signal?.aborted === true);
  }
}
