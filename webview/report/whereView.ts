// "Where the time went": a stacked bar per request in the timeline's order (queue → prefill → wait →
// transport → decode, from the server's own timings where the run has them, else the client's
// inference, each bar saying which), or per TTFT percentile band when there are too many requests to
// tell bars apart; the client's TTFT beside the server's; the server's /metrics; the verdicts. The
// phases and every sentence come from the shared layer (src/engine/analysis/phases.ts, src/present/), so the
// panel and the CLI say the same things. Bars are plain elements sized through the CSSOM (the CSP
// allows no inline style attribute), coloured by class from the theme's chart tokens.
import type { RequestRecord, RunFile, ServerMetrics } from '../../src/engine/core/types';
import { PHASE_WORDS, phaseBands, phasesOf, type PhaseKind, type RequestPhases } from '../../src/engine/analysis/phases';
import { serverMetricsLines } from '../../src/present/serverMetricsText';
import { formatInt, formatMs, formatPercent } from '../../src/present/units';
import { timingTable, verdictLines } from '../../src/present/whereText';
import { h, scrollRegion } from './dom';
import type { LaneModel } from './lanes';

/** Above this many requests the bars are TTFT percentile bands (p0–50, p50–90, p90–99, p99–100), each the mean of its band. */
export const BAND_THRESHOLD = 120;

const KIND_ORDER: readonly PhaseKind[] = ['headers', 'queue', 'queuePrefill', 'prefill', 'wait', 'transport', 'decode'];

export interface WhereBar {
  /** "#17", or the band's "TTFT p50–p90". */
  readonly label: string;
  /** The request's `index` (one bar per request); undefined for a band. */
  readonly index?: number;
  readonly count: number;
  readonly phases: RequestPhases;
}

/** The requests the section is about: measured and successful, as the CLI's block. */
function whereRequests(records: readonly RequestRecord[]): RequestRecord[] {
  return records.filter((r) => !r.warmup && r.error === undefined);
}

/** The bars: one per request in the timeline's (start) order, or per TTFT band above BAND_THRESHOLD. */
export function whereBars(model: LaneModel): { bars: WhereBar[]; banded: boolean } {
  const ordered = whereRequests(model.lanes.map((l) => l.request));
  // phasesOf is undefined exactly for a request without a first token
  if (ordered.filter((r) => r.ttftMs !== undefined).length > BAND_THRESHOLD) {
    return { bars: phaseBands(ordered).map((b) => ({ label: `TTFT ${b.label}`, count: b.count, phases: b.phases })), banded: true };
  }
  const per: WhereBar[] = [];
  for (const r of ordered) {
    const phases = phasesOf(r);
    if (phases) per.push({ label: `#${r.index}`, index: r.index, count: 1, phases });
  }
  return { bars: per, banded: false };
}

/** A bar in words: its text alternative (and hover title). */
export function barText(bar: WhereBar, untilFirstToken = false): string {
  const segs = bar.phases.segments.filter((s) => s.ms > 0 && (!untilFirstToken || s.kind !== 'decode'));
  const who = bar.index !== undefined ? `Request ${bar.label}` : `${bar.label} (${formatInt(bar.count)} requests, mean)`;
  const evidence = bar.phases.evidence === 'server' ? "server's timings" : "client's inference";
  const total = untilFirstToken ? bar.phases.ttftMs : bar.phases.e2eMs;
  return `${who} (${evidence}): ${segs.map((s) => `${s.label} ${formatMs(s.ms)}`).join(', ')}; ${untilFirstToken ? 'TTFT' : 'total'} ${formatMs(total)}`;
}

/** Where the bars come from, and what each part they show means (PHASE_WORDS: the legend's words). */
function evidenceLine(bars: readonly WhereBar[], run: RunFile): string {
  const server = bars.filter((b) => b.phases.evidence === 'server').length;
  const sources = run.summary.server?.sources.length ? ` (${run.summary.server.sources.join(', ')})` : '';
  const from = server === bars.length ? `From the server's own timings${sources}`
    : server === 0 ? "From the client's clock only (the server reported no timings)"
      : `${formatInt(server)} of ${formatInt(bars.length)} bars from the server's own timings${sources}, the rest (paler) from the client's clock only`;
  const kinds = KIND_ORDER.filter((k) => k !== 'decode' && bars.some((b) => b.phases.segments.some((x) => x.kind === k && x.ms > 0)));
  return `${from} — ${kinds.map((k) => `${PHASE_WORDS[k].short}: ${PHASE_WORDS[k].means}`).join('; ')}.`;
}

export interface WhereSection {
  readonly body: HTMLElement;
  /** The canvas for the server's gauges, drawn a task later with the other charts; undefined without samples. */
  readonly gaugeCanvas?: HTMLCanvasElement;
}

/** The section's body. `onSelectRequest` shows a request on the timeline when its bar is clicked. */
export function whereSection(run: RunFile, model: LaneModel, onSelectRequest?: (index: number) => void): WhereSection {
  const s = run.summary;
  const body = h('div', { class: 'where' });
  const { bars, banded } = whereBars(model);
  if (bars.length === 0) {
    body.append(h('p', { class: 'empty', text: 'No measured request got a first token: there is no time to split.' }));
  } else {
    body.append(h('p', { class: 'sub where-evidence', text: evidenceLine(bars, run) }));
    body.append(barsView(bars, banded, onSelectRequest));
  }

  const table = timingTable(s);
  if (table) {
    const sv = s.server!;
    const head = h('tr', {}, ...table.header.map((c, i) => h('th', { scope: 'col', class: i > 0 ? 'num' : undefined, text: c })));
    const rows = table.rows.map((r) => h('tr', { 'data-row': r[0] },
      ...r.map((c, i) => (i === 0 ? h('th', { scope: 'row', text: c }) : h('td', { class: 'num', 'data-col': table.header[i], text: c })))));
    body.append(h('h3', { text: 'The client against the server' }),
      scrollRegion(h('table', { class: 'where-timing' },
        h('caption', { text: `TTFT as the client measured it beside the server's own report${sv.sources.length ? ` (${sv.sources.join(', ')})` : ''}, over ${formatInt(sv.requests)} requests with server timings${sv.cachedTokens > 0 ? `; ${formatInt(sv.cachedTokens)} prompt tokens from the prefix cache over ${formatInt(sv.cachedRequests)} requests` : ''}` }),
        h('thead', {}, head), h('tbody', {}, ...rows)), 'The client against the server'));
  }

  let gaugeCanvas: HTMLCanvasElement | undefined;
  if (run.serverMetrics) {
    const m = run.serverMetrics;
    const lines = serverMetricsLines(m);
    body.append(h('h3', { text: "The server's /metrics" }));
    if (lines.length) body.append(h('ul', { class: 'server-metrics-lines' }, ...lines.map((l) => h('li', { text: l }))));
    if (m.samples.atMs.length > 1) {
      gaugeCanvas = h('canvas', { role: 'img', 'aria-label': gaugeSummary(m) });
      body.append(h('figure', { class: 'chart-card gauges', 'data-chart': 'server-gauges' },
        h('figcaption', {}, h('span', { text: 'Requests running and waiting on the server, KV-cache use (about once a second)' })),
        h('div', { class: 'chart-box small' }, gaugeCanvas)));
    }
  }

  const verdicts = verdictLines(s);
  if (verdicts.length) {
    body.append(h('h3', { text: 'Verdicts' }),
      h('ol', { class: 'verdicts' }, ...verdicts.map((v, i) => h('li', { 'data-kind': s.verdicts?.[i]?.kind, text: v }))));
  }
  return { body, gaugeCanvas };
}

/** The gauges in words, for the chart's text alternative. */
function gaugeSummary(m: ServerMetrics): string {
  const max = (xs: readonly (number | null)[]) => xs.reduce<number | undefined>((a, x) => (x === null ? a : Math.max(a ?? -Infinity, x)), undefined);
  const parts = [`running up to ${formatInt(max(m.samples.running))}`, `waiting up to ${formatInt(max(m.samples.waiting))}`];
  const kv = max(m.samples.kvCacheUsage);
  if (kv !== undefined) parts.push(`KV cache up to ${formatPercent(kv)}`);
  return `The server's gauges over ${formatInt(m.samples.atMs.length)} samples: ${parts.join(', ')}.`;
}

function barsView(bars: readonly WhereBar[], banded: boolean, onSelectRequest?: (index: number) => void): HTMLElement {
  const kinds = KIND_ORDER.filter((k) => bars.some((b) => b.phases.segments.some((s) => s.kind === k && s.ms > 0)));
  const legend = h('ul', { class: 'legend', 'aria-label': 'Segments' },
    ...kinds.map((k) => h('li', { 'data-kind': k, title: PHASE_WORDS[k].means }, h('span', { class: `swatch seg-${k}` }), PHASE_WORDS[k].label)),
    bars.some((b) => b.phases.evidence === 'client') && bars.some((b) => b.phases.evidence === 'server')
      ? h('li', {}, h('span', { class: 'swatch seg-decode client' }), "paler: the client's inference") : undefined);
  const plot = h('div', { class: `where-bars${banded ? ' banded' : ''}`, role: 'group',
    'aria-label': banded ? 'Where the time went, by TTFT percentile band (mean of each band)' : 'Where the time went, one bar per request in start order' });
  const scale = h('p', { class: 'where-scale sub' });
  const labels = h('div', { class: 'where-labels', 'aria-hidden': 'true' });
  const els = bars.map((bar) => {
    const el = h('div', { class: `where-bar ${bar.phases.evidence}`, role: 'img', 'data-evidence': bar.phases.evidence,
      'data-index': bar.index, 'data-band': bar.index === undefined ? bar.label : undefined });
    if (bar.index !== undefined && onSelectRequest) el.addEventListener('click', () => onSelectRequest(bar.index!));
    plot.append(el);
    if (banded) labels.append(h('span', { text: `${bar.label.replace(/^TTFT /, '')} · ${formatInt(bar.count)}` }));
    return el;
  });
  if (!banded && bars.length) {
    labels.classList.add('ends');
    labels.append(h('span', { text: bars[0]!.label }), h('span', { text: `${bars[bars.length - 1]!.label} (start order)` }));
  }
  const draw = (untilFirstToken: boolean) => {
    const total = (b: WhereBar) => (untilFirstToken ? b.phases.ttftMs : b.phases.e2eMs);
    const max = Math.max(1e-9, ...bars.map(total));
    scale.textContent = `Tallest bar ${formatMs(max)}${untilFirstToken ? ' (up to the first token)' : ''}; click a request's bar (or Tab to the bars, ← → and Enter) to show it on the timeline.`;
    if (banded) scale.textContent = `Tallest bar ${formatMs(max)}${untilFirstToken ? ' (up to the first token)' : ''}; ${formatInt(bars.reduce((a, b) => a + b.count, 0))} requests in ${bars.length} bands of TTFT.`;
    bars.forEach((bar, i) => {
      const el = els[i]!;
      const t = total(bar);
      el.style.height = `${(t / max) * 100}%`;
      const text = barText(bar, untilFirstToken);
      el.setAttribute('aria-label', text);
      el.title = text;
      el.replaceChildren(...bar.phases.segments
        .filter((seg) => seg.ms > 0 && (!untilFirstToken || seg.kind !== 'decode'))
        .map((seg) => {
          const sp = h('span', { class: `seg seg-${seg.kind}`, 'data-kind': seg.kind, 'data-ms': seg.ms });
          sp.style.height = `${t > 0 ? (seg.ms / t) * 100 : 0}%`;
          return sp;
        }));
    });
    plot.dataset.mode = untilFirstToken ? 'ttft' : 'e2e';
  };
  const mode = (label: string, untilFirstToken: boolean) => {
    const b = h('button', { type: 'button', class: 'tool', 'aria-pressed': String(!untilFirstToken), text: label });
    b.addEventListener('click', () => {
      toolbar.querySelectorAll('button').forEach((x) => x.setAttribute('aria-pressed', String(x === b)));
      draw(untilFirstToken);
    });
    return b;
  };
  const toolbar = h('div', { class: 'toolbar', role: 'group', 'aria-label': 'Bar length' });
  toolbar.append(mode('Whole request', false), mode('Up to the first token', true));
  draw(false);
  const status = h('p', { class: 'where-current sub', role: 'status' });
  if (!banded && onSelectRequest && bars.length) keyboardBars(plot, els, bars, status, () => plot.dataset.mode === 'ttft', onSelectRequest);
  return h('div', { class: 'where-plot' }, toolbar, legend, scale, plot, labels, status);
}

/**
 * The bars from the keyboard (the mouse clicks one): the plot takes focus, ← → Home End move to a
 * bar, which is outlined and said in the status line; Enter or Space shows its request on the timeline.
 */
function keyboardBars(plot: HTMLElement, els: readonly HTMLElement[], bars: readonly WhereBar[], status: HTMLElement,
  untilFirstToken: () => boolean, onSelectRequest: (index: number) => void): void {
  plot.tabIndex = 0;
  let at = -1;
  const move = (i: number) => {
    els[at]?.classList.remove('current');
    at = Math.max(0, Math.min(els.length - 1, i));
    els[at]!.classList.add('current');
    plot.dataset.current = String(bars[at]!.index);
    status.textContent = `${barText(bars[at]!, untilFirstToken())}. Enter shows it on the timeline.`;
  };
  plot.addEventListener('keydown', (e) => {
    switch (e.key) {
      case 'ArrowRight': case 'ArrowDown': move(at + 1); break;
      case 'ArrowLeft': case 'ArrowUp': move(at < 0 ? 0 : at - 1); break;
      case 'Home': move(0); break;
      case 'End': move(els.length - 1); break;
      case 'Enter': case ' ': if (at >= 0) onSelectRequest(bars[at]!.index!); break;
      default: return;
    }
    e.preventDefault();
  });
}
