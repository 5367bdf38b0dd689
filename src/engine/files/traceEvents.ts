// A run as a trace in the Trace Event Format (the JSON Object Format of Google's "Trace Event Format"
// document, docs.google.com/document/d/1CvAClvFfyA5R-PhYUmn5OOQtYMH4h6I0nSsKchNAySU), so that it opens
// in Perfetto UI (ui.perfetto.dev) and chrome://tracing: a process per run (per point of a sweep, per
// configuration of the prefill dial), a thread (track) per request, complete events (`X`) for the
// queue, the request, its prefill (to the first token) and decode, its stalls, an instant (`i`) per
// chunk. Slices on one track nest strictly (Perfetto, like the format, does not draw overlapping
// slices: perfetto.dev/docs/faq): queue, then the request, which holds prefill then decode, which holds
// the stalls. Times are µs after the run's start, to the ns. Only a scrubbed run is exported
// (redact.ts `scrubRun`), and every text taken from it (names, ids, errors) loses its control
// characters: JSON escapes C0 controls but not DEL, C1 or the bidirectional overrides a viewer shows.
import { printable } from '../core/redact';
import type { ScrubbedRun } from '../core/redact';
import type { RequestRecord, RunFile } from '../core/types';

export interface TraceEventBase {
  readonly name: string;
  readonly ph: 'X' | 'i' | 'M';
  readonly pid: number;
  readonly tid: number;
  readonly cat?: string;
  readonly args?: Readonly<Record<string, unknown>>;
}
export interface CompleteEvent extends TraceEventBase {
  readonly ph: 'X';
  readonly ts: number;
  readonly dur: number;
}
export interface InstantEvent extends TraceEventBase {
  readonly ph: 'i';
  readonly ts: number;
  /** Scope: thread. */
  readonly s: 't';
}
export interface MetadataEvent extends TraceEventBase {
  readonly ph: 'M';
  readonly name: 'process_name' | 'process_sort_index' | 'thread_name' | 'thread_sort_index';
}
export type TraceEvent = CompleteEvent | InstantEvent | MetadataEvent;

export interface TraceFile {
  readonly traceEvents: readonly TraceEvent[];
  readonly displayTimeUnit: 'ms';
  /** About the run (Chrome's traces keep such facts under "metadata"; viewers ignore it). */
  readonly metadata: Readonly<Record<string, unknown>>;
}

/** µs, rounded to the ns: the format's unit, and an exact decimal that sums and compares without drift. */
const us = (ms: number): number => Math.round(ms * 1e6) / 1e3;

interface Group {
  readonly name: string;
  readonly records: readonly RequestRecord[];
}

/** The run's processes: a sweep's points, the dial's configurations, or the run itself; requests no group claims go to a last one. */
function groupsOf(run: RunFile): Group[] {
  const byIndex = new Map<number, RequestRecord>();
  for (const r of run.requests) byIndex.set(r.index, r);
  const claimed = new Set<RequestRecord>();
  const pick = (indexes: readonly number[]): RequestRecord[] => {
    const out: RequestRecord[] = [];
    for (const i of indexes) {
      const r = byIndex.get(i) ?? run.requests[i];
      if (r && !claimed.has(r)) {
        claimed.add(r);
        out.push(r);
      }
    }
    return out;
  };
  const runName = printable(run.endpoint.name ?? run.endpoint.model ?? run.id, true);
  const groups: Group[] = [];
  for (const p of run.sweep?.points ?? []) groups.push({ name: `${runName} · ${printable(p.label, true)}`, records: pick(p.requestIndexes) });
  for (const c of run.prefillDial?.configs ?? []) {
    groups.push({ name: `${runName} · ${printable(c.label, true)}`, records: pick([...c.decode.requestIndexes, ...c.long.requestIndexes]) });
  }
  const rest = run.requests.filter((r) => !claimed.has(r));
  if (rest.length > 0 || groups.length === 0) groups.push({ name: groups.length === 0 ? runName : `${runName} · other`, records: rest });
  return groups;
}

/** The run's time origin, epoch ms: its start, or its first scheduled request if that came earlier. */
function originOf(run: RunFile): number {
  let t0 = Date.parse(run.startedAt);
  for (const r of run.requests) if (!(r.scheduledAt >= t0)) t0 = r.scheduledAt;
  return Number.isFinite(t0) ? t0 : 0;
}

/** The end of a request, ms after sentAt: the last thing known of it. */
function endOf(r: RequestRecord): number {
  const last = r.chunkTimesMs.length > 0 ? r.chunkTimesMs[r.chunkTimesMs.length - 1]! : 0;
  return Math.max(0, r.e2eMs ?? 0, r.lastByteMs ?? 0, r.ttftMs ?? 0, last);
}

function requestEvents(r: RequestRecord, pid: number, tid: number, t0: number, out: TraceEvent[]): void {
  const at = (msAfterSent: number) => us(r.sentAt - t0 + msAfterSent);
  const slice = (name: string, cat: string, from: number, to: number, args?: Record<string, unknown>): CompleteEvent => ({
    name, cat, ph: 'X', pid, tid, ts: from, dur: Math.max(0, Math.round((to - from) * 1e3) / 1e3), ...(args ? { args } : {}),
  });
  const failed = r.error !== undefined;
  const kind = failed ? printable(r.error!.kind, true) : '';
  const message = failed ? printable(r.error!.message) : '';
  const scheduled = us(r.scheduledAt - t0);
  const sent = at(0);
  out.push(...(sent > scheduled ? [slice('queue', 'queue', scheduled, sent, r.retries?.length ? { retries: r.retries.length } : undefined)] : []));
  const end = at(endOf(r));
  out.push(slice(failed ? `request ${r.index} (failed: ${kind})` : `request ${r.index}`, failed ? 'request,failed' : 'request', sent, end, {
    index: r.index,
    ...(r.warmup ? { warmup: true } : {}),
    outputTokens: r.outputTokens,
    ...(r.promptTokens !== undefined ? { promptTokens: r.promptTokens } : {}),
    ...(r.ttftMs !== undefined ? { ttftMs: r.ttftMs } : {}),
    ...(r.tpotMs !== undefined ? { tpotMs: r.tpotMs } : {}),
    ...(r.e2eMs !== undefined ? { e2eMs: r.e2eMs } : {}),
    ...(r.httpStatus !== undefined ? { httpStatus: r.httpStatus } : {}),
    ...(failed ? { error: { kind, message, ...(r.error!.status !== undefined ? { status: r.error!.status } : {}) } } : {}),
  }));
  const times = r.chunkTimesMs;
  if (r.ttftMs !== undefined) {
    out.push(slice('prefill (TTFT)', 'prefill', sent, at(r.ttftMs), { ttftMs: r.ttftMs }));
    const last = times.length > 0 ? times[times.length - 1]! : r.ttftMs;
    if (last > r.ttftMs) {
      out.push(slice('decode', 'decode', at(r.ttftMs), at(last), { chunks: times.length, ...(r.tpotMs !== undefined ? { tpotMs: r.tpotMs } : {}) }));
      for (const s of r.stalls ?? []) {
        // a stall ends at the chunk that closed the gap; kept inside decode, where it happened
        const stop = times[s.atChunk];
        if (stop === undefined || s.atChunk < 1) continue;
        const from = Math.max(r.ttftMs, stop - s.gapMs);
        const cause = printable(s.cause, true);
        out.push(slice(`stall (${cause})`, 'stall', at(from), at(stop), { gapMs: s.gapMs, cause, ...(s.culprits.length ? { culprits: s.culprits } : {}) }));
      }
    }
  }
  for (let k = 0; k < times.length; k++) {
    const gap = k === 0 ? undefined : times[k]! - times[k - 1]!;
    out.push({ name: 'chunk', cat: 'chunk', ph: 'i', s: 't', pid, tid, ts: at(times[k]!), args: { chunk: k, atMs: times[k], ...(gap !== undefined ? { gapMs: gap } : {}) } });
  }
  if (failed) {
    out.push({ name: `error: ${kind}`, cat: 'failed', ph: 'i', s: 't', pid, tid, ts: at(r.e2eMs ?? endOf(r)), args: { message } });
  }
}

/** Slices first by start, a parent before what it holds (longer first at the same start); instants after slices at the same time. */
function byTime(a: TraceEvent, b: TraceEvent): number {
  const ta = a.ph === 'M' ? -Infinity : a.ts;
  const tb = b.ph === 'M' ? -Infinity : b.ts;
  if (ta !== tb) return ta - tb;
  const da = a.ph === 'X' ? a.dur : -1;
  const db = b.ph === 'X' ? b.dur : -1;
  return db - da;
}

/** The run as a Trace Event Format JSON object (`traceToJson` writes it as a `.json` file's text). */
export function runToTraceEvents(run: ScrubbedRun): TraceFile {
  const t0 = originOf(run);
  const events: TraceEvent[] = [];
  groupsOf(run).forEach((g, gi) => {
    const pid = gi + 1;
    events.push({ name: 'process_name', ph: 'M', pid, tid: 0, args: { name: g.name } });
    events.push({ name: 'process_sort_index', ph: 'M', pid, tid: 0, args: { sort_index: pid } });
    const track: TraceEvent[] = [];
    for (const r of g.records) {
      const tid = r.index + 1;
      const label = `request ${r.index}${r.warmup ? ' (warm-up)' : ''}${r.error ? ' (failed)' : ''}`;
      events.push({ name: 'thread_name', ph: 'M', pid, tid, args: { name: label } });
      events.push({ name: 'thread_sort_index', ph: 'M', pid, tid, args: { sort_index: r.index } });
      requestEvents(r, pid, tid, t0, track);
    }
    // one by one: a spread of a 300 000-request track (millions of events) overflows the stack
    for (const e of track.sort(byTime)) events.push(e);
  });
  return {
    traceEvents: events,
    displayTimeUnit: 'ms',
    metadata: {
      'llm-profiler-run': printable(run.id, true),
      startedAt: printable(run.startedAt, true),
      ...(run.endedAt !== undefined ? { endedAt: printable(run.endedAt, true) } : {}),
      tool: printable(`${run.tool.name} ${run.tool.version}`, true),
      api: printable(run.endpoint.api, true),
      ...(run.endpoint.model !== undefined ? { model: printable(run.endpoint.model, true) } : {}),
      requests: run.requests.length,
      ...(run.cancelled ? { cancelled: true } : {}),
      origin: 'ts is µs after startedAt',
    },
  };
}

/** The text of a trace file: what --trace-out and the report's "Export trace" write. */
export function traceToJson(run: ScrubbedRun): string {
  return `${JSON.stringify(runToTraceEvents(run))}\n`;
}
