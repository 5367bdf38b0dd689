// Batches live updates for the report panel: the first goes out at once, later ones at most every
// `intervalMs`, with the latest progress and every record gathered since the last flush. No
// `vscode` import, and the clock and timers are injected, so it is tested in plain node.
import { realClock } from '../engine/core/clock';
import type { Clock } from '../engine/core/clock';


/** The engine's clock, as far as the throttle reads it. */
export type ThrottleClock = Pick<Clock, 'now' | 'setTimeout' | 'clearTimeout'>;

export class LiveThrottle<P, R> {
  readonly #flush: (progress: P, records: R[]) => void;
  readonly #intervalMs: number;
  readonly #clock: ThrottleClock;
  #lastFlush = -Infinity;
  #timer: unknown;
  #progress: P | undefined;
  #records: R[] = [];
  #pending = false;
  #closed = false;

  constructor(flush: (progress: P, records: R[]) => void, intervalMs = 100, clock: ThrottleClock = realClock) {
    this.#flush = flush;
    this.#intervalMs = intervalMs;
    this.#clock = clock;
  }

  update(progress: P, records: readonly R[]): void {
    if (this.#closed) return;
    this.#progress = progress;
    for (const r of records) this.#records.push(r);
    this.#pending = true;
    if (this.#timer !== undefined) return;
    const wait = this.#lastFlush + this.#intervalMs - this.#clock.now();
    if (wait <= 0) this.#emit();
    else this.#timer = this.#clock.setTimeout(() => { this.#timer = undefined; this.#emit(); }, wait);
  }

  /** Sends anything still pending now (before the final message), then stops. */
  close(flushPending = true): void {
    if (this.#closed) return;
    if (this.#timer !== undefined) { this.#clock.clearTimeout(this.#timer); this.#timer = undefined; }
    if (flushPending) this.#emit();
    this.#closed = true;
  }

  #emit(): void {
    if (!this.#pending || this.#closed) return;
    const records = this.#records;
    this.#records = [];
    this.#pending = false;
    this.#lastFlush = this.#clock.now();
    this.#flush(this.#progress as P, records);
  }
}
