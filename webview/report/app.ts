// The report: one run, two runs compared, a live run, or an error. Owns the timelines and charts
// it creates and disposes of them before drawing something else.
import type { Chart } from 'chart.js';
import type { RequestRecord, RunFile, Stall, Stats } from '../../src/engine/core/types';
import type { ReportHostMessage } from '../../src/shared/protocol';
import { buildCdf, SortedSamples } from './cdf';
import { UNKNOWN_STALL_SHORT } from '../../src/engine/analysis/stalls';
import { applyTheme, cdfChart, cdfSummaryText, gaugeChart, itlChart, itlTimeSummaryText, setChartTheme, throughputChart, throughputSummaryText, zoomByKeyboard, type CdfSeries, type ScatterPoint } from './charts';
import { h, srOnly } from './dom';
import { formatAt, formatInt, formatMs, formatNumber } from '../../src/present/units';
import { buildLanes, groupBySession, hasSessions, itlSamples, LiveLanes, rowOfLane, runStart, seriesRequests, stallCulprits, stallRuleOf, stallWindow, ungrouped, STALL_KINDS, type Lane, type LaneModel, type StallRule } from './lanes';
import { turnsSection } from './turnView';
import { applyLive, type LiveMessage, type LiveState } from './liveState';
import { LiveSeries, perSecond } from './series';
import { readTheme, watchTheme, type Theme } from './theme';
import { Timeline } from './timeline';
import { SWEEP_POINT_SELECTED, hasSweepView, renderSweep, type SweepPointSelectedDetail } from './sweepView';
import { asRun } from './validate';
import { compareNotesList, pendingText, verdictCount, verdictTable } from './compareView';
import { compareOffThread } from './compareRunner';
import { compareNotes, compareRowId, compareTable, errorView, headerView, headlineView, percentileRowId, percentileTable, prefixCacheCheckView, reportedView, runTitle, sentWithView, stallsList } from './views';
import { timelineNotes } from '../../src/present/importText';
import { importToolLabel } from '../../src/present/toolLabels';
import { latencyStats, type LatencyMetric } from '../../src/present/metricCatalogue';
import { distributionMetrics } from './figures';
import { DROP_HINT } from './drop';
import { post, setPanelState } from './vscodeApi';
import { whereSection } from './whereView';
import { stallSizeMeaning } from '../../src/present/whereText';

type Mode = 'empty' | 'run' | 'compare' | 'live' | 'error';

/**
 * The live view: its lanes and figures kept as updates come (an update costs what it brought, not
 * the run so far: an hour of records is as quick to update as a minute's), the records counted in
 * them, and what draws them.
 */
interface LiveParts {
  readonly lanes: LiveLanes;
  readonly rule: StallRule;
  /** TTFT of the finished measured requests, ascending; tokens and requests in flight per second. */
  readonly ttfts: SortedSamples;
  readonly series: LiveSeries;
  /** The records already in the figures (a record sent again is not counted twice). */
  readonly counted: Set<number>;
  readonly timeline: Timeline;
  readonly progress: HTMLElement;
  readonly ttft: Chart;
  readonly tput: Chart;
}

/** While live, the timeline follows the latest so many requests (about what a minute of 64 busy streams makes). */
const LIVE_FOLLOW_LANES = 2000;
/** While live, the throughput chart shows the last so many seconds. */
const LIVE_SERIES_SECONDS = 600;

const seriesOf = (l: Lane) => ({ sent: l.sent, end: l.end, chunks: l.chunks, outputTokens: l.request.outputTokens });

export class ReportApp {
  readonly #root: HTMLElement;
  #theme: Theme;
  #timelines: Timeline[] = [];
  #charts: Chart[] = [];
  #live: LiveState | undefined;
  #liveParts: LiveParts | undefined;
  #generation = 0;
  /** The runs drawn (one, or A and B of a compare), and those of them the host deleted. */
  #shownIds: string[] = [];
  readonly #deletedIds = new Set<string>();
  /** The sweep view's container and its run, drawn again when the theme changes (its colours are read once). */
  #sweep: { container: HTMLElement; run: RunFile } | undefined;

  constructor(root: HTMLElement) {
    this.#root = root;
    this.#theme = readTheme();
    setChartTheme(this.#theme);
    watchTheme((t) => this.#setTheme(t));
  }

  handle(msg: ReportHostMessage): void {
    try {
      switch (msg.type) {
        case 'showRun': this.showRun(msg.run, msg.compareWith); break;
        case 'runError': this.showError(msg.message, msg.path); break;
        case 'liveStart':
        case 'liveUpdate':
        case 'liveEnd': this.#onLive(msg); break;
        case 'runDeleted': this.#showDeleted(msg.runId); break;
        default: {
          const never: never = msg;
          void never;
        }
      }
    } catch (e) {
      this.showError(`The report could not be drawn: ${e instanceof Error ? e.message : String(e)}`);
    }
  }

  showRun(value: unknown, compareValue?: unknown): void {
    const a = asRun(value);
    if ('error' in a) { this.showError(a.error); return; }
    if (compareValue !== undefined) {
      const b = asRun(compareValue);
      if ('error' in b) { this.showError(`The run to compare with: ${b.error}`); return; }
      this.#live = undefined;
      this.#renderCompare(a.run, b.run);
      this.#shownIds = [a.run.id, b.run.id];
      setPanelState({ runId: a.run.id, compareId: b.run.id });
      return;
    }
    this.#live = undefined;
    this.#renderRun(a.run);
    this.#shownIds = [a.run.id];
    setPanelState({ runId: a.run.id });
  }

  /** The host deleted a run this page shows: a banner says that this page holds the copy left. */
  #showDeleted(runId: string): void {
    if (!this.#shownIds.includes(runId)) return;
    this.#deletedIds.add(runId);
    const compare = this.#shownIds.length === 2;
    const which = compare ? this.#shownIds.filter((id) => this.#deletedIds.has(id)).map((id) => (id === this.#shownIds[0] ? 'A' : 'B')) : [];
    const text = compare
      ? `${which.length === 2 ? 'Both runs were' : `Run ${which[0]} was`} deleted from the workspace; what you see is the copy in this panel; its Export JSON keeps it.`
      : 'This run was deleted from the workspace; what you see is the copy in this panel; Export JSON keeps it.';
    let banner = this.#root.querySelector<HTMLElement>(':scope > .deleted-banner');
    if (!banner) {
      banner = h('div', { class: 'deleted-banner', role: 'status' });
      this.#root.prepend(banner);
    }
    banner.textContent = text;
    document.body.dataset.deleted = [...this.#deletedIds].join('|');
  }

  showError(message: string, path?: string): void {
    this.#clear('error');
    this.#root.append(errorView(message, path));
  }

  showPlaceholder(text: string): void {
    this.#clear('empty');
    this.#root.append(h('p', { class: 'placeholder', role: 'status', text }), h('p', { class: 'sub drop-hint', text: DROP_HINT }));
  }

  #clear(mode: Mode): void {
    this.#generation++;
    for (const t of this.#timelines) t.dispose();
    for (const c of this.#charts) c.destroy();
    this.#timelines = [];
    this.#charts = [];
    this.#liveParts = undefined;
    if (this.#sweep) { renderSweep(this.#sweep.container, { ...this.#sweep.run, sweep: undefined, prefillDial: undefined }); this.#sweep = undefined; }
    this.#root.replaceChildren();
    this.#shownIds = [];
    this.#deletedIds.clear();
    delete document.body.dataset.deleted;
    document.body.dataset.view = mode;
    delete document.body.dataset.rendered;
    delete document.body.dataset.timelineDrawn;
    delete document.body.dataset.stallCulprits;
  }

  #setTheme(t: Theme): void {
    this.#theme = t;
    setChartTheme(t);
    for (const tl of this.#timelines) tl.setTheme(t);
    for (const c of this.#charts) applyTheme(c, t);
    if (this.#sweep) renderSweep(this.#sweep.container, this.#sweep.run);
    document.body.dataset.themeKind = t.kind;
  }

  // ---- one run ----

  #renderRun(run: RunFile): void {
    this.#clear('run');
    const started = performance.now();
    // a multi-turn run: each session's turns on one row (the timeline's toolbar turns it off)
    const built = buildLanes(run);
    const model = hasSessions(built) ? groupBySession(built) : built;
    this.#root.append(headerView(run, this.#exportButtons(run)), headlineView(run));
    const cacheCheck = prefixCacheCheckView(run); // a cache-check run's verdict, under the headline
    if (cacheCheck) this.#root.append(cacheCheck);
    // a sweep's trade-off curve comes first: it is what a sweep run is for (webview/report/sweepView.ts)
    const sweepBox = hasSweepView(run) ? h('div', { class: 'sweep-container' }) : undefined;
    if (sweepBox) {
      this.#root.append(section(run.sweep ? 'Sweep' : 'Chunked-prefill dial', 'sweep', sweepBox,
        'Clicking a point shows its requests on the timeline.'));
    }
    this.#root.append(section('Percentiles', 'percentiles', percentileTable(run)));
    const reported = reportedView(run); // an imported run: the tool's own figures beside ours
    if (reported) this.#root.append(section(`As ${importToolLabel(run.importedFrom!.tool)} reported`, 'reported', reported));
    const sent = sentWithView(run);
    if (sent) this.#root.append(section('Sent with', 'sent-with', sent));
    const tl = this.#timelineSection(model, run, 'Timeline');
    // TTFT by turn (a multi-turn run): its chart is drawn a task later with the others
    const turns = turnsSection(run);
    if (turns) this.#root.append(section('TTFT by turn', 'turns', turns.body, turns.sub));
    const causes = run.summary.stalls.byCause !== undefined;
    this.#root.append(section('Stalls', 'stalls', stallsList(run, (s) => this.#selectStall(tl, model, s), model.t0),
      `The worst gaps between chunks${causes ? ', with their cause' : ''}; Enter or click shows one on the timeline${causes ? ' and outlines the prefill that caused it' : ''}. ${stallSizeMeaning(run.summary.stalls)}`));
    // after the stalls, which it explains with the rest of each request's time; filled a task later
    // with the charts (it is below the fold); a bar shows its request on the timeline
    const whereBox = h('div', { class: 'where-box' });
    this.#root.append(section('Where the time went', 'where', whereBox));
    const dist = h('div', { class: 'charts' });
    this.#root.append(section('Distributions', 'distributions', dist));
    this.#root.append(h('p', { class: 'sub drop-hint', text: DROP_HINT }));
    tl.attach();
    if (sweepBox) {
      renderSweep(sweepBox, run);
      this.#sweep = { container: sweepBox, run };
      sweepBox.addEventListener(SWEEP_POINT_SELECTED, (e) => this.#showRequests(tl, model, (e as CustomEvent<SweepPointSelectedDetail>).detail.requestIndexes));
    }
    document.body.dataset.timelineDrawn = String(performance.now() - started);
    document.body.dataset.renderedRun = run.id;
    // the charts come a task later, so the timeline and the table show first on a large run
    const gen = this.#generation;
    setTimeout(() => {
      if (gen !== this.#generation) return;
      const where = whereSection(run, model, (index) => {
        this.#showRequests(tl, model, [index]);
        // selected too: its figures in the details line, ↑/↓ go on from it
        const lane = model.laneOf.get(index);
        if (lane !== undefined) tl.selectLane(lane);
        tl.canvas.focus();
      });
      whereBox.replaceWith(where.body);
      if (where.gaugeCanvas && run.serverMetrics) this.#charts.push(gaugeChart(where.gaugeCanvas, this.#theme, run.serverMetrics.samples));
      if (turns) this.#charts.push(turns.draw(this.#theme));
      this.#distributions(dist, run, model);
      document.body.dataset.rendered = String(performance.now() - started);
    }, 0);
  }

  #distributions(into: HTMLElement, run: RunFile, model: LaneModel): void {
    const t = this.#theme;
    const slo = run.workload?.slo ?? {};
    const itl = itlSamples(model);
    // an imported run: what a chart cannot draw from its file, said on the chart
    const lacks = chartNotes(run, model.chunkCount);
    // a CDF per catalogue latency the run has; each one's text alternative: its figures in words, and the percentile table's row of its metric
    for (const m of distributionMetrics(run)) {
      const sloV = m.slo ? slo[m.slo] : undefined;
      const gaps = m.key === 'itlMs';
      const { card, canvas } = chartCard(`${m.label} CDF`, `${run.id}-${m.id}-cdf`, m.id, gaps ? lacks.itl : undefined,
        { summary: cdfSummaryText(m.label, [{ stats: statsOrNone(m, run) }], sloV), describedBy: percentileRowId(m.key) });
      into.append(card);
      const points = buildCdf(latencySamples(m, run, () => itl.itl)).filter((q) => !gaps || q.x > 0);
      this.#charts.push(cdfChart(canvas, t, m.label, [{ label: run.id, points, slot: 0 }], sloV, gaps));
    }
    const { card: itlCard, canvas: itlCanvas } = chartCard('ITL over time', `${run.id}-itl-time`, 'itl-time',
      lacks.itl ?? 'Wheel or + and − to zoom, drag or ← → to pan, double-click or 0 to reset (click or Tab to the chart first).',
      { summary: itlTimeSummaryText(itl.at, itl.itl, run.summary.itlMs.p50, run.summary.itlMs.p99) });
    into.append(itlCard);
    // the range shown, said once it settles (a zoom from the keyboard is otherwise silent)
    const zoomStatus = h('p', { class: 'zoom-status', role: 'status' });
    itlCard.querySelector('.chart-box')!.before(zoomStatus);
    const onView = (min: number, max: number) => { zoomStatus.textContent = `${formatAt(min * 1000)} to ${formatAt(max * 1000)} shown`; itlCanvas.dataset.viewMin = String(min); itlCanvas.dataset.viewMax = String(max); };
    const { normal, high, note } = itlScatter(itl.at, itl.itl, run.summary.itlMs.p99);
    const itlC = itlChart(itlCanvas, t, normal, high, note, onView);
    itlCanvas.addEventListener('dblclick', () => { (itlC as Chart & { resetZoom?: () => void }).resetZoom?.(); onView(itlC.scales.x!.min, itlC.scales.x!.max); });
    zoomByKeyboard(itlC, itlCanvas, onView);
    this.#charts.push(itlC);
    // without chunk or start times, tokens and requests over time would be made up: none drawn
    const ps = perSecond(lacks.throughput ? [] : seriesRequests(model));
    const { card: tCard, canvas: tCanvas } = chartCard('Output tokens/s and requests in flight (1 s buckets)', `${run.id}-throughput`, 'throughput', lacks.throughput,
      { summary: throughputSummaryText(ps.seconds, ps.tokensPerSecond, ps.inFlight) });
    into.append(tCard);
    this.#charts.push(throughputChart(tCanvas, t, ps.seconds, ps.tokensPerSecond, ps.inFlight));
    for (const c of into.querySelectorAll<HTMLButtonElement>('button.png')) c.addEventListener('click', () => exportCanvasPng(c));
  }

  /** `tools`: more toolbar buttons (label, title, action) after Reset. */
  #timelineSection(model: LaneModel, run: RunFile, title: string, slot = 0, tools: (tl: Timeline) => readonly (readonly [string, string, () => void])[] = () => []): Timeline {
    const tl = new Timeline(model, this.#theme, title);
    tl.loadKind = run.workload?.mode?.kind;
    this.#timelines.push(tl);
    // a small status region: only the span shown is said after a zoom or pan
    const status = h('span', { class: 'view-status', role: 'status' });
    tl.onViewChange = (v) => { status.textContent = `${formatMs(v.xEnd - v.xStart)} shown`; };
    // the accessible name holds the visible text (a symbol's name is its meaning); the title explains
    const btn = (label: string, title2: string, fn: () => void, name?: string) => {
      const b = h('button', { type: 'button', class: 'tool', title: title2, 'aria-label': name, text: label });
      b.addEventListener('click', fn);
      return b;
    };
    const png = btn('PNG', 'Save the timeline as PNG', () => {
      tl.draw();
      post('exportPng', { name: `${run.id}-timeline.png`, dataUrl: tl.canvas.toDataURL('image/png') });
    });
    const toolbar = h('div', { class: 'toolbar', role: 'toolbar', 'aria-label': `${title} controls` },
      btn('+', 'Zoom in (+ on the timeline)', () => tl.zoomBy(0.6), 'Zoom in'),
      btn('−', 'Zoom out (− on the timeline)', () => tl.zoomBy(1 / 0.6), 'Zoom out'),
      btn('Reset', 'Show the whole run (0 on the timeline)', () => tl.reset()),
      ...tools(tl).map(([label, t, fn]) => btn(label, t, fn)),
      this.#groupToggle(tl, model), png, status);
    // stalls by cause when the engine judged them; a file written before that has one kind of stall
    const kinds = model.stallKinds.map((k) => STALL_KINDS[k]!);
    const stallItems: [string, string][] = kinds.some((k) => k !== 'rule')
      ? [['stall', "stall: another request's prefill"], ['stall-buffering', 'stall: buffered'], ['stall-unknown', `stall: ${UNKNOWN_STALL_SHORT}`], ['culprit', "the culprit's prefill (selected stall)"]]
      : [['stall', 'stall']];
    const legend = h('ul', { class: 'legend', 'aria-label': 'Legend' },
      ...[[...waitItem(run)], ['ttft', 'waiting for first token'], ['decode', 'decoding (tick per chunk when zoomed)'], ...stallItems, ['error', 'error'],
        ...(hasSessions(model) ? [['think', 'think time between a session\'s turns']] : [])]
        .map(([k, l]) => h('li', {}, h('span', { class: `swatch sw-${k}` }), l!)));
    const sub = timelineSubtitle(model);
    // an imported run: what its file lacks that the timeline would show (ticks, start times)
    const notes = timelineNotes(run, model.chunkCount).map((text) => h('p', { class: 'flags timeline-note', role: 'note', text }));
    this.#root.append(section(title, slot === 0 ? 'timeline' : `timeline-${slot}`, h('div', {}, ...notes, toolbar, legend, tl.element), sub));
    return tl;
  }

  /**
   * A button that puts each session's turns on one row, or a row per request (a multi-turn run
   * only; pressed: grouped). The view goes back to the whole run.
   */
  #groupToggle(tl: Timeline, model: LaneModel): HTMLElement | undefined {
    if (!hasSessions(model)) return undefined;
    const b = h('button', { type: 'button', class: 'tool group-sessions', 'aria-pressed': String(model.rows !== undefined),
      title: 'A row per session (its turns in order, think time between them), or a row per request', text: 'Group by session' });
    b.addEventListener('click', () => {
      const on = b.getAttribute('aria-pressed') !== 'true';
      b.setAttribute('aria-pressed', String(on));
      tl.setModel(on ? groupBySession(tl.model) : ungrouped(tl.model));
      const sub = tl.element.closest('section')?.querySelector(':scope > .sub');
      if (sub) sub.textContent = timelineSubtitle(tl.model);
    });
    return b;
  }

  /** Zooms the timeline to a set of requests (a sweep point's), which lie next to each other in start order (on the rows they are drawn on). */
  #showRequests(tl: Timeline, model: LaneModel, indexes: readonly number[]): void {
    let lo = Infinity, hi = -Infinity, t0 = Infinity, t1 = -Infinity;
    for (const i of indexes) {
      const lane = model.laneOf.get(i);
      if (lane === undefined) continue;
      const l = model.lanes[lane]!;
      const row = rowOfLane(tl.model, lane);
      lo = Math.min(lo, row); hi = Math.max(hi, row);
      t0 = Math.min(t0, l.scheduled); t1 = Math.max(t1, l.end);
    }
    if (!Number.isFinite(lo)) return;
    const pad = (t1 - t0) * 0.02;
    tl.setView({ xStart: t0 - pad, xEnd: t1 + pad, yStart: lo, yEnd: hi + 1 });
    document.body.dataset.shownRequests = `${lo}-${hi}`;
  }

  #selectStall(tl: Timeline, model: LaneModel, s: Stall): void {
    const w = stallWindow(model, s);
    if (!w) return;
    const culprits = s.cause === undefined || s.cause === 'prefill' ? stallCulprits(model, s) : [];
    tl.select(w.lane, w.start, w.end, culprits);
    document.body.dataset.selectedStall = `${s.requestIndex}:${s.startMs}`;
    if (culprits.length) document.body.dataset.stallCulprits = culprits.map((c) => c.index).join(',');
    else delete document.body.dataset.stallCulprits;
  }

  /** `side`: "A" or "B" in a compare, named in the buttons' accessible names ("Export CSV of A"), as two "Export CSV" cannot be told apart. */
  #exportButtons(run: RunFile, side?: string): HTMLElement {
    const of = side ? ` of ${side}` : '';
    const csv = h('button', { type: 'button', class: 'action', text: 'Export CSV', title: 'Save the requests as CSV', 'aria-label': side ? `Export CSV${of}` : undefined });
    csv.addEventListener('click', () => post('exportCsv', { runId: run.id }));
    const json = h('button', { type: 'button', class: 'action', text: 'Export JSON', title: 'Save the run file as JSON', 'aria-label': side ? `Export JSON${of}` : undefined });
    json.addEventListener('click', () => post('exportJson', { runId: run.id }));
    const trace = h('button', { type: 'button', class: 'action', text: 'Export trace', title: 'Save the run as a trace (a track per request) to open in ui.perfetto.dev', 'aria-label': side ? `Export trace${of}` : undefined });
    trace.addEventListener('click', () => post('exportTrace', { runId: run.id }));
    const chunks = h('button', { type: 'button', class: 'action', text: 'Export chunks CSV', title: 'Save one CSV row per chunk', 'aria-label': side ? `Export chunks CSV${of}` : undefined });
    chunks.addEventListener('click', () => post('exportChunksCsv', { runId: run.id }));
    // later runs of its endpoint or prompt file are compared with a baseline (the CodeLens, the sidebar's marks)
    const pin = h('button', { type: 'button', class: 'action pin-baseline', text: 'Pin as baseline', title: 'Compare later runs of this endpoint or prompt file with this run', 'aria-label': side ? `Pin as baseline${of}` : undefined });
    pin.addEventListener('click', () => post('pinBaseline', { runId: run.id }));
    return h('div', { class: 'actions' }, csv, json, trace, chunks, pin);
  }

  // ---- two runs ----

  #renderCompare(a: RunFile, b: RunFile): void {
    this.#clear('compare');
    const started = performance.now();
    const side = (run: RunFile, tag: string) => {
      const head = headerView(run, this.#exportButtons(run, tag));
      head.querySelector('h1')!.textContent = `${tag}: ${runTitle(run)}`;
      return h('div', { class: 'side', 'data-side': tag }, head, headlineView(run, tag), prefixCacheCheckView(run, tag));
    };
    this.#root.append(h('div', { class: 'sides' }, side(a, 'A'), side(b, 'B')));
    this.#root.append(this.#verdictSection(a, b));
    this.#root.append(section('Differences', 'differences', compareTable(a, b)));
    const charts = h('div', { class: 'charts' });
    this.#root.append(section('Distributions, overlaid', 'distributions', charts, 'A solid, B dashed.'));
    const sessions = (m: LaneModel) => (hasSessions(m) ? groupBySession(m) : m);
    const ma = sessions(buildLanes(a));
    const mb = sessions(buildLanes(b));
    const tla = this.#timelineSection(ma, a, 'Timeline A', 0);
    const tlb = this.#timelineSection(mb, b, 'Timeline B', 1);
    tla.attach();
    tlb.attach();
    document.body.dataset.timelineDrawn = String(performance.now() - started);
    document.body.dataset.renderedRun = `${a.id}|${b.id}`;
    const t = this.#theme;
    const slo = a.workload?.slo ?? {};
    for (const m of distributionMetrics(a, b)) {
      const sloV = m.slo ? slo[m.slo] : undefined;
      const gaps = m.key === 'itlMs';
      const { card, canvas } = chartCard(`${m.label} CDF`, `${a.id}-vs-${b.id}-${m.id}-cdf`, m.id, undefined,
        { summary: cdfSummaryText(m.label, [{ name: 'A', stats: statsOrNone(m, a) }, { name: 'B', stats: statsOrNone(m, b) }], sloV), describedBy: compareRowId(m.key) });
      charts.append(card);
      const series: CdfSeries[] = [
        { label: `A ${a.id}`, points: buildCdf(latencySamples(m, a, () => itlSamples(ma).itl)).filter((q) => !gaps || q.x > 0), slot: 0 },
        { label: `B ${b.id}`, points: buildCdf(latencySamples(m, b, () => itlSamples(mb).itl)).filter((q) => !gaps || q.x > 0), slot: 1, dashed: true },
      ];
      this.#charts.push(cdfChart(canvas, t, m.label, series, sloV, gaps));
    }
    for (const c of charts.querySelectorAll<HTMLButtonElement>('button.png')) c.addEventListener('click', () => exportCanvasPng(c));
    document.body.dataset.rendered = String(performance.now() - started);
  }

  /**
   * Is B slower than A: what makes them hard to compare first, then each figure's verdict and its
   * interval, worked out off the page's thread (compareRunner.ts) and drawn when it comes.
   */
  #verdictSection(a: RunFile, b: RunFile): HTMLElement {
    const status = h('p', { class: 'compare-status', role: 'status', text: pendingText(a, b) });
    const box = h('div', { class: 'verdict-box' }, compareNotesList(compareNotes(a, b)), status);
    document.body.dataset.comparison = 'pending';
    const gen = this.#generation;
    const started = performance.now();
    compareOffThread(a, b).then((c) => {
      if (gen !== this.#generation) return;
      status.textContent = verdictCount(c);
      box.append(verdictTable(c));
      document.body.dataset.comparison = 'done';
      document.body.dataset.comparisonMs = String(performance.now() - started);
    }, (e: unknown) => {
      if (gen !== this.#generation) return;
      status.textContent = `The intervals could not be worked out: ${e instanceof Error ? e.message : String(e)}`;
      document.body.dataset.comparison = 'error';
    });
    return section('Is B slower than A?', 'compare-verdicts', box,
      'A is the base (BASE in the notes), B the new run (NEW). Each figure\'s difference comes with its 95% confidence interval, from resampling each run (its blocks of consecutive requests, or its repetitions); a verdict is given only when the interval excludes no change.');
  }

  // ---- live ----

  #onLive(msg: LiveMessage): void {
    const next = applyLive(this.#live, msg);
    if (!next) {
      document.body.dataset.staleDropped = String(Number(document.body.dataset.staleDropped ?? 0) + 1);
      return;
    }
    const prev = this.#live;
    this.#live = next;
    if (msg.type === 'liveEnd') {
      this.#live = undefined;
      this.showRun(msg.run);
      document.body.dataset.liveEnded = msg.runId;
      return;
    }
    if (msg.type === 'liveStart' || !this.#liveParts || prev?.runId !== next.runId) {
      this.#renderLiveFrame(next);
      setPanelState({ liveRunId: next.runId, runId: next.runId });
      return;
    }
    const parts = this.#liveParts;
    for (const r of msg.records) this.#finishLive(parts, r);
    this.#flyLanes(parts, next);
    const model = parts.lanes.model();
    parts.timeline.setModel(model, true);
    const sub = parts.timeline.element.closest('section')?.querySelector('.sub');
    if (sub) sub.textContent = timelineSubtitle(model);
    this.#updateLiveFigures(next);
  }

  /** A finished request: its lane, and (once) its TTFT and its tokens and time in flight in the figures. */
  #finishLive(parts: Pick<LiveParts, 'lanes' | 'rule' | 'ttfts' | 'series' | 'counted'>, r: RequestRecord): void {
    const lane = parts.lanes.finish(r, parts.rule);
    if (parts.counted.has(r.index)) return;
    parts.counted.add(r.index);
    parts.series.add(seriesOf(lane));
    if (!r.warmup && !r.error && r.ttftMs !== undefined) parts.ttfts.add(r.ttftMs);
  }

  /** The lanes of the requests in flight: built again for those with new chunks, the rest only extended to now. */
  #flyLanes(parts: Pick<LiveParts, 'lanes'>, state: LiveState): void {
    const at = state.progress?.at;
    parts.lanes.fly(state.streams, state.changed, at === undefined ? -Infinity : at - parts.lanes.t0);
  }

  #renderLiveFrame(state: LiveState): void {
    this.#clear('live');
    const run = state.run;
    const records = [...state.records.values()];
    // x = 0 at the first request known, finished or still in flight
    let t0 = records.length ? runStart(records) : Infinity;
    for (const s of state.streams.values()) t0 = Math.min(t0, s.scheduledAt, s.sentAt);
    if (!Number.isFinite(t0)) t0 = Date.parse(run.startedAt) || 0;
    const kept = { lanes: new LiveLanes(t0), rule: stallRuleOf(run), ttfts: new SortedSamples(), series: new LiveSeries(), counted: new Set<number>() };
    // in start order, each lane goes at the end
    records.sort((a, b) => a.scheduledAt - b.scheduledAt || a.sentAt - b.sentAt || a.index - b.index);
    for (const r of records) this.#finishLive(kept, r);
    this.#flyLanes(kept, state);
    const head = headerView(run, h('div', { class: 'actions' }, h('span', { class: 'live-badge', text: 'Live' })));
    const progress = h('section', { class: 'headline live-progress', 'aria-label': 'Progress' });
    this.#root.append(head, progress);
    const timeline = this.#timelineSection(kept.lanes.model(), run, 'Timeline (live)', 0, (tl) => [['Latest', 'Follow the latest requests (End on the timeline)', () => tl.follow()]]);
    timeline.followLanes = LIVE_FOLLOW_LANES;
    timeline.follow();
    const charts = h('div', { class: 'charts' });
    this.#root.append(section('Distributions so far', 'distributions', charts, `Provisional: the final figures come from the engine when the run ends. Tokens/s and requests in flight: the last ${LIVE_SERIES_SECONDS / 60} minutes.`));
    const { card, canvas } = chartCard('TTFT CDF', `${run.id}-ttft-cdf`, 'ttft');
    const { card: tc, canvas: tcv } = chartCard('Output tokens/s and requests in flight (1 s buckets)', `${run.id}-throughput`, 'throughput');
    charts.append(card, tc);
    const ttft = cdfChart(canvas, this.#theme, 'TTFT', [{ label: run.id, points: [], slot: 0 }], run.workload?.slo?.ttftMs);
    const tput = throughputChart(tcv, this.#theme, [], [], []);
    this.#charts.push(ttft, tput);
    timeline.attach();
    this.#liveParts = { ...kept, timeline, progress, ttft, tput };
    this.#updateLiveFigures(state);
  }

  #updateLiveFigures(state: LiveState): void {
    const parts = this.#liveParts;
    if (!parts) return;
    const p = state.progress;
    const figures: [string, string, string][] = [
      ['done', 'Done', p ? `${formatInt(p.finished)}${p.total !== undefined ? ` of ${formatInt(p.total)}` : ''}` : '0'],
      ['failed', 'Failed', formatInt(p?.failed ?? 0)],
      // stopped by the user's Cancel: apart from failures
      ...(p?.cancelled ? [['cancelled', 'Cancelled', formatInt(p.cancelled)] as [string, string, string]] : []),
      ['in-flight', 'In flight', formatInt(p?.inFlight ?? 0)],
      ['elapsed', 'Elapsed', p ? `${formatNumber(p.elapsedS)} s` : '–'],
      ['ttft-p50', 'TTFT p50 so far', formatMs(p?.ttftP50Ms)],
      ['output-tps', 'Output tokens/s', formatNumber(p?.outputTokensPerSecond)],
    ];
    parts.progress.replaceChildren(...figures.map(([id, label, value]) =>
      h('div', { class: 'figure', 'data-figure': id }, h('span', { class: 'label', text: label }), h('span', { class: 'value', text: value }))));
    if (p?.total) {
      const bar = h('progress', { max: p.total, value: p.finished, 'aria-label': 'Requests finished' });
      parts.progress.append(h('div', { class: 'figure wide' }, bar));
    }
    // TTFT over finished requests (as the engine's p50 so far); tokens/s counts the chunks in flight too
    parts.ttft.data.datasets[0]!.data = buildCdf(parts.ttfts.values, 400, true) as never;
    parts.ttft.update('none');
    const ps = parts.series.perSecond([...parts.lanes.inFlight()].map(seriesOf), LIVE_SERIES_SECONDS);
    parts.tput.data.datasets[0]!.data = ps.seconds.map((x, i) => ({ x: x + 0.5, y: ps.tokensPerSecond[i]! })) as never;
    parts.tput.data.datasets[1]!.data = ps.seconds.map((x, i) => ({ x: x + 0.5, y: ps.inFlight[i]! })) as never;
    parts.tput.update('none');
    document.body.dataset.liveRecords = String(state.records.size);
  }
}

/** A latency's distribution in a run, or none ("no samples") where the run has not got it (one side of a compare without TTFO). */
function statsOrNone(m: LatencyMetric, run: RunFile): Stats | { readonly count: 0; readonly max: number } {
  return latencyStats(m, run.summary) ?? { count: 0, max: Number.NaN };
}

/** A latency's samples over the measured, successful requests, as its CDF draws them; ITL's are every gap between chunks (`itl`). */
function latencySamples(m: LatencyMetric, run: RunFile, itl: () => Float64Array): number[] | Float64Array {
  if (m.key === 'itlMs') return itl();
  const key = m.key;
  const of = key === 'tpotMs' ? tpotOf : (r: RequestRecord) => r[key];
  return run.requests.filter((r) => !r.warmup && !r.error).map(of).filter((v): v is number => typeof v === 'number');
}

/** A request's TPOT as the engine defines it (metrics.ts tpotOf): an imported record may not carry its own. */
function tpotOf(r: RequestRecord): number | undefined {
  if (r.tpotMs !== undefined) return r.tpotMs;
  return r.outputTokens > 1 && r.ttftMs !== undefined && r.e2eMs !== undefined ? (r.e2eMs - r.ttftMs) / (r.outputTokens - 1) : undefined;
}

/** What the charts of an imported run cannot draw from its file: ITL without chunk times; tokens/s and requests in flight over time without them or without start times. */
function chartNotes(run: RunFile, chunkCount: number): { itl?: string; throughput?: string } {
  const from = run.importedFrom;
  if (!from) return {};
  const tool = importToolLabel(from.tool);
  const noChunks = chunkCount === 0;
  const noStarts = from.startTimes === 'none';
  return {
    ...(noChunks ? { itl: `Nothing to draw: the ${tool} file has no chunk arrival times.` } : {}),
    ...(noChunks || noStarts ? { throughput: `Not drawn: the ${tool} file has ${[noChunks ? 'no chunk arrival times (tokens over time)' : '', noStarts ? 'no request start times (requests in flight)' : ''].filter(Boolean).join(' and ')}.` } : {}),
  };
}

/** The legend's first item: the wait before a send, lateness against the schedule under an open loop or a trace. */
function waitItem(run: RunFile): [string, string] {
  const kind = run.workload?.mode?.kind;
  // not "wait": that word is the part of TTFT a server does not tell apart (phases.ts PHASE_WORDS)
  return ['wait', kind === 'open' || kind === 'trace' ? 'sent late against the schedule' : 'held in the client before sending'];
}

function timelineSubtitle(model: LaneModel): string {
  const order = model.rows ? `in ${formatInt(model.rows.lanes.length)} rows, a session's turns on one` : 'in start order';
  return `${formatInt(model.lanes.length)} requests ${order} · ${formatInt(model.chunkCount)} chunks · wheel zooms time, Shift+wheel zooms lanes, drag pans, double-click resets; click a lane or use ↑ ↓ for a request's details`;
}

function section(title: string, id: string, body: HTMLElement, sub?: string): HTMLElement {
  return h('section', { class: `block ${id}`, 'aria-labelledby': `h-${id}` },
    h('h2', { id: `h-${id}`, text: title }),
    sub ? h('p', { class: 'sub', text: sub }) : undefined,
    body);
}

/**
 * A chart's card. `alt` is its text alternative beside its name: a summary in words (visually hidden)
 * and the id of an element that holds its figures (a table row), both named by aria-describedby.
 */
function chartCard(title: string, fileName: string, id: string, sub?: string, alt: { readonly summary?: string; readonly describedBy?: string } = {}): { card: HTMLElement; canvas: HTMLCanvasElement } {
  const summaryId = alt.summary ? `alt-${fileName.replace(/[^\w-]/g, '_')}` : undefined;
  const describedBy = [summaryId, alt.describedBy].filter(Boolean).join(' ');
  const canvas = h('canvas', { role: 'img', 'aria-label': title, 'aria-describedby': describedBy || undefined });
  const png = h('button', { type: 'button', class: 'tool png', title: `Save “${title}” as PNG`, 'aria-label': `Save ${title} as PNG`, 'data-file': `${fileName}.png`, text: 'PNG' });
  const card = h('figure', { class: 'chart-card', 'data-chart': id },
    h('figcaption', {}, h('span', { text: title }), png),
    sub ? h('p', { class: 'sub', text: sub }) : undefined,
    h('div', { class: 'chart-box' }, canvas),
    summaryId ? srOnly(alt.summary!, summaryId) : undefined);
  return { card, canvas };
}

function exportCanvasPng(button: HTMLButtonElement): void {
  const canvas = button.closest('figure')?.querySelector('canvas');
  if (!canvas) return;
  post('exportPng', { name: button.dataset.file ?? 'chart.png', dataUrl: canvas.toDataURL('image/png') });
}

/** ITL points for the scatter: all of them when few; else the mean and the worst per time bucket. */
function itlScatter(at: Float64Array, itl: Float64Array, p99: number): { normal: ScatterPoint[]; high: ScatterPoint[]; note: string } {
  const n = at.length;
  const limit = Number.isFinite(p99) ? p99 : Infinity;
  if (n <= 20_000) {
    const normal: ScatterPoint[] = [];
    const high: ScatterPoint[] = [];
    for (let i = 0; i < n; i++) (itl[i]! > limit ? high : normal).push({ x: at[i]! / 1000, y: itl[i]! });
    return { normal, high, note: '(each gap)' };
  }
  let end = 0;
  for (let i = 0; i < n; i++) if (at[i]! > end) end = at[i]!;
  const B = 1500;
  const sum = new Float64Array(B);
  const cnt = new Uint32Array(B);
  const maxV = new Float64Array(B);
  const maxAt = new Float64Array(B);
  const scale = B / Math.max(1, end);
  for (let i = 0; i < n; i++) {
    const b = Math.min(B - 1, Math.floor(at[i]! * scale));
    sum[b]! += itl[i]!;
    cnt[b]!++;
    if (itl[i]! > maxV[b]!) { maxV[b] = itl[i]!; maxAt[b] = at[i]!; }
  }
  const normal: ScatterPoint[] = [];
  const high: ScatterPoint[] = [];
  for (let b = 0; b < B; b++) {
    if (!cnt[b]) continue;
    normal.push({ x: (b + 0.5) / scale / 1000, y: sum[b]! / cnt[b]! });
    if (maxV[b]! > limit) high.push({ x: maxAt[b]! / 1000, y: maxV[b]! });
  }
  return { normal, high, note: `(mean per ${formatMs(1 / scale)}; ${formatInt(n)} gaps)` };
}
