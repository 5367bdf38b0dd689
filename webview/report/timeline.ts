// The per-token timeline, drawn on a plain canvas: chart.js would need a point object per chunk,
// and a million of them take seconds to build, where this draws a frame in milliseconds. Each lane
// is one request in start order: the client-side wait, the wait for the first token, then decode
// with a tick per chunk. Per pixel only the largest gap is kept (downsample.ts), so no gap is hidden.
// Stalls are coloured by cause (another request's prefill, buffering, unknown); a selected stall's
// culprits have their prefill outlined on their own lanes.
// Wheel zooms time (Shift+wheel: lanes), dragging pans, double-click or 0 resets. From the keyboard
// (the canvas takes focus): ↑/↓ select the previous/next request, ←/→ pan, +/- zoom, 0 or Home
// resets, End (live) follows the latest requests; the selected (or clicked) request's figures are
// written in a details line under the canvas, a small polite status region, so they are not only in
// the hover tooltip.
// The lanes are drawn in software (raster.ts) and put on the canvas at once: a million chunks
// zoom at well under a frame.
import { largestGapPerBucket, lowerBound, type GapBuckets } from './downsample';
import { formatAt, formatAxisMs, formatInt, formatMs } from '../../src/present/units';
import { retryAfterNote, retryTexts } from '../../src/present/retryText';
import { UNKNOWN_STALL_CAUSE } from '../../src/engine/analysis/stalls';
import { CAUSE_RULE, STALL_KINDS, laneCounts, lanesOfRow, rowCount, rowGaps, rowOfLane, type Lane, type LaneModel } from './lanes';
import { onSchedule, trafficTooltip, trafficWhere } from './laneText';
import { PixelLayer, paintOf, type Paint } from './raster';
import type { Theme } from './theme';
import { niceTicks } from './ticks';

export interface TimelineView {
  readonly xStart: number;
  readonly xEnd: number;
  readonly yStart: number;
  readonly yEnd: number;
}

interface Selection { readonly lane: number; readonly start: number; readonly end: number }
/** A request blamed for the selected stall: its lane and where its prefill ran. */
export interface CulpritSpan { readonly index: number; readonly lane: number; readonly start: number; readonly end: number }

const GUTTER = 44;
const AXIS = 22;
const MAX_HEIGHT = 420;
const MIN_SPAN_MS = 0.5;
let timelineIds = 0;

/** One frame's geometry: the plot's size, the view and its scale, the lanes in view and where a lane's bar sits (lane i at i × laneH + yOff). */
interface Frame {
  /** The canvas and the plot in it, CSS pixels. */
  readonly W: number; readonly H: number; readonly plotW: number; readonly plotH: number;
  readonly v: TimelineView;
  /** Pixels per ms; a lane's height, its bar's, and the y of lane 0's bar. */
  readonly xScale: number; readonly laneH: number; readonly barH: number; readonly yOff: number;
  /** The lanes the view's rows span, [first, last). */
  readonly first: number; readonly last: number;
  /** Those of them whose request overlaps the view in time, and their chunks. */
  readonly visible: readonly number[]; readonly chunksInView: number;
  readonly X: (t: number) => number;
  /** The y of a lane's bar (its row's). */
  readonly Y: (lane: number) => number;
}

/** The theme's colours as the software layer takes them, read once per theme. */
interface Paints { readonly theme: Theme; readonly bg: Paint; readonly yellow: Paint; readonly purple: Paint; readonly blue: Paint; readonly fg: Paint; readonly muted: Paint; readonly red: Paint; readonly stall: readonly Paint[] }

/** What the details line says about a lane's request (also what a screen reader hears). */
function requestDetails(lane: Lane, model: LaneModel): string {
  const r = lane.request;
  const where = trafficWhere(lane, model, model.laneOf.get(r.index));
  const parts = [`Request #${r.index}${r.warmup ? ' (warmup)' : ''}${lane.inFlight ? ' (in flight)' : ''}`, ...(where ? [where] : []), `started ${formatAt(lane.sent)}`];
  if (r.ttftMs !== undefined) parts.push(`TTFT ${formatMs(r.ttftMs)}`);
  else if (lane.inFlight) parts.push('waiting for the first token');
  if (r.tpotMs !== undefined) parts.push(`TPOT ${formatMs(r.tpotMs)}`);
  parts.push(`${formatInt(lane.chunks.length)} chunk${lane.chunks.length === 1 ? '' : 's'}`);
  const n = lane.stalls.length / 2;
  if (n > 0) {
    let longest = 0;
    for (let k = 1; k < lane.stalls.length; k += 2) longest = Math.max(longest, lane.stalls[k]!);
    parts.push(`${n} stall${n === 1 ? '' : 's'} (longest ${formatMs(longest)})`);
  } else if (!lane.inFlight) parts.push('no stalls');
  if (r.error) {
    // the server's words are capped: the line is a status region, read out whole
    const m = r.error.message.length > 160 ? `${r.error.message.slice(0, 159)}…` : r.error.message;
    parts.push(`error: ${r.error.kind}${r.error.status ? ` ${r.error.status}` : ''}: ${m}`);
  }
  return `${parts.join(', ')}.`;
}

/** A short text alternative of the whole timeline: how many requests, over what time, how many stalled or failed, and the keys. */
function timelineSummary(model: LaneModel, follows: boolean): string {
  const { stalled, failed, inFlight } = laneCounts(model);
  const n = model.lanes.length;
  const sessions = model.rows ? model.rows.sessions.filter((x) => x !== undefined).length : 0;
  const order = model.rows ? `a row per session (${formatInt(sessions)}), its turns in order with the think time between them dashed` : 'in start order';
  const what = n === 0 ? 'No requests yet.'
    : `${formatInt(n)} request${n === 1 ? '' : 's'} over ${formatMs(model.endMs)}, ${order}: ${formatInt(stalled)} with stalls, ${formatInt(failed)} failed${inFlight ? `, ${formatInt(inFlight)} still in flight` : ''}; ${formatInt(model.chunkCount)} chunks.`;
  return `${what} Keys: up and down arrows select a request (its details are read below the chart), left and right arrows pan, plus and minus zoom, 0 or Home shows the whole run${follows ? ', End follows the latest requests' : ''}.`;
}

export class Timeline {
  readonly element: HTMLElement;
  readonly canvas: HTMLCanvasElement;
  /** The selected request's figures, under the canvas: a small polite status region. */
  readonly details: HTMLElement;
  readonly #summary: HTMLElement;
  readonly #tooltip: HTMLElement;
  readonly #ctx: CanvasRenderingContext2D;
  readonly #layer = new PixelLayer();
  #paints: Paints | undefined;
  #model: LaneModel;
  #theme: Theme;
  #view: TimelineView;
  #selection: Selection | undefined;
  #culprits: readonly CulpritSpan[] = [];
  /** The request picked with the keyboard or a click (its `index`), outlined and described. */
  #current: number | undefined;
  #width = 0;
  #height = 0;
  #dpr = 1;
  #frame = 0;
  #drag: { x: number; y: number; view: TimelineView; moved: boolean } | undefined;
  #buckets: GapBuckets | undefined;
  readonly #resize: ResizeObserver;
  /** Called after the view changes (zoom, pan, select), e.g. to tell a screen reader. */
  onViewChange?: (view: TimelineView) => void;
  /** The run's load (closed, open, trace): under an open loop or a trace the wait before a send is its lateness against the schedule. */
  loadKind?: 'closed' | 'open' | 'trace';
  /**
   * Live mode: the view that follows the run shows the latest so many lanes (all while there are no
   * more), so a frame costs what a run of that many requests costs, however long the run has gone.
   */
  followLanes?: number;
  /** The view follows the latest lanes as the model grows (live mode, until the view is moved). */
  #following = false;
  /** Rows when the model was set: live mode grows the model's lanes in place, so whether the view showed them all is judged by these. */
  #rows: number;

  constructor(model: LaneModel, theme: Theme, label: string) {
    this.#model = model;
    this.#rows = rowCount(model);
    this.#theme = theme;
    this.#view = this.#fullView();
    this.element = document.createElement('div');
    this.element.className = 'timeline-wrap';
    this.canvas = document.createElement('canvas');
    this.canvas.tabIndex = 0;
    this.canvas.className = 'timeline-canvas';
    // an application: a screen reader passes the arrow keys through to it
    this.canvas.setAttribute('role', 'application');
    this.canvas.setAttribute('aria-roledescription', 'timeline');
    this.canvas.setAttribute('aria-label', label);
    const id = `tl-${++timelineIds}`;
    this.#summary = document.createElement('p');
    this.#summary.className = 'sr-only';
    this.#summary.id = `${id}-summary`;
    this.details = document.createElement('p');
    this.details.className = 'timeline-details';
    this.details.id = `${id}-details`;
    this.details.setAttribute('role', 'status');
    this.details.setAttribute('aria-live', 'polite');
    this.details.textContent = 'Click a lane, or focus the timeline and press the down arrow, to read a request\'s figures here.';
    this.canvas.setAttribute('aria-describedby', `${this.#summary.id} ${this.details.id}`);
    this.#tooltip = document.createElement('div');
    this.#tooltip.className = 'tooltip';
    this.#tooltip.hidden = true;
    this.#tooltip.setAttribute('role', 'tooltip');
    this.element.append(this.canvas, this.#tooltip, this.details, this.#summary);
    const ctx = this.canvas.getContext('2d', { alpha: false });
    if (!ctx) throw new Error('This webview cannot draw on a canvas.');
    this.#ctx = ctx;
    this.#describe();
    this.#bindInput();
    this.#resize = new ResizeObserver(() => this.#layout());
  }

  /** Call once the element is in the document: sizes the canvas and draws the first frame. */
  attach(): void {
    this.#resize.observe(this.element);
    this.#layout(true);
  }

  dispose(): void {
    this.#resize.disconnect();
    if (this.#frame) cancelAnimationFrame(this.#frame);
  }

  get view(): TimelineView { return this.#view; }
  get model(): LaneModel { return this.#model; }

  setModel(model: LaneModel, keepView = false): void {
    const wasFull = this.#isFull();
    const before = this.#currentLane();
    this.#model = model;
    this.#rows = rowCount(model);
    if (this.#following) this.#view = this.#followView();
    else if (!keepView || wasFull) this.#view = this.#fullView();
    this.#describe();
    // the selected request's line is said again only when its record replaced its in-flight lane
    const after = this.#currentLane();
    if (after && before && before.inFlight && !after.inFlight) this.details.textContent = requestDetails(after, this.#model);
    this.#layout();
  }

  setTheme(theme: Theme): void {
    this.#theme = theme;
    this.draw();
  }

  setView(v: TimelineView): void {
    this.#following = false;
    this.#view = this.#clamp(v);
    this.#schedule();
    this.onViewChange?.(this.#view);
  }

  reset(): void { this.setView(this.#fullView()); }

  /** Live mode: shows the latest `followLanes` lanes, and keeps showing the latest as the model grows, until the view is moved. */
  follow(): void {
    if (this.followLanes === undefined) return;
    this.#following = true;
    this.#view = this.#followView();
    this.#describe();
    this.#schedule();
    this.onViewChange?.(this.#view);
  }

  /** Zooms time around `atX` (css px in the plot, default centre) by `factor` (< 1 zooms in). */
  zoomBy(factor: number, atX?: number, lanes = false): void {
    const v = this.#view;
    if (lanes) {
      const rel = atX ?? 0.5;
      const c = v.yStart + (v.yEnd - v.yStart) * rel;
      this.setView({ ...v, yStart: c - (c - v.yStart) * factor, yEnd: c + (v.yEnd - c) * factor });
      return;
    }
    const plotW = Math.max(1, this.#width - GUTTER);
    const rel = atX === undefined ? 0.5 : Math.min(1, Math.max(0, atX / plotW));
    const c = v.xStart + (v.xEnd - v.xStart) * rel;
    this.setView({ ...v, xStart: c - (c - v.xStart) * factor, xEnd: c + (v.xEnd - c) * factor });
  }

  panBy(dxShare: number, dyShare: number): void {
    const v = this.#view;
    const dx = (v.xEnd - v.xStart) * dxShare;
    const dy = (v.yEnd - v.yStart) * dyShare;
    this.setView({ xStart: v.xStart + dx, xEnd: v.xEnd + dx, yStart: v.yStart + dy, yEnd: v.yEnd + dy });
  }

  /**
   * Selects the request on lane `lane` (keyboard ↑/↓, a click): outlines it, brings it into view
   * and writes its figures in the details line.
   */
  selectLane(lane: number): void {
    const lanes = this.#model.lanes;
    if (lanes.length === 0) return;
    const i = Math.max(0, Math.min(lanes.length - 1, lane));
    const l = lanes[i]!;
    this.#current = l.request.index;
    this.canvas.dataset.selectedRequest = String(l.request.index);
    this.details.textContent = requestDetails(l, this.#model);
    const v = this.#view;
    const span = v.yEnd - v.yStart;
    const row = rowOfLane(this.#model, i);
    if (row < v.yStart || row + 1 > v.yEnd) {
      const y0 = row < v.yStart ? row : row + 1 - span;
      this.setView({ ...v, yStart: y0, yEnd: y0 + span });
    } else {
      this.#schedule();
    }
  }

  /**
   * Shows a window (a stall) on a lane, with context around it, outlined; `culprits` (the requests
   * whose prefill caused it) get their prefill outlined on their lanes, and are brought into view
   * with it when they are near enough.
   */
  select(lane: number, start: number, end: number, culprits: readonly CulpritSpan[] = []): void {
    this.#selection = { lane, start, end };
    this.#culprits = culprits;
    const m = this.#model;
    const lanesShown = Math.min(rowCount(m), 24);
    let lo = rowOfLane(m, lane);
    let hi = lo;
    let t0 = start;
    let t1 = end;
    for (const c of culprits) {
      const row = rowOfLane(m, c.lane);
      if (Math.max(hi, row) - Math.min(lo, row) >= lanesShown) continue;
      lo = Math.min(lo, row);
      hi = Math.max(hi, row);
      t0 = Math.min(t0, c.start);
      t1 = Math.max(t1, c.end);
    }
    const len = Math.max(t1 - t0, 1);
    const pad = Math.max(len * (culprits.length ? 0.5 : 1.5), 250);
    let y0 = (lo + hi + 1) / 2 - lanesShown / 2;
    y0 = Math.max(0, Math.min(rowCount(m) - lanesShown, y0));
    this.setView({ xStart: t0 - pad, xEnd: t1 + pad, yStart: y0, yEnd: y0 + lanesShown });
    this.canvas.dataset.culpritLanes = culprits.map((c) => c.lane).join(',');
    const l = this.#model.lanes[lane];
    if (l) {
      this.#current = l.request.index;
      this.canvas.dataset.selectedRequest = String(l.request.index);
      this.details.textContent = requestDetails(l, m);
    }
    this.canvas.focus();
  }

  #clearSelection(): void {
    this.#selection = undefined;
    this.#culprits = [];
    delete this.canvas.dataset.culpritLanes;
  }

  #currentLane(): Lane | undefined {
    if (this.#current === undefined) return undefined;
    const i = this.#model.laneOf.get(this.#current);
    return i === undefined ? undefined : this.#model.lanes[i];
  }

  #describe(): void {
    this.#summary.textContent = timelineSummary(this.#model, this.followLanes !== undefined);
  }

  #fullView(): TimelineView {
    const end = Math.max(this.#model.endMs, 1);
    return { xStart: -end * 0.01, xEnd: end * 1.02, yStart: 0, yEnd: Math.max(1, rowCount(this.#model)) };
  }

  /** The latest `followLanes` lanes, from the first of them to now (the whole run while it has no more). */
  #followView(): TimelineView {
    const n = rowCount(this.#model);
    const k = this.followLanes ?? n;
    if (n <= k || this.#model.rows) return this.#fullView();
    const from = this.#model.lanes[n - k]!.scheduled;
    const end = Math.max(this.#model.endMs, from + 1);
    return this.#clamp({ xStart: from - (end - from) * 0.01, xEnd: end + (end - from) * 0.02, yStart: n - k, yEnd: n });
  }

  #isFull(): boolean {
    const f = { ...this.#fullView(), yEnd: Math.max(1, this.#rows) };
    const v = this.#view;
    return v.yStart <= 0 && v.yEnd >= f.yEnd - 1 && v.xStart <= f.xStart + 1e-6;
  }

  #clamp(v: TimelineView): TimelineView {
    const full = this.#fullView();
    const fullSpan = full.xEnd - full.xStart;
    let span = Math.min(Math.max(v.xEnd - v.xStart, MIN_SPAN_MS), fullSpan * 1.5);
    let xStart = v.xStart;
    if (!Number.isFinite(xStart)) xStart = full.xStart;
    xStart = Math.max(full.xStart - fullSpan * 0.25, Math.min(xStart, full.xEnd + fullSpan * 0.25 - span));
    const n = Math.max(1, rowCount(this.#model));
    let ySpan = Math.min(Math.max(v.yEnd - v.yStart, 1), n);
    let yStart = Math.max(0, Math.min(v.yStart, n - ySpan));
    if (!Number.isFinite(yStart)) yStart = 0;
    if (!Number.isFinite(span)) span = fullSpan;
    if (!Number.isFinite(ySpan)) ySpan = n;
    return { xStart, xEnd: xStart + span, yStart, yEnd: yStart + ySpan };
  }

  #layout(immediate = false): void {
    const w = Math.max(120, Math.floor(this.element.clientWidth || 600));
    const n = Math.max(1, rowCount(this.#model));
    const h = Math.round(Math.min(MAX_HEIGHT, Math.max(140, n * 16))) + AXIS;
    const dpr = window.devicePixelRatio || 1;
    if (w !== this.#width || h !== this.#height || dpr !== this.#dpr) {
      this.#width = w;
      this.#height = h;
      this.#dpr = dpr;
      this.canvas.width = Math.round(w * dpr);
      this.canvas.height = Math.round(h * dpr);
      this.canvas.style.width = `${w}px`;
      this.canvas.style.height = `${h}px`;
    }
    if (immediate) this.draw();
    else this.#schedule();
  }

  #schedule(): void {
    if (this.#frame) return;
    this.#frame = requestAnimationFrame(() => { this.#frame = 0; this.draw(); });
  }

  #paintsFor(th: Theme): Paints {
    if (this.#paints?.theme === th) return this.#paints;
    this.#paints = {
      theme: th, bg: paintOf(th.background), yellow: paintOf(th.yellow), purple: paintOf(th.purple), blue: paintOf(th.blue),
      fg: paintOf(th.foreground), muted: paintOf(th.muted), red: paintOf(th.red), stall: STALL_KINDS.map((_, kind) => paintOf(stallColour(th, kind))),
    };
    return this.#paints;
  }

  /** Draws a frame now; records how long it took (data-draw-ms) for the tests and the benchmark. */
  draw(): void {
    const t0 = performance.now();
    const ctx = this.#ctx;
    const th = this.#theme;
    const p = this.#paintsFor(th);
    const f = this.#geometry();
    ctx.setTransform(this.#dpr, 0, 0, this.#dpr, 0, 0);
    ctx.globalAlpha = 1;
    ctx.fillStyle = th.background;
    ctx.fillRect(0, 0, f.W, f.H);
    // the lanes, in software, into the plot's pixels (raster.ts)
    this.#layer.resize(f.plotW, f.plotH, this.#dpr, GUTTER);
    this.#layer.clear(p.bg);
    this.#paintBars(f, p);
    const thinkGaps = this.#paintThinkGaps(f, p);
    this.#paintCuts(f, p);
    const stalls = this.#paintStalls(f, p);
    this.#layer.putOn(ctx, Math.round(GUTTER * this.#dpr), 0);
    ctx.save();
    ctx.beginPath();
    ctx.rect(GUTTER, 0, f.plotW, f.plotH);
    ctx.clip();
    this.#outlineSelected(f);
    const prefillDrawn = this.#outlineCulprits(f);
    ctx.restore();
    if (this.#model.lanes.length === 0) {
      // a live run before its first request: say so rather than show an empty plot
      ctx.font = `${th.fontSize}px ${th.fontFamily}`;
      ctx.fillStyle = th.muted;
      ctx.textAlign = 'center';
      ctx.textBaseline = 'middle';
      ctx.fillText('Waiting for the first request…', GUTTER + f.plotW / 2, f.plotH / 2);
    }
    this.#drawAxes(f.X, f.laneH, f.first, f.last);
    this.#recordFrame(performance.now() - t0, f, stalls, prefillDrawn, thinkGaps);
  }

  /** This frame's geometry: the plot's size, the view's scale, the lanes in view and where a lane's bar sits. */
  #geometry(): Frame {
    const { lanes } = this.#model;
    const W = this.#width;
    const H = this.#height;
    const plotW = W - GUTTER;
    const plotH = H - AXIS;
    const v = this.#view;
    const xScale = plotW / (v.xEnd - v.xStart);
    const laneH = plotH / (v.yEnd - v.yStart);
    const xStart = v.xStart;
    const m = this.#model;
    const first = Math.max(0, Math.floor(v.yStart));
    const last = Math.min(rowCount(m), Math.ceil(v.yEnd));
    // bars thinner than a pixel are drawn a pixel tall so that every lane shows
    const barH = Math.max(1, laneH * 0.72);
    const visible: number[] = [];
    let chunksInView = 0;
    const consider = (i: number) => {
      const lane = lanes[i]!;
      if (lane.end >= v.xStart && lane.scheduled <= v.xEnd) { visible.push(i); chunksInView += lane.chunks.length; }
    };
    // a row per lane: the rows are the lanes; shared rows (sessions): each row's lanes
    if (m.rows) for (let row = first; row < last; row++) for (const i of lanesOfRow(m, row)) consider(i);
    else for (let i = first; i < last; i++) consider(i);
    const yOff = (laneH - barH) / 2 - v.yStart * laneH;
    return { W, H, plotW, plotH, v, xScale, laneH, barH, yOff, first, last, visible, chunksInView,
      X: (t: number) => GUTTER + (t - xStart) * xScale,
      Y: m.rows ? (i: number) => m.rows!.of[i]! * laneH + yOff : (i: number) => i * laneH + yOff };
  }

  /**
   * The bars of the lanes in view, measured requests then warmup ones faded: the client-side wait,
   * the wait for the first token, then decode.
   */
  #paintBars(f: Frame, p: Paints): void {
    const { lanes } = this.#model;
    const { X, W, barH } = f;
    for (const warm of [false, true]) {
      const a = warm ? 0.45 : 1;
      for (const i of f.visible) {
        const l = lanes[i]!;
        if (l.request.warmup !== warm) continue;
        const y = f.Y(i);
        if (l.sent - l.scheduled > 0) this.#span(X(l.scheduled), X(l.sent), y + barH * 0.25, barH * 0.5, W, p.yellow, a); // client-side wait
        this.#span(X(l.sent), X(l.firstToken ?? l.end), y + barH * 0.2, barH * 0.6, W, p.purple, a); // waiting for the first token
        const c = l.chunks;
        if (c.length > 0) this.#span(X(c[0]!), X(c[c.length - 1]!), y, barH, W, p.blue, a); // decode
        // an imported run without chunk times (the tool kept the first and last token only): decode from one to the other, no ticks
        else if (l.firstToken !== undefined && !l.request.error && l.end > l.firstToken) this.#span(X(l.firstToken), X(l.end), y, barH, W, p.blue, a);
      }
    }
  }

  /**
   * Shared rows (sessions): the wait between a turn's end and the next turn's due time (think time)
   * as a thin dashed line at the middle of the row, so a pause is told from an empty stretch. Returns how many were drawn.
   */
  #paintThinkGaps(f: Frame, p: Paints): number {
    const m = this.#model;
    if (!m.rows) return 0;
    const { X, v, barH, W } = f;
    const h = Math.max(1, barH * 0.14);
    let drawn = 0;
    for (let row = f.first; row < f.last; row++) {
      const g = rowGaps(m, row);
      const list = lanesOfRow(m, row);
      if (g.length === 0) continue;
      const y = f.Y(list[0]!) + barH / 2 - h / 2;
      for (let k = 0; k < g.length; k += 2) {
        if (g[k + 1]! < v.xStart || g[k]! > v.xEnd) continue;
        const x0 = Math.max(GUTTER, X(g[k]!) + 1);
        const x1 = Math.min(W, X(g[k + 1]!) - 1);
        for (let x = x0; x < x1; x += 6) this.#layer.fill(x, y, Math.min(3, x1 - x), h, p.muted, 0.9);
        if (x1 > x0) drawn++;
      }
    }
    return drawn;
  }

  /** Over the bars: the gaps cut out of every decode bar (each at least a pixel wide), a tick per chunk when zoomed in, the errors. */
  #paintCuts(f: Frame, p: Paints): void {
    const { lanes } = this.#model;
    const { X, Y, barH } = f;
    const inset = Math.max(0, barH * 0.3);
    const buckets = Math.max(1, Math.floor(f.plotW));
    for (const i of f.visible) {
      const l = lanes[i]!;
      if (l.chunks.length > 1) this.#drawGaps(l, f.v, buckets, 1 / f.xScale, X, Y(i) + inset, barH - 2 * inset, p.bg);
    }
    if (f.xScale >= 3 && barH >= 4) for (const i of f.visible) this.#drawTicks(lanes[i]!, f.v, X, Y(i), barH, p.fg);
    for (const i of f.visible) {
      const l = lanes[i]!;
      if (l.request.error) this.#layer.fill(X(l.end) - 1, Y(i) - 1, 3, barH + 2, p.red);
    }
  }

  /** The stalls, over everything: at least 2 px wide so a short one still shows, one colour per cause; a tint, then an underline. */
  #paintStalls(f: Frame, p: Paints): { rects: number; kinds: number } {
    const { lanes } = this.#model;
    const { X, v, barH } = f;
    const under = Math.max(1, barH * 0.2);
    let rects = 0;
    let kinds = 0; // a bit per kind
    if (this.#model.stallKinds.length === 0) return { rects, kinds };
    for (const pass of [0, 1]) {
      for (const i of f.visible) {
        const l = lanes[i]!;
        const st = l.stalls;
        const y = f.Y(i);
        for (let k = 0; k < st.length; k += 2) {
          const s0 = st[k]!;
          const e0 = s0 + st[k + 1]!;
          if (e0 < v.xStart || s0 > v.xEnd) continue;
          const kind = l.stallKinds[k >> 1]!;
          const x0 = X(s0);
          const w = Math.max(X(e0), x0 + 2) - x0;
          if (pass === 0) this.#layer.fill(x0, y - 1, w, barH + 2, p.stall[kind]!, 0.35);
          else { this.#layer.fill(x0, y + barH - under, w, under, p.stall[kind]!); rects++; kinds |= 1 << kind; }
        }
      }
    }
    return { rects, kinds };
  }

  /** The request picked with the keyboard or a click (its whole lane), and the selected stall, outlined. */
  #outlineSelected(f: Frame): void {
    const ctx = this.#ctx;
    const { X, v, laneH, first, last } = f;
    const m = this.#model;
    const cur = this.#current === undefined ? undefined : m.laneOf.get(this.#current);
    const curRow = cur === undefined ? -1 : rowOfLane(m, cur);
    if (cur !== undefined && curRow >= first && curRow < last) {
      const l = m.lanes[cur]!;
      const y = (curRow - v.yStart) * laneH;
      ctx.strokeStyle = this.#theme.focus;
      ctx.lineWidth = 1;
      const x0 = X(l.scheduled);
      ctx.strokeRect(x0 - 3.5, y - 1.5, Math.max(X(l.end) - x0, 2) + 7, laneH + 3);
    }
    const sel = this.#selection;
    const selRow = sel ? rowOfLane(m, sel.lane) : -1;
    if (sel && selRow >= first && selRow < last) {
      const y = (selRow - v.yStart) * laneH;
      ctx.strokeStyle = this.#theme.focus;
      ctx.lineWidth = 2;
      const x0 = X(sel.start);
      ctx.strokeRect(x0 - 2, y - 2, Math.max(X(sel.end) - x0, 2) + 4, laneH + 4);
    }
  }

  /** The selected stall's culprits: their prefill, filled faintly and outlined dashed on their lanes. Returns how many were drawn. */
  #outlineCulprits(f: Frame): number {
    if (!this.#culprits.length) return 0;
    const ctx = this.#ctx;
    const { X, v, laneH } = f;
    let drawn = 0;
    ctx.strokeStyle = this.#theme.red;
    ctx.fillStyle = this.#theme.red;
    ctx.lineWidth = 2;
    ctx.setLineDash([5, 3]);
    for (const c of this.#culprits) {
      const row = rowOfLane(this.#model, c.lane);
      if (row < f.first || row >= f.last || c.end < v.xStart || c.start > v.xEnd) continue;
      const y = (row - v.yStart) * laneH;
      const x0 = X(c.start);
      const w = Math.max(X(c.end) - x0, 2);
      ctx.globalAlpha = 0.3;
      ctx.fillRect(x0, y + 1, w, laneH - 2);
      ctx.globalAlpha = 1;
      ctx.strokeRect(x0 + 1, y + 2, w - 2, laneH - 4);
      drawn++;
    }
    ctx.setLineDash([]);
    return drawn;
  }

  /** What the frame held and how long it took, on the canvas' data attributes, for the tests and the benchmark. */
  #recordFrame(ms: number, f: Frame, stalls: { rects: number; kinds: number }, prefillDrawn: number, thinkGaps: number): void {
    const { lanes } = this.#model;
    const d = this.canvas.dataset;
    d.drawMs = ms.toFixed(2);
    d.viewStart = String(f.v.xStart);
    d.viewEnd = String(f.v.xEnd);
    d.laneStart = String(f.v.yStart);
    d.laneEnd = String(f.v.yEnd);
    d.frames = String(Number(d.frames ?? 0) + 1);
    d.stallsDrawn = String(stalls.rects);
    d.stallKindsDrawn = STALL_KINDS.filter((_, kind) => stalls.kinds & (1 << kind)).sort().join(',');
    d.prefillDrawn = String(prefillDrawn);
    // lanes and chunks in the model and in view, lanes still in flight
    d.lanes = String(lanes.length);
    // shared rows (a session's turns on one row): how many rows, and the think-time gaps drawn between turns
    d.rows = String(rowCount(this.#model));
    d.grouping = this.#model.rows ? this.#model.rows.by : 'request';
    d.thinkGapsDrawn = String(thinkGaps);
    d.chunks = String(this.#model.chunkCount);
    d.lanesDrawn = String(f.visible.length);
    d.chunksDrawn = String(f.chunksInView);
    d.inFlight = String(laneCounts(this.#model).inFlight);
  }

  /** A bar from x0 to x1 (at least a pixel wide), clipped a little outside the plot. */
  #span(x0: number, x1: number, y: number, h: number, W: number, paint: Paint, alpha: number): void {
    const a = Math.max(GUTTER - 2, x0);
    const b = Math.min(W + 2, Math.max(x1, x0 + 1));
    if (b > a) this.#layer.fill(a, y, b - a, h, paint, alpha);
  }

  /**
   * Cuts every gap at least a pixel wide out of a lane's decode bar. Zoomed out (a pixel spans
   * more than the lane's "big gap" threshold), the lane's short list of big gaps has every gap that
   * can show, so it is used instead of visiting each chunk; zoomed in, the chunks in view are reduced
   * per pixel keeping the largest gap in each (downsample.ts). Either way no visible gap is dropped.
   */
  #drawGaps(lane: Lane, v: TimelineView, buckets: number, msPerPx: number, X: (t: number) => number, y: number, h: number, bg: Paint): void {
    const layer = this.#layer;
    if (msPerPx >= lane.bigGapMs) {
      const g = lane.bigGaps;
      for (let k = 0; k < g.length; k += 2) {
        const len = g[k + 1]!;
        if (len < msPerPx) break; // sorted longest first
        const gs = g[k]!;
        if (gs + len < v.xStart || gs > v.xEnd) continue;
        const x0 = X(gs) + 0.5;
        const x1 = X(gs + len) - 0.5;
        if (x1 > x0) layer.fill(x0, y, x1 - x0, h, bg);
      }
      return;
    }
    const c = lane.chunks;
    const from = Math.max(v.xStart, c[0]!);
    const to = Math.min(v.xEnd, c[c.length - 1]!);
    if (to <= from) return;
    // buckets are pixels of the whole plot: reduce only over the part of the lane in view
    const pxFrom = Math.floor(((from - v.xStart) / (v.xEnd - v.xStart)) * buckets);
    const pxTo = Math.ceil(((to - v.xStart) / (v.xEnd - v.xStart)) * buckets);
    const n = Math.max(1, pxTo - pxFrom);
    const bucketMs = (v.xEnd - v.xStart) / buckets;
    const r = largestGapPerBucket(c, v.xStart + pxFrom * bucketMs, v.xStart + pxTo * bucketMs, n,
      this.#buckets && this.#buckets.counts.length === n ? this.#buckets : undefined);
    this.#buckets = r;
    for (let b = 0; b < n; b++) {
      const g = r.gapLength[b]!;
      if (g < bucketMs) continue; // under a pixel: the bar is solid there at this zoom
      const gs = r.gapStart[b]!;
      const x0 = X(gs) + 0.5;
      const x1 = X(gs + g) - 0.5;
      if (x1 > x0) layer.fill(x0, y, x1 - x0, h, bg);
    }
  }

  #drawTicks(lane: Lane, v: TimelineView, X: (t: number) => number, y: number, barH: number, fg: Paint): void {
    const c = lane.chunks;
    const i0 = lowerBound(c, v.xStart);
    const i1 = lowerBound(c, v.xEnd, i0);
    const layer = this.#layer;
    for (let i = i0; i < i1; i++) layer.fill(Math.round(X(c[i]!)) - 0.5, y, 1, barH, fg);
  }

  #drawAxes(X: (t: number) => number, laneH: number, first: number, last: number): void {
    const ctx = this.#ctx;
    const th = this.#theme;
    const v = this.#view;
    const W = this.#width;
    const plotH = this.#height - AXIS;
    ctx.font = `${Math.max(10, th.fontSize - 2)}px ${th.fontFamily}`;
    ctx.fillStyle = th.muted;
    ctx.strokeStyle = th.lines;
    ctx.lineWidth = 1;
    ctx.globalAlpha = 1;
    ctx.beginPath();
    ctx.moveTo(GUTTER, plotH + 0.5);
    ctx.lineTo(W, plotH + 0.5);
    ctx.stroke();
    const { step, ticks } = niceTicks(v.xStart, v.xEnd, Math.max(2, Math.floor((W - GUTTER) / 90)));
    ctx.textBaseline = 'top';
    ctx.textAlign = 'center';
    for (const t of ticks) {
      const x = Math.round(X(t)) + 0.5;
      ctx.globalAlpha = 0.35;
      ctx.beginPath();
      ctx.moveTo(x, 0);
      ctx.lineTo(x, plotH);
      ctx.stroke();
      ctx.globalAlpha = 1;
      ctx.fillText(formatAxisMs(t, step), Math.min(W - 24, Math.max(GUTTER + 12, x)), plotH + 5);
    }
    // lane labels when there is room for them
    ctx.textAlign = 'right';
    ctx.textBaseline = 'middle';
    if (laneH >= 11) {
      for (let i = first; i < last; i++) {
        const y = (i - v.yStart + 0.5) * laneH;
        if (y < 4 || y > plotH - 4) continue;
        ctx.fillText(this.#rowLabel(i), GUTTER - 6, y);
      }
    } else {
      ctx.fillText(`${Math.floor(v.yStart) + 1}–${Math.min(rowCount(this.#model), Math.ceil(v.yEnd))}`, GUTTER - 6, 8);
    }
  }

  /** A row's label: its request ("#12"), or its session ("S3", from 1) when a session's turns share the row. */
  #rowLabel(row: number): string {
    const m = this.#model;
    const session = m.rows?.sessions[row];
    if (session !== undefined) return `S${session + 1}`;
    const lane = lanesOfRow(m, row)[0];
    return lane === undefined ? '' : `#${m.lanes[lane]!.request.index}`;
  }

  #bindInput(): void {
    const c = this.canvas;
    c.addEventListener('wheel', (e) => {
      e.preventDefault();
      const r = c.getBoundingClientRect();
      const factor = Math.pow(1.0015, e.deltaY * (e.deltaMode === 1 ? 20 : 1));
      if (e.shiftKey) this.zoomBy(factor, (e.clientY - r.top) / Math.max(1, r.height - AXIS), true);
      else this.zoomBy(factor, e.clientX - r.left - GUTTER);
    }, { passive: false });
    c.addEventListener('pointerdown', (e) => {
      if (e.button !== 0) return;
      c.setPointerCapture(e.pointerId);
      this.#drag = { x: e.clientX, y: e.clientY, view: this.#view, moved: false };
    });
    c.addEventListener('pointermove', (e) => {
      if (this.#drag) {
        const d = this.#drag;
        if (!d.moved && Math.abs(e.clientX - d.x) + Math.abs(e.clientY - d.y) < 4) return;
        d.moved = true;
        const plotW = Math.max(1, this.#width - GUTTER);
        const plotH = Math.max(1, this.#height - AXIS);
        const dx = ((e.clientX - d.x) / plotW) * (d.view.xEnd - d.view.xStart);
        const dy = ((e.clientY - d.y) / plotH) * (d.view.yEnd - d.view.yStart);
        this.setView({ xStart: d.view.xStart - dx, xEnd: d.view.xEnd - dx, yStart: d.view.yStart - dy, yEnd: d.view.yEnd - dy });
        this.#tooltip.hidden = true;
        return;
      }
      this.#hover(e);
    });
    const end = (e: PointerEvent) => {
      const d = this.#drag;
      if (!d) return;
      this.#drag = undefined;
      c.releasePointerCapture?.(e.pointerId);
      // a click (no drag) on a lane selects its request
      if (!d.moved && e.type === 'pointerup') {
        const lane = this.#laneAt(e);
        if (lane !== undefined) this.selectLane(lane);
      }
    };
    c.addEventListener('pointerup', end);
    c.addEventListener('pointercancel', end);
    c.addEventListener('pointerleave', () => { this.#tooltip.hidden = true; });
    c.addEventListener('dblclick', () => { this.#clearSelection(); this.reset(); });
    c.addEventListener('keydown', (e) => {
      if (e.altKey || e.ctrlKey || e.metaKey) return;
      const k = e.key;
      if (k === '+' || k === '=') this.zoomBy(0.8);
      else if (k === '-' || k === '_') this.zoomBy(1.25);
      else if (k === 'ArrowLeft') this.panBy(-0.15, 0);
      else if (k === 'ArrowRight') this.panBy(0.15, 0);
      else if (k === 'ArrowUp' || k === 'ArrowDown') this.#step(k === 'ArrowUp' ? -1 : 1);
      else if (k === 'PageUp') this.panBy(0, -0.9);
      else if (k === 'PageDown') this.panBy(0, 0.9);
      else if (k === '0' || k === 'Home') { this.#clearSelection(); this.reset(); }
      else if (k === 'End' && this.followLanes !== undefined) { this.#clearSelection(); this.follow(); }
      else if (k === 'Escape') { this.#tooltip.hidden = true; return; }
      else return;
      e.preventDefault();
    });
  }

  /** ↑/↓: the previous/next request in start order; the first one in view when none is selected yet. */
  #step(dir: -1 | 1): void {
    const n = this.#model.lanes.length;
    if (n === 0) return;
    const m = this.#model;
    const i = this.#current === undefined ? undefined : m.laneOf.get(this.#current);
    if (i === undefined) {
      // the first (or last) request of the rows in view
      const v = this.#view;
      const rows = rowCount(m);
      const row = dir > 0 ? Math.max(0, Math.ceil(v.yStart)) : Math.min(rows - 1, Math.floor(v.yEnd) - 1);
      const list = lanesOfRow(m, row);
      this.selectLane((dir > 0 ? list[0] : list[list.length - 1]) ?? 0);
      return;
    }
    this.selectLane(i + dir);
  }

  /** The lane under a pointer event, if any: on a shared row (a session's), the request whose span holds the time pointed at, else the nearest. */
  #laneAt(e: MouseEvent): number | undefined {
    const r = this.canvas.getBoundingClientRect();
    const px = e.clientX - r.left;
    const py = e.clientY - r.top;
    const v = this.#view;
    const plotH = this.#height - AXIS;
    if (px < GUTTER || py > plotH || py < 0) return undefined;
    const row = Math.floor(v.yStart + (py / plotH) * (v.yEnd - v.yStart));
    const m = this.#model;
    if (!m.rows) return row >= 0 && row < m.lanes.length ? row : undefined;
    const t = v.xStart + ((px - GUTTER) / (this.#width - GUTTER)) * (v.xEnd - v.xStart);
    let best: number | undefined;
    let bestDistance = Infinity;
    for (const i of lanesOfRow(m, row)) {
      const l = m.lanes[i]!;
      const d = t < l.scheduled ? l.scheduled - t : t > l.end ? t - l.end : 0;
      if (d < bestDistance) { best = i; bestDistance = d; }
    }
    return best;
  }

  #hover(e: PointerEvent): void {
    const laneIdx = this.#laneAt(e);
    const lane = laneIdx === undefined ? undefined : this.#model.lanes[laneIdx];
    if (!lane) { this.#tooltip.hidden = true; return; }
    const r = this.canvas.getBoundingClientRect();
    const px = e.clientX - r.left;
    const py = e.clientY - r.top;
    const v = this.#view;
    const t = v.xStart + ((px - GUTTER) / (this.#width - GUTTER)) * (v.xEnd - v.xStart);
    this.#showTooltip(lane, t, px, py);
  }

  #showTooltip(lane: Lane, t: number, px: number, py: number): void {
    const r = lane.request;
    const lines: [string, string][] = [
      ['Request', `#${r.index}${r.warmup ? ' (warmup)' : ''}${lane.inFlight ? ' (in flight)' : ''}`],
      ['Prompt tokens', r.promptTokens === undefined ? '–' : formatInt(r.promptTokens)],
      ['Output tokens', formatInt(r.outputTokens)],
      ['TTFT', formatMs(r.ttftMs)],
      ['TPOT', formatMs(r.tpotMs)],
      ['E2E', formatMs(r.e2eMs)],
      // against a schedule (a trace, an open loop) the wait is lateness, said below with the traffic's rows
      ...(onSchedule(r, this.loadKind) ? [] : [['Held in the client before sending', formatMs(lane.sent - lane.scheduled)] as [string, string]]),
      ['Response id', r.responseId ?? '–'],
      ...trafficTooltip(lane, this.#model, this.#model.laneOf.get(r.index), this.loadKind),
    ];
    for (let k = 0; k < lane.stalls.length; k += 2) {
      const s = lane.stalls[k]!;
      const g = lane.stalls[k + 1]!;
      const slack = 4 / ((this.#width - GUTTER) / (this.#view.xEnd - this.#view.xStart));
      if (t >= s - slack && t <= s + g + slack) lines.push(['Stall', `${formatMs(g)} at ${formatAt(s)}${stallWhy(lane.stallKinds[k >> 1]!, lane.stallCulprits[k >> 1] ?? [])}`]);
    }
    for (const t of retryTexts(r)) lines.push(['Retried', t]);
    if (r.error) lines.push(['Error', `${r.error.kind}${r.error.status ? ` ${r.error.status}` : ''}: ${r.error.message}${retryAfterNote(r.error)}`]);
    const tip = this.#tooltip;
    tip.replaceChildren(...lines.map(([k, val]) => {
      const row = document.createElement('div');
      const a = document.createElement('span');
      a.className = 'k';
      a.textContent = k;
      const b = document.createElement('span');
      b.className = k === 'Error' || k === 'Stall' ? 'v bad' : 'v';
      b.textContent = val;
      row.append(a, b);
      return row;
    }));
    tip.hidden = false;
    const tw = tip.offsetWidth;
    const left = px + 14 + tw > this.#width ? Math.max(0, px - 14 - tw) : px + 14;
    tip.style.left = `${left}px`;
    tip.style.top = `${Math.max(0, Math.min(py + 10, this.#height - tip.offsetHeight))}px`;
  }
}

/** A stall's colour by kind: another request's prefill red (as every stall was before causes), buffering orange, unknown the chart text colour. */
function stallColour(th: Theme, kind: number): string {
  switch (STALL_KINDS[kind]) {
    case 'buffering': return th.orange;
    case 'unknown': return th.foreground;
    default: return th.red;
  }
}

function stallWhy(kind: number, culprits: readonly number[]): string {
  if (kind === CAUSE_RULE) return '';
  const k = STALL_KINDS[kind];
  if (k === 'prefill') return culprits.length ? `: prefill of ${culprits.map((i) => `#${i}`).join(', ')}` : ': another request\'s prefill';
  if (k === 'buffering') return ': buffered between the server and you';
  return `: ${UNKNOWN_STALL_CAUSE}`;
}
