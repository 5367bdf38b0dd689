// An interleaved A/B run (`llm-profiler ab`, the extension's "Compare two endpoints"): the same
// workload sent to two endpoints (or one endpoint with two models or keys) in one process, in blocks
// that take turns, who goes first alternating (AB BA AB BA …), so that a slow minute of the machine or
// the network hurts both sides alike. Each side warms its connections and sends its warmup before the
// first block, and warms them again before each block (it sat idle while the other side ran). Both
// sides send the very same requests (prompts, seeds, max tokens): request k is the same on A and B.
// Each side becomes a run file of its own: requests[].repeat is the block, repeats[] the blocks'
// summaries, `ab` names the pair, so that compare pairs the blocks (analysis/compare.ts).
import type { AbRecord, EndpointSpec, NetworkSpec, Progress, Prompt, RequestRecord, RunFile, WorkloadSpec } from '../core/types';
import { newRunId } from '../core/runId';
import { validateWorkload, WorkloadError } from '../core/workload';
import { ProgressTicker } from './runTally';
import { checkOneLoop, SegmentedSide } from './segments';

export type AbSideName = 'A' | 'B';
export const AB_SIDES: readonly AbSideName[] = ['A', 'B'];

/** One side: where it sends, and with what key and network. */
export interface AbSideInput {
  readonly endpoint: EndpointSpec;
  readonly apiKey?: string;
  readonly network?: NetworkSpec;
  /** Recorded in its run file when the API kind was detected. */
  readonly detectedApi?: boolean;
  readonly runId?: string;
  /** Its own workload, the run's but for what it sends with (the response format, tools); absent: the run's. */
  readonly workload?: WorkloadSpec;
}

/** Progress of the side now sending, and which block it is in. */
export interface AbProgress extends Progress {
  readonly side: AbSideName;
  /** From 0. */
  readonly block: number;
  readonly blocks: number;
}

export interface AbOptions {
  /** Blocks per side (at least 2); the workload's requests are split evenly over them. */
  readonly blocks: number;
  /** Aborting stops within 100 ms: what finished is kept on both sides, both run files marked cancelled. */
  readonly signal?: AbortSignal;
  /** Prompts to cycle through instead of the workload's prompt source (both sides get them). */
  readonly prompts?: readonly Prompt[];
  /** Shared by both run files (default: a new id). */
  readonly pairId?: string;
  /** At once, then at most every 100 ms, and at the end. */
  onProgress?(p: AbProgress): void;
  /** Each finished request of either side (warmup ones included). */
  onRecord?(r: RequestRecord, side: AbSideName): void;
}

export interface AbResult {
  readonly a: RunFile;
  readonly b: RunFile;
}

/** Who sends first in block `b`: A in even blocks, B in odd ones (AB BA AB BA …). */
export function blockOrder(b: number): readonly [number, number] {
  return b % 2 === 0 ? [0, 1] : [1, 0];
}

/** Measured requests per block: the workload's requests split evenly over the blocks. Throws WorkloadError when they do not split. */
export function blockRequests(w: Pick<WorkloadSpec, 'requests' | 'durationS'>, blocks: number): number {
  if (!(Number.isInteger(blocks) && blocks >= 2)) throw new WorkloadError(`invalid block count: must be a whole number ≥ 2, got ${blocks}`);
  if (w.requests === undefined || w.durationS !== undefined) throw new WorkloadError('an A/B run is sized in requests (per side), not in seconds');
  if (w.requests % blocks !== 0 || w.requests < blocks) {
    throw new WorkloadError(`${w.requests} requests per side do not split evenly into ${blocks} blocks`);
  }
  return w.requests / blocks;
}

/**
 * Runs `workload` on both sides in alternating blocks and returns both run files. Rejects only before
 * the first measured request (a bad workload, an unreadable prompt source, a side's PreflightError,
 * named "A: …" or "B: …"); failed requests are recorded in their side's file.
 */
export async function runAb(sides: readonly [AbSideInput, AbSideInput], workload: WorkloadSpec, options: AbOptions): Promise<AbResult> {
  const w = validateWorkload(workload);
  const m = blockRequests(w, options.blocks);
  checkOneLoop(w, 'An A/B run');
  const { signal, onProgress, onRecord } = options;
  const pairId = options.pairId ?? newRunId();
  const runIds = sides.map((s) => s.runId ?? newRunId());
  const runs = sides.map((s, i) => new SegmentedSide({
    endpoint: s.endpoint,
    workload: s.workload ? validateWorkload(s.workload) : w,
    options: {
      runId: runIds[i]!,
      ...(s.apiKey !== undefined ? { apiKey: s.apiKey } : {}),
      ...(s.network ? { network: s.network } : {}),
      ...(s.detectedApi ? { detectedApi: true } : {}),
      ...(options.prompts ? { prompts: options.prompts } : {}),
      ...(onRecord ? { onRecord: (r: RequestRecord) => onRecord(r, AB_SIDES[i]!) } : {}),
    },
    total: w.requests!,
    repeats: false,
    name: AB_SIDES[i]!,
  }));
  let current = 0;
  let block = 0;
  const ticker = onProgress ? new ProgressTicker(() => onProgress({ ...runs[current]!.progress(), side: AB_SIDES[current]!, block: Math.min(block, options.blocks - 1), blocks: options.blocks })) : undefined;
  let going = true;
  try {
    for (let i = 0; i < 2 && going; i++) {
      current = i;
      going = await runs[i]!.open(signal);
    }
    for (let i = 0; i < 2 && going; i++) {
      current = i;
      going = await runs[i]!.warmup(signal);
    }
    for (; block < options.blocks && going; block++) {
      for (const i of blockOrder(block)) {
        if (!going) break;
        current = i;
        // block b sends the workload's requests b·m … (b+1)·m − 1 on either side (an open loop: block b's arrivals on both)
        going = await runs[i]!.segment({ index: block, firstK: block * m, requests: m, seed: w.seed + block, rewarm: true }, signal);
      }
    }
    const cancelled = !going || signal?.aborted === true;
    const ab = (i: number): AbRecord => ({ pairId, side: AB_SIDES[i]!, otherId: runIds[1 - i]!, blocks: options.blocks, blockRequests: m });
    return { a: runs[0]!.runFile(cancelled, ab(0)), b: runs[1]!.runFile(cancelled, ab(1)) };
  } finally {
    ticker?.stop();
    await Promise.all(runs.map((r) => r.close(signal?.aborted === true)));
  }
}
