// What the comparison thread does (compareThread.ts starts it): two run files read and compared, as
// `llm-profiler compare BASE NEW` compares them (the same seed and resamples), with what makes them
// hard to compare. Part of dist/files.js, which is also the thread's entry: started as a worker with
// COMPARE_ROLE, it serves comparisons (serveComparisons, called from filesBundle.ts). No `vscode`.
import { isMainThread, parentPort, workerData } from 'node:worker_threads';
import { compareRuns } from '../engine/analysis/compare';
import { comparability } from '../engine/analysis/comparable';
import type { RunFile } from '../engine/core/types';
import { COMPARE_ROLE, type ComparedPair, type CompareJob, type CompareReply } from './compareThread';

/** BASE's and NEW's files read and compared. */
export async function compareFiles(read: (path: string) => Promise<RunFile>, job: Pick<CompareJob, 'basePath' | 'runPath' | 'resamples'>): Promise<ComparedPair> {
  const [base, run] = await Promise.all([read(job.basePath), read(job.runPath)]);
  const sameRequests = base.ab !== undefined && run.ab !== undefined && base.ab.pairId === run.ab.pairId;
  return {
    comparison: compareRuns(base, run, job.resamples === undefined ? {} : { resamples: job.resamples }),
    problems: comparability(base, run, { sameRequests }),
  };
}

/** When this bundle runs as the comparison thread: answers each job in turn. Elsewhere, nothing. */
export function serveComparisons(read: (path: string) => Promise<RunFile>): void {
  if (isMainThread || (workerData as { role?: unknown } | null)?.role !== COMPARE_ROLE || !parentPort) return;
  const port = parentPort;
  const post = (m: CompareReply) => port.postMessage(m);
  port.on('message', (job: CompareJob) => {
    compareFiles(read, job).then(
      (pair) => post({ id: job.id, pair }),
      (e: unknown) => post({ id: job.id, error: e instanceof Error ? e.message : String(e) }),
    );
  });
  post({ ready: true });
}
