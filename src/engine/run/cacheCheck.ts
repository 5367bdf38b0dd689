// The prefix cache check (`llm-profiler cache-check`): does the server answer a prompt it has seen
// from its prefix cache? Each round sends a prompt led by a new unique prefix (cold: nothing can be
// cached), then the identical text again (warm, if the server caches), then a variant that differs
// only in its last words (what a cache that matches prefixes still serves). One request at a time,
// after a warmup request of its own (a first request can carry a model load or a cold socket).
// The verdict is the medians over the rounds: a clear TTFT drop, or the server's own cached count.
import { randomTag, withLead } from '../transport/adapters/cacheBust';
import { randomBytes } from 'node:crypto';
import { cachedTokensOf, mostlyCached } from '../analysis/prefixCache';
import { syntheticPrompt, WORDS } from '../prompts/syntheticPrompts';
import { runWorkload } from './runner';
import type { RunOptions } from './plan';
import { median } from '../core/stats';
import type { ChatMessage, EndpointSpec, PrefixCacheCheck, Prompt, RequestRecord, RunFile, WorkloadSpec } from '../core/types';
import { intWords, msWords } from '../core/words';

export const CACHE_CHECK_ROUNDS = 3;
/** The most rounds: a prompt file with more prompts gets one round per prompt up to this. */
const CACHE_CHECK_MAX_ROUNDS = 12;
/** Warm TTFT at or under this share of cold TTFT is a clear drop. */
const CLEAR_DROP = 0.7;
/** …and by at least this much, so that a sub-millisecond jitter on a loopback server is no drop. */
const MIN_DROP_MS = 1;

export interface CacheCheckSpec {
  /** Max tokens, timeouts, seed, percentiles, and the prompt source recorded in the run file. */
  readonly workload: WorkloadSpec;
  /** The prompts to check (a prompt file's, a CodeLens prompt); absent: one synthetic prompt of workload.prompt's tokens. */
  readonly prompts?: readonly Prompt[];
  /** Default: 3, or one per prompt given (at most 12). */
  readonly rounds?: number;
}

/** What each round sends, in order. */
const ROUND_STEPS = ['cold', 'again', 'variant'] as const;

export interface CacheCheckPlan {
  readonly warmup: Prompt;
  /** Round r's cold, again and variant prompts at 3r, 3r + 1, 3r + 2. */
  readonly prompts: readonly Prompt[];
  readonly rounds: number;
}

/** `text` with its last words changed (at least one, at most 8; whitespace kept), or " again" added when it has none. */
function varied(text: string, round: number): string {
  const parts = text.split(/(\s+)/);
  const wordAt = parts.map((s, i) => (s !== '' && !/^\s+$/.test(s) ? i : -1)).filter((i) => i >= 0);
  if (wordAt.length === 0) return `${text} again`;
  const change = Math.max(1, Math.min(8, Math.floor(wordAt.length / 16)));
  wordAt.slice(-change).forEach((at, j) => {
    let w = WORDS[(j * 7 + round + 1) % WORDS.length]!;
    if (w === parts[at]) w = WORDS[(j * 7 + round + 2) % WORDS.length]!;
    parts[at] = w;
  });
  return parts.join('');
}

/**
 * The same prompt with the last words of its last message changed. A message with images changes
 * its last text part (its content, the text parts joined, follows); its images and name are kept.
 */
export function variantOf(p: Prompt, round: number): Prompt {
  if (p.messages.length === 0) return p;
  const last = p.messages[p.messages.length - 1]!;
  let changed: ChatMessage = { ...last, content: varied(last.content, round) };
  const lastText = last.parts ? last.parts.map((x) => x.type).lastIndexOf('text') : -1;
  if (last.parts && lastText >= 0) {
    const parts = last.parts.map((x, i) => (i === lastText && x.type === 'text' ? { type: 'text' as const, text: varied(x.text, round) } : x));
    changed = { ...last, parts, content: parts.flatMap((x) => (x.type === 'text' ? [x.text] : [])).join('\n\n') };
  }
  return { ...p, messages: [...p.messages.slice(0, -1), changed] };
}

/** A short random tag (base 36), unique to one check: its prefixes were never sent before. */
function uniqueTag(): string {
  return randomTag(randomBytes(6));
}

/**
 * The prompts of a check: per round a new unique lead before the round's prompt (cold), the same text
 * (again), and that text with its last words changed (variant); the warmup has a lead of its own.
 * A lead differs from every other from its first word ("[k3f9q2-1] "), so no cache can match past it.
 */
export function cacheCheckPlan(base: readonly Prompt[], rounds: number, tag: string = uniqueTag()): CacheCheckPlan {
  if (base.length === 0) throw new Error('the cache check needs a prompt');
  const prompts: Prompt[] = [];
  for (let r = 0; r < rounds; r++) {
    const cold = withLead(base[r % base.length]!, `[${tag}-${r + 1}] `);
    prompts.push(cold, cold, variantOf(cold, r));
  }
  return { warmup: withLead(base[0]!, `[${tag}-w] `), prompts, rounds };
}

function pct(part: number, whole: number): string {
  const d = Math.round((part / whole - 1) * 100);
  return d < 0 ? `−${-d}%` : `+${d}%`;
}

/**
 * The verdict from a check's measured requests (in index order: round after round of cold, again,
 * variant, from `firstIndex`, the first measured index). A round counts when its cold and again
 * requests both succeeded. Undefined when none did.
 */
export function judgeCacheCheck(measured: readonly RequestRecord[], firstIndex = Math.min(...measured.map((r) => r.index))): PrefixCacheCheck | undefined {
  const byIndex = new Map(measured.map((r) => [r.index, r]));
  const last = Math.max(...measured.map((r) => r.index));
  const colds: number[] = [];
  const warms: number[] = [];
  const variants: number[] = [];
  const cached: number[] = [];
  const promptTokens: number[] = [];
  for (let i = firstIndex; i + 1 <= last; i += ROUND_STEPS.length) {
    const [cold, again, variant] = [byIndex.get(i), byIndex.get(i + 1), byIndex.get(i + 2)];
    if (!cold || !again || cold.error || again.error || cold.ttftMs === undefined || again.ttftMs === undefined) continue;
    colds.push(cold.ttftMs);
    warms.push(again.ttftMs);
    if (variant && !variant.error && variant.ttftMs !== undefined) variants.push(variant.ttftMs);
    const c = cachedTokensOf(again);
    if (c !== undefined) cached.push(c);
    if (again.promptTokens !== undefined && !again.promptTokensEstimated) promptTokens.push(again.promptTokens);
  }
  if (colds.length === 0) return undefined;
  const coldTtftMs = median(colds);
  const warmTtftMs = median(warms);
  const variantTtftMs = variants.length > 0 ? median(variants) : undefined;
  const cachedTokens = cached.length > 0 ? Math.round(median(cached)) : undefined;
  const drop = warmTtftMs <= CLEAR_DROP * coldTtftMs && coldTtftMs - warmTtftMs >= MIN_DROP_MS;
  const reported = cachedTokens !== undefined && mostlyCached(cachedTokens, promptTokens.length > 0 ? median(promptTokens) : undefined);
  const hit = drop || reported;
  const rounds = colds.length;
  const tokens = cachedTokens === undefined ? 'no cached tokens reported' : `${intWords(cachedTokens)} cached tokens reported`;
  const variant = variantTtftMs !== undefined ? `a prompt that differs only in its last words: ${msWords(variantTtftMs)}; ` : '';
  const of = ` (${variant}median of ${rounds} round${rounds === 1 ? '' : 's'})`;
  const message = hit
    ? `prefix cache: warm TTFT ${msWords(warmTtftMs)} vs ${msWords(coldTtftMs)} cold (${pct(warmTtftMs, coldTtftMs)}), ${tokens}: the server caches prompts${drop ? '' : ', by its own count (TTFT barely changed)'}${of}`
    : `no prefix cache seen: warm TTFT ${msWords(warmTtftMs)} vs ${msWords(coldTtftMs)} cold, ${tokens}${of}`;
  return {
    coldTtftMs,
    warmTtftMs,
    ...(variantTtftMs !== undefined ? { variantTtftMs } : {}),
    ...(cachedTokens !== undefined ? { cachedTokens } : {}),
    hit,
    rounds,
    message,
  };
}

/** The check's rounds for the prompts it is given. */
export function cacheCheckRounds(spec: Pick<CacheCheckSpec, 'prompts' | 'rounds'>): number {
  return spec.rounds ?? Math.min(CACHE_CHECK_MAX_ROUNDS, Math.max(CACHE_CHECK_ROUNDS, spec.prompts?.length ?? 0));
}

/** The workload the check runs: one at a time, its warmup apart, every text sent exactly as built. */
export function cacheCheckWorkload(w: WorkloadSpec, rounds: number): WorkloadSpec {
  const { durationS: _d, ...rest } = w;
  return { ...rest, mode: { kind: 'closed', concurrency: 1 }, requests: rounds * ROUND_STEPS.length, warmup: 1, prefixCache: 'warm' };
}

/**
 * Runs the check against an endpoint and returns its run file, with `prefixCache` holding the
 * verdict (absent when no round finished). Rejects only before the first request, as runWorkload.
 */
export async function runCacheCheck(endpoint: EndpointSpec, spec: CacheCheckSpec, options: Omit<RunOptions, 'prompts' | 'warmupPrompts'> = {}): Promise<RunFile> {
  const w = spec.workload;
  const base = spec.prompts && spec.prompts.length > 0
    ? spec.prompts
    : [syntheticPrompt(0, w.prompt.kind === 'synthetic' ? w.prompt.tokens : 1024, { seed: w.seed })];
  const rounds = cacheCheckRounds({ ...spec, prompts: base });
  const plan = cacheCheckPlan(base, rounds);
  const run = await runWorkload(endpoint, cacheCheckWorkload(w, rounds), { ...options, prompts: plan.prompts, warmupPrompts: [plan.warmup] });
  const check = judgeCacheCheck(run.requests.filter((r) => !r.warmup), run.workload.warmup);
  return check ? { ...run, prefixCache: check } : run;
}
