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
import type { WarmupSizing } from './workers/coordinator';
import { clientOptions, Planner, promptSource } from './plan';
import type { RunOptions } from './plan';
import { Sender } from './sender';
import { promptLengthRecord, sizedPrompt } from './promptLength';
import { RunSizer } from './sizing';
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

/** A run's sizing of its synthetic prompts (sizing.ts), once started: undefined for other prompts, and until it is. */
interface SizeState {
  sizer?: RunSizer;
}

/** The workload as sent: its synthetic prompts' words and its warmup, once sized. */
function sizedWorkload(w: WorkloadSpec, size: SizeState): WorkloadSpec {
  return size.sizer ? size.sizer.workload(w) : w;
}

/** The run file with how its prompts were sized and what the server counted. */
function withPromptLength(size: SizeState, run: RunFile): RunFile {
  const sizer = size.sizer;
  return sizer ? { ...run, promptLength: promptLengthRecord(sizer.sizing, sizer.asked, run.requests) } : run;
}

/** Sizes synthetic prompts before the run (sizing.ts: the cache, else the server's tokenizer), the planner resized to it. */
async function sizeBeforeRun(endpoint: EndpointSpec, w: WorkloadSpec, planner: Planner, asked: number, options: RunOptions): Promise<RunSizer> {
  const sizer = await RunSizer.start(endpoint, w, asked, (words) => {
    // the first measured request's prompt as sent (its nonce included): every request counts alike
    planner.resize(words);
    return planner.sentPromptFor(w.warmup, 0);
  }, {
    ...(options.apiKey !== undefined ? { apiKey: options.apiKey } : {}),
    ...(options.network ? { network: options.network } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.onStatus ? { onStatus: options.onStatus } : {}),
    ...(options.sizingCache ? { cache: options.sizingCache } : {}),
    ...(options.warmupPrompts && options.warmupPrompts.length > 0 ? { warmupOther: true } : {}),
  });
  planner.resize(sizer.sizing.words);
  return sizer;
}

/**
 * Between the warmup and the measured phase: the sizing corrected by the warmup's usage, after more
 * warmup requests (indexes from w.warmup on) while it asks for them. Resolves with the warmup's count as sent.
 */
async function sizeAfterWarmup(w: WorkloadSpec, sizer: RunSizer, planner: Planner, sender: Sender, tally: RunTally, signal: AbortSignal | undefined): Promise<number> {
  let warmup = w.warmup;
  for (let more = sizer.nextWarmup(tally.records(), warmup); more !== undefined && !signal?.aborted; more = sizer.nextWarmup(tally.records(), warmup)) {
    planner.resize(more);
    await sender.send(planner.plan(warmup, true, warmup, realClock.origin + realClock.now()));
    warmup++;
  }
  planner.resize(sizer.sizing.words);
  return warmup;
}

/** The sizer as the worker threads' coordinator asks it between the warmup and the measured phase (the warmup's records in the run's tally). */
function warmupSizing(sizer: RunSizer, tally: RunTally): WarmupSizing {
  return { next: (index) => sizer.nextWarmup(tally.records(), index), words: () => sizer.sizing.words };
}

/** Warmup (a closed loop, excluded from statistics), then the measured phase in the workload's mode; the sizing corrected in between. */
async function runPhases(w: WorkloadSpec, planner: Planner, sender: Sender, tally: RunTally, signal: AbortSignal | undefined, sizer: RunSizer | undefined): Promise<void> {
  await warmupPhase(w, planner, sender, signal);
  if (signal?.aborted) return;
  const warmup = sizer && w.warmup > 0 ? await sizeAfterWarmup(w, sizer, planner, sender, tally, signal) : w.warmup;
  if (signal?.aborted) return;
  const sent = warmup === w.warmup ? w : { ...w, warmup };
  tally.startPhase();
  await measuredPhase(sent, { firstIndex: warmup, firstK: 0, ...(w.requests !== undefined ? { requests: w.requests } : {}), ...(w.durationS !== undefined ? { durationS: w.durationS } : {}), seed: w.seed }, planner, sender, signal);
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
  // synthetic prompts sized to the length asked as the server counts it (sizing.ts)
  const size: SizeState = {};
  const asked = sizedPrompt(w)?.tokens;
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
    if (asked !== undefined && planner.words !== undefined) {
      // stopped by Cancel (no tokenizer POST after the run returns), bounded by its deadline
      size.sizer = await sizeBeforeRun(endpoint, w, planner, asked, options);
      if (signal?.aborted) return build(true);
    }
    // ---- more streams than one loop stamps well: worker threads (workers/coordinator.ts) ----
    if (threads > 1) {
      const between = size.sizer ? { between: warmupSizing(size.sizer, tally) } : {};
      const out = await runOnWorkers({ endpoint, workload: sizedWorkload(w, size), options, tally, planner, threads, ...between });
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
    const phases = runPhases(w, planner, sender, tally, signal, size.sizer);
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
