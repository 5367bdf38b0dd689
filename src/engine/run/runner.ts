// The workload runner: preflight, warm connections, warmup, then the measured phase (closed or open
// loop), live progress, cancellation that keeps every finished request, and the run file. The parts
// live apart: the schedulers (scheduler.ts) and the accounting (runTally.ts), tested alone with a fake
// clock; the plan of each request (plan.ts), the sending (sender.ts), the run file's assembly
// (runAssembly.ts), worker threads for many streams (workers/coordinator.ts); this file wires them to
// the client.
import type { ConnectionInfo, EndpointClient, EndpointSpec, RunFile, WorkloadSpec } from '../core/types';
import { createEndpointClient } from '../transport/client';
import { networkRecord } from '../transport/connections';
import { realClock } from '../core/clock';
import { preflight } from '../transport/detect';
import { assembleRunFile } from './runAssembly';
import { newRunId } from '../core/runId';
import { ProgressTicker, RunTally } from './runTally';
import { closedLoop, paced, sleep, traceLoop, withinPhase } from './scheduler';
import { traceOffsetsMs } from '../prompts/traces';
import { connectionsFor, validateWorkload } from '../core/workload';
import { runOnWorkers, threadsFor, withWorkers } from './workers/coordinator';
import { clientOptions, Planner, promptSource } from './plan';
import type { RunOptions } from './plan';
import { Sender } from './sender';
import { correctFromUsage, promptLengthRecord, sizedPrompt, sizeWithTokenizer, withWords } from './promptLength';
import type { Sizing } from './promptLength';
import { sessionPhase } from './sessions';

/** How long closing the client may take on the way out of a cancelled run. */
const CLOSE_GRACE_MS = 30;

/** A promise that resolves when `signal` aborts (never without one); dispose() stops listening. */
export function abortable(signal: AbortSignal | undefined): { promise: Promise<void>; dispose(): void } {
  if (!signal) return { promise: new Promise<void>(() => undefined), dispose: () => undefined };
  if (signal.aborted) return { promise: Promise.resolve(), dispose: () => undefined };
  let onAbort!: () => void;
  const promise = new Promise<void>((resolve) => {
    onAbort = () => resolve();
    signal.addEventListener('abort', onAbort, { once: true });
  });
  return { promise, dispose: () => signal.removeEventListener('abort', onAbort) };
}

/** The warmup: a closed loop of `w.warmup` requests, excluded from statistics. */
export async function warmupPhase(w: WorkloadSpec, planner: Planner, sender: Sender, signal: AbortSignal | undefined): Promise<void> {
  if (w.warmup <= 0) return;
  const clock = realClock;
  const send = (k: number) => sender.send(planner.plan(k, true, k, clock.origin + clock.now()));
  await closedLoop({ workers: Math.min(w.warmup, connectionsFor(w)), more: (k) => k < w.warmup, send, ...(signal ? { signal } : {}) });
}

/** Which measured requests a phase sends: the whole workload, or a segment of it (a repetition, a block). */
export interface MeasuredSpan {
  /** The record index of the phase's first request. */
  readonly firstIndex: number;
  /** The workload position of its first request: its request j sends what measured request firstK + j of the workload does. */
  readonly firstK: number;
  /** Requests in the phase; absent: until `durationS` has passed. */
  readonly requests?: number;
  readonly durationS?: number;
  /** The open loop's arrival seed. */
  readonly seed: number;
}

/** The measured requests of `span`, in the workload's mode (closed or open loop, a trace's times); resolves with how many were sent. */
export async function measuredPhase(w: WorkloadSpec, span: MeasuredSpan, planner: Planner, sender: Sender, signal: AbortSignal | undefined): Promise<number> {
  if (planner.sessions) return sessionPhase(w, span, planner, sender, signal); // multi-turn: sessions of turns (sessions.ts)
  const clock = realClock;
  const deadline = span.durationS !== undefined ? clock.now() + span.durationS * 1000 : undefined;
  // request j of the phase: its record index, and the workload position whose prompt and seed it sends
  const plan = (j: number, at: number) => planner.plan(span.firstIndex + j, false, span.firstK + j, clock.origin + at, w.warmup + span.firstK + j);
  let sent = 0;
  const send = (j: number, at: number) => {
    sent = Math.max(sent, j + 1);
    return sender.send(plan(j, at));
  };
  const m = w.mode;
  if (m.kind !== 'trace') {
    const total = span.requests !== undefined ? { total: span.requests } : {};
    const over = span.durationS !== undefined ? { durationS: span.durationS } : {};
    await paced(m, { ...total, ...over, ...(deadline !== undefined ? { deadline } : {}), seed: span.seed, ...(signal ? { signal } : {}), clock }, send);
  } else if (planner.trace) {
    // a trace: request j at its time (over the speed) after the phase's start, planned ahead of it
    const all = traceOffsetsMs(planner.trace, m.speed);
    const offsetsMs = all.slice(span.firstK).map((t) => t - all[span.firstK]!);
    if (span.requests === undefined && deadline === undefined) sender.expect(offsetsMs.length);
    const maxConcurrency = m.maxConcurrency !== undefined ? { maxConcurrency: m.maxConcurrency } : {};
    const go = (p: ReturnType<typeof plan>, j: number) => {
      sent = Math.max(sent, j + 1);
      return sender.send(p);
    };
    await traceLoop({ offsetsMs, ...maxConcurrency, more: (j, due) => withinPhase(span.requests, deadline, j, due), prepare: plan, send: go, ...(signal ? { signal } : {}), clock });
  }
  return sent;
}

/** The length asked of a run's synthetic prompts (when sized), and their sizing once known. */
interface SizeState {
  readonly asked: number | undefined;
  sizing?: Sizing;
}

function sizedWorkload(w: WorkloadSpec, size: SizeState): WorkloadSpec {
  return size.sizing ? withWords(w, size.sizing.words) : w;
}

/** The run file with how its prompts were sized and what the server counted. */
function withPromptLength(size: SizeState, run: RunFile): RunFile {
  return size.sizing && size.asked !== undefined ? { ...run, promptLength: promptLengthRecord(size.sizing, size.asked, run.requests) } : run;
}

/** After the warmup, its replies' usage says what the server counted: the words moved by what is left over. */
function afterWarmupOf(size: SizeState, planner: Planner, tally: RunTally): (() => void) | undefined {
  const { sizing, asked } = size;
  if (!sizing || asked === undefined) return undefined;
  return () => {
    size.sizing = correctFromUsage(sizing, asked, tally.records().filter((r) => r.warmup));
    planner.resize(size.sizing.words);
  };
}

/** Sizes synthetic prompts with the server's tokenizer (promptLength.ts), the planner resized to it; undefined when `aborted` came first. */
async function sizeBeforeRun(endpoint: EndpointSpec, w: WorkloadSpec, planner: Planner, asked: number, options: RunOptions, aborted: Promise<void>): Promise<Sizing | undefined> {
  const net = { ...(options.apiKey !== undefined ? { apiKey: options.apiKey } : {}), ...(options.network ? { network: options.network } : {}) };
  // the first measured request's prompt, as sent (its nonce included), at each count of words tried
  const sizing = sizeWithTokenizer(endpoint, asked, (words) => {
    planner.resize(words);
    return planner.sentPromptFor(w.warmup, 0);
  }, net);
  sizing.catch(() => undefined);
  const done = await Promise.race([sizing, aborted.then(() => undefined)]);
  if (done) planner.resize(done.words);
  return done;
}

/** Warmup (a closed loop, excluded from statistics), then the measured phase in the workload's mode; `afterWarmup` in between. */
async function runPhases(w: WorkloadSpec, planner: Planner, sender: Sender, tally: RunTally, signal: AbortSignal | undefined, afterWarmup?: () => void): Promise<void> {
  await warmupPhase(w, planner, sender, signal);
  if (signal?.aborted) return;
  afterWarmup?.();
  tally.startPhase();
  await measuredPhase(w, { firstIndex: w.warmup, firstK: 0, ...(w.requests !== undefined ? { requests: w.requests } : {}), ...(w.durationS !== undefined ? { durationS: w.durationS } : {}), seed: w.seed }, planner, sender, signal);
  tally.endPhase();
}

/**
 * Runs a workload against an endpoint and returns its run file. Rejects only before the run starts
 * (a bad workload, an unreadable prompt source, or the endpoint's PreflightError); a failing request
 * is recorded in its record's `error`, never thrown.
 */
export async function runWorkload(endpoint: EndpointSpec, workload: WorkloadSpec, options: RunOptions = {}): Promise<RunFile> {
  const w = validateWorkload(workload);
  const runId = options.runId ?? newRunId();
  const startedAt = new Date().toISOString();
  const signal = options.signal;
  const onProgress = options.onProgress;
  // in-flight streams ride on the progress reports (a live view's lanes), when asked for and read
  const tally = new RunTally(runId, w.requests, realClock, { streams: options.streams === true && onProgress !== undefined });
  const ticker = onProgress ? new ProgressTicker(() => onProgress(tally.progress())) : undefined;
  let planner: Planner | undefined;
  const threads = threadsFor(w);
  // synthetic prompts sized to the length asked as the server counts it (promptLength.ts)
  const size: SizeState = { asked: sizedPrompt(w)?.tokens };
  const build = (cancelled: boolean, connection?: ConnectionInfo): RunFile => withPromptLength(size, assembleRunFile({
      id: runId,
      startedAt,
      endedAt: new Date().toISOString(),
      cancelled,
      endpoint,
      network: networkRecord(endpoint.url, options.network),
      ...(options.detectedApi ? { detectedApi: true } : {}),
      workload: withWorkers(sizedWorkload(w, size), threads),
      ...(connection ? { connection } : {}),
      ...(planner && planner.prompts.length > 0 ? { prompts: planner.prompts } : {}),
      requests: tally.records(),
      durationS: tally.phaseSeconds(),
    }));

  const aborted = abortable(signal);
  let client: EndpointClient | undefined;
  try {
    planner = new Planner(w, await promptSource(w, options.prompts, options.warmupPrompts), endpoint);
    // ---- preflight and warm, both cancellable ----
    const pre = preflight(endpoint, { ...(options.apiKey !== undefined ? { apiKey: options.apiKey } : {}), ...(options.network ? { network: options.network } : {}) });
    pre.catch(() => undefined);
    await Promise.race([pre, aborted.promise]);
    if (signal?.aborted) return build(true);
    // ---- the prompts' length, as the server counts it: its tokenizer, where it has one ----
    if (size.asked !== undefined && planner.words !== undefined) {
      size.sizing = await sizeBeforeRun(endpoint, w, planner, size.asked, options, aborted.promise);
      if (signal?.aborted) return build(true);
    }
    // ---- more streams than one loop stamps well: worker threads (workers/coordinator.ts) ----
    if (threads > 1) {
      const out = await runOnWorkers({ endpoint, workload: sizedWorkload(w, size), options, tally, planner, threads });
      return build(out.cancelled, out.connection);
    }
    client = createEndpointClient(endpoint, clientOptions(w, options.apiKey, options.network));
    const warming = client.warm();
    warming.catch(() => undefined);
    await Promise.race([warming, aborted.promise]);
    if (signal?.aborted) return build(true);
    const connection = await warming;

    // ---- sending ----
    const sender = new Sender(client, tally, options);
    const phases = runPhases(w, planner, sender, tally, signal, afterWarmupOf(size, planner, tally));
    phases.catch(() => undefined);
    await Promise.race([phases, aborted.promise]);
    if (signal?.aborted) {
      tally.endPhase();
      await sender.cancel();
      return build(true, client.connection() ?? connection);
    }
    await phases;
    return build(false, client.connection() ?? connection);
  } finally {
    aborted.dispose();
    ticker?.stop();
    if (client) {
      const closing = client.close().catch(() => undefined);
      // A cancelled run returns at once; the sockets finish closing behind it.
      if (signal?.aborted) await Promise.race([closing, sleep(CLOSE_GRACE_MS, undefined)]);
      else await closing;
    }
  }
}
