// CodeLens above each prompt of a prompt file: "▶ Profile", "Profile with…", "Prefix cache check", and after a run its
// result in place. Reading the file is the engine's parsePromptFile (promptVariables.ts), on the prompt
// reader's worker thread, with the answers remembered for the file; which lenses show is promptModel.ts `lensPlan`: a file that cannot be
// profiled gets its reason first and no run lens, its warnings (a few), and the variables still to fill.
// Registration follows the llmProfiler.codeLens settings. With a baseline pinned for the file, the last
// run's lens says how it compares (baselineText.ts).
import * as vscode from 'vscode';
import { Command } from './commands';
import type { ConfigService } from './config';
import { Disposable } from './dispose';
import { lensResult, lensVerdict, runName } from '../present/runText';
import { PROMPT_FILE_GLOBS } from './promptFileKinds';
import { lensPlan } from './promptModel';
import { parseWithAnswers, type PromptAnswers } from './promptVariables';
import type { PromptReader } from './promptWorker/client';
import type { RunsModel } from './runsModel';
import type { RunIndexEntry } from './runStore';
import type { BaselineService } from './baselineService';
import { baselineLens } from './baselineText';
import { hostClock } from './clock';

export class PromptCodeLens extends Disposable implements vscode.CodeLensProvider {
  readonly #onDidChange = this._register(new vscode.EventEmitter<void>());
  readonly onDidChangeCodeLenses = this.#onDidChange.event;
  #registration: vscode.Disposable | undefined;
  #registeredFor = '';

  constructor(private readonly config: ConfigService, private readonly runs: RunsModel, private readonly answers: PromptAnswers, private readonly reader: PromptReader,
    private readonly baselines: Pick<BaselineService, 'verdict' | 'scopesOf' | 'onDidChange'>) {
    super();
    this.#sync();
    this._register(baselines.onDidChange(() => this.#onDidChange.fire()));
    this._register(config.onDidChange(() => { this.#sync(); this.#onDidChange.fire(); }));
    this._register(runs.onDidChange(() => this.#onDidChange.fire()));
    this._register(answers.onDidChange(() => this.#onDidChange.fire()));
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

  /**
   * The last run's result in place: against the prompt file's baseline when it has one ("TTFT p50 41 ms
   * · +12% vs baseline (slower)", opening the comparison), else its figures (opening the run). The
   * comparison is worked out on its own thread the first time; the lens follows when it is done.
   */
  #resultLens(range: vscode.Range, run: RunIndexEntry): vscode.CodeLens {
    const lastRun = runName(run, { clock: hostClock() });
    const against = this.baselines.verdict(run);
    // the endpoint's baseline of another workload (synthetic prompts) says nothing of this prompt: not shown
    const lens = against && !(against.scope === 'endpoint' && against.state === 'not-comparable') ? baselineLens(against, hostClock()) : undefined;
    if (against && lens) {
      return new vscode.CodeLens(range, { title: lens.title, tooltip: `${lens.tooltip}\nLast run: ${lastRun}`, command: Command.CompareRuns, arguments: [against.base.id, run.id] });
    }
    const pinned = this.baselines.scopesOf(run.id).length > 0;
    return new vscode.CodeLens(range, { title: `${lensResult(run)}${pinned ? ' · baseline' : ''}`, tooltip: `Last run: ${lastRun}${pinned ? ' (pinned as a baseline)' : ''}: open it`, command: Command.OpenRun, arguments: [run.id] });
  }

  async provideCodeLenses(doc: vscode.TextDocument, token: vscode.CancellationToken): Promise<vscode.CodeLens[]> {
    // read on the prompt reader's thread; a read the token cancelled is dropped
    const parsed = await parseWithAnswers(this.reader, doc, this.answers, token);
    if (!parsed || token.isCancellationRequested) return [];
    const last = Math.max(0, doc.lineCount - 1);
    const at = (line: number) => { const l = Math.min(Math.max(0, line), last); return new vscode.Range(l, 0, l, 0); };
    const lenses: vscode.CodeLens[] = [];
    for (const item of lensPlan(parsed)) {
      switch (item.kind) {
        case 'refusal':
        case 'warning': {
          const range = at(item.line);
          const refusal = item.kind === 'refusal';
          lenses.push(new vscode.CodeLens(range, {
            title: `$(${refusal ? 'error' : 'warning'}) ${item.message}`,
            tooltip: refusal ? 'This prompt file cannot be profiled as it is' : 'A problem in this prompt file (it can still be profiled)',
            command: Command.ShowPromptProblem,
            arguments: [doc.uri, range, item.message, refusal ? 'error' : 'warning'],
          }));
          break;
        }
        case 'moreWarnings': {
          const range = at(item.line);
          lenses.push(new vscode.CodeLens(range, { title: item.title, tooltip: item.messages.join('\n'), command: Command.ShowPromptProblem, arguments: [doc.uri, range, item.messages.join('; '), 'warning'] }));
          break;
        }
        case 'fill': {
          const range = at(item.line);
          lenses.push(new vscode.CodeLens(range, { title: item.title, tooltip: 'Give these variables values (remembered for this file)', command: Command.FillPromptVariables, arguments: [doc.uri] }));
          break;
        }
        case 'prompt': {
          const p = parsed.prompts[item.index]!;
          const start = Math.min(p.range.startLine, last);
          const end = Math.min(Math.max(start, p.range.endLine), last);
          const range = new vscode.Range(start, 0, end, 0);
          const name = p.name ? ` "${p.name}"` : '';
          const first = lenses.length;
          lenses.push(new vscode.CodeLens(range, { title: '▶ Profile', tooltip: `Profile this prompt${name} (quick check)`, command: Command.ProfilePrompt, arguments: [doc.uri, range] }));
          lenses.push(new vscode.CodeLens(range, { title: 'Profile with…', tooltip: `Choose an endpoint and workload for this prompt${name}`, command: Command.ProfilePromptWith, arguments: [doc.uri, range] }));
          lenses.push(new vscode.CodeLens(range, {
            title: 'Prefix cache check',
            tooltip: `Send this prompt${name} cold, again and varied: does the endpoint serve it from its prefix cache?`,
            command: Command.ProfilePrompt,
            arguments: [doc.uri, range, { preset: 'cache-check' }],
          }));
          const run = this.runs.latestForPrompt(doc.uri.fsPath, start);
          if (run) {
            // the SLO where the prompt lives wins over the settings' one, as for the run itself
            const verdict = lensVerdict(run, parsed.slo ?? this.config.current.slo);
            // first on its line, and short: a narrow editor (the report open beside) cuts a line of lenses at its end
            if (verdict) lenses.splice(first, 0, new vscode.CodeLens(range, { title: verdict.title, tooltip: `${verdict.tooltip}\nLast run: ${runName(run, { clock: hostClock() })}: open it`, command: Command.OpenRun, arguments: [run.id] }));
            lenses.push(this.#resultLens(range, run));
          }
          break;
        }
      }
    }
    return lenses;
  }
}
