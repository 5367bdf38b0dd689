// The clock the runner's parts read, injected so that each part can be tested with fake time (as
// src/extension/liveThrottle.ts injects its own). The real one is performance.now(), read on one
// clock with the client's arrival stamps.

export interface Clock {
  /** Monotonic ms, performance.now()'s scale. */
  now(): number;
  /** Epoch ms at now() = 0 (performance.timeOrigin): epoch time = origin + now(). */
  readonly origin: number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
  /** Runs fn on a later turn of the event loop, after pending I/O (setImmediate). */
  immediate(fn: () => void): void;
}

export const realClock: Clock = {
  now: () => performance.now(),
  origin: performance.timeOrigin,
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (h) => clearTimeout(h as ReturnType<typeof setTimeout>),
  immediate: (fn) => {
    setImmediate(fn);
  },
};
