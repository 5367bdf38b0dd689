// runToTraceEvents against the Trace Event Format (Google's "Trace Event Format" document,
// docs.google.com/document/d/1CvAClvFfyA5R-PhYUmn5OOQtYMH4h6I0nSsKchNAySU: the JSON Object Format,
// the fields each phase requires, metadata events' names and args) and Perfetto's rule for JSON
// traces that slices on one thread nest strictly (perfetto.dev/docs/faq, "overlapping events"). No
// schema or trace_processor binary can be installed here, so the checks below are written from them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Scrubber, scrubRun } from '../../src/engine/core/redact';
import { runToTraceEvents } from '../../src/engine/files/traceEvents';
import type { TraceFile } from '../../src/engine/files/traceEvents';
import { fixtureRun, fixtureSweepRun, fixtureWhereRun } from '../support/fixtureRuns';
import type { RequestRecord, RunFile } from '../../src/engine/core/types';

type Ev = Record<string, unknown>;
const METADATA_NAMES = new Set(['process_name', 'process_labels', 'process_sort_index', 'thread_name', 'thread_sort_index']);
/** Nesting is checked to the ns (times are µs with three decimals; their sums carry binary-fraction noise). */
const EPS = 1e-6;

/** Every event's required fields and their types, per phase, as the format document gives them. */
function checkFormat(file: unknown): Ev[] {
  assert.ok(file && typeof file === 'object' && !Array.isArray(file), 'the JSON Object Format: an object');
  const f = file as Record<string, unknown>;
  assert.ok(Array.isArray(f.traceEvents), 'traceEvents is an array');
  assert.ok(f.displayTimeUnit === 'ms' || f.displayTimeUnit === 'ns', 'displayTimeUnit is "ms" or "ns"');
  for (const e of f.traceEvents as Ev[]) {
    const where = JSON.stringify(e).slice(0, 160);
    assert.equal(typeof e.name, 'string', `name: ${where}`);
    assert.ok(typeof e.ph === 'string' && ['X', 'i', 'M'].includes(e.ph), `ph: ${where}`);
    assert.ok(Number.isInteger(e.pid) && Number.isInteger(e.tid), `pid, tid: ${where}`);
    if ('cat' in e) assert.equal(typeof e.cat, 'string', `cat: ${where}`);
    if ('args' in e) assert.ok(e.args && typeof e.args === 'object' && !Array.isArray(e.args), `args: ${where}`);
    if (e.ph === 'X') {
      assert.ok(typeof e.ts === 'number' && Number.isFinite(e.ts) && e.ts >= 0, `X ts: ${where}`);
      assert.ok(typeof e.dur === 'number' && Number.isFinite(e.dur) && e.dur >= 0, `X dur: ${where}`);
    } else if (e.ph === 'i') {
      assert.ok(typeof e.ts === 'number' && Number.isFinite(e.ts) && e.ts >= 0, `i ts: ${where}`);
      assert.ok(e.s === undefined || ['g', 'p', 't'].includes(e.s as string), `i scope: ${where}`);
    } else {
      assert.ok(METADATA_NAMES.has(e.name as string), `M name: ${where}`);
      const args = e.args as Record<string, unknown>;
      if ((e.name as string).endsWith('_name')) assert.equal(typeof args.name, 'string', `M args.name: ${where}`);
      if ((e.name as string).endsWith('_sort_index')) assert.ok(Number.isInteger(args.sort_index), `M args.sort_index: ${where}`);
    }
  }
  return f.traceEvents as Ev[];
}

/** X events on each (pid, tid) nest: each starts after the one it is in starts and ends before it ends, or after it ends. */
function checkNesting(events: Ev[]): number {
  const tracks = new Map<string, Ev[]>();
  for (const e of events) if (e.ph === 'X') {
    const k = `${e.pid}/${e.tid}`;
    tracks.set(k, [...(tracks.get(k) ?? []), e]);
  }
  for (const [k, list] of tracks) {
    list.sort((a, b) => (a.ts as number) - (b.ts as number) || (b.dur as number) - (a.dur as number));
    const open: { end: number; name: string }[] = [];
    for (const e of list) {
      const start = e.ts as number;
      const end = start + (e.dur as number);
      while (open.length > 0 && open[open.length - 1]!.end <= start + EPS) open.pop();
      const parent = open[open.length - 1];
      if (parent) assert.ok(end <= parent.end + EPS, `track ${k}: "${e.name as string}" [${start}, ${end}] overlaps "${parent.name}" ending ${parent.end}`);
      open.push({ end, name: e.name as string });
    }
  }
  return tracks.size;
}

function checkAll(run: RunFile): { file: TraceFile; events: Ev[] } {
  const file = runToTraceEvents(scrubRun(run, new Scrubber()));
  const events = checkFormat(JSON.parse(JSON.stringify(file)));
  checkNesting(events);
  return { file, events };
}

const onTrack = (events: Ev[], pid: number, tid: number) => events.filter((e) => e.pid === pid && e.tid === tid);

test('a run: a process, a named track per request, queue, request, prefill, decode, stalls and chunks at the run file\'s times', () => {
  const run = fixtureWhereRun({ seed: 3, requests: 24 });
  const { file, events } = checkAll(run);
  assert.equal(file.displayTimeUnit, 'ms');
  assert.equal(file.metadata['llm-profiler-run'], run.id);
  const t0 = Math.min(Date.parse(run.startedAt), ...run.requests.map((r) => r.scheduledAt));
  const processes = events.filter((e) => e.name === 'process_name');
  assert.equal(processes.length, 1);
  const pid = processes[0]!.pid as number;
  const threads = events.filter((e) => e.name === 'thread_name');
  assert.equal(threads.length, run.requests.length, 'a track per request');
  let stallsSeen = 0;
  for (const r of run.requests) {
    const thread = threads.find((t) => new RegExp(`^request ${r.index}( \\(|$)`).test((t.args as { name: string }).name))!;
    assert.ok(thread, `request ${r.index} has a track`);
    const mine = onTrack(events, pid, thread.tid as number).filter((e) => e.ph !== 'M');
    const slice = (name: string) => mine.find((e) => e.ph === 'X' && e.name === name);
    const near = (a: number, b: number, what: string) => assert.ok(Math.abs(a - b) < 0.002, `request ${r.index} ${what}: ${a} vs ${b}`);
    if (r.sentAt > r.scheduledAt) {
      near(slice('queue')!.ts as number, (r.scheduledAt - t0) * 1000, 'queue start');
      near(slice('queue')!.dur as number, (r.sentAt - r.scheduledAt) * 1000, 'queue');
    }
    if (r.ttftMs !== undefined) {
      const prefill = slice('prefill (TTFT)')!;
      near(prefill.ts as number, (r.sentAt - t0) * 1000, 'prefill start');
      near(prefill.dur as number, r.ttftMs * 1000, 'TTFT');
      const last = r.chunkTimesMs[r.chunkTimesMs.length - 1]!;
      if (last > r.ttftMs) near(slice('decode')!.dur as number, (last - r.ttftMs) * 1000, 'decode');
    }
    const chunks = mine.filter((e) => e.ph === 'i' && e.name === 'chunk');
    assert.equal(chunks.length, r.chunkTimesMs.length, `request ${r.index}: an instant per chunk`);
    chunks.forEach((c, k) => near(c.ts as number, (r.sentAt - t0 + r.chunkTimesMs[k]!) * 1000, `chunk ${k}`));
    const stallSlices = mine.filter((e) => e.ph === 'X' && (e.name as string).startsWith('stall ('));
    assert.equal(stallSlices.length, (r.stalls ?? []).filter((s) => s.atChunk >= 1).length);
    for (const s of stallSlices) {
      const cause = (s.args as { cause: string }).cause;
      assert.equal(s.name, `stall (${cause})`);
      assert.ok(['prefill', 'buffering', 'unknown'].includes(cause));
    }
    stallsSeen += stallSlices.length;
    const req = mine.find((e) => e.ph === 'X' && (e.cat as string).startsWith('request'))!;
    assert.equal(req.ts, mine.find((e) => e.name === 'prefill (TTFT)')?.ts ?? req.ts, 'prefill starts with the request');
  }
  assert.ok(stallsSeen > 0, 'the run\'s stalls are drawn');
});

test('failed requests are marked: the track, the request slice, an error instant at the moment it failed', () => {
  const run = fixtureRun({ seed: 11, requests: 60, errorRate: 0.3 });
  const { events } = checkAll(run);
  const failed = run.requests.filter((r) => r.error);
  assert.ok(failed.length >= 5);
  for (const r of failed) {
    const thread = events.find((e) => e.name === 'thread_name' && e.tid === r.index + 1)!;
    assert.match((thread.args as { name: string }).name, /\(failed\)$/);
    const mine = onTrack(events, thread.pid as number, thread.tid as number);
    const req = mine.find((e) => e.ph === 'X' && e.cat === 'request,failed')!;
    assert.equal(req.name, `request ${r.index} (failed: ${r.error!.kind})`);
    assert.equal((req.args as { error: { message: string } }).error.message, r.error!.message);
    const err = mine.find((e) => e.ph === 'i' && e.cat === 'failed')!;
    assert.equal(err.name, `error: ${r.error!.kind}`);
  }
  const ok = run.requests.find((r) => !r.error)!;
  assert.doesNotMatch((events.find((e) => e.name === 'thread_name' && e.tid === ok.index + 1)!.args as { name: string }).name, /failed/);
});

test('a sweep: a process per point holding that point\'s requests', () => {
  const run = fixtureSweepRun();
  const { events } = checkAll(run);
  const points = run.sweep!.points;
  const processes = events.filter((e) => e.name === 'process_name');
  assert.ok(processes.length >= points.length);
  points.forEach((p, i) => {
    const proc = processes[i]!;
    assert.match((proc.args as { name: string }).name, new RegExp(`${p.label.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`));
    const tids = new Set(events.filter((e) => e.pid === proc.pid && e.name === 'thread_name').map((e) => e.tid));
    assert.equal(tids.size, p.requestIndexes.length, `${p.label}: its requests`);
  });
});

test('the nesting check fails on overlapping slices (it can fail)', () => {
  const bad: Ev[] = [
    { name: 'a', ph: 'X', pid: 1, tid: 1, ts: 0, dur: 10 },
    { name: 'b', ph: 'X', pid: 1, tid: 1, ts: 5, dur: 10 },
  ];
  assert.throws(() => checkNesting(bad), /overlaps "a"/);
  assert.throws(() => checkFormat({ traceEvents: [{ name: 'x', ph: 'X', pid: 1, tid: 1, ts: 0 }], displayTimeUnit: 'ms' }), /X dur/);
});

test('a request sent at once, with no chunks: no queue, no prefill, still a track and a request slice', () => {
  const base = fixtureRun({ requests: 1, warmup: 0, errorRate: 0 });
  const r: RequestRecord = { index: 0, warmup: false, scheduledAt: Date.parse(base.startedAt) + 5, sentAt: Date.parse(base.startedAt) + 5, outputTokens: 0, tokenSource: 'chunks', chunkTimesMs: [], e2eMs: 3, error: { kind: 'http', status: 503, message: 'HTTP 503' } };
  const { events } = checkAll({ ...base, requests: [r] });
  const slices = events.filter((e) => e.ph === 'X');
  assert.deepEqual(slices.map((e) => e.name), ['request 0 (failed: http)']);
  assert.equal(slices[0]!.ts, 5000);
  assert.equal(slices[0]!.dur, 3000);
});
