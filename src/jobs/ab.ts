// An interleaved A/B job: `llm-profiler ab` and the extension's "Compare two endpoints". The two sides
// come from the values (`--url` once or twice, `--model` and `--api-key-env` once for both sides or
// twice, A then B) or from the caller's two targets; both send one workload, `--requests` per side
// split over `--blocks`, except what `--response-format` and `--tools` give per side (twice: A's then
// B's, `none` for without): one endpoint with and without a schema is what constrained decoding costs.
// executeAbJob resolves each side's endpoint (its API detected, its model
// defaulted), runs the blocks (src/engine/run/abRun.ts) and returns both run files.
import { blockRequests, runAb } from '../engine/run/abRun';
import type { AbProgress, AbResult, AbSideName } from '../engine/run/abRun';
import { defaultWorkload, WorkloadError } from '../engine/core/workload';
import { newRunId } from '../engine/core/runId';
import type { NetworkSpec, RequestRecord, WorkloadSpec } from '../engine/core/types';
import { checked, endpointTarget, oneLoop, promptsFor, trafficFiles, workloadOf } from './build';
import type { BuildContext } from './build';
import { UsageError } from './errors';
import type { JobProgress, JobStart } from './execute';
import { skeletonRun } from './execute';
import type { AbJob, Target } from './job';
import { defaultOf } from './options';
import { resolveTarget } from './resolve';
import type { ResolvedTarget, ResolveHooks } from './resolve';
import type { OptionValues } from './values';

export interface AbBuildContext extends BuildContext {
  /** The two sides, A then B, when the caller has them (configured endpoints); else from --url and --model. */
  readonly targets?: readonly [Target, Target];
}

/** A URL as the sides are told apart by: without a trailing slash. */
const sameUrl = (a: string, b: string): boolean => a.replace(/\/+$/, '') === b.replace(/\/+$/, '');

/** Side i's value of an option given once for both sides or twice. */
const sideValue = (list: readonly string[], i: number): string | undefined => list[i] ?? list[0];

/** The two sides from --url, --model and --api-key-env; they must differ in at least one, or (`sends`) in what they send with. */
function sidesFrom(v: OptionValues, sends: boolean): readonly [Target, Target] {
  const urls = v.sides('url');
  if (urls.length === 0) throw new UsageError('needs --url: once for one endpoint (with --model twice), or twice for two endpoints', '--url');
  const models = v.sides('model');
  const keys = v.sides('apiKeyEnv');
  const same = sameUrl(sideValue(urls, 0)!, sideValue(urls, 1)!) && sideValue(models, 0) === sideValue(models, 1) && sideValue(keys, 0) === sideValue(keys, 1);
  if (same && !sends) {
    throw new UsageError('the two sides are the same: give --url twice (two endpoints), or one --url with --model twice (two models), --api-key-env twice (two keys), or --response-format or --tools twice (with and without: none)', urls.length > 1 ? '--url' : undefined);
  }
  return [endpointTarget(v, sideValue(urls, 0)!, sideValue(models, 0)), endpointTarget(v, sideValue(urls, 1)!, sideValue(models, 1))];
}

/** The blocks: --requests splits evenly over them, and each block holds at least the concurrency (or it never reaches it). */
function blocksOf(v: OptionValues, w: WorkloadSpec): number {
  const blocks = v.num('blocks') ?? defaultOf<number>('blocks', 'ab') ?? 10;
  let perBlock: number;
  try {
    perBlock = blockRequests(w, blocks);
  } catch (e) {
    if (!(e instanceof WorkloadError)) throw e;
    const n = w.requests ?? 0;
    const lower = Math.floor(n / blocks) * blocks;
    const options = [lower, lower + blocks].filter((x) => x >= blocks);
    throw new UsageError(`--requests ${n} (per side) does not split evenly into ${blocks} blocks: give a multiple of ${blocks} (${options.join(' or ')}), or another --blocks`, '--requests');
  }
  const m = w.mode;
  if (m.kind === 'closed' && perBlock < m.concurrency) {
    throw new UsageError(`${blocks} blocks of ${perBlock} requests are fewer than --concurrency ${m.concurrency} a block: each block would end before it reached its concurrency; give more --requests or fewer --blocks`, '--blocks');
  }
  return blocks;
}

/** What a side sends with of its own: the response format and tools. */
type SentWithOwn = Pick<WorkloadSpec, 'responseFormat' | 'tools'>;
const ownOf = (w: Partial<WorkloadSpec>): SentWithOwn => ({ ...(w.responseFormat ? { responseFormat: w.responseFormat } : {}), ...(w.tools ? { tools: w.tools } : {}) });

/**
 * B's workload when --response-format or --tools give B its own: A's with B's response format and
 * tools (read from B's files); undefined when both sides send the same.
 */
async function sideB(v: OptionValues, ctx: AbBuildContext, a: WorkloadSpec): Promise<WorkloadSpec | undefined> {
  if (v.sides('tools').length < 2 && v.sides('responseFormat').length < 2) return undefined;
  const own = ownOf(await trafficFiles(v, ctx, 1));
  if (JSON.stringify(own) === JSON.stringify(ownOf(a))) return undefined;
  const { responseFormat: _f, tools: _t, ...rest } = a;
  return checked({ ...rest, ...own });
}

/** `llm-profiler ab`: one workload for both sides (each its own response format and tools when given twice), in blocks. */
export async function buildAbJob(v: OptionValues, ctx: AbBuildContext = {}): Promise<{ readonly job: AbJob; readonly warnings: readonly string[] }> {
  const promptTokens = v.num('promptTokens') ?? defaultOf<number>('promptTokens', 'ab') ?? 256;
  const { base, loaded } = await promptsFor(workloadOf(v, 'ab', ctx, promptTokens), v, ctx);
  const workload = checked(defaultWorkload(base));
  const b = await sideB(v, ctx, workload);
  const targets = ctx.targets ?? sidesFrom(v, b !== undefined);
  const blocks = blocksOf(v, workload);
  oneLoop(workload, 'ab');
  const job: AbJob = { kind: 'ab', targets, workload, blocks, ...(b ? { workloads: [workload, b] as const } : {}), ...(loaded.prompts ? { prompts: loaded.prompts } : {}) };
  return { job, warnings: loaded.warnings };
}

/** What one side is sent with: never written to a run file. */
export interface AbSideHooks {
  readonly apiKey?: string;
  readonly network?: NetworkSpec;
}

export interface AbHooks extends Omit<ResolveHooks, 'apiKey' | 'network'> {
  /** Side A's key and network, then B's. */
  readonly sides?: readonly [AbSideHooks, AbSideHooks];
  /** Side A's and B's run ids (default: new ones). */
  readonly runIds?: readonly [string, string];
  /** Each side, once its endpoint is known, before the first request. */
  onStart?(start: JobStart, side: AbSideName): void;
  /** The side now sending, its block in `phase` ("B · block 3/10"). */
  onProgress?(p: JobProgress & AbProgress): void;
  /** Each finished request of either side. */
  onRecord?(r: RequestRecord, side: AbSideName): void;
}

/** A side's error named: "B: cannot connect to …". */
function named(e: unknown, side: AbSideName): unknown {
  if (e instanceof Error && !e.message.startsWith(`${side}: `)) e.message = `${side}: ${e.message}`;
  return e;
}

function guarded<A extends unknown[]>(fn: ((...args: A) => void) | undefined): ((...args: A) => void) | undefined {
  if (!fn) return undefined;
  return (...args: A) => {
    try {
      fn(...args);
    } catch {
      // a surface's listener must not break the measurement
    }
  };
}

/**
 * Runs an A/B job to its two run files. Rejects only before the first measured request (a side whose
 * endpoint cannot be used: the message names it); failed requests are in their side's file, and a
 * cancelled job returns what finished on both sides, marked `cancelled`.
 */
export async function executeAbJob(job: AbJob, hooks: AbHooks = {}): Promise<AbResult> {
  const names: readonly AbSideName[] = ['A', 'B'];
  const resolved: ResolvedTarget[] = [];
  try {
    for (const [i, side] of names.entries()) {
      const own = hooks.sides?.[i] ?? {};
      try {
        resolved.push(await resolveTarget(job.targets[i]!, { ...hooks, ...own }));
      } catch (e) {
        throw named(e, side);
      }
    }
    const runIds = hooks.runIds ?? [newRunId(), newRunId()];
    const onStart = guarded(hooks.onStart);
    const workloadOf = (i: number): WorkloadSpec => job.workloads?.[i] ?? job.workload;
    resolved.forEach((r, i) => onStart?.({ runId: runIds[i]!, endpoint: r.endpoint, skeleton: skeletonRun(runIds[i]!, r.endpoint, workloadOf(i), r.detectedApi, job.prompts) }, names[i]!));
    const onProgress = guarded(hooks.onProgress);
    const onRecord = guarded(hooks.onRecord);
    const sides = resolved.map((r, i) => {
      const own = hooks.sides?.[i] ?? {};
      // the local server is reached directly, whatever the proxy settings
      const network = r.release === undefined ? own.network : undefined;
      return { endpoint: r.endpoint, runId: runIds[i]!, ...(own.apiKey !== undefined ? { apiKey: own.apiKey } : {}), ...(network ? { network } : {}), ...(r.detectedApi ? { detectedApi: true } : {}), ...(job.workloads ? { workload: workloadOf(i) } : {}) };
    });
    return await runAb([sides[0]!, sides[1]!], job.workload, {
      blocks: job.blocks,
      ...(hooks.signal ? { signal: hooks.signal } : {}),
      ...(job.prompts ? { prompts: job.prompts } : {}),
      ...(onProgress ? { onProgress: (p: AbProgress) => onProgress({ ...p, phase: `${p.side} · block ${p.block + 1}/${p.blocks}` }) } : {}),
      ...(onRecord ? { onRecord } : {}),
    });
  } finally {
    await Promise.all(resolved.map((r) => r.release?.().catch(() => undefined)));
  }
}
