// Live mode's bookkeeping: which run is live, and whether a message belongs to it. A message for
// another run id (a stale update from a run that was replaced or cancelled) is dropped. Requests
// still in flight come as chunk deltas (StreamDelta) and are kept as streams until their record
// arrives, which replaces them. An update changes the state's maps in place (the next state shares
// them): its cost is what it brought, not the run so far.
import type { Progress, RequestRecord, RunFile, StreamDelta } from '../../src/engine/core/types';
import type { ReportHostMessage } from '../../src/shared/protocol';

/** A request in flight: every chunk so far (ms since sent, ascending). */
export interface LiveStream {
  readonly index: number;
  readonly warmup: boolean;
  readonly scheduledAt: number;
  readonly sentAt: number;
  /** Grows in place as deltas arrive (the page's own copy; a new state shares it with the last). */
  readonly chunkMs: number[];
}

export interface LiveState {
  readonly runId: string;
  readonly run: RunFile;
  readonly records: ReadonlyMap<number, RequestRecord>;
  readonly streams: ReadonlyMap<number, LiveStream>;
  /** The streams changed by the last message (their lanes are built again). */
  readonly changed: ReadonlySet<number>;
  readonly progress?: Progress;
  readonly ended: boolean;
}

export type LiveMessage = Extract<ReportHostMessage, { type: 'liveStart' | 'liveUpdate' | 'liveEnd' }>;

/** Appends deltas to the streams (skipping requests that have their record); returns the indexes touched. */
function applyStreams(streams: Map<number, LiveStream>, deltas: readonly StreamDelta[] | undefined, records: ReadonlyMap<number, RequestRecord>): Set<number> {
  const changed = new Set<number>();
  for (const d of deltas ?? []) {
    if (records.has(d.index)) continue;
    let s = streams.get(d.index);
    if (!s) {
      s = { index: d.index, warmup: d.warmup === true, scheduledAt: d.scheduledAt, sentAt: d.sentAt, chunkMs: [] };
      streams.set(d.index, s);
    }
    // a delta may overlap what the page has (a resend) or follow a gap it never got: take what is new, in order
    const have = s.chunkMs.length;
    const skip = Math.max(0, have - d.from);
    let last = have > 0 ? s.chunkMs[have - 1]! : -Infinity;
    for (let k = skip; k < d.chunkMs.length; k++) {
      const t = d.chunkMs[k]!;
      if (t >= last) { s.chunkMs.push(t); last = t; }
    }
    changed.add(d.index);
  }
  return changed;
}

/** Returns the next state, or undefined when the message is stale and must be ignored. */
export function applyLive(state: LiveState | undefined, msg: LiveMessage): LiveState | undefined {
  switch (msg.type) {
    case 'liveStart': {
      const records = new Map<number, RequestRecord>();
      for (const r of msg.run.requests) records.set(r.index, r);
      const streams = new Map<number, LiveStream>();
      const changed = applyStreams(streams, msg.streams, records);
      return { runId: msg.runId, run: msg.run, records, streams, changed, ended: false };
    }
    case 'liveUpdate': {
      if (!state || state.runId !== msg.runId || state.ended) return undefined;
      // in place: a copy of an hour's records at every update (ten a second) would cost more than the update
      const records = state.records as Map<number, RequestRecord>;
      for (const r of msg.records) records.set(r.index, r);
      const streams = state.streams as Map<number, LiveStream>;
      for (const r of msg.records) streams.delete(r.index);
      const changed = applyStreams(streams, msg.streams, records);
      return { ...state, records, streams, changed, progress: msg.progress };
    }
    case 'liveEnd': {
      if (!state || state.runId !== msg.runId) return undefined;
      const records = new Map<number, RequestRecord>();
      for (const r of msg.run.requests) records.set(r.index, r);
      return { ...state, run: msg.run, records, streams: new Map(), changed: new Set(), ended: true };
    }
  }
}
