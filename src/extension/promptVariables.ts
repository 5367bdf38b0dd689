// Prompt files in the editor: one parse for the CodeLens and the commands (the engine's reader, with
// what the prompt may pull in: its project's files, the environment when trusted), the answers to a
// file's variables remembered per file in the workspace state, and the flow that asks for the missing
// ones. The rules (what to ask, what to keep, what may be read, the editor's variables) are pure, in
// promptModel.ts.
import * as vscode from 'vscode';
import type { PromptFileParse, PromptFileVariable } from '../engine/promptFiles';
import type { PromptAccess } from '../engine/siblingFiles';
import type { PromptPulledIn } from '../engine/types';
import { Disposable } from './dispose';
import { loadFiles, type FilesModule } from './lazy';
import { parserFileName } from './promptFileKinds';
import {
  answersToRemember, applicableAnswers, askPrompt, askTitle, documentAccessOptions, editorValues, initialAnswer, looksSecret, variablesToAsk,
  type Answers, type EditorState,
} from './promptModel';

/** A prompt file read in the editor, with what it pulled in (files, environment variables). */
export interface DocumentParse extends PromptFileParse {
  readonly pulledIn?: PromptPulledIn;
}

/** What a document may pull in (promptModel.ts `documentAccessOptions`); only for documents on disk. */
function documentAccess(files: FilesModule, doc: vscode.TextDocument): PromptAccess | undefined {
  if (doc.uri.scheme !== 'file') return undefined;
  const folders = (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === 'file').map((f) => f.uri.fsPath);
  return files.promptAccess(documentAccessOptions(doc.uri.fsPath, vscode.workspace.isTrusted, folders, process.env));
}

/** Parses a document with the engine's reader (loaded on first use), with the caller's values. Never throws. */
export async function parseDocument(doc: vscode.TextDocument, vars?: Readonly<Record<string, unknown>>): Promise<DocumentParse> {
  try {
    const files = await loadFiles();
    const access = documentAccess(files, doc);
    const parsed = files.parsePromptFile(parserFileName(doc.fileName), doc.getText(), {
      ...(vars ? { vars } : {}),
      ...(access ? { readFile: access.readFile, readEnv: access.readEnv } : {}),
    });
    const pulledIn = files.anyPulledIn(access?.pulledIn());
    return pulledIn ? { ...parsed, pulledIn } : parsed;
  } catch (err) {
    return { kind: 'text', prompts: [], refusal: { message: `could not read this prompt file: ${(err as Error).message}` }, warnings: [], variables: [] };
  }
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

  constructor(private readonly state: vscode.Memento) {
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

/** The file parsed with the answers remembered for it (the CodeLens: no editor variables, so that lenses do not follow the selection). */
export async function parseWithAnswers(doc: vscode.TextDocument, answers: PromptAnswers): Promise<DocumentParse> {
  const base = await parseDocument(doc);
  const remembered = applicableAnswers(base.variables, answers.get(doc.uri));
  return Object.keys(remembered).length === 0 ? base : parseDocument(doc, remembered);
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

/**
 * Asks for the file's input variables ('missing': those never answered, ▶ Profile; 'all': each again
 * with the last answer filled in, Profile with…), remembers the answers, and reads the file again with
 * them and the editor's variables. Undefined when the user pressed Esc: nothing runs.
 */
export async function fillVariables(answers: PromptAnswers, doc: vscode.TextDocument, mode: 'missing' | 'all', editor: EditorState): Promise<FilledPrompts | undefined> {
  const base = await parseDocument(doc);
  const remembered = answers.get(doc.uri);
  const toAsk = variablesToAsk(base.variables, remembered, mode);
  const given: Record<string, string> = {};
  for (const [i, v] of toAsk.entries()) {
    const value = await vscode.window.showInputBox({
      title: askTitle(v, i + 1, toAsk.length),
      prompt: askPrompt(v, doc.fileName),
      value: initialAnswer(v, remembered),
      password: looksSecret(v.name),
      ignoreFocusOut: true,
    });
    if (value === undefined) return undefined;
    given[v.name] = value;
  }
  if (Object.keys(given).length > 0) await answers.remember(doc.uri, given);
  const values: Record<string, string> = {
    ...editorValues(editor, base.variables.filter((v) => v.kind === 'editor').map((v) => v.name)),
    ...applicableAnswers(base.variables, remembered),
    ...given,
  };
  const parse = Object.keys(values).length > 0 ? await parseDocument(doc, values) : base;
  return { parse, vars: values, unfilledEditor: parse.variables.filter((v) => v.kind === 'editor' && !v.filled) };
}
