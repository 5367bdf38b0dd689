// The timeline's model of a run: one lane per request in start order, every time in ms since the
// run's start, chunk arrivals as typed arrays (a million of them stay cheap), stalls per lane: the
// engine's own (`requests[].stalls`, with their cause) when the run file has them, else found here by
// the run's stall rule (files written before the engine attributed stalls).
import type { RequestRecord, RunFile, Stall, StallCause } from '../../src/engine/core/types';
import { prefillStartMs } from '../../src/engine/analysis/phases';
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
  /** One per stall: its cause as a STALL_KIND (CAUSE_RULE when found by the rule, not judged by the engine). */
  readonly stallKinds: Uint8Array;
  /** Per stall: the requests the engine blamed (their `index`); empty (or missing: stalls found by the rule) when none. */
  readonly stallCulprits: readonly (readonly number[])[];
  /** Gaps longer than this are listed in bigGaps (2 × the stream's median ITL). */
  readonly bigGapMs: number;
  /** [start, length] pairs of every gap longer than bigGapMs, longest first. */
  readonly bigGaps: Float64Array;
  /** Live mode: a request still in flight, drawn from its chunks so far (its record replaces it). */
  readonly inFlight?: boolean;
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
  /** The stall kinds (indexes into STALL_KINDS) that occur, ascending: for the legend and the draw passes. */
  readonly stallKinds: readonly number[];
  /** Lanes sharing rows (a session's turns on one row); absent: a row per lane, row i is lane i. */
  readonly rows?: LaneRows;
  /** How many lanes stalled, failed, are in flight, when kept as the lanes change (live mode); else laneCounts counts them. */
  readonly counts?: LaneCounts;
}

export interface LaneCounts {
  readonly stalled: number;
  readonly failed: number;
  readonly inFlight: number;
}

/** How many of the model's lanes stalled, failed, are still in flight. */
export function laneCounts(model: LaneModel): LaneCounts {
  if (model.counts) return model.counts;
  let stalled = 0;
  let failed = 0;
  let inFlight = 0;
  for (const l of model.lanes) {
    if (l.stalls.length > 0) stalled++;
    if (l.request.error) failed++;
    if (l.inFlight) inFlight++;
  }
  return { stalled, failed, inFlight };
}

/** Lanes drawn on shared rows: each session's requests on one row, in start order; a request outside any session (a warmup) on a row of its own. */
export interface LaneRows {
  readonly by: 'session';
  /** The row of each lane (by lane index). */
  readonly of: Uint32Array;
  /** The lanes of each row, in start order. */
  readonly lanes: readonly (readonly number[])[];
  /** Each row's session (undefined: a request outside any session). */
  readonly sessions: readonly (number | undefined)[];
  /** Each row's waits between consecutive lanes, found once when grouping (a redraw reads them): see rowGaps. */
  readonly gaps: readonly Float64Array[];
}

function median(sorted: Float64Array): number {
  const n = sorted.length;
  if (n === 0) return 0;
  const m = (n - 1) / 2;
  const lo = Math.floor(m);
  return sorted[lo]! + (sorted[Math.ceil(m)]! - sorted[lo]!) * (m - lo);
}

/** Stall kinds on a lane: the engine's causes, then one for a stall found by the rule alone. */
export const STALL_KINDS = ['prefill', 'buffering', 'unknown', 'rule'] as const satisfies readonly (StallCause | 'rule')[];
export const CAUSE_RULE = 3;
const kindOf: Record<StallCause, number> = { prefill: 0, buffering: 1, unknown: 2 };
const NO_CULPRITS: readonly (readonly number[])[] = Object.freeze([]);

export interface StallRule {
  readonly factor: number;
  readonly floorMs: number;
  /** The engine judged this run's stalls: a record without `stalls` had none (never re-found by the rule). */
  readonly fromRecords?: boolean;
}

export function stallRuleOf(run: Pick<RunFile, 'summary' | 'workload'> & { readonly requests?: readonly RequestRecord[] }): StallRule {
  const s = run.summary?.stalls;
  return {
    factor: s?.factor ?? run.workload?.stallFactor ?? 5,
    floorMs: s?.floorMs ?? run.workload?.stallFloorMs ?? 100,
    fromRecords: s?.byCause !== undefined || (run.requests ?? []).some((r) => r.stalls !== undefined),
  };
}

function buildLane(r: RequestRecord, t0: number, rule: StallRule): Lane {
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
  const engine = r.stalls !== undefined || rule.fromRecords === true;
  if (gaps.length > 0) {
    const sortedGaps = gaps.slice().sort();
    const med = median(sortedGaps);
    threshold = Math.max(rule.factor * med, rule.floorMs);
    bigGapMs = 2 * med;
    // the engine's verdict replaces the rule: no gap is a stall by the rule then
    const ruleMs = engine ? Infinity : threshold;
    for (let i = 0; i < gaps.length; i++) {
      if (gaps[i]! > ruleMs) stallsList.push(chunks[i]!, gaps[i]!);
      if (gaps[i]! > bigGapMs) big.push(i);
    }
    big.sort((a, b) => gaps[b]! - gaps[a]!);
  }
  let kinds: Uint8Array;
  let culprits: readonly (readonly number[])[] = NO_CULPRITS;
  if (engine) {
    const ks: number[] = [];
    const cs: (readonly number[])[] = [];
    for (const st of r.stalls ?? []) {
      // the gap ends at the chunk `atChunk` and lasted gapMs
      const end = chunks[st.atChunk];
      if (end === undefined || !(st.gapMs >= 0)) continue;
      stallsList.push(end - st.gapMs, st.gapMs);
      ks.push(kindOf[st.cause] ?? kindOf.unknown);
      cs.push(st.culprits ?? []);
    }
    kinds = Uint8Array.from(ks);
    culprits = cs;
  } else {
    kinds = new Uint8Array(stallsList.length / 2).fill(CAUSE_RULE);
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
    stallKinds: kinds,
    stallCulprits: culprits,
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

function compareStart(a: RequestRecord, b: RequestRecord): number {
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

/** A request in flight as live mode knows it: when it was sent, and its chunks so far (ms since sent). */
export interface StreamSoFar {
  readonly index: number;
  readonly warmup: boolean;
  readonly scheduledAt: number;
  readonly sentAt: number;
  readonly chunkMs: readonly number[];
}

/** An in-flight lane's stalls wait for the engine's verdict in its record: none are found meanwhile. */
const NO_RULE: StallRule = { factor: Infinity, floorMs: Infinity, fromRecords: true };

/** The lane of a request still in flight, ending at `nowMs` (ms since t0) or its last chunk. */
export function streamLane(s: StreamSoFar, t0: number, nowMs: number): Lane {
  const c = s.chunkMs;
  const record: RequestRecord = {
    index: s.index,
    warmup: s.warmup,
    scheduledAt: s.scheduledAt,
    sentAt: s.sentAt,
    outputTokens: c.length,
    tokenSource: 'chunks',
    chunkTimesMs: c,
    ...(c.length > 0 ? { ttftMs: c[0]! } : {}),
    lastByteMs: Math.max(c.length ? c[c.length - 1]! : 0, nowMs - (s.sentAt - t0)),
  };
  return { ...buildLane(record, t0, NO_RULE), inFlight: true };
}

/** The lane of a request in flight moved on to `nowMs` with no new chunk. */
export function laneUntil(lane: Lane, nowMs: number): Lane {
  return nowMs > lane.end ? { ...lane, end: nowMs } : lane;
}

/** The finished lanes and those still in flight, in start order (a request with a record is never in flight). */
export function withInFlight(finished: LaneModel, inFlight: Iterable<Lane>): LaneModel {
  const lanes = finished.lanes.slice();
  let added = false;
  for (const l of inFlight) {
    if (finished.laneOf.has(l.request.index)) continue;
    lanes.push(l);
    added = true;
  }
  if (!added) return finished;
  lanes.sort((a, b) => compareStart(a.request, b.request));
  return finish(finished.t0, lanes);
}

function finish(t0: number, lanes: Lane[]): LaneModel {
  let endMs = 0;
  let chunkCount = 0;
  const laneOf = new Map<number, number>();
  let kinds = 0; // a bit per kind
  lanes.forEach((l, i) => {
    endMs = Math.max(endMs, l.end);
    chunkCount += l.chunks.length;
    laneOf.set(l.request.index, i);
    const k = l.stallKinds;
    for (let j = 0; j < k.length; j++) kinds |= 1 << k[j]!;
  });
  const stallKinds: number[] = [];
  for (let k = 0; k < STALL_KINDS.length; k++) if (kinds & (1 << k)) stallKinds.push(k);
  return { t0, lanes, endMs, chunkCount, laneOf, stallKinds };
}

/**
 * Live mode's lanes, kept as updates come: one array in start order holding the finished requests'
 * lanes and those still in flight, each change put in its place. A request that starts now starts
 * at or near the end, so an insert moves a few lanes and never sorts the run again; a record takes
 * its lane in flight's place. `model()` gives the timeline the state in O(1): the arrays are shared.
 * The same lanes as withInFlight(addToLanes(…), …) at any moment, at a cost per update of what the
 * update brought, not of the run so far.
 */
export class LiveLanes {
  readonly t0: number;
  readonly #lanes: Lane[] = [];
  readonly #laneOf = new Map<number, number>();
  /** The requests in flight (their lanes are in #lanes too). */
  readonly #flying = new Set<number>();
  #endMs = 0;
  #chunkCount = 0;
  #kinds = 0;
  #stalled = 0;
  #failed = 0;

  constructor(t0: number) {
    this.t0 = t0;
  }

  /** A finished request: its lane replaces the one in flight (or an earlier record's). */
  finish(r: RequestRecord, rule: StallRule): Lane {
    this.#flying.delete(r.index);
    const lane = buildLane(r, this.t0, rule);
    this.#put(lane);
    return lane;
  }

  /**
   * The requests in flight (`streams`, whole so far): lanes built again for those with new chunks
   * (`changed`), the rest extended to `nowMs` (ms since t0); a lane whose request is no longer in
   * flight and has no record goes. A request with a record is never in flight again.
   */
  fly(streams: ReadonlyMap<number, StreamSoFar>, changed: ReadonlySet<number>, nowMs: number): void {
    for (const index of this.#flying) if (!streams.has(index)) this.#remove(index);
    for (const [index, stream] of streams) {
      const at = this.#laneOf.get(index);
      const lane = at === undefined ? undefined : this.#lanes[at]!;
      if (lane && !lane.inFlight) continue;
      this.#put(!lane || changed.has(index) ? streamLane(stream, this.t0, nowMs) : laneUntil(lane, nowMs));
      this.#flying.add(index);
    }
  }

  /** The lanes of the requests in flight. */
  *inFlight(): IterableIterator<Lane> {
    for (const index of this.#flying) yield this.#lanes[this.#laneOf.get(index)!]!;
  }

  model(): LaneModel {
    const stallKinds: number[] = [];
    for (let k = 0; k < STALL_KINDS.length; k++) if (this.#kinds & (1 << k)) stallKinds.push(k);
    return { t0: this.t0, lanes: this.#lanes, endMs: this.#endMs, chunkCount: this.#chunkCount, laneOf: this.#laneOf, stallKinds,
      counts: { stalled: this.#stalled, failed: this.#failed, inFlight: this.#flying.size } };
  }

  #put(lane: Lane): void {
    const index = lane.request.index;
    const at = this.#laneOf.get(index);
    const old = at === undefined ? undefined : this.#lanes[at]!;
    if (old && compareStart(old.request, lane.request) === 0) {
      this.#lanes[at!] = lane;
      this.#count(old, -1);
    } else {
      if (old) this.#remove(index);
      // the first lane that starts after this one: near the end for a request that starts now
      let lo = 0;
      let hi = this.#lanes.length;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (compareStart(this.#lanes[mid]!.request, lane.request) <= 0) lo = mid + 1;
        else hi = mid;
      }
      this.#lanes.splice(lo, 0, lane);
      this.#renumber(lo);
    }
    this.#count(lane, 1);
    this.#endMs = Math.max(this.#endMs, lane.end);
    for (let j = 0; j < lane.stallKinds.length; j++) this.#kinds |= 1 << lane.stallKinds[j]!;
  }

  #remove(index: number): void {
    const at = this.#laneOf.get(index);
    this.#flying.delete(index);
    if (at === undefined) return;
    this.#count(this.#lanes[at]!, -1);
    this.#lanes.splice(at, 1);
    this.#laneOf.delete(index);
    this.#renumber(at);
  }

  /** A lane's chunks, stalls and failure counted in (1) or out (−1). */
  #count(lane: Lane, sign: 1 | -1): void {
    this.#chunkCount += sign * lane.chunks.length;
    if (lane.stalls.length > 0) this.#stalled += sign;
    if (lane.request.error) this.#failed += sign;
  }

  /** The lane positions from `from` on moved: their requests' entries follow. */
  #renumber(from: number): void {
    for (let j = from; j < this.#lanes.length; j++) this.#laneOf.set(this.#lanes[j]!.request.index, j);
  }
}

/** The window [start, end] (ms since t0) of an engine-reported stall, for selecting it on the timeline. */
export function stallWindow(model: LaneModel, stall: Stall): { lane: number; start: number; end: number } | undefined {
  const lane = model.laneOf.get(stall.requestIndex);
  if (lane === undefined) return undefined;
  const l = model.lanes[lane]!;
  const start = l.sent + stall.startMs;
  return { lane, start, end: start + stall.gapMs };
}

/** Where a request's prefill ran, ms since t0: as the engine places it from the server's prompt time (else its whole TTFT). */
export function prefillSpan(lane: Lane): { start: number; end: number } | undefined {
  if (lane.firstToken === undefined) return undefined;
  return { start: lane.sent + (prefillStartMs(lane.request) ?? 0), end: lane.firstToken };
}

/** The culprits of an engine-reported stall that have a lane, with their prefill spans (the `index`es from the stall, else from the record's own stall). */
export function stallCulprits(model: LaneModel, stall: Stall): { index: number; lane: number; start: number; end: number }[] {
  let indexes: readonly number[] | undefined = stall.culprits?.map((c) => c.index);
  if (!indexes && stall.atChunk !== undefined) {
    // a summary entry without culprits: the record's own stall at the same chunk may name them
    const lane = model.laneOf.get(stall.requestIndex);
    indexes = lane === undefined ? undefined : model.lanes[lane]!.request.stalls?.find((x) => x.atChunk === stall.atChunk)?.culprits;
  }
  const out: { index: number; lane: number; start: number; end: number }[] = [];
  for (const index of indexes ?? []) {
    const lane = model.laneOf.get(index);
    if (lane === undefined) continue;
    const span = prefillSpan(model.lanes[lane]!);
    if (span) out.push({ index, lane, ...span });
  }
  return out;
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

// ---- rows: a session's turns on one row ----

/** Whether any request of the model belongs to a session (a multi-turn run). */
export function hasSessions(model: LaneModel): boolean {
  return model.lanes.some((l) => l.request.session !== undefined);
}

/** The model with each session's lanes on one row, rows in the order their first request was due (sessions due together by their number). */
export function groupBySession(model: LaneModel): LaneModel {
  const groups: { session?: number; lanes: number[] }[] = [];
  const bySession = new Map<number, { session?: number; lanes: number[] }>();
  model.lanes.forEach((l, i) => {
    const s = l.request.session;
    let g = s === undefined ? undefined : bySession.get(s);
    if (!g) {
      g = { ...(s !== undefined ? { session: s } : {}), lanes: [] };
      groups.push(g);
      if (s !== undefined) bySession.set(s, g);
    }
    g.lanes.push(i);
  });
  const due = (g: { lanes: number[] }) => model.lanes[g.lanes[0]!]!.scheduled;
  groups.sort((a, b) => due(a) - due(b) || (a.session ?? -1) - (b.session ?? -1));
  const of = new Uint32Array(model.lanes.length);
  groups.forEach((g, row) => { for (const i of g.lanes) of[i] = row; });
  return { ...model, rows: { by: 'session', of, lanes: groups.map((g) => g.lanes), sessions: groups.map((g) => g.session), gaps: groups.map((g) => gapsOf(model, g.lanes)) } };
}

/** The model with a row per lane again. */
export function ungrouped(model: LaneModel): LaneModel {
  if (!model.rows) return model;
  const { rows: _rows, ...rest } = model;
  return rest;
}

export function rowCount(model: LaneModel): number {
  return model.rows ? model.rows.lanes.length : model.lanes.length;
}

export function rowOfLane(model: LaneModel, lane: number): number {
  return model.rows ? model.rows.of[lane]! : lane;
}

/** The lanes on a row, in start order. */
export function lanesOfRow(model: LaneModel, row: number): readonly number[] {
  return model.rows ? (model.rows.lanes[row] ?? []) : row >= 0 && row < model.lanes.length ? [row] : [];
}

/** A lane's neighbours on its row (the session's previous and next turns), when rows are shared. */
export function rowNeighbours(model: LaneModel, lane: number): { prev?: Lane; next?: Lane; position: number; count: number } {
  const rows = model.rows;
  if (!rows) return { position: 0, count: 1 };
  const list = rows.lanes[rows.of[lane]!]!;
  const k = list.indexOf(lane);
  return {
    ...(k > 0 ? { prev: model.lanes[list[k - 1]!]! } : {}),
    ...(k >= 0 && k < list.length - 1 ? { next: model.lanes[list[k + 1]!]! } : {}),
    position: k, count: list.length,
  };
}

/** The waits between a row's consecutive lanes (think time, and the client's wait before the next turn was sent): [start, end] pairs, ms since t0. */
export function rowGaps(model: LaneModel, row: number): Float64Array {
  return model.rows?.gaps[row] ?? NO_GAPS;
}

const NO_GAPS = new Float64Array(0);

function gapsOf(model: LaneModel, list: readonly number[]): Float64Array {
  const out: number[] = [];
  for (let k = 1; k < list.length; k++) {
    const a = model.lanes[list[k - 1]!]!;
    const b = model.lanes[list[k]!]!;
    if (b.scheduled > a.end) out.push(a.end, b.scheduled);
  }
  return Float64Array.from(out);
}
