// Named workloads and the rules that pick defaults from other options: one place for the CLI and
// the extension. Pure (no node or `vscode` import).
import { defaultOf, inputProblem } from './options';

/** The settings' workload block (`llmProfiler.workload.*`): what the presets start from. */
export interface WorkloadDefaults {
  readonly concurrency: number;
  readonly requests: number;
  readonly warmup: number;
  readonly maxTokens: number;
  readonly promptTokens: number;
  readonly timeoutMs: number;
}

export type PresetId = 'quick' | 'load' | 'custom' | 'sweep' | 'cache-check';

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
  const parts = text.split(/[\s,]+/).filter(Boolean);
  if (parts.length < 2) return { problem: 'Enter two or more values, separated by commas' };
  for (const part of parts) {
    const problem = inputProblem(axis, part);
    if (problem) return { problem: `${part}: ${problem.replace(/from above 0 to any size$/, 'above 0')}` };
  }
  const values = parts.map(Number);
  if (new Set(values).size !== values.length) return { problem: 'Enter each value once' };
  return { values };
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
