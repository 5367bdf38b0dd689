// A prompt file's problems where VS Code shows problems: a squiggle at the refusal's line and column
// (an error: the file cannot be profiled) and at each warning (the file can), and an entry each in the
// Problems panel. The same read as the CodeLens (promptVariables.ts parseWithAnswers, on the prompt
// reader's thread, with the answers remembered for the file), for each open prompt file, again after
// each edit (debounced) and when the answers or the prompt-file globs change; cleared when it closes.
import * as vscode from 'vscode';
import type { PromptFileProblem } from '../engine/prompts/formats/types';
import type { ConfigService } from './config';
import { Disposable } from './dispose';
import { PROMPT_FILE_GLOBS } from './promptFileKinds';
import { problemSpan } from './promptModel';
import { parseWithAnswers, type PromptAnswers } from './promptVariables';
import type { PromptReader } from './promptWorker/client';
import type { DocumentParse } from './promptWorker/request';

/** Edits come in bursts: the file is read again once typing pauses this long. */
const EDIT_PAUSE_MS = 300;

/** The diagnostics of one read: the refusal (an error), then the warnings, each at its line and column. */
export function promptDiagnostics(doc: Pick<vscode.TextDocument, 'lineCount' | 'lineAt'>, parsed: Pick<DocumentParse, 'refusal' | 'warnings'>): vscode.Diagnostic[] {
  const at = (p: PromptFileProblem, severity: vscode.DiagnosticSeverity): vscode.Diagnostic => {
    const line = Math.min(Math.max(0, p.line ?? 0), Math.max(0, doc.lineCount - 1));
    const span = problemSpan(doc.lineAt(line).text, p.column);
    const d = new vscode.Diagnostic(new vscode.Range(line, span.start, line, span.end), p.message, severity);
    d.source = 'LLM Profiler';
    return d;
  };
  return [
    ...(parsed.refusal ? [at(parsed.refusal, vscode.DiagnosticSeverity.Error)] : []),
    ...parsed.warnings.map((w) => at(w, vscode.DiagnosticSeverity.Warning)),
  ];
}

export class PromptDiagnostics extends Disposable {
  readonly #collection = this._register(vscode.languages.createDiagnosticCollection('llmProfiler'));
  readonly #timers = new Map<string, ReturnType<typeof setTimeout>>();
  /** Each document's read in progress: a later one cancels it. */
  readonly #reads = new Map<string, vscode.CancellationTokenSource>();

  constructor(private readonly config: ConfigService, private readonly reader: PromptReader, private readonly answers: PromptAnswers) {
    super();
    this._register(vscode.workspace.onDidOpenTextDocument((d) => this.#schedule(d, 0)));
    this._register(vscode.workspace.onDidChangeTextDocument((e) => { if (e.contentChanges.length) this.#schedule(e.document, EDIT_PAUSE_MS); }));
    this._register(vscode.workspace.onDidCloseTextDocument((d) => this.#forget(d.uri)));
    this._register(answers.onDidChange(() => this.#all()));
    this._register(config.onDidChange(() => this.#all()));
    this._register({ dispose: () => { for (const t of this.#timers.values()) clearTimeout(t); for (const r of this.#reads.values()) r.cancel(); } });
    // the documents already open when the extension starts (read after activation: never inside it)
    this.#all();
  }

  #selector(): vscode.DocumentFilter[] {
    return [...PROMPT_FILE_GLOBS, ...this.config.current.codeLens.extraGlobs].flatMap((pattern) => [{ scheme: 'file', pattern }, { scheme: 'untitled', pattern }]);
  }

  #all(): void {
    for (const d of vscode.workspace.textDocuments) this.#schedule(d, 0);
  }

  #schedule(doc: vscode.TextDocument, delayMs: number): void {
    const key = doc.uri.toString();
    if (vscode.languages.match(this.#selector(), doc) === 0) {
      if (this.#collection.has(doc.uri)) this.#forget(doc.uri);
      return;
    }
    clearTimeout(this.#timers.get(key));
    this.#timers.set(key, setTimeout(() => { this.#timers.delete(key); void this.#update(doc); }, delayMs));
  }

  #forget(uri: vscode.Uri): void {
    const key = uri.toString();
    clearTimeout(this.#timers.get(key));
    this.#timers.delete(key);
    this.#reads.get(key)?.cancel();
    this.#reads.delete(key);
    this.#collection.delete(uri);
  }

  async #update(doc: vscode.TextDocument): Promise<void> {
    const key = doc.uri.toString();
    this.#reads.get(key)?.cancel();
    const source = new vscode.CancellationTokenSource();
    this.#reads.set(key, source);
    const version = doc.version;
    const parsed = await parseWithAnswers(this.reader, doc, this.answers, source.token);
    if (this.#reads.get(key) === source) this.#reads.delete(key);
    source.dispose();
    // a stale read (cancelled, the document edited or closed since, the extension gone): a later read decides
    if (!parsed || this.isDisposed || doc.isClosed || doc.version !== version) return;
    this.#collection.set(doc.uri, promptDiagnostics(doc, parsed));
  }
}
