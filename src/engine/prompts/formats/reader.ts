// What every prompt-file format reads with: the file's lines, the caller's context, and one place to
// put what went wrong (the refusal, the reason the file yields no prompt, is kept apart from the
// warnings so that it is always the message shown first) and the variables the prompts use.
import type { PromptFileContext, PromptFileProblem, PromptFileRange, PromptFileVariable } from './types';
import type { ChatMessage, Prompt, SamplingParams } from '../../core/types';
import { estimatePromptTokens } from '../syntheticPrompts';

/**
 * Characters a reader may read while looking for the line of something (a variable's use, an image):
 * a file with many distinct needles, each far down, would otherwise cost the square of its size.
 * Past it, a line is given as where the search began.
 */
const MAX_LINE_SEARCH = 64 * 1024 * 1024;

export class Reader {
  readonly lines: readonly string[];
  readonly warnings: PromptFileProblem[] = [];
  readonly #warned = new Set<string>();
  readonly #variables = new Map<string, PromptFileVariable>();
  #refusal: PromptFileProblem | undefined;
  #searched = 0;

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
    const key = `${line ?? ''}\u0000${message}`;
    if (this.#warned.has(key)) return;
    this.#warned.add(key);
    this.warnings.push(problem(message, line, column));
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

  /** The caller's value for a variable, when it gave one (its own: `constructor` is not a value given). */
  given(name: string): unknown {
    const v = ownValue(this.context.vars, name);
    return v === undefined || v === null ? undefined : v;
  }

  /** The 0-based line of the first line at or after `from` that contains `needle`; `from` when none does. */
  lineOf(needle: string, from = 0, to = this.lines.length - 1): number {
    return this.findLine((line) => line.includes(needle), from, to) ?? from;
  }

  /** The first line from `from` to `to` that passes `test`, within the reader's search budget. */
  findLine(test: (line: string) => boolean, from = 0, to = this.lines.length - 1): number | undefined {
    for (let i = from; i <= to && i < this.lines.length && this.#searched <= MAX_LINE_SEARCH; i++) {
      this.#searched += this.lines[i]!.length + 1;
      if (test(this.lines[i]!)) return i;
    }
    return undefined;
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

/** `map[key]` when `map` has it as its own property: a key from a file or a caller is never one of Object's (`constructor`, `__proto__`). */
export function ownValue(map: Readonly<Record<string, unknown>> | undefined, key: string): unknown {
  return map !== undefined && map !== null && Object.hasOwn(map, key) ? map[key] : undefined;
}

/** A map for keys from a file or a caller: no prototype, so no key is inherited and `__proto__` is a key like any other. */
export function keyMap<T = unknown>(entries?: Iterable<readonly [string, T]>): Record<string, T> {
  const out = Object.create(null) as Record<string, T>;
  if (entries) for (const [k, v] of entries) out[k] = v;
  return out;
}

/** A value as text in a prompt (a template's caller-given or sample value): strings as they are, the rest as JSON. */
export function asText(v: unknown): string {
  return typeof v === 'string' ? v : describe(v);
}

/**
 * A value from a file as JSON text, for a prompt or a message. Never throws: YAML's aliases can make a
 * value that holds itself, and a mapping's `toString` key is not a function.
 */
export function describe(v: unknown): string {
  try {
    return JSON.stringify(v) ?? String(v);
  } catch {
    return '(a value that holds itself)';
  }
}

/** A name from a file (an output's, a role): text, a number or a boolean as written, anything else none. */
export function scalarText(v: unknown): string | undefined {
  return typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean' ? String(v) : undefined;
}

export function str(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value : undefined;
}
