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
import { closedLoop, openLoop, sleep, withinPhase } from './scheduler';
import { connectionsFor, validateWorkload } from '../core/workload';
import { runOnWorkers, threadsFor, withWorkers } from './workers/coordinator';
import { clientOptions, Planner, promptSource } from './plan';
import type { RunOptions } from './plan';
import { Sender } from './sender';

/** How long closing the client may take on the way out of a cancelled run. */
const CLOSE_GRACE_MS = 30;

function abortable(signal: AbortSignal | undefined): { promise: Promise<void>; dispose(): void } {
  if (!signal) return { promise: new Promise<void>(() => undefined), dispose: () => undefined };
  if (signal.aborted) return { promise: Promise.resolve(), dispose: () => undefined };
  let onAbort!: () => void;
  const promise = new Promise<void>((resolve) => {
    onAbort = () => resolve();
    signal.addEventListener('abort', onAbort, { once: true });
  });
  return { promise, dispose: () => signal.removeEventListener('abort', onAbort) };
}

/** Warmup (a closed loop, excluded from statistics), then the measured phase in the workload's mode. */
async function runPhases(w: WorkloadSpec, planner: Planner, sender: Sender, tally: RunTally, signal: AbortSignal | undefined): Promise<void> {
  const clock = realClock;
  const epoch = (t: number) => clock.origin + t;
  if (w.warmup > 0) {
    const send = (k: number) => sender.send(planner.plan(k, true, k, epoch(clock.now())));
    await closedLoop({ workers: Math.min(w.warmup, connectionsFor(w)), more: (k) => k < w.warmup, send, ...(signal ? { signal } : {}) });
  }
  if (signal?.aborted) return;
  tally.startPhase();
  const deadline = w.durationS !== undefined ? clock.now() + w.durationS * 1000 : undefined;
  const first = w.warmup;
  const m = w.mode;
  if (m.kind === 'closed') {
    const send = (k: number) => sender.send(planner.plan(first + k, false, k, epoch(clock.now())));
    await closedLoop({ workers: m.concurrency, more: (k) => withinPhase(w.requests, deadline, k, clock.now()), send, ...(signal ? { signal } : {}) });
  } else {
    await openLoop({
      rate: m.rate,
      burstiness: m.burstiness,
      seed: w.seed,
      ...(m.maxConcurrency !== undefined ? { maxConcurrency: m.maxConcurrency } : {}),
      more: (k, due) => withinPhase(w.requests, deadline, k, due),
      send: (k, due) => sender.send(planner.plan(first + k, false, k, epoch(due))),
      ...(signal ? { signal } : {}),
      clock,
    });
  }
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
  const build = (cancelled: boolean, connection?: ConnectionInfo): RunFile =>
    assembleRunFile({
      id: runId,
      startedAt,
      endedAt: new Date().toISOString(),
      cancelled,
      endpoint,
      network: networkRecord(endpoint.url, options.network),
      ...(options.detectedApi ? { detectedApi: true } : {}),
      workload: withWorkers(w, threads),
      ...(connection ? { connection } : {}),
      ...(planner && planner.prompts.length > 0 ? { prompts: planner.prompts } : {}),
      requests: tally.records(),
      durationS: tally.phaseSeconds(),
    });

  const aborted = abortable(signal);
  let client: EndpointClient | undefined;
  try {
    planner = new Planner(w, await promptSource(w, options.prompts, options.warmupPrompts), endpoint);
    // ---- preflight and warm, both cancellable ----
    const pre = preflight(endpoint, { ...(options.apiKey !== undefined ? { apiKey: options.apiKey } : {}), ...(options.network ? { network: options.network } : {}) });
    pre.catch(() => undefined);
    await Promise.race([pre, aborted.promise]);
    if (signal?.aborted) return build(true);
    // ---- more streams than one loop stamps well: worker threads (workers/coordinator.ts) ----
    if (threads > 1) {
      const out = await runOnWorkers({ endpoint, workload: w, options, tally, planner, threads });
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
    const phases = runPhases(w, planner, sender, tally, signal);
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
