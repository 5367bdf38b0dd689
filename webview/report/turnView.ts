// "TTFT by turn" (a multi-turn run): TTFT p50 per turn index with a whisker to p90, the cached prompt
// tokens the server reported on a second axis, the same figures in a table (the chart's text
// alternative, and what a screen reader or a copy reads), and the history verdict when the engine gave
// one. The turns come from the engine's Summary.byTurn, else from the requests (turns.ts).
import type { Chart } from 'chart.js';
import type { RunFile, TurnSummary } from '../../src/engine/core/types';
import { turnSentence } from '../../src/present/turnText';
import { formatInt, formatMs } from '../../src/present/units';
import { turnChart, type TurnPoint } from './charts';
import { h, scrollRegion, srOnly } from './dom';
import type { Theme } from './theme';
import { turnsOf } from './turns';
import { post } from './vscodeApi';

export interface TurnsSection {
  readonly body: HTMLElement;
  /** The section's subtitle. */
  readonly sub: string;
  /** Draws the chart (once the section is in the document). */
  draw(theme: Theme): Chart;
}

/** At most this many turns are said one by one in the chart's summary; the table has them all. */
const SAID_TURNS = 8;

function points(turns: readonly TurnSummary[]): TurnPoint[] {
  return turns.map((t) => ({
    turn: t.turn + 1, p50: t.ttftMs.p50 ?? t.ttftMs.mean, p90: t.ttftMs.p90 ?? t.ttftMs.max, requests: t.requests,
    ...(t.cachedTokens !== undefined ? { cached: t.cachedTokens } : {}),
  }));
}

function summaryText(turns: readonly TurnSummary[]): string {
  const said = turns.length <= SAID_TURNS ? turns : [...turns.slice(0, SAID_TURNS - 2), ...turns.slice(-2)];
  const skipped = turns.length - said.length;
  const parts = said.map(turnSentence);
  if (skipped > 0) parts.splice(SAID_TURNS - 2, 0, `${formatInt(skipped)} more turns (in the table)`);
  return `TTFT by turn over ${formatInt(turns.length)} turns: ${parts.join('; ')}.`;
}

function turnTable(turns: readonly TurnSummary[], id: string): HTMLElement {
  const cached = turns.some((t) => t.cachedTokens !== undefined);
  const cols = ['Turn', 'Requests', 'TTFT p50', 'TTFT p90', 'History tokens', 'Prompt tokens', ...(cached ? ['Cached tokens'] : [])];
  const num = (v: number | undefined) => (v === undefined ? '–' : formatInt(Math.round(v)));
  const rows = turns.map((t) => h('tr', { 'data-turn': t.turn },
    h('th', { scope: 'row', text: formatInt(t.turn + 1) }),
    h('td', { class: 'num', text: formatInt(t.requests) }),
    h('td', { class: 'num', 'data-stat': 'p50', 'data-value': t.ttftMs.p50, text: formatMs(t.ttftMs.p50) }),
    h('td', { class: 'num', 'data-stat': 'p90', 'data-value': t.ttftMs.p90, text: formatMs(t.ttftMs.p90) }),
    h('td', { class: 'num', 'data-stat': 'history', text: num(t.historyTokens) }),
    h('td', { class: 'num', 'data-stat': 'prompt', text: num(t.promptTokens) }),
    cached ? h('td', { class: 'num', 'data-stat': 'cached', 'data-value': t.cachedTokens, text: num(t.cachedTokens) }) : undefined));
  const table = h('table', { class: 'turns', id },
    h('caption', { text: 'TTFT, the history carried and the cached prompt tokens the server reported, by turn (measured requests that got a first token)' }),
    h('thead', {}, h('tr', {}, ...cols.map((c, i) => h('th', { scope: 'col', class: i > 0 ? 'num' : undefined, text: c })))),
    h('tbody', {}, ...rows));
  return scrollRegion(table, 'TTFT by turn');
}

/** The section of a run with turns; undefined for a run without any. */
export function turnsSection(run: RunFile): TurnsSection | undefined {
  const turns = turnsOf(run);
  if (turns.length === 0) return undefined;
  const summaryId = `alt-${run.id.replace(/[^\w-]/g, '_')}-turns`;
  const tableId = 'turns-table';
  const canvas = h('canvas', { role: 'img', 'aria-label': 'TTFT by turn', 'aria-describedby': `${summaryId} ${tableId}` });
  const png = h('button', { type: 'button', class: 'tool png', title: 'Save “TTFT by turn” as PNG', 'aria-label': 'Save TTFT by turn as PNG', text: 'PNG' });
  png.addEventListener('click', () => post('exportPng', { name: `${run.id}-ttft-by-turn.png`, dataUrl: canvas.toDataURL('image/png') }));
  const source = run.summary.byTurn?.length ? 'summary' : 'requests';
  const card = h('figure', { class: 'chart-card turns-chart', 'data-chart': 'ttft-by-turn', 'data-source': source },
    h('figcaption', {}, h('span', { text: 'TTFT by turn' }), png),
    h('div', { class: 'chart-box' }, canvas),
    srOnly(summaryText(turns), summaryId));
  const history = (run.summary.verdicts ?? []).filter((v) => v.kind === 'history');
  const body = h('div', { class: 'turns-box' },
    ...history.map((v) => h('p', { class: 'flags turn-verdict', role: 'note', 'data-kind': v.kind, text: v.message })),
    card,
    turnTable(turns, tableId));
  const sub = `TTFT p50 per turn with a whisker to p90${turns.some((t) => t.cachedTokens !== undefined) ? ', and the cached prompt tokens the server reported (right axis)' : ''}. Each turn carries the whole history: TTFT that climbs with the turn while no tokens come from the cache means the history is prefilled again every turn.`;
  return { body, sub, draw: (theme) => turnChart(canvas, theme, points(turns)) };
}
