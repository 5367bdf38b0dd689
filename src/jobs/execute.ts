// Runs any job (a run, a sweep, the prefill dial) and returns its one run file: the one place that
// resolves the endpoint, gives the run its id, reports progress across points, and stops whatever
// it started. Every surface calls this.
import { runCacheCheck } from '../engine/run/cacheCheck';
import { assembleRunFile } from '../engine/run/runAssembly';
import { newRunId } from '../engine/core/runId';
import { runWorkload } from '../engine/run/runner';
import { runRepeated } from '../engine/run/segments';
import type { RunOptions } from '../engine/run/plan';
import { plannedPrompts } from '../engine/run/plan';
import { MetricsSampler } from '../engine/transport/serverMetrics';
import { pointLabel, runPrefillDial, runSweep } from '../engine/run/sweep';
import type { DialServer } from '../engine/run/sweep';
import { apiFacts } from '../engine/core/apis';
import type { EndpointSpec, PrefillDialConfig, Progress, Prompt, RequestRecord, RunFile, ServerMetrics, SweepPoint, WorkloadSpec } from '../engine/core/types';
import type { CacheCheckJob, DialJob, Job, RunJob, SweepJob } from './job';
import type { JobJournal } from './journal';
import { localEndpoint, resolveTarget, startLocalServerFor } from './resolve';
import type { ResolveHooks } from './resolve';

/** Progress of a job: the engine's counts over the whole job, and which point or configuration is running. */
export interface JobProgress extends Progress {
  /** "c=4", "2/s", "512 tok" (a sweep's point) or "batch 32" (the dial's chunk size). */
  readonly phase?: string;
}

export interface JobStart {
  readonly runId: string;
  readonly endpoint: EndpointSpec;
  /** The run file so far (no requests yet), for a live view. */
  readonly skeleton: RunFile;
}

export interface JobHooks extends ResolveHooks {
  readonly runId?: string;
  /** Once the endpoint is known, before the first request. */
  onStart?(start: JobStart): void;
  onProgress?(p: JobProgress): void;
  /** Progress carries the streams in flight (a live view's lanes; RunOptions.streams). */
  readonly streams?: boolean;
  /** Each finished request, with its index in the final run file. */
  onRecord?(r: RequestRecord): void;
  /** A sweep's finished point. */
  onPoint?(point: SweepPoint, index: number): void;
  /** The dial's finished configuration. */
  onConfig?(config: PrefillDialConfig, index: number): void;
  /** A passing state worth a line ("starting the local server with --batch-size 32…"). */
  onStatus?(message: string): void;
  /** (a run or a sweep) Where each finished request, point and repetition is written as it finishes. */
  readonly journal?: JobJournal;
}

/** The run as the live report first shows it: its head, no request yet, and what its prompts will be sent with. */
export function skeletonRun(runId: string, endpoint: EndpointSpec, workload: WorkloadSpec, detectedApi = false, prompts?: readonly Prompt[]): RunFile {
  return assembleRunFile({ id: runId, startedAt: new Date().toISOString(), cancelled: false, endpoint, detectedApi, workload, prompts: plannedPrompts(workload, endpoint, prompts), requests: [], durationS: 0 });
}

function guard<A extends unknown[]>(...fns: (((...args: A) => void) | undefined)[]): ((...args: A) => void) | undefined {
  const listeners = fns.filter((f) => f !== undefined);
  if (listeners.length === 0) return undefined;
  return (...args: A) => {
    for (const fn of listeners) {
      try {
        fn(...args);
      } catch {
        // a surface's listener must not break the measurement
      }
    }
  };
}

/** The run file with what the server's /metrics said over it, when it has a /metrics. */
function withServerMetrics(run: RunFile, serverMetrics: ServerMetrics | undefined): RunFile {
  return serverMetrics ? { ...run, serverMetrics } : run;
}

/** A run job's workload, once or (`--repeat N`) N times in a row, progress naming the repetition. */
function runOnce(job: RunJob, endpoint: EndpointSpec, common: RunOptions, onProgress: ((p: JobProgress) => void) | undefined, journal: JobJournal | undefined): Promise<RunFile> {
  const repeat = job.repeat ?? 1;
  if (repeat <= 1) return runWorkload(endpoint, job.workload, { ...common, ...(onProgress ? { onProgress } : {}) });
  let current = 0;
  return runRepeated(endpoint, job.workload, repeat, {
    ...common,
    onRepetition: (r) => {
      current = r;
      journal?.repetition(r);
    },
    ...(onProgress ? { onProgress: (p: Progress) => onProgress({ ...p, phase: `repetition ${current + 1}/${repeat}` }) } : {}),
  });
}

async function executeOnEndpoint(job: RunJob | SweepJob, runId: string, hooks: JobHooks): Promise<RunFile> {
  const resolved = await resolveTarget(job.target, hooks);
  let sampler: MetricsSampler | undefined;
  try {
    const skeleton = skeletonRun(runId, resolved.endpoint, job.workload, resolved.detectedApi, job.prompts);
    const journal = hooks.journal;
    journal?.start(job, skeleton);
    guard(hooks.onStart)?.({ runId, endpoint: resolved.endpoint, skeleton });
    // One scrape (at most ~2 s) before the first request; the sampler never throws.
    const network = resolved.release === undefined ? hooks.network : undefined;
    // A hosted provider's API has no /metrics to scrape.
    if (!hooks.signal?.aborted && apiFacts(resolved.endpoint.api)?.hosted !== true) sampler = await MetricsSampler.start(resolved.endpoint, hooks.apiKey, network ? { network } : {}).catch(() => undefined);
    const common = {
      runId,
      ...(hooks.apiKey !== undefined ? { apiKey: hooks.apiKey } : {}),
      ...(network ? { network } : {}),
      ...(hooks.signal ? { signal: hooks.signal } : {}),
      ...(job.prompts ? { prompts: job.prompts } : {}),
      ...(resolved.detectedApi ? { detectedApi: true } : {}),
      ...(hooks.onRecord || journal ? { onRecord: guard(hooks.onRecord, journal && ((r: RequestRecord) => journal.record(r)))! } : {}),
      ...(hooks.streams ? { streams: true } : {}),
      ...(hooks.onStatus ? { onStatus: guard(hooks.onStatus)! } : {}),
    };
    const onProgress = guard(hooks.onProgress, journal && ((p: JobProgress) => journal.progress(p)));
    if (job.kind === 'run') {
      const run = await runOnce(job, resolved.endpoint, common, onProgress, journal);
      return withServerMetrics(run, await sampler?.stop().catch(() => undefined));
    }
    let next = 0;
    const onPoint = guard(hooks.onPoint, journal && ((p: SweepPoint, i: number) => journal.point(p, i)));
    const sweep = await runSweep(
      resolved.endpoint,
      { dimension: job.dimension, values: job.values, workload: job.workload, stopOnSaturation: job.stopOnSaturation },
      {
        ...common,
        ...(onProgress ? { onProgress: (p: Progress) => onProgress({ ...p, phase: pointLabel(job.dimension, job.values[Math.min(next, job.values.length - 1)]!) }) } : {}),
        onPoint: (point, index) => {
          next = index + 1;
          onPoint?.(point, index);
        },
      },
    );
    return withServerMetrics(sweep, await sampler?.stop().catch(() => undefined));
  } finally {
    // Idempotent: after a run that threw, this ends the sampling and closes its connection.
    await sampler?.stop().catch(() => undefined);
    await resolved.release?.().catch(() => undefined);
  }
}

/** The prefix cache check: one request at a time, no sampler (its requests are too few to load anything). */
async function executeCacheCheck(job: CacheCheckJob, runId: string, hooks: JobHooks): Promise<RunFile> {
  const resolved = await resolveTarget(job.target, hooks);
  try {
    guard(hooks.onStart)?.({ runId, endpoint: resolved.endpoint, skeleton: skeletonRun(runId, resolved.endpoint, job.workload, resolved.detectedApi, job.prompts) });
    const onProgress = guard(hooks.onProgress);
    return await runCacheCheck(resolved.endpoint, { workload: job.workload, ...(job.prompts ? { prompts: job.prompts } : {}) }, {
      runId,
      ...(hooks.apiKey !== undefined ? { apiKey: hooks.apiKey } : {}),
      ...(hooks.network && resolved.release === undefined ? { network: hooks.network } : {}),
      ...(hooks.signal ? { signal: hooks.signal } : {}),
      ...(resolved.detectedApi ? { detectedApi: true } : {}),
      ...(hooks.onRecord ? { onRecord: guard(hooks.onRecord)! } : {}),
      ...(onProgress ? { onProgress } : {}),
    });
  } finally {
    await resolved.release?.().catch(() => undefined);
  }
}

async function executeDial(job: DialJob, runId: string, hooks: JobHooks): Promise<RunFile> {
  let current = job.dial.batchSizes[0]!;
  const onProgress = guard(hooks.onProgress);
  const onStatus = guard(hooks.onStatus);
  const onConfig = guard(hooks.onConfig);
  return runPrefillDial(job.dial, {
    runId,
    ...(hooks.apiKey !== undefined ? { apiKey: hooks.apiKey } : {}),
    ...(hooks.signal ? { signal: hooks.signal } : {}),
    startServer: async (batchSize): Promise<DialServer> => {
      current = batchSize;
      onStatus?.(`starting the local server with --batch-size ${batchSize}…`);
      const handle = await startLocalServerFor({ ...job.server, batchSize }, hooks);
      return { endpoint: localEndpoint(handle), stop: () => handle.stop() };
    },
    ...(onProgress ? { onProgress: (p: Progress) => onProgress({ ...p, phase: `batch ${current}` }) } : {}),
    ...(onConfig ? { onConfig } : {}),
  });
}

/**
 * Runs a job to its run file. Rejects only before the first request (an endpoint that cannot be
 * used, a server that does not start, a bad workload); failed requests are in the run file, and a
 * cancelled job returns what finished, marked `cancelled`.
 */
export async function executeJob(job: Job, hooks: JobHooks = {}): Promise<RunFile> {
  const runId = hooks.runId ?? newRunId();
  if (job.kind === 'cache-check') return executeCacheCheck(job, runId, hooks);
  return job.kind === 'dial' ? executeDial(job, runId, hooks) : executeOnEndpoint(job, runId, hooks);
}

/** Why a finished job counts as failed by its SLO (with --fail-on-slo), or undefined. */
export function sloFailure(job: Job, run: RunFile): string | undefined {
  if (!job.failOnSlo || run.cancelled) return undefined;
  switch (job.kind) {
    case 'run': {
      const missed = run.summary.sloMissed ?? [];
      return missed.length > 0 ? `SLO missed at p99: ${missed.map((k) => k.replace(/Ms$/, '')).join(', ')}` : undefined;
    }
    case 'sweep':
      return run.sweep?.operatingPoint ? undefined : 'SLO missed: no point of the sweep meets every SLO at p99';
    case 'cache-check':
      return undefined;
    case 'dial': {
      const configs = run.prefillDial?.configs ?? [];
      return configs.some((c) => (c.decode.summary.sloMissed?.length ?? 0) > 0 || (c.long.summary.sloMissed?.length ?? 0) > 0)
        ? 'SLO missed in at least one configuration'
        : undefined;
    }
  }
}
