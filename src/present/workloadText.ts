// A workload's load and prompt source in words, one place for every surface (the CLI's table head,
// the job line, run names, the report's header). Pure, browser-safe.
import type { PromptLength, RunFile, WorkloadMode, WorkloadSpec } from '../engine/core/types';
import { formatInt, formatQuantity } from './units';

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

/** How synthetic prompts were sized to the length asked (RunFile.promptLength's method), in words. */
const SIZED_BY: Readonly<Record<PromptLength['method'], string>> = {
  tokenize: "sized with the server's tokenizer",
  usage: "sized from the warmup's reply",
  estimate: 'not sized: one word a token',
};

/** The measured requests' prompt tokens as the server counted them (usage; the client's estimates left out): median, range, how many. */
export function sentTokens(run: Pick<RunFile, 'requests' | 'promptLength'>): { p50: number; min: number; max: number; requests: number } | undefined {
  if (run.promptLength?.sent) return run.promptLength.sent;
  const xs = run.requests.filter((r) => !r.warmup && r.error === undefined && r.promptTokens !== undefined && !r.promptTokensEstimated).map((r) => r.promptTokens!).sort((a, b) => a - b);
  if (xs.length === 0) return undefined;
  const m = Math.floor(xs.length / 2);
  return { p50: xs.length % 2 ? xs[m]! : (xs[m - 1]! + xs[m]!) / 2, min: xs[0]!, max: xs[xs.length - 1]!, requests: xs.length };
}

/**
 * What the prompts were, with synthetic ones' length as the server counted it (the header of every
 * surface): "255-token prompts as the server counted them (252–258; 256 asked, sized with the
 * server's tokenizer)", "256-token prompts asked (the server reported no count)"; other sources as
 * promptSourceWords says them. `short`: a run list's few words, "255-token prompts (256 asked)".
 */
export function promptWords(run: Pick<RunFile, 'workload' | 'requests' | 'promptLength'>, short = false): string {
  const p = run.workload.prompt;
  if (p.kind !== 'synthetic') return promptSourceWords(p);
  const sent = sentTokens(run);
  // a run list's line: "255-token prompts (256 asked)"
  if (short) return sent ? `${formatInt(sent.p50)}-token prompts (${formatInt(p.tokens)} asked)` : `${formatInt(p.tokens)}-token prompts asked`;
  const groups = p.groups ? ` in ${p.groups.count} groups sharing ${formatInt(p.groups.prefixTokens)} tokens` : '';
  if (!sent) return `${formatInt(p.tokens)}-token prompts asked${groups} (the server reported no count)`;
  const range = sent.min !== sent.max ? `${formatInt(sent.min)}–${formatInt(sent.max)}; ` : '';
  const how = run.promptLength ? `, ${SIZED_BY[run.promptLength.method]}` : '';
  return `${formatInt(sent.p50)}-token prompts${groups} as the server counted them (${range}${formatInt(p.tokens)} asked${how})`;
}
