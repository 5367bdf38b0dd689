// The bootstrap's kernel: a resample is a weight per request (how many times it was drawn), never a
// copied array, so one resample of n requests costs O(n) and no sort. Percentiles of a resample are
// read by walking the values sorted once, each weighted by its request's draws: the same number
// numpy.percentile gives on the expanded sample (np.repeat(values, weights)), linear method.
// Pure, no imports beyond core: the webview may use it.
import type { Rng } from '../core/random';

/** Values sorted ascending, each tagged with the request (cluster) it came from. */
export interface ClusteredValues {
  readonly sorted: Float64Array;
  /** The request of each sorted value (an index into the side's requests). */
  readonly owner: Uint32Array;
  /** How many values each request has: a resample's size is Σ weight × count, without walking the values. */
  readonly counts: Uint32Array;
  /** Each request's values summed: a resample's mean is Σ weight × sum / Σ weight × count. */
  readonly sums: Float64Array;
}

/** Sorts values given per request (one value for TTFT, a request's gaps for ITL) into a ClusteredValues. */
export function clusterValues(perRequest: readonly (readonly number[])[]): ClusteredValues {
  let n = 0;
  for (const vs of perRequest) n += vs.length;
  const flat = new Float64Array(n);
  const from = new Uint32Array(n);
  const sums = new Float64Array(perRequest.length);
  let k = 0;
  perRequest.forEach((vs, r) => {
    for (const v of vs) {
      flat[k] = v;
      from[k++] = r;
      sums[r]! += v;
    }
  });
  // an argsort without a tuple per value (millions of ITLs): indexes ordered by their value
  const order = new Uint32Array(n).map((_, i) => i).sort((i, j) => flat[i]! - flat[j]!);
  return {
    sorted: Float64Array.from(order, (i) => flat[i]!),
    owner: Uint32Array.from(order, (i) => from[i]!),
    counts: Uint32Array.from(perRequest, (vs) => vs.length),
    sums,
  };
}

/**
 * numpy's percentile (linear) of the sample in which value i appears weights[owner[i]] times, for each p
 * of `ps` (0–100, ascending). NaN when the weights sum to 0.
 */
export function weightedPercentiles(values: ClusteredValues, weights: ArrayLike<number>, ps: readonly number[]): number[] {
  const { sorted, owner, counts } = values;
  let total = 0;
  for (let r = 0; r < counts.length; r++) total += weights[r]! * counts[r]!;
  if (total === 0) return ps.map(() => Number.NaN);
  // each percentile needs the expanded sample's values at floor(h) and floor(h) + 1 (h = (W − 1)·p/100)
  const wants = ps.map((p) => {
    const h = ((total - 1) * p) / 100;
    const lo = Math.floor(h);
    return { lo, hi: Math.min(lo + 1, total - 1), t: h - lo };
  });
  const positions = [...new Set(wants.flatMap((w) => [w.lo, w.hi]))].sort((a, b) => a - b);
  const at = new Map<number, number>();
  let cum = 0;
  let next = 0;
  for (let i = 0; i < sorted.length && next < positions.length; i++) {
    cum += weights[owner[i]!]!; // expanded positions up to cum − 1 are filled once value i is counted
    while (next < positions.length && positions[next]! < cum) at.set(positions[next++]!, sorted[i]!);
  }
  return wants.map(({ lo, hi, t }) => lerp(at.get(lo)!, at.get(hi)!, t));
}

/** numpy's _lerp (as core/stats.ts): exact at t = 0 and t = 1. */
function lerp(a: number, b: number, t: number): number {
  const diff = b - a;
  return t >= 0.5 ? b - diff * (1 - t) : a + diff * t;
}

/** The mean of the sample in which value i appears weights[owner[i]] times. */
export function weightedMean(values: ClusteredValues, weights: ArrayLike<number>): number {
  let sum = 0;
  let total = 0;
  for (let r = 0; r < values.counts.length; r++) {
    sum += weights[r]! * values.sums[r]!;
    total += weights[r]! * values.counts[r]!;
  }
  return total === 0 ? Number.NaN : sum / total;
}

/**
 * One bootstrap draw of a side in two stages: `groups` (repetitions, or blocks) drawn with
 * replacement, then within each group drawn, its requests with replacement. With one group this is
 * the plain request bootstrap. `groupDraws`, when given, fixes the groups drawn (a paired A/B draws
 * the same blocks on both sides); `whole` takes each drawn group's requests as they are (a block
 * bootstrap of time blocks). Returns how many times each request was drawn.
 */
export function drawWeights(groups: readonly (readonly number[])[], requests: number, rng: Rng, groupDraws?: readonly number[], whole = false): Uint32Array {
  const weights = new Uint32Array(requests);
  const picks = groupDraws ?? drawGroups(groups.length, rng);
  for (const g of picks) {
    const members = groups[g]!;
    if (whole) for (const m of members) weights[m]!++;
    else for (let i = 0; i < members.length; i++) weights[members[rng.int(members.length)]!]!++;
  }
  return weights;
}

/** Which groups one draw takes: the group itself when there is one, else `count` draws with replacement. */
export function drawGroups(count: number, rng: Rng): number[] {
  if (count === 1) return [0];
  const picks: number[] = [];
  for (let i = 0; i < count; i++) picks.push(rng.int(count));
  return picks;
}
