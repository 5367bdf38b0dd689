// The baselines as the editor uses them: the pins (baselines.ts, in the workspace's state), each run
// against its baseline worked out lazily on the comparison thread (comparisons.ts, compareThread.ts),
// and one event when either changes (the CodeLens and the sidebar redraw). A deleted run is unpinned.
import * as vscode from 'vscode';
import { BaselineStore, type BaselineScope } from './baselines';
import { baselineVerdict, Comparisons, type BaselineVerdict } from './comparisons';
import { CompareThread } from './compareThread';
import { Disposable } from './dispose';
import { loadFiles } from './lazy';
import type { Log } from './log';
import type { RunsModel } from './runsModel';
import type { RunIndexEntry } from './runStore';

export class BaselineService extends Disposable {
  readonly store: BaselineStore;
  readonly #comparisons: Comparisons;
  readonly #runs: RunsModel;
  readonly #onDidChange = this._register(new vscode.EventEmitter<void>());
  readonly onDidChange = this.#onDidChange.event;

  constructor(context: Pick<vscode.ExtensionContext, 'workspaceState' | 'asAbsolutePath'>, runs: RunsModel, log: Pick<Log, 'info'>) {
    super();
    this.#runs = runs;
    this.store = new BaselineStore(context.workspaceState);
    const thread = new CompareThread({
      workerFile: context.asAbsolutePath('dist/files.js'),
      inThread: async (job) => { const m = await loadFiles(); return m.compareFiles(m.readRunFile, job); },
      log: (line) => log.info(line),
    });
    this._register({ dispose: () => thread.dispose() });
    this.#comparisons = new Comparisons((basePath, runPath) => thread.compare(basePath, runPath));
    const fire = () => { if (!this.isDisposed) this.#onDidChange.fire(); };
    this._register(this.store.onDidChange(fire));
    this._register(this.#comparisons.onDidChange(fire));
  }

  /** The run against its baseline, as far as it is known now (what is not is worked out, and onDidChange fires). */
  verdict(run: RunIndexEntry): BaselineVerdict | undefined {
    return baselineVerdict(this.store, this.#comparisons, run, this.#runs.runs);
  }

  scopesOf(runId: string): BaselineScope[] {
    return this.store.scopesOf(runId);
  }

  /** A run's file was deleted: it is nobody's baseline any more, and its comparisons are forgotten. */
  async forgetRun(runId: string): Promise<void> {
    this.#comparisons.forget(runId);
    await this.store.unpin(runId);
  }
}
