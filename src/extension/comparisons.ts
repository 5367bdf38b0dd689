// Each run against its baseline, for the CodeLens and the sidebar: worked out lazily (on the comparison
// thread, compareThread.ts), once per pair, and kept by (run id, baseline id) — a run file never
// changes once written. Asking is synchronous and never waits: what is not known yet is worked out and
// the listeners are told when it is. No `vscode`: tested under node.
import type { CompareRow } from '../engine/analysis/compare';
import type { BaselineScope, BaselineStore } from './baselines';
import type { ComparedPair } from './compareThread';
import type { RunIndexEntry } from './runStore';

/** Works out BASE (the baseline) against NEW (the run) from their files. */
export type ComparePaths = (basePath: string, runPath: string) => Promise<ComparedPair>;

/** Pairs kept at most (the sidebar lists 30 runs; the CodeLens a run per prompt): the oldest asked goes first. */
const MAX_PAIRS = 200;

type Known = { readonly state: 'pending' } | { readonly state: 'done'; readonly pair: ComparedPair } | { readonly state: 'failed'; readonly message: string };

export class Comparisons {
  readonly #compare: ComparePaths;
  readonly #known = new Map<string, Known>();
  readonly #listeners = new Set<() => void>();

  constructor(compare: ComparePaths) {
    this.#compare = compare;
  }

  onDidChange(listener: () => void): { dispose(): void } {
    this.#listeners.add(listener);
    return { dispose: () => { this.#listeners.delete(listener); } };
  }

  /** What is known of NEW against BASE; starts working it out when nothing is. */
  peek(base: Pick<RunIndexEntry, 'id' | 'path'>, run: Pick<RunIndexEntry, 'id' | 'path'>): Known {
    const key = `${run.id}|${base.id}`;
    const known = this.#known.get(key);
    if (known) {
      // asked again: the newest, kept longest
      this.#known.delete(key);
      this.#known.set(key, known);
      return known;
    }
    const pending: Known = { state: 'pending' };
    this.#known.set(key, pending);
    while (this.#known.size > MAX_PAIRS) this.#known.delete(this.#known.keys().next().value!);
    this.#compare(base.path, run.path).then(
      (pair) => this.#settle(key, pending, { state: 'done', pair }),
      (e: unknown) => this.#settle(key, pending, { state: 'failed', message: e instanceof Error ? e.message : String(e) }),
    );
    return pending;
  }

  /** Forgets every pair a run is in (its file was deleted). */
  forget(runId: string): void {
    for (const key of [...this.#known.keys()]) if (key.split('|').includes(runId)) this.#known.delete(key);
  }

  #settle(key: string, was: Known, now: Known): void {
    if (this.#known.get(key) !== was) return;
    this.#known.set(key, now);
    for (const l of this.#listeners) l();
  }
}

/** A run against its baseline, as the CodeLens and the sidebar show it. */
export type BaselineVerdict = { readonly base: RunIndexEntry; readonly scope: BaselineScope } & (
  | { readonly state: 'pending' }
  | { readonly state: 'failed'; readonly message: string }
  /** Not the same workload (src/engine/analysis/comparable.ts refuses it): no verdict. */
  | { readonly state: 'not-comparable'; readonly reasons: readonly string[] }
  | { readonly state: 'compared'; readonly pair: ComparedPair; readonly regressed: readonly CompareRow[] }
);

/** What counts as a regression against a baseline: a latency's p50 or p90, or the output throughput, called slower. */
export function regressedRows(pair: ComparedPair): CompareRow[] {
  return pair.comparison.rows.filter((r) => r.verdict === 'slower' && (r.metric === 'throughput' || r.stat === 'p50' || r.stat === 'p90'));
}

/** The run's baseline (its prompt file's, else its endpoint's) and the run against it, as far as it is known. */
export function baselineVerdict(store: BaselineStore, comparisons: Comparisons, run: RunIndexEntry, runs: readonly RunIndexEntry[]): BaselineVerdict | undefined {
  const found = store.baselineOf(run, runs);
  if (!found) return undefined;
  const known = comparisons.peek(found.base, run);
  if (known.state !== 'done') return { ...found, ...known };
  const refused = known.pair.problems.filter((p) => p.severity === 'refuse');
  if (refused.length) return { ...found, state: 'not-comparable', reasons: refused.map((p) => p.message) };
  return { ...found, state: 'compared', pair: known.pair, regressed: regressedRows(known.pair) };
}
