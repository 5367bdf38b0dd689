// Reads `llmProfiler.*` into the typed snapshot of configModel.ts, and re-reads it only when a
// change touches `llmProfiler`. Problems are logged and shown once per distinct set.
import * as vscode from 'vscode';
import { parseSlo } from '../engine/core/slo';
import { buildConfig, CONFIG_KEYS, type ConfigProblem, type ConfigSnapshot } from './configModel';
import { Disposable } from './dispose';
import type { Log } from './log';


function readConfig(): { config: ConfigSnapshot; problems: ConfigProblem[] } {
  const c = vscode.workspace.getConfiguration('llmProfiler');
  const values: Record<string, unknown> = {};
  for (const k of CONFIG_KEYS) values[k] = c.get(k);
  const ep = c.inspect<unknown>('endpoints');
  return buildConfig(
    { values, endpoints: { user: ep?.globalValue, workspace: ep?.workspaceFolderValue ?? ep?.workspaceValue } },
    parseSlo,
  );
}

export class ConfigService extends Disposable {
  #snapshot: ConfigSnapshot;
  #problems: ConfigProblem[];
  #shownProblems = '';
  readonly #onDidChange = this._register(new vscode.EventEmitter<ConfigSnapshot>());
  readonly onDidChange = this.#onDidChange.event;

  constructor(private readonly log: Log) {
    super();
    ({ config: this.#snapshot, problems: this.#problems } = readConfig());
    this.#report();
    this._register(vscode.workspace.onDidChangeConfiguration((e) => {
      if (!e.affectsConfiguration('llmProfiler')) return;
      ({ config: this.#snapshot, problems: this.#problems } = readConfig());
      this.#report();
      this.#onDidChange.fire(this.#snapshot);
    }));
  }

  get current(): ConfigSnapshot { return this.#snapshot; }
  get problems(): readonly ConfigProblem[] { return this.#problems; }

  #report(): void {
    const text = this.#problems.map((p) => `${p.setting}: ${p.message}`).join('\n');
    if (text === this.#shownProblems) return;
    this.#shownProblems = text;
    if (!text) return;
    for (const p of this.#problems) this.log.warn(`settings: ${p.setting}: ${p.message}`);
    void vscode.window.showWarningMessage(
      `LLM Profiler: ${this.#problems.length === 1 ? `${this.#problems[0]!.setting}: ${this.#problems[0]!.message}` : `${this.#problems.length} problems in settings (see the log)`}`,
      'Open settings', 'Show log',
    ).then((pick) => {
      if (pick === 'Open settings') void vscode.commands.executeCommand('workbench.action.openSettings', 'llmProfiler');
      else if (pick === 'Show log') this.log.show();
    });
  }
}
