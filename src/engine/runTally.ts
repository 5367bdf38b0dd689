// The runner's accounting: the finished records (each request once), the live Progress counts, the
// measured phase's span, and progress reports (the first at once, then every 100 ms, a last at the end).
import { realClock } from './clock';
import type { Clock } from './clock';
import { percentile } from './stats';
import type { Progress, RequestRecord } from './types';

export const PROGRESS_INTERVAL_MS = 100;

export class RunTally {
  readonly #runId: string;
  readonly #total: number | undefined;
  readonly #clock: Clock;
  readonly #runStart: number;
  readonly #records: RequestRecord[] = [];
  readonly #finished = new Set<number>();
  readonly #ttfts: number[] = [];
  /** Content chunks so far of measured requests in flight (for tokens/s before they end). */
  readonly #liveChunks = new Map<number, number>();
  #succeeded = 0;
  #failed = 0;
  #tokens = 0;
  #inFlight = 0;
  #phaseStart: number | undefined;
  #phaseEnd: number | undefined;

  /** `total`: the planned measured requests, when known. */
  constructor(runId: string, total: number | undefined, clock: Clock = realClock) {
    this.#runId = runId;
    this.#total = total;
    this.#clock = clock;
    this.#runStart = clock.now();
  }

  /** A request was handed to the client. */
  sent(index: number, warmup: boolean): void {
    if (!warmup) this.#liveChunks.set(index, 0);
    this.#inFlight++;
  }

  /** A content chunk of a request in flight arrived. */
  chunk(index: number): void {
    const n = this.#liveChunks.get(index);
    if (n !== undefined) this.#liveChunks.set(index, n + 1);
  }

  /** The client gave a request back (its record follows through `record`). */
  returned(): void {
    this.#inFlight--;
  }

  /** A request's final record. False (and nothing counted) when that request was recorded already. */
  record(r: RequestRecord): boolean {
    if (this.#finished.has(r.index)) return false;
    this.#finished.add(r.index);
    this.#records.push(r);
    this.#liveChunks.delete(r.index);
    if (!r.warmup) {
      if (r.error) this.#failed++;
      else {
        this.#succeeded++;
        this.#tokens += r.outputTokens;
        if (r.ttftMs !== undefined) this.#ttfts.push(r.ttftMs);
      }
    }
    return true;
  }

  startPhase(): void {
    this.#phaseStart = this.#clock.now();
  }

  /** The measured phase ended (every request ended, or cancelled); a later call keeps the first end. */
  endPhase(): void {
    this.#phaseEnd ??= this.#clock.now();
  }

  /** The measured phase so far, s (vLLM's dur_s once ended); 0 before it starts. */
  phaseSeconds(): number {
    return this.#phaseStart === undefined ? 0 : ((this.#phaseEnd ?? this.#clock.now()) - this.#phaseStart) / 1000;
  }

  /** The records so far, in index order. */
  records(): RequestRecord[] {
    return [...this.#records].sort((a, b) => a.index - b.index);
  }

  progress(): Progress {
    let tokens = this.#tokens;
    for (const n of this.#liveChunks.values()) tokens += n;
    const phaseS = this.phaseSeconds();
    const sorted = [...this.#ttfts].sort((a, b) => a - b);
    return {
      runId: this.#runId,
      succeeded: this.#succeeded,
      failed: this.#failed,
      finished: this.#succeeded + this.#failed,
      ...(this.#total !== undefined ? { total: this.#total } : {}),
      inFlight: this.#inFlight,
      ...(sorted.length > 0 ? { ttftP50Ms: percentile(sorted, 50) } : {}),
      ...(phaseS > 0 ? { outputTokensPerSecond: tokens / phaseS } : {}),
      elapsedS: (this.#clock.now() - this.#runStart) / 1000,
    };
  }
}

/** Reports at once, then every `intervalMs` until `stop()`, which reports a last time. A throwing report is ignored. */
export class ProgressTicker {
  readonly #report: () => void;
  readonly #clock: Clock;
  readonly #intervalMs: number;
  #timer: unknown;
  #stopped = false;

  constructor(report: () => void, clock: Clock = realClock, intervalMs = PROGRESS_INTERVAL_MS) {
    this.#report = report;
    this.#clock = clock;
    this.#intervalMs = intervalMs;
    this.#tick();
  }

  stop(): void {
    if (this.#stopped) return;
    this.#stopped = true;
    this.#clock.clearTimeout(this.#timer);
    this.#emit();
  }

  readonly #tick = (): void => {
    if (this.#stopped) return;
    this.#emit();
    this.#timer = this.#clock.setTimeout(this.#tick, this.#intervalMs);
  };

  #emit(): void {
    try {
      this.#report();
    } catch {
      // a throwing listener must not break the run
    }
  }
}
