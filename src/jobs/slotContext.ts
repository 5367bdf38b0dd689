// How much context each slot of the local server gets when a job starts it: room for the job's
// longest prompt and the max tokens it is sent with, counted as the model counts (a synthetic
// model's tokenizer, localServer/tokenCount.ts) or estimated with a margin, rounded up, never below
// the usual 2048 and never past what the model takes. A prompt past that, or a --ctx-size too small
// for it, is a usage error before anything starts, not an HTTP 400 on every request. Pure.
import { estimatePromptTokens, syntheticPrompt } from '../engine/prompts/syntheticPrompts';
import { resolveSampling } from '../engine/core/sentWith';
import type { Prompt, WorkloadSpec } from '../engine/core/types';
import { DEFAULT_SLOT_CONTEXT } from '../localServer/defaults';
import type { ChatCounter } from '../localServer/tokenCount';
import { UsageError } from './errors';
import { option } from './options';

/** llama.cpp and node-llama-cpp pad a context to 256 cells: a slot is sized in those steps. */
const SLOT_STEP = 256;
/** Tokens a slot keeps beyond the prompt and its max tokens: the template's edges, a cache-busting lead or nonce, BOS. */
export const SLOT_SLACK = 64;
/**
 * An estimate's margin. A real model's tokenizer can count a prompt above the estimate (code,
 * markup); a synthetic model's count is exact and needs none (it makes 2 to 2.5 times the estimate's
 * tokens of English prose and code: its vocabulary is a few thousand words).
 */
export const ESTIMATE_MARGIN = 1.25;

/** One prompt of a job as a slot must hold it. */
export interface PromptNeed {
  /** The prompt file (and which of its prompts), the dataset line, or "a synthetic 256-token prompt". */
  readonly label: string;
  readonly tokens: number;
  /** True: the model's own count; false: the client's estimate. */
  readonly counted: boolean;
  /** What it is sent with: its own max tokens (a prompt file's, a dataset line's) unless the user set them, else the workload's. */
  readonly maxTokens: number;
}

/** What a message tells the user to change, as the surface calls it (the CLI's flags, the extension's settings). */
export interface SlotNames {
  readonly ctxSize: string;
  readonly parallel: string;
  readonly maxTokens: string;
  readonly model: string;
}

export const CLI_SLOT_NAMES: SlotNames = { ctxSize: '--ctx-size', parallel: '--parallel', maxTokens: '--max-tokens', model: '--preset or --model-file' };

const setting = (key: string): string => `llmProfiler.${option(key).setting?.key ?? key}`;

/** The extension's settings (it has no context setting: it sizes its server to the job and restarts it when a job needs more). */
export const SETTING_SLOT_NAMES: SlotNames = {
  ctxSize: 'the context size',
  parallel: setting('parallel'),
  maxTokens: setting('maxTokens'),
  model: `${setting('preset')} or ${setting('modelFile')}`,
};

/** The model as sizing sees it (localServer/model.ts modelContext). */
export interface SlotModel {
  readonly name: string;
  /** The most context per slot; undefined: the model does not say. */
  readonly limit: number | undefined;
  readonly synthetic: boolean;
}

export interface SlotSizing {
  readonly parallel: number;
  /** An explicit total context (--ctx-size): checked, never changed. */
  readonly ctxSize?: number;
  readonly model: SlotModel;
  readonly names: SlotNames;
}

/** The least a slot must hold for this prompt: its tokens, its max tokens and the slack. */
function slotNeed(p: PromptNeed): number {
  return p.tokens + p.maxTokens + SLOT_SLACK;
}

/** What a slot is given for it: an estimate gets its margin. */
function slotWant(p: PromptNeed): number {
  return (p.counted ? p.tokens : Math.ceil(p.tokens * ESTIMATE_MARGIN)) + p.maxTokens + SLOT_SLACK;
}

function tokensText(p: PromptNeed, model: SlotModel): string {
  return p.counted ? `${p.tokens} tokens (as ${model.name} counts them)` : `about ${p.tokens} tokens (estimated)`;
}

/**
 * The context each slot gets: the largest need over the prompts, rounded up to SLOT_STEP, at least
 * DEFAULT_SLOT_CONTEXT, at most the model's limit. Undefined when that is the server's default,
 * when there is nothing to size (no prompt) or when an explicit ctxSize decides. Throws a UsageError naming the prompt, its tokens, the
 * limit and what to change when it cannot fit.
 */
export function sizeSlots(needs: readonly PromptNeed[], s: SlotSizing): number | undefined {
  if (needs.length === 0) return undefined;
  let worst = needs[0]!;
  let want = 0;
  for (const p of needs) {
    if (slotNeed(p) > slotNeed(worst)) worst = p;
    want = Math.max(want, slotWant(p));
  }
  const need = slotNeed(worst);
  const { model, names } = s;
  const prompt = `${worst.label}: the prompt is ${tokensText(worst, model)} and is sent with up to ${worst.maxTokens} max tokens`;
  if (model.limit !== undefined && need > model.limit) {
    const limit = model.synthetic
      ? `more than the local server gives a slot of a synthetic model (${model.limit} tokens)`
      : `more than ${model.name} takes (its trained context: ${model.limit} tokens)`;
    const fix = model.synthetic ? `shorten the prompt or lower ${names.maxTokens}` : `shorten the prompt, lower ${names.maxTokens}, or use a model with a longer context (${names.model})`;
    throw new UsageError(`${prompt}: a slot of the local server would need ${need} tokens, ${limit}; ${fix}`);
  }
  if (s.ctxSize !== undefined) {
    const per = Math.floor(s.ctxSize / s.parallel);
    if (per < need) {
      const enough = s.parallel * roundUp(need);
      throw new UsageError(
        `${names.ctxSize} ${s.ctxSize} gives ${s.parallel === 1 ? 'the one slot' : `each of the ${s.parallel} slots`} (${names.parallel} ${s.parallel}) ${per} tokens: too few for ${prompt} (${need} a slot); ` +
          `give ${names.ctxSize} ${enough} or more, or leave it out (each slot is then sized to the longest prompt)`,
        '--ctx-size',
      );
    }
    return undefined;
  }
  const sized = Math.min(Math.max(DEFAULT_SLOT_CONTEXT, roundUp(want)), model.limit ?? Infinity);
  // the server's default: said by leaving it out
  return sized === DEFAULT_SLOT_CONTEXT ? undefined : sized;
}

function roundUp(n: number): number {
  return Math.ceil(n / SLOT_STEP) * SLOT_STEP;
}

/** "file.prompt.md", "file.prompt.yml (prompt 2 of 3)", "file.prompty (\"name\")", a dataset's "file.jsonl:12". */
function labels(prompts: readonly Prompt[]): (p: Prompt, i: number) => string {
  const per = new Map<string | undefined, number>();
  for (const p of prompts) per.set(p.source, (per.get(p.source) ?? 0) + 1);
  const seen = new Map<string | undefined, number>();
  const nth = prompts.map((p) => {
    const k = (seen.get(p.source) ?? 0) + 1;
    seen.set(p.source, k);
    return k;
  });
  return (p, i) => {
    const source = p.source ?? 'a prompt';
    // a prompt.md's name is its file's: said once
    if (p.name !== undefined && !(source.split(/[\\/]/).pop() ?? '').startsWith(`${p.name}.`)) return `${source} ("${p.name}")`;
    const of = per.get(p.source) ?? 1;
    return of > 1 ? `${source} (prompt ${nth[i]} of ${of})` : source;
  };
}

/**
 * What the job's prompts need of a slot: each prompt of a file or dataset (or the caller's), else a
 * synthetic prompt of each length the job sends (`syntheticTokens`), counted by `count` where the
 * model can be counted, else the estimate.
 */
export function promptNeeds(workload: Pick<WorkloadSpec, 'maxTokens' | 'temperature' | 'topP' | 'explicit' | 'seed' | 'prompt'>, prompts: readonly Prompt[] | undefined, syntheticTokens: readonly number[], count?: ChatCounter): PromptNeed[] {
  const tokensOf = (p: Prompt): { tokens: number; counted: boolean } =>
    count ? { tokens: count(p.messages), counted: true } : { tokens: p.estimatedTokens ?? estimatePromptTokens(p.messages), counted: false };
  if (prompts && prompts.length > 0) {
    const label = labels(prompts);
    return prompts.map((p, i) => ({ label: label(p, i), ...tokensOf(p), maxTokens: resolveSampling(workload, p).sent.maxTokens }));
  }
  const shared = workload.prompt.kind === 'synthetic' && workload.prompt.sharedPrefix === true;
  return syntheticTokens.map((n) => ({
    label: `a synthetic ${n}-token prompt`,
    ...tokensOf(syntheticPrompt(0, n, { ...(workload.seed !== undefined ? { seed: workload.seed } : {}), sharedPrefix: shared })),
    maxTokens: workload.maxTokens,
  }));
}
