// Per-second series over a run: output tokens per second and requests in flight, in 1 s buckets
// since the run's start. Pure, so it is tested in node and reused by live mode.

export interface SeriesRequest {
  /** ms since run start the request was sent. */
  readonly sent: number;
  /** ms since run start the request ended (last byte or error); undefined while in flight. */
  readonly end?: number;
  /** ms since run start of each content chunk. */
  readonly chunks: ArrayLike<number>;
  /** Tokens the request produced; spread evenly over its chunks (usage-based counts may exceed chunks). */
  readonly outputTokens: number;
}

export interface PerSecond {
  /** Bucket start times, s since run start. */
  readonly seconds: number[];
  readonly tokensPerSecond: number[];
  /** Mean requests in flight over each second (time-weighted, so a 0.5 s request counts 0.5). */
  readonly inFlight: number[];
}

export function perSecond(requests: readonly SeriesRequest[], endMs?: number): PerSecond {
  let last = endMs ?? 0;
  for (const r of requests) last = Math.max(last, lastOf(r));
  const n = Math.max(1, Math.ceil(last / 1000));
  const tokens = new Float64Array(n);
  const busy = new Float64Array(n);
  for (const r of requests) accumulate(r, tokens, busy, n, last);
  return rates(tokens, busy, 0, n, last);
}

/** Where a request's data ends: its end, else its send, or its last chunk if later. */
function lastOf(r: SeriesRequest): number {
  const end = r.end ?? r.sent;
  return r.chunks.length ? Math.max(end, r.chunks[r.chunks.length - 1]!) : end;
}

/**
 * A request's tokens and its time in flight, added to the 1 s buckets [0, n); one still in flight
 * ends at `last`. With `from`, the arrays hold the buckets [from, n) only (bucket b at b − from).
 */
function accumulate(r: SeriesRequest, tokens: Float64Array, busy: Float64Array, n: number, last: number, from = 0): void {
  const c = r.chunks.length;
  if (c > 0) {
    const perChunk = r.outputTokens > 0 ? r.outputTokens / c : 1;
    for (let i = 0; i < c; i++) {
      const b = Math.min(n - 1, Math.max(0, Math.floor(r.chunks[i]! / 1000)));
      if (b >= from) tokens[b - from]! += perChunk;
    }
  }
  const a = Math.max(0, r.sent);
  const e = Math.min(n * 1000, r.end ?? last);
  for (let b = Math.max(from, Math.floor(a / 1000)); b < n && b * 1000 < e; b++) {
    const lo = Math.max(a, b * 1000);
    const hi = Math.min(e, (b + 1) * 1000);
    if (hi > lo) busy[b - from]! += (hi - lo) / 1000;
  }
}

/** The buckets [from, n) as rates; the last may be partial: scaled to a rate over the time it covers. `extra` (buckets [from, n)) is added. */
function rates(tokens: ArrayLike<number>, busy: ArrayLike<number>, from: number, n: number, last: number, extra?: { tokens: Float64Array; busy: Float64Array }): PerSecond {
  const seconds: number[] = [];
  const tps: number[] = [];
  const inflight: number[] = [];
  for (let b = from; b < n; b++) {
    const width = b === n - 1 && last > b * 1000 ? Math.min(1, (last - b * 1000) / 1000) : 1;
    seconds.push(b);
    tps.push(((tokens[b] ?? 0) + (extra?.tokens[b - from] ?? 0)) / width);
    inflight.push(((busy[b] ?? 0) + (extra?.busy[b - from] ?? 0)) / width);
  }
  return { seconds, tokensPerSecond: tps, inFlight: inflight };
}

/**
 * Live mode's per-second series, kept as requests finish (each added once, its own chunks only), so
 * that an update costs what is new and what is in flight, not the whole run's chunks again. The
 * same figures as perSecond over the finished and in-flight requests together.
 */
export class LiveSeries {
  #tokens = new Float64Array(64);
  #busy = new Float64Array(64);
  #last = 0;

  /** A finished request (with its end). */
  add(r: SeriesRequest): void {
    const last = lastOf(r);
    const need = Math.ceil(last / 1000) + 1;
    if (need > this.#tokens.length) {
      const size = Math.max(need, this.#tokens.length * 2);
      const grow = (a: Float64Array): Float64Array<ArrayBuffer> => { const b = new Float64Array(size); b.set(a); return b; };
      this.#tokens = grow(this.#tokens);
      this.#busy = grow(this.#busy);
    }
    accumulate(r, this.#tokens, this.#busy, this.#tokens.length, last);
    this.#last = Math.max(this.#last, last);
  }

  /** The series with `inFlight` on top; `seconds`: only the last so many seconds. */
  perSecond(inFlight: readonly SeriesRequest[], seconds = Infinity): PerSecond {
    let last = this.#last;
    for (const r of inFlight) last = Math.max(last, lastOf(r));
    const n = Math.max(1, Math.ceil(last / 1000));
    const from = Math.max(0, n - seconds);
    // the requests in flight over the buckets shown only: an update's work does not grow with the run
    const tokens = this.#tokens;
    const extra = { tokens: new Float64Array(n - from), busy: new Float64Array(n - from) };
    // what perSecond puts in the last bucket (a chunk at exactly n s) is at n here: folded back
    if (n < tokens.length) extra.tokens[n - 1 - from]! += tokens[n]!;
    for (const r of inFlight) accumulate(r, extra.tokens, extra.busy, n, last, from);
    return rates(tokens, this.#busy, from, n, last, extra);
  }
}
