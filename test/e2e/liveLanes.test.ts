// The live timeline in headless Chromium: requests in flight drawn as they stream (lanes grow with
// their chunks before any record arrives, and the records replace them), the live page never blank,
// and the timeline used from the keyboard (a request's details in a status line, not only a tooltip).
// Needs `npm run build` (dist/webview/report.js). Screenshots go to test-artifacts/.
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { assembleRunFile } from '../../src/engine/run/runAssembly';
import { runWorkload } from '../../src/engine/run/runner';
import { defaultWorkload } from '../../src/engine/core/workload';
import type { Progress, RequestRecord, RunFile } from '../../src/engine/core/types';
import { LiveStreams } from '../../src/extension/liveStreams';
import type { ReportHostMessage } from '../../src/shared/protocol';
import { axeViolations, describeViolations } from '../support/axe';
import { fixtureRun } from '../support/fixtureRuns';
import { openReport, reportSession, rendered, sendToPage } from '../support/reportHarness';
import { startScriptedServer } from '../support/scriptedServer';

const artifacts = join(__dirname, '..', '..', 'test-artifacts');
const session = reportSession();

before(() => mkdirSync(artifacts, { recursive: true }));

interface Drawn { lanes: number; chunks: number; inFlight: number; lanesDrawn: number; frames: number }

/** What the live timeline drew last (timeline.ts sets these on the canvas each frame). */
function drawn(page: Page): Promise<Drawn> {
  return page.$eval('.block.timeline canvas', (c) => {
    const d = (c as HTMLCanvasElement).dataset;
    return { lanes: Number(d.lanes), chunks: Number(d.chunks), inFlight: Number(d.inFlight), lanesDrawn: Number(d.lanesDrawn), frames: Number(d.frames) };
  });
}

/** Waits for a frame drawn after now (the timeline draws on the next animation frame). */
async function nextFrame(page: Page, before: number): Promise<Drawn> {
  await page.waitForFunction((n) => Number(document.querySelector<HTMLCanvasElement>('.block.timeline canvas')?.dataset.frames) > n, before);
  return drawn(page);
}

/**
 * Counts animation frames in which the page shows nothing (no text in the root), from the first
 * live message on: what a user would see as a blank flash.
 */
async function watchBlank(page: Page): Promise<void> {
  // a string: tsx would wrap a named function in a helper the page does not have
  await page.evaluate(`(() => {
    window.__blankFrames = 0;
    window.__liveFrames = 0;
    const loop = () => {
      if (document.body.dataset.view === 'live' || window.__liveFrames > 0) {
        window.__liveFrames++;
        const root = document.getElementById('app');
        if (!root || (root.textContent || '').trim() === '' || !root.querySelector('h1, .placeholder, .error')) window.__blankFrames++;
      }
      requestAnimationFrame(loop);
    };
    requestAnimationFrame(loop);
  })()`);
}

async function blankFrames(page: Page): Promise<{ blank: number; frames: number }> {
  return page.evaluate(() => {
    const w = window as unknown as { __blankFrames: number; __liveFrames: number };
    return { blank: w.__blankFrames, frames: w.__liveFrames };
  });
}

/** The root shows something right now (text, and the live header or a report). */
async function rootHasContent(page: Page): Promise<boolean> {
  return page.evaluate(() => {
    const root = document.getElementById('app');
    return Boolean(root && (root.textContent ?? '').trim() !== '' && root.querySelector('h1'));
  });
}

/**
 * A finished run replayed as the host would send it live: every `stepMs`, the chunks that arrived
 * since the last step for each request in flight (folded by the host's LiveStreams), and the
 * records of the requests that ended.
 */
function replay(run: RunFile, stepMs: number): { start: ReportHostMessage; updates: ReportHostMessage[] } {
  const t0 = Math.min(...run.requests.map((r) => r.scheduledAt));
  const end = Math.max(...run.requests.map((r) => r.sentAt + (r.e2eMs ?? 0)));
  const host = new LiveStreams();
  const updates: ReportHostMessage[] = [];
  const sentCount = new Map<number, number>();
  let finished = 0;
  for (let t = t0 + stepMs; t <= end + stepMs; t += stepMs) {
    const records: RequestRecord[] = [];
    const deltas = [];
    for (const r of run.requests) {
      if (r.sentAt > t) continue;
      const endAt = r.sentAt + (r.e2eMs ?? 0);
      if (endAt <= t) {
        if (!sentCount.has(-1 - r.index)) { records.push(r); sentCount.set(-1 - r.index, 1); }
        continue;
      }
      const from = sentCount.get(r.index) ?? 0;
      const upTo = r.chunkTimesMs.filter((c) => r.sentAt + c <= t).length;
      if (from === 0 || upTo > from) deltas.push({ index: r.index, scheduledAt: r.scheduledAt, sentAt: r.sentAt, from, chunkMs: r.chunkTimesMs.slice(from, upTo) });
      sentCount.set(r.index, upTo);
    }
    host.add(deltas, records);
    finished += records.length;
    const progress: Progress = { runId: run.id, succeeded: finished, failed: 0, finished, total: run.requests.length, inFlight: deltas.length, elapsedS: (t - t0) / 1000, at: t };
    const streams = host.take();
    updates.push({ type: 'liveUpdate', runId: run.id, progress, records, ...(streams.length ? { streams } : {}) });
  }
  return { start: { type: 'liveStart', runId: run.id, run: { ...run, requests: [] } }, updates };
}

test('live: lanes appear and grow with their chunks before any request finishes, and the records replace them', async () => {
  const run = fixtureRun({ seed: 21, requests: 12, warmup: 0, concurrency: 4, chunksPerRequest: 60, errorRate: 0 });
  const { start, updates } = replay(run, 250);
  const { context, page, problems } = await openReport(session.browser, session.server.page({ kind: 'loading' }));
  try {
    await page.waitForSelector('body[data-view="empty"]');
    await watchBlank(page);
    await sendToPage(page, start);
    await page.waitForSelector('body[data-view="live"]');
    let last = await drawn(page);
    const seen: Drawn[] = [];
    let shot = false;
    for (const u of updates) {
      await sendToPage(page, u);
      last = await nextFrame(page, last.frames);
      seen.push(last);
      assert.ok(await rootHasContent(page), 'the live page shows something at every step');
      const records = Number(await page.evaluate(() => document.body.dataset.liveRecords));
      if (!shot && records > 0 && last.inFlight >= 3) {
        await page.screenshot({ path: join(artifacts, 'live-lanes.png'), fullPage: true });
        shot = true;
      }
    }
    const beforeRecords = seen.filter((_d, i) => updates.slice(0, i + 1).every((u) => u.type !== 'liveUpdate' || u.records.length === 0));
    assert.ok(beforeRecords.length >= 2, 'some updates come before the first record');
    assert.ok(beforeRecords.some((d) => d.lanes > 0 && d.inFlight === d.lanes), `lanes drawn before any record: ${JSON.stringify(beforeRecords)}`);
    const chunksSoFar = beforeRecords.map((d) => d.chunks);
    assert.ok(chunksSoFar.at(-1)! > chunksSoFar.find((c) => c > 0)!, `the lanes grow with their chunks: ${chunksSoFar.join(' ')}`);
    assert.ok(shot, 'a frame with finished and in-flight lanes together');
    const total = run.requests.reduce((a, r) => a + r.chunkTimesMs.length, 0);
    assert.deepEqual([last.lanes, last.inFlight, last.chunks], [12, 0, total], 'every record replaced its lane in flight');
    await sendToPage(page, { type: 'liveEnd', runId: run.id, run });
    await rendered(page);
    const b = await blankFrames(page);
    assert.ok(b.frames > 0);
    assert.equal(b.blank, 0, `blank frames while live: ${b.blank} of ${b.frames}`);
    assert.deepEqual(problems, []);
  } finally {
    await context.close();
  }
});

test('live: a real run (scripted server, slow ITL) streams its chunks to the page before its records, and the page is never blank', async () => {
  const server = await startScriptedServer({ ttftMs: 40, itlMs: 45, tokens: 10 });
  const events: ({ kind: 'progress'; p: Progress } | { kind: 'record'; r: RequestRecord })[] = [];
  let run: RunFile;
  const endpoint = { url: server.url, api: 'openai-chat' as const, model: 'scripted-model' };
  const workload = defaultWorkload({ mode: { kind: 'closed', concurrency: 2 }, requests: 4, warmup: 0, maxTokens: 10 });
  try {
    run = await runWorkload(endpoint, workload, { streams: true, onProgress: (p) => events.push({ kind: 'progress', p }), onRecord: (r) => events.push({ kind: 'record', r }) });
  } finally {
    await server.close();
  }
  assert.equal(run.summary.completed, 4);
  // the engine's own reports: each request's chunks arrive as deltas before its record, never after
  const streamed = new Map<number, number>();
  const recorded = new Set<number>();
  for (const e of events) {
    if (e.kind === 'record') { recorded.add(e.r.index); continue; }
    for (const d of e.p.streams ?? []) {
      assert.ok(!recorded.has(d.index), `no delta of #${d.index} after its record`);
      assert.equal(d.from, streamed.get(d.index) ?? 0, 'deltas follow on from each other');
      streamed.set(d.index, (streamed.get(d.index) ?? 0) + d.chunkMs.length);
    }
  }
  for (const r of run.requests) assert.ok((streamed.get(r.index) ?? 0) >= 3, `#${r.index}: ${streamed.get(r.index)} of its ${r.chunkTimesMs.length} chunks streamed before its record`);

  // the same reports through the host's fold, into the page, as the extension sends them
  const skeleton = assembleRunFile({ id: run.id, startedAt: run.startedAt, cancelled: false, endpoint, workload, requests: [], durationS: 0 });
  const host = new LiveStreams();
  const { context, page, problems } = await openReport(session.browser, session.server.page({ kind: 'loading' }));
  try {
    await page.waitForSelector('body[data-view="empty"]');
    await watchBlank(page);
    await sendToPage(page, { type: 'liveStart', runId: run.id, run: skeleton });
    await page.waitForSelector('body[data-view="live"]');
    assert.ok(await rootHasContent(page));
    let pending: RequestRecord[] = [];
    let last = await drawn(page);
    let inFlightBeforeRecords = 0;
    let recordsSent = 0;
    for (const e of events) {
      if (e.kind === 'record') { pending.push(e.r); continue; }
      const { streams, ...progress } = e.p;
      host.add(streams, pending);
      const deltas = host.take();
      await sendToPage(page, { type: 'liveUpdate', runId: run.id, progress, records: pending, ...(deltas.length ? { streams: deltas } : {}) });
      recordsSent += pending.length;
      pending = [];
      last = await nextFrame(page, last.frames);
      if (recordsSent === 0) inFlightBeforeRecords = Math.max(inFlightBeforeRecords, last.inFlight);
      assert.ok(await rootHasContent(page), 'the live page shows something at every step');
    }
    assert.ok(inFlightBeforeRecords >= 1, 'lanes in flight drawn before the first record');
    assert.deepEqual([last.lanes, last.inFlight], [4, 0]);
    await sendToPage(page, { type: 'liveEnd', runId: run.id, run });
    await rendered(page);
    const b = await blankFrames(page);
    assert.equal(b.blank, 0, `blank frames while live: ${b.blank} of ${b.frames}`);
    assert.deepEqual(problems, []);
  } finally {
    await context.close();
  }
});

test('live: a page that comes back mid-run (liveStart again) gets the streams so far as lanes in flight', async () => {
  const run = fixtureRun({ seed: 23, requests: 4, warmup: 0, concurrency: 4, chunksPerRequest: 30, errorRate: 0 });
  const t0 = Math.min(...run.requests.map((r) => r.sentAt));
  const streams = run.requests.map((r) => ({ index: r.index, scheduledAt: r.scheduledAt, sentAt: r.sentAt, from: 0, chunkMs: r.chunkTimesMs.slice(0, 10) }));
  const { context, page, problems } = await openReport(session.browser, session.server.page({ kind: 'loading' }));
  try {
    await page.waitForSelector('body[data-view="empty"]');
    await sendToPage(page, { type: 'liveStart', runId: run.id, run: { ...run, requests: [] }, streams });
    await page.waitForSelector('body[data-view="live"]');
    const d = await drawn(page);
    assert.deepEqual([d.lanes, d.inFlight, d.chunks], [4, 4, 40]);
    await sendToPage(page, { type: 'liveUpdate', runId: run.id, records: [],
      progress: { runId: run.id, succeeded: 0, failed: 0, finished: 0, total: 4, inFlight: 4, elapsedS: 1, at: t0 + 5000 } });
    const e = await nextFrame(page, d.frames);
    assert.deepEqual([e.lanes, e.inFlight, e.chunks], [4, 4, 40], 'no new chunk: the same lanes, reaching on to now');
    assert.deepEqual(problems, []);
  } finally {
    await context.close();
  }
});

test('keyboard: arrows select a request and its details are in a status line; + zooms, Home resets; a click fills the details too', async () => {
  const run = fixtureRun({ seed: 12, requests: 20, warmup: 0 });
  const { context, page, problems } = await openReport(session.browser, session.server.page({ kind: 'run', run }));
  try {
    await rendered(page);
    const canvas = page.locator('.block.timeline canvas');
    // named and described: the summary of the run's requests and the keys, and the details line
    const described = await canvas.evaluate((c) => (c.getAttribute('aria-describedby') ?? '').split(' ').map((id) => document.getElementById(id)?.textContent ?? ''));
    assert.match(await canvas.getAttribute('aria-label') ?? '', /Timeline/);
    assert.match(described[0]!, /^20 requests over .+: \d+ with stalls, \d+ failed; [\d,]+ chunks\. Keys: up and down arrows select a request/);
    const details = page.locator('.block.timeline .timeline-details');
    assert.equal(await details.getAttribute('role'), 'status');
    await canvas.focus();
    const order = [...run.requests].sort((a, b) => a.scheduledAt - b.scheduledAt || a.sentAt - b.sentAt || a.index - b.index);
    await page.keyboard.press('ArrowDown');
    await page.waitForFunction((i) => document.querySelector<HTMLCanvasElement>('.block.timeline canvas')?.dataset.selectedRequest === String(i), order[0]!.index);
    assert.match(await details.textContent() ?? '', new RegExp(`^Request #${order[0]!.index}${order[0]!.warmup ? ' \\(warmup\\)' : ''}, started .+, \\d+ chunks`));
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('ArrowUp');
    assert.match(await details.textContent() ?? '', new RegExp(`^Request #${order[1]!.index}\\b`));
    const failed = order.findIndex((r) => r.error);
    if (failed >= 0) {
      for (let k = 1; k < failed; k++) await page.keyboard.press('ArrowDown');
      assert.match(await details.textContent() ?? '', new RegExp(`^Request #${order[failed]!.index}\\b.*error: ${order[failed]!.error!.kind}`));
    }
    const span = async () => canvas.evaluate((c) => Number((c as HTMLCanvasElement).dataset.viewEnd) - Number((c as HTMLCanvasElement).dataset.viewStart));
    const full = await span();
    await page.keyboard.press('+');
    await page.waitForFunction((f) => { const c = document.querySelector<HTMLCanvasElement>('.block.timeline canvas')!; return Number(c.dataset.viewEnd) - Number(c.dataset.viewStart) < f * 0.9; }, full);
    await page.keyboard.press('ArrowRight');
    await page.keyboard.press('Home');
    await page.waitForFunction((f) => { const c = document.querySelector<HTMLCanvasElement>('.block.timeline canvas')!; return Math.abs(Number(c.dataset.viewEnd) - Number(c.dataset.viewStart) - f) < 1e-6 * f; }, full);
    await page.screenshot({ path: join(artifacts, 'timeline-keyboard.png'), fullPage: false, clip: await page.locator('.block.timeline').boundingBox() ?? undefined });
    // a click on the fifth lane
    const box = (await canvas.boundingBox())!;
    const plotH = box.height - 22;
    await page.mouse.click(box.x + box.width / 2, box.y + (4.5 / order.length) * plotH);
    assert.match(await details.textContent() ?? '', new RegExp(`^Request #${order[4]!.index}\\b`));
    // the toolbar's buttons: each accessible name holds its visible text (a symbol's name is what it does)
    const names = await page.$$eval('.block.timeline .toolbar button', (bs) => bs.map((b) => ({ text: (b.textContent ?? '').trim(), name: b.getAttribute('aria-label') ?? (b.textContent ?? '').trim() })));
    for (const { text, name } of names) if (/\w/.test(text)) assert.ok(name.toLowerCase().includes(text.toLowerCase()), `"${name}" holds "${text}"`);
    assert.deepEqual(names.map((n) => n.text), ['+', '−', 'Reset', 'PNG']);
    assert.equal(await page.$$eval('.block.timeline [aria-live]', (els) => els.every((e) => e.textContent!.length < 400)), true, 'live regions stay small');
    assert.deepEqual(problems, []);
  } finally {
    await context.close();
  }
});

test('axe: the timeline (toolbar, canvas, details line) and the live timeline have no serious or critical violation in any theme', async () => {
  const run = fixtureRun({ seed: 13, requests: 12, warmup: 0 });
  for (const theme of ['light', 'dark', 'high-contrast'] as const) {
    const { context, page, problems } = await openReport(session.browser, session.server.page({ kind: 'run', run }), { theme });
    try {
      await rendered(page);
      await page.locator('.block.timeline canvas').focus();
      await page.keyboard.press('ArrowDown');
      const vs = await axeViolations(page, { include: '.block.timeline' });
      assert.deepEqual(vs, [], `${theme}:\n  ${describeViolations(vs)}`);
      const { start, updates } = replay(fixtureRun({ seed: 24, requests: 6, warmup: 0, concurrency: 3, chunksPerRequest: 40, errorRate: 0 }), 400);
      await sendToPage(page, start);
      await page.waitForSelector('body[data-view="live"]');
      for (const u of updates.slice(0, 3)) await sendToPage(page, u);
      const live = await axeViolations(page, { include: '.block.timeline' });
      assert.deepEqual(live, [], `${theme}, live:\n  ${describeViolations(live)}`);
      assert.deepEqual(problems, []);
    } finally {
      await context.close();
    }
  }
});
