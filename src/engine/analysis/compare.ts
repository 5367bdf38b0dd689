// Is NEW slower than BASE? Each figure of two runs (TTFT, TPOT, ITL, E2E at p50, p90, p99 and the
// mean; output throughput) with the difference, its 95% bootstrap interval and a verdict: slower,
// faster, or no difference these samples could detect (with the smallest change they could have).
//
// Method: a percentile bootstrap of the difference. Each side is resampled on its own: repetitions
// (`run --repeat`, an A/B's blocks) with replacement first, then requests within each repetition
// drawn, so drift between repetitions widens the interval; ITL is resampled by request (a request's
// gaps go together: they are not independent). When both sides are blocks of one `ab` run, the same
// blocks are drawn on both sides (paired), so a slow minute that hurt both cancels. Point values are
// the summary's own (numpy's linear percentiles over the successful measured requests).
import type { RequestRecord, RunFile } from '../core/types';
import { Rng } from '../core/random';
import { gapsOf, percentile } from '../core/stats';
import { tpotOf } from './metrics';
import { clusterValues, drawGroups, drawWeights, weightedMean, weightedPercentiles } from './resample';
import type { ClusteredValues } from './resample';

export const LATENCY_METRICS = ['ttft', 'tpot', 'itl', 'e2e'] as const;
export type LatencyMetric = (typeof LATENCY_METRICS)[number];
export type CompareMetric = LatencyMetric | 'throughput';
export const COMPARE_STATS = ['p50', 'p90', 'p99', 'mean'] as const;
export type CompareStat = (typeof COMPARE_STATS)[number] | 'value';
/** A row's name, as `--fail-on-regression` takes it: "ttft.p99", "tpot.mean", "throughput". */
export type RowKey = `${LatencyMetric}.${(typeof COMPARE_STATS)[number]}` | 'throughput';

/** The interval's level and the power the smallest detectable change is stated at. */
export const CONFIDENCE = 0.95;
export const POWER = 0.8;
/** Normal quantiles at 0.975 and 0.8 (scipy.stats.norm.ppf): the detectable change is (Z_CI + Z_POWER) standard errors. */
const Z_CI = 1.959963984540054;
const Z_POWER = 0.8416212335729143;
/** A percentile p is judged only when each side has at least this many values beyond it: n·min(p, 1 − p) ≥ 5. */
export const MIN_TAIL = 5;
/** Fewer successful requests than this on a side: no interval at all. */
export const MIN_REQUESTS = 10;
export const DEFAULT_RESAMPLES = 2000;
/** Fewer resamples for very large runs, so a comparison stays within seconds: resamples × values ≤ this. */
const WORK_BUDGET = 2e8;

export type RowVerdict = 'slower' | 'faster' | 'no-difference' | 'too-few' | 'absent';

export interface CompareRow {
  readonly key: RowKey;
  readonly metric: CompareMetric;
  readonly stat: CompareStat;
  readonly unit: 'ms' | 'tok/s';
  readonly base?: number;
  readonly next?: number;
  /** next − base, in the unit. */
  readonly diff?: number;
  /** (next − base) / base × 100; absent when base is 0. */
  readonly diffPct?: number;
  /** The 95% interval of the difference, in the unit and in %. */
  readonly ci?: readonly [number, number];
  readonly ciPct?: readonly [number, number];
  /** The smallest change, %, these samples would call with 80% power: (1.96 + 0.84) bootstrap standard errors. */
  readonly mdePct?: number;
  /** Standard error of the % difference (the bootstrap's), for the sample-size advice (on a `too-few` row too, as a rough guide). */
  readonly sePct?: number;
  readonly verdict: RowVerdict;
  /** Values each side has for this figure (requests; ITL: gaps). */
  readonly samples: { readonly base: number; readonly next: number };
  /** With `too-few`: the values a side needs for this percentile. */
  readonly needs?: number;
}

export interface ComparedSide {
  readonly runId: string;
  readonly startedAt: string;
  /** Successful measured requests compared. */
  readonly requests: number;
  /** Repetitions (or an A/B's blocks) resampled; 1 for a run without them. */
  readonly groups: number;
  /** A run without repetitions: the blocks of consecutive requests it was cut into. */
  readonly timeBlocks?: number;
}

export interface Comparison {
  readonly base: ComparedSide;
  readonly next: ComparedSide;
  readonly method: {
    readonly resamples: number;
    readonly confidence: number;
    readonly seed: number;
    readonly resampling: 'requests' | 'time blocks' | 'repetitions, then requests' | 'paired blocks, then requests';
    readonly minTail: number;
  };
  readonly rows: readonly CompareRow[];
}

export interface CompareOptions {
  readonly resamples?: number;
  readonly seed?: number;
  /** Draw the same groups on both sides (an `ab` run's blocks); used only when both have as many. */
  readonly paired?: boolean;
}

/** What is compared of one run (or one sweep point): its successful measured requests, grouped by repetition. */
export interface Side {
  readonly runId: string;
  readonly startedAt: string;
  readonly requests: readonly RequestRecord[];
  /** Indexes into `requests`: one list per repetition, or per time block of a run without repetitions. */
  readonly groups: readonly (readonly number[])[];
  /** The groups are time blocks of one run, drawn whole (a block bootstrap); else repetitions, requests drawn within each. */
  readonly whole?: boolean;
  /** Per request: its share of the run's wall time (e2e × group duration / the group's summed e2e), for throughput. */
  readonly timeShare: readonly number[];
}

/**
 * The side of a run to compare; `indexes` (into run.requests) picks a sweep point's requests, and
 * `durationS` is then that point's duration (the run's would spread a point's tokens over the whole sweep).
 */
export function sideOf(run: RunFile, indexes?: readonly number[], durationS?: number): Side {
  const pool = indexes ? indexes.map((i) => run.requests[i]!).filter(Boolean) : run.requests;
  const requests = pool.filter((r) => !r.warmup && r.error === undefined);
  const byRepeat = new Map<number, number[]>();
  requests.forEach((r, i) => {
    const g = r.repeat ?? 0;
    const members = byRepeat.get(g);
    if (members) members.push(i);
    else byRepeat.set(g, [i]);
  });
  const keys = [...byRepeat.keys()].sort((a, b) => a - b);
  const repeats = keys.map((k) => byRepeat.get(k)!);
  const seconds = (k: number): number => run.repeats?.find((r) => r.index === k)?.durationS ?? (keys.length === 1 ? (durationS ?? run.summary.durationS) : 0);
  const timeShare = new Array<number>(requests.length).fill(0);
  if (keys.length > 1) {
    keys.forEach((k, gi) => shareTime(requests, repeats[gi]!, seconds(k), timeShare));
    return { runId: run.id, startedAt: run.startedAt, requests, timeShare, groups: repeats };
  }
  const blocks = timeBlocks(requests);
  blockSeconds(requests, blocks, seconds(keys[0] ?? 0)).forEach((dur, b) => shareTime(requests, blocks[b]!, dur, timeShare));
  return { runId: run.id, startedAt: run.startedAt, requests, timeShare, groups: blocks, whole: true };
}

/** Spreads `seconds` of wall time over a group's requests in proportion to their E2E (its throughput's denominator). */
function shareTime(requests: readonly RequestRecord[], members: readonly number[], seconds: number, into: number[]): void {
  const e2eSum = members.reduce((s, i) => s + (requests[i]!.e2eMs ?? 0), 0);
  const dur = seconds > 0 ? seconds : e2eSum / 1000;
  for (const i of members) into[i] = e2eSum > 0 ? ((requests[i]!.e2eMs ?? 0) * dur) / e2eSum : dur / members.length;
}

/**
 * The wall time each time block stands for: from its first send to the next block's (the last block's
 * to the run's end, its ramp-down with it), so the blocks' times add up to the run's and a resample's
 * throughput carries the spread of how long its blocks took. Without the run's duration: E2E shares.
 */
function blockSeconds(requests: readonly RequestRecord[], blocks: readonly (readonly number[])[], durationS: number): number[] {
  const starts = blocks.map((b) => b.reduce((t, i) => Math.min(t, requests[i]!.sentAt), Infinity));
  const end = starts[0]! + durationS * 1000;
  const times = starts.map((t, b) => ((b + 1 < starts.length ? starts[b + 1]! : end) - t) / 1000);
  return durationS > 0 && times.every((t) => t > 0) ? times : blocks.map(() => 0);
}

/**
 * A run without repetitions, cut by send time into blocks of consecutive requests, drawn whole (a block
 * bootstrap). Requests in flight together share the server's steps, and a busy second slows every
 * request in it: they are not independent, and drawing them one by one would make the interval too
 * narrow. A block holds at least as many requests as were in flight on average (Little's law: summed
 * E2E over the wall time) and at least √n; there are 2 to 20 blocks.
 */
export function timeBlocks(requests: readonly RequestRecord[]): number[][] {
  const order = requests.map((_, i) => i).sort((a, b) => requests[a]!.sentAt - requests[b]!.sentAt || a - b);
  const n = order.length;
  const size = Math.max(Math.round(Math.sqrt(n)), Math.ceil(inFlight(requests)));
  const k = Math.max(1, Math.min(20, Math.floor(n / Math.max(1, size)), Math.floor(n / 2)), Math.min(2, Math.floor(n / 2)));
  return Array.from({ length: k }, (_, b) => order.slice(Math.floor((b * n) / k), Math.floor(((b + 1) * n) / k)));
}

/** Requests in flight on average over the requests' own span: their summed E2E over the span (Little's law). */
function inFlight(requests: readonly RequestRecord[]): number {
  let start = Infinity;
  let end = -Infinity;
  let busy = 0;
  for (const r of requests) {
    const e2e = r.e2eMs ?? 0;
    start = Math.min(start, r.sentAt);
    end = Math.max(end, r.sentAt + e2e);
    busy += e2e;
  }
  return end > start ? busy / (end - start) : 1;
}

/** A side's values per figure, sorted once, tagged by request. */
interface Prepared {
  readonly side: Side;
  readonly latency: Readonly<Record<LatencyMetric, ClusteredValues>>;
  readonly out: Float64Array;
  readonly share: Float64Array;
}

function prepare(side: Side): Prepared {
  const one = (v: number | undefined): number[] => (v === undefined ? [] : [v]);
  const rs = side.requests;
  return {
    side,
    latency: {
      ttft: clusterValues(rs.map((r) => one(r.ttftMs))),
      tpot: clusterValues(rs.map((r) => one(tpotOf(r)))),
      itl: clusterValues(rs.map((r) => gapsOf(r.chunkTimesMs))),
      e2e: clusterValues(rs.map((r) => one(r.e2eMs))),
    },
    out: Float64Array.from(rs, (r) => r.outputTokens),
    share: Float64Array.from(side.timeShare),
  };
}

const PS = [50, 90, 99] as const;

/** Every figure of a side under one set of request weights, in row order. */
function figures(p: Prepared, w: ArrayLike<number>): number[] {
  const out: number[] = [];
  for (const m of LATENCY_METRICS) {
    const v = p.latency[m];
    if (v.sorted.length === 0) out.push(Number.NaN, Number.NaN, Number.NaN, Number.NaN);
    else out.push(...weightedPercentiles(v, w, PS), weightedMean(v, w));
  }
  let tok = 0;
  let time = 0;
  for (let i = 0; i < p.out.length; i++) {
    tok += w[i]! * p.out[i]!;
    time += w[i]! * p.share[i]!;
  }
  out.push(time > 0 ? tok / time : Number.NaN);
  return out;
}

interface RowSpec {
  readonly key: RowKey;
  readonly metric: CompareMetric;
  readonly stat: CompareStat;
  readonly p?: number;
}

/** The rows, in the order `figures` gives their values. */
export const ROW_SPECS: readonly RowSpec[] = [
  ...LATENCY_METRICS.flatMap((metric) => [
    ...PS.map((p): RowSpec => ({ key: `${metric}.p${p}`, metric, stat: `p${p}`, p })),
    { key: `${metric}.mean` as RowKey, metric, stat: 'mean' as const },
  ]),
  { key: 'throughput', metric: 'throughput', stat: 'value' },
];

/** Values a side has for a row's figure. */
function countOf(p: Prepared, spec: RowSpec): number {
  return spec.metric === 'throughput' ? p.side.requests.length : p.latency[spec.metric].sorted.length;
}

/** The values a percentile needs on each side to be judged (MIN_TAIL beyond it), at least MIN_REQUESTS. */
export function valuesNeeded(p: number | undefined): number {
  if (p === undefined) return MIN_REQUESTS;
  return Math.max(MIN_REQUESTS, Math.ceil((MIN_TAIL * 100) / Math.min(p, 100 - p) - 1e-9));
}

/** Compares two sides (runs, or sweep points). Deterministic for a seed. */
export function compareSides(base: Side, next: Side, options: CompareOptions = {}): Comparison {
  const a = prepare(base);
  const b = prepare(next);
  const seed = options.seed ?? 0;
  const paired = options.paired === true && base.groups.length > 1 && base.groups.length === next.groups.length;
  const resamples = resampleCount(a, b, options.resamples);
  const rng = new Rng(seed);
  const pa = figures(a, ones(base.requests.length));
  const pb = figures(b, ones(next.requests.length));
  const diffs = ROW_SPECS.map(() => [] as number[]);
  const pcts = ROW_SPECS.map(() => [] as number[]);
  const [ca, cb] = [blockCorrection(base), blockCorrection(next)];
  for (let k = 0; k < resamples; k++) {
    const picks = paired ? drawGroups(base.groups.length, rng) : undefined;
    const fa = widen(figures(a, drawWeights(base.groups, base.requests.length, rng, picks, base.whole)), pa, ca);
    const fb = widen(figures(b, drawWeights(next.groups, next.requests.length, rng, picks, next.whole)), pb, cb);
    ROW_SPECS.forEach((_, i) => {
      if (!Number.isFinite(fa[i]!) || !Number.isFinite(fb[i]!)) return;
      diffs[i]!.push(fb[i]! - fa[i]!);
      if (fa[i]! > 0) pcts[i]!.push(((fb[i]! - fa[i]!) / fa[i]!) * 100);
    });
  }
  const rows = ROW_SPECS.map((spec, i) => rowOf(spec, { a, b, base: pa[i]!, next: pb[i]!, diffs: diffs[i]!, pcts: pcts[i]! }));
  return {
    base: sideInfo(base),
    next: sideInfo(next),
    method: {
      resamples,
      confidence: CONFIDENCE,
      seed,
      resampling: resamplingOf(base, next, paired),
      minTail: MIN_TAIL,
    },
    rows,
  };
}

/**
 * Drawing k blocks whole with replacement spreads a figure by (k − 1)/k of its true variance (the
 * bootstrap's n − 1 against n, which matters when n is a handful of blocks): √(k / (k − 1)) undoes it.
 */
function blockCorrection(s: Side): number {
  const k = s.groups.length;
  return s.whole && k > 1 ? Math.sqrt(k / (k - 1)) : 1;
}

/** Each resampled figure moved away from the point figure by `factor`. */
function widen(resampled: number[], point: readonly number[], factor: number): number[] {
  if (factor === 1) return resampled;
  return resampled.map((v, i) => point[i]! + (v - point[i]!) * factor);
}

function resamplingOf(base: Side, next: Side, paired: boolean): Comparison['method']['resampling'] {
  if (paired) return 'paired blocks, then requests';
  const repeated = (s: Side): boolean => s.groups.length > 1 && !s.whole;
  if (repeated(base) || repeated(next)) return 'repetitions, then requests';
  return base.whole || next.whole ? 'time blocks' : 'requests';
}

function ones(n: number): Uint32Array {
  return new Uint32Array(n).fill(1);
}

function sideInfo(s: Side): ComparedSide {
  const counts = s.whole ? { groups: 1, timeBlocks: s.groups.length } : { groups: s.groups.length };
  return { runId: s.runId, startedAt: s.startedAt, requests: s.requests.length, ...counts };
}

function resampleCount(a: Prepared, b: Prepared, asked: number | undefined): number {
  if (asked !== undefined) return asked;
  const values = (p: Prepared): number => LATENCY_METRICS.reduce((s, m) => s + p.latency[m].sorted.length, 0) + p.out.length;
  const work = values(a) + values(b);
  return Math.max(200, Math.min(DEFAULT_RESAMPLES, Math.floor(WORK_BUDGET / Math.max(1, work))));
}

interface RowInput {
  readonly a: Prepared;
  readonly b: Prepared;
  readonly base: number;
  readonly next: number;
  readonly diffs: number[];
  readonly pcts: number[];
}

function rowOf(spec: RowSpec, x: RowInput): CompareRow {
  const samples = { base: countOf(x.a, spec), next: countOf(x.b, spec) };
  const head = { key: spec.key, metric: spec.metric, stat: spec.stat, unit: spec.metric === 'throughput' ? ('tok/s' as const) : ('ms' as const), samples };
  if (!Number.isFinite(x.base) || !Number.isFinite(x.next)) {
    return { ...head, ...(Number.isFinite(x.base) ? { base: x.base } : {}), ...(Number.isFinite(x.next) ? { next: x.next } : {}), verdict: 'absent' };
  }
  const values = { base: x.base, next: x.next, diff: x.next - x.base, ...(x.base > 0 ? { diffPct: ((x.next - x.base) / x.base) * 100 } : {}) };
  const needs = valuesNeeded(spec.p);
  const fewRequests = Math.min(x.a.side.requests.length, x.b.side.requests.length) < MIN_REQUESTS;
  if (fewRequests || Math.min(samples.base, samples.next) < needs) {
    // the error is still a guide for the sample-size advice, not for a verdict
    return { ...head, ...values, verdict: 'too-few', needs, ...(x.pcts.length > 1 ? { sePct: std(x.pcts) } : {}) };
  }
  const ci = interval(x.diffs);
  const ciPct = x.pcts.length === x.diffs.length && x.pcts.length > 0 ? interval(x.pcts) : undefined;
  const sePct = ciPct ? std(x.pcts) : undefined;
  return {
    ...head,
    ...values,
    ci,
    ...(ciPct ? { ciPct, sePct, mdePct: (Z_CI + Z_POWER) * sePct! } : {}),
    verdict: verdictOf(spec.metric === 'throughput', ciPct ?? ci),
  };
}

/** The central 95% of the bootstrap differences (numpy's linear percentiles of them). */
function interval(values: readonly number[]): readonly [number, number] {
  const sorted = Float64Array.from(values).sort();
  const tail = ((1 - CONFIDENCE) / 2) * 100;
  return [percentile(sorted, tail), percentile(sorted, 100 - tail)];
}

function std(values: readonly number[]): number {
  const mean = values.reduce((s, v) => s + v, 0) / values.length;
  return Math.sqrt(values.reduce((s, v) => s + (v - mean) ** 2, 0) / Math.max(1, values.length - 1));
}

/** Latency: slower when the whole interval is above 0. Throughput: slower when it is below 0. */
function verdictOf(higherIsBetter: boolean, [lo, hi]: readonly [number, number]): RowVerdict {
  if (lo > 0) return higherIsBetter ? 'faster' : 'slower';
  if (hi < 0) return higherIsBetter ? 'slower' : 'faster';
  return 'no-difference';
}

/** Two runs compared as wholes; `paired` is decided from their `ab` records (the same pair, as many blocks). */
export function compareRuns(base: RunFile, next: RunFile, options: Omit<CompareOptions, 'paired'> = {}): Comparison {
  const paired = base.ab !== undefined && next.ab !== undefined && base.ab.pairId === next.ab.pairId;
  return compareSides(sideOf(base), sideOf(next), { ...options, paired });
}

/**
 * Requests a side needs (each side) for `changePct` to be detected at 95% with 80% power at this
 * row, from the row's own standard error: the error shrinks as 1/√n. Undefined without an error.
 */
export function requestsToDetect(row: CompareRow, sides: { readonly base: number; readonly next: number }, changePct: number): number | undefined {
  if (row.sePct === undefined || !(changePct > 0)) return undefined;
  // se² = σ²·(1/nb + 1/nn); both sides of m: se² = 2σ²/m; want (Z_CI + Z_POWER)·se ≤ change
  const sigma2 = row.sePct ** 2 / (1 / sides.base + 1 / sides.next);
  const m = Math.ceil((2 * sigma2 * (Z_CI + Z_POWER) ** 2) / changePct ** 2);
  const spec = ROW_SPECS.find((s) => s.key === row.key);
  return Math.max(m, valuesNeeded(spec?.p));
}

/**
 * How many requests a run of this spread needs to detect `changePct` at each row: the run compared
 * with itself as if measured twice (so its own noise enters twice, as between two real runs).
 */
export function adviseSampleSize(run: RunFile, changePct: number, options: Omit<CompareOptions, 'paired'> = {}): { readonly key: RowKey; readonly requests?: number; readonly mdePct?: number }[] {
  const side = sideOf(run);
  const self = compareSides(side, side, options);
  const n = { base: side.requests.length, next: side.requests.length };
  return self.rows.map((r) => ({ key: r.key, ...optional('requests', requestsToDetect(r, n, changePct)), ...optional('mdePct', r.mdePct) }));
}

function optional<K extends string>(key: K, value: number | undefined): { [P in K]?: number } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: number };
}

/** One sweep point of both runs compared, matched by label; a label on one side only is named. */
export interface PointComparison {
  readonly label: string;
  readonly comparison?: Comparison;
  /** The side that lacks this point. */
  readonly missing?: 'base' | 'next';
}

/** Two sweeps compared point by point (points matched by their label: "c=4", "rate=2", "prompt=256"). */
export function comparePoints(base: RunFile, next: RunFile, options: Omit<CompareOptions, 'paired'> = {}): PointComparison[] {
  const bp = base.sweep?.points ?? [];
  const np = next.sweep?.points ?? [];
  const labels = [...new Set([...bp.map((p) => p.label), ...np.map((p) => p.label)])];
  return labels.map((label): PointComparison => {
    const a = bp.find((p) => p.label === label);
    const b = np.find((p) => p.label === label);
    if (!a) return { label, missing: 'base' };
    if (!b) return { label, missing: 'next' };
    return { label, comparison: compareSides(sideOf(base, a.requestIndexes, a.summary.durationS), sideOf(next, b.requestIndexes, b.summary.durationS), options) };
  });
}
