// The messages between the main thread's coordinator (coordinator.ts) and each worker thread
// (workerRun.ts): what a worker is given at its start, what it is told, and the batches it sends back.
import type { ConnectionInfo, EndpointSpec, NetworkSpec, Prompt, RequestRecord, WorkloadSpec } from '../../core/types';

/** A worker's start (workerData). */
export interface ShareSetup {
  /** The worker's number, from 0. */
  readonly id: number;
  readonly endpoint: EndpointSpec;
  readonly workload: WorkloadSpec;
  /** Connections this worker opens and warms: its share of the run's. */
  readonly connections: number;
  /** Its closed loops in the warmup phase (a share of the one loop's), and in a closed measured phase. */
  readonly warmupLoops: number;
  readonly measuredLoops: number;
  readonly apiKey?: string;
  readonly network?: NetworkSpec;
  /** The prompts (a prompt file read once by the main thread, or the caller's); absent: the workload's synthetic ones. */
  readonly prompts?: readonly Prompt[];
  readonly warmupPrompts?: readonly Prompt[];
  /** The shared cells (sharedCells.ts CELL). */
  readonly cells: Int32Array;
  /** Send chunk counts back (someone reads progress); `streams`: their arrival times too (a live view's lanes). */
  readonly progress: boolean;
  readonly streams: boolean;
}

export type ToWorker =
  | { readonly t: 'warmup' }
  /** The measured phase starts: a closed loop claims until the count or the deadline (epoch ms). */
  | { readonly t: 'measure'; readonly deadline?: number }
  /** Open-loop arrivals for this worker: k and when due (epoch ms), in order. */
  | { readonly t: 'arrivals'; readonly ks: readonly number[]; readonly dues: readonly number[] }
  /** No more arrivals: report `done` once those given have ended. */
  | { readonly t: 'end' }
  | { readonly t: 'cancel' }
  | { readonly t: 'close' }
  /** (prompt sizing, run/sizing.ts) One more warmup request, request `index` at `words` words: `calibrated` once its record is sent back. */
  | { readonly t: 'calibrate'; readonly index: number; readonly words: number }
  /** (prompt sizing) The measured requests' words, and the warmup's count as sent (their indexes follow it). */
  | { readonly t: 'sized'; readonly words: number; readonly warmup: number };

export type FromWorker =
  | { readonly t: 'warmed'; readonly connection: ConnectionInfo }
  | { readonly t: 'failed'; readonly message: string; readonly preflight: boolean }
  /**
   * Requests just handed to the client (flat: index, warmup 0/1, sentAt, scheduledAt), posted once per
   * event-loop turn that sent any, before their chunks or records: the main thread knows what a thread
   * has in flight, so that a thread that dies loses only those, counted.
   */
  | { readonly t: 'sent'; readonly s: readonly number[] }
  | Batch
  | { readonly t: 'warmupDone' }
  | { readonly t: 'calibrated' }
  | { readonly t: 'done'; readonly connection?: ConnectionInfo }
  | { readonly t: 'closed' };

/**
 * What happened since the last batch, in order within each list: chunk arrivals (flat: index, then
 * with `streams` each arrival's ms since sent, else a count), requests returned, their final records.
 */
export interface Batch {
  readonly t: 'batch';
  /** Without streams: [index, count, index, count…]; with streams: [index, n, atMs × n, index, n, …]. */
  readonly chunks: readonly number[];
  readonly returned: number;
  readonly records: readonly RequestRecord[];
}
