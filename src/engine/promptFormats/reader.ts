// What every prompt-file format reads with: the file's lines, the caller's context, and one place to
// put what went wrong (the refusal, the reason the file yields no prompt, is kept apart from the
// warnings so that it is always the message shown first) and the variables the prompts use.
import type { PromptFileContext, PromptFileProblem, PromptFileRange, PromptFileVariable } from '../promptFiles';
import type { ChatMessage, Prompt, SamplingParams } from '../types';
import { estimatePromptTokens } from '../prompts';

export class Reader {
  readonly lines: readonly string[];
  readonly warnings: PromptFileProblem[] = [];
  readonly #variables = new Map<string, PromptFileVariable>();
  #refusal: PromptFileProblem | undefined;

  constructor(readonly fileName: string, readonly text: string, readonly context: PromptFileContext) {
    this.lines = text.split(/\r?\n/);
  }

  get refusal(): PromptFileProblem | undefined {
    return this.#refusal;
  }

  /** The reason the file yields no prompt; the first one given stands. */
  refuse(message: string, line?: number, column?: number): void {
    this.#refusal ??= problem(message, line, column);
  }

  warn(message: string, line?: number, column?: number): void {
    if (!this.warnings.some((w) => w.message === message && w.line === line)) this.warnings.push(problem(message, line, column));
  }

  /** Notes a variable's use; the first use gives its line, and a later filled use does not unfill it. */
  variable(v: PromptFileVariable): void {
    const known = this.#variables.get(v.name);
    if (!known) this.#variables.set(v.name, v);
    else if (!known.filled && v.filled) this.#variables.set(v.name, { ...known, filled: true, ...(v.value !== undefined ? { value: v.value } : {}) });
    else if (known.placeholder === undefined && v.placeholder !== undefined) this.#variables.set(v.name, { ...known, placeholder: v.placeholder });
  }

  get variables(): PromptFileVariable[] {
    return [...this.#variables.values()].sort((a, b) => a.line - b.line);
  }

  /** The caller's value for a variable, when it gave one. */
  given(name: string): unknown {
    const v = this.context.vars?.[name];
    return v === undefined || v === null ? undefined : v;
  }

  /** The 0-based line of the first line at or after `from` that contains `needle`; `from` when none does. */
  lineOf(needle: string, from = 0, to = this.lines.length - 1): number {
    for (let i = from; i <= to && i < this.lines.length; i++) if (this.lines[i]!.includes(needle)) return i;
    return from;
  }

  get whole(): PromptFileRange {
    let n = this.lines.length - 1;
    while (n > 0 && this.lines[n]!.trim() === '') n--;
    return { startLine: 0, endLine: Math.max(0, n) };
  }

  get baseName(): string {
    const parts = this.fileName.split(/[\\/]/);
    return parts[parts.length - 1] ?? this.fileName;
  }

  prompt(messages: readonly ChatMessage[], params: SamplingParams, name: string | undefined): Prompt {
    return { messages, source: this.fileName, estimatedTokens: estimatePromptTokens(messages), ...params, ...(name !== undefined ? { name } : {}) };
  }
}

function problem(message: string, line?: number, column?: number): PromptFileProblem {
  return { message, ...(line !== undefined ? { line } : {}), ...(column !== undefined ? { column } : {}) };
}

/** A value as text in a prompt (a template's caller-given or sample value): strings as they are, the rest as JSON. */
export function asText(v: unknown): string {
  return typeof v === 'string' ? v : JSON.stringify(v) ?? String(v);
}

export function str(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value : undefined;
}
