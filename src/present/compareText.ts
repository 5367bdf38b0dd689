// A comparison's rows in words, the same on every surface (the CLI, the Markdown for a pull request,
// the report's Compare, the CodeLens): "TPOT p50 4.1% slower, 95% CI 2.8–5.3%"; and a whole
// comparison as the CLI prints it, as Markdown for a pull request, and its gate as JUnit XML. Pure.
import { requestsToDetect } from '../engine/analysis/compare';
import type { ComparedSide, Comparison, CompareRow, RowKey, RowVerdict } from '../engine/analysis/compare';
import type { ComparableProblem } from '../engine/analysis/comparable';
import type { GateResult } from '../engine/analysis/compareGate';
import { printable } from '../engine/core/redact';
import { metricOf } from './metricCatalogue';
import type { LatencyKey } from './metricCatalogue';
import { DASH, formatInt, formatMs, formatNumber, formatQuantity, TINY_MS } from './units';

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

// ---- a whole comparison: the CLI's text, the Markdown for a pull request, the JUnit report ----

/** One table of rows: a single comparison, or one sweep point (`label`), or a point one side lacks. */
export interface CompareSection {
  readonly label?: string;
  readonly comparison?: Comparison;
  readonly missing?: 'base' | 'next';
}

/** A gated row's outcome; `point` names the sweep point it belongs to. */
export interface GatedRow {
  readonly point?: string;
  readonly result: GateResult;
  readonly row?: CompareRow;
}

/** The outcome of `--fail-on-regression`: the rows judged, and (a gate of every row) those left out as unjudgeable. */
export interface GateOutcome {
  /** The gate as given ("5%", "ttft.p99=10%"). */
  readonly spec: string;
  readonly results: readonly GatedRow[];
  readonly skipped: readonly GatedRow[];
}

/** Everything a comparison's text, Markdown or JUnit report says. */
export interface ComparisonView {
  readonly baseName: string;
  readonly nextName: string;
  readonly problems: readonly ComparableProblem[];
  readonly sections: readonly CompareSection[];
  readonly gate?: GateOutcome;
  /** The change (%) the sample-size advice sizes for (--detect). */
  readonly detectPct: number;
}

const VERDICT_WORDS: Readonly<Record<RowVerdict, string>> = {
  slower: 'slower',
  faster: 'faster',
  'no-difference': 'no difference',
  'too-few': 'too few samples',
  absent: 'not in both',
};

/** A row's verdict in a table cell: "slower", "no difference", "too few samples". */
export function verdictWord(verdict: RowVerdict): string {
  return VERDICT_WORDS[verdict];
}

function valueText(row: CompareRow, v: number | undefined): string {
  return row.unit === 'ms' ? formatMs(v) : formatNumber(v, 'tok/s');
}

function deltaText(row: CompareRow): string {
  if (row.diff === undefined) return DASH;
  // a difference too small to print with a sign ("−< 0.01 ms") is none to speak of
  if (row.unit === 'ms' && Math.abs(row.diff) < TINY_MS) return '≈ 0 ms';
  const sign = row.diff > 0 ? '+' : row.diff < 0 ? '−' : '±';
  return `${sign}${valueText(row, Math.abs(row.diff))}`;
}

const TABLE_HEAD = ['', 'BASE', 'NEW', 'Δ', 'Δ %', '95% CI of Δ %', 'Verdict'] as const;

/** A row's cells, in TABLE_HEAD's order. */
export function rowCells(row: CompareRow): string[] {
  return [
    rowLabel(row),
    valueText(row, row.base),
    valueText(row, row.next),
    deltaText(row),
    row.diffPct === undefined ? DASH : signedPct(row.diffPct),
    row.ciPct ? `${signedPct(row.ciPct[0])} to ${signedPct(row.ciPct[1])}` : DASH,
    verdictWord(row.verdict),
  ];
}

/** The rows as an aligned text table: names and words left, figures right. */
export function compareTable(rows: readonly CompareRow[]): string[] {
  const cells = [[...TABLE_HEAD], ...rows.map(rowCells)];
  const widths = TABLE_HEAD.map((_, c) => Math.max(...cells.map((r) => r[c]!.length)));
  const left = new Set([0, 5, 6]);
  return cells.map((r) => r.map((cell, c) => (left.has(c) ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join('  ').trimEnd());
}

/** The rows worth a sentence below the table: a verdict either way, or too few samples to give one. */
function sentenceRows(rows: readonly CompareRow[]): CompareRow[] {
  return rows.filter((r) => r.verdict === 'slower' || r.verdict === 'faster' || r.verdict === 'too-few');
}

/** Sample-size advice for a row where no difference was detected: requests a side to detect `pct`%. */
export interface RowAdvice {
  readonly key: RowKey;
  /** Requests each side would need; undefined when these samples already detect `pct`% (or there is no error to size from). */
  readonly requests?: number;
  readonly mdePct?: number;
}

/** For each row with no difference detected: whether these samples detect `pct`%, and if not, the requests a side that would. */
export function adviceOf(comparison: Comparison, pct: number): RowAdvice[] {
  const sides = { base: comparison.base.requests, next: comparison.next.requests };
  return comparison.rows
    .filter((r) => r.verdict === 'no-difference')
    .map((r) => {
      const already = r.mdePct !== undefined && r.mdePct <= pct;
      const requests = already ? undefined : requestsToDetect(r, sides, pct);
      return { key: r.key, ...(requests !== undefined ? { requests } : {}), ...(r.mdePct !== undefined ? { mdePct: r.mdePct } : {}) };
    });
}

/** The advice in words, one line a row that needs more requests; none when every row already detects `pct`%. */
export function adviceLines(comparison: Comparison, pct: number): string[] {
  const needs = adviceOf(comparison, pct).filter((a) => a.requests !== undefined);
  if (needs.length === 0) return [];
  const n = Math.min(comparison.base.requests, comparison.next.requests);
  const head = `Where no difference was detected, a ${formatQuantity(pct)}% change could have been missed; to detect one (--detect), each side needs about:`;
  return [
    head,
    ...needs.map((a) => `  ${rowKeyLabel(a.key)}: ${formatInt(a.requests)} requests${a.mdePct !== undefined ? ` (${formatInt(n)} requests detect ${pctNumber(a.mdePct)}% or more)` : ''}`),
  ];
}

const RESAMPLING_WORDS: Readonly<Record<Comparison['method']['resampling'], string>> = {
  requests: 'requests resampled',
  'time blocks': 'blocks of consecutive requests resampled whole',
  'repetitions, then requests': 'repetitions resampled, then requests within them',
  'paired blocks, then requests': 'the same A/B blocks drawn on both sides, then requests within them',
};

/** How the intervals were made, in one line. */
export function methodLine(m: Comparison['method']): string {
  const drift = m.resampling === 'requests' || m.resampling === 'time blocks' ? '; drift between runs is not in the interval (one repetition a side: use run --repeat or ab)' : '';
  return `Method: percentile bootstrap of the difference, ${formatInt(m.resamples)} resamples (${RESAMPLING_WORDS[m.resampling]}, seed ${m.seed}), ` +
    `${Math.round(m.confidence * 100)}% intervals; a percentile is judged only with ${m.minTail} values beyond it on each side${drift}.`;
}

/**
 * A side in one line: "BASE  base.json: run 20250101-abc, started 2025-01-01 10:14:03Z, 100 requests
 * in 3 repetitions"; a sweep's: "…, a sweep of 4 points" (each point's requests are said above its table).
 */
export function sideLine(which: 'BASE' | 'NEW', name: string, side: ComparedSide | undefined, how: { readonly blocks?: boolean; readonly points?: number } = {}): string {
  if (!side) return `${which.padEnd(4)}  ${name}`;
  const groups = side.groups > 1 ? ` in ${side.groups} ${how.blocks ? 'blocks' : 'repetitions'}` : '';
  const size = how.points !== undefined ? `a sweep of ${how.points} point${how.points === 1 ? '' : 's'}` : `${formatInt(side.requests)} requests${groups}`;
  return `${which.padEnd(4)}  ${name}: run ${side.runId}, started ${startedText(side.startedAt)}, ${size}`;
}

/** How the sides are sized in their lines: blocks (an A/B), or the points of a sweep on each side. */
function sidesHow(view: ComparisonView): { base: { blocks: boolean; points?: number }; next: { blocks: boolean; points?: number } } {
  const blocks = firstComparison(view)?.method.resampling === 'paired blocks, then requests';
  if (!view.sections.some((s) => s.label !== undefined)) return { base: { blocks }, next: { blocks } };
  const count = (lacking: 'base' | 'next') => view.sections.filter((s) => s.missing !== lacking).length;
  return { base: { blocks, points: count('base') }, next: { blocks, points: count('next') } };
}

/** An ISO time without its milliseconds, T as a space: "2025-01-01 10:14:03Z". */
function startedText(iso: string): string {
  return iso.replace(/\.\d+(?=Z|[+-]\d\d:\d\d$)/, '').replace('T', ' ');
}

/** The first comparison of the view (a sweep's sides are named from their first common point). */
function firstComparison(view: ComparisonView): Comparison | undefined {
  return view.sections.find((s) => s.comparison)?.comparison;
}

function sectionTitle(s: CompareSection): string {
  if (s.missing) return `Point ${s.label}: only in ${s.missing === 'base' ? 'NEW' : 'BASE'}, not compared`;
  const c = s.comparison!;
  return `Point ${s.label} (${formatInt(c.base.requests)} requests BASE, ${formatInt(c.next.requests)} NEW)`;
}

function gatedName(g: GatedRow): string {
  return `${g.point !== undefined ? `${g.point} ` : ''}${rowKeyLabel(g.result.key)}`;
}

/** The gate's outcome in words: a headline, then each failing (and unjudgeable) row, then what was left out. */
export function gateLines(gate: GateOutcome): string[] {
  const fails = gate.results.filter((g) => g.result.outcome === 'fail');
  const unjudged = gate.results.filter((g) => g.result.outcome === 'cannot-judge');
  const judged = gate.results.length - unjudged.length;
  const head = `Regression gate (--fail-on-regression ${gate.spec}): `;
  const out = [
    fails.length > 0
      ? `${head}FAILED: ${fails.length} of ${judged} figure${judged === 1 ? '' : 's'} slower by more than the threshold`
      : unjudged.length > 0
        ? `${head}cannot be applied: ${unjudged.length} figure${unjudged.length === 1 ? '' : 's'} named in it cannot be judged`
        : `${head}passed: none of ${judged} figure${judged === 1 ? '' : 's'} is slower by more than the threshold`,
  ];
  out.push(...fails.map((g) => `  ${gatedName(g)}: ${g.result.reason}`));
  out.push(...unjudged.map((g) => `  ${gatedName(g)}: ${unjudgeableText(g)}`));
  if (gate.skipped.length > 0) out.push(`  Not gated, as they cannot be judged: ${gate.skipped.map(gatedName).join(', ')}`);
  return out;
}

/** Why a row named in the gate cannot be judged, and what to do about it. */
export function unjudgeableText(g: GatedRow): string {
  const r = g.result;
  if (g.row?.verdict === 'too-few' && g.row.needs !== undefined) {
    const values = g.row.metric === 'itl' ? 'gaps between chunks' : 'requests';
    return `cannot be judged: it needs at least ${formatInt(g.row.needs)} ${values} a side and has ${formatInt(Math.min(g.row.samples.base, g.row.samples.next))}; ` +
      `measure more (run --requests ${formatInt(g.row.needs)} or more), or gate a figure these runs can judge (a lower percentile, or the mean)`;
  }
  return `cannot be judged: ${r.reason}; gate only figures both runs have`;
}

/** The whole comparison as the CLI prints it. */
export function comparisonText(view: ComparisonView): string {
  const first = firstComparison(view);
  const how = sidesHow(view);
  const out = [sideLine('BASE', view.baseName, first?.base, how.base), sideLine('NEW', view.nextName, first?.next, how.next)];
  const problems = problemLines(view.problems);
  if (problems.length) out.push('', ...problems);
  for (const s of view.sections) {
    out.push('');
    if (s.label !== undefined) out.push(sectionTitle(s));
    if (!s.comparison) continue;
    out.push(...compareTable(s.comparison.rows));
    const sentences = sentenceRows(s.comparison.rows).map(rowSentence);
    if (sentences.length) out.push('', ...sentences);
    const advice = adviceLines(s.comparison, view.detectPct);
    if (advice.length) out.push('', ...advice);
  }
  if (first) out.push('', methodLine(first.method));
  if (view.gate) out.push('', ...gateLines(view.gate));
  return `${out.join('\n')}\n`;
}

/** Text safe inside a Markdown table cell or line: one line, markup characters escaped, no HTML. */
export function markdownText(text: string): string {
  return printable(text, true)
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    // only what is markup inside a line: links cannot start once [ and ] are escaped
    .replace(/([\\`*_[\]|~])/g, '\\$1');
}

function markdownRow(cells: readonly string[]): string {
  return `| ${cells.join(' | ')} |`;
}

function markdownTable(rows: readonly CompareRow[]): string[] {
  const body = rows.map((r) => {
    const cells = rowCells(r).map(markdownText);
    if (r.verdict === 'slower') cells[6] = `**${cells[6]}**`;
    return markdownRow(cells);
  });
  return [markdownRow(TABLE_HEAD.map((h) => (h === '' ? 'Figure' : h))), '|:---|---:|---:|---:|---:|:---|:---|', ...body];
}

function markdownGate(gate: GateOutcome): string[] {
  const [head, ...rest] = gateLines(gate);
  const icon = gate.results.some((g) => g.result.outcome === 'fail') ? '❌' : gate.results.some((g) => g.result.outcome === 'cannot-judge') ? '⚠️' : '✅';
  return [`${icon} ${markdownText(head!)}`, '', ...rest.map((l) => `- ${markdownText(l.trim())}`)];
}

/** The comparison as Markdown for a pull-request comment or a GitHub step summary. */
export function comparisonMarkdown(view: ComparisonView): string {
  const first = firstComparison(view);
  const how = sidesHow(view);
  const out = [`### Latency: ${markdownText(view.nextName)} (NEW) vs ${markdownText(view.baseName)} (BASE)`, ''];
  if (view.gate) out.push(...markdownGate(view.gate), '');
  out.push(`- ${markdownText(sideLine('BASE', view.baseName, first?.base, how.base).replace(/^BASE\s+/, 'BASE: '))}`);
  out.push(`- ${markdownText(sideLine('NEW', view.nextName, first?.next, how.next).replace(/^NEW\s+/, 'NEW: '))}`, '');
  const problems = problemLines(view.problems);
  if (problems.length) out.push(...problems.map((p) => `> ${markdownText(p)}`), '');
  for (const s of view.sections) {
    if (s.label !== undefined) out.push(`#### ${markdownText(sectionTitle(s))}`, '');
    if (!s.comparison) continue;
    out.push(...markdownTable(s.comparison.rows), '');
    const sentences = sentenceRows(s.comparison.rows).map(rowSentence);
    if (sentences.length) out.push(...sentences.map((l) => `- ${markdownText(l)}`), '');
    const [adviceHead, ...advice] = adviceLines(s.comparison, view.detectPct);
    if (adviceHead) out.push(markdownText(adviceHead), '', ...advice.map((l) => `- ${markdownText(l.trim())}`), '');
  }
  if (first) out.push(`<sub>${markdownText(methodLine(first.method))}</sub>`, '');
  return out.join('\n');
}

/** Text safe in XML 1.0 attribute values and content: the five entities escaped, characters XML cannot hold dropped. */
export function xmlText(text: string): string {
  return text
    .replace(/[^\t\n\r\u0020-\ud7ff\ue000-\ufffd\u{10000}-\u{10ffff}]/gu, '')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&apos;');
}

function junitCase(g: GatedRow, classname: string, named: boolean): string {
  const r = g.result;
  const attrs = `classname="${xmlText(classname)}" name="${xmlText(`${rowKeyLabel(r.key)} not slower by more than ${formatQuantity(r.thresholdPct)}%`)}"`;
  const sentence = g.row ? rowSentence(g.row) : rowKeyLabel(r.key);
  if (r.outcome === 'fail') return `    <testcase ${attrs}>\n      <failure type="regression" message="${xmlText(sentence)}">${xmlText(r.reason)}</failure>\n    </testcase>`;
  if (r.outcome === 'cannot-judge' && named) return `    <testcase ${attrs}>\n      <error type="cannot-judge" message="${xmlText(unjudgeableText(g))}"/>\n    </testcase>`;
  if (r.outcome === 'cannot-judge') return `    <testcase ${attrs}>\n      <skipped message="${xmlText(unjudgeableText(g))}"/>\n    </testcase>`;
  return `    <testcase ${attrs}>\n      <system-out>${xmlText(`${sentence}. ${r.reason}`)}</system-out>\n    </testcase>`;
}

interface SuiteCounts {
  tests: number;
  failures: number;
  errors: number;
  skipped: number;
}

function counts(named: readonly GatedRow[], skipped: readonly GatedRow[]): SuiteCounts {
  return {
    tests: named.length + skipped.length,
    failures: named.filter((g) => g.result.outcome === 'fail').length,
    errors: named.filter((g) => g.result.outcome === 'cannot-judge').length,
    skipped: skipped.length,
  };
}

const countAttrs = (c: SuiteCounts): string => `tests="${c.tests}" failures="${c.failures}" errors="${c.errors}" skipped="${c.skipped}"`;

/**
 * The gate as a JUnit XML report: one test suite per comparison (per sweep point), one test case per
 * gated figure. A figure slower by more than its threshold is a <failure>; one named in the gate that
 * cannot be judged is an <error> (the gate asks what these runs cannot tell); one left out of a gate
 * of every figure as unjudgeable is <skipped>.
 */
export function comparisonJunit(view: ComparisonView, gate: GateOutcome): string {
  const points = [...new Set([...gate.results, ...gate.skipped].map((g) => g.point))];
  const suites = points.map((point) => {
    const named = gate.results.filter((g) => g.point === point);
    const skipped = gate.skipped.filter((g) => g.point === point);
    const classname = `llm-profiler.compare${point !== undefined ? `.${point}` : ''}`;
    const name = `${view.nextName} vs ${view.baseName}${point !== undefined ? ` at ${point}` : ''}`;
    const cases = [...named.map((g) => junitCase(g, classname, true)), ...skipped.map((g) => junitCase(g, classname, false))];
    return [`  <testsuite name="${xmlText(name)}" ${countAttrs(counts(named, skipped))}>`, ...cases, '  </testsuite>'].join('\n');
  });
  const total = counts(gate.results, gate.skipped);
  return ['<?xml version="1.0" encoding="UTF-8"?>', `<testsuites name="llm-profiler compare" ${countAttrs(total)}>`, ...suites, '</testsuites>', ''].join('\n');
}

/** One run's sample-size advice (`llm-profiler compare RUN`): a row per metric, a column per statistic. */
export function sampleSizeText(name: string, requests: number, pct: number, advice: readonly { readonly key: RowKey; readonly requests?: number; readonly mdePct?: number }[]): string {
  const stats = ['p50', 'p90', 'p99', 'mean'] as const;
  const cell = (key: RowKey): string => {
    const a = advice.find((x) => x.key === key);
    return a?.requests === undefined ? '–' : formatInt(a.requests);
  };
  const rows = (['ttft', 'tpot', 'itl', 'e2e'] as const).map((m) => [rowLabel({ metric: m, stat: 'p50' }).replace(/ p50$/, ''), ...stats.map((s) => cell(`${m}.${s}`))]);
  rows.push([rowKeyLabel('throughput'), cell('throughput'), '', '', '']);
  const widths = [0, 1, 2, 3, 4].map((i) => Math.max(...[['', ...stats], ...rows].map((r) => r[i]!.length)));
  const line = (r: readonly string[]): string => r.map((c, i) => (i === 0 ? c.padEnd(widths[0]!) : c.padStart(widths[i]! + 2))).join('').trimEnd();
  return [
    `${name}: ${formatInt(requests)} requests.`,
    `To tell a ${formatQuantity(pct)}% change from noise (95% confidence, 80% power) between two runs as noisy as this one, each run needs about:`,
    '',
    line(['', ...stats]),
    ...rows.map(line),
    '',
    "From this run's own spread (its bootstrap error, scaled as 1/√n); a percentile never below what it needs to be judged (p90: 50, p99: 500). Drift between runs adds to it: measure with --repeat to see it.",
  ].join('\n') + '\n';
}
