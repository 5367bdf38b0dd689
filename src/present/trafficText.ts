// Conversations and tool calls in words where the run table has no line for them: the report's
// header, tooltips and charts' text alternatives (the run table's own blocks are turnText.ts,
// toolText.ts and scheduleText.ts, which the report uses too). Pure, browser-safe.
import type { ToolCallTiming, TurnSummary } from '../engine/core/types';
import { formatInt, formatMs, formatNumber } from './units';

/** "get_weather: first delta 48 ms, 12 argument tokens in 180 ms (66.7 tokens/s)". */
export function toolCallText(c: ToolCallTiming): string {
  const span = c.lastDeltaMs - c.firstDeltaMs;
  const rate = c.argDeltas >= 2 && span > 0 ? ` in ${formatMs(span)} (${formatNumber(c.argTokens / (span / 1000))} tokens/s)` : '';
  return `${c.name ?? 'a function'}: first delta ${formatMs(c.firstDeltaMs)}, ${formatInt(c.argTokens)} argument token${c.argTokens === 1 ? '' : 's'}${rate}`;
}

/** A turn's figures in words (a chart's text alternative, a table row): "turn 3: TTFT p50 52 ms, p90 60 ms over 6 requests, 176 history tokens, 88 cached". */
export function turnSentence(t: TurnSummary): string {
  const cached = t.cachedTokens !== undefined ? `, ${formatInt(Math.round(t.cachedTokens))} cached` : '';
  return `turn ${formatInt(t.turn + 1)}: TTFT p50 ${formatMs(t.ttftMs.p50)}, p90 ${formatMs(t.ttftMs.p90 ?? t.ttftMs.max)} over ${formatInt(t.requests)} request${t.requests === 1 ? '' : 's'}, ${formatInt(Math.round(t.historyTokens))} history tokens${cached}`;
}
