// A run file from the journal of a run whose process died (files/journal.ts): every request that
// finished, each finished repetition and sweep point (a sweep's fits over its finished points), marked
// `interrupted` with when the journal was last written and what was in flight then. A journal whose
// run ended (only its run file could not be written) gives the run file it would have written.
import { analyzeTiming, annotateRequests } from '../analysis/attribution';
import { summarize } from '../analysis/metrics';
import { RUN_FORMAT, RUN_VERSION, TOOL_NAME, TOOL_VERSION } from '../core/runFormat';
import type { Interrupted, RequestRecord, RunFile } from '../core/types';
import { recordEnd } from '../files/journal';
import type { JournalContents } from '../files/journal';
import { assembleRunFile } from './runAssembly';
import type { SegmentParts } from './runAssembly';
import { pointLabel, sweepSection } from './sweep';
import { basename } from 'node:path';

const iso = (ms: number): string => new Date(ms).toISOString();

/** The measured phase's wall time, s, as the records show it: from the first send to the last end. */
function measuredSpanS(records: readonly RequestRecord[]): number {
  let from = Infinity;
  let to = -Infinity;
  for (const r of records) {
    if (r.warmup) continue;
    from = Math.min(from, r.scheduledAt, r.sentAt);
    to = Math.max(to, recordEnd(r));
  }
  return to > from ? (to - from) / 1000 : 0;
}

/** Each repetition that started: from its start to the next one's (the last: to its last record's end). */
function segmentsOf(j: JournalContents, records: readonly RequestRecord[]): SegmentParts[] {
  const starts = [...j.repetitions].sort((a, b) => a.i - b.i);
  return starts.map((s, k) => {
    const next = starts[k + 1];
    let end = next?.at;
    if (end === undefined) {
      end = s.at;
      for (const r of records) if (r.repeat === s.i && !r.warmup) end = Math.max(end, recordEnd(r));
    }
    return { index: s.i, startedAt: iso(s.at), durationS: Math.max(0, end - s.at) / 1000 };
  });
}

/** The repetition that was running when the process stopped: the last one started, unless it holds every request it was to send. */
function unfinishedRepetition(j: JournalContents, records: readonly RequestRecord[]): number | undefined {
  const last = [...j.repetitions].sort((a, b) => b.i - a.i)[0];
  if (!last) return undefined;
  const per = j.head.workload.requests;
  const done = records.filter((r) => !r.warmup && r.repeat === last.i).length;
  return per !== undefined && done >= per ? undefined : last.i;
}

function interruptedOf(j: JournalContents, records: readonly RequestRecord[], now: Date, unfinishedPoint?: string): Interrupted {
  const cut = j.head.repeat !== undefined && j.head.repeat > 1 ? unfinishedRepetition(j, records) : undefined;
  const measured = records.filter((r) => !r.warmup).length;
  return {
    ...(j.lastRecordAt !== undefined ? { lastRecordAt: iso(j.lastRecordAt) } : {}),
    lastSeenAt: iso(j.lastSeenAt),
    inFlight: j.progress?.inFlight ?? 0,
    finished: measured,
    ...(j.progress?.total !== undefined ? { total: j.progress.total } : {}),
    recoveredAt: now.toISOString(),
    journal: basename(j.path),
    ...(unfinishedPoint !== undefined ? { unfinishedPoint } : {}),
    ...(cut !== undefined ? { unfinishedRepetition: cut } : {}),
    ...(j.skipped > 0 ? { skippedLines: j.skipped } : {}),
  };
}

function recoverSweep(j: JournalContents, requests: readonly RequestRecord[]): { run: RunFile; unfinished?: string } {
  const h = j.head;
  const spec = h.sweep!;
  const points = [...j.points].sort((a, b) => a.i - b.i).map((p) => p.point);
  const inPoints = new Set(points.flatMap((p) => p.requestIndexes));
  const unfinished = requests.some((r) => !inPoints.has(r.index)) && points.length < spec.values.length ? pointLabel(spec.dimension, spec.values[points.length]!) : undefined;
  const analysis = analyzeTiming(requests, h.workload);
  const annotated = annotateRequests(requests, analysis);
  const durationS = points.reduce((t, p) => t + p.summary.durationS, 0) + measuredSpanS(requests.filter((r) => !inPoints.has(r.index)));
  const { workload, sweep } = sweepSection({ ...spec, workload: h.workload }, points);
  const run: RunFile = {
    format: RUN_FORMAT,
    version: RUN_VERSION,
    id: h.id,
    startedAt: h.startedAt,
    endedAt: iso(j.end?.at ?? j.lastSeenAt),
    ...(j.end?.cancelled ? { cancelled: true } : {}),
    tool: { name: TOOL_NAME, version: TOOL_VERSION },
    endpoint: h.endpoint,
    workload,
    ...(h.prompts?.length ? { prompts: h.prompts } : {}),
    requests: annotated,
    summary: summarize(annotated, h.workload, { durationS, analysis }),
    sweep,
  };
  return { run, ...(unfinished !== undefined ? { unfinished } : {}) };
}

/** The run file of a journal. `now`: the recovery's time. */
export function recoverRun(j: JournalContents, now = new Date()): RunFile {
  const h = j.head;
  const requests = [...j.records].sort((a, b) => a.index - b.index);
  if (h.kind === 'sweep' && h.sweep) {
    const { run, unfinished } = recoverSweep(j, requests);
    return j.end ? run : { ...run, interrupted: interruptedOf(j, requests, now, unfinished) };
  }
  const segments = h.repeat !== undefined && h.repeat > 1 ? segmentsOf(j, requests) : undefined;
  const run = assembleRunFile({
    id: h.id,
    startedAt: h.startedAt,
    endedAt: iso(j.end?.at ?? j.lastSeenAt),
    cancelled: j.end?.cancelled ?? false,
    endpoint: h.endpoint,
    workload: h.workload,
    ...(h.prompts?.length ? { prompts: h.prompts } : {}),
    requests,
    durationS: segments ? segments.reduce((t, s) => t + s.durationS, 0) : measuredSpanS(requests),
    ...(segments ? { segments } : {}),
  });
  return j.end ? run : { ...run, interrupted: interruptedOf(j, requests, now) };
}
