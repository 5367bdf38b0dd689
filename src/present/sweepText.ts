// A sweep and the chunked-prefill dial in words: the facts (fit, knee, operating point, verdicts),
// a row per point, a column per chunk size. The CLI prints them; the report panel's sweep view shows
// the same facts and rows. Pure.
import { interruptedLine } from './recoverText';
import { dialFigures, NO_SLO } from '../engine/analysis/fit';
import type { DialFigures } from '../engine/analysis/fit';
import type { RunFile, SloSpec, Summary, SweepPoint } from '../engine/core/types';
import { figureValue, latencyStats, metricsFor, type FigureMetric, type Metric } from './metricCatalogue';
import { DASH, fixed, formatMs, formatQuantity } from './units';
import { promptSourceWords } from './workloadText';
import { howToGive, type TextSurface } from './surfaceWords';
import type { SurfaceClock } from '../shared/protocol';

export interface SweepFact {
  /** 'fit', 'slo-batch', 'prefill', 'knee', 'op', 'max', 'stopped', 'cancelled', or 'verdict-<kind>'. */
  readonly kind: string;
  readonly text: string;
}

const num = (v: number | undefined, digits = 1): string => fixed(v, digits);

/** The SLO a sweep judged its points by. */
export function sweepSlo(run: RunFile): SloSpec | undefined {
  return run.sweep?.slo ?? run.workload.slo;
}

/**
 * Why the sweep has fewer points than it was asked for, first (stopped early, cancelled, interrupted):
 * a reader must know that before reading any figure of it.
 */
function endFacts(run: RunFile, clock?: SurfaceClock): SweepFact[] {
  const sw = run.sweep!;
  const out: SweepFact[] = [];
  if (sw.stoppedEarly) {
    const { afterLabel, reason, asked } = sw.stoppedEarly;
    const ran = sw.points.length;
    const of = asked !== undefined ? `${ran} of the ${asked} points asked` : `${ran} point${ran === 1 ? '' : 's'}`;
    out.push({ kind: 'stopped', text: `Stopped early after ${afterLabel} (${of}): ${reason}.` });
  }
  if (run.cancelled) out.push({ kind: 'cancelled', text: 'Cancelled: the points finished so far are kept.' });
  const interrupted = interruptedLine(run, clock);
  if (interrupted) out.push({ kind: 'interrupted', text: interrupted });
  return out;
}

/** A verdict as `surface` says it: the engine stores "no SLO" neutral (NO_SLO); the CLI adds its flag, VS Code its setting. */
function verdictText(v: { readonly kind: string; readonly message: string }, surface: TextSurface): string {
  if (v.kind === 'no-slo') return NO_SLO.replace(/\.$/, ` (${howToGive('slo', surface)}).`);
  return v.message;
}

/**
 * What the sweep says, in sentences, in the order a reader wants them: why it ended early first, then
 * the fits and the picks, then the verdicts, worded for `surface` (a flag in the CLI, a setting in VS Code),
 * its times in `clock` (the window's: src/present/timeText.ts).
 */
export function sweepFacts(run: RunFile, surface: TextSurface = 'cli', clock?: SurfaceClock): SweepFact[] {
  const sw = run.sweep;
  if (!sw) return [];
  const slo = sweepSlo(run);
  const out: SweepFact[] = endFacts(run, clock);
  if (sw.fit) {
    out.push({
      kind: 'fit',
      text: `Fit: TPOT(B) ≈ ${num(sw.fit.baseMs, 2)} ms + ${num(sw.fit.kMs, 3)} ms × B (B = ${sw.fitX === 'meanBatch' ? 'measured decoding batch' : 'concurrency'}), R² = ${num(sw.fit.r2, 3)}; throughput ceiling ≈ ${num(sw.fit.ceilingTokensPerSecond, 0)} tokens/s.`,
    });
    if (sw.sloBatch !== undefined && slo?.tpotMs !== undefined) out.push({ kind: 'slo-batch', text: `TPOT reaches the ${slo.tpotMs} ms SLO at B ≈ ${num(sw.sloBatch, 1)}.` });
  } else if (sw.residuals && sw.residuals.length >= 2) {
    const [a, b] = sw.residuals;
    const k = (b!.predictedMs - a!.predictedMs) / (b!.batch - a!.batch || 1);
    out.push({ kind: 'fit', text: `Fit: no throughput ceiling (k = ${num(k, 3)} ms${k <= 0 ? ': TPOT does not rise with the batch' : ''}).` });
  }
  const pf = sw.prefillFit;
  if (pf) {
    out.push({
      kind: 'prefill',
      text: `Prefill: TTFT ≈ ${num(pf.aMs, 1)} ms + ${num(pf.bMsPerToken, 4)} ms × prompt tokens, R² = ${num(pf.r2, 3)}; prefill rate ≈ ${num(pf.prefillTokensPerSecond, 0)} tokens/s.`,
    });
  }
  if (sw.knee) out.push({ kind: 'knee', text: `Knee: ${sw.knee.label}: the next doubling buys ${num(sw.knee.gainPerDoubling * 100, 1)}% throughput (under ${num(sw.knee.threshold * 100, 0)}%).` });
  if (sw.operatingPoint) out.push({ kind: 'op', text: `Operating point (interactive): ${sw.operatingPoint.label}: goodput ${num(sw.operatingPoint.goodput, 2)} req/s, ${num(sw.operatingPoint.outputTokensPerSecond)} tokens/s.` });
  if (sw.maxThroughputPoint) out.push({ kind: 'max', text: `Max throughput (batch work): ${sw.maxThroughputPoint.label}: ${num(sw.maxThroughputPoint.outputTokensPerSecond)} tokens/s.` });
  for (const v of sw.verdicts ?? []) out.push({ kind: `verdict-${v.kind}`, text: `⚠ ${verdictText(v, surface)}` });
  return out;
}

/**
 * What the run's headline figures are over, for a sweep: every point's requests pooled into one
 * distribution ("All 4 points pooled (c=1 to c=8, 128 requests): each point's own figures are in the
 * sweep view."). Undefined for another run.
 */
export function pooledNote(run: RunFile): string | undefined {
  const points = run.sweep?.points;
  if (!points) return undefined;
  const n = points.length;
  const requests = points.reduce((a, p) => a + p.summary.completed + p.summary.failed, 0);
  const span = n > 1 ? `${points[0]!.label} to ${points[n - 1]!.label}, ` : '';
  return `${n === 1 ? 'The one point' : `All ${n} points pooled`} (${span}${requests} request${requests === 1 ? '' : 's'}): each point's own figures are in the sweep view.`;
}

/** Which of the analysis' picks a point is: 'operating point', 'max throughput', 'knee'. */
export function pointMarks(run: RunFile, index: number): string[] {
  const sw = run.sweep;
  if (!sw) return [];
  return [
    sw.operatingPoint?.index === index ? 'operating point' : '',
    sw.maxThroughputPoint?.index === index ? 'max throughput' : '',
    sw.knee?.index === index ? 'knee' : '',
  ].filter(Boolean);
}

/** A column of the sweep's points table: a catalogue metric's figure (and the percentile of a latency), or one of the sweep's own. */
export interface SweepColumn {
  readonly header: string;
  /** The catalogue row it shows; absent for the sweep's own columns (point, B, residual, marks). */
  readonly metric?: Metric;
  readonly cell: (p: SweepPoint, index: number) => string;
}

/** A figure of a point, as the points table shows it: counts as they are, rates to two decimals, tokens/s to one. */
function figureCell(m: FigureMetric, s: Summary): string {
  const v = figureValue(m, s);
  if (v === undefined) return DASH;
  if (m.key === 'failed' || m.key === 'stalls') return String(v);
  return num(v, m.key === 'outputTokensPerSecond' ? 1 : 2);
}

/** The metric columns of the points table, from the catalogue: each figure, each latency at its headline percentiles. */
function metricColumns(run: RunFile): SweepColumn[] {
  const points = run.sweep?.points ?? [];
  return metricsFor('sweep', points.map((p) => p.summary)).flatMap((m): SweepColumn[] => {
    if (m.kind === 'figure') return [{ header: m.column ?? m.label, metric: m, cell: (p) => figureCell(m, p.summary) }];
    return m.headline.map((stat) => ({ header: `${m.label} ${stat}`, metric: m, cell: (p: SweepPoint) => {
      const st = latencyStats(m, p.summary);
      return formatMs(st?.count ? st[stat] : undefined);
    } }));
  });
}

/** The columns of the sweep's points table: the point, the catalogue's figures, then the fit's B and residual and the analysis' marks. */
export function sweepColumns(run: RunFile): SweepColumn[] {
  const resid = new Map((run.sweep?.residuals ?? []).map((r) => [r.label, r]));
  return [
    { header: 'point', cell: (p) => p.label },
    ...metricColumns(run),
    { header: 'B', cell: (p) => num(p.meanBatch, 2) },
    { header: 'residual', cell: (p) => {
      const r = resid.get(p.label);
      return r ? `${r.residualMs >= 0.005 ? '+' : ''}${num(Math.abs(r.residualMs) < 0.005 ? 0 : r.residualMs, 2)} ms` : DASH;
    } },
    { header: '', cell: (_p, i) => pointMarks(run, i).join(', ') },
  ];
}

/** The points table: its header, and one row per point, in the columns of sweepColumns. */
export function sweepTable(run: RunFile): { readonly header: string[]; readonly rows: string[][] } {
  const columns = sweepColumns(run);
  const rows = (run.sweep?.points ?? []).map((p, i) => columns.map((c) => c.cell(p, i)));
  return { header: columns.map((c) => c.header), rows };
}

/** The dial's figures by chunk size, as rows of [name, one cell per configuration]. */
export function dialRows(run: RunFile): { readonly header: string[]; readonly rows: string[][] } {
  const dial = run.prefillDial;
  if (!dial) return { header: [], rows: [] };
  const figs: (DialFigures & { label: string })[] = dial.configs.map((c) => ({ label: c.label, ...dialFigures(c) }));
  const rows: [string, (f: DialFigures) => string][] = [
    ['decode TPOT p99', (f) => formatMs(f.tpotP99Ms)],
    ['stalls', (f) => `${f.stallCount} (${formatMs(f.stallTotalMs)}, ${num(f.stallShare * 100, 1)}% of decode)`],
    ['long-prompt TTFT p50', (f) => formatMs(f.longTtftP50Ms)],
    ['long-prompt TTFT p99', (f) => formatMs(f.longTtftP99Ms)],
    ['long prompts', (f) => String(f.longCount)],
    ['failed requests', (f) => String(f.failed)],
    ['decode tokens/s', (f) => num(f.outputTokensPerSecond)],
  ];
  return { header: ['', ...figs.map((f) => f.label)], rows: rows.map(([name, get]) => [name, ...figs.map(get)]) };
}

/** A point's value of the swept dimension: "8", "2/s", "1024". */
function pointValue(dimension: NonNullable<RunFile['sweep']>['dimension'], p: SweepPoint): string {
  if (dimension === 'concurrency' && p.concurrency !== undefined) return String(p.concurrency);
  if (dimension === 'rate' && p.rate !== undefined) return `${formatQuantity(p.rate)}/s`;
  if (dimension === 'promptTokens' && p.promptTokens !== undefined) return String(p.promptTokens);
  return p.label;
}

/**
 * What a sweep ran, for its header: the dimension and its values, the requests of each point, and
 * what stays the same across points ("sweep over concurrency 1, 2, 4, 8 · 32 requests per point ·
 * 128-token prompts"). The run's own workload is only its first point's. Empty for another run.
 */
export function sweepWorkload(run: RunFile): string {
  const sw = run.sweep;
  if (!sw) return '';
  const w = run.workload;
  const name = sw.dimension === 'concurrency' ? 'concurrency' : sw.dimension === 'rate' ? 'request rate' : 'prompt length (tokens)';
  const values = sw.points.map((p) => pointValue(sw.dimension, p));
  const counts = sw.points.map((p) => p.summary.completed + p.summary.failed);
  const lo = Math.min(...counts), hi = Math.max(...counts);
  const size = counts.length === 0 ? (w.durationS !== undefined ? `${w.durationS} s per point` : '')
    : `${lo === hi ? lo : `${lo}–${hi}`} request${hi === 1 ? '' : 's'} per point${w.warmup ? ` (+ ${w.warmup} warmup)` : ''}`;
  const prompts = promptSourceWords(w.prompt);
  // what every point shares: the prompts, except where they are what is swept (then one stream at a time)
  const shared = sw.dimension === 'promptTokens' ? 'concurrency 1' : prompts;
  return [`sweep over ${name} ${values.join(', ')}`, size, shared].filter(Boolean).join(' · ');
}

/** The dial's workload in one sentence. */
export function dialWorkload(run: RunFile): string {
  const d = run.prefillDial;
  if (!d) return '';
  return `${d.decodeStreams} short decodes (${d.shortPromptTokens}-token prompts, ${d.shortMaxTokens} tokens each) while ${d.longPromptTokens}-token prompts arrive at ${d.longRate}/s, ${d.durationS} s per chunk size.`;
}

// ---- As text, for the terminal ----

function table(header: readonly string[], rows: readonly string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: readonly string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ').trimEnd();
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

/** The sweep as the CLI prints it: a row per point, then the facts. */
export function formatSweep(run: RunFile): string {
  if (!run.sweep) return 'not a sweep run\n';
  const { header, rows } = sweepTable(run);
  return [sweepWorkload(run), '', table(header, rows), '', ...sweepFacts(run).map((f) => f.text)].join('\n') + '\n';
}

/** The dial as the CLI prints it: a column per prefill chunk size. */
export function formatDial(run: RunFile): string {
  if (!run.prefillDial) return 'not a prefill-dial run\n';
  const { header, rows } = dialRows(run);
  return `prefill dial: ${dialWorkload(run)}\n\n${table(header, rows)}\n`;
}
