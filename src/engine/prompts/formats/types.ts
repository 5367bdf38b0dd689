// The prompt-file reader's shapes, shared by promptFiles.ts and each format's reader (formats/*).
import type { Prompt, SloSpec } from '../../core/types';

export type PromptFileKind = 'text' | 'prompt.md' | 'prompty' | 'prompt.yml';

export interface PromptFileRange {
  /** 0-based, inclusive. */
  readonly startLine: number;
  readonly endLine: number;
}

export interface PromptFileEntry {
  readonly prompt: Prompt;
  readonly name?: string;
  readonly range: PromptFileRange;
}

/** A problem in a prompt file, at its place (0-based line and column) when it has one. */
export interface PromptFileProblem {
  readonly message: string;
  readonly line?: number;
  readonly column?: number;
}

/**
 * A variable the file's prompts use: `{{name}}` / a Prompty input, `${input:name}` (kind 'input'), or
 * VS Code's `${selection}`, `${file}`, `${workspaceFolder}`, … (kind 'editor', named without `${}`).
 */
export interface PromptFileVariable {
  readonly name: string;
  readonly kind: 'input' | 'editor';
  /** 0-based line of its first use (or of its declaration when unused). */
  readonly line: number;
  /** `${input:name:placeholder}`'s placeholder, a Prompty input's description: what to ask for. */
  readonly placeholder?: string;
  /** Whether it had a value: the caller's, else the file's own (sample, default). */
  readonly filled: boolean;
  /** The value used when filled (for the extension to offer as the default answer). */
  readonly value?: string;
  /** How the file writes it: `{{topic}}`, `${input:topic}`, `${selection}`. */
  readonly written?: string;
  /** Unfilled: what is sent in its place, as the format's tool does ("empty", "as written"). */
  readonly sentAs?: 'empty' | 'as written';
}

/** A read the caller would not do, and why ("outside the prompt's project (/repo): pass --allow-read DIR"). */
export interface ReadRefusal {
  readonly refused: string;
}

/** Where the reader finds what lies outside the text. Everything is optional: without it, the parse is pure. */
export interface PromptFileContext {
  /** The caller's values (`--var`, `--vars`, the extension's answers, the editor's `selection`/`file`/…): beat the file's samples and defaults. */
  readonly vars?: Readonly<Record<string, unknown>>;
  /** Values for `${env:VAR}` in Prompty front matter. Absent (and no `readEnv`): such references are unfilled. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Reads `${env:VAR}` instead of `env`: its value, undefined when unset, or why the caller does not allow it (siblingFiles.ts). */
  readonly readEnv?: (name: string) => string | undefined | ReadRefusal;
  /** Reads a file by a path relative to the prompt file's folder (`${file:…}`, local images): undefined when it cannot, or why it would not. */
  readonly readFile?: (relativePath: string) => Uint8Array | ReadRefusal | undefined;
}

export interface PromptFileParse {
  readonly kind: PromptFileKind;
  readonly prompts: PromptFileEntry[];
  /** Why the file yields no prompt; present exactly when `prompts` is empty. Shown first, always. */
  readonly refusal?: PromptFileProblem;
  /** Problems that did not stop it, each once, in file order (unfilled variables are in `variables`, not here). */
  readonly warnings: PromptFileProblem[];
  readonly variables: PromptFileVariable[];
  readonly slo?: SloSpec;
  /** The model the file names, if any (informational: the endpoint decides). */
  readonly model?: string;
}
