// Named workloads and the rules that pick defaults from other options: one place for the CLI and
// the extension. Pure (no node or `vscode` import).
import { defaultOf, parseValueList } from './options';
import type { OptionValue } from './values';

/** The settings' workload block (`llmProfiler.workload.*`): what the presets start from. */
export interface WorkloadDefaults {
  readonly concurrency: number;
  readonly requests: number;
  readonly warmup: number;
  readonly maxTokens: number;
  readonly promptTokens: number;
  readonly timeoutMs: number;
}

/** `traffic`: conversations, a trace replay or a ramp (PresetInput.traffic says which). */
export type PresetId = 'quick' | 'load' | 'custom' | 'sweep' | 'cache-check' | 'traffic';

/** The prefix cache check's rounds (src/engine/run/cacheCheck.ts CACHE_CHECK_ROUNDS; kept here so this file stays pure). */
const CACHE_CHECK_PRESET_ROUNDS = 3;

/** A preset's figures: for 'sweep', `concurrency` is the largest point (1, 2, 4, … up to it) and `requests` per point. */
export type PresetWorkload = WorkloadDefaults;

/** What the user may change in a preset (the Custom… inputs, the sidebar form, command arguments). */
export interface PresetInput {
  readonly concurrency?: number;
  readonly requests?: number;
  readonly maxTokens?: number;
  readonly promptTokens?: number;
  /** Traffic beyond single prompts (the custom and traffic presets): built by trafficValues. */
  readonly traffic?: TrafficInput;
  /**
   * The prompts from a dataset file (the CLI's --dataset F: one prompt per line, `{"prompt"}`,
   * `{"messages"}` or ShareGPT) instead of synthetic ones, sent with the preset's load.
   */
  readonly dataset?: string;
}

/** The sweep preset's largest concurrency by default: 1, 2, 4, 8. */
const SWEEP_PRESET_LIMIT = 8;

/** What a workload preset runs, from the settings' workload defaults. */
export function presetWorkload(preset: PresetId, w: WorkloadDefaults, input: PresetInput = {}): PresetWorkload {
  switch (preset) {
    case 'quick':
      return { concurrency: 1, requests: 5, warmup: 1, maxTokens: Math.min(64, w.maxTokens), promptTokens: Math.min(128, w.promptTokens), timeoutMs: w.timeoutMs };
    case 'load':
      return { concurrency: Math.max(8, w.concurrency), requests: Math.max(64, w.requests), warmup: Math.max(1, w.warmup), maxTokens: w.maxTokens, promptTokens: w.promptTokens, timeoutMs: w.timeoutMs };
    case 'sweep':
      return {
        concurrency: input.concurrency ?? SWEEP_PRESET_LIMIT,
        requests: input.requests ?? 8,
        warmup: 1,
        maxTokens: input.maxTokens ?? Math.min(64, w.maxTokens),
        promptTokens: input.promptTokens ?? Math.min(128, w.promptTokens),
        timeoutMs: w.timeoutMs,
      };
    case 'cache-check':
      // its own load (one at a time, a cold, warm and variant request per round): only the prompt length is the user's
      return {
        concurrency: 1,
        requests: 3 * CACHE_CHECK_PRESET_ROUNDS,
        warmup: 1,
        maxTokens: defaultOf<number>('maxTokens', 'cache-check') ?? 8,
        promptTokens: input.promptTokens ?? defaultOf<number>('promptTokens', 'cache-check') ?? 1024,
        timeoutMs: w.timeoutMs,
      };
    case 'custom':
    case 'traffic':
      return {
        concurrency: input.concurrency ?? w.concurrency,
        requests: input.requests ?? w.requests,
        warmup: w.warmup,
        maxTokens: input.maxTokens ?? w.maxTokens,
        promptTokens: input.promptTokens ?? w.promptTokens,
        timeoutMs: w.timeoutMs,
      };
  }
}

// ---- Sweeps: defaults that depend on the target ----

/** What a sweep varies: the CLI's --concurrency, --rate or --prompt-tokens list (src/engine/run/sweep.ts SweepDimension). */
export type SweepAxis = 'concurrency' | 'rate' | 'promptTokens';

/** A sweep's values on one axis, given by the caller (the extension's pickers, command arguments); at most one list. */
export interface SweepInput {
  /** The concurrencies to run, in order (instead of 1, 2, 4, … up to the preset's `concurrency`). */
  readonly concurrencies?: readonly number[];
  /** Open-loop request rates (requests per second), in order: the CLI's `sweep --rate 1,2,4`. */
  readonly rates?: readonly number[];
  /** Synthetic prompt lengths (tokens), one request at a time: the CLI's `sweep --prompt-tokens 128,512,2048`. */
  readonly promptLengths?: readonly number[];
}

/** 1, 2, 4, … up to and including `limit` (src/engine/run/sweep.ts defaultConcurrencies; here so that this file stays pure and light). */
export function sweepConcurrencies(limit: number): number[] {
  const out: number[] = [];
  for (let c = 1; c < limit; c *= 2) out.push(c);
  out.push(Math.max(1, Math.floor(limit)));
  return out;
}

/** The values the extension offers for each axis (the concurrency sweep's are 1, 2, 4, … up to the preset's limit). */
export const SWEEP_RATES: readonly number[] = [1, 2, 4, 8];
export const SWEEP_PROMPT_LENGTHS: readonly number[] = [128, 512, 2048];

/**
 * A list of sweep values as typed ("1, 2, 4,8"): the numbers, or the problem, each value checked as
 * its option's (the options table: `concurrency`, `rate`, `promptTokens`). At least two values.
 */
export function parseSweepValues(axis: SweepAxis, text: string): { values: number[] } | { problem: string } {
  return parseValueList(axis, text);
}

/** The largest default concurrency: the bundled server runs on this machine's CPU, so a shorter list there. */
export function sweepConcurrencyLimit(local: boolean): number {
  return local ? 8 : 32;
}

/** A sweep's synthetic prompt length when none is given. */
export function sweepPromptTokens(local: boolean): number {
  return local ? 64 : (defaultOf<number>('promptTokens', 'run') ?? 256);
}

// ---- The chunked-prefill dial ----

/**
 * Context for the dial's server: each slot holds a long prompt with room to spare (a synthetic word
 * can be more than one token), at least llama.cpp's usual 2048.
 */
export function dialCtxSize(parallel: number, longPromptTokens: number, longMaxTokens: number): number {
  return Math.max(2048, parallel * (2 * longPromptTokens + longMaxTokens + 256));
}

/** The least context per slot a given --ctx-size must leave for the dial's long prompts. */
export function dialSlotNeed(longPromptTokens: number, longMaxTokens: number): number {
  return longPromptTokens + longMaxTokens + 16;
}

// ---- Traffic: conversations, trace replays, ramps ----

/**
 * Conversations, a trace replay or a ramp, as the CLI's Traffic flags give them (the sidebar's form,
 * the pickers' answers, command arguments): `chat` is --chat turns=T,user=N,reply=M with --sessions and
 * --think-time; `dataset` is --dataset F --multi-turn (every conversation without `sessions`); `trace`
 * is --trace F --trace-speed X; `ramp` is --ramp SHAPE:FROM-TO (requests per second).
 */
export type TrafficInput =
  | { readonly kind: 'chat'; readonly turns: number; readonly userTokens: number; readonly replyTokens: number; readonly sessions: number; readonly thinkTimeMs: number }
  | { readonly kind: 'dataset'; readonly path: string; readonly sessions?: number; readonly thinkTimeMs: number }
  | { readonly kind: 'trace'; readonly path: string; readonly speed: number }
  | { readonly kind: 'ramp'; readonly shape: 'linear' | 'exponential'; readonly from: number; readonly to: number };

/**
 * What the traffic inputs start from, the CLI's own defaults too: --chat's turns and lengths (what a
 * --chat value leaves out), --sessions with --chat, --trace-speed's; a ramp over the sweep's rates.
 */
export const TRAFFIC_DEFAULTS = {
  chat: { turns: 6, userTokens: 64, replyTokens: 64, sessions: 4, thinkTimeMs: 0 },
  traceSpeed: 1,
  ramp: { shape: 'linear', from: 1, to: 8 },
} as const satisfies { chat: Omit<Extract<TrafficInput, { kind: 'chat' }>, 'kind'>; traceSpeed: number; ramp: Omit<Extract<TrafficInput, { kind: 'ramp' }>, 'kind'> };

/** `--chat`'s value: "turns=6,user=64,reply=64". */
export function chatSpec(t: Pick<Extract<TrafficInput, { kind: 'chat' }>, 'turns' | 'userTokens' | 'replyTokens'>): string {
  return `turns=${t.turns},user=${t.userTokens},reply=${t.replyTokens}`;
}

/** `--ramp`'s value: "linear:1-8". */
export function rampSpec(t: Pick<Extract<TrafficInput, { kind: 'ramp' }>, 'shape' | 'from' | 'to'>): string {
  return `${t.shape}:${t.from}-${t.to}`;
}

/**
 * The option values of a traffic workload, exactly as the CLI's flags would give them: the traffic's
 * own, and of the preset's figures only those the CLI takes beside it (a conversation's sessions in
 * flight; a ramp's requests, lengths and cache setting; a dataset's reply lengths are its own). A conversation and a trace take no
 * --prefix-cache: they are sent warm, on purpose. A think time of 0 is the default, left out as the CLI
 * user leaves out --think-time.
 */
export function trafficValues(t: TrafficInput, w: PresetWorkload, prefixCache: 'cold' | 'warm'): Record<string, OptionValue | undefined> {
  const common = { warmup: w.warmup, timeout: w.timeoutMs / 1000 };
  switch (t.kind) {
    case 'chat':
      return { ...common, chat: chatSpec(t), sessions: t.sessions, thinkTime: t.thinkTimeMs || undefined, concurrency: w.concurrency };
    case 'dataset':
      // no --max-tokens: each turn's reply length is the file's (its max_tokens, else its reply's length)
      return { ...common, dataset: t.path, multiTurn: true, sessions: t.sessions, thinkTime: t.thinkTimeMs || undefined, concurrency: w.concurrency };
    case 'trace':
      return { ...common, trace: t.path, traceSpeed: t.speed };
    case 'ramp':
      return { ...common, ramp: rampSpec(t), requests: w.requests, maxTokens: w.maxTokens, promptTokens: w.promptTokens, prefixCache };
  }
}

/** Traffic that cannot go with a prompt of a file (conversations and traces bring their own prompts): its words, else undefined. */
export function trafficWithPromptFile(t: TrafficInput): string | undefined {
  if (t.kind === 'ramp') return undefined;
  return t.kind === 'trace' ? 'a trace replay sends the trace\'s own prompts' : 'a conversation sends its own turns';
}

/** A typed --chat value ("turns=3,reply=32": any of the three) as the chat traffic's figures, the rest from TRAFFIC_DEFAULTS (as the CLI fills them); undefined when it is not of that form (the option's check says why). */
export function chatInput(text: string): Pick<Extract<TrafficInput, { kind: 'chat' }>, 'turns' | 'userTokens' | 'replyTokens'> | undefined {
  const out: { turns: number; userTokens: number; replyTokens: number } = { turns: TRAFFIC_DEFAULTS.chat.turns, userTokens: TRAFFIC_DEFAULTS.chat.userTokens, replyTokens: TRAFFIC_DEFAULTS.chat.replyTokens };
  for (const part of text.split(',')) {
    const m = /^(turns|user|reply)=(\d+)$/.exec(part.trim());
    if (!m) return undefined;
    out[m[1] === 'turns' ? 'turns' : m[1] === 'user' ? 'userTokens' : 'replyTokens'] = Number(m[2]);
  }
  return out;
}

/** A typed ramp's rates ("1-8", "0.5 - 20") as from and to; undefined when it is not of that form. */
export function rampInput(text: string): { from: number; to: number } | undefined {
  const m = /^\s*(\d+(?:\.\d+)?)\s*-\s*(\d+(?:\.\d+)?)\s*$/.exec(text);
  return m ? { from: Number(m[1]), to: Number(m[2]) } : undefined;
}
