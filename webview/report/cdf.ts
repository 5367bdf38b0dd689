// Empirical CDFs, sampled down to a fixed number of points so a million ITLs draw as fast as a hundred.

export interface CdfPoint { readonly x: number; readonly y: number }

/** Sorts a copy ascending (typed array sort: numeric, no comparator cost). */
function sortedCopy(values: ArrayLike<number>): Float64Array {
  const a = Float64Array.from(values as ArrayLike<number>);
  a.sort();
  return a;
}

/**
 * The CDF of `values` as a step curve: y = share of samples ≤ x, in [0, 1]. At most `maxPoints`
 * points (plus the ends): the samples at evenly spaced ranks, always including the min and max so the
 * tail that matters (the p99 and beyond) is never cut off.
 */
export function buildCdf(values: ArrayLike<number>, maxPoints = 400, alreadySorted = false): CdfPoint[] {
  const s = alreadySorted ? values : sortedCopy(values);
  const n = s.length;
  if (n === 0) return [];
  const out: CdfPoint[] = [];
  if (n <= maxPoints) {
    for (let i = 0; i < n; i++) {
      // ties collapse to the highest rank, so y is exactly the share ≤ x
      if (i + 1 < n && s[i + 1] === s[i]) continue;
      out.push({ x: s[i]!, y: (i + 1) / n });
    }
    return out;
  }
  const step = (n - 1) / (maxPoints - 1);
  let last = -1;
  for (let k = 0; k < maxPoints; k++) {
    let i = k === maxPoints - 1 ? n - 1 : Math.round(k * step);
    while (i + 1 < n && s[i + 1] === s[i]) i++;
    if (i <= last) continue;
    out.push({ x: s[i]!, y: (i + 1) / n });
    last = i;
  }
  return out;
}

/** Numbers kept in ascending order as they come (each put in its place), for a CDF drawn again at every live update without sorting them all again. */
export class SortedSamples {
  #a = new Float64Array(256);
  #n = 0;

  add(x: number): void {
    if (this.#n === this.#a.length) {
      const b = new Float64Array(this.#a.length * 2);
      b.set(this.#a);
      this.#a = b;
    }
    let lo = 0;
    let hi = this.#n;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.#a[mid]! <= x) lo = mid + 1;
      else hi = mid;
    }
    this.#a.copyWithin(lo + 1, lo, this.#n);
    this.#a[lo] = x;
    this.#n++;
  }

  /** The samples so far, ascending (a view: valid until the next add). */
  get values(): Float64Array {
    return this.#a.subarray(0, this.#n);
  }
}
