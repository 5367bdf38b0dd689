// What a surface asks the engine to do: a job. The CLI builds one from its flags, the extension from
// its settings and commands (src/jobs/build.ts); src/jobs/execute.ts runs any of them.
import type { PrefillDialSpec, SweepDimension } from '../engine/run/sweep';
import type { Prompt, WorkloadSpec } from '../engine/core/types';
import type { ApiKind } from '../engine/core/apis';
import type { LocalServerOptions } from '../localServer/types';

/** The bundled (or llama-server) local server a job needs. */
export interface LocalServerRequest {
  readonly model: NonNullable<LocalServerOptions['model']>;
  readonly backend: 'bundled' | 'llama-server';
  readonly llamaServerPath?: string;
  readonly threads?: number;
  /** Total context over the slots, as the user gave it (--ctx-size): it beats slotContext. */
  readonly ctxSize?: number;
  /** The context each slot needs: the job's longest prompt and its max tokens, rounded up (src/jobs/slotContext.ts); absent: the server's default. */
  readonly slotContext?: number;
  readonly batchSize?: number;
  /** Slots the job needs at least: one per request it keeps in flight, or the server would queue them. */
  readonly parallel: number;
}

/** Where a run or sweep sends its requests. */
export type Target =
  | {
      readonly kind: 'endpoint';
      readonly url: string;
      readonly api: ApiKind | 'auto';
      /** The model sent with each request; absent: the first one the server lists. */
      readonly model?: string;
      /** A display name (a configured endpoint's). */
      readonly name?: string;
      readonly headers?: Readonly<Record<string, string>>;
      readonly apiKeyHeader?: string;
    }
  | { readonly kind: 'local'; readonly server: LocalServerRequest };

interface JobCommon {
  /** With --fail-on-slo: a missed SLO is a failure of the job (exit 3). */
  readonly failOnSlo: boolean;
}

export interface RunJob extends JobCommon {
  readonly kind: 'run';
  readonly target: Target;
  readonly workload: WorkloadSpec;
  /** Prompts loaded from the workload's prompt file or dataset, or given by the caller (a CodeLens prompt). */
  readonly prompts?: readonly Prompt[];
  /** `run --repeat N`: the workload sent N times in a row, each repetition kept (absent or 1: once). */
  readonly repeat?: number;
}

export interface SweepJob extends JobCommon {
  readonly kind: 'sweep';
  readonly target: Target;
  readonly dimension: SweepDimension;
  readonly values: readonly number[];
  /** Every point's workload but for the swept field. */
  readonly workload: WorkloadSpec;
  readonly stopOnSaturation: boolean;
  readonly prompts?: readonly Prompt[];
}

export interface DialJob extends JobCommon {
  readonly kind: 'dial';
  /** The local server started once per chunk size (its batch size is the dial's). */
  readonly server: Omit<LocalServerRequest, 'batchSize'>;
  readonly dial: PrefillDialSpec;
}

/** The prefix cache check: per round a prompt cold, again, and a variant, one at a time (src/engine/run/cacheCheck.ts). */
export interface CacheCheckJob extends JobCommon {
  readonly kind: 'cache-check';
  readonly target: Target;
  /** Max tokens, timeouts, seed and the prompt source; the check sets its own load. */
  readonly workload: WorkloadSpec;
  /** The prompts to check (a prompt file's, a CodeLens prompt); absent: one synthetic prompt. */
  readonly prompts?: readonly Prompt[];
}

export type Job = RunJob | SweepJob | DialJob | CacheCheckJob;

/**
 * `llm-profiler ab` (the extension's "Compare two endpoints"): the same workload on two targets in
 * alternating blocks, in one process (src/jobs/ab.ts). Not a `Job`: it makes two run files.
 */
export interface AbJob {
  readonly kind: 'ab';
  /** Side A's target, then side B's. */
  readonly targets: readonly [Target, Target];
  /** Both sides send it: `requests` is per side, split evenly over the blocks. */
  readonly workload: WorkloadSpec;
  /** A's and B's own, when they differ in what they send with (the response format, tools: `--response-format` twice); A's is `workload`. */
  readonly workloads?: readonly [WorkloadSpec, WorkloadSpec];
  readonly blocks: number;
  readonly prompts?: readonly Prompt[];
}

/** A job with what its inputs said on the way (a prompt file's warnings), for the surface to show. */
export interface BuiltJob<J extends Job = Job> {
  readonly job: J;
  readonly warnings: readonly string[];
}
