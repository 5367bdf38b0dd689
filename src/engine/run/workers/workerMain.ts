// A worker thread's entry (bundled as dist/worker.js; run through tsx's loader in tests): runs the
// share of the run it was started with (workerRun.ts).
import { parentPort, workerData } from 'node:worker_threads';
import type { ShareSetup } from './protocol';
import { runShare } from './workerRun';

if (parentPort) void runShare(parentPort, workerData as ShareSetup);
