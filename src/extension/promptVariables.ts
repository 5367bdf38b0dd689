// Prompt files in the editor: one read for the CodeLens and the commands (the engine's reader, with
// what the prompt may pull in: its project's files, the environment when trusted), done on the prompt
// reader's worker thread (promptWorker/), the answers to a file's variables remembered per file in the
// workspace state, and the flow that asks for the missing ones. The rules (what to ask, what to keep,
// what may be read, the editor's variables) are pure, in promptModel.ts.
import { basename } from 'node:path';
import * as vscode from 'vscode';
import type { PromptFileVariable } from '../engine/prompts/formats/types';
import { Disposable } from './dispose';
import { loadFiles } from './lazy';
import type { Log } from './log';
import type { MultilineInput } from './multilineInput';
import {
  answersToRemember, applicableAnswers, askPrompt, askTitle, asksMultiline, editorValues, initialAnswer, looksSecret, variablesToAsk,
  type Answers, type EditorState,
} from './promptModel';
import { PromptReader, type Cancellation } from './promptWorker/client';
import { readDocument, refusedParse, type DocumentParse, type ParseRequest } from './promptWorker/request';

/**
 * The prompt reader: its thread (dist/promptWorker.js) starts on the first read; the extension owns
 * it, so that disposing stops the thread. Without the thread, small documents are read here, with
 * the engine's reader from dist/files.js.
 */
export function promptReader(context: vscode.ExtensionContext, log: Log): PromptReader {
  return new PromptReader({
    workerFile: context.asAbsolutePath('dist/promptWorker.js'),
    inThread: async (request) => readDocument(await loadFiles(), request),
    log: (line) => log.info(line),
  });
}

/**
 * A document as the reader takes it. What it may pull in is decided here (promptModel.ts
 * `documentAccessOptions` on the reading thread): only documents on disk read files; the host's
 * environment goes along only in a trusted workspace (the thread's own is empty).
 */
function documentRequest(doc: vscode.TextDocument, vars: Readonly<Record<string, unknown>> | undefined): ParseRequest {
  const trusted = vscode.workspace.isTrusted;
  const workspaceFolders = (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === 'file').map((f) => f.uri.fsPath);
  return {
    fileName: doc.fileName,
    text: doc.getText(),
    ...(vars ? { vars } : {}),
    ...(doc.uri.scheme === 'file' ? { access: { promptPath: doc.uri.fsPath, trusted, workspaceFolders, ...(trusted ? { env: { ...process.env } } : {}) } } : {}),
  };
}

/** Reads a document on the reader's thread, with the caller's values; undefined when the token cancelled it first. Never throws. */
function readWith(reader: PromptReader, doc: vscode.TextDocument, vars?: Readonly<Record<string, unknown>>, token?: Cancellation): Promise<DocumentParse | undefined> {
  return reader.read(documentRequest(doc, vars), token);
}

/** Reads a document for a command (nothing cancels it; the reader closing refuses it). Never throws. */
async function parseDocument(reader: PromptReader, doc: vscode.TextDocument, vars?: Readonly<Record<string, unknown>>): Promise<DocumentParse> {
  return (await readWith(reader, doc, vars)) ?? refusedParse('could not read this prompt file: the extension is shutting down');
}

/** The key a file's answers are kept under: its path on disk, else its URI (an untitled prompt). */
function fileKey(uri: vscode.Uri): string {
  return uri.scheme === 'file' ? uri.fsPath : uri.toString();
}

/**
 * Answers to prompt files' input variables, per file, in the workspace state (so a second ▶ Profile
 * asks nothing). Secret-looking names are never stored (promptModel.ts `looksSecret`).
 */
export class PromptAnswers extends Disposable {
  static readonly STATE_KEY = 'llmProfiler.promptAnswers';
  readonly #onDidChange = this._register(new vscode.EventEmitter<void>());
  readonly onDidChange = this.#onDidChange.event;

  /** `editorInput`: where a value that may span lines is typed (an editor: the input box is one line). */
  constructor(private readonly state: vscode.Memento, readonly editorInput?: MultilineInput) {
    super();
  }

  #all(): Record<string, Record<string, string>> {
    const v = this.state.get<unknown>(PromptAnswers.STATE_KEY);
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, Record<string, string>>) : {};
  }

  get(uri: vscode.Uri): Answers {
    const a = this.#all()[fileKey(uri)];
    if (a === null || typeof a !== 'object') return {};
    return Object.fromEntries(Object.entries(a).filter(([, v]) => typeof v === 'string'));
  }

  /** Adds these answers to the file's (secret-looking names dropped); no answers left forgets the file. */
  async remember(uri: vscode.Uri, given: Answers): Promise<void> {
    const all = { ...this.#all() };
    const key = fileKey(uri);
    const next = answersToRemember(all[key] ?? {}, given);
    if (Object.keys(next).length === 0) delete all[key];
    else all[key] = next;
    await this.state.update(PromptAnswers.STATE_KEY, all);
    this.#onDidChange.fire();
  }

  /** Forgets every answer (tests; a clean slate). */
  async clear(): Promise<void> {
    await this.state.update(PromptAnswers.STATE_KEY, undefined);
    this.#onDidChange.fire();
  }
}

/**
 * The file parsed with the answers remembered for it (the CodeLens: no editor variables, so that
 * lenses do not follow the selection); undefined when the token cancelled it (a stale read, dropped).
 */
export async function parseWithAnswers(reader: PromptReader, doc: vscode.TextDocument, answers: PromptAnswers, token?: Cancellation): Promise<DocumentParse | undefined> {
  const base = await readWith(reader, doc, undefined, token);
  if (!base) return undefined;
  const remembered = applicableAnswers(base.variables, answers.get(doc.uri));
  return Object.keys(remembered).length === 0 ? base : readWith(reader, doc, remembered, token);
}

/**
 * The editor's state for VS Code's editor variables, read when a command starts. As VS Code's
 * variables reference says, `${file}` is the active editor's file and `${selection}` its selection,
 * whichever file that is: the prompt file itself when the command came from its CodeLens.
 */
export function editorStateNow(promptUri: vscode.Uri): EditorState {
  const ed = vscode.window.activeTextEditor;
  const active = ed?.document.uri;
  const folder = (active && vscode.workspace.getWorkspaceFolder(active)) ?? vscode.workspace.getWorkspaceFolder(promptUri) ?? vscode.workspace.workspaceFolders?.[0];
  const selectedText = ed && !ed.selection.isEmpty ? ed.document.getText(ed.selection) : undefined;
  return {
    ...(active?.scheme === 'file' ? { file: active.fsPath } : {}),
    ...(selectedText !== undefined ? { selectedText } : {}),
    ...(folder?.uri.scheme === 'file' ? { workspaceFolder: folder.uri.fsPath } : {}),
  };
}

export interface FilledPrompts {
  /** The file read with every value: the answers and the editor's (and what it pulled in). */
  readonly parse: DocumentParse;
  /** Those values, by variable name (what the prompt was filled with). */
  readonly vars: Readonly<Record<string, string>>;
  /** Editor variables the file uses that still have no value. */
  readonly unfilledEditor: readonly PromptFileVariable[];
}

/** One variable's value: in an editor when it may span lines (a diff, code: promptModel.ts asksMultiline), else an input box. */
async function askValue(answers: PromptAnswers, doc: vscode.TextDocument, v: PromptFileVariable, remembered: Answers, [step, steps]: [number, number]): Promise<string | undefined> {
  const value = initialAnswer(v, remembered);
  if (answers.editorInput && asksMultiline(v)) {
    const written = v.written ?? v.name;
    return answers.editorInput.ask({ written, editorName: `${v.name} (${basename(doc.fileName)})`, prompt: askPrompt(v, doc.fileName), value });
  }
  return vscode.window.showInputBox({
    title: askTitle(v, step, steps),
    prompt: askPrompt(v, doc.fileName),
    value,
    password: looksSecret(v.name),
    ignoreFocusOut: true,
  });
}

/**
 * Asks for the file's input variables ('missing': those never answered, ▶ Profile; 'all': each again
 * with the last answer filled in, Profile with…), remembers the answers, and reads the file again with
 * them and the editor's variables. Undefined when the user pressed Esc: nothing runs.
 */
export async function fillVariables(reader: PromptReader, answers: PromptAnswers, doc: vscode.TextDocument, mode: 'missing' | 'all', editor: EditorState): Promise<FilledPrompts | undefined> {
  const base = await parseDocument(reader, doc);
  const remembered = answers.get(doc.uri);
  const toAsk = variablesToAsk(base.variables, remembered, mode);
  const given: Record<string, string> = {};
  for (const [i, v] of toAsk.entries()) {
    const value = await askValue(answers, doc, v, remembered, [i + 1, toAsk.length]);
    if (value === undefined) return undefined;
    given[v.name] = value;
  }
  if (Object.keys(given).length > 0) await answers.remember(doc.uri, given);
  const values: Record<string, string> = {
    ...editorValues(editor, base.variables.filter((v) => v.kind === 'editor').map((v) => v.name)),
    ...applicableAnswers(base.variables, remembered),
    ...given,
  };
  const parse = Object.keys(values).length > 0 ? await parseDocument(reader, doc, values) : base;
  return { parse, vars: values, unfilledEditor: parse.variables.filter((v) => v.kind === 'editor' && !v.filled) };
}
