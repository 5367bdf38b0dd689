// Works out a comparison off the page's thread: the bootstrap (src/engine/analysis/compare.ts) of two
// large runs takes seconds. The worker (compareWorker.ts) is bundled into this page's script as a
// string (esbuild.mjs, `worker-source:`) and started from a blob: URL, as VS Code lets a webview
// start workers; the page's CSP allows workers from blob: and nothing more (no fetch: a connect-src
// kept some report pages in code-server from loading). Should the worker not start, the page works it
// out itself, a task later and with fewer resamples (the method line says how many).
import WORKER_SOURCE from 'worker-source:webview/report/compareWorker.ts';
import { compareRuns, type Comparison } from '../../src/engine/analysis/compare';
import type { RunFile } from '../../src/engine/core/types';

export interface CompareRequest {
  readonly id: number;
  readonly base: RunFile;
  readonly next: RunFile;
  readonly resamples?: number;
}

export type CompareAnswer = { readonly id: number; readonly comparison: Comparison } | { readonly id: number; readonly error: string };

/** Resamples when the page has to work it out on its own thread: the engine's least, so a large pair holds it a second or two, not many. */
const IN_PAGE_RESAMPLES = 200;

let worker: Promise<Worker> | undefined;
let nextId = 1;
const waiting = new Map<number, { resolve: (c: Comparison) => void; reject: (e: Error) => void }>();

async function startWorker(): Promise<Worker> {
  if (typeof Worker === 'undefined') throw new Error('no worker here');
  const blobUrl = URL.createObjectURL(new Blob([WORKER_SOURCE], { type: 'text/javascript' }));
  const w = new Worker(blobUrl);
  w.onmessage = (e: MessageEvent<CompareAnswer>) => {
    const job = waiting.get(e.data.id);
    if (!job) return;
    waiting.delete(e.data.id);
    if ('comparison' in e.data) job.resolve(e.data.comparison);
    else job.reject(new Error(e.data.error));
  };
  w.onerror = (e) => {
    e.preventDefault();
    // a worker that failed is not used again; what it was doing is worked out on the page
    worker = Promise.reject(new Error(e.message || 'the comparison worker failed'));
    worker.catch(() => undefined);
    for (const [id, job] of waiting) { waiting.delete(id); job.reject(new Error('worker failed')); }
  };
  return w;
}

function inPage(base: RunFile, next: RunFile): Promise<Comparison> {
  document.body.dataset.compareWhere = 'page';
  return new Promise((resolve, reject) => {
    setTimeout(() => {
      try { resolve(compareRuns(base, next, { resamples: IN_PAGE_RESAMPLES })); } catch (e) { reject(e instanceof Error ? e : new Error(String(e))); }
    }, 0);
  });
}

/** B (`next`) against A (`base`), as `llm-profiler compare A B` works it out (the same seed and resamples), off the page's thread. */
export async function compareOffThread(base: RunFile, next: RunFile): Promise<Comparison> {
  worker ??= startWorker();
  let w: Worker;
  try {
    w = await worker;
  } catch {
    return inPage(base, next);
  }
  const id = nextId++;
  try {
    return await new Promise<Comparison>((resolve, reject) => {
      waiting.set(id, { resolve, reject });
      w.postMessage({ id, base, next } satisfies CompareRequest);
      document.body.dataset.compareWhere = 'worker';
    });
  } catch (e) {
    if ((e as Error).message === 'worker failed') return inPage(base, next);
    throw e;
  }
}
