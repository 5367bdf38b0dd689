// What the benchmarks print of a sample: count, median, p99 and max (numpy-linear percentiles, as
// src/engine/core/stats.ts), shared by bench/engine.ts and bench/workers.ts.
import { percentile } from '../src/engine/core/stats';

export interface Summary {
  readonly n: number;
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
}

export function summarize(values: readonly number[]): Summary {
  const s = Float64Array.from(values).sort();
  const sorted = Array.from(s);
  const q = (p: number) => (sorted.length === 0 ? NaN : percentile(sorted, p));
  return { n: s.length, p50: q(50), p99: q(99), max: s[s.length - 1] ?? NaN };
}

export const median = (xs: readonly number[]): number => summarize(xs).p50;
