// The main thread's side of a run on worker threads (--workers N): decides how many threads a
// workload gets, splits its streams over them (sharedCells.ts), starts each with its share (workerRun.ts),
// hands out the open-loop arrival schedule computed here once, and merges what comes back into the
// runner's one tally: one time base (epoch ms = performance.timeOrigin + performance.now(), the same
// instant on every thread), the records in one index order, progress as with one loop.
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { realClock } from '../../core/clock';
import { PreflightError } from '../../transport/detect';
import { readPrompts } from '../../prompts/promptSource';
import type { Planner, RunOptions } from '../plan';
import type { RunTally } from '../runTally';
import { arrivalGapsMs, sleep, withinPhase } from '../scheduler';
import type { ConnectionInfo, EndpointSpec, Handshake, Prompt, RequestRecord, WorkloadMode, WorkloadSpec } from '../../core/types';
import { connectionsFor, WorkloadError } from '../../core/workload';
import type { Batch, FromWorker, ShareSetup } from './protocol';
import { releaseHeld, sharedCells, splitEvenly } from './sharedCells';
import { Thread } from './threads';
import type { WorkerEntry } from './threads';

/** The most threads the default (`--workers` not given) starts. */
export const AUTO_WORKERS_CAP = 8;
/**
 * Below this many streams (streamsOf: a closed loop's concurrency, an open loop's by Little's law)
 * the default is one loop: a thread's start (its bundle parsed, a
 * pool and connections of its own) and the batches back cost more than one loop loses. Measured by
 * bench/workers.ts on a quiet 2-core machine (the server on the same cores): with 2 threads TTFT error
 * p99 was worse at 16 and 256 streams (1.6 vs 0.9 ms, 9.5 vs 6.1 ms) and CPU per token higher; at 1024
 * TTFT p99 34 vs 38 ms and ITL p99 15 vs 26 ms; at 4096 ITL p99 23 vs 138 ms.
 */
export const AUTO_WORKERS_MIN_STREAMS = 512;
/** How far ahead open-loop arrivals are handed out, ms; and how often. */
const LOOKAHEAD_MS = 200;
const FEED_MS = 50;
/** The first open-loop arrival is due this long after the schedule is made, so that every thread has it in time. */
const OPEN_LEAD_MS = 5;
/** How long cancellation waits for the threads to send back what they have. */
const CANCEL_WAIT_MS = 150;
/** How long a thread may take to close its connections at the end of a run (a cancelled one: a moment). */
const CLOSE_WAIT_MS = 2000;
const CLOSE_WAIT_CANCELLED_MS = 30;
const MAX_REOPENED = 1000;

/** The time a stream is guessed to take per token for an open loop's streams in flight, ms (100 tokens/s). */
const OPEN_LOOP_MS_PER_TOKEN = 10;

/**
 * Streams the workload keeps in flight: a closed loop's concurrency; an open loop's by Little's law,
 * its rate × each request's time at 100 tokens/s (`maxTokens` × 10 ms), within its --max-concurrency.
 */
export function streamsOf(w: WorkloadSpec): number {
  const m = w.mode;
  if (m.kind === 'closed') return m.concurrency;
  if (m.kind === 'trace') return 1; // a trace (and a ramp, and sessions) run on one loop: see threadsFor
  const inFlight = Math.ceil((m.rate * w.maxTokens * OPEN_LOOP_MS_PER_TOKEN) / 1000);
  return m.maxConcurrency !== undefined ? Math.min(m.maxConcurrency, inFlight) : inFlight;
}

/**
 * Threads a workload runs on: 1 is the run's own event loop. `w.workers` given: that many (never
 * more than a closed loop's concurrency). Not given: one loop below AUTO_WORKERS_MIN_STREAMS streams,
 * else the cores available, at most AUTO_WORKERS_CAP.
 */
export function threadsFor(w: WorkloadSpec, cores: number = availableParallelism()): number {
  if (w.workers !== undefined && !(Number.isInteger(w.workers) && w.workers >= 1)) throw new WorkloadError(`invalid workload: workers must be a whole number ≥ 1, got ${w.workers}`);
  if (!splittable(w)) {
    if (w.workers !== undefined && w.workers > 1) throw new WorkloadError('invalid workload: sessions, traces and ramps run on one loop (their order and schedule are one sequence): leave out workers');
    return 1;
  }
  const streams = streamsOf(w);
  const asked = w.workers ?? (streams < AUTO_WORKERS_MIN_STREAMS ? 1 : Math.min(cores, AUTO_WORKERS_CAP));
  const n = w.mode.kind === 'closed' ? Math.min(asked, w.mode.concurrency) : asked;
  return Math.max(1, Math.floor(n));
}

/** Whether the workload's requests can be dealt out to threads: not a session's turns, a trace's schedule or a ramp's rate. */
function splittable(w: WorkloadSpec): boolean {
  const p = w.prompt;
  if (p.kind === 'chat' || p.kind === 'trace' || (p.kind === 'dataset' && p.multiTurn)) return false;
  return w.mode.kind === 'closed' || (w.mode.kind === 'open' && w.mode.ramp === undefined);
}

/** The workload as the run file records it: `workers` the threads that ran, absent for one loop. */
export function withWorkers(w: WorkloadSpec, threads: number): WorkloadSpec {
  const { workers: _asked, ...rest } = w;
  return threads > 1 ? { ...rest, workers: threads } : rest;
}

/**
 * The worker entry beside the running code: dist/worker.js beside a bundle (dist/cli.js,
 * dist/engine.js); from source (tests, benchmarks under tsx) the .ts entry, required through tsx's
 * loader (a Worker does not take a .ts file itself).
 */
function workerEntry(): WorkerEntry {
  if (__filename.endsWith('.ts')) return { file: `require('tsx/cjs'); require(${JSON.stringify(join(__dirname, 'workerMain.ts'))});`, eval: true, execArgv: [] };
  return { file: join(__dirname, 'worker.js'), eval: false, execArgv: [] };
}

/**
 * Gives each record the prompt reference and repeat the main thread's planner gives it: the planner
 * that sees every request in index order, as one loop's does (a thread's own sees only its share).
 */
class Refs {
  readonly #planner: Planner;
  readonly #warmup: number;
  readonly #refs = new Map<number, { readonly ref?: number; readonly repeatOf?: number }>();
  #next = 0;

  constructor(planner: Planner, warmup: number) {
    this.#planner = planner;
    this.#warmup = warmup;
  }

  fix(r: RequestRecord): RequestRecord {
    while (this.#next <= r.index) {
      const j = this.#next++;
      const warm = j < this.#warmup;
      const p = this.#planner.plan(j, warm, warm ? j : j - this.#warmup, 0);
      this.#refs.set(j, { ...(p.spec.promptRef !== undefined ? { ref: p.spec.promptRef } : {}), ...(p.repeatOf !== undefined ? { repeatOf: p.repeatOf } : {}) });
    }
    const x = this.#refs.get(r.index) ?? {};
    this.#refs.delete(r.index);
    const { promptRef: _ref, repeatOf: _rep, ...rest } = r;
    return { ...rest, ...(x.repeatOf !== undefined ? { repeatOf: x.repeatOf } : {}), ...(x.ref !== undefined ? { promptRef: x.ref } : {}) };
  }
}

/** The connections of every thread as one: counts added, set-up times and handshakes in thread order. */
export function mergeConnections(parts: readonly (ConnectionInfo | undefined)[]): ConnectionInfo | undefined {
  const have = parts.filter((p): p is ConnectionInfo => p !== undefined);
  if (have.length === 0) return undefined;
  const handshakes: Handshake[] = have.flatMap((p) => p.handshakes ?? []);
  const reopened: Handshake[] = have.flatMap((p) => p.reopened ?? []).slice(0, MAX_REOPENED);
  return {
    connections: have.reduce((s, p) => s + p.connections, 0),
    connectMs: have.flatMap((p) => p.connectMs),
    ...(handshakes.length > 0 ? { handshakes } : {}),
    ...(reopened.length > 0 ? { reopened } : {}),
  };
}

export interface WorkersInput {
  readonly endpoint: EndpointSpec;
  readonly workload: WorkloadSpec;
  readonly options: RunOptions;
  readonly tally: RunTally;
  /** The run's planner: the prompt references and repeats of the merged records (and RunFile.prompts). */
  readonly planner: Planner;
  readonly threads: number;
  /** (prompt sizing, run/sizing.ts) Between the warmup and the measured phase. */
  readonly between?: WarmupSizing;
}

/** Prompt sizing between the warmup and the measured phase, as the run's sizer (run/sizing.ts) does it on one loop. */
export interface WarmupSizing {
  /** Once the warmup's records are in, and after each request added: the words of one more warmup request (request `index`), or undefined when settled. */
  next(index: number): number | undefined;
  /** The words the measured requests are sent with. */
  words(): number;
}

export interface WorkersResult {
  readonly cancelled: boolean;
  readonly connection?: ConnectionInfo;
}

type OpenMode = Extract<WorkloadMode, { kind: 'open' }>;

const epochNow = (): number => realClock.origin + realClock.now();

/** The promise's value, or undefined when the signal aborts first. */
async function untilAborted<T>(p: Promise<T>, signal: AbortSignal | undefined): Promise<T | undefined> {
  if (!signal) return p;
  if (signal.aborted) return undefined;
  let onAbort!: () => void;
  const aborted = new Promise<undefined>((resolve) => {
    onAbort = () => resolve(undefined);
    signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    return await Promise.race([p, aborted]);
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}

/** Waits for a message of kind `t` from every thread; false when the run was cancelled first. */
async function allSaid(threads: readonly Thread[], t: FromWorker['t'], signal: AbortSignal | undefined): Promise<boolean> {
  return (await untilAborted(Promise.all(threads.map((th) => th.next(t))), signal)) !== undefined;
}

async function promptsFor(w: WorkloadSpec, given: readonly Prompt[] | undefined): Promise<readonly Prompt[] | undefined> {
  if (given && given.length > 0) return given;
  if (w.prompt.kind !== 'file' && w.prompt.kind !== 'dataset') return undefined;
  return (await readPrompts(w.prompt)).prompts;
}

/** What the threads send back besides records: chunk counts when someone reads progress, with their times for a live view's lanes. */
function progressWanted(o: RunOptions): { readonly progress: boolean; readonly streams: boolean } {
  const progress = o.onProgress !== undefined;
  return { progress, streams: progress && o.streams === true };
}

/** Each thread's start: its share of the connections, of the warmup's and a closed loop's loops, the prompts read once, the shared cells. */
function shareSetups(input: WorkersInput, prompts: readonly Prompt[] | undefined): ShareSetup[] {
  const { endpoint, workload: w, options, threads: n } = input;
  const cells = sharedCells(n);
  const conns = splitEvenly(connectionsFor(w), n).map((c) => Math.max(1, c));
  const warmupLoops = splitEvenly(Math.min(w.warmup, connectionsFor(w)), n);
  const measuredLoops = w.mode.kind === 'closed' ? splitEvenly(w.mode.concurrency, n) : new Array<number>(n).fill(0);
  return Array.from({ length: n }, (_, id) => ({
    id,
    endpoint,
    workload: w,
    connections: conns[id]!,
    warmupLoops: warmupLoops[id]!,
    measuredLoops: measuredLoops[id]!,
    ...(options.apiKey !== undefined ? { apiKey: options.apiKey } : {}),
    ...(options.network !== undefined ? { network: options.network } : {}),
    ...(prompts !== undefined ? { prompts } : {}),
    ...(options.warmupPrompts !== undefined ? { warmupPrompts: options.warmupPrompts } : {}),
    cells,
    ...progressWanted(options),
  }));
}

/** Merges one thread's batch into the run's tally and `onRecord`, as one loop would have fed them (records with the run planner's refs). */
function mergeBatch(b: Batch, tally: RunTally, options: RunOptions, refs: Refs | undefined, streams: boolean): void {
  const c = b.chunks;
  for (let i = 0; i < c.length; ) {
    const index = c[i]!;
    const count = c[i + 1]!;
    if (streams) {
      for (let j = 0; j < count; j++) tally.chunk(index, c[i + 2 + j]!);
      i += 2 + count;
    } else {
      for (let j = 0; j < count; j++) tally.chunk(index);
      i += 2;
    }
  }
  for (let i = 0; i < b.returned; i++) tally.returned();
  for (const rec of b.records) {
    const r = refs ? refs.fix(rec) : rec;
    if (!tally.record(r)) continue;
    try {
      options.onRecord?.(r);
    } catch {
      // a throwing listener must not break the run
    }
  }
}

/**
 * Waits until every thread has warmed its share of the connections: their connections as one, or
 * undefined when the run was cancelled first. Throws the first failure (a PreflightError when it was one).
 */
async function warmConnections(threads: readonly Thread[], signal: AbortSignal | undefined): Promise<{ readonly connection?: ConnectionInfo } | undefined> {
  const warming = Promise.all(threads.map((th) => Promise.race([th.next('warmed'), th.next('failed')])));
  const warmed = await untilAborted(warming, signal);
  if (warmed === undefined) return undefined;
  const failed = warmed.findIndex((m) => m === undefined || m.t === 'failed');
  if (failed >= 0) {
    const failure = warmed[failed];
    const message = failure?.t === 'failed' ? failure.message : (threads[failed]!.error ?? 'a worker thread stopped before warming its connections');
    throw failure?.t === 'failed' && failure.preflight ? new PreflightError(message) : new Error(message);
  }
  const connection = mergeConnections(threads.map((th) => th.connection));
  return connection ? { connection } : {};
}

/** The warmup: a closed loop over every thread, excluded from statistics. False when cancelled. */
async function warmup(threads: readonly Thread[], signal: AbortSignal | undefined): Promise<boolean> {
  for (const th of threads) th.post({ t: 'warmup' });
  return allSaid(threads, 'warmupDone', signal);
}

/** A closed loop's measured phase: every thread claims requests until the count or the deadline. False when cancelled. */
async function measureClosed(threads: readonly Thread[], w: WorkloadSpec, tally: RunTally, signal: AbortSignal | undefined): Promise<boolean> {
  tally.startPhase();
  const deadline = w.durationS !== undefined ? epochNow() + w.durationS * 1000 : undefined;
  for (const th of threads) th.post(deadline !== undefined ? { t: 'measure', deadline } : { t: 'measure' });
  return allSaid(threads, 'done', signal);
}

/**
 * Hands out an open loop's arrival schedule, computed here once: every FEED_MS the arrivals due in
 * the next LOOKAHEAD_MS, k to the k mod n-th of the n threads alive, until the count or the deadline
 * (or cancellation, or no thread left). The phase starts when the first arrival is due.
 */
async function handOutArrivals(threads: readonly Thread[], w: WorkloadSpec, m: OpenMode, tally: RunTally, signal: AbortSignal | undefined): Promise<void> {
  const nextGap = arrivalGapsMs(w.seed, m.rate, m.burstiness);
  const base = epochNow() + OPEN_LEAD_MS;
  const deadline = w.durationS !== undefined ? base + w.durationS * 1000 : undefined;
  let k = 0;
  let due = base;
  let phaseStarted = false;
  const more = () => withinPhase(w.requests, deadline, k, due);
  while (!signal?.aborted) {
    const living = threads.filter((th) => th.alive);
    if (living.length === 0) break;
    const n = living.length;
    const horizon = epochNow() + LOOKAHEAD_MS;
    const ks: number[][] = living.map(() => []);
    const dues: number[][] = living.map(() => []);
    while (due <= horizon && more()) {
      ks[k % n]!.push(k);
      dues[k % n]!.push(due);
      k++;
      due += nextGap();
    }
    living.forEach((th, i) => {
      if (ks[i]!.length > 0) th.give(ks[i]!, dues[i]!);
    });
    if (!phaseStarted) {
      await sleep(base - epochNow(), undefined);
      tally.startPhase();
      phaseStarted = true;
    }
    if (!more()) break;
    await sleep(FEED_MS, signal);
  }
}

/**
 * An open loop's measured phase: the arrivals handed out, then every living thread's given ones ended
 * (again when a thread that died left it more). False when cancelled.
 */
async function measureOpen(threads: readonly Thread[], w: WorkloadSpec, m: OpenMode, tally: RunTally, signal: AbortSignal | undefined): Promise<boolean> {
  await handOutArrivals(threads, w, m, tally, signal);
  if (signal?.aborted) return false;
  for (const th of threads) th.end();
  for (;;) {
    const open = threads.filter((th) => th.alive && th.dones < th.ends);
    if (open.length === 0) return true;
    if ((await untilAborted(Promise.all(open.map((th) => th.settled())), signal)) === undefined) return false;
  }
}

/**
 * Prompt sizing after the warmup: more warmup requests on the first living thread while the sizer
 * asks for them, then every thread told the words and the warmup's count. False when cancelled.
 */
async function sizeBetween(threads: readonly Thread[], w: WorkloadSpec, between: WarmupSizing, signal: AbortSignal | undefined): Promise<boolean> {
  let warmup = w.warmup;
  for (let more = between.next(warmup); more !== undefined; more = between.next(warmup)) {
    const first = threads.find((th) => th.alive);
    if (!first) break;
    first.post({ t: 'calibrate', index: warmup, words: more });
    warmup++;
    // a thread that dies meanwhile says nothing more: its request is recorded as lost, and the next goes to another
    await untilAborted(first.next('calibrated'), signal);
    if (signal?.aborted) return false;
  }
  for (const th of threads) th.sized(between.words(), warmup);
  return true;
}

/** The warmup (when the workload has one), prompt sizing, then the measured phase. False when cancelled. */
async function warmupAndMeasure(threads: readonly Thread[], w: WorkloadSpec, tally: RunTally, signal: AbortSignal | undefined, between: WarmupSizing | undefined): Promise<boolean> {
  if (w.warmup > 0 && !(await warmup(threads, signal))) return false;
  if (w.warmup > 0 && between && !(await sizeBetween(threads, w, between, signal))) return false;
  if (w.mode.kind === 'trace') throw new Error('a trace is replayed on one loop, not on worker threads');
  return w.mode.kind === 'closed' ? measureClosed(threads, w, tally, signal) : measureOpen(threads, w, w.mode, tally, signal);
}

/**
 * The requests a thread that died had in flight, as failed records of kind `worker` (counted and shown
 * as every failed request is, the exit code that of a run with failures): the server may have answered
 * them, but the thread that read the answers is gone.
 */
function lostRecords(th: Thread, message: string): RequestRecord[] {
  const lost = [...th.inFlight].sort((a, b) => a[0] - b[0]).map(([index, f]): RequestRecord => ({
    index,
    warmup: f.warmup,
    scheduledAt: f.scheduledAt,
    sentAt: f.sentAt,
    outputTokens: 0,
    tokenSource: 'chunks',
    chunkTimesMs: [],
    error: { kind: 'worker', message },
  }));
  th.inFlight.clear();
  return lost;
}

/** What the run does without a thread that died, in words: how many of a closed loop's streams go on, or where an open loop's arrivals go. */
function goneOn(dead: Thread, threads: readonly Thread[], setups: readonly ShareSetup[]): string {
  const living = threads.filter((th) => th.alive && th !== dead);
  const w = setups[0]!.workload;
  if (living.length === 0) return 'no thread was left to go on';
  if (w.mode.kind !== 'closed') return 'its arrivals went to the other threads';
  const streams = living.reduce((sum, th) => sum + setups[th.id]!.measuredLoops, 0);
  return `the run went on with ${streams} of ${w.mode.concurrency} streams`;
}

/**
 * The open-loop arrivals a thread that died was given and had not sent: handed to the living threads
 * in turn, due when they were due (sent late, and the lag shows), each told to end again when it had
 * been told already.
 */
function handOn(dead: Thread, threads: readonly Thread[]): void {
  const left = [...dead.given].sort((a, b) => a[0] - b[0]);
  dead.given.clear();
  const living = threads.filter((th) => th.alive && th !== dead);
  if (left.length === 0 || living.length === 0) return;
  const ks: number[][] = living.map(() => []);
  const dues: number[][] = living.map(() => []);
  left.forEach(([k, due], i) => {
    ks[i % living.length]!.push(k);
    dues[i % living.length]!.push(due);
  });
  living.forEach((th, i) => {
    if (ks[i]!.length === 0) return;
    th.give(ks[i]!, dues[i]!);
    if (th.ends > 0) th.end();
  });
}

/** Tells every thread to cancel and waits a moment (CANCEL_WAIT_MS) for what they have to come back. */
async function cancelThreads(threads: readonly Thread[]): Promise<void> {
  for (const th of threads) th.post({ t: 'cancel' });
  await Promise.race([Promise.all(threads.filter((th) => !th.done).map((th) => th.next('done'))), sleep(CANCEL_WAIT_MS, undefined)]);
}

/** Has every thread close its connections (waiting a moment when cancelled), then stops it. */
async function stopThreads(threads: readonly Thread[], cancelled: boolean): Promise<void> {
  for (const th of threads) th.stopping = true;
  for (const th of threads) th.post({ t: 'close' });
  await Promise.race([Promise.all(threads.map((th) => th.next('closed'))), sleep(cancelled ? CLOSE_WAIT_CANCELLED_MS : CLOSE_WAIT_MS, undefined)]);
  await Promise.all(threads.map((th) => th.terminate()));
}

/**
 * Runs the warmup and the measured phase of `w` on `threads` worker threads, feeding `tally` and
 * `options.onRecord` as one loop does. Rejects (as one loop's warming does) when a thread cannot warm
 * its connections; a failing request is recorded, never thrown.
 */
export async function runOnWorkers(input: WorkersInput): Promise<WorkersResult> {
  const { workload: w, options, tally } = input;
  const signal = options.signal;
  const prompts = await promptsFor(w, options.prompts);
  const refs = prompts !== undefined || (options.warmupPrompts?.length ?? 0) > 0 ? new Refs(input.planner, w.warmup) : undefined;
  const { streams } = progressWanted(options);
  const entry = workerEntry();
  const setups = shareSetups(input, prompts);
  const threads: Thread[] = [];
  const events = {
    sent: (s: readonly number[]) => {
      for (let i = 0; i + 3 < s.length; i += 4) tally.sent(s[i]!, s[i + 1] === 1, s[i + 2]!, s[i + 3]!);
    },
    batch: (b: Batch) => mergeBatch(b, tally, options, refs, streams),
    died: (th: Thread, why: string) => {
      releaseHeld(setups[0]!.cells, th.id);
      const lost = lostRecords(th, `${why}; ${goneOn(th, threads, setups)}`);
      if (lost.length > 0) mergeBatch({ t: 'batch', chunks: [], returned: lost.length, records: lost }, tally, options, refs, streams);
      handOn(th, threads);
    },
  };
  for (const setup of setups) threads.push(new Thread(setup, setups.length, entry, events));
  let cancelled = false;
  try {
    const warmed = await warmConnections(threads, signal);
    if (warmed === undefined) return { cancelled: true };
    cancelled = !(await warmupAndMeasure(threads, w, tally, signal, input.between));
    tally.endPhase();
    if (cancelled) await cancelThreads(threads);
    const connection = mergeConnections(threads.map((th) => th.connection)) ?? warmed.connection;
    return { cancelled, ...(connection ? { connection } : {}) };
  } finally {
    await stopThreads(threads, cancelled || signal?.aborted === true);
  }
}
