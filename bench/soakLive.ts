// The soak's live report (issue 31 §3: "the live report in the extension at the same frame time
// after an hour as after a minute"): the report webview in headless Chromium, in live mode, holding
// what a run of the soak's size has sent after one minute and after N minutes (its records, and the
// requests in flight as stream deltas), then fed the host's next live updates as the extension sends
// them (every 100 ms: the records finished since the last, the new chunks of those in flight, the
// progress). Measured per update: the page's handling of the message (JS, synchronous), the
// timeline's draw, and the frame (message in → the timeline drawn with it); the JS heap beside.
// The run is a closed loop of `streams` requests of `chunks` tokens each, paced so that
// `requestsPerMinute` finish a minute (the soak's own figures, bench/soak.ts).
import { skeletonRun } from '../src/jobs/execute';
import type { Progress, RequestRecord, StreamDelta } from '../src/engine/core/types';
import { defaultWorkload } from '../src/engine/core/workload';
import { launchChromium, openReport, startReportServer } from '../test/support/reportHarness';
import type { Page } from 'playwright-core';
import { percentile } from '../src/engine/core/stats';

/** p50, p90 and the worst of a few dozen updates. */
export interface Spread {
  readonly p50: number;
  readonly p90: number;
  readonly max: number;
}

function spread(xs: readonly number[]): Spread {
  const s = xs.slice().sort((a, b) => a - b);
  return { p50: percentile(s, 50), p90: percentile(s, 90), max: s[s.length - 1] ?? Number.NaN };
}

export interface LiveOptions {
  readonly streams: number;
  readonly requestsPerMinute: number;
  /** Chunks (tokens) a request. */
  readonly chunks: number;
  /** The states measured, minutes into the run (1 and the soak's length). */
  readonly minutes: readonly number[];
  /** Live updates measured at each state. */
  readonly updates?: number;
  /** Profile the updates at the last state and say where their time went (the functions of most self time). */
  readonly profile?: boolean;
}

export interface LiveRow {
  readonly minutes: number;
  readonly records: number;
  readonly chunks: number;
  /** The page's JS heap with that state, MB. */
  readonly heapMB: number;
  /** ms per update: message handled (JS), the timeline's draw, message in → frame drawn. */
  readonly handleMs: Spread;
  readonly drawMs: Spread;
  readonly frameMs: Spread;
}

interface Planned {
  readonly record: RequestRecord;
  /** Epoch ms it ended (its record reaches the host then). */
  readonly endAt: number;
}

const T0 = Date.parse('2026-03-01T12:00:00.000Z');
const UPDATE_MS = 100;

/** The closed loop's requests up to `untilMs` after the start: each slot sends its next request a millisecond after its last ended. */
function plan(o: LiveOptions, untilMs: number): Planned[] {
  const perRequestMs = (o.streams * 60_000) / o.requestsPerMinute;
  const ttft = 20;
  const step = (perRequestMs - ttft - 1) / Math.max(1, o.chunks - 1);
  const out: Planned[] = [];
  const slots = Array.from({ length: o.streams }, (_, s) => T0 + s * 0.5);
  let seed = 1;
  const jitter = (): number => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648 - 0.5) * 0.4;
  for (let index = 0; ; index++) {
    let slot = 0;
    for (let s = 1; s < slots.length; s++) if (slots[s]! < slots[slot]!) slot = s;
    const sentAt = slots[slot]!;
    if (sentAt - T0 > untilMs) break;
    const chunkTimesMs: number[] = [];
    for (let i = 0; i < o.chunks; i++) chunkTimesMs.push(Math.round((ttft + i * step + jitter()) * 1000) / 1000);
    const e2e = chunkTimesMs[chunkTimesMs.length - 1]!;
    const record: RequestRecord = {
      index, warmup: false, scheduledAt: sentAt, sentAt, responseId: `chatcmpl-${index}`, headersMs: 1, firstChunkMs: chunkTimesMs[0]!, ttftMs: chunkTimesMs[0]!,
      tpotMs: (e2e - chunkTimesMs[0]!) / (o.chunks - 1), e2eMs: e2e, lastByteMs: e2e + 0.4, promptTokens: 16, outputTokens: o.chunks, tokenSource: 'usage', chunkTimesMs, httpStatus: 200,
    };
    out.push({ record, endAt: sentAt + e2e + 0.4 });
    slots[slot] = sentAt + e2e + 1.4;
  }
  return out;
}

/** The chunks of a request in flight that arrived in (fromAt, toAt], as a delta. */
function delta(r: RequestRecord, fromAt: number, toAt: number): StreamDelta {
  const c = r.chunkTimesMs;
  let from = 0;
  while (from < c.length && r.sentAt + c[from]! <= fromAt) from++;
  let to = from;
  while (to < c.length && r.sentAt + c[to]! <= toAt) to++;
  return { index: r.index, scheduledAt: r.scheduledAt, sentAt: r.sentAt, from, chunkMs: c.slice(from, to) };
}

/** What the host would have sent by `at`: the records finished and the streams in flight (whole, as in a liveStart). */
function stateAt(all: readonly Planned[], at: number): { records: RequestRecord[]; streams: StreamDelta[] } {
  const records: RequestRecord[] = [];
  const streams: StreamDelta[] = [];
  for (const p of all) {
    if (p.endAt <= at) records.push(p.record);
    else if (p.record.sentAt <= at) streams.push(delta(p.record, -Infinity, at));
  }
  return { records, streams };
}

/** The live update the host sends at `at` (the previous at `at` − 100 ms). */
function updateAt(all: readonly Planned[], runId: string, at: number, finished: number): { type: 'liveUpdate'; runId: string; progress: Progress; records: RequestRecord[]; streams: StreamDelta[] } {
  const records: RequestRecord[] = [];
  const streams: StreamDelta[] = [];
  let inFlight = 0;
  for (const p of all) {
    if (p.endAt > at - UPDATE_MS && p.endAt <= at) records.push(p.record);
    else if (p.record.sentAt <= at && p.endAt > at) {
      inFlight++;
      streams.push(delta(p.record, p.record.sentAt > at - UPDATE_MS ? -Infinity : at - UPDATE_MS, at));
    }
  }
  const done = finished + records.length;
  const progress: Progress = { runId, succeeded: done, failed: 0, finished: done, inFlight, ttftP50Ms: 20, outputTokensPerSecond: 0, elapsedS: (at - T0) / 1000, at };
  return { type: 'liveUpdate', runId, progress, records, streams };
}

/** Hands the records to the page in pieces (one message of an hour's would be hundreds of MB of JSON), then the liveStart. */
async function startLive(page: Page, runId: string, minutes: number, state: ReturnType<typeof stateAt>, o: LiveOptions): Promise<void> {
  const skeleton = skeletonRun(runId, { url: 'http://127.0.0.1:8080', api: 'openai-chat', model: 'scripted-model' },
    defaultWorkload({ mode: { kind: 'closed', concurrency: o.streams }, durationS: minutes * 60, maxTokens: o.chunks, prompt: { kind: 'synthetic', tokens: 16, sharedPrefix: false } }));
  await page.evaluate(() => { (window as unknown as { __recs: unknown[] }).__recs = []; });
  for (let i = 0; i < state.records.length; i += 5000) {
    await page.evaluate((batch) => { (window as unknown as { __recs: unknown[] }).__recs.push(...batch); }, state.records.slice(i, i + 5000));
  }
  await page.evaluate(({ skeleton, streams, runId }) => {
    const w = window as unknown as { __recs: unknown[] };
    const run = { ...skeleton, requests: w.__recs };
    w.__recs = [];
    window.dispatchEvent(new MessageEvent('message', { data: { type: 'liveStart', runId, run, streams } }));
  }, { skeleton, streams: state.streams, runId });
  await page.waitForFunction((n) => document.body.dataset.liveRecords === String(n), state.records.length, { timeout: 600_000 });
}

/** One live update: handled (JS), drawn, and the frame from the message to the timeline drawn with it. */
function feed(page: Page, msg: unknown): Promise<{ handle: number; draw: number; frame: number }> {
  // (no named functions inside: tsx would wrap them in a helper the page does not have)
  return page.evaluate(async (m) => {
    const c = document.querySelector<HTMLCanvasElement>('.block.timeline canvas')!;
    const before = Number(c.dataset.frames);
    const t0 = performance.now();
    window.dispatchEvent(new MessageEvent('message', { data: m }));
    const t1 = performance.now();
    while (Number(c.dataset.frames) === before) await new Promise((res) => requestAnimationFrame(() => res(undefined)));
    return { handle: t1 - t0, draw: Number(c.dataset.drawMs), frame: performance.now() - t0 };
  }, msg);
}

/** The live report after each of `o.minutes`, fed `o.updates` live updates (see the top of this file). */
export async function benchLive(o: LiveOptions, say: (line: string) => void = () => undefined): Promise<LiveRow[]> {
  const updates = o.updates ?? 40;
  const all = plan(o, Math.max(...o.minutes) * 60_000 + (updates + 2) * UPDATE_MS + 5000);
  const server = await startReportServer();
  const browser = await launchChromium();
  const rows: LiveRow[] = [];
  try {
    for (const minutes of o.minutes) {
      const at = T0 + minutes * 60_000;
      const state = stateAt(all, at);
      const runId = `soak-live-${minutes}`;
      const { context, page, problems } = await openReport(browser, server.page({ kind: 'loading' }), { width: 1280, height: 900 });
      try {
        await page.waitForSelector('body[data-view="empty"]');
        const t = performance.now();
        await startLive(page, runId, minutes, state, o);
        say(`  ${minutes} min: ${state.records.length} records and ${state.streams.length} streams in flight given to the page in ${((performance.now() - t) / 1000).toFixed(1)} s`);
        const cdp = await context.newCDPSession(page);
        const profiling = o.profile === true && minutes === o.minutes[o.minutes.length - 1];
        if (profiling) await cdp.send('Profiler.enable').then(() => cdp.send('Profiler.start'));
        const got: { handle: number; draw: number; frame: number }[] = [];
        let finished = state.records.length;
        for (let k = 1; k <= updates; k++) {
          const msg = updateAt(all, runId, at + k * UPDATE_MS, finished);
          finished = msg.progress.finished;
          got.push(await feed(page, msg));
        }
        if (profiling) say(topSelfTime((await cdp.send('Profiler.stop')).profile as CpuProfile));
        await cdp.send('HeapProfiler.collectGarbage');
        const heap = (await cdp.send('Runtime.getHeapUsage')) as { usedSize: number };
        if (problems.length) say(`  problems on the page: ${problems.join('; ')}`);
        rows.push({ minutes, records: finished, chunks: finished * o.chunks, heapMB: heap.usedSize / 1048576,
          handleMs: spread(got.map((g) => g.handle)), drawMs: spread(got.map((g) => g.draw)), frameMs: spread(got.map((g) => g.frame)) });
      } finally {
        await context.close();
      }
    }
  } finally {
    await browser.close();
    await server.close();
  }
  return rows;
}

interface CpuProfile {
  readonly nodes: readonly { readonly id: number; readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number } }[];
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

/** The functions that took most of the profile's time themselves (not counting what they called). */
function topSelfTime(p: CpuProfile): string {
  const byNode = new Map(p.nodes.map((n) => [n.id, n]));
  const self = new Map<string, number>();
  let total = 0;
  p.samples.forEach((id, i) => {
    const f = byNode.get(id)!.callFrame;
    const name = `${f.functionName || '(anonymous)'} ${f.url.split('/').pop()}:${f.lineNumber + 1}`;
    const us = p.timeDeltas[i] ?? 0;
    self.set(name, (self.get(name) ?? 0) + us);
    total += us;
  });
  const top = [...self].sort((a, b) => b[1] - a[1]).slice(0, 14);
  return `  where the updates' time went (self time, of ${(total / 1000).toFixed(0)} ms profiled):\n${top.map(([n, us]) => `    ${(us / 1000).toFixed(1).padStart(8)} ms  ${n}`).join('\n')}`;
}

export const LIVE_HEADER = '  minutes   records      chunks  JS heap MB | handle p50/p90/max ms | draw p50/p90/max ms | frame p50/p90/max ms';

export function liveRow(r: LiveRow): string {
  const s = (x: Spread): string => `${x.p50.toFixed(1)}/${x.p90.toFixed(1)}/${x.max.toFixed(1)}`.padStart(20);
  return `${String(r.minutes).padStart(9)} ${String(r.records).padStart(9)} ${String(r.chunks).padStart(11)} ${r.heapMB.toFixed(1).padStart(11)} | ${s(r.handleMs)}  | ${s(r.drawMs)}| ${s(r.frameMs)}`;
}
