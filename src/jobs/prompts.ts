// Prompts for a job from a prompt file or a dataset: read once, before anything starts, so that a
// bad file is a usage error naming the flag, and a prompt file's SLO and warnings reach every
// command alike (run and sweep share this).
import { PromptSourceError, readPrompts } from '../engine/promptSource';
import type { Prompt, SloSpec, WorkloadSpec } from '../engine/types';
import { UsageError } from './errors';

export interface LoadedPrompts {
  readonly prompts?: readonly Prompt[];
  /** The prompt file's `llmProfiler.slo`. */
  readonly slo?: SloSpec;
  readonly warnings: readonly string[];
}

export async function loadPrompts(source: WorkloadSpec['prompt']): Promise<LoadedPrompts> {
  if (source.kind === 'synthetic') return { warnings: [] };
  try {
    return await readPrompts(source);
  } catch (e) {
    if (!(e instanceof PromptSourceError)) throw e;
    const flag = e.source === 'dataset' ? '--dataset' : '--prompt-file';
    throw new UsageError(`${flag}: ${e.message}`, flag);
  }
}
