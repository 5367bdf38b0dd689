// The stored runs as the UI sees them: the last listing, kept in memory and refreshed after each
// save/delete, with an event for the sidebar and the CodeLens. Corrupt files are reported once each.
import * as vscode from 'vscode';
import { scrubRun } from '../engine/core/redact';
import type { RunFile } from '../engine/core/types';
import { Disposable } from './dispose';
import type { Log } from './log';
import { latestMeasuredOn, RunStore, type RunIndexEntry } from './runStore';

export class RunsModel extends Disposable {
  readonly store: RunStore;
  #runs: readonly RunIndexEntry[] = [];
  #problems: readonly { path: string; message: string }[] = [];
  readonly #reported = new Set<string>();
  #refreshing: Promise<void> | undefined;
  #again = false;
  #loaded = false;
  readonly #onDidChange = this._register(new vscode.EventEmitter<void>());
  readonly onDidChange = this.#onDidChange.event;

  constructor(dir: string, private readonly log: Log) {
    super();
    this.store = new RunStore(dir);
  }

  get runs(): readonly RunIndexEntry[] { return this.#runs; }
  get problems(): readonly { path: string; message: string }[] { return this.#problems; }
  get loaded(): boolean { return this.#loaded; }

  /** Re-lists the folder; concurrent calls coalesce. */
  refresh(): Promise<void> {
    if (this.#refreshing) { this.#again = true; return this.#refreshing; }
    this.#refreshing = (async () => {
      do {
        this.#again = false;
        try {
          const { runs, problems } = await this.store.list();
          if (this.isDisposed) return;
          this.#runs = runs;
          this.#problems = problems;
          for (const p of problems) {
            if (this.#reported.has(p.path)) continue;
            this.#reported.add(p.path);
            this.log.warn(`skipped a run file that cannot be read: ${p.path}: ${p.message}`);
            void vscode.window.showWarningMessage(`LLM Profiler: skipped a run file that cannot be read (${p.message}).`, 'Show log')
              .then((pick) => { if (pick) this.log.show(); });
          }
        } catch (err) {
          this.log.error(`could not list runs in ${this.store.dir}: ${(err as Error).message}`);
        }
      } while (this.#again && !this.isDisposed);
      this.#loaded = true;
      this.#onDidChange.fire();
    })().finally(() => { this.#refreshing = undefined; });
    return this.#refreshing;
  }

  /** Stores a run (a profile's, an import's) as the one scrubber leaves it: every secret this session knows removed. */
  async save(run: RunFile): Promise<string> {
    const path = await this.store.save(scrubRun(run, this.log.scrubber));
    await this.refresh();
    return path;
  }

  async delete(id: string): Promise<void> {
    await this.store.delete(id);
    await this.refresh();
  }

  load(id: string): Promise<RunFile> {
    return this.store.load(id);
  }

  latestForPrompt(file: string, startLine: number): RunIndexEntry | undefined {
    return this.#runs.find((r) => r.promptRef?.file === file && r.promptRef.startLine === startLine);
  }

  latestForUrl(url: string): RunIndexEntry | undefined {
    return latestMeasuredOn(this.#runs, url);
  }
}
