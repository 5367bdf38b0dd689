// The two ways a run sends its requests, apart from what is sent: a closed loop (N workers, each
// sending the next request when its last one ends) and an open loop (arrivals on a seeded gamma
// schedule, as vLLM's get_request, optionally capped by a max-concurrency semaphore). Time comes
// from an injected Clock.
import { realClock } from '../core/clock';
import type { Clock } from '../core/clock';
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
  const rng = new Rng(seed * 2654435761 + 0x51ed27);
  return () => interArrivalS(rng, rate, burstiness) * 1000;
}

export interface OpenLoopOptions {
  /** Arrivals per second. */
  readonly rate: number;
  readonly burstiness: number;
  /** The workload's seed (arrivalGapsMs). */
  readonly seed: number;
  /** The most requests in flight; later arrivals wait for a slot. None: uncapped. */
  readonly maxConcurrency?: number;
  /** Whether arrival k, due at `due` (clock ms), is sent. */
  more(k: number, due: number): boolean;
  /** Sends arrival k, due at `due`; resolves when it has ended (never rejects). */
  send(k: number, due: number): Promise<void>;
  readonly signal?: AbortSignal;
  readonly clock?: Clock;
}

/** Sends each arrival at its time (the first at once), held back by the semaphore when capped; resolves when all have ended. */
export async function openLoop(o: OpenLoopOptions): Promise<void> {
  const clock = o.clock ?? realClock;
  const nextGap = arrivalGapsMs(o.seed, o.rate, o.burstiness);
  const slots = o.maxConcurrency !== undefined ? new Slots(o.maxConcurrency) : undefined;
  const sent: Promise<void>[] = [];
  let due = clock.now();
  for (let k = 0; !o.signal?.aborted && o.more(k, due); k++) {
    await sleepUntil(due, o.signal, clock);
    if (o.signal?.aborted) break;
    if (slots && !(await slots.acquire(o.signal))) break;
    const p = o.send(k, due);
    if (slots) p.finally(() => slots.release()).catch(() => undefined);
    sent.push(p);
    due += nextGap();
  }
  await Promise.all(sent);
}
