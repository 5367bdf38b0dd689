// The trade-off view of a sweep run (and the compact view of a chunked-prefill dial run).
//
//   renderSweep(container: HTMLElement, run: RunFile): void
//
// Call it when `run.sweep` (or `run.prefillDial`) exists; `hasSweepView(run)` says so. It replaces
// the container's content (and destroys the charts it drew there before; `disposeSweep(container)`
// does only that). No inline styles (the panel's CSP forbids them): the layout is in media/report.css,
// whose `.sweep-canvas` must give the canvas box a height (charts are drawn with maintainAspectRatio off). It shows throughput
// against p50 and p99 of each latency the metric catalogue gives a trade-off chart (TTFT, TTFO where
// the points have it, TPOT: src/present/metricCatalogue.ts), one dot per point labelled with its concurrency
// (or rate, or prompt length), the SLO lines, the knee, the operating point and the max-throughput
// point; the fit TPOT(B) ≈ base + k·B (or TTFT ≈ a + b·tokens) with its residuals and a verdict when
// the model does not fit. Each chart has a text alternative (a summary, and the points table's
// caption). Clicking a dot, a row, or its point's button (Enter or Space) shows that point's figures,
// marks its row and dispatches on the container a bubbling CustomEvent 'sweep-point-selected' with
// detail { index, label, requestIndexes } (indexes into run.requests), for the timeline to filter on.
//
// Colours: only the --vscode-charts-* variables (and --vscode-* for text), read at runtime with
// getComputedStyle. Browser only.
import type { ChartDataset, Plugin } from 'chart.js';
import { Chart } from './chartSetup';
import type { RunFile, SweepPoint } from '../../src/engine/core/types';
import { dialFigures } from '../../src/engine/analysis/fit';
import { dialRows, dialWorkload, pointMarks, sweepColumns, sweepFacts, sweepSlo, sweepTable } from '../../src/present/sweepText';
import { latenciesFor, latencyStats, type LatencyMetric } from '../../src/present/metricCatalogue';
import { DASH, fixed, formatMs as ms } from '../../src/present/units';
import { pageClock, scrollRegion } from './dom';

export const SWEEP_POINT_SELECTED = 'sweep-point-selected';

export interface SweepPointSelectedDetail {
  readonly index: number;
  readonly label: string;
  readonly requestIndexes: readonly number[];
}

export function hasSweepView(run: RunFile): boolean {
  return run.sweep !== undefined || run.prefillDial !== undefined;
}

interface Colours {
  readonly foreground: string;
  readonly lines: string;
  readonly blue: string;
  readonly orange: string;
  readonly green: string;
  readonly red: string;
  readonly purple: string;
  readonly yellow: string;
}

function readColours(el: HTMLElement): Colours {
  const style = getComputedStyle(el);
  const v = (name: string, fallback: string) => style.getPropertyValue(name).trim() || fallback;
  // a fallback only when a variable is missing altogether (outside VS Code): the element's text colour
  const fg = v('--vscode-charts-foreground', style.color || 'gray');
  return {
    foreground: fg,
    lines: v('--vscode-charts-lines', fg),
    blue: v('--vscode-charts-blue', fg),
    orange: v('--vscode-charts-orange', fg),
    green: v('--vscode-charts-green', fg),
    red: v('--vscode-charts-red', fg),
    purple: v('--vscode-charts-purple', fg),
    yellow: v('--vscode-charts-yellow', fg),
  };
}

const drawn = new WeakMap<HTMLElement, Chart[]>();

function el<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Record<string, string> = {}, ...children: (Node | string)[]): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  for (const [k, val] of Object.entries(attrs)) {
    if (k === 'class') e.className = val;
    else e.setAttribute(k, val);
  }
  for (const c of children) e.append(c);
  return e;
}

const num = (v: number | undefined, digits = 1): string => fixed(v, digits);

/** Unique ids for the text alternatives of a page's sweep charts (a page may draw a sweep again on a theme change). */
let idSeq = 0;
const nextId = (what: string) => `sweep-${++idSeq}-${what}`;

/** A canvas drawn by chart.js as an image, named by its title and described by a text alternative (`describedBy`: the ids of a summary, a table's caption). */
function chartCanvas(title: string, describedBy: string): HTMLCanvasElement {
  return el('canvas', { 'aria-label': title, role: 'img', 'aria-describedby': describedBy });
}

/** A visually hidden summary, for a chart's aria-describedby. */
function summaryText(id: string, text: string): HTMLElement {
  return el('p', { class: 'sr-only', id }, text);
}

function shortLabel(run: RunFile, p: SweepPoint): string {
  const d = run.sweep?.dimension;
  if (d === 'concurrency' && p.concurrency !== undefined) return String(p.concurrency);
  if (d === 'rate' && p.rate !== undefined) return `${p.rate}/s`;
  if (d === 'promptTokens' && p.promptTokens !== undefined) return `${p.promptTokens}`;
  return p.label;
}

/** Destroys the charts renderSweep drew in `container` and empties it. */
function disposeSweep(container: HTMLElement): void {
  for (const c of drawn.get(container) ?? []) c.destroy();
  drawn.delete(container);
  container.replaceChildren();
}

export function renderSweep(container: HTMLElement, run: RunFile): void {
  disposeSweep(container);
  drawn.set(container, []);
  container.replaceChildren();
  container.classList.add('sweep-view');
  if (run.sweep) renderSweepRun(container, run);
  else if (run.prefillDial) renderDial(container, run);
  else container.append(el('p', {}, 'This run is not a sweep.'));
}

// ---- Sweep ----

/**
 * Where a dot's label goes: right of the dot and above it, unless that runs past the canvas's
 * edge (the rightmost point is often the busiest, its label the longest: "8 · max throughput, knee"),
 * then left of it; below it when there is no room above. Whole, never clipped, as far as the canvas
 * is wide enough for the text at all.
 */
export function labelPlace(x: number, y: number, width: number, height: number, box: { readonly width: number; readonly height: number }): { x: number; y: number; align: 'left' | 'right' } {
  const gap = 5;
  const right = x + gap + width <= box.width - 1;
  const left = x - gap - width >= 1;
  const align = right || !left ? 'left' : 'right';
  const ax = align === 'left' ? Math.max(1, Math.min(x + gap, box.width - 1 - width)) : x - gap;
  // textBaseline is 'bottom': y is the text's bottom edge
  const ay = y - 4 - height >= 1 ? y - 4 : Math.min(box.height - 1, y + 4 + height);
  return { x: ax, y: ay, align };
}

/** Draws each dot's label (its concurrency, and the analysis' picks) beside it, inside the canvas. */
const dotLabels: Plugin<'scatter'> = {
  id: 'sweepDotLabels',
  afterDatasetsDraw(chart) {
    const opts = (chart.options.plugins as { sweepDotLabels?: { labels?: (string | undefined)[][]; color?: string } } | undefined)?.sweepDotLabels;
    if (!opts?.labels) return;
    const { ctx } = chart;
    ctx.save();
    ctx.fillStyle = opts.color ?? 'gray';
    const size = Math.max(10, Number(Chart.defaults.font.size ?? 12) - 1);
    ctx.font = `${size}px ${Chart.defaults.font.family ?? 'sans-serif'}`;
    ctx.textBaseline = 'bottom';
    chart.data.datasets.forEach((_ds, di) => {
      const labels = opts.labels![di];
      if (!labels || !chart.isDatasetVisible(di)) return;
      chart.getDatasetMeta(di).data.forEach((elem, i) => {
        const text = labels[i];
        if (!text) return;
        const at = labelPlace(elem.x, elem.y, ctx.measureText(text).width, size, { width: chart.width, height: chart.height });
        ctx.textAlign = at.align;
        ctx.fillText(text, at.x, at.y);
      });
    });
    ctx.restore();
  },
};

/** Horizontal SLO lines, labelled, dashed. */
const hLines: Plugin<'scatter'> = {
  id: 'sweepSloLines',
  afterDatasetsDraw(chart) {
    const opts = (chart.options.plugins as { sweepSloLines?: { lines?: { y: number; label: string }[]; color?: string } } | undefined)?.sweepSloLines;
    if (!opts?.lines?.length) return;
    const { ctx, chartArea, scales } = chart;
    const y = scales.y;
    if (!y) return;
    ctx.save();
    ctx.strokeStyle = opts.color ?? 'gray';
    ctx.fillStyle = opts.color ?? 'gray';
    ctx.setLineDash([5, 4]);
    ctx.lineWidth = 1.5;
    ctx.textAlign = 'right';
    ctx.textBaseline = 'bottom';
    for (const l of opts.lines) {
      const py = y.getPixelForValue(l.y);
      if (py < chartArea.top || py > chartArea.bottom) continue;
      ctx.beginPath();
      ctx.moveTo(chartArea.left, py);
      ctx.lineTo(chartArea.right, py);
      ctx.stroke();
      ctx.fillText(l.label, chartArea.right - 4, py - 2);
    }
    ctx.restore();
  },
};

/** What the parts of one sweep's view share: where they draw, the run, its colours and labels, the points table's caption, and how a point is chosen. */
interface SweepContext {
  readonly container: HTMLElement;
  readonly run: RunFile;
  readonly colours: Colours;
  /** Each point's short label ("8", "2/s"). */
  readonly labels: readonly string[];
  /** The points table's caption: every chart names it as part of its text alternative. */
  readonly captionId: string;
  readonly select: (index: number) => void;
}

function renderSweepRun(container: HTMLElement, run: RunFile): void {
  const sw = run.sweep!;
  const points = sw.points;
  const dimName = sw.dimension === 'concurrency' ? 'concurrency' : sw.dimension === 'rate' ? 'request rate' : 'prompt length';
  container.append(el('h2', {}, `Sweep over ${dimName} · ${points.length} point${points.length === 1 ? '' : 's'}`));
  // What the sweep says, in words first
  const facts = el('ul', { class: 'sweep-facts' });
  for (const f of sweepFacts(run, 'vscode', pageClock())) facts.append(el('li', { class: f.kind.startsWith('verdict-') ? `sweep-verdict sweep-${f.kind}` : `sweep-${f.kind}` }, f.text));
  container.append(facts);

  const details = el('div', { class: 'sweep-point-details', role: 'status' });
  const captionId = nextId('points-caption');
  const table = el('table', { class: 'sweep-points' });
  const select = (index: number) => {
    const p = points[index];
    if (!p) return;
    showPoint(details, run, p, index);
    for (const row of table.querySelectorAll('tr[data-index]')) {
      const chosen = row.getAttribute('data-index') === String(index);
      row.classList.toggle('selected', chosen);
      row.querySelector('button.point-select')?.setAttribute('aria-pressed', String(chosen));
    }
    const detail: SweepPointSelectedDetail = { index, label: p.label, requestIndexes: p.requestIndexes };
    container.dispatchEvent(new CustomEvent<SweepPointSelectedDetail>(SWEEP_POINT_SELECTED, { detail, bubbles: true }));
  };
  const ctx: SweepContext = { container, run, colours: readColours(container), labels: points.map((p) => shortLabel(run, p)), captionId, select };
  // a trade-off chart per catalogue latency the points have (src/present/metricCatalogue.ts)
  const slo = sweepSlo(run);
  for (const m of latenciesFor('tradeOff', points.map((p) => p.summary))) tradeOffChart(ctx, m, m.slo ? slo?.[m.slo] : undefined);
  if (sw.residuals?.length || sw.prefillFit) fitChart(ctx);
  fillPointsTable(table, ctx);
  container.append(scrollRegion(table, 'Sweep points'), details);
}

/** A chart's box: its title, its canvas and its text alternative (a summary, and the points table's caption). */
function chartBox(ctx: SweepContext, chartId: string, title: string, summary: string): HTMLCanvasElement {
  const summaryId = nextId(`${chartId}-summary`);
  const canvas = chartCanvas(title, `${summaryId} ${ctx.captionId}`);
  ctx.container.append(el('div', { class: 'sweep-chart', 'data-chart': chartId }, el('h3', {}, title), el('div', { class: 'sweep-canvas' }, canvas),
    summaryText(summaryId, summary)));
  return canvas;
}

/** The dots of a trade-off chart: the points that have the metric (their indexes), at p50 and at p99 against the throughput. */
function tradeOffDots(run: RunFile, m: LatencyMetric): { idx: number[]; p50: { x: number; y: number }[]; p99: { x: number; y: number }[] } {
  const idx: number[] = [];
  const p50: { x: number; y: number }[] = [];
  const p99: { x: number; y: number }[] = [];
  run.sweep!.points.forEach((p, i) => {
    const s = latencyStats(m, p.summary);
    if (!s?.count) return;
    idx.push(i);
    p50.push({ x: p.summary.outputTokensPerSecond, y: s.p50 ?? s.mean });
    p99.push({ x: p.summary.outputTokensPerSecond, y: s.p99 ?? s.max });
  });
  return { idx, p50, p99 };
}

/** Throughput against a latency at p50 and p99, a dot per point (the analysis' picks larger, each its own shape), the SLO line. */
function tradeOffChart(ctx: SweepContext, m: LatencyMetric, sloValue: number | undefined): void {
  const { run, colours, labels } = ctx;
  const sw = run.sweep!;
  const canvas = chartBox(ctx, m.key, `Throughput against ${m.label}`, tradeOffSummary(run, m, labels, sloValue));
  const { idx, p50, p99 } = tradeOffDots(run, m);
  const special = idx.map((i) => pointMarks(run, i));
  const radius = special.map((k) => (k.length ? 7 : 4));
  const style = idx.map((i) => (sw.operatingPoint?.index === i ? 'rectRot' : sw.maxThroughputPoint?.index === i ? 'rect' : sw.knee?.index === i ? 'triangle' : 'circle'));
  const datasets: ChartDataset<'scatter'>[] = [
    { label: `${m.label} p50`, data: p50, showLine: true, borderColor: colours.blue, backgroundColor: colours.blue, pointRadius: radius, pointHoverRadius: 9, pointStyle: style },
    { label: `${m.label} p99`, data: p99, showLine: true, borderColor: colours.orange, backgroundColor: colours.orange, borderDash: [4, 3], pointRadius: radius, pointHoverRadius: 9, pointStyle: style },
  ];
  const dot = idx.map((i, j) => (special[j]!.length ? `${labels[i]} · ${special[j]!.join(', ')}` : labels[i]!));
  const chart = new Chart(canvas, {
    type: 'scatter',
    data: { datasets },
    options: {
      animation: false,
      maintainAspectRatio: false,
      responsive: true,
      scales: {
        x: { type: 'linear', title: { display: true, text: 'output tokens/s', color: colours.foreground }, ticks: { color: colours.foreground }, grid: { color: colours.lines } },
        y: { type: 'linear', beginAtZero: true, suggestedMax: sloValue !== undefined ? sloValue * 1.1 : undefined,
          title: { display: true, text: `${m.label} (${m.unit})`, color: colours.foreground }, ticks: { color: colours.foreground }, grid: { color: colours.lines } },
      },
      plugins: {
        legend: { labels: { color: colours.foreground } },
        tooltip: { callbacks: { label: (item) => `${datasets[item.datasetIndex]!.label} ${ms(item.parsed.y ?? undefined)} at ${num(item.parsed.x ?? undefined)} tok/s (${dot[item.dataIndex]})` } },
        ...({
          sweepDotLabels: { labels: [dot, []], color: colours.foreground },
          sweepSloLines: { lines: sloValue !== undefined ? [{ y: sloValue, label: `SLO ${sloValue} ms` }] : [], color: colours.red },
        } as object),
      },
      onClick: (_e, elements) => {
        const hit = elements[0];
        if (hit) ctx.select(idx[hit.index]!);
      },
    },
    plugins: [dotLabels, hLines],
  });
  drawn.get(ctx.container)!.push(chart as unknown as Chart);
}

/** The model's line and what it was fitted to: TTFT against prompt tokens (the prefill fit), or mean TPOT against the batch. */
function fitLines(sw: NonNullable<RunFile['sweep']>): { measured: { x: number; y: number }[]; line: { x: number; y: number }[] } {
  if (sw.prefillFit) {
    const pf = sw.prefillFit;
    const measured = sw.points.map((p) => ({ x: p.measuredPromptTokens ?? p.promptTokens ?? NaN, y: p.summary.ttftMs.mean })).filter((d) => Number.isFinite(d.x));
    const maxX = Math.max(...measured.map((d) => d.x), 1);
    return { measured, line: [{ x: 0, y: pf.aMs }, { x: maxX, y: pf.aMs + pf.bMsPerToken * maxX }] };
  }
  const rs = sw.residuals!;
  const maxX = Math.max(...rs.map((r) => r.batch), 1);
  const k = rs.length >= 2 && rs[1]!.batch !== rs[0]!.batch ? (rs[1]!.predictedMs - rs[0]!.predictedMs) / (rs[1]!.batch - rs[0]!.batch) : 0;
  const base = rs[0]!.predictedMs - k * rs[0]!.batch;
  return { measured: rs.map((r) => ({ x: r.batch, y: r.tpotMs })), line: [{ x: 0, y: base }, { x: maxX, y: base + k * maxX }] };
}

/** The model against the measurements: TPOT against B, or TTFT against prompt tokens. */
function fitChart(ctx: SweepContext): void {
  const { run, colours } = ctx;
  const sw = run.sweep!;
  const slo = sweepSlo(run);
  const fitTitle = sw.prefillFit ? 'TTFT against prompt tokens, with the fit' : 'Mean TPOT against the batch, with the fit';
  const fitFact = sweepFacts(run, 'vscode', pageClock()).find((f) => f.kind === (sw.prefillFit ? 'prefill' : 'fit'));
  const canvas = chartBox(ctx, 'fit', fitTitle, `${fitTitle}: ${fitFact?.text ?? 'the measured points and the fitted line'} Each point's figures are in the points table.`);
  const { measured, line } = fitLines(sw);
  const axis = (text: string) => ({ type: 'linear' as const, beginAtZero: true, title: { display: true, text, color: colours.foreground }, ticks: { color: colours.foreground }, grid: { color: colours.lines } });
  const chart = new Chart(canvas, {
    type: 'scatter',
    data: {
      datasets: [
        { label: 'measured (mean)', data: measured, backgroundColor: colours.blue, borderColor: colours.blue, pointRadius: 5 },
        { label: 'fit', data: line, showLine: true, pointRadius: 0, borderColor: colours.green, borderDash: [6, 3] },
      ],
    },
    options: {
      animation: false,
      maintainAspectRatio: false,
      scales: { x: axis(sw.prefillFit ? 'prompt tokens' : 'decoding batch B'), y: axis(sw.prefillFit ? 'TTFT mean (ms)' : 'TPOT mean (ms)') },
      plugins: {
        legend: { labels: { color: colours.foreground } },
        ...({ sweepSloLines: { lines: !sw.prefillFit && slo?.tpotMs !== undefined ? [{ y: slo.tpotMs, label: `TPOT SLO ${slo.tpotMs} ms` }] : [], color: colours.red } } as object),
      },
    },
    plugins: [hLines],
  });
  drawn.get(ctx.container)!.push(chart as unknown as Chart);
}

/**
 * The points, as a table, in the columns of sweepTable (the catalogue's figures, B, the residual, the
 * marks). Each row is chosen by the button that names its point (Enter or Space, as any button; a
 * click anywhere on the row too); the chosen row is marked (aria-pressed on its button, a visible style on the row).
 */
function fillPointsTable(table: HTMLTableElement, ctx: SweepContext): void {
  const { header, rows } = sweepTable(ctx.run);
  table.append(el('caption', { id: ctx.captionId }, `The sweep's ${rows.length} points: choose one to see its figures and its requests on the timeline`));
  table.append(el('thead', {}, el('tr', {}, ...header.map((h) => el('th', { scope: 'col' }, h || 'marks')))));
  const body = el('tbody');
  rows.forEach((cells, i) => {
    const [name, ...rest] = cells;
    const button = el('button', { type: 'button', class: 'point-select', 'aria-pressed': 'false' }, name!);
    const row = el('tr', { 'data-index': String(i) }, el('th', { scope: 'row' }, button), ...rest.map((t) => el('td', {}, t)));
    row.addEventListener('click', () => ctx.select(i));
    body.append(row);
  });
  table.append(body);
}

/** A trade-off chart in words: how the metric moved as the throughput rose, and the SLO, for its text alternative. */
function tradeOffSummary(run: RunFile, m: LatencyMetric, labels: readonly string[], slo: number | undefined): string {
  const pts = run.sweep!.points.map((p, i) => ({ p, i, s: latencyStats(m, p.summary) })).filter(({ s }) => (s?.count ?? 0) > 0);
  if (pts.length === 0) return `No point has a ${m.label}.`;
  const at = ({ p, i, s }: (typeof pts)[number]) => `${ms(s!.p50)} p50 and ${ms(s!.p99)} p99 at ${num(p.summary.outputTokensPerSecond)} tokens/s (${labels[i]})`;
  const first = pts[0]!, last = pts[pts.length - 1]!;
  const sloText = slo === undefined ? '' : ` The SLO is ${ms(slo)}.`;
  return `${m.label} against output throughput over ${pts.length} points: from ${at(first)} to ${at(last)}.${sloText} Every point's figures are in the points table.`;
}

/** A point's figures: how many requests, each catalogue figure of the sweep (a latency's percentiles on one line), the SLO and the batch. */
function showPoint(details: HTMLElement, run: RunFile, p: SweepPoint, index: number): void {
  const s = p.summary;
  const missed = s.sloMissed ?? [];
  const figures = new Map<string, string[]>();
  for (const c of sweepColumns(run)) {
    if (!c.metric) continue;
    const m = c.metric;
    const name = m.kind === 'latency' ? `${m.label} ${m.headline.join(' / ')}` : m.title;
    const v = c.cell(p, index);
    // a rate with its unit ("512.0 tok/s"); a count as it is
    figures.set(name, [...(figures.get(name) ?? []), m.kind === 'figure' && m.unit.includes('/') && v !== DASH ? `${v} ${m.unit}` : v]);
  }
  const rows: [string, string][] = [
    ['requests', `${s.completed} ok, ${s.failed} failed (${p.requestIndexes.length} in the timeline)`],
    ...[...figures].map(([name, cells]): [string, string] => [name, cells.join(' / ')]),
    ['SLO', sweepSlo(run) ? (missed.length ? `missed: ${missed.join(', ')}` : 'met at p99') : 'none given'],
    ['decoding batch', num(p.meanBatch, 2)],
  ];
  details.replaceChildren(el('h3', {}, `Point ${p.label}`), el('dl', {}, ...rows.flatMap(([k, v]) => [el('dt', {}, k), el('dd', {}, v)])));
  details.setAttribute('data-index', String(index));
}

// ---- The chunked-prefill dial ----

function renderDial(container: HTMLElement, run: RunFile): void {
  const dial = run.prefillDial!;
  const colours = readColours(container);
  container.append(el('h2', {}, `Chunked-prefill dial · ${dial.configs.length} chunk sizes`), el('p', { class: 'sweep-dial-workload' }, dialWorkload(run)));
  const figs = dial.configs.map((c) => ({ label: c.label, ...dialFigures(c) }));
  const { header, rows } = dialRows(run);
  const table = el('table', { class: 'sweep-dial' });
  const captionId = nextId('dial-caption');
  table.append(el('caption', { id: captionId }, 'The figures of each prefill chunk size'));
  table.append(el('thead', {}, el('tr', {}, ...header.map((h) => el('th', { scope: 'col' }, h || 'figure')))));
  table.append(el('tbody', {}, ...rows.map(([name, ...cells]) => el('tr', {}, el('th', { scope: 'row' }, name!), ...cells.map((c) => el('td', {}, c))))));
  container.append(scrollRegion(table, 'Chunked-prefill dial figures'));

  const summaryId = nextId('dial-summary');
  const canvas = chartCanvas('Decode TPOT p99, stall time and long-prompt TTFT p50 by prefill chunk size', `${summaryId} ${captionId}`);
  container.append(el('div', { class: 'sweep-chart', 'data-chart': 'dial' }, el('div', { class: 'sweep-canvas' }, canvas),
    summaryText(summaryId, `Bars for each chunk size (${figs.map((f) => f.label).join(', ')}): ${figs.map((f) => `${f.label}: TPOT p99 ${ms(f.tpotP99Ms)}, stalls ${ms(f.stallTotalMs)}, long-prompt TTFT p50 ${ms(f.longTtftP50Ms)}`).join('; ')}. The table above has every figure.`)));
  const chart = new Chart(canvas, {
    type: 'bar',
    data: {
      labels: figs.map((f) => f.label),
      datasets: [
        { label: 'decode TPOT p99 (ms)', data: figs.map((f) => f.tpotP99Ms), backgroundColor: colours.blue },
        { label: 'stall time (ms)', data: figs.map((f) => f.stallTotalMs), backgroundColor: colours.red },
        { label: 'long-prompt TTFT p50 (ms)', data: figs.map((f) => f.longTtftP50Ms), backgroundColor: colours.purple },
      ],
    },
    options: {
      animation: false,
      maintainAspectRatio: false,
      scales: {
        x: { ticks: { color: colours.foreground }, grid: { color: colours.lines } },
        y: { type: 'linear', beginAtZero: true, title: { display: true, text: 'ms', color: colours.foreground }, ticks: { color: colours.foreground }, grid: { color: colours.lines } },
      },
      plugins: { legend: { labels: { color: colours.foreground } } },
    },
  });
  drawn.get(container)!.push(chart as unknown as Chart);
}
