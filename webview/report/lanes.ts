// The timeline's model of a run: one lane per request in start order, every time in ms since the
// run's start, chunk arrivals as typed arrays (a million of them stay cheap), stalls found per lane.
import type { RequestRecord, RunFile, Stall } from '../../src/engine/types';
import type { SeriesRequest } from './series';

export interface Lane {
  readonly request: RequestRecord;
  /** When the runner meant to send it. */
  readonly scheduled: number;
  readonly sent: number;
  /** First content chunk (sent + TTFT); undefined when none arrived. */
  readonly firstToken?: number;
  /** Last byte, error, or the last chunk seen. */
  readonly end: number;
  /** Chunk arrivals, ascending. */
  readonly chunks: Float64Array;
  /** Gaps longer than this are stalls (factor × the stream's median ITL, at least the floor). */
  readonly stallThresholdMs: number;
  /** [start, length] pairs of this lane's stalls, ms since run start. */
  readonly stalls: Float64Array;
  /** Gaps longer than this are listed in bigGaps (2 × the stream's median ITL). */
  readonly bigGapMs: number;
  /** [start, length] pairs of every gap longer than bigGapMs, longest first. */
  readonly bigGaps: Float64Array;
}

export interface LaneModel {
  /** Epoch ms of x = 0. */
  readonly t0: number;
  readonly lanes: Lane[];
  /** Right edge of the data, ms since t0. */
  readonly endMs: number;
  readonly chunkCount: number;
  /** Lane index by request index. */
  readonly laneOf: Map<number, number>;
}

function median(sorted: Float64Array): number {
  const n = sorted.length;
  if (n === 0) return 0;
  const m = (n - 1) / 2;
  const lo = Math.floor(m);
  return sorted[lo]! + (sorted[Math.ceil(m)]! - sorted[lo]!) * (m - lo);
}

export interface StallRule { readonly factor: number; readonly floorMs: number }

export function stallRuleOf(run: Pick<RunFile, 'summary' | 'workload'>): StallRule {
  const s = run.summary?.stalls;
  return {
    factor: s?.factor ?? run.workload?.stallFactor ?? 5,
    floorMs: s?.floorMs ?? run.workload?.stallFloorMs ?? 100,
  };
}

export function buildLane(r: RequestRecord, t0: number, rule: StallRule): Lane {
  const sent = r.sentAt - t0;
  const c = r.chunkTimesMs ?? [];
  const chunks = new Float64Array(c.length);
  for (let i = 0; i < c.length; i++) chunks[i] = sent + c[i]!;
  const gaps = new Float64Array(Math.max(0, c.length - 1));
  for (let i = 1; i < c.length; i++) gaps[i - 1] = c[i]! - c[i - 1]!;
  const stallsList: number[] = [];
  const big: number[] = [];
  let threshold = Infinity;
  let bigGapMs = Infinity;
  if (gaps.length > 0) {
    const sortedGaps = gaps.slice().sort();
    const med = median(sortedGaps);
    threshold = Math.max(rule.factor * med, rule.floorMs);
    bigGapMs = 2 * med;
    for (let i = 0; i < gaps.length; i++) {
      if (gaps[i]! > threshold) stallsList.push(chunks[i]!, gaps[i]!);
      if (gaps[i]! > bigGapMs) big.push(i);
    }
    big.sort((a, b) => gaps[b]! - gaps[a]!);
  }
  const bigGaps = new Float64Array(big.length * 2);
  big.forEach((i, k) => { bigGaps[2 * k] = chunks[i]!; bigGaps[2 * k + 1] = gaps[i]!; });
  const ttft = r.ttftMs ?? (c.length ? c[0] : undefined);
  const endRel = r.lastByteMs ?? r.e2eMs ?? (c.length ? c[c.length - 1]! : 0);
  return {
    request: r,
    scheduled: Math.min(r.scheduledAt - t0, sent),
    sent,
    firstToken: ttft === undefined ? undefined : sent + ttft,
    end: Math.max(sent + endRel, chunks.length ? chunks[chunks.length - 1]! : sent),
    chunks,
    stallThresholdMs: threshold,
    stalls: Float64Array.from(stallsList),
    bigGapMs,
    bigGaps,
  };
}

/** Epoch ms of the run's first scheduled or sent request (x = 0). */
export function runStart(requests: readonly RequestRecord[], fallback?: string): number {
  let t0 = Infinity;
  for (const r of requests) t0 = Math.min(t0, r.scheduledAt, r.sentAt);
  if (Number.isFinite(t0)) return t0;
  const f = fallback ? Date.parse(fallback) : NaN;
  return Number.isFinite(f) ? f : 0;
}

export function compareStart(a: RequestRecord, b: RequestRecord): number {
  return a.scheduledAt - b.scheduledAt || a.sentAt - b.sentAt || a.index - b.index;
}

export function buildLanes(run: Pick<RunFile, 'requests' | 'summary' | 'workload' | 'startedAt'>, t0?: number): LaneModel {
  const rule = stallRuleOf(run);
  const start = t0 ?? runStart(run.requests, run.startedAt);
  const ordered = run.requests.slice().sort(compareStart);
  const lanes = ordered.map((r) => buildLane(r, start, rule));
  return finish(start, lanes);
}

/** Adds records (live mode) keeping start order; a record already present (same index) is replaced. */
export function addToLanes(model: LaneModel, records: readonly RequestRecord[], rule: StallRule): LaneModel {
  const byIndex = new Map(model.lanes.map((l) => [l.request.index, l] as const));
  for (const r of records) byIndex.set(r.index, buildLane(r, model.t0, rule));
  const lanes = [...byIndex.values()].sort((a, b) => compareStart(a.request, b.request));
  return finish(model.t0, lanes);
}

function finish(t0: number, lanes: Lane[]): LaneModel {
  let endMs = 0;
  let chunkCount = 0;
  const laneOf = new Map<number, number>();
  lanes.forEach((l, i) => {
    endMs = Math.max(endMs, l.end);
    chunkCount += l.chunks.length;
    laneOf.set(l.request.index, i);
  });
  return { t0, lanes, endMs, chunkCount, laneOf };
}

/** The window [start, end] (ms since t0) of an engine-reported stall, for selecting it on the timeline. */
export function stallWindow(model: LaneModel, stall: Stall): { lane: number; start: number; end: number } | undefined {
  const lane = model.laneOf.get(stall.requestIndex);
  if (lane === undefined) return undefined;
  const l = model.lanes[lane]!;
  const start = l.sent + stall.startMs;
  return { lane, start, end: start + stall.gapMs };
}

export function seriesRequests(model: LaneModel): SeriesRequest[] {
  return model.lanes.map((l) => ({ sent: l.sent, end: l.end, chunks: l.chunks, outputTokens: l.request.outputTokens }));
}

/** Every inter-token gap of the measured requests, with the time it ended (for ITL over time). */
export function itlSamples(model: LaneModel, includeWarmup = false): { at: Float64Array; itl: Float64Array } {
  let n = 0;
  for (const l of model.lanes) if (includeWarmup || !l.request.warmup) n += Math.max(0, l.chunks.length - 1);
  const at = new Float64Array(n);
  const itl = new Float64Array(n);
  let k = 0;
  for (const l of model.lanes) {
    if (!includeWarmup && l.request.warmup) continue;
    const c = l.chunks;
    for (let i = 1; i < c.length; i++) { at[k] = c[i]!; itl[k] = c[i]! - c[i - 1]!; k++; }
  }
  return { at, itl };
}
