// The ways a run sends its requests, apart from what is sent: a closed loop (N workers, each
// sending the next request when its last one ends), an open loop (arrivals on a seeded gamma
// schedule, as vLLM's get_request, optionally ramping its rate and capped by a max-concurrency
// semaphore) and a trace's replay (each request at its own time). Time comes from an injected Clock.
import { realClock } from '../core/clock';
import type { Clock } from '../core/clock';
import type { RampSpec, WorkloadMode } from '../core/types';
import { interArrivalS, Rng } from '../core/random';

export function sleep(ms: number, signal: AbortSignal | undefined, clock: Clock = realClock): Promise<void> {
  if (ms <= 0 || signal?.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clock.clearTimeout(t);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const t = clock.setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}

/**
 * Waits until clock.now() ≥ due. Node's timers run on a millisecond clock and may fire up to a
 * millisecond early; the last part is waited out in event-loop turns (setImmediate), which let I/O
 * (and so the stamping of other streams' chunks) run in between.
 */
export async function sleepUntil(due: number, signal: AbortSignal | undefined, clock: Clock = realClock): Promise<void> {
  for (;;) {
    if (signal?.aborted) return;
    const left = due - clock.now();
    if (left <= 0) return;
    if (left > 2) await sleep(left - 1, signal, clock);
    else await new Promise<void>((resolve) => clock.immediate(resolve));
  }
}

/** A counting semaphore (open-loop --max-concurrency). */
export class Slots {
  #free: number;
  readonly #waiters: (() => void)[] = [];

  constructor(n: number) {
    this.#free = n;
  }

  /** Resolves true once a slot is taken, false when the signal aborts first. */
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
 * Whether a phase sends its request k: fewer than `total` sent (when a count is set) and `at` (clock
 * ms) before the deadline (when a duration is set).
 */
export function withinPhase(total: number | undefined, deadline: number | undefined, k: number, at: number): boolean {
  return (total === undefined || k < total) && (deadline === undefined || at < deadline);
}

export interface ClosedLoopOptions {
  readonly workers: number;
  /** Whether request k (counted over all workers, from 0) is sent. Asked before each send. */
  more(k: number): boolean;
  /** Sends request k; resolves when it has ended (never rejects). */
  send(k: number): Promise<void>;
  readonly signal?: AbortSignal;
}

/** N workers, each sending the next request when its last one ends, until `more(k)` says stop. */
export async function closedLoop(o: ClosedLoopOptions): Promise<void> {
  let k = 0;
  const worker = async () => {
    while (!o.signal?.aborted && o.more(k)) {
      const mine = k++;
      await o.send(mine);
    }
  };
  await Promise.all(Array.from({ length: o.workers }, worker));
}

/**
 * The gaps between open-loop arrivals, ms: gamma with shape `burstiness` and mean 1/rate (random.ts
 * interArrivalS). Seeded apart from the prompts, so the arrival schedule is the same for any prompt source.
 */
export function arrivalGapsMs(seed: number, rate: number, burstiness: number): () => number {
  const gap = rampGapsMs(seed, burstiness);
  return () => gap(rate);
}

/** The same seeded gaps at whatever rate holds when each is drawn (a ramp's): the same draws as arrivalGapsMs at a fixed rate. */
export function rampGapsMs(seed: number, burstiness: number): (rate: number) => number {
  const rng = new Rng(seed * 2654435761 + 0x51ed27);
  return (rate) => interArrivalS(rng, rate, burstiness) * 1000;
}

/**
 * A ramp's rate at `progress` (0 at the first request, 1 at the last), as vLLM's benchmark_serving
 * `_get_current_request_rate` (vllm/benchmarks/serve.py): linear start + (end − start)·p, exponential
 * start·(end/start)^p, where vLLM's p is request_index / max(total − 1, 1).
 */
export function rampRate(ramp: RampSpec, end: number, progress: number): number {
  const p = Math.min(1, Math.max(0, progress));
  return ramp.kind === 'linear' ? ramp.start + (end - ramp.start) * p : ramp.start * (end / ramp.start) ** p;
}

/** An open loop's ramp and how its progress is measured: by requests (vLLM's k/(n−1)), else by the share of the duration gone. */
export interface OpenLoopRamp extends RampSpec {
  readonly requests?: number;
  readonly durationMs?: number;
}

export interface OpenLoopOptions {
  /** Arrivals per second. */
  readonly rate: number;
  readonly burstiness: number;
  /** The workload's seed (arrivalGapsMs). */
  readonly seed: number;
  /** The most requests in flight; later arrivals wait for a slot. None: uncapped. */
  readonly maxConcurrency?: number;
  /** From `ramp.start` req/s to `rate` over the run (vLLM's ramp-up); none: `rate` throughout. */
  readonly ramp?: OpenLoopRamp;
  /** Whether arrival k, due at `due` (clock ms), is sent. */
  more(k: number, due: number): boolean;
  /** Sends arrival k, due at `due`; resolves when it has ended (never rejects). */
  send(k: number, due: number): Promise<void>;
  readonly signal?: AbortSignal;
  readonly clock?: Clock;
}

/** The rate before arrival k, due after `elapsedMs` of the run: the ramp's, else the loop's rate. */
function rateFor(o: OpenLoopOptions): (k: number, elapsedMs: number) => number {
  const r = o.ramp;
  if (r === undefined) return () => o.rate;
  if (r.requests !== undefined) return (k) => rampRate(r, o.rate, k / Math.max(r.requests! - 1, 1));
  if (r.durationMs !== undefined && r.durationMs > 0) return (_k, elapsed) => rampRate(r, o.rate, elapsed / r.durationMs!);
  return () => r.start;
}

/** Sends each arrival at its time (the first at once), held back by the semaphore when capped; resolves when all have ended. */
export async function openLoop(o: OpenLoopOptions): Promise<void> {
  const clock = o.clock ?? realClock;
  const gap = rampGapsMs(o.seed, o.burstiness);
  const rate = rateFor(o);
  const slots = o.maxConcurrency !== undefined ? new Slots(o.maxConcurrency) : undefined;
  const sent: Promise<void>[] = [];
  const start = clock.now();
  let due = start;
  for (let k = 0; !o.signal?.aborted && o.more(k, due); k++) {
    await sleepUntil(due, o.signal, clock);
    if (o.signal?.aborted) break;
    if (slots && !(await slots.acquire(o.signal))) break;
    const p = o.send(k, due);
    if (slots) p.finally(() => slots.release()).catch(() => undefined);
    sent.push(p);
    // the gap before arrival k + 1 is drawn at its rate (vLLM samples request i's delay at rate i)
    due += gap(rate(k + 1, due - start));
  }
  await Promise.all(sent);
}

export interface TraceLoopOptions<P> {
  /** When each request is due, ms after the loop starts (a trace's times over its speed), ascending. */
  readonly offsetsMs: readonly number[];
  /** The most requests in flight; later ones wait for a slot. None: uncapped. */
  readonly maxConcurrency?: number;
  /** Whether request k, due at `due` (clock ms), is sent. */
  more(k: number, due: number): boolean;
  /** Plans request k before its time comes, so that building its prompt never makes it late. */
  prepare(k: number, due: number): P;
  /** Sends request k as planned; resolves when it has ended (never rejects). */
  send(planned: P, k: number): Promise<void>;
  readonly signal?: AbortSignal;
  readonly clock?: Clock;
}

/**
 * Sends request k at its offset after the start, held back by the semaphore when capped; resolves
 * when all have ended. Each request is planned before its time (a burst's, all of them before the
 * first goes), and after a send the next is planned only once the event loop has turned, so that the
 * request's bytes go out before the next prompt is built.
 */
export async function traceLoop<P>(o: TraceLoopOptions<P>): Promise<void> {
  const clock = o.clock ?? realClock;
  const slots = o.maxConcurrency !== undefined ? new Slots(o.maxConcurrency) : undefined;
  const sent: Promise<void>[] = [];
  const start = clock.now();
  const offsets = o.offsetsMs;
  const planned = new Map<number, P>();
  for (let k = 0; k < offsets.length && !o.signal?.aborted; k++) {
    const due = start + offsets[k]!;
    if (!o.more(k, due)) break;
    for (let j = k; j < offsets.length && offsets[j] === offsets[k]; j++) if (!planned.has(j)) planned.set(j, o.prepare(j, start + offsets[j]!));
    await sleepUntil(due, o.signal, clock);
    if (o.signal?.aborted) break;
    if (slots && !(await slots.acquire(o.signal))) break;
    const p = o.send(planned.get(k) as P, k);
    planned.delete(k);
    if (slots) p.finally(() => slots.release()).catch(() => undefined);
    sent.push(p);
    if (k + 1 < offsets.length && start + offsets[k + 1]! > clock.now()) await new Promise<void>((resolve) => clock.immediate(resolve));
  }
  await Promise.all(sent);
}

/** How much a phase paced by its mode sends: a count, a deadline (clock ms) or both; its arrival seed. */
export interface PacedPhase {
  readonly total?: number;
  readonly deadline?: number;
  /** The phase's duration, for a ramp over it (with no count). */
  readonly durationS?: number;
  readonly seed: number;
  readonly signal?: AbortSignal;
  readonly clock: Clock;
}

/**
 * Sends k = 0, 1, … as a closed or open loop paces them (a trace is paced by its own times:
 * traceLoop): send(k, due), `due` the clock's ms the send was meant for. The runner's requests and
 * the sessions of a multi-turn run both go through here.
 */
export async function paced(mode: Exclude<WorkloadMode, { kind: 'trace' }>, p: PacedPhase, send: (k: number, due: number) => Promise<void>): Promise<void> {
  const signal = p.signal ? { signal: p.signal } : {};
  if (mode.kind === 'closed') {
    await closedLoop({ workers: mode.concurrency, more: (k) => withinPhase(p.total, p.deadline, k, p.clock.now()), send: (k) => send(k, p.clock.now()), ...signal });
    return;
  }
  const over = p.total !== undefined ? { requests: p.total } : p.durationS !== undefined ? { durationMs: p.durationS * 1000 } : {};
  await openLoop({
    rate: mode.rate,
    burstiness: mode.burstiness,
    seed: p.seed,
    ...(mode.maxConcurrency !== undefined ? { maxConcurrency: mode.maxConcurrency } : {}),
    ...(mode.ramp ? { ramp: { ...mode.ramp, ...over } } : {}),
    more: (k, due) => withinPhase(p.total, p.deadline, k, due),
    send,
    ...signal,
    clock: p.clock,
  });
}
