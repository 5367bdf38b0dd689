// Per-pixel reduction of a stream's chunk arrivals that never hides a gap: in each pixel bucket the
// largest gap that starts there is kept. A gap at least one bucket wide is always the largest in its
// start bucket (gaps do not overlap, so anything else starting in that bucket ended before it
// began and is shorter than a bucket), so every gap big enough to see survives the reduction.

export interface GapBuckets {
  /** Number of chunk arrivals inside each bucket. */
  readonly counts: Uint32Array;
  /** Start (same units as the input) of the largest gap starting in each bucket; NaN when none. */
  readonly gapStart: Float64Array;
  /** Length of that gap; 0 when none. */
  readonly gapLength: Float64Array;
}

/** First index i with times[i] >= value (times sorted ascending). */
export function lowerBound(times: ArrayLike<number>, value: number, lo = 0, hi = times.length): number {
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (times[mid]! < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * Reduces sorted arrival times to `buckets` equal buckets over [viewStart, viewEnd). Gaps are the
 * intervals between consecutive arrivals; one that begins before the view but ends inside it (or
 * spans it) is clipped to the view and counted in the first bucket, so a stall that started
 * off-screen still shows.
 */
export function largestGapPerBucket(
  times: ArrayLike<number>,
  viewStart: number,
  viewEnd: number,
  buckets: number,
  out?: GapBuckets,
): GapBuckets {
  const n = Math.max(1, Math.floor(buckets));
  const res: GapBuckets = out && out.counts.length === n
    ? out
    : { counts: new Uint32Array(n), gapStart: new Float64Array(n), gapLength: new Float64Array(n) };
  res.counts.fill(0);
  res.gapStart.fill(NaN);
  res.gapLength.fill(0);
  const span = viewEnd - viewStart;
  if (!(span > 0) || times.length === 0) return res;
  const scale = n / span;
  let i = lowerBound(times, viewStart);
  // the gap that straddles the left edge
  if (i > 0 && i < times.length) {
    const len = Math.min(times[i]!, viewEnd) - viewStart;
    if (len > 0) { res.gapStart[0] = viewStart; res.gapLength[0] = len; }
  }
  const len = times.length;
  for (; i < len; i++) {
    const t = times[i]!;
    if (t >= viewEnd) break;
    const b = Math.min(n - 1, Math.floor((t - viewStart) * scale));
    res.counts[b]!++;
    if (i + 1 < len) {
      const g = Math.min(times[i + 1]!, viewEnd) - t;
      if (g > res.gapLength[b]!) { res.gapLength[b] = g; res.gapStart[b] = t; }
    }
  }
  return res;
}
