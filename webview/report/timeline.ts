// The per-token timeline, drawn on a plain canvas: chart.js would need a point object per chunk,
// and a million of them take seconds to build, where this draws a frame in milliseconds. Each lane
// is one request in start order: the client-side wait, the wait for the first token, then decode
// with a tick per chunk. Per pixel only the largest gap is kept (downsample.ts), so no gap is hidden.
// Stalls are coloured by cause (another request's prefill, buffering, unknown); a selected stall's
// culprits have their prefill outlined on their own lanes.
// Wheel zooms time (Shift+wheel: lanes), dragging pans, double-click or 0 resets, +/- and arrows work
// from the keyboard.
import { largestGapPerBucket, lowerBound, type GapBuckets } from './downsample';
import { formatAt, formatAxisMs, formatInt, formatMs } from '../../src/present/units';
import { retryAfterNote, retryTexts } from '../../src/present/retryText';
import { CAUSE_RULE, STALL_KINDS, type Lane, type LaneModel } from './lanes';
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

export class Timeline {
  readonly element: HTMLElement;
  readonly canvas: HTMLCanvasElement;
  readonly #tooltip: HTMLElement;
  readonly #ctx: CanvasRenderingContext2D;
  #model: LaneModel;
  #theme: Theme;
  #view: TimelineView;
  #selection: Selection | undefined;
  #culprits: readonly CulpritSpan[] = [];
  #width = 0;
  #height = 0;
  #dpr = 1;
  #frame = 0;
  #drag: { x: number; y: number; view: TimelineView } | undefined;
  #buckets: GapBuckets | undefined;
  readonly #resize: ResizeObserver;
  readonly #label: string;
  /** Called after the view changes (zoom, pan, select), e.g. to tell a screen reader. */
  onViewChange?: (view: TimelineView) => void;

  constructor(model: LaneModel, theme: Theme, label: string) {
    this.#model = model;
    this.#theme = theme;
    this.#label = label;
    this.#view = this.#fullView();
    this.element = document.createElement('div');
    this.element.className = 'timeline-wrap';
    this.canvas = document.createElement('canvas');
    this.canvas.tabIndex = 0;
    this.canvas.className = 'timeline-canvas';
    this.canvas.setAttribute('role', 'img');
    this.#tooltip = document.createElement('div');
    this.#tooltip.className = 'tooltip';
    this.#tooltip.hidden = true;
    this.#tooltip.setAttribute('role', 'tooltip');
    this.element.append(this.canvas, this.#tooltip);
    const ctx = this.canvas.getContext('2d', { alpha: false });
    if (!ctx) throw new Error('This webview cannot draw on a canvas.');
    this.#ctx = ctx;
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

  setModel(model: LaneModel, keepView = false): void {
    const wasFull = this.#isFull();
    this.#model = model;
    if (!keepView || wasFull) this.#view = this.#fullView();
    this.#layout();
  }

  setTheme(theme: Theme): void {
    this.#theme = theme;
    this.draw();
  }

  setView(v: TimelineView): void {
    this.#view = this.#clamp(v);
    this.#schedule();
    this.onViewChange?.(this.#view);
  }

  reset(): void { this.setView(this.#fullView()); }

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
   * Shows a window (a stall) on a lane, with context around it, outlined; `culprits` (the requests
   * whose prefill caused it) get their prefill outlined on their lanes, and are brought into view
   * with it when they are near enough.
   */
  select(lane: number, start: number, end: number, culprits: readonly CulpritSpan[] = []): void {
    this.#selection = { lane, start, end };
    this.#culprits = culprits;
    const lanesShown = Math.min(this.#model.lanes.length, 24);
    let lo = lane;
    let hi = lane;
    let t0 = start;
    let t1 = end;
    for (const c of culprits) {
      if (Math.max(hi, c.lane) - Math.min(lo, c.lane) >= lanesShown) continue;
      lo = Math.min(lo, c.lane);
      hi = Math.max(hi, c.lane);
      t0 = Math.min(t0, c.start);
      t1 = Math.max(t1, c.end);
    }
    const len = Math.max(t1 - t0, 1);
    const pad = Math.max(len * (culprits.length ? 0.5 : 1.5), 250);
    let y0 = (lo + hi + 1) / 2 - lanesShown / 2;
    y0 = Math.max(0, Math.min(this.#model.lanes.length - lanesShown, y0));
    this.setView({ xStart: t0 - pad, xEnd: t1 + pad, yStart: y0, yEnd: y0 + lanesShown });
    this.canvas.dataset.culpritLanes = culprits.map((c) => c.lane).join(',');
    this.canvas.focus();
  }

  #clearSelection(): void {
    this.#selection = undefined;
    this.#culprits = [];
    delete this.canvas.dataset.culpritLanes;
  }

  #fullView(): TimelineView {
    const end = Math.max(this.#model.endMs, 1);
    return { xStart: -end * 0.01, xEnd: end * 1.02, yStart: 0, yEnd: Math.max(1, this.#model.lanes.length) };
  }

  #isFull(): boolean {
    const f = this.#fullView();
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
    const n = Math.max(1, this.#model.lanes.length);
    let ySpan = Math.min(Math.max(v.yEnd - v.yStart, 1), n);
    let yStart = Math.max(0, Math.min(v.yStart, n - ySpan));
    if (!Number.isFinite(yStart)) yStart = 0;
    if (!Number.isFinite(span)) span = fullSpan;
    if (!Number.isFinite(ySpan)) ySpan = n;
    return { xStart, xEnd: xStart + span, yStart, yEnd: yStart + ySpan };
  }

  #layout(immediate = false): void {
    const w = Math.max(120, Math.floor(this.element.clientWidth || 600));
    const n = Math.max(1, this.#model.lanes.length);
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

  /** Draws a frame now; records how long it took (data-draw-ms) for the tests and the benchmark. */
  draw(): void {
    const t0 = performance.now();
    const ctx = this.#ctx;
    const th = this.#theme;
    const { lanes } = this.#model;
    const W = this.#width;
    const H = this.#height;
    const plotW = W - GUTTER;
    const plotH = H - AXIS;
    const v = this.#view;
    const xScale = plotW / (v.xEnd - v.xStart);
    const laneH = plotH / (v.yEnd - v.yStart);
    const X = (t: number) => GUTTER + (t - v.xStart) * xScale;
    ctx.setTransform(this.#dpr, 0, 0, this.#dpr, 0, 0);
    ctx.globalAlpha = 1;
    ctx.fillStyle = th.background;
    ctx.fillRect(0, 0, W, H);

    ctx.save();
    ctx.beginPath();
    ctx.rect(GUTTER, 0, plotW, plotH);
    ctx.clip();
    const first = Math.max(0, Math.floor(v.yStart));
    const last = Math.min(lanes.length, Math.ceil(v.yEnd));
    // bars thinner than a pixel are drawn a pixel tall so that every lane shows
    const barH = Math.max(1, laneH * 0.72);
    const buckets = Math.max(1, Math.floor(plotW));
    const msPerPx = 1 / xScale;
    const ticksVisible = xScale >= 3 && barH >= 4;
    // one pass per colour over the visible lanes: a fill style is parsed once per frame, not per lane
    const visible: number[] = [];
    for (let i = first; i < last; i++) {
      const lane = lanes[i]!;
      if (lane.end >= v.xStart && lane.scheduled <= v.xEnd) visible.push(i);
    }
    const yOf = (i: number) => (i - v.yStart) * laneH + (laneH - barH) / 2;
    for (const warm of [false, true]) {
      ctx.globalAlpha = warm ? 0.45 : 1;
      ctx.fillStyle = th.yellow; // client-side wait: scheduled → sent
      for (const i of visible) {
        const l = lanes[i]!;
        if (l.request.warmup === warm && l.sent - l.scheduled > 0) fillSpan(ctx, X(l.scheduled), X(l.sent), yOf(i) + barH * 0.25, barH * 0.5, W);
      }
      ctx.fillStyle = th.purple; // waiting for the first token
      for (const i of visible) {
        const l = lanes[i]!;
        if (l.request.warmup === warm) fillSpan(ctx, X(l.sent), X(l.firstToken ?? l.end), yOf(i) + barH * 0.2, barH * 0.6, W);
      }
      ctx.fillStyle = th.blue; // decode
      for (const i of visible) {
        const l = lanes[i]!;
        const c = l.chunks;
        if (l.request.warmup === warm && c.length > 0) fillSpan(ctx, X(c[0]!), X(c[c.length - 1]!), yOf(i), barH, W);
      }
    }
    ctx.globalAlpha = 1;
    // gaps cut out of the decode bars: every gap at least a pixel wide
    ctx.fillStyle = th.background;
    const inset = Math.max(0, barH * 0.3);
    for (const i of visible) {
      const l = lanes[i]!;
      if (l.chunks.length > 1) this.#drawGaps(l, v, buckets, msPerPx, X, yOf(i) + inset, barH - 2 * inset);
    }
    if (ticksVisible) {
      ctx.fillStyle = th.foreground;
      for (const i of visible) this.#drawTicks(lanes[i]!, v, X, yOf(i), barH);
    }
    ctx.fillStyle = th.red;
    for (const i of visible) {
      const l = lanes[i]!;
      if (l.request.error) ctx.fillRect(X(l.end) - 1, yOf(i) - 1, 3, barH + 2);
    }
    // stalls: over everything, at least 2 px wide so a short one still shows; one colour per cause
    let stallRects = 0;
    const under = Math.max(1, barH * 0.2);
    // one traversal per layer (the tint, then the underline); the colour follows each stall's cause
    const colours = STALL_KINDS.map((_, kind) => stallColour(th, kind));
    let kindsDrawn = 0; // a bit per kind
    if (this.#model.stallKinds.length > 0) {
      for (const pass of [0, 1]) {
        ctx.globalAlpha = pass === 0 ? 0.35 : 1;
        let current = -1;
        for (const i of visible) {
          const l = lanes[i]!;
          const y = yOf(i);
          for (let k = 0; k < l.stalls.length; k += 2) {
            const s0 = l.stalls[k]!;
            const e0 = s0 + l.stalls[k + 1]!;
            if (e0 < v.xStart || s0 > v.xEnd) continue;
            const kind = l.stallKinds[k >> 1]!;
            if (kind !== current) {
              ctx.fillStyle = colours[kind]!;
              current = kind;
            }
            const x0 = X(s0);
            const x1 = Math.max(X(e0), x0 + 2);
            if (pass === 0) ctx.fillRect(x0, y - 1, x1 - x0, barH + 2);
            else { ctx.fillRect(x0, y + barH - under, x1 - x0, under); stallRects++; kindsDrawn |= 1 << kind; }
          }
        }
      }
    }
    ctx.globalAlpha = 1;
    // the selected stall, then its culprits over it
    const sel = this.#selection;
    if (sel && sel.lane >= first && sel.lane < last) {
      const y = (sel.lane - v.yStart) * laneH;
      ctx.strokeStyle = th.focus;
      ctx.lineWidth = 2;
      const x0 = X(sel.start);
      ctx.strokeRect(x0 - 2, y - 2, Math.max(X(sel.end) - x0, 2) + 4, laneH + 4);
    }
    // the selected stall's culprits: their prefill, filled faintly and outlined dashed on their lanes
    let prefillDrawn = 0;
    if (this.#culprits.length) {
      ctx.strokeStyle = th.red;
      ctx.fillStyle = th.red;
      ctx.lineWidth = 2;
      ctx.setLineDash([5, 3]);
      for (const c of this.#culprits) {
        if (c.lane < first || c.lane >= last || c.end < v.xStart || c.start > v.xEnd) continue;
        const y = (c.lane - v.yStart) * laneH;
        const x0 = X(c.start);
        const w = Math.max(X(c.end) - x0, 2);
        ctx.globalAlpha = 0.3;
        ctx.fillRect(x0, y + 1, w, laneH - 2);
        ctx.globalAlpha = 1;
        ctx.strokeRect(x0 + 1, y + 2, w - 2, laneH - 4);
        prefillDrawn++;
      }
      ctx.setLineDash([]);
    }
    ctx.restore();

    this.#drawAxes(X, laneH, first, last);
    const ms = performance.now() - t0;
    this.canvas.dataset.drawMs = ms.toFixed(2);
    this.canvas.dataset.viewStart = String(v.xStart);
    this.canvas.dataset.viewEnd = String(v.xEnd);
    this.canvas.dataset.laneStart = String(v.yStart);
    this.canvas.dataset.laneEnd = String(v.yEnd);
    this.canvas.dataset.frames = String(Number(this.canvas.dataset.frames ?? 0) + 1);
    this.canvas.dataset.stallsDrawn = String(stallRects);
    this.canvas.dataset.stallKindsDrawn = STALL_KINDS.filter((_, kind) => kindsDrawn & (1 << kind)).sort().join(',');
    this.canvas.dataset.prefillDrawn = String(prefillDrawn);
    this.canvas.setAttribute('aria-label', `${this.#label}: ${formatInt(lanes.length)} requests, ${formatInt(this.#model.chunkCount)} chunks; showing ${formatAxisMs(v.xStart, 1)} to ${formatAxisMs(v.xEnd, 1)}. Use plus and minus to zoom, arrows to pan, 0 to reset.`);
  }

  /**
   * Cuts every gap at least a pixel wide out of a lane's decode bar. Zoomed out (a pixel spans
   * more than the lane's "big gap" threshold), the lane's short list of big gaps has every gap that
   * can show, so it is used instead of visiting each chunk; zoomed in, the chunks in view are reduced
   * per pixel keeping the largest gap in each (downsample.ts). Either way no visible gap is dropped.
   */
  #drawGaps(lane: Lane, v: TimelineView, buckets: number, msPerPx: number, X: (t: number) => number, y: number, h: number): void {
    const ctx = this.#ctx;
    if (msPerPx >= lane.bigGapMs) {
      const g = lane.bigGaps;
      for (let k = 0; k < g.length; k += 2) {
        const len = g[k + 1]!;
        if (len < msPerPx) break; // sorted longest first
        const gs = g[k]!;
        if (gs + len < v.xStart || gs > v.xEnd) continue;
        const x0 = X(gs) + 0.5;
        const x1 = X(gs + len) - 0.5;
        if (x1 > x0) ctx.fillRect(x0, y, x1 - x0, h);
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
      if (x1 > x0) ctx.fillRect(x0, y, x1 - x0, h);
    }
  }

  #drawTicks(lane: Lane, v: TimelineView, X: (t: number) => number, y: number, barH: number): void {
    const c = lane.chunks;
    const i0 = lowerBound(c, v.xStart);
    const i1 = lowerBound(c, v.xEnd, i0);
    const ctx = this.#ctx;
    for (let i = i0; i < i1; i++) ctx.fillRect(Math.round(X(c[i]!)) - 0.5, y, 1, barH);
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
        ctx.fillText(`#${this.#model.lanes[i]!.request.index}`, GUTTER - 6, y);
      }
    } else {
      ctx.fillText(`${Math.floor(v.yStart) + 1}–${Math.min(this.#model.lanes.length, Math.ceil(v.yEnd))}`, GUTTER - 6, 8);
    }
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
      this.#drag = { x: e.clientX, y: e.clientY, view: this.#view };
    });
    c.addEventListener('pointermove', (e) => {
      if (this.#drag) {
        const d = this.#drag;
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
    const end = (e: PointerEvent) => { if (this.#drag) { this.#drag = undefined; c.releasePointerCapture?.(e.pointerId); } };
    c.addEventListener('pointerup', end);
    c.addEventListener('pointercancel', end);
    c.addEventListener('pointerleave', () => { this.#tooltip.hidden = true; });
    c.addEventListener('dblclick', () => { this.#clearSelection(); this.reset(); });
    c.addEventListener('keydown', (e) => {
      const k = e.key;
      if (k === '+' || k === '=') this.zoomBy(0.8);
      else if (k === '-' || k === '_') this.zoomBy(1.25);
      else if (k === 'ArrowLeft') this.panBy(-0.15, 0);
      else if (k === 'ArrowRight') this.panBy(0.15, 0);
      else if (k === 'ArrowUp') this.panBy(0, -0.15);
      else if (k === 'ArrowDown') this.panBy(0, 0.15);
      else if (k === '0' || k === 'Home') { this.#clearSelection(); this.reset(); }
      else if (k === 'Escape') { this.#tooltip.hidden = true; return; }
      else return;
      e.preventDefault();
    });
  }

  #hover(e: PointerEvent): void {
    const r = this.canvas.getBoundingClientRect();
    const px = e.clientX - r.left;
    const py = e.clientY - r.top;
    const v = this.#view;
    const plotH = this.#height - AXIS;
    if (px < GUTTER || py > plotH) { this.#tooltip.hidden = true; return; }
    const laneIdx = Math.floor(v.yStart + (py / plotH) * (v.yEnd - v.yStart));
    const lane = this.#model.lanes[laneIdx];
    if (!lane) { this.#tooltip.hidden = true; return; }
    const t = v.xStart + ((px - GUTTER) / (this.#width - GUTTER)) * (v.xEnd - v.xStart);
    this.#showTooltip(lane, t, px, py);
  }

  #showTooltip(lane: Lane, t: number, px: number, py: number): void {
    const r = lane.request;
    const lines: [string, string][] = [
      ['Request', `#${r.index}${r.warmup ? ' (warmup)' : ''}`],
      ['Prompt tokens', r.promptTokens === undefined ? '–' : formatInt(r.promptTokens)],
      ['Output tokens', formatInt(r.outputTokens)],
      ['TTFT', formatMs(r.ttftMs)],
      ['TPOT', formatMs(r.tpotMs)],
      ['E2E', formatMs(r.e2eMs)],
      ['Client wait', formatMs(lane.sent - lane.scheduled)],
      ['Response id', r.responseId ?? '–'],
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
  return ': cause unknown';
}

function fillSpan(ctx: CanvasRenderingContext2D, x0: number, x1: number, y: number, h: number, W: number): void {
  const a = Math.max(GUTTER - 2, x0);
  const b = Math.min(W + 2, Math.max(x1, x0 + 1));
  if (b > a) ctx.fillRect(a, y, b - a, h);
}
