// What worker threads share with each other and the main thread: the split of a loop's streams over
// the threads, and the cells of one SharedArrayBuffer read and written with Atomics (the next request
// a closed loop claims, open-loop arrivals taking --max-concurrency slots in their order). No clock:
// waits are Atomics.waitAsync on a cell, woken by Atomics.notify.

/** The cells of the shared Int32Array. */
export const CELL = {
  /** The next warmup request to claim (k, from 0). */
  warmupNext: 0,
  /** The next measured request to claim (k, from 0). */
  measuredNext: 1,
  /** Open loop with --max-concurrency: the arrival whose turn it is to take a slot. */
  ticket: 2,
  /** Open loop with --max-concurrency: slots taken (requests in flight). */
  used: 3,
  /** Then one cell per thread: the slots it holds (given back for it when it dies). */
  held: 4,
} as const;

/** The cells for `threads` threads. */
export function sharedCells(threads = 1): Int32Array {
  return new Int32Array(new SharedArrayBuffer((CELL.held + threads) * Int32Array.BYTES_PER_ELEMENT));
}

/**
 * Gives back the slots a thread that died held: its requests in flight will never release them, and
 * without this the living threads would wait for slots that never come free.
 */
export function releaseHeld(cells: Int32Array, thread: number): number {
  const n = Atomics.exchange(cells, CELL.held + thread, 0);
  if (n > 0) {
    Atomics.sub(cells, CELL.used, n);
    Atomics.notify(cells, CELL.used);
  }
  return n;
}

/** `total` streams over `threads` as evenly as possible, the larger shares first (5 over 2: 3 + 2). */
export function splitEvenly(total: number, threads: number): number[] {
  const n = Math.max(1, Math.floor(threads));
  const base = Math.floor(total / n);
  const extra = total - base * n;
  return Array.from({ length: n }, (_, i) => base + (i < extra ? 1 : 0));
}

/** Claims the next k from a counter shared by every thread: each k is taken once, in order over all of them. */
export function claim(cells: Int32Array, at: number): number {
  return Atomics.add(cells, at, 1);
}

/** How long one wait lasts before the signal is looked at again, ms. */
const WAIT_SLICE_MS = 50;

type WaitAsync = (a: Int32Array, index: number, value: number, timeout?: number) => { async: boolean; value: Promise<string> | string };

/**
 * Resolves once cells[at] may no longer be `value` (or after a slice, to look at the signal again).
 * A pending Atomics.waitAsync does not keep Node's event loop alive: a timer of the slice's length does.
 */
function changed(cells: Int32Array, at: number, value: number): Promise<unknown> | undefined {
  const r = (Atomics as unknown as { waitAsync: WaitAsync }).waitAsync(cells, at, value, WAIT_SLICE_MS);
  if (!r.async) return undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const slice = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, WAIT_SLICE_MS);
  });
  return Promise.race([r.value as Promise<string>, slice]).finally(() => clearTimeout(timer));
}

/**
 * A counting semaphore over threads (open-loop --max-concurrency across worker threads), taken in
 * arrival order: arrival k takes a slot only after arrival k − 1 has, as one loop's arrivals do (each
 * waits for its slot before the next is looked at). Every arrival from 0 up must come to `acquire`
 * once (or the run be aborted), or the ones after it wait. One past its turn (its thread took the
 * turn, then died before sending it, and it was handed to another) takes a slot without waiting.
 */
export class SharedSlots {
  readonly #cells: Int32Array;
  readonly #max: number;
  /** This thread's cell of slots held, when it has one. */
  readonly #held: number | undefined;

  constructor(cells: Int32Array, max: number, thread?: number) {
    this.#cells = cells;
    this.#max = max;
    this.#held = thread !== undefined && CELL.held + thread < cells.length ? CELL.held + thread : undefined;
  }

  /** Resolves true once arrival `k` holds a slot, false when the signal aborts first. */
  async acquire(k: number, signal: AbortSignal | undefined): Promise<boolean> {
    const c = this.#cells;
    for (;;) {
      if (signal?.aborted) return false;
      // past its turn: an arrival a thread took its turn for, then died before sending, handed on
      const turn = Atomics.load(c, CELL.ticket);
      if (turn >= k) break;
      await changed(c, CELL.ticket, turn);
    }
    for (;;) {
      if (signal?.aborted) return false;
      const used = Atomics.load(c, CELL.used);
      if (used < this.#max) {
        if (Atomics.compareExchange(c, CELL.used, used, used + 1) === used) {
          if (this.#held !== undefined) Atomics.add(c, this.#held, 1);
          break;
        }
        continue;
      }
      await changed(c, CELL.used, used);
    }
    if (Atomics.compareExchange(c, CELL.ticket, k, k + 1) === k) Atomics.notify(c, CELL.ticket);
    return true;
  }

  release(): void {
    if (this.#held !== undefined) Atomics.sub(this.#cells, this.#held, 1);
    Atomics.sub(this.#cells, CELL.used, 1);
    Atomics.notify(this.#cells, CELL.used);
  }

  /** Slots taken now. */
  get used(): number {
    return Atomics.load(this.#cells, CELL.used);
  }
}
