// `--fail-on-regression`: which rows are gated and by how much, and whether a comparison passes.
// A row fails only when its whole 95% interval says slower by more than its threshold: a latency's
// interval entirely above +PCT, a throughput's entirely below −PCT. A row that cannot be judged (too
// few samples for the percentile, a figure one side lacks) is named: gated by its own name
// ("ttft.p99"), it is an error; gated by "everything" or by its metric alone ("ttft"), it is skipped and listed.
import type { Comparison, CompareRow, RowKey } from './compare';
import { ROW_SPECS } from './compare';

export class GateSyntaxError extends Error {}

/** Threshold in % per gated row; `named`: the rows the gate names one by one ("ttft.p99"), not by "everything" or a metric alone. */
export interface RegressionGate {
  readonly thresholds: ReadonlyMap<RowKey, number>;
  readonly named: ReadonlySet<RowKey>;
}

const ROW_KEYS: readonly RowKey[] = ROW_SPECS.map((s) => s.key);

function parsePct(text: string, what: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*%?\s*$/.exec(text);
  if (!m) throw new GateSyntaxError(`${what}: "${text}" is not a percentage (e.g. 5% or 2.5)`);
  return Number(m[1]);
}

/** "5%" (every row), or "ttft.p99=10%,tpot.p50=3%,throughput=5%"; a metric alone ("ttft=5%") gates its every row. */
export function parseGate(text: string): RegressionGate {
  if (!text.includes('=')) {
    const pct = parsePct(text, '--fail-on-regression');
    return { thresholds: new Map(ROW_KEYS.map((k) => [k, pct])), named: new Set() };
  }
  const thresholds = new Map<RowKey, number>();
  const named = new Set<RowKey>();
  for (const part of text.split(',').map((p) => p.trim()).filter(Boolean)) {
    const eq = part.indexOf('=');
    if (eq <= 0) throw new GateSyntaxError(`--fail-on-regression: "${part}" is not METRIC.STAT=PCT (e.g. ttft.p99=10%)`);
    const name = part.slice(0, eq).trim().toLowerCase();
    const pct = parsePct(part.slice(eq + 1), `--fail-on-regression ${name}`);
    const keys = ROW_KEYS.filter((k) => k === name || k.startsWith(`${name}.`));
    if (keys.length === 0) throw new GateSyntaxError(`--fail-on-regression: no figure "${name}"; the figures are ${ROW_KEYS.join(', ')} (or a metric alone: ttft, tpot, itl, e2e)`);
    for (const k of keys) thresholds.set(k, pct);
    if (keys.length === 1 && keys[0] === name) named.add(keys[0]);
  }
  return { thresholds, named };
}

export interface GateResult {
  readonly key: RowKey;
  readonly thresholdPct: number;
  readonly outcome: 'pass' | 'fail' | 'cannot-judge';
  /** Why, in words ("TTFT p99: 95% CI +3.1% to +8.0%, above +2%"). */
  readonly reason: string;
}

function judge(row: CompareRow, pct: number): GateResult {
  const base = { key: row.key, thresholdPct: pct };
  if (row.verdict === 'too-few') return { ...base, outcome: 'cannot-judge', reason: `needs at least ${row.needs} values a side, has ${Math.min(row.samples.base, row.samples.next)}` };
  if (row.verdict === 'absent' || row.ciPct === undefined) return { ...base, outcome: 'cannot-judge', reason: 'not in both runs' };
  const [lo, hi] = row.ciPct;
  const interval = `95% CI ${signed(lo)} to ${signed(hi)}`;
  if (row.metric === 'throughput') {
    return hi < -pct ? { ...base, outcome: 'fail', reason: `${interval}, below −${pct}%` } : { ...base, outcome: 'pass', reason: `${interval}, not all below −${pct}%` };
  }
  return lo > pct ? { ...base, outcome: 'fail', reason: `${interval}, above +${pct}%` } : { ...base, outcome: 'pass', reason: `${interval}, not all above +${pct}%` };
}

function signed(v: number): string {
  return `${v >= 0 ? '+' : '−'}${Math.abs(v).toFixed(1)}%`;
}

/** Each gated row's outcome. Rows that cannot be judged and were not named one by one are left out (listed by `skipped`). */
export function applyGate(comparison: Comparison, gate: RegressionGate): { readonly results: readonly GateResult[]; readonly skipped: readonly GateResult[] } {
  const results: GateResult[] = [];
  const skipped: GateResult[] = [];
  for (const row of comparison.rows) {
    const pct = gate.thresholds.get(row.key);
    if (pct === undefined) continue;
    const r = judge(row, pct);
    (r.outcome === 'cannot-judge' && !gate.named.has(row.key) ? skipped : results).push(r);
  }
  return { results, skipped };
}
