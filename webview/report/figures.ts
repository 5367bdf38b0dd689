// The report's figures as data, before any DOM: the headline tiles, the percentile table's rows, the
// compare table's rows, the verdicts of a comparison with their intervals, and the metrics the CDFs draw, each from the metric catalogue
// (src/present/metricCatalogue.ts). views.ts and app.ts render them; unit tests read them under node.
import type { RunFile, SloSpec, Stats, Summary } from '../../src/engine/core/types';
import { SLO_PERCENTILE } from '../../src/engine/analysis/metrics';
import { prefixCacheSplitLine } from '../../src/present/cacheCheckText';
import { connectionRetriesLine, rateLimitLine, statusCounts } from '../../src/present/retryText';
import { formatInt, formatMs, formatNumber, formatPercent, formatPrecise } from '../../src/present/units';
import { measuresProxy, stallRule, stallsAlarm, stallTotalText, stalledStreams } from '../../src/present/whereText';
import { UNKNOWN_STALL_CAUSE, UNKNOWN_STALL_SHORT } from '../../src/engine/analysis/stalls';
import { itlBurstNote } from '../../src/present/runText';
import { cancelledCount, noneCompleted } from '../../src/present/outcomeText';
import { figureValue, latenciesFor, latencyStats, metricsFor, type FigureMetric, type LatencyMetric, type Metric } from '../../src/present/metricCatalogue';
import type { Comparison, CompareRow as EngineCompareRow } from '../../src/engine/analysis/compare';
import { rowSentence } from '../../src/present/compareText';
import { niceTicks } from './ticks';

/** What a latency behind a buffer times instead of the server. */
export const PROXY_NOTE = 'measures the proxy, not the server';

/** A headline tile. `metric`: the catalogue row it shows. */
export interface Figure {
  readonly id: string;
  readonly metric: Metric;
  readonly label: string;
  readonly value: string;
  readonly raw?: number;
  readonly slo?: keyof SloSpec;
  readonly sloValue?: number;
  readonly bad?: boolean;
  readonly note?: string;
  readonly proxy?: boolean;
  /** The tile's tooltip: what the figure means, its value in full, and what its note stands for. */
  readonly tip?: string;
  /** What the figure means with this run's own numbers, in place of the catalogue's words (a stall: its factor and floor): said once. */
  readonly means?: string;
}

/** The percentile an SLO is judged at: the tile of that percentile carries the SLO. */
const SLO_STAT = `p${SLO_PERCENTILE}`;

/** An imported run's figure its file cannot give (ITL without chunk times): "–", never the 0 of an empty set. */
export function absent(run: RunFile, st: Stats | undefined): boolean {
  return run.importedFrom !== undefined && !st?.count;
}

/** Whether an imported run's file had chunk arrival times: without them no stall can be found (a stall is a gap between chunks). */
export function noChunks(run: RunFile): boolean {
  return run.importedFrom !== undefined && !run.requests.some((r) => (r.chunkTimesMs?.length ?? 0) > 0);
}

/** A latency's tiles, one per headline percentile; the SLO on the one it is judged at. */
function latencyTiles(m: LatencyMetric, run: RunFile, proxy: boolean): Figure[] {
  const st = latencyStats(m, run.summary);
  // not in an imported file, or no request to measure it over (none completed): "–", never the 0 of an empty set
  const none = absent(run, st) || !st?.count;
  const sloValue = m.slo ? run.workload?.slo?.[m.slo] : undefined;
  return m.headline.map((stat) => {
    const raw = none ? undefined : st?.[stat];
    const judged = m.slo !== undefined && stat === SLO_STAT && !none;
    return {
      id: `${m.id}-${stat}`, metric: m, label: `${m.label} ${stat}`, value: formatMs(raw), raw,
      ...(judged ? { slo: m.slo, sloValue } : {}),
      ...(proxy && m.proxy ? { proxy: true, note: PROXY_NOTE } : m.key === 'itlMs' && itlBurstNote(run.summary) ? { note: 'p50 about 0: chunks come in bursts', tip: itlBurstNote(run.summary) } : {}),
      ...(absent(run, st) ? { note: 'not in the file' } : none && noneCompleted(run.summary) ? { note: 'no request completed' } : {}),
    };
  });
}

/** TTFT cold and warm, beside TTFT when the prefix cache served some requests: a warm run against a cold one is otherwise a silent "+1,728 %". */
function cacheTile(m: LatencyMetric, s: Summary): Figure | undefined {
  const pc = s.prefixCache;
  if (m.key !== 'ttftMs' || !pc || pc.warmRequests <= 0) return undefined;
  return { id: `${m.id}-cache`, metric: m, label: `${m.label} p50 cold / warm`, value: `${formatMs(pc.coldTtftMs?.p50)} / ${formatMs(pc.warmTtftMs?.p50)}`,
    raw: pc.warmTtftMs?.p50, note: prefixCacheSplitLine(s.prefixCache) ?? `${formatInt(pc.warmRequests)} warm, ${formatInt(pc.coldRequests)} cold; ${formatInt(pc.cachedTokens)} cached prompt tokens` };
}

/** The errors' note: by kind and status, rate limits with their Retry-After, and requests sent again. */
function errorNote(run: RunFile): string | undefined {
  const s = run.summary;
  const statuses = statusCounts(s);
  const kinds = Object.entries(s.errorsByKind ?? {}).map(([k, n]) => (k === 'http' && statuses ? `http ${n}: ${statuses}` : `${k} ${n}`)).join(', ');
  // requests cancelled (the user's Cancel, an imported tool's stop): said beside the failures, not counted among them
  const cancelled = cancelledCount(run);
  return [kinds, rateLimitLine(run), connectionRetriesLine(run), cancelled ? `${cancelled} (not failures)` : undefined].filter(Boolean).join('; ') || undefined;
}

/** A single figure's tile. */
function figureTile(m: FigureMetric, run: RunFile): Figure {
  const s = run.summary;
  const raw = figureValue(m, s);
  const base = { id: m.id, metric: m, label: m.label, raw };
  switch (m.key) {
    case 'failed': return { ...base, value: `${formatInt(s.failed)} of ${formatInt(s.completed + s.failed)}`, bad: s.failed > 0, note: errorNote(run) };
    case 'stalls': return stallsTile(base, run);
    case 'goodput': return noneCompleted(s) ? { ...base, value: formatNumber(undefined), raw: undefined, note: 'no request completed' } : { ...base, value: formatNumber(raw, m.unit),
      note: raw !== undefined && s.requestsPerSecond > 0 ? `${formatPercent(raw / s.requestsPerSecond)} of requests meet the SLOs` : undefined };
    // a rate over no completed request is no figure
    default: return m.group === 'throughput' && noneCompleted(s) ? { ...base, value: formatNumber(undefined), raw: undefined, note: 'no request completed' } : { ...base, value: formatNumber(raw) };
  }
}

/**
 * The stalls' tile: orange only when some stall has a cause shown (another request's prefill, a
 * buffer); gaps whose cause the client cannot show are said as what they could be, not as an alarm.
 * Their time is a sum over the streams (present/whereText.ts stallTotalText).
 */
function stallsTile(base: Pick<Figure, 'id' | 'metric' | 'label' | 'raw'>, run: RunFile): Figure {
  const st = run.summary.stalls;
  if (noChunks(run)) return { ...base, value: formatMs(undefined), raw: undefined, note: 'not known: no chunk times' };
  // a stall defined once, with this run's factor and floor, in place of the catalogue's general words
  const means = `A stall is ${stallRule(st)}.`;
  if (st.count === 0) return { ...base, value: formatInt(0), means, tip: 'None in this run.' };
  const total = stallTotalText(st, stalledStreams(run), run.summary.durationS);
  const alarm = stallsAlarm(st);
  const unknown = st.byCause?.unknown ?? 0;
  const note = alarm ? total : `${total}; ${UNKNOWN_STALL_SHORT}`;
  const why = unknown > 0 ? ` ${unknown === st.count ? 'Every one' : `${formatInt(unknown)} of them`}: ${UNKNOWN_STALL_CAUSE}.` : '';
  return { ...base, value: formatInt(base.raw), bad: alarm, note, means, tip: `${total}.${why}` };
}

/** A tile's tooltip: the metric in full, its value unrounded (to 6 figures), and the tile's own explanation. */
function withTip(f: Figure): Figure {
  const exact = f.raw !== undefined && Number.isFinite(f.raw) ? ` Value: ${formatPrecise(f.raw, f.metric.unit)}.` : '';
  return { ...f, tip: [`${f.metric.title}: ${f.means ?? f.metric.means}${exact}`, f.tip ?? f.note].filter(Boolean).join('\n') };
}

/** The headline's tiles, in the catalogue's order for tiles, each with its tooltip. */
export function headlineFigures(run: RunFile): Figure[] {
  const proxy = measuresProxy(run.summary);
  return metricsFor('tiles', [run.summary]).flatMap((m) => {
    if (m.kind === 'figure') return [figureTile(m, run)];
    const cache = cacheTile(m, run.summary);
    return [...latencyTiles(m, run, proxy), ...(cache ? [cache] : [])];
  }).map(withTip);
}

/** A row of the percentile table. */
export interface PercentileRow {
  readonly metric: LatencyMetric;
  /** Undefined when an imported run's file cannot give it. */
  readonly stats: Stats | undefined;
  readonly count: number | undefined;
  readonly sloValue?: number;
  readonly missed: boolean;
  /** The stream is buffered and this latency times the buffer. */
  readonly proxy: boolean;
}

export function percentileRows(run: RunFile): PercentileRow[] {
  const s = run.summary;
  const missed = new Set(s.sloMissed ?? []);
  const proxy = measuresProxy(s);
  return latenciesFor('percentiles', [s]).map((m) => {
    const st = latencyStats(m, s);
    return {
      metric: m, stats: absent(run, st) || (!st?.count && noneCompleted(s)) ? undefined : st, count: st?.count,
      ...(m.slo && run.workload?.slo?.[m.slo] !== undefined ? { sloValue: run.workload.slo[m.slo] } : {}),
      missed: m.slo !== undefined && missed.has(m.slo), proxy: proxy && m.proxy === true,
    };
  });
}

/** A row of the compare table: a latency's stats on each side, or a figure's value. */
export type CompareRow =
  | { readonly metric: LatencyMetric; readonly a: Stats | undefined; readonly b: Stats | undefined }
  | { readonly metric: FigureMetric; readonly a: number | undefined; readonly b: number | undefined };

export function compareRows(a: RunFile, b: RunFile): CompareRow[] {
  return metricsFor('compare', [a.summary, b.summary]).map((m): CompareRow => {
    if (m.kind === 'figure') return { metric: m, a: figureValue(m, a.summary), b: figureValue(m, b.summary) };
    // an imported side without this metric (ITL without chunk times) has none: "–", never 0
    const side = (r: RunFile) => { const st = latencyStats(m, r.summary); return absent(r, st) ? undefined : st; };
    return { metric: m, a: side(a), b: side(b) };
  });
}

/** The latencies whose distribution is drawn (a CDF each): those of the catalogue that one of the runs has. */
export function distributionMetrics(...runs: readonly RunFile[]): LatencyMetric[] {
  return latenciesFor('distributions', runs.map((r) => r.summary));
}

/** A row of the verdicts: the engine's row, its sentence (src/present/compareText.ts), and its interval to draw when it has one. */
export interface VerdictRow {
  readonly row: EngineCompareRow;
  readonly sentence: string;
  /** The 95% interval of B against A and the point, in %; absent without an interval (too few samples, not in both runs). */
  readonly whisker?: { readonly lo: number; readonly hi: number; readonly point: number };
}

export function verdictRows(c: Comparison): VerdictRow[] {
  return c.rows.map((row) => ({
    row,
    sentence: rowSentence(row),
    ...(row.ciPct && row.diffPct !== undefined ? { whisker: { lo: row.ciPct[0], hi: row.ciPct[1], point: row.diffPct } } : {}),
  }));
}

/** The whiskers' one % axis: every interval and point inside it, 0 always on it, a little room at both ends; its ticks. */
export function percentAxis(rows: readonly VerdictRow[]): { readonly min: number; readonly max: number; readonly ticks: readonly number[] } | undefined {
  const ends = rows.flatMap((r) => (r.whisker ? [r.whisker.lo, r.whisker.hi, r.whisker.point] : [])).filter(Number.isFinite);
  if (ends.length === 0) return undefined;
  const lo = Math.min(0, ...ends);
  const hi = Math.max(0, ...ends);
  const pad = Math.max((hi - lo) * 0.06, 0.5);
  const min = lo < 0 ? lo - pad : 0 - pad / 2;
  const max = hi > 0 ? hi + pad : 0 + pad / 2;
  return { min, max, ticks: niceTicks(min, max, 6).ticks };
}
