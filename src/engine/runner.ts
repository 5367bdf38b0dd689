// The workload runner: preflight, warm connections, warmup, then the measured phase (closed or open
// loop), live progress, cancellation that keeps every finished request, and the run file.
import type {
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
import { preflight } from './detect';
import { loadDataset } from './dataset';
import { summarize } from './metrics';
import { percentile } from './stats';
import { parsePromptFile } from './promptFiles';
import { syntheticPrompt } from './prompts';
import { Rng, interArrivalS } from './random';
import { newRunId, TOOL_NAME, TOOL_VERSION } from './runFile';
import { redactHeaders, urlWithoutCredentials } from './redact';
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
const PROGRESS_INTERVAL_MS = 100;

const epochNow = (): number => performance.timeOrigin + performance.now();

/** Where each request's prompt comes from: measured request k cycles from the first prompt again. */
type PromptFor = (index: number, warmup: boolean, k: number) => Prompt;

async function promptSource(w: WorkloadSpec, given: readonly Prompt[] | undefined): Promise<PromptFor> {
  if (given && given.length > 0) return (_i, _warm, k) => given[k % given.length]!;
  const src = w.prompt;
  if (src.kind === 'synthetic') {
    return (index) => syntheticPrompt(index, src.tokens, { seed: w.seed, sharedPrefix: src.sharedPrefix });
  }
  let prompts: Prompt[];
  if (src.kind === 'dataset') {
    prompts = await loadDataset(src.path);
  } else {
    const { readFile } = await import('node:fs/promises');
    let text: string;
    try {
      text = await readFile(src.path, 'utf8');
    } catch (e) {
      throw new Error(`cannot read prompt file ${src.path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
    }
    const parsed = parsePromptFile(src.path, text);
    if (parsed.prompts.length === 0) {
      const first = parsed.errors[0];
      throw new Error(`${src.path}${first?.line !== undefined ? `:${first.line + 1}` : ''}: ${first?.message ?? 'no prompt in the file'}`);
    }
    prompts = parsed.prompts.map((p) => p.prompt);
  }
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

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  if (ms <= 0 || signal?.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(t);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const t = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}

/**
 * Waits until performance.now() ≥ due. Node's timers run on a millisecond clock and may fire up to
 * a millisecond early; the last part is waited out in setImmediate steps, which let I/O (and so the
 * stamping of other streams' chunks) run in between.
 */
async function sleepUntil(due: number, signal: AbortSignal | undefined): Promise<void> {
  for (;;) {
    if (signal?.aborted) return;
    const left = due - performance.now();
    if (left <= 0) return;
    if (left > 2) await sleep(left - 1, signal);
    else await new Promise<void>((resolve) => setImmediate(resolve));
  }
}

/** A counting semaphore for open-loop --max-concurrency. */
class Slots {
  #free: number;
  readonly #waiters: (() => void)[] = [];
  constructor(n: number) {
    this.#free = n;
  }
  acquire(signal: AbortSignal | undefined): Promise<boolean> {
    if (signal?.aborted) return Promise.resolve(false);
    if (this.#free > 0) {
      this.#free--;
      return Promise.resolve(true);
    }
    return new Promise((resolve) => {
      const onAbort = () => {
        const i = this.#waiters.indexOf(grant);
        if (i >= 0) this.#waiters.splice(i, 1);
        resolve(false);
      };
      const grant = () => {
        signal?.removeEventListener('abort', onAbort);
        resolve(true);
      };
      this.#waiters.push(grant);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }
  release(): void {
    const next = this.#waiters.shift();
    if (next) next();
    else this.#free++;
  }
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
  const runStart = performance.now();

  // ---- live state ----
  const records: RequestRecord[] = [];
  const finished = new Set<number>();
  const ttfts: number[] = [];
  let measuredSucceeded = 0;
  let measuredFailed = 0;
  let measuredTokens = 0;
  const liveChunks = new Map<number, number>();
  let phaseStart: number | undefined;
  let phaseEnd: number | undefined;
  let inFlight = 0;
  const total = w.requests;

  const progress = (): Progress => {
    let tokens = measuredTokens;
    for (const n of liveChunks.values()) tokens += n;
    const phaseS = phaseStart === undefined ? 0 : ((phaseEnd ?? performance.now()) - phaseStart) / 1000;
    const sorted = [...ttfts].sort((a, b) => a - b);
    return {
      runId,
      succeeded: measuredSucceeded,
      failed: measuredFailed,
      finished: measuredSucceeded + measuredFailed,
      ...(total !== undefined ? { total } : {}),
      inFlight,
      ...(sorted.length > 0 ? { ttftP50Ms: percentile(sorted, 50) } : {}),
      ...(phaseS > 0 ? { outputTokensPerSecond: tokens / phaseS } : {}),
      elapsedS: (performance.now() - runStart) / 1000,
    };
  };
  const emit = () => {
    if (!options.onProgress) return;
    try {
      options.onProgress(progress());
    } catch {
      // a throwing listener must not break the run
    }
  };
  emit();
  const ticker = options.onProgress ? setInterval(emit, PROGRESS_INTERVAL_MS) : undefined;

  const build = (cancelled: boolean, connection?: ConnectionInfo): RunFile => {
    const sorted = [...records].sort((a, b) => a.index - b.index);
    const durationS = phaseStart === undefined ? 0 : ((phaseEnd ?? performance.now()) - phaseStart) / 1000;
    const headers = redactHeaders(endpoint.headers);
    return {
      format: 'llm-profiler.run',
      version: 1,
      id: runId,
      startedAt,
      endedAt: new Date().toISOString(),
      ...(cancelled ? { cancelled: true } : {}),
      tool: { name: TOOL_NAME, version: TOOL_VERSION },
      endpoint: { ...endpoint, url: urlWithoutCredentials(endpoint.url), ...(headers ? { headers } : {}), ...(options.detectedApi ? { detectedApi: true } : {}) },
      workload: w,
      ...(connection ? { connection } : {}),
      requests: sorted,
      summary: summarize(sorted, w, { durationS }),
    };
  };

  const aborted = abortable(signal);
  let client: EndpointClient | undefined;
  try {
    const promptFor = await promptSource(w, options.prompts);

    // ---- preflight and warm, both cancellable ----
    const pre = preflight(endpoint, { ...(options.apiKey !== undefined ? { apiKey: options.apiKey } : {}) });
    pre.catch(() => undefined);
    await Promise.race([pre, aborted.promise]);
    if (signal?.aborted) return build(true);
    client = createEndpointClient(endpoint, {
      connections: connectionsFor(w),
      // An open loop is never capped unless --max-concurrency says so: a capped one turns into a closed loop.
      ...(w.mode.kind === 'open' && w.mode.maxConcurrency === undefined ? { maxConnections: null } : {}),
      timeoutMs: w.timeoutMs,
      idleTimeoutMs: w.idleTimeoutMs,
      ...(options.apiKey !== undefined ? { apiKey: options.apiKey } : {}),
    });
    const warming = client.warm();
    warming.catch(() => undefined);
    await Promise.race([warming, aborted.promise]);
    if (signal?.aborted) return build(true);
    const connection = await warming;
    const c = client;

    // ---- sending ----
    const pending = new Map<number, { ctrl: AbortController; spec: RequestSpec; sentAt: number; done: Promise<void> }>();
    const observer: StreamObserver = {
      onChunk: (index) => {
        if (liveChunks.has(index)) liveChunks.set(index, liveChunks.get(index)! + 1);
      },
    };

    const finish = (rec: RequestRecord) => {
      if (finished.has(rec.index)) return;
      finished.add(rec.index);
      const r = scrub(rec, options.apiKey);
      records.push(r);
      liveChunks.delete(r.index);
      if (!r.warmup) {
        if (r.error) measuredFailed++;
        else {
          measuredSucceeded++;
          measuredTokens += r.outputTokens;
          if (r.ttftMs !== undefined) ttfts.push(r.ttftMs);
        }
      }
      try {
        options.onRecord?.(r);
      } catch {
        // a throwing listener must not break the run
      }
    };

    const dispatch = (spec: RequestSpec): Promise<void> => {
      const ctrl = new AbortController();
      const sentAt = epochNow();
      if (!spec.warmup) liveChunks.set(spec.index, 0);
      inFlight++;
      const done = (async () => {
        let rec: RequestRecord;
        try {
          rec = await c.send(spec, ctrl.signal, observer);
        } catch (e) {
          // The contract says send never rejects; if it does, the run still goes on.
          rec = failedRecord(spec, sentAt, ctrl.signal.aborted ? 'aborted' : 'other', e instanceof Error ? e.message : String(e));
        }
        // Without the server's usage, input tokens are the client's estimate (marked so), as vLLM's
        // benchmark counts them from the prompt rather than leaving total-token throughput short.
        if (rec.promptTokens === undefined && spec.prompt.estimatedTokens !== undefined) {
          rec = { ...rec, promptTokens: spec.prompt.estimatedTokens, promptTokensEstimated: true };
        }
        inFlight--;
        pending.delete(spec.index);
        finish(rec);
      })();
      pending.set(spec.index, { ctrl, spec, sentAt, done });
      return done;
    };

    const specFor = (index: number, warmup: boolean, k: number, scheduledAt: number): RequestSpec => {
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
    };

    /** N workers, each sending the next request when its last one ends, until `more(k)` says stop. */
    const closedLoop = async (workers: number, first: number, warmup: boolean, more: (k: number) => boolean) => {
      let k = 0;
      const worker = async () => {
        while (!signal?.aborted && more(k)) {
          const mine = k++;
          await dispatch(specFor(first + mine, warmup, mine, epochNow()));
        }
      };
      await Promise.all(Array.from({ length: workers }, worker));
    };

    const openLoop = async (rate: number, burstiness: number, maxConcurrency: number | undefined, first: number, more: (k: number, at: number) => boolean) => {
      // Seeded apart from the prompts so the arrival schedule is the same for any prompt source.
      const rng = new Rng(w.seed * 2654435761 + 0x51ed27);
      const slots = maxConcurrency !== undefined ? new Slots(maxConcurrency) : undefined;
      const sent: Promise<void>[] = [];
      let due = performance.now();
      for (let k = 0; !signal?.aborted && more(k, due); k++) {
        await sleepUntil(due, signal);
        if (signal?.aborted) break;
        const scheduledAt = performance.timeOrigin + due;
        if (slots && !(await slots.acquire(signal))) break;
        const p = dispatch(specFor(first + k, false, k, scheduledAt));
        if (slots) p.finally(() => slots.release()).catch(() => undefined);
        sent.push(p);
        due += interArrivalS(rng, rate, burstiness) * 1000;
      }
      await Promise.all(sent);
    };

    const phases = (async () => {
      // ---- warmup: excluded from statistics ----
      if (w.warmup > 0) {
        await closedLoop(Math.min(w.warmup, connectionsFor(w)), 0, true, (k) => k < w.warmup);
      }
      if (signal?.aborted) return;
      // ---- the measured phase ----
      phaseStart = performance.now();
      const deadline = w.durationS !== undefined ? phaseStart + w.durationS * 1000 : undefined;
      const first = w.warmup;
      if (w.mode.kind === 'closed') {
        await closedLoop(w.mode.concurrency, first, false, (k) => (total === undefined || k < total) && (deadline === undefined || performance.now() < deadline));
      } else {
        const m = w.mode;
        await openLoop(m.rate, m.burstiness, m.maxConcurrency, first, (k, at) => (total === undefined || k < total) && (deadline === undefined || at < deadline));
      }
      phaseEnd = performance.now();
    })();
    phases.catch(() => undefined);

    await Promise.race([phases, aborted.promise]);
    if (signal?.aborted) {
      phaseEnd ??= performance.now();
      for (const p of pending.values()) p.ctrl.abort();
      // Give the aborted requests a moment to come back with what they received; then record the rest ourselves.
      await Promise.race([Promise.all([...pending.values()].map((p) => p.done)), sleep(ABORT_GRACE_MS, undefined)]);
      for (const p of [...pending.values()]) finish(failedRecord(p.spec, p.sentAt, 'aborted', 'cancelled by the user'));
      return build(true, connection);
    }
    await phases;
    return build(false, connection);
  } finally {
    aborted.dispose();
    if (ticker) clearInterval(ticker);
    emit();
    if (client) {
      const closing = client.close().catch(() => undefined);
      // A cancelled run returns at once; the sockets finish closing behind it.
      if (signal?.aborted) await Promise.race([closing, sleep(CLOSE_GRACE_MS, undefined)]);
      else await closing;
    }
  }
}
