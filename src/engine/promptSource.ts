// The one reader of a workload's prompts from a prompt file or a dataset (the runner and the job
// builders both use it): a file that yields no prompt names its line and the reason.
import { readFile } from 'node:fs/promises';
import { loadDataset } from './dataset';
import { parsePromptFile } from './promptFiles';
import type { Prompt, SloSpec, WorkloadSpec } from './types';

export type FilePromptSource = Exclude<WorkloadSpec['prompt'], { kind: 'synthetic' }>;

export interface ReadPrompts {
  readonly prompts: readonly Prompt[];
  /** The prompt file's `llmProfiler.slo`. */
  readonly slo?: SloSpec;
  /** Problems in the file that did not stop it from yielding prompts, each with its place. */
  readonly warnings: readonly string[];
}

/** Which source failed, so a caller can name its own flag or setting. */
export class PromptSourceError extends Error {
  override readonly name = 'PromptSourceError';
  constructor(message: string, readonly source: FilePromptSource['kind'], options?: ErrorOptions) {
    super(message, options);
  }
}

export async function readPrompts(source: FilePromptSource): Promise<ReadPrompts> {
  if (source.kind === 'dataset') {
    try {
      return { prompts: await loadDataset(source.path), warnings: [] };
    } catch (e) {
      throw new PromptSourceError((e as Error).message, 'dataset', { cause: e });
    }
  }
  let text: string;
  try {
    text = await readFile(source.path, 'utf8');
  } catch (e) {
    const reason = (e as NodeJS.ErrnoException).code ?? (e as Error).message;
    throw new PromptSourceError(`cannot read prompt file ${source.path} (${reason})`, 'file', { cause: e });
  }
  const parsed = parsePromptFile(source.path, text);
  const where = (line?: number) => `${source.path}${line !== undefined ? `:${line + 1}` : ''}`;
  if (parsed.prompts.length === 0) {
    const e = parsed.errors[0];
    throw new PromptSourceError(`${where(e?.line)}: ${e?.message ?? 'no prompt in the file'}`, 'file');
  }
  return {
    prompts: parsed.prompts.map((x) => x.prompt),
    ...(parsed.slo ? { slo: parsed.slo } : {}),
    warnings: parsed.errors.map((e) => `${where(e.line)}: ${e.message}`),
  };
}
