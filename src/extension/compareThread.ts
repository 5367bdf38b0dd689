// The extension host's comparisons, on a worker thread: a bootstrap over two runs of a thousand
// requests takes about two seconds, which on the host's thread would freeze the editor (the CodeLens,
// the sidebar). One long-lived thread (dist/files.js started with COMPARE_ROLE, compareWork.ts), started
// on the first comparison, one job at a time, each with a deadline; a thread past it is stopped and
// the next job starts a fresh one. When the thread cannot start, the comparison is worked out on the
// host's thread with fewer resamples. No `vscode`: tested under node with the real bundle.
import { existsSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import type { Comparison } from '../engine/analysis/compare';
import type { ComparableProblem } from '../engine/analysis/comparable';

/** The role dist/files.js is started with to serve comparisons. */
export const COMPARE_ROLE = 'llmProfiler.compare';

/** B against A and what makes them hard to compare (src/engine/analysis/comparable.ts). */
export interface ComparedPair {
  readonly comparison: Comparison;
  readonly problems: readonly ComparableProblem[];
}

export interface CompareJob {
  readonly id: number;
  readonly basePath: string;
  readonly runPath: string;
  readonly resamples?: number;
}

export type CompareReply = { readonly ready: true } | { readonly id: number; readonly pair: ComparedPair } | { readonly id: number; readonly error: string };

/** A comparison may take this long on the thread (two runs of 100,000 requests take about a minute). */
const DEADLINE_MS = 180_000;
/** Resamples when the host's own thread has to do it: a quarter of the engine's default, so a large pair holds it less. */
export const IN_HOST_RESAMPLES = 500;

export interface CompareThreadOptions {
  /** dist/files.js beside dist/extension.js. */
  readonly workerFile: string;
  /** The same work on the host's thread (compareWork.ts compareFiles), when the thread cannot start. */
  readonly inThread: (job: Omit<CompareJob, 'id'>) => Promise<ComparedPair>;
  readonly deadlineMs?: number;
  readonly log?: (line: string) => void;
}

interface Pending {
  readonly job: CompareJob;
  readonly resolve: (p: ComparedPair) => void;
  readonly reject: (e: Error) => void;
  timer?: NodeJS.Timeout;
}

export class CompareThread {
  readonly #o: CompareThreadOptions;
  readonly #queue: Pending[] = [];
  #current: Pending | undefined;
  #worker: Worker | undefined;
  #cannotStart: string | undefined;
  #nextId = 1;
  #disposed = false;

  constructor(options: CompareThreadOptions) {
    this.#o = options;
  }

  /** BASE's file against NEW's; rejects with the reason when they cannot be read or compared. */
  compare(basePath: string, runPath: string): Promise<ComparedPair> {
    if (this.#disposed) return Promise.reject(new Error('the extension is stopping'));
    return new Promise((resolve, reject) => {
      this.#queue.push({ job: { id: this.#nextId++, basePath, runPath }, resolve, reject });
      this.#next();
    });
  }

  dispose(): void {
    if (this.#disposed) return;
    this.#disposed = true;
    void this.#worker?.terminate();
    this.#worker = undefined;
    const gone = new Error('the extension is stopping');
    if (this.#current) { clearTimeout(this.#current.timer); this.#current.reject(gone); this.#current = undefined; }
    for (const p of this.#queue.splice(0)) p.reject(gone);
  }

  #next(): void {
    if (this.#current || this.#disposed) return;
    const p = this.#queue.shift();
    if (!p) return;
    this.#current = p;
    const worker = this.#thread();
    if (!worker) {
      const { id: _id, ...job } = p.job;
      this.#o.inThread({ ...job, resamples: IN_HOST_RESAMPLES }).then((pair) => this.#settle(p, pair), (e: unknown) => this.#settle(p, undefined, e));
      return;
    }
    p.timer = setTimeout(() => {
      this.#o.log?.(`comparison thread: stopped after ${this.#o.deadlineMs ?? DEADLINE_MS} ms on ${p.job.runPath}`);
      this.#stopThread();
      this.#settle(p, undefined, new Error('the comparison took too long'));
    }, this.#o.deadlineMs ?? DEADLINE_MS);
    worker.postMessage(p.job);
  }

  #settle(p: Pending, pair: ComparedPair | undefined, error?: unknown): void {
    if (this.#current !== p) return;
    clearTimeout(p.timer);
    this.#current = undefined;
    if (pair) p.resolve(pair);
    else p.reject(error instanceof Error ? error : new Error(String(error)));
    this.#next();
  }

  #thread(): Worker | undefined {
    if (this.#worker) return this.#worker;
    if (this.#cannotStart) return undefined;
    if (!existsSync(this.#o.workerFile)) {
      this.#cannotStart = `${this.#o.workerFile} is missing`;
      this.#o.log?.(`comparison thread: cannot start (${this.#cannotStart}); comparing on the extension host's thread with ${IN_HOST_RESAMPLES} resamples`);
      return undefined;
    }
    let w: Worker;
    try {
      w = new Worker(this.#o.workerFile, { workerData: { role: COMPARE_ROLE }, env: {}, execArgv: [] });
    } catch (e) {
      this.#cannotStart = (e as Error).message;
      this.#o.log?.(`comparison thread: cannot start (${this.#cannotStart}); comparing on the extension host's thread with ${IN_HOST_RESAMPLES} resamples`);
      return undefined;
    }
    w.unref();
    w.on('message', (m: CompareReply) => {
      const p = this.#current;
      if ('ready' in m || !p || m.id !== p.job.id) return;
      if ('pair' in m) this.#settle(p, m.pair);
      else this.#settle(p, undefined, new Error(m.error));
    });
    const lost = (why: string) => {
      if (this.#worker !== w) return;
      this.#worker = undefined;
      this.#o.log?.(`comparison thread: ${why}`);
      if (this.#current) this.#settle(this.#current, undefined, new Error(`the comparison thread stopped: ${why}`));
    };
    w.on('error', (e) => lost(e.message));
    w.on('exit', (code) => lost(`exited (${code})`));
    this.#worker = w;
    return w;
  }

  #stopThread(): void {
    const w = this.#worker;
    this.#worker = undefined;
    void w?.terminate();
  }
}
