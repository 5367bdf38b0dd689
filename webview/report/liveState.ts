// Live mode's bookkeeping: which run is live, and whether a message belongs to it. A message for
// another run id (a stale update from a run that was replaced or cancelled) is dropped.
import type { Progress, RequestRecord, RunFile } from '../../src/engine/types';
import type { ReportHostMessage } from '../../src/shared/protocol';

export interface LiveState {
  readonly runId: string;
  readonly run: RunFile;
  readonly records: ReadonlyMap<number, RequestRecord>;
  readonly progress?: Progress;
  readonly ended: boolean;
}

export type LiveMessage = Extract<ReportHostMessage, { type: 'liveStart' | 'liveUpdate' | 'liveEnd' }>;

/** Returns the next state, or undefined when the message is stale and must be ignored. */
export function applyLive(state: LiveState | undefined, msg: LiveMessage): LiveState | undefined {
  switch (msg.type) {
    case 'liveStart': {
      const records = new Map<number, RequestRecord>();
      for (const r of msg.run.requests) records.set(r.index, r);
      return { runId: msg.runId, run: msg.run, records, ended: false };
    }
    case 'liveUpdate': {
      if (!state || state.runId !== msg.runId || state.ended) return undefined;
      const records = new Map(state.records);
      for (const r of msg.records) records.set(r.index, r);
      return { ...state, records, progress: msg.progress };
    }
    case 'liveEnd': {
      if (!state || state.runId !== msg.runId) return undefined;
      const records = new Map<number, RequestRecord>();
      for (const r of msg.run.requests) records.set(r.index, r);
      return { ...state, run: msg.run, records, ended: true };
    }
  }
}
