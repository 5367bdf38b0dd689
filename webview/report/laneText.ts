// What the timeline says about a request of a conversation, a trace replay or a reply with tool
// calls: its session and turn, the think time before it, its trace line and how late it was sent,
// its tool calls. The details line and the tooltip take their words from here.
import type { RequestRecord } from '../../src/engine/core/types';
import { formatInt, formatMs } from '../../src/present/units';
import { toolCallText } from '../../src/present/toolText';
import { rowNeighbours, type Lane, type LaneModel } from './lanes';

/** "session 3, turn 2 of 5" (both from 1, as the turn chart counts them); "trace line 18". */
export function trafficWhere(lane: Lane, model: LaneModel, laneIndex: number | undefined): string | undefined {
  const r = lane.request;
  if (r.session !== undefined) {
    const of = laneIndex !== undefined && model.rows ? ` of ${formatInt(rowNeighbours(model, laneIndex).count)}` : '';
    return `session ${formatInt(r.session + 1)}, turn ${formatInt((r.turn ?? 0) + 1)}${of}`;
  }
  if (r.traceLine !== undefined) return `trace line ${formatInt(r.traceLine + 1)}`;
  return undefined;
}

/** The think time before a turn: from the previous turn's end to when this one was due (undefined for a first turn, or without rows). */
export function thinkBefore(model: LaneModel, laneIndex: number | undefined): number | undefined {
  if (laneIndex === undefined || !model.rows) return undefined;
  const { prev } = rowNeighbours(model, laneIndex);
  const lane = model.lanes[laneIndex]!;
  return prev ? Math.max(0, lane.scheduled - prev.end) : undefined;
}

/** Whether the request was sent against a schedule (a trace's timestamps, an open loop's arrivals): its wait before the send is lateness ("Sent late by"), not the client's wait. */
export function onSchedule(r: RequestRecord, mode: 'closed' | 'open' | 'trace' | undefined): boolean {
  return r.traceLine !== undefined || mode === 'open' || mode === 'trace';
}

/** The tooltip's rows for these traffic figures, after the request's own. */
export function trafficTooltip(lane: Lane, model: LaneModel, laneIndex: number | undefined, mode: 'closed' | 'open' | 'trace' | undefined): [string, string][] {
  const r = lane.request;
  const out: [string, string][] = [];
  const where = trafficWhere(lane, model, laneIndex);
  if (r.session !== undefined) {
    out.push(['Session', where!]);
    const think = thinkBefore(model, laneIndex);
    if (think !== undefined) out.push(['Think time before', formatMs(think)]);
    if (r.historyTokens !== undefined) out.push(['History tokens', formatInt(r.historyTokens)]);
  } else if (where) out.push(['Trace', where]);
  const cached = r.serverTimings?.cachedTokens;
  if (cached !== undefined && (r.session !== undefined || r.traceLine !== undefined)) out.push(['Cached tokens', formatInt(cached)]);
  if (onSchedule(r, mode)) out.push(['Sent late by', formatMs(lane.sent - lane.scheduled)]);
  for (const c of r.toolCalls ?? []) out.push(['Tool call', toolCallText(c)]);
  return out;
}
