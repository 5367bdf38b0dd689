// Baselines: a run pinned as what later runs of its endpoint (its URL and model) or of its prompt file
// are compared with. Kept in the workspace's state (a Memento), so a pin survives a reload; the state
// holds run ids only (the runs stay in their files). No `vscode` import: tested under node.
import type { RunIndexEntry } from './runStore';

/** What a run is the baseline of: its endpoint (URL and model), or its prompt file. */
export type BaselineScope = 'endpoint' | 'promptFile';

export const BASELINE_SCOPES: readonly BaselineScope[] = ['promptFile', 'endpoint'];

/** The part of VS Code's Memento (ExtensionContext.workspaceState) the store uses. */
export interface StateStore {
  get<T>(key: string): T | undefined;
  update(key: string, value: unknown): PromiseLike<void>;
}

/** The workspace state's key; its value: { version, endpoint: { key: runId }, promptFile: { path: runId } }. */
export const BASELINES_KEY = 'llmProfiler.baselines';

interface Stored {
  readonly version: 1;
  readonly endpoint: Readonly<Record<string, string>>;
  readonly promptFile: Readonly<Record<string, string>>;
}

/** A run as far as its baselines go: the fields of the run list's entry that key them. */
export type BaselineSubject = Pick<RunIndexEntry, 'id' | 'url' | 'model' | 'promptFile' | 'promptRef' | 'startedAt'>;

/** Two runs of one prompt file sent the same prompt of it: a file of several prompts has a baseline per file, compared prompt with prompt. */
export function samePrompt(a: Pick<RunIndexEntry, 'promptRef'>, b: Pick<RunIndexEntry, 'promptRef'>): boolean {
  const [x, y] = [a.promptRef, b.promptRef];
  if (!x || !y) return true;
  return x.name !== undefined && y.name !== undefined ? x.name === y.name : x.startLine === y.startLine;
}

/** An endpoint's key: its URL without trailing slashes (scheme and host as URL writes them), then its model. */
export function endpointKey(url: string, model: string | undefined): string {
  let u = url.trim();
  try {
    const parsed = new URL(u);
    u = `${parsed.protocol}//${parsed.host}${parsed.pathname}${parsed.search}`;
  } catch {
    // not a URL (an imported run's made-up endpoint): as it is
  }
  return `${u.replace(/\/+$/, '')} ${model ?? ''}`.trimEnd();
}

/** The key of a run under a scope, or undefined when it has none there (no prompt file). */
export function keyOf(run: Pick<BaselineSubject, 'url' | 'model' | 'promptFile'>, scope: BaselineScope): string | undefined {
  return scope === 'endpoint' ? endpointKey(run.url, run.model) : run.promptFile;
}

/** A map for keys a user's files name (paths, URLs): no prototype, so "__proto__" is a key like any other. */
function record(from: unknown): Record<string, string> {
  const out = Object.create(null) as Record<string, string>;
  if (from && typeof from === 'object') {
    for (const [k, v] of Object.entries(from)) if (typeof v === 'string') out[k] = v;
  }
  return out;
}

export class BaselineStore {
  readonly #state: StateStore;
  readonly #listeners = new Set<() => void>();

  constructor(state: StateStore) {
    this.#state = state;
  }

  #read(): { endpoint: Record<string, string>; promptFile: Record<string, string> } {
    const raw = this.#state.get<Partial<Stored>>(BASELINES_KEY);
    return { endpoint: record(raw?.endpoint), promptFile: record(raw?.promptFile) };
  }

  async #write(next: { endpoint: Record<string, string>; promptFile: Record<string, string> }): Promise<void> {
    const value: Stored = { version: 1, endpoint: { ...next.endpoint }, promptFile: { ...next.promptFile } };
    await this.#state.update(BASELINES_KEY, value);
    for (const l of this.#listeners) l();
  }

  /** Called after every pin and unpin. */
  onDidChange(listener: () => void): { dispose(): void } {
    this.#listeners.add(listener);
    return { dispose: () => { this.#listeners.delete(listener); } };
  }

  /** The run pinned for this key, if any. */
  get(scope: BaselineScope, key: string): string | undefined {
    return this.#read()[scope][key];
  }

  /** Every pin: scope, key and run. */
  all(): { readonly scope: BaselineScope; readonly key: string; readonly runId: string }[] {
    const s = this.#read();
    return BASELINE_SCOPES.flatMap((scope) => Object.entries(s[scope]).map(([key, runId]) => ({ scope, key, runId })));
  }

  /** The scopes this run is the baseline of. */
  scopesOf(runId: string): BaselineScope[] {
    return [...new Set(this.all().filter((p) => p.runId === runId).map((p) => p.scope))];
  }

  /** Pins the run as the baseline of its endpoint or its prompt file (replacing the one pinned there). Throws when the run has no prompt file. */
  async pin(run: Pick<BaselineSubject, 'id' | 'url' | 'model' | 'promptFile'>, scope: BaselineScope): Promise<string> {
    const key = keyOf(run, scope);
    if (key === undefined) throw new Error(`the run ${run.id} was not sent from a prompt file`);
    const s = this.#read();
    s[scope][key] = run.id;
    await this.#write(s);
    return key;
  }

  /** Unpins the run wherever it is a baseline (all scopes, or one); the number of pins removed. */
  async unpin(runId: string, scope?: BaselineScope): Promise<number> {
    const s = this.#read();
    let removed = 0;
    for (const sc of scope ? [scope] : BASELINE_SCOPES) {
      for (const [k, v] of Object.entries(s[sc])) if (v === runId) { delete s[sc][k]; removed++; }
    }
    if (removed) await this.#write(s);
    return removed;
  }

  /**
   * The baseline a run is compared with: its prompt file's, else its endpoint's; never itself, never a
   * run started after it (a baseline is what came before), never another prompt of the same file.
   * `runs` is the run list, to find the pinned run.
   */
  baselineOf(run: BaselineSubject, runs: readonly RunIndexEntry[]): { readonly scope: BaselineScope; readonly base: RunIndexEntry } | undefined {
    const s = this.#read();
    for (const scope of BASELINE_SCOPES) {
      const key = keyOf(run, scope);
      const id = key === undefined ? undefined : s[scope][key];
      if (id === undefined || id === run.id) continue;
      const base = runs.find((r) => r.id === id);
      if (!base || base.startedAt >= run.startedAt) continue;
      // a file's other prompt is another workload: nothing to say against it
      if (scope === 'promptFile' && !samePrompt(run, base)) return undefined;
      return { scope, base };
    }
    return undefined;
  }
}
