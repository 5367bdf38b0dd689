// The compare view's verdicts: per figure, the verdict in words first (src/present/compareText.ts
// rowSentence, as the CLI says it), then its 95% interval drawn as a whisker around the difference on
// one % axis shared by every row, 0 marked. The colour follows the verdict (slower, faster, no
// difference); the sentence is each drawing's text alternative. Before the figures, what makes the
// two runs hard to compare (src/engine/analysis/comparable.ts), in one list with the report's own caveats.
import type { Comparison } from '../../src/engine/analysis/compare';
import type { RunFile } from '../../src/engine/core/types';
import { methodLine } from '../../src/present/compareText';
import { formatInt } from '../../src/present/units';
import { h } from './dom';
import { percentAxis, verdictRows, type VerdictRow } from './figures';

const SVG = 'http://www.w3.org/2000/svg';

function svg<K extends keyof SVGElementTagNameMap>(tag: K, attrs: Record<string, string | number | undefined>): SVGElementTagNameMap[K] {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) if (v !== undefined) el.setAttribute(k, String(v));
  return el;
}

/** "+4%", "−2.5%", "0": a tick's label. */
function tickLabel(v: number): string {
  if (v === 0) return '0';
  const t = Number(Math.abs(v).toPrecision(6)).toString();
  return `${v < 0 ? '−' : '+'}${t}%`;
}

type Axis = NonNullable<ReturnType<typeof percentAxis>>;

/** x of a value on the axis, as a percentage of the drawing's width (the drawings stretch with the column). */
function xOf(axis: Axis, v: number): string {
  const f = (Math.min(axis.max, Math.max(axis.min, v)) - axis.min) / (axis.max - axis.min);
  return `${(f * 100).toFixed(3)}%`;
}

/** The axis above the whiskers: ticks and their labels, 0 emphasised. Decorative: each row's sentence says its numbers. */
function axisDrawing(axis: Axis): SVGSVGElement {
  const s = svg('svg', { class: 'whisker-axis', width: '100%', height: 22, 'aria-hidden': 'true', focusable: 'false' });
  s.append(svg('line', { class: 'axis-line', x1: '0%', x2: '100%', y1: 20, y2: 20 }));
  // labels on 0 and the outermost ticks only: they stay apart in a narrow panel
  const labelled = new Set([0, axis.ticks[0], axis.ticks[axis.ticks.length - 1]]);
  for (const t of axis.ticks) {
    const x = xOf(axis, t);
    s.append(svg('line', { class: t === 0 ? 'tick zero' : 'tick', x1: x, x2: x, y1: 15, y2: 20 }));
    if (!labelled.has(t)) continue;
    const label = svg('text', { class: t === 0 ? 'tick-label zero' : 'tick-label', x, y: 11, 'text-anchor': 'middle' });
    label.textContent = tickLabel(t);
    s.append(label);
  }
  return s;
}

/** One row's whisker: the interval as a bar with end caps, the difference as a dot, 0 as a dashed line. */
function whiskerDrawing(axis: Axis, r: VerdictRow, labelId: string): SVGSVGElement {
  const w = r.whisker!;
  const s = svg('svg', { class: `whisker verdict-${r.row.verdict}`, width: '100%', height: 18, role: 'img', 'aria-labelledby': labelId,
    'data-lo': w.lo, 'data-hi': w.hi, 'data-point': w.point });
  const zero = xOf(axis, 0);
  s.append(svg('line', { class: 'zero', x1: zero, x2: zero, y1: 0, y2: 18 }));
  const [x1, x2] = [xOf(axis, w.lo), xOf(axis, w.hi)];
  s.append(svg('line', { class: 'ci', x1, x2, y1: 9, y2: 9 }));
  for (const x of [x1, x2]) s.append(svg('line', { class: 'cap', x1: x, x2: x, y1: 4, y2: 14 }));
  s.append(svg('circle', { class: 'point', cx: xOf(axis, w.point), cy: 9, r: 3.5 }));
  return s;
}

/** How the intervals were made (as the CLI says it), and the requests compared on each side. */
function methodText(c: Comparison): string {
  return `${methodLine(c.method)} ${formatInt(c.base.requests)} successful requests compared in A, ${formatInt(c.next.requests)} in B.`;
}

/** The verdicts as a table: the sentence, then its whisker on the shared axis. */
export function verdictTable(c: Comparison): HTMLElement {
  const rows = verdictRows(c);
  const axis = percentAxis(rows);
  const head = h('tr', {}, h('th', { scope: 'col', text: 'Verdict (B against A)' }),
    h('th', { scope: 'col', class: 'whisker-col' }, h('span', { class: 'sr-only', text: '95% interval of the difference, %' }), axis ? axisDrawing(axis) : undefined));
  const body = rows.map((r) => {
    const id = `verdict-${r.row.key.replace('.', '-')}`;
    return h('tr', { 'data-key': r.row.key, 'data-verdict': r.row.verdict },
      h('td', { id, class: `sentence verdict-${r.row.verdict}`, text: r.sentence }),
      h('td', { class: 'whisker-col' }, axis && r.whisker ? whiskerDrawing(axis, r, id) : h('span', { class: 'no-interval', text: 'no interval' })));
  });
  return h('div', { class: 'verdict-list' },
    h('table', { class: 'compare-verdicts' },
      h('caption', { text: 'Each figure of B against A, in words, and its 95% confidence interval in % of A: red slower, blue faster, grey no difference these samples can detect; the dashed line is no change.' }),
      h('thead', {}, head), h('tbody', {}, ...body)),
    h('p', { class: 'sub method', text: methodText(c) }));
}

/** What to say before the verdicts, one line each: refusals first, then the caveats and notes. */
export function compareNotesList(notes: readonly { readonly kind: string; readonly severity: 'refuse' | 'warn'; readonly text: string }[]): HTMLElement | undefined {
  if (notes.length === 0) return undefined;
  return h('ul', { class: 'compare-caveats', 'aria-label': 'Read the differences with care' },
    ...notes.map((n) => h('li', { 'data-caveat': n.kind, 'data-severity': n.severity, text: n.text })));
}

/** The status line while the intervals are worked out (a worker thread: the page stays responsive). */
export function pendingText(a: RunFile, b: RunFile): string {
  const n = (r: RunFile) => formatInt(r.requests.filter((q) => !q.warmup && !q.error).length);
  return `Working out the 95% intervals by resampling each run (${n(a)} requests in A, ${n(b)} in B)…`;
}

/** What the status line says once the verdicts are drawn: "B against A, 16 figures: 2 slower, 1 faster, 13 no difference we can detect." */
export function verdictCount(c: Comparison): string {
  const judged = c.rows.filter((r) => r.verdict !== 'absent');
  const n = (v: string) => judged.filter((r) => r.verdict === v).length;
  const parts = [
    n('slower') ? `${n('slower')} slower` : '',
    n('faster') ? `${n('faster')} faster` : '',
    n('no-difference') ? `${n('no-difference')} no difference we can detect` : '',
    n('too-few') ? `${n('too-few')} too few samples to judge` : '',
  ].filter(Boolean);
  return `B against A, ${judged.length} figure${judged.length === 1 ? '' : 's'}${parts.length ? `: ${parts.join(', ')}` : ''}.`;
}
