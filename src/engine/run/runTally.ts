// The runner's accounting: the finished records (each request once), the live Progress counts, the
// measured phase's span, and progress reports (the first at once, then every 100 ms, a last at the end).
// With `streams` on (someone reads the progress), each report also carries the streams in flight as
// deltas (Progress.streams): the chunks that arrived since the last report, so that a live view
// draws lanes as they grow. The hot path (a chunk arriving) costs a map lookup and an array push.
import { realClock } from '../core/clock';
import type { Clock } from '../core/clock';
import { percentile } from '../core/stats';
import type { Progress, RequestRecord, StreamDelta } from '../core/types';

const PROGRESS_INTERVAL_MS = 100;
/** The most chunk times one report carries: the rest wait for the next (a report stays small at any stream count). */
const STREAM_CHUNKS_PER_REPORT = 20_000;

/** A request in flight: its chunks so far, and (with streams on) those not reported yet. */
interface InFlight {
  readonly warmup: boolean;
  readonly scheduledAt: number;
  readonly sentAt: number;
  chunks: number;
  /** Chunks already carried by a report. */
  reported: number;
  /** Arrival times (ms since sent) not reported yet. */
  fresh: number[];
  announced: boolean;
}

export interface TallyOptions {
  /** Keep the chunk times of requests in flight for Progress.streams. */
  readonly streams?: boolean;
  /** Chunk times per report (default STREAM_CHUNKS_PER_REPORT). */
  readonly streamChunksPerReport?: number;
}

export class RunTally {
  readonly #runId: string;
  #total: number | undefined;
  readonly #clock: Clock;
  readonly #runStart: number;
  readonly #records: RequestRecord[] = [];
  readonly #finished = new Set<number>();
  readonly #ttfts: number[] = [];
  /** Requests in flight (warmup ones too): their chunks so far count in tokens/s before they end (measured ones), and stream to a live view. */
  readonly #inFlightStreams = new Map<number, InFlight>();
  readonly #streams: boolean;
  readonly #streamCap: number;
  #succeeded = 0;
  #failed = 0;
  #tokens = 0;
  #inFlight = 0;
  #phaseStart: number | undefined;
  #phaseEnd: number | undefined;

  /** `total`: the planned measured requests, when known. */
  constructor(runId: string, total: number | undefined, clock: Clock = realClock, options: TallyOptions = {}) {
    this.#runId = runId;
    this.#total = total;
    this.#clock = clock;
    this.#runStart = clock.now();
    this.#streams = options.streams === true;
    this.#streamCap = Math.max(1, options.streamChunksPerReport ?? STREAM_CHUNKS_PER_REPORT);
  }

  /** `n` more measured requests planned, negative fewer (a multi-turn run's turns once its sessions are known; those a session ended early never sends). */
  expect(n: number): void {
    this.#total = Math.max(0, (this.#total ?? 0) + n);
  }

  /** A request was handed to the client (`sentAt`, `scheduledAt`: epoch ms, for the live view's lanes). */
  sent(index: number, warmup: boolean, sentAt = 0, scheduledAt = sentAt): void {
    this.#inFlightStreams.set(index, { warmup, scheduledAt, sentAt, chunks: 0, reported: 0, fresh: [], announced: false });
    this.#inFlight++;
  }

  /** A content chunk of a request in flight arrived, `atMs` after it was sent. */
  chunk(index: number, atMs = 0): void {
    const s = this.#inFlightStreams.get(index);
    if (s === undefined) return;
    s.chunks++;
    if (this.#streams) s.fresh.push(atMs);
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
    this.#inFlightStreams.delete(r.index);
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
    for (const s of this.#inFlightStreams.values()) if (!s.warmup) tokens += s.chunks;
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
      ...(this.#streams ? { streams: this.#takeStreams(), at: this.#clock.origin + this.#clock.now() } : {}),
    };
  }

  /** The deltas since the last report: each request once when new, then its new chunks, at most the cap's worth in all. */
  #takeStreams(): StreamDelta[] {
    const out: StreamDelta[] = [];
    let budget = this.#streamCap;
    for (const [index, s] of this.#inFlightStreams) {
      if (s.announced && (s.fresh.length === 0 || budget === 0)) continue;
      let chunkMs: number[] = [];
      if (budget > 0 && s.fresh.length > 0) {
        if (s.fresh.length <= budget) {
          chunkMs = s.fresh;
          s.fresh = [];
        } else {
          chunkMs = s.fresh.slice(0, budget);
          s.fresh = s.fresh.slice(budget);
        }
        budget -= chunkMs.length;
      }
      out.push({ index, ...(s.warmup ? { warmup: true } : {}), scheduledAt: s.scheduledAt, sentAt: s.sentAt, from: s.reported, chunkMs });
      s.reported += chunkMs.length;
      s.announced = true;
    }
    return out;
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
