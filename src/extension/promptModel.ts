// What the extension does with a parsed prompt file, as pure functions over the engine reader's
// PromptFileParse (no `vscode`: test/unit/promptModel.test.ts): which lenses to show, which variables
// to ask for, which answers to remember and write into the run file, the editor's variables, and
// which sampling settings the user set on purpose (those beat the prompt file's own).
import { basename, dirname, extname, parse as parsePath } from 'node:path';
import type { PromptFileParse, PromptFileVariable } from '../engine/prompts/formats/types';
import type { PromptAccessOptions } from '../engine/prompts/siblingFiles';
import type { SamplingKey } from '../engine/core/types';
import type { PresetId, PresetInput } from '../jobs/presets';

/** Answers to a file's input variables, by variable name. */
export type Answers = Readonly<Record<string, string>>;

/** At most this many warning lenses; the rest are behind one "…and N more" lens. */
const MAX_WARNING_LENSES = 5;

export type LensItem =
  /** Why the file yields no prompt: always the first lens, and then no run lens at all. */
  | { readonly kind: 'refusal'; readonly line: number; readonly message: string }
  | { readonly kind: 'warning'; readonly line: number; readonly message: string }
  | { readonly kind: 'moreWarnings'; readonly line: number; readonly title: string; readonly messages: readonly string[] }
  /** The input variables without a value (neither the file's nor a remembered answer): the lens asks for them. */
  | { readonly kind: 'fill'; readonly line: number; readonly title: string; readonly names: readonly string[] }
  /** ▶ Profile, Profile with…, Prefix cache check and the last result, on the prompt at this index of `prompts`. */
  | { readonly kind: 'prompt'; readonly index: number };

/** "1 variable to fill: topic", "2 variables to fill: topic, tone". */
export function fillTitle(names: readonly string[]): string {
  return `${names.length} variable${names.length === 1 ? '' : 's'} to fill: ${names.join(', ')}`;
}

/** The input variables (`{{x}}`, Prompty inputs, `${input:x}`) that have no value in this parse. */
function unfilledInputs(variables: readonly PromptFileVariable[]): PromptFileVariable[] {
  return variables.filter((v) => v.kind === 'input' && !v.filled);
}

/**
 * The lenses of a parsed file, in order. A refused file gets its refusal first and no run lens (its
 * warnings and, when answers could fix it, the fill lens still show); warnings are capped at
 * MAX_WARNING_LENSES plus one lens for the rest.
 */
export function lensPlan(parsed: PromptFileParse, maxWarnings = MAX_WARNING_LENSES): LensItem[] {
  const out: LensItem[] = [];
  if (parsed.refusal) out.push({ kind: 'refusal', line: parsed.refusal.line ?? 0, message: parsed.refusal.message });
  const shown = parsed.warnings.slice(0, maxWarnings);
  for (const w of shown) out.push({ kind: 'warning', line: w.line ?? 0, message: w.message });
  const rest = parsed.warnings.slice(maxWarnings);
  if (rest.length > 0) {
    out.push({
      kind: 'moreWarnings',
      line: rest[0]!.line ?? 0,
      title: `…and ${rest.length} more warning${rest.length === 1 ? '' : 's'}`,
      messages: rest.map((w) => (w.line !== undefined ? `line ${w.line + 1}: ${w.message}` : w.message)),
    });
  }
  const unfilled = unfilledInputs(parsed.variables);
  if (unfilled.length > 0) {
    const names = unfilled.map((v) => v.name);
    const line = parsed.prompts[0]?.range.startLine ?? unfilled[0]!.line;
    out.push({ kind: 'fill', line, title: fillTitle(names), names });
  }
  if (!parsed.refusal) parsed.prompts.forEach((_, index) => out.push({ kind: 'prompt', index }));
  return out;
}

/**
 * A variable name that looks like a credential (`api_key`, `apiKey`, `token`, `password`, `secret`,
 * `auth`…): its answer is asked for masked, never remembered in the workspace state (kept in plain
 * text in VS Code's storage, and synced with it) and never written into a run file (which is shared).
 */
export function looksSecret(name: string): boolean {
  const parts = name.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase().split(/[^a-z0-9]+/).filter(Boolean);
  return parts.some((p) => SECRET_WORDS.has(p)) || /(?:apikey|accesskey|secretkey|passwd|password|passphrase|bearer|credential)/i.test(name);
}

// Variable names are the file's: maps of them are made by Object.fromEntries (a `__proto__` name is
// a key like any other, not the object's prototype) and read by own key (`constructor` is not Object's).

/** The answer remembered for a variable: a string of its own, never an inherited `constructor`. */
function answerOf(remembered: Answers, name: string): string | undefined {
  const a = Object.hasOwn(remembered, name) ? remembered[name] : undefined;
  return typeof a === 'string' ? a : undefined;
}

const SECRET_WORDS = new Set(['key', 'apikey', 'token', 'password', 'passwd', 'pwd', 'pass', 'passphrase', 'secret', 'credential', 'credentials', 'auth', 'authorization', 'bearer', 'cookie', 'pat', 'pin']);

/**
 * The remembered answers that still apply: those to input variables the file gives no value of its
 * own (an answer never overrides a sample or default the file gained since), none that look secret.
 * `variables` are from a parse without the caller's values.
 */
export function applicableAnswers(variables: readonly PromptFileVariable[], remembered: Answers): Record<string, string> {
  const out: [string, string][] = [];
  for (const v of unfilledInputs(variables)) {
    const a = answerOf(remembered, v.name);
    if (a !== undefined && !looksSecret(v.name)) out.push([v.name, a]);
  }
  return Object.fromEntries(out);
}

/**
 * The variables to ask for, in file order: the input variables the file leaves without a value;
 * 'missing' (▶ Profile) only those never answered, 'all' (Profile with…) every one again.
 * `variables` are from a parse without the caller's values.
 */
export function variablesToAsk(variables: readonly PromptFileVariable[], remembered: Answers, mode: 'missing' | 'all'): PromptFileVariable[] {
  return unfilledInputs(variables).filter((v) => mode === 'all' || looksSecret(v.name) || answerOf(remembered, v.name) === undefined);
}

/** The value an input box starts with: the remembered answer, else the file's value, else empty. */
export function initialAnswer(v: PromptFileVariable, remembered: Answers): string {
  return (looksSecret(v.name) ? undefined : answerOf(remembered, v.name)) ?? v.value ?? '';
}

/** The title of a variable's input box: how the file writes it. */
export function askTitle(v: PromptFileVariable, step: number, steps: number): string {
  return `LLM Profiler: ${v.written ?? v.name}${steps > 1 ? ` (${step}/${steps})` : ''}`;
}

/** What the input box says under the title: the placeholder or description, else where the variable is used. */
export function askPrompt(v: PromptFileVariable, fileName: string): string {
  return v.placeholder ?? `A value for ${v.written ?? v.name} in ${basename(fileName)} (line ${v.line + 1})`;
}

/** Words of a variable's name that say its value is a block of text (a diff, code, a document), not a word. */
const MULTILINE_WORDS = new Set(['diff', 'patch', 'code', 'snippet', 'text', 'content', 'contents', 'body', 'document', 'essay', 'article',
  'transcript', 'log', 'logs', 'markdown', 'html', 'json', 'yaml', 'csv', 'stacktrace', 'traceback', 'excerpt', 'passage', 'context', 'paragraph', 'paragraphs']);

/** A placeholder or description that asks for more than one line. */
const MULTILINE_HINT = /multi-?line|several lines|many lines|more than one line|newlines?|paste (?:a|an|the|your|in)\b|\bdiff\b|code block|stack ?trace|paragraphs?\b/i;

/**
 * Whether a variable's value may span lines, so that it is asked in an editor rather than a one-line
 * input box (which drops a pasted diff's newlines): a name with a word such as `diff`, `code`, `text`,
 * `content` or `body` (`code_snippet`, `prDiff`, `documentText`), or a placeholder that says so
 * ("multi-line", "paste the diff"). A secret-looking name never is (it is typed masked).
 */
export function asksMultiline(v: Pick<PromptFileVariable, 'name' | 'placeholder' | 'value'>): boolean {
  if (looksSecret(v.name)) return false;
  const words = v.name.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase().split(/[^a-z0-9]+/).filter(Boolean);
  return words.some((w) => MULTILINE_WORDS.has(w)) || (v.placeholder !== undefined && MULTILINE_HINT.test(v.placeholder)) || (v.value ?? '').includes('\n');
}

/**
 * Where a problem of a prompt file is marked in the editor (0-based, end exclusive): from its column
 * to the end of the token there, when the reader gave a column; else the line's text without its
 * indentation; at least one character where the line has any.
 */
export function problemSpan(lineText: string, column: number | undefined): { readonly start: number; readonly end: number } {
  const trimmedEnd = lineText.replace(/\s+$/, '').length;
  if (column !== undefined && column >= 0) {
    const start = Math.min(column, lineText.length);
    const token = /^\S+/.exec(lineText.slice(start))?.[0].length ?? 0;
    return { start, end: Math.min(lineText.length, start + Math.max(1, token)) };
  }
  const start = lineText.length - lineText.trimStart().length;
  return trimmedEnd > start ? { start, end: trimmedEnd } : { start: 0, end: Math.min(1, lineText.length) };
}

/** The answers to keep for a file: the earlier ones updated with these, without secret-looking names. */
export function answersToRemember(previous: Answers, given: Answers): Record<string, string> {
  return Object.fromEntries([...Object.entries(previous), ...Object.entries(given)].filter(([k]) => !looksSecret(k)));
}

/** A name the `--var NAME=VALUE` option accepts (jobs/options.ts). */
const VAR_NAME = /^[A-Za-z_][\w.-]*$/;

/**
 * The job's `var` option values (`NAME=VALUE`), recorded in the run file's `workload.prompt.vars`:
 * the values the prompt was filled with, without secret-looking ones (the prompt still gets them:
 * it is built before, from all the values; a run file is something people share).
 */
export function varAssignments(vars: Readonly<Record<string, string>>): string[] {
  return Object.entries(vars).filter(([k]) => VAR_NAME.test(k) && !looksSecret(k)).map(([k, v]) => `${k}=${v}`);
}

/** The active editor as the variables see it (VS Code's variables reference: the active file, its selection). */
export interface EditorState {
  /** The active text editor's file (its path), when there is one. */
  readonly file?: string;
  /** The text of its selection; absent or empty: nothing selected. */
  readonly selectedText?: string;
  /** The workspace folder of the active file (else of the prompt file, else the first one). */
  readonly workspaceFolder?: string;
}

/**
 * Values of VS Code's editor variables (`${selection}`, `${file}`, `${workspaceFolder}`, …) from the
 * editor's state, for the names a file uses. A name without a value (no active editor, nothing
 * selected) is left out: the reader then lists it as unfilled and sends it as written.
 */
export function editorValues(state: EditorState, used: readonly string[]): Record<string, string> {
  const all: Record<string, string | undefined> = {
    selection: state.selectedText || undefined,
    selectedText: state.selectedText || undefined,
    file: state.file,
    fileBasename: state.file !== undefined ? basename(state.file) : undefined,
    fileDirname: state.file !== undefined ? dirname(state.file) : undefined,
    fileBasenameNoExtension: state.file !== undefined ? parsePath(state.file).name : undefined,
    fileExtname: state.file !== undefined ? extname(state.file) : undefined,
    workspaceFolder: state.workspaceFolder,
    workspaceFolderBasename: state.workspaceFolder !== undefined ? basename(state.workspaceFolder) : undefined,
  };
  const out: [string, string][] = [];
  for (const name of used) {
    const v = Object.hasOwn(all, name) ? all[name] : undefined;
    if (v !== undefined) out.push([name, v]);
  }
  return Object.fromEntries(out);
}

/** "${selection} has no value (nothing is selected in the active editor): sent as written". */
export function unfilledEditorNote(v: PromptFileVariable): string {
  const why = v.name === 'selection' || v.name === 'selectedText' ? 'nothing is selected in the active editor' : v.name.startsWith('workspace') ? 'no workspace folder is open' : 'no file on disk is open in the active editor';
  return `${v.written ?? `\${${v.name}}`} has no value (${why}): sent ${v.sentAs === 'empty' ? 'empty' : 'as written'}`;
}

/**
 * The sampling keys the user set on purpose, which beat a prompt file's own (BuildContext.explicit):
 * max tokens when the run sends the user's own value, that is a `llmProfiler.workload.maxTokens` set
 * in user, workspace or folder settings (not the default), or a caller's `workload.maxTokens` for the
 * presets that take it. A preset's derived value (the quick check's cap of 64, the cache check's own)
 * is a default: the prompt file's max_tokens beats it. The extension has no temperature or top-p setting.
 */
export function explicitSamplingKeys(preset: PresetId, sentMaxTokens: number, setting: { readonly value: number; readonly setByUser: boolean }, input: PresetInput | undefined): SamplingKey[] {
  if (preset === 'cache-check') return [];
  const fromInput = (preset === 'sweep' || preset === 'custom') && input?.maxTokens !== undefined && input.maxTokens === sentMaxTokens;
  const fromSetting = setting.setByUser && setting.value === sentMaxTokens;
  return fromInput || fromSetting ? ['maxTokens'] : [];
}

/** Whether a setting has a value of the user's (user, workspace or folder settings), from `WorkspaceConfiguration.inspect`. */
export function setByUser(inspect: { readonly globalValue?: unknown; readonly workspaceValue?: unknown; readonly workspaceFolderValue?: unknown } | undefined): boolean {
  return inspect !== undefined && (inspect.globalValue !== undefined || inspect.workspaceValue !== undefined || inspect.workspaceFolderValue !== undefined);
}

/** Files a prompt file pulls in (`${file:…}`, images) above this size are not read: a prompt is not a data dump. */
const MAX_SIBLING_BYTES = 20 * 1024 * 1024;

/**
 * What a prompt file in the editor may pull in (engine/prompts/siblingFiles.ts): files by real path inside a
 * workspace folder or the prompt's project, trusted or not (a repository's prompt file must not pull
 * ~/.ssh into a request); environment variables only in a trusted workspace.
 */
export function documentAccessOptions(promptPath: string, trusted: boolean, workspaceFolders: readonly string[], env: Readonly<Record<string, string | undefined>>): PromptAccessOptions {
  return {
    promptPath,
    maxBytes: MAX_SIBLING_BYTES,
    allowRead: workspaceFolders,
    outside: (project) => `outside the workspace folders and the prompt's project (${project}): add its folder to the workspace`,
    env: trusted ? env : {},
    allowEnv: trusted ? 'all' : [],
    envRefused: () => 'the workspace is not trusted: environment variables are read only in a trusted workspace',
  };
}
