// The chart.js charts: CDFs (one run or two overlaid), ITL over time (zoomable with
// chartjs-plugin-zoom), and output tokens/s with requests in flight per second. Colours come from the
// theme; `applyTheme` re-reads them when VS Code switches theme. Animations are off: data this size
// should appear at once, and a report is not a show.
import type { ChartDataset, ChartOptions, Plugin, TooltipItem } from 'chart.js';
import { Chart } from './chartSetup';
import type { CdfPoint } from './cdf';
import { formatAt, formatAxisMs, formatInt, formatMs, formatNumber } from '../../src/present/units';
import type { Theme } from './theme';

let currentTheme: Theme | undefined;

/** Fills the canvas with the editor background so an exported PNG is not transparent. */
const background: Plugin = {
  id: 'reportBackground',
  beforeDraw(chart) {
    if (!currentTheme) return;
    const { ctx, width, height } = chart;
    ctx.save();
    ctx.globalCompositeOperation = 'destination-over';
    ctx.fillStyle = currentTheme.background;
    ctx.fillRect(0, 0, width, height);
    ctx.restore();
  },
};

/** Dashed vertical SLO lines, labelled. */
interface SloLine { readonly x: number; readonly label: string }
const sloLines: Plugin = {
  id: 'sloLines',
  afterDatasetsDraw(chart) {
    const lines = (chart.options.plugins as { sloLines?: { lines?: SloLine[] } } | undefined)?.sloLines?.lines;
    if (!lines?.length || !currentTheme) return;
    const { ctx, chartArea, scales } = chart;
    const x = scales.x;
    if (!x) return;
    ctx.save();
    ctx.strokeStyle = currentTheme.red;
    ctx.fillStyle = currentTheme.red;
    ctx.setLineDash([5, 4]);
    ctx.lineWidth = 1.5;
    ctx.font = `${Math.max(10, currentTheme.fontSize - 2)}px ${currentTheme.fontFamily}`;
    for (const l of lines) {
      const px = x.getPixelForValue(l.x);
      if (px < chartArea.left || px > chartArea.right) continue;
      ctx.beginPath();
      ctx.moveTo(px, chartArea.top);
      ctx.lineTo(px, chartArea.bottom);
      ctx.stroke();
      ctx.textAlign = px > chartArea.right - 60 ? 'right' : 'left';
      ctx.fillText(l.label, px + (ctx.textAlign === 'right' ? -4 : 4), chartArea.top + 10);
    }
    ctx.restore();
  },
};
Chart.register(background, sloLines);

export function setChartTheme(t: Theme): void {
  currentTheme = t;
  Chart.defaults.color = t.muted;
  Chart.defaults.borderColor = t.lines;
  Chart.defaults.font.family = t.fontFamily;
  Chart.defaults.font.size = Math.max(10, t.fontSize - 1);
}

export interface CdfSeries {
  readonly label: string;
  readonly points: readonly CdfPoint[];
  /** Palette slot: 0 first run, 1 compared run. */
  readonly slot: number;
  readonly dashed?: boolean;
}

const palette = (t: Theme, slot: number) => [t.blue, t.orange, t.green, t.purple][slot % 4]!;

function axisStyle(t: Theme) {
  return { grid: { color: t.lines, tickColor: t.lines }, ticks: { color: t.muted }, border: { color: t.lines } };
}

/** 1, 2 or 5 × 10^n: the ticks a log axis labels. */
function isOneTwoFive(v: number): boolean {
  if (!(v > 0)) return false;
  const m = Number((v / 10 ** Math.floor(Math.log10(v) + 1e-9)).toPrecision(3));
  return m === 1 || m === 2 || m === 5;
}

/** A log axis' tick in ms: "0.01", "5", "1,000" (no float noise such as 0.30000000000000004). */
function logTickLabel(v: number): string {
  return Number(v.toPrecision(3)).toLocaleString('en-US', { maximumFractionDigits: 6 });
}

/** Test hook: the x axis' drawn labels and their extents, so a test can tell that they do not overlap. */
const tickExtents: Plugin = {
  id: 'reportTickExtents',
  afterDraw(chart) {
    const x = chart.scales.x;
    const canvas = chart.canvas as HTMLCanvasElement | null;
    if (!x || !canvas?.dataset) return;
    const { ctx } = chart;
    ctx.save();
    const items = x.getLabelItems().map((it) => {
      const font = (it.options as { font?: { string?: string } }).font?.string;
      if (font) ctx.font = font;
      const label = Array.isArray(it.label) ? it.label.join(' ') : String(it.label);
      const w = ctx.measureText(label).width;
      const [cx] = (it.options as { translation: [number, number] }).translation;
      return [label, Math.round(cx - w / 2), Math.round(cx + w / 2)];
    }).filter(([label]) => label !== '');
    ctx.restore();
    canvas.dataset.xTicks = JSON.stringify(items);
  },
};
Chart.register(tickExtents);

/** `log`: a logarithmic time axis, for ITL, where a few long stalls would squash the body of the curve. */
export function cdfChart(canvas: HTMLCanvasElement, t: Theme, title: string, series: readonly CdfSeries[], slo?: number, log = false): Chart {
  const datasets: ChartDataset<'line', CdfPoint[]>[] = series.map((s) => ({
    label: s.label,
    data: s.points as CdfPoint[],
    borderColor: palette(t, s.slot),
    backgroundColor: palette(t, s.slot),
    borderWidth: 2,
    borderDash: s.dashed ? [6, 3] : [],
    pointRadius: 0,
    stepped: 'after' as const,
    parsing: false as const,
  }));
  const options: ChartOptions<'line'> = {
    animation: false,
    responsive: true,
    maintainAspectRatio: false,
    interaction: { mode: 'nearest', intersect: false, axis: 'x' },
    scales: {
      // ticks flat (rotated labels crowd a narrow panel) and skipped when they would overlap; on the log
      // axis only the 1-2-5 ticks are kept before skipping: blank labels in between would be what is kept
      x: log
        ? { type: 'logarithmic', title: { display: true, text: `${title} (ms, log scale)`, color: t.muted }, ...axisStyle(t),
          afterBuildTicks: (axis) => { axis.ticks = axis.ticks.filter((k) => isOneTwoFive(k.value)); },
          ticks: { color: t.muted, autoSkip: true, autoSkipPadding: 10, maxRotation: 0, callback: (v) => logTickLabel(Number(v)) } }
        : { type: 'linear', title: { display: true, text: `${title} (ms)`, color: t.muted }, ...axisStyle(t),
          ticks: { color: t.muted, autoSkip: true, autoSkipPadding: 10, maxRotation: 0 } },
      y: {
        type: 'linear', min: 0, max: 1, ...axisStyle(t),
        ticks: { color: t.muted, callback: (v) => `${Math.round(Number(v) * 100)}%` },
      },
    },
    plugins: {
      legend: { display: series.length > 1, labels: { color: t.foreground, boxWidth: 14 } },
      tooltip: { callbacks: { label: (c) => `${c.dataset.label}: ${formatMs((c.raw as CdfPoint).x)} at ${((c.raw as CdfPoint).y * 100).toFixed(1)}%` } },
      ...({ sloLines: { lines: slo === undefined ? [] : [{ x: slo, label: `SLO ${formatMs(slo)}` }] } } as object),
    },
  };
  return new Chart(canvas, { type: 'line', data: { datasets }, options });
}

export interface ScatterPoint { readonly x: number; readonly y: number }

/** The x range a zoomable chart shows, after a zoom or a pan (wheel, drag or keys). */
export type OnView = (min: number, max: number) => void;

/** ITL over time: typical points in the run's colour, those above `highlightAbove` (stalls) in red. */
export function itlChart(canvas: HTMLCanvasElement, t: Theme, normal: ScatterPoint[], high: ScatterPoint[], note: string, onView?: OnView): Chart {
  const viewOf = ({ chart }: { chart: Chart }) => onView?.(chart.scales.x!.min, chart.scales.x!.max);
  const options: ChartOptions<'scatter'> = {
    animation: false,
    responsive: true,
    maintainAspectRatio: false,
    scales: {
      x: { type: 'linear', title: { display: true, text: 'time since start', color: t.muted }, ...axisStyle(t),
        ticks: { color: t.muted, callback: (v) => formatAxisMs(Number(v) * 1000, 1000) } },
      y: { type: 'linear', title: { display: true, text: 'ITL (ms)', color: t.muted }, beginAtZero: true, ...axisStyle(t) },
    },
    plugins: {
      legend: { display: true, labels: { color: t.foreground, boxWidth: 10 } },
      tooltip: { callbacks: { label: (c) => `${formatMs((c.raw as ScatterPoint).y)} at ${formatNumber((c.raw as ScatterPoint).x)} s` } },
      zoom: {
        zoom: { wheel: { enabled: true }, pinch: { enabled: true }, drag: { enabled: false }, mode: 'x', onZoomComplete: viewOf },
        pan: { enabled: true, mode: 'x', onPanComplete: viewOf },
        limits: { x: { min: 'original', max: 'original' } },
      },
    },
  };
  return new Chart(canvas, {
    type: 'scatter',
    data: {
      datasets: [
        { label: `ITL ${note}`, data: normal, pointRadius: 1.5, borderWidth: 0, backgroundColor: t.blue, parsing: false },
        { label: 'above ITL p99', data: high, pointRadius: 2.5, borderWidth: 0, backgroundColor: t.red, parsing: false },
      ],
    },
    options,
  });
}

interface ZoomableChart extends Chart {
  zoom(amount: number): void;
  pan(delta: { x?: number; y?: number }): void;
  resetZoom(): void;
}

/**
 * The keyboard's way to zoom a chart that chartjs-plugin-zoom zooms on x (the mouse has the wheel and
 * drag): the canvas takes focus; + and − zoom in and out about the middle, ← and → pan by a fifth of
 * the view, 0 or Home shows everything. Keys it handles do not scroll the page.
 */
export function zoomByKeyboard(chart: Chart, canvas: HTMLCanvasElement, onView?: OnView): void {
  canvas.tabIndex = 0;
  const z = chart as ZoomableChart;
  canvas.addEventListener('keydown', (e) => {
    if (e.altKey || e.ctrlKey || e.metaKey) return;
    const step = (chart.chartArea?.width ?? canvas.clientWidth) / 5;
    switch (e.key) {
      case '+': case '=': z.zoom(1.5); break;
      case '-': case '_': case '−': z.zoom(1 / 1.5); break;
      case 'ArrowLeft': z.pan({ x: step }); break;
      case 'ArrowRight': z.pan({ x: -step }); break;
      case '0': case 'Home': z.resetZoom(); break;
      default: return;
    }
    e.preventDefault();
    onView?.(chart.scales.x!.min, chart.scales.x!.max);
  });
}

/** What a CDF shows, in words, from the engine's figures (its text alternative, beside the table row it links to). */
export function cdfSummaryText(label: string, sides: readonly { readonly name?: string; readonly stats: { readonly count: number; readonly p50?: number; readonly p90?: number; readonly p99?: number; readonly max: number } }[], slo?: number): string {
  const one = (x: (typeof sides)[number]) => (x.stats.count === 0 ? `${x.name ? `${x.name}: ` : ''}no samples`
    : `${x.name ? `${x.name}: ` : ''}p50 ${formatMs(x.stats.p50)}, p90 ${formatMs(x.stats.p90)}, p99 ${formatMs(x.stats.p99)}, max ${formatMs(x.stats.max)} over ${formatInt(x.stats.count)} samples`);
  return `The share of ${label} values at most each time (a cumulative distribution). ${sides.map(one).join('; ')}.${slo === undefined ? '' : ` SLO ${formatMs(slo)}.`}`;
}

/** ITL over time in words: how many gaps, their median and the longest (its text alternative). */
export function itlTimeSummaryText(at: ArrayLike<number>, itl: ArrayLike<number>, p50: number | undefined, p99: number | undefined): string {
  const n = itl.length;
  if (n === 0) return 'No gaps between chunks to show.';
  let maxI = 0, above = 0, end = 0;
  for (let i = 0; i < n; i++) {
    if (itl[i]! > itl[maxI]!) maxI = i;
    if (p99 !== undefined && itl[i]! > p99) above++;
    if (at[i]! > end) end = at[i]!;
  }
  return `Every gap between chunks over the run's ${formatAt(end)}: ${formatInt(n)} gaps, median ${formatMs(p50)}, p99 ${formatMs(p99)}; ${formatInt(above)} above p99 (red), the longest ${formatMs(itl[maxI])} at ${formatAt(at[maxI]!)}.`;
}

/** Throughput and requests in flight per second, in words (its text alternative). */
export function throughputSummaryText(seconds: readonly number[], tps: readonly number[], inFlight: readonly number[]): string {
  if (seconds.length === 0) return 'No seconds to show yet.';
  let peak = 0;
  for (let i = 1; i < tps.length; i++) if (tps[i]! > tps[peak]!) peak = i;
  const mean = tps.reduce((a, b) => a + b, 0) / tps.length;
  // a loop: a spread over a run of many seconds (more than ~120 000) overflows the stack
  let most = -Infinity;
  for (const x of inFlight) if (x > most) most = x;
  return `Over ${formatInt(seconds.length)} seconds: output ${formatNumber(mean)} tokens/s on average, at most ${formatNumber(tps[peak])} tokens/s (second ${seconds[peak]}); up to ${formatNumber(most)} requests in flight on average over a second.`;
}

/**
 * A line chart over the run's seconds with a left axis and, when given, a right one (its grid not
 * drawn over the plot): the throughput and the server-gauge charts.
 */
function overTimeOptions(
  t: Theme,
  left: { readonly text: string; readonly precision?: number },
  right: { readonly text: string; readonly max?: number } | undefined,
  label: (c: TooltipItem<'line'>) => string,
): ChartOptions<'line'> {
  return {
    animation: false,
    responsive: true,
    maintainAspectRatio: false,
    interaction: { mode: 'index', intersect: false },
    scales: {
      x: { type: 'linear', title: { display: true, text: 'time since start (s)', color: t.muted }, ...axisStyle(t) },
      y: { type: 'linear', beginAtZero: true, position: 'left', title: { display: true, text: left.text, color: t.muted }, ...axisStyle(t),
        ...(left.precision !== undefined ? { ticks: { color: t.muted, precision: left.precision } } : {}) },
      ...(right ? { y1: { type: 'linear' as const, beginAtZero: true, ...(right.max !== undefined ? { min: 0, max: right.max } : {}), position: 'right' as const,
        title: { display: true, text: right.text, color: t.muted }, ...axisStyle(t), grid: { drawOnChartArea: false, color: t.lines } } } : {}),
    },
    plugins: {
      legend: { display: true, labels: { color: t.foreground, boxWidth: 14 } },
      tooltip: { callbacks: { label } },
    },
  };
}

export function throughputChart(canvas: HTMLCanvasElement, t: Theme, seconds: number[], tps: number[], inFlight: number[]): Chart {
  const options = overTimeOptions(t, { text: 'output tokens/s' }, { text: 'in flight' }, (c) => `${c.dataset.label}: ${formatNumber(c.parsed.y ?? undefined)}`);
  return new Chart(canvas, {
    type: 'line',
    data: {
      datasets: [
        { label: 'output tokens/s', data: seconds.map((x, i) => ({ x: x + 0.5, y: tps[i]! })), borderColor: t.green,
          backgroundColor: t.green, pointRadius: 0, borderWidth: 2, yAxisID: 'y', parsing: false, stepped: false },
        { label: 'requests in flight', data: seconds.map((x, i) => ({ x: x + 0.5, y: inFlight[i]! })), borderColor: t.orange,
          backgroundColor: t.orange, pointRadius: 0, borderWidth: 1.5, borderDash: [4, 3], yAxisID: 'y1', parsing: false },
      ],
    },
    options,
  });
}

/** A dataset that names its theme colour, so that applyTheme can find it again. */
type ThemeColour = 'blue' | 'orange' | 'green' | 'purple' | 'red' | 'yellow';

/** The server's gauges over the run (its /metrics, about once a second): running and waiting requests, and KV-cache use (right axis, %). A null sample is a gap. */
export function gaugeChart(canvas: HTMLCanvasElement, t: Theme, samples: { readonly atMs: readonly number[]; readonly running: readonly (number | null)[]; readonly waiting: readonly (number | null)[]; readonly kvCacheUsage: readonly (number | null)[] }): Chart {
  const series = (ys: readonly (number | null)[], scale = 1) => samples.atMs.map((x, i) => ({ x: x / 1000, y: ys[i] === null || ys[i] === undefined ? null : ys[i]! * scale }));
  const hasKv = samples.kvCacheUsage.some((v) => v !== null);
  const options = overTimeOptions(t, { text: 'requests', precision: 0 }, hasKv ? { text: 'KV cache %', max: 100 } : undefined,
    (c) => `${c.dataset.label}: ${c.dataset.yAxisID === 'y1' ? `${formatNumber(c.parsed.y ?? undefined)} %` : formatNumber(c.parsed.y ?? undefined)}`);
  const line = (label: string, colour: ThemeColour, data: { x: number; y: number | null }[], yAxisID: string, dash: number[] = []) =>
    ({ label, data, borderColor: t[colour], backgroundColor: t[colour], pointRadius: 0, borderWidth: 2, borderDash: dash,
      stepped: 'before' as const, spanGaps: false, yAxisID, parsing: false as const, themeColour: colour });
  const datasets = [
    line('running', 'blue', series(samples.running), 'y'),
    line('waiting', 'orange', series(samples.waiting), 'y'),
    ...(hasKv ? [line('KV cache use', 'purple', series(samples.kvCacheUsage, 100), 'y1', [4, 3])] : []),
  ];
  return new Chart(canvas, { type: 'line', data: { datasets: datasets as ChartDataset<'line'>[] }, options });
}

/** Re-colours a chart for a new theme without rebuilding it. */
export function applyTheme(chart: Chart, t: Theme): void {
  const slotColours = [t.blue, t.orange, t.green, t.purple];
  chart.data.datasets.forEach((d, i) => {
    const kind = (chart.config as { type?: string }).type;
    const named = (d as { themeColour?: ThemeColour }).themeColour;
    let c: string;
    if (named) c = t[named];
    else if (kind === 'scatter') c = i === 0 ? t.blue : t.red;
    else if (chart.options.scales && 'y1' in chart.options.scales) c = i === 0 ? t.green : t.orange;
    else c = slotColours[i % 4]!;
    (d as { borderColor?: string }).borderColor = c;
    (d as { backgroundColor?: string }).backgroundColor = c;
  });
  for (const s of Object.values(chart.options.scales ?? {})) {
    if (!s) continue;
    const sc = s as { grid?: { color?: string; tickColor?: string }; ticks?: { color?: string }; border?: { color?: string }; title?: { color?: string } };
    if (sc.grid) { sc.grid.color = t.lines; sc.grid.tickColor = t.lines; }
    if (sc.ticks) sc.ticks.color = t.muted;
    if (sc.border) sc.border.color = t.lines;
    if (sc.title) sc.title.color = t.muted;
  }
  const legend = chart.options.plugins?.legend;
  if (legend?.labels) legend.labels.color = t.foreground;
  chart.update('none');
}

/** A turn's point of the TTFT-by-turn chart: x the turn (from 1), its p50 and p90, and the cached prompt tokens the server reported. */
export interface TurnPoint { readonly turn: number; readonly p50: number; readonly p90: number; readonly cached?: number; readonly requests: number }

/** A whisker from each point of the first dataset (p50) up to the matching point of the second (p90, drawn as a cap), in the first dataset's colour. */
const turnWhiskers: Plugin = {
  id: 'turnWhiskers',
  afterDatasetsDraw(chart) {
    if (!(chart.options.plugins as { turnWhiskers?: boolean } | undefined)?.turnWhiskers) return;
    const lo = chart.getDatasetMeta(0);
    const hi = chart.getDatasetMeta(1);
    if (!lo?.data.length || !hi?.data.length || hi.hidden) return;
    const { ctx } = chart;
    ctx.save();
    ctx.strokeStyle = String(chart.data.datasets[0]!.borderColor);
    ctx.lineWidth = 1.5;
    for (let i = 0; i < Math.min(lo.data.length, hi.data.length); i++) {
      const a = lo.data[i]!;
      const b = hi.data[i]!;
      ctx.beginPath();
      ctx.moveTo(a.x, a.y);
      ctx.lineTo(a.x, b.y);
      ctx.stroke();
    }
    ctx.restore();
  },
};
Chart.register(turnWhiskers);

/**
 * TTFT by turn index: p50 per turn with a whisker up to p90, and (right axis, when the server
 * reported them) the mean cached prompt tokens per turn. A history prefilled again each turn shows
 * as TTFT climbing while the cached tokens stay at 0.
 */
export function turnChart(canvas: HTMLCanvasElement, t: Theme, points: readonly TurnPoint[]): Chart {
  const hasCached = points.some((p) => p.cached !== undefined);
  const options = overTimeOptions(t, { text: 'TTFT (ms)' }, hasCached ? { text: 'cached prompt tokens' } : undefined, (c) => {
    const raw = c.raw as { x: number; y: number };
    return c.dataset.yAxisID === 'y1' ? `${c.dataset.label}: ${formatInt(raw.y)}` : `${c.dataset.label}: ${formatMs(raw.y)}`;
  });
  options.interaction = { mode: 'nearest', axis: 'x', intersect: false };
  const x = options.scales!.x as { title: { text: string }; ticks?: object; min?: number; max?: number };
  x.title.text = 'turn';
  x.ticks = { color: t.muted, stepSize: 1, precision: 0 };
  // whole turns only: the axis' own ends (half a turn out, so the first and last points are not on its edge) are not labelled
  (x as { afterBuildTicks?: (axis: { ticks: { value: number }[] }) => void }).afterBuildTicks = (axis) => { axis.ticks = axis.ticks.filter((k) => Number.isInteger(k.value)); };
  x.min = 0.5;
  x.max = Math.max(1, ...points.map((p) => p.turn)) + 0.5;
  (options.plugins as { turnWhiskers?: boolean }).turnWhiskers = true;
  const line = (label: string, colour: ThemeColour, data: { x: number; y: number }[], yAxisID: string, extra: object = {}) =>
    ({ label, data, borderColor: t[colour], backgroundColor: t[colour], borderWidth: 2, pointRadius: 3, yAxisID, parsing: false as const, themeColour: colour, ...extra });
  const datasets = [
    line('TTFT p50', 'blue', points.map((p) => ({ x: p.turn, y: p.p50 })), 'y'),
    line('TTFT p90', 'blue', points.map((p) => ({ x: p.turn, y: p.p90 })), 'y', { pointRadius: 6, pointStyle: 'dash', showLine: false }),
    ...(hasCached ? [line('cached prompt tokens', 'green', points.filter((p) => p.cached !== undefined).map((p) => ({ x: p.turn, y: p.cached! })), 'y1', { borderDash: [4, 3], pointStyle: 'rect' })] : []),
  ];
  return new Chart(canvas, { type: 'line', data: { datasets: datasets as ChartDataset<'line'>[] }, options });
}
