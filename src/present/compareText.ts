// A comparison's rows in words, the same on every surface (the CLI, the Markdown for a pull request,
// the report's Compare, the CodeLens): "TPOT p50 4.1% slower, 95% CI 2.8–5.3%". Pure.
import type { CompareRow, RowKey } from '../engine/analysis/compare';
import type { ComparableProblem } from '../engine/analysis/comparable';
import { metricOf } from './metricCatalogue';
import type { LatencyKey } from './metricCatalogue';

const LATENCY_KEYS: Readonly<Record<string, LatencyKey>> = { ttft: 'ttftMs', tpot: 'tpotMs', itl: 'itlMs', e2e: 'e2eMs' };

/** A row's name: "TTFT p50", "TPOT mean", "Output tokens/s". */
export function rowLabel(row: Pick<CompareRow, 'metric' | 'stat'>): string {
  if (row.metric === 'throughput') return metricOf('outputTokensPerSecond').label;
  return `${metricOf(LATENCY_KEYS[row.metric]!).label} ${row.stat}`;
}

/** A row's name from its key ("ttft.p99" → "TTFT p99"). */
export function rowKeyLabel(key: RowKey): string {
  if (key === 'throughput') return rowLabel({ metric: 'throughput', stat: 'value' });
  const [metric, stat] = key.split('.') as [CompareRow['metric'], CompareRow['stat']];
  return rowLabel({ metric, stat });
}

/** 4.123 → "4.1", with a real minus sign for negatives. */
export function pctNumber(v: number): string {
  const t = Math.abs(v) >= 100 ? Math.abs(v).toFixed(0) : Math.abs(v).toFixed(1);
  return v < 0 && t !== '0.0' && t !== '0' ? `−${t}` : t;
}

/** A signed percentage: "+4.1%", "−2.0%". */
export function signedPct(v: number): string {
  const t = pctNumber(v);
  return t.startsWith('−') ? `${t}%` : `+${t}%`;
}

/** The interval in the direction of the verdict: "2.8–5.3%" (both ends the same sign), else "−3.0% to +4.2%". */
function intervalText([lo, hi]: readonly [number, number], flip: boolean): string {
  const [a, b] = flip ? [-hi, -lo] : [lo, hi];
  if (a >= 0 && b >= 0) return `${pctNumber(a)}–${pctNumber(b)}%`;
  return `${signedPct(lo)} to ${signedPct(hi)}`;
}

/**
 * The row in words, verdict first: "TPOT p50 4.1% slower, 95% CI 2.8–5.3%"; "TTFT p99: no difference
 * we can detect (95% CI −3.0% to +4.2%; these samples detect changes of 6.1% or more)"; "TTFT p99: too
 * few samples to judge (p99 needs 500 a side; BASE has 100)".
 */
export function rowSentence(row: CompareRow): string {
  const label = rowLabel(row);
  if (row.verdict === 'absent') return `${label}: not in both runs`;
  if (row.verdict === 'too-few') {
    const have = Math.min(row.samples.base, row.samples.next);
    const who = row.samples.base <= row.samples.next ? 'BASE' : 'NEW';
    return `${label}: too few samples to judge (${row.stat === 'mean' || row.metric === 'throughput' ? 'it' : row.stat} needs ${row.needs} a side; ${who} has ${have})`;
  }
  const ci = row.ciPct;
  if (!ci || row.diffPct === undefined) return `${label}: ${row.verdict === 'no-difference' ? 'no difference we can detect' : row.verdict}`;
  if (row.verdict === 'no-difference') {
    const mde = row.mdePct !== undefined ? `; these samples detect changes of ${pctNumber(row.mdePct)}% or more` : '';
    return `${label}: no difference we can detect (95% CI ${signedPct(ci[0])} to ${signedPct(ci[1])}${mde})`;
  }
  // a latency's slower is a rise, a throughput's a fall: the magnitude is said in the verdict's direction
  const flip = row.diffPct < 0;
  return `${label} ${pctNumber(Math.abs(row.diffPct))}% ${row.verdict}, 95% CI ${intervalText(ci, flip)}`;
}

/** Problems of comparability in words, refusals first. */
export function problemLines(problems: readonly ComparableProblem[]): string[] {
  const order = (p: ComparableProblem): number => (p.severity === 'refuse' ? 0 : 1);
  return [...problems].sort((a, b) => order(a) - order(b)).map((p) => `${p.severity === 'refuse' ? 'Not the same workload' : 'Note'}: ${p.message}`);
}
