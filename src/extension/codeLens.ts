// CodeLens above each prompt of a prompt file: "▶ Profile", "Profile with…", "Prefix cache check", and after a run its
// result in place. Finding the prompts is the engine's pure parsePromptFile; a malformed file gets
// a lens saying what is wrong. Registration follows the llmProfiler.codeLens settings.
import * as vscode from 'vscode';
import type { PromptFileParse } from '../engine/promptFiles';
import { Command } from './commands';
import type { ConfigService } from './config';
import { Disposable } from './dispose';
import { lensResult } from '../present/runText';
import { PROMPT_FILE_GLOBS, parserFileName } from './promptFileKinds';
import type { RunsModel } from './runsModel';
import { loadFiles } from './lazy';

/** Parses a document with the engine's parser (loaded on first use). Never throws. */
export async function parseDocument(doc: vscode.TextDocument): Promise<PromptFileParse> {
  try {
    const { parsePromptFile } = await loadFiles();
    return parsePromptFile(parserFileName(doc.fileName), doc.getText());
  } catch (err) {
    return { prompts: [], errors: [{ message: `could not read this prompt file: ${(err as Error).message}` }] };
  }
}

export class PromptCodeLens extends Disposable implements vscode.CodeLensProvider {
  readonly #onDidChange = this._register(new vscode.EventEmitter<void>());
  readonly onDidChangeCodeLenses = this.#onDidChange.event;
  #registration: vscode.Disposable | undefined;
  #registeredFor = '';

  constructor(private readonly config: ConfigService, private readonly runs: RunsModel) {
    super();
    this.#sync();
    this._register(config.onDidChange(() => { this.#sync(); this.#onDidChange.fire(); }));
    this._register(runs.onDidChange(() => this.#onDidChange.fire()));
    this._register({ dispose: () => this.#registration?.dispose() });
  }

  #sync(): void {
    const { enabled, extraGlobs } = this.config.current.codeLens;
    const key = enabled ? JSON.stringify(extraGlobs) : '';
    if (key === this.#registeredFor && (enabled ? this.#registration : !this.#registration)) return;
    this.#registration?.dispose();
    this.#registration = undefined;
    this.#registeredFor = key;
    if (!enabled) return;
    const selector: vscode.DocumentFilter[] = [...PROMPT_FILE_GLOBS, ...extraGlobs].flatMap((pattern) => [
      { scheme: 'file', pattern }, { scheme: 'untitled', pattern },
    ]);
    this.#registration = vscode.languages.registerCodeLensProvider(selector, this);
  }

  async provideCodeLenses(doc: vscode.TextDocument, token: vscode.CancellationToken): Promise<vscode.CodeLens[]> {
    const parsed = await parseDocument(doc);
    if (token.isCancellationRequested) return [];
    const lenses: vscode.CodeLens[] = [];
    for (const e of parsed.errors) {
      const line = Math.min(Math.max(0, e.line ?? 0), Math.max(0, doc.lineCount - 1));
      const range = new vscode.Range(line, 0, line, 0);
      lenses.push(new vscode.CodeLens(range, {
        title: `$(warning) ${e.message}`,
        tooltip: 'This prompt file cannot be profiled as it is',
        command: Command.ShowPromptProblem,
        arguments: [doc.uri, range, e.message],
      }));
    }
    for (const p of parsed.prompts) {
      const start = Math.min(p.range.startLine, Math.max(0, doc.lineCount - 1));
      const end = Math.min(Math.max(start, p.range.endLine), Math.max(0, doc.lineCount - 1));
      const range = new vscode.Range(start, 0, end, 0);
      const name = p.name ? ` "${p.name}"` : '';
      lenses.push(new vscode.CodeLens(range, { title: '▶ Profile', tooltip: `Profile this prompt${name} (quick check)`, command: Command.ProfilePrompt, arguments: [doc.uri, range] }));
      lenses.push(new vscode.CodeLens(range, { title: 'Profile with…', tooltip: `Choose an endpoint and workload for this prompt${name}`, command: Command.ProfilePromptWith, arguments: [doc.uri, range] }));
      lenses.push(new vscode.CodeLens(range, {
        title: 'Prefix cache check',
        tooltip: `Send this prompt${name} cold, again and varied: does the endpoint serve it from its prefix cache?`,
        command: Command.ProfilePrompt,
        arguments: [doc.uri, range, { preset: 'cache-check' }],
      }));
      const last = this.runs.latestForPrompt(doc.uri.fsPath, start);
      if (last) {
        // the SLO where the prompt lives wins over the settings' one, as for the run itself
        const slo = parsed.slo ?? this.config.current.slo;
        lenses.push(new vscode.CodeLens(range, { title: lensResult(last, slo), tooltip: `Last run ${last.startedAt}: open it`, command: Command.OpenRun, arguments: [last.id] }));
      }
    }
    return lenses;
  }
}
