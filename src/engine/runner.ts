// The workload runner: preflight, warm connections, warmup, then the measured phase (closed or open
// loop), live progress, cancellation that keeps every finished request, and the run file. The parts
// live apart, each tested alone with a fake clock: the schedulers (scheduler.ts), the accounting
// (runTally.ts), the run file's assembly (runAssembly.ts); this file wires them to the client.
import { randomBytes } from 'node:crypto';
import type {
  CacheBust,
  ClientOptions,
  ConnectionInfo,
  EndpointClient,
  EndpointSpec,
  NetworkSpec,
  Progress,
  Prompt,
  PromptRecord,
  RequestError,
  RequestRecord,
  RequestSpec,
  RunFile,
  StreamObserver,
  WorkloadSpec,
} from './types';
import { cacheBustFor, randomTag } from './adapters/cacheBust';
import type { EndpointAdapter } from './adapters/adapter';
import { adapterFor } from './adapters/registry';
import { createEndpointClient } from './client';
import { networkRecord } from './network';
import { realClock } from './clock';
import { preflight } from './detect';
import { syntheticPrompt } from './prompts';
import { readPrompts } from './promptSource';
import { assembleRunFile } from './runAssembly';
import { promptRecord, PromptRecords, recordsPrompt, resolveSampling } from './sentWith';
import type { SentParams } from './sentWith';
import { newRunId } from './runId';
import { ProgressTicker, RunTally } from './runTally';
import { closedLoop, openLoop, sleep, withinPhase } from './scheduler';
import { connectionsFor, validateWorkload } from './workload';
import { runOnWorkers, threadsFor, withWorkers } from './workers/coordinator';

export interface RunOptions {
  /** Sent as a bearer token; never written to the run file, and scrubbed from error texts. */
  readonly apiKey?: string;
  /** Proxy and certificates; holds the proxy's credentials, so never written either (the run file gets networkRecord's view). */
  readonly network?: NetworkSpec;
  /** Aborting stops the run within 100 ms: in-flight requests are aborted, finished ones kept, the run returned with `cancelled: true`. */
  readonly signal?: AbortSignal;
  /** The first at once, then at most every 100 ms, and a last one at the end. */
  onProgress?(p: Progress): void;
  /** With onProgress: carry the streams in flight (Progress.streams) for a live view. Off for the CLI: no chunk time is kept twice. */
  readonly streams?: boolean;
  /** Each finished request, warmup ones included (marked `warmup: true`). */
  onRecord?(r: RequestRecord): void;
  /** Prompts to cycle through instead of the workload's prompt source. */
  readonly prompts?: readonly Prompt[];
  /** Prompts for the warmup requests, cycled (default: the same as the measured ones). */
  readonly warmupPrompts?: readonly Prompt[];
  readonly runId?: string;
  /** Recorded in the run file when the API kind was detected (`--api auto`). */
  readonly detectedApi?: boolean;
}

/** How long cancellation waits for aborted requests to come back before recording them itself. */
const ABORT_GRACE_MS = 40;
/** How long closing the client may take on the way out of a cancelled run. */
const CLOSE_GRACE_MS = 30;

/**
 * Where each request's prompt comes from (measured request k cycles from the first prompt again),
 * and which prompt it is: the same key for the same text, so that a repeat is known without keeping
 * every text sent. Synthetic prompts have no key: each is unique from its first word.
 */
interface PromptSource {
  promptFor(index: number, warmup: boolean, k: number): { readonly prompt: Prompt; readonly key?: number };
}

/** The same text: every message's role and content. */
function promptIdentity(p: Prompt): string {
  return p.messages.map((m) => `${m.role}\u0000${m.content}`).join('\u0001');
}

/** Cycles finite lists (measured, and warmup when given apart), keyed by the first position of each text. */
function listSource(measured: readonly Prompt[], warmup: readonly Prompt[] | undefined): PromptSource {
  const all = warmup && warmup.length > 0 ? [...measured, ...warmup] : measured;
  const firstOf = new Map<string, number>();
  const keys = all.map((p, i) => {
    const id = promptIdentity(p);
    const first = firstOf.get(id);
    if (first !== undefined) return first;
    firstOf.set(id, i);
    return i;
  });
  const warmups = all.length - measured.length;
  return {
    promptFor: (_index, isWarmup, k) => {
      const i = isWarmup && warmups > 0 ? measured.length + (k % warmups) : k % measured.length;
      return { prompt: all[i]!, key: keys[i]! };
    },
  };
}

async function promptSource(w: WorkloadSpec, given: readonly Prompt[] | undefined, warmup: readonly Prompt[] | undefined): Promise<PromptSource> {
  if (given && given.length > 0) return listSource(given, warmup);
  const src = w.prompt;
  if (src.kind === 'synthetic') {
    const synthetic: PromptSource = { promptFor: (index) => ({ prompt: syntheticPrompt(index, src.tokens, { seed: w.seed, sharedPrefix: src.sharedPrefix }) }) };
    if (!warmup || warmup.length === 0) return synthetic;
    const list = listSource(warmup, undefined);
    return { promptFor: (index, isWarmup, k) => (isWarmup ? list.promptFor(index, false, k) : synthetic.promptFor(index, false, k)) };
  }
  const { prompts } = await readPrompts(src);
  return listSource(prompts, warmup);
}

/** A few random base-36 characters: the run's part of every nonce (unique across runs, sweeps' points included). */
function nonceBase(): string {
  return randomTag(randomBytes(6));
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
    ...(spec.cacheBust !== undefined ? { cacheBust: spec.cacheBust } : {}),
    ...(spec.promptRef !== undefined ? { promptRef: spec.promptRef } : {}),
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
export function clientOptions(w: WorkloadSpec, apiKey: string | undefined, network: NetworkSpec | undefined): ClientOptions {
  return {
    connections: connectionsFor(w),
    // An open loop is never capped unless --max-concurrency says so: a capped one turns into a closed loop.
    ...(w.mode.kind === 'open' && w.mode.maxConcurrency === undefined ? { maxConnections: null } : {}),
    timeoutMs: w.timeoutMs,
    idleTimeoutMs: w.idleTimeoutMs,
    ...(w.respectRetryAfter ? { respectRetryAfter: true } : {}),
    ...(apiKey !== undefined ? { apiKey } : {}),
    ...(network !== undefined ? { network } : {}),
  };
}

/** A request as planned: its spec, and the earlier request that sent the same prompt, if one did. */
export interface Planned {
  readonly spec: RequestSpec;
  readonly repeatOf?: number;
}

/** What a prompt is sent with, worked out once per prompt object: the values, and its index in RunFile.prompts when it has a record. */
interface SentWith {
  readonly sent: SentParams;
  readonly ref?: number;
}

/**
 * Turns request k of a phase into its spec: the prompt from the source, sent with the values the
 * precedence gives (sentWith.ts: the workload's explicit values, else the prompt file's, else the
 * workload's defaults), kept cold the API's way when the workload says so (workload.prefixCache;
 * absent: warm, as runs were before it existed), and whether it repeats a prompt sent earlier.
 * Records what each prompt-file prompt was sent with (`prompts`), in the order first sent.
 */
export class Planner {
  readonly #w: WorkloadSpec;
  readonly #source: PromptSource;
  readonly #endpoint: EndpointSpec;
  readonly #adapter: EndpointAdapter;
  readonly #cacheBust: CacheBust | undefined;
  readonly #nonceBase = nonceBase();
  /** Prompt key → the index of the first request that sent it. */
  readonly #firstSent = new Map<number, number>();
  readonly #sentWith = new WeakMap<Prompt, SentWith>();
  readonly #records = new PromptRecords();

  constructor(w: WorkloadSpec, source: PromptSource, endpoint: EndpointSpec) {
    this.#w = w;
    this.#source = source;
    this.#endpoint = endpoint;
    this.#adapter = adapterFor(endpoint.api);
    this.#cacheBust = w.prefixCache === 'cold' ? cacheBustFor(endpoint.api) : undefined;
  }

  /** RunFile.prompts so far: what each prompt-file (or caller's) prompt was sent with, in the order first sent. */
  get prompts(): readonly PromptRecord[] {
    return this.#records.list;
  }

  plan(index: number, warmup: boolean, k: number, scheduledAt: number): Planned {
    const w = this.#w;
    const { prompt, key } = this.#source.promptFor(index, warmup, k);
    const { sent, ref } = this.#sentWithOf(prompt);
    const bust = this.#cacheBust;
    const spec: RequestSpec = {
      index,
      warmup,
      prompt,
      ...sent,
      seed: w.seed + index,
      ignoreEos: w.ignoreEos,
      ...(ref !== undefined ? { promptRef: ref } : {}),
      scheduledAt,
      ...(bust !== undefined ? { cacheBust: bust } : {}),
      ...(bust === 'nonce' ? { nonce: `${this.#nonceBase}-${index.toString(36)}` } : {}),
    };
    if (key === undefined) return { spec };
    const first = this.#firstSent.get(key);
    if (first === undefined) {
      this.#firstSent.set(key, index);
      return { spec };
    }
    return { spec, repeatOf: first };
  }

  #sentWithOf(prompt: Prompt): SentWith {
    const known = this.#sentWith.get(prompt);
    if (known !== undefined) return known;
    const resolved = resolveSampling(this.#w, prompt);
    const ref = recordsPrompt(this.#w, prompt) ? this.#records.add(promptRecord(prompt, resolved, this.#notes(prompt, resolved.sent))) : undefined;
    const out: SentWith = ref !== undefined ? { sent: resolved.sent, ref } : { sent: resolved.sent };
    this.#sentWith.set(prompt, out);
    return out;
  }

  /** What the API cannot take of this prompt (images on a text-only API, a response format it has no field for): from the adapter that builds the body, once per prompt. */
  #notes(prompt: Prompt, sent: SentParams): readonly string[] | undefined {
    try {
      const spec: RequestSpec = { index: 0, warmup: false, prompt, ...sent, seed: 0, ignoreEos: this.#w.ignoreEos, scheduledAt: 0 };
      return this.#adapter.buildRequest(spec, this.#endpoint).notes;
    } catch {
      return undefined; // a request that cannot be built fails when sent, with its own error
    }
  }
}

/** The planner a run of `w` against `endpoint` uses (for tests: what each request would send). */
export async function createPlanner(w: WorkloadSpec, endpoint: EndpointSpec, prompts?: readonly Prompt[], warmupPrompts?: readonly Prompt[]): Promise<Planner> {
  return new Planner(w, await promptSource(w, prompts, warmupPrompts), endpoint);
}

/**
 * RunFile.prompts as a run of `w` with these prompts will record it, before anything is sent (the
 * live report's first frame): the planner's own order, the warmup requests then the measured ones,
 * each going through the list at most once.
 */
export function plannedPrompts(w: WorkloadSpec, endpoint: EndpointSpec, prompts: readonly Prompt[] | undefined): readonly PromptRecord[] {
  if (!prompts || prompts.length === 0) return [];
  const planner = new Planner(w, listSource(prompts, undefined), endpoint);
  for (let k = 0; k < Math.min(w.warmup, prompts.length); k++) planner.plan(k, true, k, 0);
  for (let k = 0; k < Math.min(w.requests ?? prompts.length, prompts.length); k++) planner.plan(w.warmup + k, false, k, 0);
  return planner.prompts;
}

/** Hands requests to the client and their records to the tally; on cancel, records what is still out. */
export class Sender {
  readonly #client: EndpointClient;
  readonly #tally: RunTally;
  readonly #options: RunOptions;
  readonly #pending = new Map<number, { ctrl: AbortController; spec: RequestSpec; repeatOf: number | undefined; sentAt: number; done: Promise<void> }>();
  readonly #observer: StreamObserver;

  constructor(client: EndpointClient, tally: RunTally, options: RunOptions) {
    this.#client = client;
    this.#tally = tally;
    this.#options = options;
    this.#observer = { onChunk: (index, atMs) => tally.chunk(index, atMs) };
  }

  /** Sends one request; resolves when its record is in (never rejects). */
  send({ spec, repeatOf }: Planned): Promise<void> {
    const ctrl = new AbortController();
    const sentAt = realClock.origin + realClock.now();
    this.#tally.sent(spec.index, spec.warmup, sentAt, spec.scheduledAt);
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
      if (repeatOf !== undefined) rec = { ...rec, repeatOf };
      if (spec.promptRef !== undefined) rec = { ...rec, promptRef: spec.promptRef };
      this.#tally.returned();
      this.#pending.delete(spec.index);
      this.#finish(rec);
    })();
    this.#pending.set(spec.index, { ctrl, spec, repeatOf, sentAt, done });
    return done;
  }

  /** Aborts what is in flight, waits a moment for it to come back with what it received, then records the rest as aborted. */
  async cancel(): Promise<void> {
    for (const p of this.#pending.values()) p.ctrl.abort();
    await Promise.race([Promise.all([...this.#pending.values()].map((p) => p.done)), sleep(ABORT_GRACE_MS, undefined)]);
    for (const p of [...this.#pending.values()]) {
      const rec = failedRecord(p.spec, p.sentAt, 'aborted', 'cancelled by the user');
      this.#finish(p.repeatOf !== undefined ? { ...rec, repeatOf: p.repeatOf } : rec);
    }
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
