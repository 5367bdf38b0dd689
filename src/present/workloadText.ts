// A workload's load and prompt source in words, one place for every surface (the CLI's table head,
// the job line, run names, the report's header). Pure, browser-safe.
import type { PromptLength, RunFile, WorkloadMode, WorkloadSpec } from '../engine/core/types';
import { formatInt, formatQuantity } from './units';
import { sentCounts } from '../engine/core/promptTokens';
import { countedByTool } from './toolLabels';

/** The rate part of an open loop: "4 req/s", or its ramp "ramp linear 1→8 req/s". */
function rateWords(m: Extract<WorkloadMode, { kind: 'open' }>): string {
  return m.ramp ? `ramp ${m.ramp.kind} ${formatQuantity(m.ramp.start)}→${formatQuantity(m.rate)} req/s` : `${formatQuantity(m.rate)} req/s`;
}

/** "closed loop, concurrency 8", "open loop, 4 req/s, burstiness 1", "trace replay at ×2". */
export function modeLong(m: WorkloadMode): string {
  switch (m.kind) {
    case 'closed': return `closed loop, concurrency ${m.concurrency}`;
    case 'open': return `open loop, ${rateWords(m)}, burstiness ${formatQuantity(m.burstiness)}${m.maxConcurrency !== undefined ? `, at most ${m.maxConcurrency} in flight` : ''}`;
    default: return `trace replay at ×${formatQuantity(m.speed)}${m.maxConcurrency !== undefined ? `, at most ${m.maxConcurrency} in flight` : ''}`;
  }
}

/** "c=8", "rate 4/s", "ramp 1→8/s", "trace ×2": a run's name and list entry. */
export function modeShort(m: WorkloadMode): string {
  switch (m.kind) {
    case 'closed': return `c=${m.concurrency}`;
    case 'open': return m.ramp ? `ramp ${formatQuantity(m.ramp.start)}→${formatQuantity(m.rate)}/s` : `rate ${formatQuantity(m.rate)}/s`;
    default: return `trace ×${formatQuantity(m.speed)}`;
  }
}

/** "at concurrency 8", "at 4 req/s", "at a ramp …", "at the trace's times ×2": the job line. */
export function modeAt(m: WorkloadMode): string {
  switch (m.kind) {
    case 'closed': return `at concurrency ${m.concurrency}`;
    case 'open': return `at ${rateWords(m)}`;
    default: return `at the trace's timestamps ×${formatQuantity(m.speed)}`;
  }
}

/** Whether more than one request may be in flight. */
export function concurrentMode(m: WorkloadMode): boolean {
  return m.kind !== 'closed' || m.concurrency > 1;
}

/** What the prompts are: "256-token prompts", "prompts from F", "6-turn chats (64-token turns)", "the trace F". */
export function promptSourceWords(p: WorkloadSpec['prompt']): string {
  switch (p.kind) {
    case 'synthetic': return p.groups ? `${formatInt(p.tokens)}-token prompts in ${p.groups.count} groups sharing ${formatInt(p.groups.prefixTokens)} tokens` : `${formatInt(p.tokens)}-token prompts`;
    case 'chat': return `${p.turns}-turn chats (${formatInt(p.userTokens)}-token turns, replies up to ${formatInt(p.replyTokens)})`;
    case 'trace': return `the trace ${p.path}`;
    case 'dataset': return p.multiTurn ? `conversations from ${p.path}` : `prompts from ${p.path}`;
    default: return `prompts from ${p.path}`;
  }
}

/** How synthetic prompts were sized to the length asked (RunFile.promptLength), in words: "sized with the server's tokenizer, then moved by the warmup's usage". */
function sizedBy(pl: PromptLength): string {
  const added = pl.addedWarmup ? `, ${pl.addedWarmup} warmup ${pl.addedWarmup === 1 ? 'request' : 'requests'} added` : '';
  switch (pl.method) {
    case 'tokenize': return `sized with the server's tokenizer${pl.usageCorrected ? `, then moved by the warmup's usage${added}` : ''}`;
    case 'usage': return `sized from the warmup's usage${added}${pl.tokenizer ? "; the server's tokenizer was off by more than 2×" : ''}`;
    default: return pl.addedWarmup ? "not sized: one word a token (the server's count did not change with the words)" : 'not sized: one word a token';
  }
}

/** The measured requests' prompt tokens as the server counted them (usage; the client's estimates left out): median, range, how many. */
export function sentTokens(run: Pick<RunFile, 'requests' | 'promptLength'>): PromptLength['sent'] | undefined {
  return run.promptLength?.sent ?? sentCounts(run.requests);
}

/** An imported run's prompts: "298-token prompts as vLLM counted them (250–341)"; a tool's mean when its file has no count per request. */
function importedPromptWords(mean: number, sent: ReturnType<typeof sentTokens>, counted: string, short: boolean): string {
  if (!sent) return `${formatInt(mean)}-token prompts on average, ${counted}`;
  const range = !short && sent.min !== sent.max ? ` (${formatInt(sent.min)}–${formatInt(sent.max)})` : '';
  return `${formatInt(sent.p50)}-token prompts ${counted}${range}`;
}

/**
 * What the prompts were, with synthetic ones' length as the server counted it (the header of every
 * surface): "255-token prompts as the server counted them (252–258; 256 asked, sized with the
 * server's tokenizer)", "256-token prompts asked (the server reported no count)"; other sources as
 * promptSourceWords says them. `short`: a run list's few words, "255-token prompts (256 asked)".
 */
export function promptWords(run: Pick<RunFile, 'workload' | 'requests' | 'promptLength'> & Partial<Pick<RunFile, 'importedFrom'>>, short = false): string {
  const p = run.workload.prompt;
  if (p.kind !== 'synthetic') return promptSourceWords(p);
  const sent = sentTokens(run);
  // another tool's run: its tokenizer counted them, and its file's mean stands for the length (nothing was asked of ours)
  if (run.importedFrom) return importedPromptWords(p.tokens, sent, countedByTool(run.importedFrom.tool), short);
  // a run list's line: "255-token prompts (256 asked)"
  if (short) return sent ? `${formatInt(sent.p50)}-token prompts (${formatInt(p.tokens)} asked)` : `${formatInt(p.tokens)}-token prompts asked`;
  const groups = p.groups ? ` in ${p.groups.count} groups sharing ${formatInt(p.groups.prefixTokens)} tokens` : '';
  // before any reply (a live run's first frames) nothing can be said of the server's count
  if (!sent) return `${formatInt(p.tokens)}-token prompts asked${groups}${run.requests.some((r) => !r.warmup && r.error === undefined) ? ' (the server reported no count)' : ''}`;
  const range = sent.min !== sent.max ? `${formatInt(sent.min)}–${formatInt(sent.max)}; ` : '';
  const pl = run.promptLength;
  const shortest = pl?.shortest ? `; the shortest the server's chat template allows, ${formatInt(pl.words)} ${pl.words === 1 ? 'word' : 'words'}` : '';
  const how = pl ? `, ${sizedBy(pl)}` : '';
  return `${formatInt(sent.p50)}-token prompts${groups} as the server counted them (${range}${formatInt(p.tokens)} asked${shortest}${how})`;
}
