// The one reader of a workload's prompts from a prompt file or a dataset (the runner and the job
// builders both use it): a file that yields no prompt names its line and the reason; a prompt
// file is read with its variables' values and what it may pull in (siblingFiles.ts): files in its
// project and the folders allowed (${file:…}, images), the environment variables allowed (${env:…}).
// Both files are read as untrusted (untrustedFile.ts): regular files only, bounded.
import { loadDataset } from './dataset';
import { loadConversations, wholeConversation } from './conversations';
import { MAX_PROMPT_FILE_BYTES, parsePromptFile } from './promptFiles';
import type { PromptFileVariable } from './formats/types';
import { anyPulledIn, promptAccess } from './siblingFiles';
import type { Prompt, PromptPulledIn, SloSpec, WorkloadSpec } from '../core/types';
import { readUntrustedFile, UntrustedFileError } from '../files/untrustedFile';

export type FilePromptSource = Extract<WorkloadSpec['prompt'], { kind: 'file' | 'dataset' }>;

export interface ReadPrompts {
  readonly prompts: readonly Prompt[];
  /** The prompt file's `llmProfiler.slo`. */
  readonly slo?: SloSpec;
  /** Problems in the file that did not stop it from yielding prompts, each with its place ("file:line: …"). */
  readonly warnings: readonly string[];
  /** The prompt file's variables that had no value (each once, in file order). */
  readonly unfilled: readonly PromptFileVariable[];
  /** What the prompt file pulled in (files, environment variables); absent when nothing. */
  readonly pulledIn?: PromptPulledIn;
}

export interface ReadPromptsOptions {
  /** Where `${env:…}` values come from (default: this process's environment); only `allowEnv`'s names are read. */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

/** Which source failed, so a caller can name its own flag or setting. */
export class PromptSourceError extends Error {
  override readonly name = 'PromptSourceError';
  constructor(message: string, readonly source: FilePromptSource['kind'], options?: ErrorOptions) {
    super(message, options);
  }
}

export async function readPrompts(source: FilePromptSource, options: ReadPromptsOptions = {}): Promise<ReadPrompts> {
  if (source.kind === 'dataset') {
    try {
      // a multi-turn dataset's conversations, each as one prompt (its turns' messages): the sessions read them again to send them (run/sessions.ts)
      return { prompts: source.multiTurn ? (await loadConversations(source.path)).map(wholeConversation) : await loadDataset(source.path), warnings: [], unfilled: [] };
    } catch (e) {
      throw new PromptSourceError((e as Error).message, 'dataset', { cause: e });
    }
  }
  const bytes = await readPromptFile(source.path);
  const access = promptAccess({
    promptPath: source.path,
    maxBytes: MAX_PROMPT_FILE_BYTES,
    ...(source.allowRead ? { allowRead: source.allowRead } : {}),
    outside: (project) => `outside the prompt's project (${project})${source.allowRead?.length ? ' and the folders --allow-read gives' : ''}: pass --allow-read DIR`,
    env: options.env ?? process.env,
    allowEnv: source.allowEnv ?? [],
    envRefused: (name) => `environment variables are sent only when allowed: pass --allow-env ${name}`,
  });
  const parsed = parsePromptFile(source.path, bytes.toString('utf8'), {
    ...(source.vars ? { vars: source.vars } : {}),
    readEnv: access.readEnv,
    readFile: access.readFile,
  });
  const where = (line?: number) => `${source.path}${line !== undefined ? `:${line + 1}` : ''}`;
  if (parsed.refusal !== undefined) {
    throw new PromptSourceError(`${where(parsed.refusal.line)}: ${parsed.refusal.message}`, 'file');
  }
  const pulledIn = anyPulledIn(access.pulledIn());
  return {
    prompts: parsed.prompts.map((x) => x.prompt),
    ...(parsed.slo ? { slo: parsed.slo } : {}),
    warnings: parsed.warnings.map((e) => `${where(e.line)}: ${e.message}`),
    unfilled: parsed.variables.filter((v) => !v.filled),
    ...(pulledIn ? { pulledIn } : {}),
  };
}

/** The prompt file's bytes: a regular file, up to a prompt file's size limit. */
async function readPromptFile(path: string): Promise<Buffer> {
  try {
    return await readUntrustedFile(path, { maxBytes: MAX_PROMPT_FILE_BYTES });
  } catch (e) {
    if (!(e instanceof UntrustedFileError)) throw e;
    if (e.reason === 'too-large') {
      throw new PromptSourceError(`${path}: the file is larger than ${MAX_PROMPT_FILE_BYTES / 1024 / 1024} MiB: a prompt file is a prompt, not a data set (for many prompts use --dataset)`, 'file');
    }
    throw new PromptSourceError(`cannot read prompt file ${path}: ${e.message}`, 'file', { cause: e });
  }
}
