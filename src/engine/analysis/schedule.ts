// How late requests were sent against their schedule: a trace's timestamps, an open loop's arrivals.
// Lag is sentAt − scheduledAt: the client's own delay between a request's due time and the moment
// its body was on the wire (building it, a free connection, the event loop; with a max-concurrency
// cap, the wait for a slot too). When many are late, the load the server saw was lighter than the
// one asked for, and every figure of the run is of that lighter load: the verdict says so. Pure.
import type { RequestRecord, ScheduleSummary, Verdict, WorkloadMode } from '../core/types';
import { intWords, msWords } from '../core/words';
import { percentile, stats } from '../core/stats';

/** A request sent more than this after its due time is late; a run whose p99 lag is over it did not keep its schedule. */
export const SCHEDULE_LATE_MS = 5;

/**
 * The lag of the measured requests that had a schedule: an open loop's and a trace's (a closed loop
 * sends when a reply ends: it has none). A conversation's later turns go when the turn before ended,
 * not on a schedule: only first turns count. Undefined when no request had one.
 */
export function summarizeSchedule(measured: readonly RequestRecord[], mode: WorkloadMode, percentiles: readonly number[]): ScheduleSummary | undefined {
  if (mode.kind === 'closed') return undefined;
  const lags: number[] = [];
  for (const r of measured) if (!(r.turn !== undefined && r.turn > 0) && Number.isFinite(r.sentAt - r.scheduledAt)) lags.push(r.sentAt - r.scheduledAt);
  if (lags.length === 0) return undefined;
  const sorted = [...lags].sort((a, b) => a - b);
  const p99 = percentile(sorted, 99);
  const late = lags.filter((x) => x > SCHEDULE_LATE_MS).length;
  return { lagMs: stats(lags, [...new Set([...percentiles, 50, 99])].sort((a, b) => a - b)), late, kept: p99 <= SCHEDULE_LATE_MS };
}

/** The verdict when the schedule was not kept: how many were late, and what that did to the load. */
export function scheduleVerdict(s: ScheduleSummary | undefined, mode: WorkloadMode): Verdict | undefined {
  if (s === undefined || s.kept || mode.kind === 'closed') return undefined;
  const p99 = s.lagMs.p99 ?? s.lagMs.max;
  const sent = `the client sent ${intWords(s.late)} of ${intWords(s.lagMs.count)} requests more than ${msWords(SCHEDULE_LATE_MS)} late (p99 lag ${msWords(p99)})`;
  const asked = mode.kind === 'trace' ? 'the trace' : mode.ramp ? 'the ramp asked for' : `${mode.rate} requests/s`;
  const capped = mode.maxConcurrency !== undefined ? `; with at most ${intWords(mode.maxConcurrency)} in flight (max concurrency), a request waits for a slot` : '';
  return { kind: 'schedule', message: `${sent}: the load was lighter than ${asked}${capped}`, value: p99 };
}
