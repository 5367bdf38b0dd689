// Defaults shared by the launcher, `llm-profiler serve` and the server itself.
import { availableParallelism } from 'node:os';
import type { SyntheticPreset } from './presets';

export const DEFAULT_PARALLEL = 4;
/** Prefill chunk, tokens per engine step (llama-server's -b default is 2048; smaller keeps decode steps short on a CPU). */
export const DEFAULT_BATCH_SIZE = 512;
/** Context per slot when neither --ctx-size nor a job's need (its longest prompt and max tokens) says more. */
export const DEFAULT_SLOT_CONTEXT = 2048;
/**
 * The most context per slot a synthetic model is given. Its `context_length` is a number synthetic.ts
 * wrote (the weights are random, nothing was trained to a length), so a slot holds what the job needs
 * up to this; the memory check still applies.
 */
export const SYNTHETIC_SLOT_CONTEXT_LIMIT = 131_072;
export const DEFAULT_READY_TIMEOUT_MS = 60_000;
export const STOP_GRACE_MS = 3_000;

/**
 * Threads fitted to the machine. On a 2-vCPU machine that is shared (CI, a laptop running an editor),
 * llama.cpp's spinning worker threads compete with everything else and decode got slower with 2
 * threads than with 1, so small machines get 1 and larger ones leave a core free.
 */
export function defaultThreads(cores: number = availableParallelism()): number {
  if (cores <= 2) return 1;
  return Math.min(cores - 1, 8);
}

export function defaultCtxSize(parallel: number, slotContext: number = DEFAULT_SLOT_CONTEXT): number {
  return slotContext * parallel;
}

/** The synthetic model `llm-profiler serve` and `run` without --url use. ~100M params: real CPU work, written in about a second. */
export const DEFAULT_PRESET = 'small' satisfies SyntheticPreset;
