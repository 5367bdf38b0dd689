// A fake Clock (src/engine/core/clock.ts) for the runner's parts: time moves only when `run` fires the next
// timer, after every promise reaction queued so far has settled.
import type { Clock } from '../../src/engine/core/clock';

export class FakeClock implements Clock {
  t = 1000;
  readonly origin = 1_764_687_845_000;
  /** How long one event-loop turn (Clock.immediate) takes. */
  turnMs = 0.1;
  #timers: { at: number; fn: () => void; id: number }[] = [];
  #id = 0;

  now(): number {
    return this.t;
  }

  setTimeout(fn: () => void, ms: number): unknown {
    const id = ++this.#id;
    this.#timers.push({ at: this.t + Math.max(0, ms), fn, id });
    return id;
  }

  clearTimeout(handle: unknown): void {
    this.#timers = this.#timers.filter((x) => x.id !== handle);
  }

  immediate(fn: () => void): void {
    this.setTimeout(fn, this.turnMs);
  }

  get pendingTimers(): number {
    return this.#timers.length;
  }

  /** Fires timers in time order (settling promises between them) until none is left or the next is after `until`. */
  async run(until = Infinity): Promise<void> {
    for (;;) {
      await settle();
      let next: { at: number; fn: () => void; id: number } | undefined;
      for (const x of this.#timers) if (!next || x.at < next.at || (x.at === next.at && x.id < next.id)) next = x;
      if (!next || next.at > until) break;
      this.#timers = this.#timers.filter((x) => x !== next);
      this.t = Math.max(this.t, next.at);
      next.fn();
    }
    if (until !== Infinity) this.t = Math.max(this.t, until);
    await settle();
  }
}

/** Lets every promise reaction queued so far run (a real event-loop turn). */
export function settle(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
