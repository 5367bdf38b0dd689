// A multi-turn run in the CLI's table: how the sessions were sent, TTFT and tokens by turn index
// (Summary.byTurn), and the sessions a failed turn ended. Turns are numbered from 1 here (the run
// file counts from 0). Pure.
import type { RunFile, TurnSummary, WorkloadSpec } from '../engine/core/types';
import { DASH, fixed, formatInt, formatMs, formatQuantity } from './units';

/** The load of a multi-turn run in words: what its concurrency or rate counts. */
export function sessionLoadWords(w: Pick<WorkloadSpec, 'mode' | 'sessions' | 'thinkTimeMs' | 'durationS'>): string {
  const m = w.mode;
  const load = m.kind === 'closed'
    ? `at most ${m.concurrency} session${m.concurrency === 1 ? '' : 's'} in flight`
    : m.kind === 'open' ? `sessions arriving at ${formatQuantity(m.rate)}/s${m.maxConcurrency !== undefined ? `, at most ${m.maxConcurrency} in flight` : ''}` : 'trace';
  const count = w.sessions !== undefined ? `${w.sessions} session${w.sessions === 1 ? '' : 's'}` : w.durationS !== undefined ? `sessions started for ${formatQuantity(w.durationS)} s` : 'every conversation';
  const think = w.thinkTimeMs ? `, ${formatMs(w.thinkTimeMs)} think time` : '';
  return `${count}, ${load}${think}`;
}

function grid(rows: readonly string[][]): string[] {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  return rows.map((r) => r.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join('  ').trimEnd());
}

function row(t: TurnSummary): string[] {
  return [
    String(t.turn + 1),
    String(t.requests),
    fixed(t.ttftMs.p50),
    fixed(t.ttftMs.p90 ?? t.ttftMs.max),
    formatInt(Math.round(t.historyTokens)),
    formatInt(Math.round(t.promptTokens)),
    t.cachedTokens !== undefined ? formatInt(Math.round(t.cachedTokens)) : DASH,
  ];
}

/**
 * The sessions of the run from its records: how many started, and those a failed turn ended (a
 * repetition's sessions apart). With a chat workload the turns not sent are counted; a dataset's
 * conversations are not in the run file, so there only the sessions are.
 */
export function sessionsLine(run: Pick<RunFile, 'requests' | 'workload'>): string | undefined {
  const last = new Map<string, { turn: number; failed: boolean }>();
  for (const r of run.requests) {
    if (r.warmup || r.session === undefined || r.turn === undefined) continue;
    const key = `${r.repeat ?? 0}:${r.session}`;
    const seen = last.get(key);
    if (!seen || r.turn > seen.turn) last.set(key, { turn: r.turn, failed: r.error !== undefined && r.error.kind !== 'aborted' });
  }
  if (last.size === 0) return undefined;
  const p = run.workload.prompt;
  const turns = p.kind === 'chat' ? p.turns : undefined;
  const ended = [...last.values()].filter((s) => s.failed && (turns === undefined || s.turn + 1 < turns));
  const started = `Sessions: ${formatInt(last.size)} started`;
  if (ended.length === 0) return `${started}; none ended at a failed turn.`;
  const unsent = turns !== undefined ? ended.reduce((a, s) => a + turns - s.turn - 1, 0) : undefined;
  const what = unsent !== undefined ? `their ${formatInt(unsent)} later turn${unsent === 1 ? ' was' : 's were'} not sent` : 'their later turns (if any) were not sent';
  return `${started}; ${formatInt(ended.length)} ended at a failed turn: ${what}.`;
}

/** The "By turn" block of the run table; empty for a run without turns. */
export function turnLines(run: Pick<RunFile, 'requests' | 'workload' | 'summary'>): string[] {
  const turns = run.summary.byTurn;
  if (!turns || turns.length === 0) return [];
  const rows = [['turn', 'requests', 'TTFT p50 (ms)', 'TTFT p90 (ms)', 'history tok', 'prompt tok', 'cached tok'], ...turns.map(row)];
  const out = [`By turn (${sessionLoadWords(run.workload)}; tokens are means per request, cached as the server reported them):`, ...grid(rows)];
  const sessions = sessionsLine(run);
  if (sessions) out.push(sessions);
  return out;
}

/** A turn's figures in words (a chart's text alternative, a table row): "turn 3: TTFT p50 52 ms, p90 60 ms over 6 requests, 176 history tokens, 88 cached". */
export function turnSentence(t: TurnSummary): string {
  const cached = t.cachedTokens !== undefined ? `, ${formatInt(Math.round(t.cachedTokens))} cached` : '';
  return `turn ${formatInt(t.turn + 1)}: TTFT p50 ${formatMs(t.ttftMs.p50)}, p90 ${formatMs(t.ttftMs.p90 ?? t.ttftMs.max)} over ${formatInt(t.requests)} request${t.requests === 1 ? '' : 's'}, ${formatInt(Math.round(t.historyTokens))} history tokens${cached}`;
}
