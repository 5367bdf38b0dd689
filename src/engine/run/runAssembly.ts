// A measured run's RunFile from the runner's parts (on one thread or on workers): the endpoint
// redacted (redact.ts), stalls judged and the summary computed over the measured phase. Other run files
// are made from such runs: sweep.ts joins a sweep's or the dial's into one, cacheCheck.ts adds its
// verdict; another tool's results take the shape in files/importers/common.ts (a room below run/).
import { analyzeTiming, annotateRequests } from '../analysis/attribution';
import { summarize } from '../analysis/metrics';
import { redactEndpoint } from '../core/redact';
import { RUN_FORMAT, RUN_VERSION, TOOL_NAME, TOOL_VERSION } from '../core/runFormat';
import type { AbRecord, ConnectionInfo, EndpointSpec, NetworkRecord, PromptRecord, RepeatSummary, RequestRecord, RunFile, WorkloadSpec } from '../core/types';

export interface RunParts {
  readonly id: string;
  /** ISO times. */
  readonly startedAt: string;
  /** Absent while the run has not ended (the live report's first frame). */
  readonly endedAt?: string;
  readonly cancelled: boolean;
  readonly endpoint: EndpointSpec;
  /** How the endpoint was reached (the proxy, credentials removed; the trust settings). */
  readonly network?: NetworkRecord;
  /** The API kind was detected (`--api auto`). */
  readonly detectedApi?: boolean;
  readonly workload: WorkloadSpec;
  /** What each prompt-file prompt was sent with (the planner's list); requests point into it by `promptRef`. */
  readonly prompts?: readonly PromptRecord[];
  readonly connection?: ConnectionInfo;
  /** In index order. */
  readonly requests: readonly RequestRecord[];
  /** The measured phase's wall time, s (vLLM's dur_s); a run in segments: their sum. */
  readonly durationS: number;
  /** A run in segments (`run --repeat`, an `ab` side's blocks): each one's start and wall time; its requests carry its index as `repeat`. */
  readonly segments?: readonly SegmentParts[];
  readonly ab?: AbRecord;
}

export interface SegmentParts {
  readonly index: number;
  /** ISO time. */
  readonly startedAt: string;
  readonly durationS: number;
}

export function assembleRunFile(p: RunParts): RunFile {
  const analysis = analyzeTiming(p.requests, p.workload);
  const requests = annotateRequests(p.requests, analysis);
  return {
    format: RUN_FORMAT,
    version: RUN_VERSION,
    id: p.id,
    startedAt: p.startedAt,
    ...(p.endedAt !== undefined ? { endedAt: p.endedAt } : {}),
    ...(p.cancelled ? { cancelled: true } : {}),
    tool: { name: TOOL_NAME, version: TOOL_VERSION },
    endpoint: { ...redactEndpoint(p.endpoint), ...p.network, ...(p.detectedApi ? { detectedApi: true } : {}) },
    workload: p.workload,
    ...(p.prompts && p.prompts.length > 0 ? { prompts: p.prompts } : {}),
    ...(p.connection ? { connection: p.connection } : {}),
    requests,
    summary: summarize(requests, p.workload, { durationS: p.durationS, analysis }),
    ...(p.segments ? { repeats: p.segments.map((seg) => segmentSummary(seg, requests, p.workload, analysis)) } : {}),
    ...(p.ab ? { ab: p.ab } : {}),
  };
}

/** One segment's own summary, over its measured requests and its own wall time. */
function segmentSummary(seg: SegmentParts, requests: readonly RequestRecord[], workload: WorkloadSpec, analysis: ReturnType<typeof analyzeTiming>): RepeatSummary {
  const positions: number[] = [];
  requests.forEach((r, i) => {
    if (!r.warmup && r.repeat === seg.index) positions.push(i);
  });
  return {
    index: seg.index,
    startedAt: seg.startedAt,
    durationS: seg.durationS,
    summary: summarize(positions.map((i) => requests[i]!), workload, { durationS: seg.durationS, analysis }),
    requestIndexes: positions,
  };
}
