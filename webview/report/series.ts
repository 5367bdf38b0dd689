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
  for (const r of requests) {
    last = Math.max(last, r.end ?? r.sent);
    if (r.chunks.length) last = Math.max(last, r.chunks[r.chunks.length - 1]!);
  }
  const n = Math.max(1, Math.ceil(last / 1000));
  const tokens = new Float64Array(n);
  const busy = new Float64Array(n);
  for (const r of requests) {
    const c = r.chunks.length;
    if (c > 0) {
      const perChunk = r.outputTokens > 0 ? r.outputTokens / c : 1;
      for (let i = 0; i < c; i++) {
        const b = Math.min(n - 1, Math.max(0, Math.floor(r.chunks[i]! / 1000)));
        tokens[b]! += perChunk;
      }
    }
    const a = Math.max(0, r.sent);
    const e = Math.min(n * 1000, r.end ?? last);
    for (let b = Math.floor(a / 1000); b < n && b * 1000 < e; b++) {
      const lo = Math.max(a, b * 1000);
      const hi = Math.min(e, (b + 1) * 1000);
      if (hi > lo) busy[b]! += (hi - lo) / 1000;
    }
  }
  // the last bucket may be partial: scale it to a rate over the time it covers
  const seconds: number[] = [];
  const tps: number[] = [];
  const inflight: number[] = [];
  for (let b = 0; b < n; b++) {
    const width = b === n - 1 && last > b * 1000 ? Math.min(1, (last - b * 1000) / 1000) : 1;
    seconds.push(b);
    tps.push(tokens[b]! / width);
    inflight.push(busy[b]! / width);
  }
  return { seconds, tokensPerSecond: tps, inFlight: inflight };
}
