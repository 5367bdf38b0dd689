// The runner's accounting: the finished records (each request once), the live Progress counts, the
// measured phase's span, and progress reports (the first at once, then every 100 ms, a last at the end).
// With `streams` on (someone reads the progress), each report also carries the streams in flight as
// deltas (Progress.streams): the chunks that arrived since the last report, so that a live view
// draws lanes as they grow. The hot path (a chunk arriving) costs a map lookup and an array push.
import { realClock } from '../core/clock';
import type { Clock } from '../core/clock';
import { percentile } from '../core/stats';
import { cancelledByUser } from '../analysis/metrics';
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
  /** The indexes recorded: a bit each (a Set held about 30 bytes an index, a megabyte every 10 minutes of a 64-stream soak). */
  readonly #finished = new IndexSet();
  /** TTFT so far: its median kept as requests finish (a report every 100 ms must not sort an hour of them). */
  readonly #ttft = new RunningMedian();
  /** Requests in flight (warmup ones too): their chunks so far count in tokens/s before they end (measured ones), and stream to a live view. */
  readonly #inFlightStreams = new Map<number, InFlight>();
  readonly #streams: boolean;
  readonly #streamCap: number;
  #succeeded = 0;
  #failed = 0;
  /** Stopped by the user's Cancel: not failures (Summary.cancelled). */
  #cancelled = 0;
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
      if (cancelledByUser(r)) this.#cancelled++;
      else if (r.error) this.#failed++;
      else {
        this.#succeeded++;
        this.#tokens += r.outputTokens;
        if (r.ttftMs !== undefined) this.#ttft.add(r.ttftMs);
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
    const ttftP50Ms = this.#ttft.median();
    return {
      runId: this.#runId,
      succeeded: this.#succeeded,
      failed: this.#failed,
      ...(this.#cancelled > 0 ? { cancelled: this.#cancelled } : {}),
      finished: this.#succeeded + this.#failed,
      ...(this.#total !== undefined ? { total: this.#total } : {}),
      inFlight: this.#inFlight,
      ...(ttftP50Ms !== undefined ? { ttftP50Ms } : {}),
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

/** Non-negative integers as bits (request indexes are dense from 0); any other number in a Set beside them. */
export class IndexSet {
  #bits = new Uint8Array(1024);
  readonly #others = new Set<number>();

  has(i: number): boolean {
    return IndexSet.#bitwise(i) ? i >> 3 < this.#bits.length && (this.#bits[i >> 3]! & (1 << (i & 7))) !== 0 : this.#others.has(i);
  }

  add(i: number): void {
    if (!IndexSet.#bitwise(i)) {
      this.#others.add(i);
      return;
    }
    if (i >> 3 >= this.#bits.length) {
      const grown = new Uint8Array(Math.max(this.#bits.length * 2, (i >> 3) + 1));
      grown.set(this.#bits);
      this.#bits = grown;
    }
    this.#bits[i >> 3]! |= 1 << (i & 7);
  }

  /** Bits for the indexes a run has (below 2^26: 8 MB of bits at the most), a Set for anything else. */
  static #bitwise(i: number): boolean {
    return Number.isInteger(i) && i >= 0 && i < 2 ** 26;
  }
}

/**
 * The median of numbers added one at a time, as `percentile(sorted, 50)` gives it, in O(log n) per
 * number: the lower half in a max-heap, the upper half in a min-heap, the lower never smaller.
 */
export class RunningMedian {
  readonly #low = new Heap((a, b) => a > b);
  readonly #high = new Heap((a, b) => a < b);

  get count(): number {
    return this.#low.size + this.#high.size;
  }

  add(x: number): void {
    if (this.#low.size === 0 || x <= this.#low.top!) this.#low.push(x);
    else this.#high.push(x);
    if (this.#low.size > this.#high.size + 1) this.#high.push(this.#low.pop());
    else if (this.#high.size > this.#low.size) this.#low.push(this.#high.pop());
  }

  median(): number | undefined {
    if (this.#low.size === 0) return undefined;
    return this.#low.size > this.#high.size ? this.#low.top! : percentile([this.#low.top!, this.#high.top!], 50);
  }
}

/** A binary heap of numbers; `before(a, b)`: a belongs above b. */
class Heap {
  readonly #items: number[] = [];
  constructor(private readonly before: (a: number, b: number) => boolean) {}

  get size(): number {
    return this.#items.length;
  }

  get top(): number | undefined {
    return this.#items[0];
  }

  push(x: number): void {
    const a = this.#items;
    let i = a.push(x) - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.before(a[i]!, a[parent]!)) break;
      [a[i], a[parent]] = [a[parent]!, a[i]!];
      i = parent;
    }
  }

  pop(): number {
    const a = this.#items;
    const top = a[0]!;
    const last = a.pop()!;
    if (a.length === 0) return top;
    a[0] = last;
    for (let i = 0; ;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < a.length && this.before(a[l]!, a[m]!)) m = l;
      if (r < a.length && this.before(a[r]!, a[m]!)) m = r;
      if (m === i) break;
      [a[i], a[m]] = [a[m]!, a[i]!];
      i = m;
    }
    return top;
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
