// Tools and structured output in words, for every surface: the run table's line on the tool calls
// streamed, what a workload sent of them, and what a schema (or tools) cost in an A/B run that sent
// them on one side only. Pure.
import type { CompareRow, Comparison } from '../engine/analysis/compare';
import { apiFacts } from '../engine/core/apis';
import { toolNames } from '../engine/core/toolDefinitions';
import type { ResponseFormat, RunFile, Summary, ToolCallTiming, ToolDefinition, WorkloadSpec } from '../engine/core/types';
import { formatInt, formatMs, formatNumber } from './units';
import { valueText } from './sentText';

/** Whether any request of the run was sent function definitions (the workload's, or a prompt's own). */
function sentTools(run: Pick<RunFile, 'workload' | 'prompts'>): boolean {
  return (run.workload.tools?.length ?? 0) > 0 || (run.prompts ?? []).some((p) => (p.sent.tools?.length ?? 0) > 0);
}

/**
 * The run table's line on tool calls: "Tool calls: 40 in 40 of 40 requests · first piece p50 312 ms,
 * p99 450 ms · arguments p50 85.2 tok/s"; when tools were asked for and no call came back, that, or
 * that the API takes none (the notes of a prompt file's prompts say it too; a workload's tools have no other place); else none.
 */
export function toolCallLine(run: Pick<RunFile, 'summary' | 'workload' | 'prompts' | 'endpoint'>): string | undefined {
  const t: Summary['toolCalls'] = run.summary.toolCalls;
  if (t === undefined) {
    if (!sentTools(run) || run.summary.completed === 0) return undefined;
    const api = run.endpoint.api;
    return apiFacts(api)?.tools ? 'Tool calls: none streamed, though the requests carried tools' : `Tool calls: none: the ${api} API takes no function definitions, so the tools were not sent`;
  }
  const f = t.firstDeltaMs;
  const parts = [`${t.calls} in ${t.requests} of ${run.summary.completed} requests`, `first piece p50 ${formatMs(f.p50)}${f.p99 !== undefined ? `, p99 ${formatMs(f.p99)}` : ''}`];
  const rate = t.argTokensPerS;
  if (rate !== undefined && rate.p50 !== undefined) parts.push(`arguments p50 ${formatNumber(rate.p50, 'tok/s')} (${rate.count} call${rate.count === 1 ? '' : 's'} in 2+ pieces)`);
  return `Tool calls: ${parts.join(' · ')}`;
}

/** A format that constrains the output: json_object or a schema (text is none). */
const constraining = (f: ResponseFormat | undefined): ResponseFormat | undefined => (f === undefined || f.type === 'text' ? undefined : f);

function formatPhrase(f: ResponseFormat | undefined): string | undefined {
  const c = constraining(f);
  return c === undefined ? undefined : `response format ${valueText('responseFormat', c)}`;
}

function toolsPhrase(tools: readonly ToolDefinition[] | undefined): string | undefined {
  return tools === undefined || tools.length === 0 ? undefined : `tools ${toolNames(tools)}`;
}

/** What a workload itself sends of structured output and tools: "response format JSON schema \"answer\", tools get_weather", or "no response format, no tools". */
export function structuredText(w: Pick<WorkloadSpec, 'responseFormat' | 'tools'>): string {
  const parts = [formatPhrase(w.responseFormat), toolsPhrase(w.tools)].filter((x): x is string => x !== undefined);
  return parts.length > 0 ? parts.join(', ') : 'no response format, no tools';
}

/** What two workloads differ in of structured output and tools: "the response format", "the tools", both, or undefined. */
export function structuredDifference(a: Pick<WorkloadSpec, 'responseFormat' | 'tools'>, b: Pick<WorkloadSpec, 'responseFormat' | 'tools'>): string | undefined {
  const format = JSON.stringify(constraining(a.responseFormat)) !== JSON.stringify(constraining(b.responseFormat));
  const tools = JSON.stringify(a.tools ?? []) !== JSON.stringify(b.tools ?? []);
  if (format && tools) return 'the response format and tools';
  return format ? 'the response format' : tools ? 'the tools' : undefined;
}

/** The side that alone sends a response format or tools ('A', 'B'), or undefined when both or neither do. */
export function structuredSide(a: Pick<WorkloadSpec, 'responseFormat' | 'tools'>, b: Pick<WorkloadSpec, 'responseFormat' | 'tools'>): 'A' | 'B' | undefined {
  const sends = (w: Pick<WorkloadSpec, 'responseFormat' | 'tools'>): boolean => constraining(w.responseFormat) !== undefined || (w.tools?.length ?? 0) > 0;
  if (sends(a) === sends(b)) return undefined;
  return sends(a) ? 'A' : 'B';
}

/** One figure's cost: with − without, its 95% interval in ms, and what the bootstrap said of it, from the side that sends the schema. */
function costPhrase(row: CompareRow | undefined, withIsBase: boolean, label: string): string {
  if (row === undefined || row.base === undefined || row.next === undefined || row.diff === undefined) return `${label}: not in both runs`;
  const [withV, withoutV] = withIsBase ? [row.base, row.next] : [row.next, row.base];
  const cost = withV - withoutV;
  const sign = (v: number): string => `${v > 0 ? '+' : v < 0 ? '−' : '±'}${formatMs(Math.abs(v))}`;
  const pct = withoutV > 0 ? ` (${cost >= 0 ? '+' : '−'}${formatNumber(Math.abs((cost / withoutV) * 100))}%)` : '';
  const ci = row.ci ? (withIsBase ? [-row.ci[1], -row.ci[0]] : [row.ci[0], row.ci[1]]) : undefined;
  const interval = ci ? `, 95% CI ${sign(ci[0]!)} to ${sign(ci[1]!)}` : '';
  let verdict: string;
  if (row.verdict === 'slower' || row.verdict === 'faster') verdict = (row.verdict === 'slower') !== withIsBase ? 'slower with it' : 'faster with it';
  else if (row.verdict === 'no-difference') verdict = 'no difference we can detect';
  else verdict = row.verdict === 'too-few' ? 'too few samples to judge' : 'not in both runs';
  return `${label} ${sign(cost)}${pct}${interval}: ${verdict}`;
}

/**
 * What sending `what` (the response format, the tools) costs, from an A/B comparison whose sides
 * differ in it only: TTFT and TPOT at p50, with minus without. `withSide`: the side that sends it.
 */
export function structuredCostLine(comparison: Comparison, what: string, withSide: 'A' | 'B'): string {
  const row = (key: string): CompareRow | undefined => comparison.rows.find((r) => r.key === key);
  const withIsBase = withSide === 'A';
  const without = withIsBase ? 'B' : 'A';
  const verb = what === 'the response format' ? 'costs' : 'cost';
  return `What ${what} ${verb} (${withSide} sends it, ${without} does not): ${costPhrase(row('ttft.p50'), withIsBase, 'TTFT p50')}; ${costPhrase(row('tpot.p50'), withIsBase, 'TPOT p50')}`;
}

/** "get_weather: first delta 48 ms, 12 argument tokens in 180 ms (66.7 tokens/s)". */
export function toolCallText(c: ToolCallTiming): string {
  const span = c.lastDeltaMs - c.firstDeltaMs;
  const rate = c.argDeltas >= 2 && span > 0 ? ` in ${formatMs(span)} (${formatNumber(c.argTokens / (span / 1000))} tokens/s)` : '';
  return `${c.name ?? 'a function'}: first delta ${formatMs(c.firstDeltaMs)}, ${formatInt(c.argTokens)} argument token${c.argTokens === 1 ? '' : 's'}${rate}`;
}
