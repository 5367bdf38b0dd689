// The one reader of a workload's prompts from a prompt file or a dataset (the runner and the job
// builders both use it): a file that yields no prompt names its line and the reason; a prompt
// file is read with its variables' values, the environment (Prompty's ${env:…}) and the files
// next to it (${file:…}, images).
import { statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { loadDataset } from './dataset';
import { MAX_PROMPT_FILE_BYTES, parsePromptFile } from './promptFiles';
import type { PromptFileVariable } from './promptFiles';
import { siblingReader } from './siblingFiles';
import type { Prompt, SloSpec, WorkloadSpec } from './types';

export type FilePromptSource = Exclude<WorkloadSpec['prompt'], { kind: 'synthetic' }>;

export interface ReadPrompts {
  readonly prompts: readonly Prompt[];
  /** The prompt file's `llmProfiler.slo`. */
  readonly slo?: SloSpec;
  /** Problems in the file that did not stop it from yielding prompts, each with its place ("file:line: …"). */
  readonly warnings: readonly string[];
  /** The prompt file's variables that had no value (each once, in file order). */
  readonly unfilled: readonly PromptFileVariable[];
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
      return { prompts: await loadDataset(source.path), warnings: [], unfilled: [] };
    } catch (e) {
      throw new PromptSourceError((e as Error).message, 'dataset', { cause: e });
    }
  }
  let bytes: Buffer;
  try {
    if (statSync(source.path).size > MAX_PROMPT_FILE_BYTES) {
      throw new PromptSourceError(`${source.path}: the file is larger than ${MAX_PROMPT_FILE_BYTES / 1024 / 1024} MiB: a prompt file is a prompt, not a data set (for many prompts use --dataset)`, 'file');
    }
    bytes = await readFile(source.path);
  } catch (e) {
    if (e instanceof PromptSourceError) throw e;
    const reason = (e as NodeJS.ErrnoException).code ?? (e as Error).message;
    throw new PromptSourceError(`cannot read prompt file ${source.path} (${reason})`, 'file', { cause: e });
  }
  const parsed = parsePromptFile(source.path, bytes.toString('utf8'), {
    ...(source.vars ? { vars: source.vars } : {}),
    env: process.env,
    // files next to it, up to a prompt file's own size limit
    readFile: siblingReader(dirname(source.path), { maxBytes: MAX_PROMPT_FILE_BYTES }),
  });
  const where = (line?: number) => `${source.path}${line !== undefined ? `:${line + 1}` : ''}`;
  if (parsed.refusal !== undefined) {
    throw new PromptSourceError(`${where(parsed.refusal.line)}: ${parsed.refusal.message}`, 'file');
  }
  return {
    prompts: parsed.prompts.map((x) => x.prompt),
    ...(parsed.slo ? { slo: parsed.slo } : {}),
    warnings: parsed.warnings.map((e) => `${where(e.line)}: ${e.message}`),
    unfilled: parsed.variables.filter((v) => !v.filled),
  };
}
