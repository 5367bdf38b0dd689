// A run against its baseline in the editor's words: the CodeLens ("TTFT p50 41 ms · +12% vs baseline
// (slower)") and the sidebar's mark ("TPOT p50 4.1% slower than baseline c=4 · 64 req on vllm, 10:14").
// Each row's full sentence is src/present/compareText.ts rowSentence, the one the CLI and the report
// say. Pure: tested under node.
import type { CompareRow } from '../engine/analysis/compare';
import { pctNumber, rowLabel, rowSentence, signedPct } from '../present/compareText';
import { runName, type RunNameParts } from '../present/runText';
import { formatMs, formatNumber } from '../present/units';
import type { BaselineVerdict } from './comparisons';
import type { SurfaceClock } from '../shared/protocol';

/** The verdict in the lens's parentheses. */
const VERDICT_WORDS: Readonly<Record<CompareRow['verdict'], string>> = {
  slower: 'slower',
  faster: 'faster',
  'no-difference': 'no detectable change',
  'too-few': 'too few requests to tell',
  absent: 'not in both runs',
};

function valueText(row: CompareRow): string {
  return row.unit === 'ms' ? formatMs(row.next) : formatNumber(row.next, ` ${row.unit}`);
}

/** The row a lens shows: the first that regressed (a latency's p50 or p90, the throughput), else TTFT p50. */
export function lensRow(v: Extract<BaselineVerdict, { state: 'compared' }>): CompareRow | undefined {
  return v.regressed[0] ?? v.pair.comparison.rows.find((r) => r.key === 'ttft.p50');
}

/**
 * The lens of a prompt's last run against its baseline: "TTFT p50 41 ms · +12% vs baseline (slower)",
 * and its tooltip (each regressed row's sentence, or the row's, and the baseline's name). Undefined
 * while the comparison is worked out.
 */
export function baselineLens(v: BaselineVerdict, clock?: SurfaceClock): { readonly title: string; readonly tooltip: string } | undefined {
  const base = `Baseline: ${runName(v.base, { clock })}`;
  switch (v.state) {
    case 'pending': return undefined;
    case 'failed': return { title: 'baseline: not compared', tooltip: `The comparison with the baseline failed: ${v.message}\n${base}` };
    case 'not-comparable': return { title: 'not comparable with baseline', tooltip: `${v.reasons.join('\n')}\n${base}` };
    case 'compared': {
      const row = lensRow(v);
      if (!row || row.next === undefined) return undefined;
      const change = row.diffPct === undefined ? '' : ` · ${signedPct(row.diffPct)} vs baseline`;
      const sentences = (v.regressed.length ? v.regressed : [row]).map(rowSentence);
      return { title: `${rowLabel(row)} ${valueText(row)}${change} (${VERDICT_WORDS[row.verdict]})`, tooltip: `${sentences.join('\n')}\n${base}: open the comparison` };
    }
  }
}

/** What regressed, a line per row: "TPOT p50 4.1% slower than baseline c=4 · 64 req on vllm, 10:14". */
export function regressionLines(rows: readonly CompareRow[], base: RunNameParts, clock?: SurfaceClock): string[] {
  const name = runName(base, { clock });
  return rows.map((r) => `${rowLabel(r)} ${r.diffPct === undefined ? '' : `${pctNumber(Math.abs(r.diffPct))}% `}slower than baseline ${name}`);
}
