// The workload runner: preflight, warm connections, warmup, then the measured phase (closed or open
// loop), live progress, cancellation that keeps every finished request, and the run file. The parts
// live apart, each tested alone with a fake clock: the schedulers (scheduler.ts), the accounting
// (runTally.ts), the run file's assembly (runAssembly.ts); this file wires them to the client.
import type {
  ClientOptions,
  ConnectionInfo,
  EndpointClient,
  EndpointSpec,
  Progress,
  Prompt,
  RequestError,
  RequestRecord,
  RequestSpec,
  RunFile,
  StreamObserver,
  WorkloadSpec,
} from './types';
import { createEndpointClient } from './client';
import { realClock } from './clock';
import { preflight } from './detect';
import { syntheticPrompt } from './prompts';
import { readPrompts } from './promptSource';
import { assembleRunFile } from './runAssembly';
import { newRunId } from './runId';
import { ProgressTicker, RunTally } from './runTally';
import { closedLoop, openLoop, sleep, withinPhase } from './scheduler';
import { connectionsFor, validateWorkload } from './workload';

export interface RunOptions {
  /** Sent as a bearer token; never written to the run file, and scrubbed from error texts. */
  readonly apiKey?: string;
  /** Aborting stops the run within 100 ms: in-flight requests are aborted, finished ones kept, the run returned with `cancelled: true`. */
  readonly signal?: AbortSignal;
  /** The first at once, then at most every 100 ms, and a last one at the end. */
  onProgress?(p: Progress): void;
  /** Each finished request, warmup ones included (marked `warmup: true`). */
  onRecord?(r: RequestRecord): void;
  /** Prompts to cycle through instead of the workload's prompt source. */
  readonly prompts?: readonly Prompt[];
  readonly runId?: string;
  /** Recorded in the run file when the API kind was detected (`--api auto`). */
  readonly detectedApi?: boolean;
}

/** How long cancellation waits for aborted requests to come back before recording them itself. */
const ABORT_GRACE_MS = 40;
/** How long closing the client may take on the way out of a cancelled run. */
const CLOSE_GRACE_MS = 30;

/** Where each request's prompt comes from: measured request k cycles from the first prompt again. */
type PromptFor = (index: number, warmup: boolean, k: number) => Prompt;

async function promptSource(w: WorkloadSpec, given: readonly Prompt[] | undefined): Promise<PromptFor> {
  if (given && given.length > 0) return (_i, _warm, k) => given[k % given.length]!;
  const src = w.prompt;
  if (src.kind === 'synthetic') {
    return (index) => syntheticPrompt(index, src.tokens, { seed: w.seed, sharedPrefix: src.sharedPrefix });
  }
  const { prompts } = await readPrompts(src);
  return (_i, _warm, k) => prompts[k % prompts.length]!;
}

function scrubText(text: string | undefined, secret: string | undefined): string | undefined {
  if (text === undefined || !secret || secret.length < 4) return text;
  return text.split(secret).join('<redacted>');
}

/** A server may echo a key in an error body (401s often do): it never reaches a run file. */
function scrub(r: RequestRecord, secret: string | undefined): RequestRecord {
  if (!r.error || !secret) return r;
  const message = scrubText(r.error.message, secret)!;
  const body = scrubText(r.error.body, secret);
  if (message === r.error.message && body === r.error.body) return r;
  const error: RequestError = { ...r.error, message, ...(body !== undefined ? { body } : {}) };
  return { ...r, error };
}

function failedRecord(spec: RequestSpec, sentAt: number, kind: RequestError['kind'], message: string): RequestRecord {
  return {
    index: spec.index,
    warmup: spec.warmup,
    scheduledAt: spec.scheduledAt,
    sentAt,
    outputTokens: 0,
    tokenSource: 'chunks',
    chunkTimesMs: [],
    error: { kind, message },
  };
}

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

/** The client options for a workload: one warmed connection per concurrent request. */
function clientOptions(w: WorkloadSpec, apiKey: string | undefined): ClientOptions {
  return {
    connections: connectionsFor(w),
    // An open loop is never capped unless --max-concurrency says so: a capped one turns into a closed loop.
    ...(w.mode.kind === 'open' && w.mode.maxConcurrency === undefined ? { maxConnections: null } : {}),
    timeoutMs: w.timeoutMs,
    idleTimeoutMs: w.idleTimeoutMs,
    ...(apiKey !== undefined ? { apiKey } : {}),
  };
}

/** Request k of a phase, from the workload and the prompt source. */
function specFor(w: WorkloadSpec, promptFor: PromptFor, index: number, warmup: boolean, k: number, scheduledAt: number): RequestSpec {
  const prompt = promptFor(index, warmup, k);
  const temperature = prompt.temperature ?? w.temperature;
  return {
    index,
    warmup,
    prompt,
    maxTokens: prompt.maxTokens ?? w.maxTokens,
    seed: w.seed + index,
    ignoreEos: w.ignoreEos,
    ...(temperature !== undefined ? { temperature } : {}),
    scheduledAt,
  };
}

/** Hands requests to the client and their records to the tally; on cancel, records what is still out. */
class Sender {
  readonly #client: EndpointClient;
  readonly #tally: RunTally;
  readonly #options: RunOptions;
  readonly #pending = new Map<number, { ctrl: AbortController; spec: RequestSpec; sentAt: number; done: Promise<void> }>();
  readonly #observer: StreamObserver;

  constructor(client: EndpointClient, tally: RunTally, options: RunOptions) {
    this.#client = client;
    this.#tally = tally;
    this.#options = options;
    this.#observer = { onChunk: (index) => tally.chunk(index) };
  }

  /** Sends one request; resolves when its record is in (never rejects). */
  send(spec: RequestSpec): Promise<void> {
    const ctrl = new AbortController();
    const sentAt = realClock.origin + realClock.now();
    this.#tally.sent(spec.index, spec.warmup);
    const done = (async () => {
      let rec: RequestRecord;
      try {
        rec = await this.#client.send(spec, ctrl.signal, this.#observer);
      } catch (e) {
        // The contract says send never rejects; if it does, the run still goes on.
        rec = failedRecord(spec, sentAt, ctrl.signal.aborted ? 'aborted' : 'other', e instanceof Error ? e.message : String(e));
      }
      // Without the server's usage, input tokens are the client's estimate (marked so), as vLLM's
      // benchmark counts them from the prompt rather than leaving total-token throughput short.
      if (rec.promptTokens === undefined && spec.prompt.estimatedTokens !== undefined) {
        rec = { ...rec, promptTokens: spec.prompt.estimatedTokens, promptTokensEstimated: true };
      }
      this.#tally.returned();
      this.#pending.delete(spec.index);
      this.#finish(rec);
    })();
    this.#pending.set(spec.index, { ctrl, spec, sentAt, done });
    return done;
  }

  /** Aborts what is in flight, waits a moment for it to come back with what it received, then records the rest as aborted. */
  async cancel(): Promise<void> {
    for (const p of this.#pending.values()) p.ctrl.abort();
    await Promise.race([Promise.all([...this.#pending.values()].map((p) => p.done)), sleep(ABORT_GRACE_MS, undefined)]);
    for (const p of [...this.#pending.values()]) this.#finish(failedRecord(p.spec, p.sentAt, 'aborted', 'cancelled by the user'));
  }

  #finish(rec: RequestRecord): void {
    const r = scrub(rec, this.#options.apiKey);
    if (!this.#tally.record(r)) return;
    try {
      this.#options.onRecord?.(r);
    } catch {
      // a throwing listener must not break the run
    }
  }
}

/** Warmup (a closed loop, excluded from statistics), then the measured phase in the workload's mode. */
async function runPhases(w: WorkloadSpec, promptFor: PromptFor, sender: Sender, tally: RunTally, signal: AbortSignal | undefined): Promise<void> {
  const clock = realClock;
  const epoch = (t: number) => clock.origin + t;
  if (w.warmup > 0) {
    const send = (k: number) => sender.send(specFor(w, promptFor, k, true, k, epoch(clock.now())));
    await closedLoop({ workers: Math.min(w.warmup, connectionsFor(w)), more: (k) => k < w.warmup, send, ...(signal ? { signal } : {}) });
  }
  if (signal?.aborted) return;
  tally.startPhase();
  const deadline = w.durationS !== undefined ? clock.now() + w.durationS * 1000 : undefined;
  const first = w.warmup;
  const m = w.mode;
  if (m.kind === 'closed') {
    const send = (k: number) => sender.send(specFor(w, promptFor, first + k, false, k, epoch(clock.now())));
    await closedLoop({ workers: m.concurrency, more: (k) => withinPhase(w.requests, deadline, k, clock.now()), send, ...(signal ? { signal } : {}) });
  } else {
    await openLoop({
      rate: m.rate,
      burstiness: m.burstiness,
      seed: w.seed,
      ...(m.maxConcurrency !== undefined ? { maxConcurrency: m.maxConcurrency } : {}),
      more: (k, due) => withinPhase(w.requests, deadline, k, due),
      send: (k, due) => sender.send(specFor(w, promptFor, first + k, false, k, epoch(due))),
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
  const tally = new RunTally(runId, w.requests);
  const onProgress = options.onProgress;
  const ticker = onProgress ? new ProgressTicker(() => onProgress(tally.progress())) : undefined;
  const build = (cancelled: boolean, connection?: ConnectionInfo): RunFile =>
    assembleRunFile({
      id: runId,
      startedAt,
      endedAt: new Date().toISOString(),
      cancelled,
      endpoint,
      ...(options.detectedApi ? { detectedApi: true } : {}),
      workload: w,
      ...(connection ? { connection } : {}),
      requests: tally.records(),
      durationS: tally.phaseSeconds(),
    });

  const aborted = abortable(signal);
  let client: EndpointClient | undefined;
  try {
    const promptFor = await promptSource(w, options.prompts);
    // ---- preflight and warm, both cancellable ----
    const pre = preflight(endpoint, { ...(options.apiKey !== undefined ? { apiKey: options.apiKey } : {}) });
    pre.catch(() => undefined);
    await Promise.race([pre, aborted.promise]);
    if (signal?.aborted) return build(true);
    client = createEndpointClient(endpoint, clientOptions(w, options.apiKey));
    const warming = client.warm();
    warming.catch(() => undefined);
    await Promise.race([warming, aborted.promise]);
    if (signal?.aborted) return build(true);
    const connection = await warming;

    // ---- sending ----
    const sender = new Sender(client, tally, options);
    const phases = runPhases(w, promptFor, sender, tally, signal);
    phases.catch(() => undefined);
    await Promise.race([phases, aborted.promise]);
    if (signal?.aborted) {
      tally.endPhase();
      await sender.cancel();
      return build(true, connection);
    }
    await phases;
    return build(false, connection);
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
