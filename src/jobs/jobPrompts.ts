// Prompts for a job from a prompt file or a dataset: read once, before anything starts, so that a
// bad file is a usage error naming the flag, and a prompt file's SLO and warnings reach every
// command alike (run and sweep share this, with the same messages and exit codes).
import { PromptSourceError, readPrompts, type ReadPromptsOptions } from '../engine/prompts/promptSource';
import type { PromptFileVariable } from '../engine/prompts/formats/types';
import type { Prompt, PromptPulledIn, SloSpec, WorkloadSpec } from '../engine/core/types';
import { readUntrustedFile, UntrustedFileError } from '../engine/files/untrustedFile';
import { isObject } from '../engine/core/json';
import { UsageError } from './errors';

export interface LoadedPrompts {
  readonly prompts?: readonly Prompt[];
  /** The prompt file's `llmProfiler.slo`. */
  readonly slo?: SloSpec;
  readonly warnings: readonly string[];
  /** What the prompt file pulled in (files, environment variables); absent when nothing. */
  readonly pulledIn?: PromptPulledIn;
}

export async function loadPrompts(source: WorkloadSpec['prompt'], options: ReadPromptsOptions = {}): Promise<LoadedPrompts> {
  if (source.kind !== 'file' && source.kind !== 'dataset') return { warnings: [] };
  try {
    const read = await readPrompts(source, options);
    const path = source.path;
    return { ...read, warnings: [...read.warnings, ...read.unfilled.map((v) => unfilledWarning(path, v))] };
  } catch (e) {
    if (!(e instanceof PromptSourceError)) throw e;
    const flag = e.source === 'dataset' ? '--dataset' : '--prompt-file';
    throw new UsageError(`${flag}: ${e.message}`, flag);
  }
}

/** "file:12: {{topic}} has no value: sent empty (as Prompty renders it); give it with --var topic=VALUE". */
function unfilledWarning(path: string, v: PromptFileVariable): string {
  const written = v.written ?? v.name;
  const sent = v.sentAs === 'empty' ? 'sent empty, as its own tool renders it' : 'sent as written';
  const hint = v.placeholder ? ` (${v.placeholder})` : '';
  return `${path}:${v.line + 1}: ${written}${hint} has no value: ${sent}; give it with --var ${v.name}=VALUE`;
}

/** A --vars file larger than this is refused: values for a prompt, not a data set. */
const MAX_VARS_BYTES = 64 * 1024 * 1024;

/**
 * The variables' values from `--vars F.json` (a JSON object: Prompty's inputs, thread lists and all)
 * and `--var NAME=VALUE` (each beats the file's value of the same name). Undefined when neither was given.
 */
export async function loadVars(assignments: readonly string[], varsFile: string | undefined): Promise<Record<string, unknown> | undefined> {
  if (assignments.length === 0 && varsFile === undefined) return undefined;
  // names from a file and the command line: no prototype, so `__proto__` and `constructor` are names like any other
  const out = Object.create(null) as Record<string, unknown>;
  if (varsFile !== undefined) {
    let parsed: unknown;
    try {
      parsed = JSON.parse((await readUntrustedFile(varsFile, { maxBytes: MAX_VARS_BYTES })).toString('utf8'));
    } catch (e) {
      const reason = e instanceof UntrustedFileError ? e.message : ((e as NodeJS.ErrnoException).code ?? (e as Error).message);
      throw new UsageError(`--vars: cannot read ${varsFile} as JSON (${reason})`, '--vars');
    }
    if (!isObject(parsed)) throw new UsageError(`--vars: ${varsFile} must hold a JSON object of variable names to values`, '--vars');
    for (const [k, v] of Object.entries(parsed)) if (v !== undefined && v !== null) out[k] = v;
  }
  for (const a of assignments) {
    const eq = a.indexOf('=');
    out[a.slice(0, eq)] = a.slice(eq + 1);
  }
  return out;
}
