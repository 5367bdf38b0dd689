// The report of the traffic an application sends, in headless Chromium with the real bundle and the
// host's CSP: a multi-turn run's timeline with each session's turns on one row and the think time
// between them drawn (and the toggle back to a row per request), the tooltip naming session and turn,
// "TTFT by turn" drawn from the engine's summary (or from the requests when the file has none), the
// history verdict; a trace replay's schedule lag in the header and the tooltip, its tool calls. Needs
// `npm run build` (dist/webview/report.js). Screenshots go to test-artifacts/.
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import type { RequestRecord, RunFile } from '../../src/engine/core/types';
import { formatMs } from '../../src/present/units';
import { modeLong, promptSourceWords } from '../../src/present/workloadText';
import { cacheMeantText, scheduleText } from '../../src/present/scheduleText';
import { toolCallLine } from '../../src/present/toolText';
import { axeViolations, describeViolations } from '../support/axe';
import { byTurnOf, fixtureRun, fixtureSessionRun, fixtureTraceRun } from '../support/fixtureRuns';
import { openReport, reportSession, rendered, THEMES } from '../support/reportHarness';

const artifacts = join(__dirname, '..', '..', 'test-artifacts');
const session = reportSession();
const TL = '.block.timeline canvas';

before(() => mkdirSync(artifacts, { recursive: true }));

/** Pixels of a canvas (or a rectangle of it, device pixels) that differ from the given background colour (#rrggbb). */
async function inkPixels(page: Page, selector: string, bg: string, rect?: { x: number; y: number; w: number; h: number }): Promise<number> {
  return page.evaluate(({ selector, bg, rect }) => {
    const c = document.querySelector<HTMLCanvasElement>(selector);
    if (!c) throw new Error(`no canvas ${selector}`);
    const r0 = rect ?? { x: 0, y: 0, w: c.width, h: c.height };
    const d = c.getContext('2d')!.getImageData(Math.round(r0.x), Math.round(r0.y), Math.max(1, Math.round(r0.w)), Math.max(1, Math.round(r0.h))).data;
    const r = parseInt(bg.slice(1, 3), 16), g = parseInt(bg.slice(3, 5), 16), b = parseInt(bg.slice(5, 7), 16);
    let n = 0;
    for (let i = 0; i < d.length; i += 4) {
      if (d[i + 3]! > 0 && (Math.abs(d[i]! - r) > 24 || Math.abs(d[i + 1]! - g) > 24 || Math.abs(d[i + 2]! - b) > 24)) n++;
    }
    return n;
  }, { selector, bg, rect });
}

interface Drawn { rows: number; lanes: number; grouping: string; think: number; start: number; end: number; laneStart: number; laneEnd: number }
function timelineOf(page: Page): Promise<Drawn> {
  return page.$eval(TL, (c) => {
    const d = (c as HTMLCanvasElement).dataset;
    return { rows: Number(d.rows), lanes: Number(d.lanes), grouping: d.grouping ?? '', think: Number(d.thinkGapsDrawn),
      start: Number(d.viewStart), end: Number(d.viewEnd), laneStart: Number(d.laneStart), laneEnd: Number(d.laneEnd) };
  });
}

/** Waits for a frame drawn with the lanes grouped so (a frame is drawn after the toggle, at the next animation frame). */
async function drawnAs(page: Page, grouping: string): Promise<void> {
  await page.waitForFunction((g) => document.querySelector<HTMLCanvasElement>('.block.timeline canvas')!.dataset.grouping === g, grouping);
}

/** Where (page px) time `t` (ms since the run's start) on row `row` is drawn, in the current view. */
async function pointOf(page: Page, row: number, t: number): Promise<{ x: number; y: number }> {
  const v = await timelineOf(page);
  const box = (await (await page.$(TL))!.boundingBox())!;
  return {
    x: box.x + 44 + ((t - v.start) / (v.end - v.start)) * (box.width - 44),
    y: box.y + ((row + 0.5 - v.laneStart) / (v.laneEnd - v.laneStart)) * (box.height - 22),
  };
}

const startOf = (run: RunFile) => Math.min(...run.requests.map((r) => Math.min(r.scheduledAt, r.sentAt)));
const endOf = (r: RequestRecord) => r.sentAt + Math.max(r.lastByteMs ?? 0, r.e2eMs ?? 0);

test('a multi-turn run: a row per session with its turns in order and the think time between them marked; the toggle, the tooltip, TTFT by turn', async () => {
  const run = fixtureSessionRun({ seed: 5, sessions: 6, turns: 5, concurrency: 3, thinkTimeMs: 400 });
  const { context, page, problems } = await openReport(session.browser, session.server.page({ kind: 'run', run }), { theme: 'dark' });
  try {
    await rendered(page);
    const bg = THEMES.dark.vars['--vscode-editor-background']!;
    // the header words the workload as every surface does
    const meta = await page.textContent('.run-header .meta') ?? '';
    assert.ok(meta.includes(modeLong(run.workload.mode)) && meta.includes(promptSourceWords(run.workload.prompt)) && meta.includes('6 sessions'), meta);
    assert.match(await page.textContent('.run-header .flags') ?? '', /sent warm on purpose \(no cache-busting nonce\): each turn carries the conversation so far/);

    // grouped at once: a row per session, the warmup (in no session) on its own row
    const grouped = await timelineOf(page);
    assert.equal(grouped.grouping, 'session');
    assert.equal(grouped.lanes, run.requests.length, 'every request is still drawn');
    assert.equal(grouped.rows, 6 + 1, 'six sessions and the warmup');
    assert.equal(grouped.think, 6 * (5 - 1), 'a think-time mark between each pair of turns');
    assert.match(await page.textContent('.block.timeline .legend') ?? '', /think time between a session's turns/);
    assert.match(await page.textContent('.block.timeline > .sub') ?? '', /in 7 rows, a session's turns on one/);

    // the think time is drawn in the gap between turns 2 and 3 of session 2, on its row (row 2: the warmup is row 0)
    const t0 = startOf(run);
    const turns = run.requests.filter((r) => r.session === 1).sort((a, b) => a.turn! - b.turn!);
    assert.equal(turns.length, 5);
    const gapMid = (endOf(turns[1]!) + turns[2]!.scheduledAt) / 2 - t0;
    const box = (await (await page.$(TL))!.boundingBox())!;
    const at = await pointOf(page, 2, gapMid);
    const strip = { x: at.x - box.x - 9, y: at.y - box.y - 2, w: 18, h: 5 };
    const markInk = await inkPixels(page, TL, bg, strip);
    assert.ok(markInk > 0, 'the think-time mark is drawn in the gap');
    assert.ok(markInk < 18 * 5, `a thin dashed mark, not a bar (${markInk} of ${18 * 5} pixels)`);

    // the tooltip of a turn names its session and turn, the think time before it and its history
    const third = turns[2]!;
    const on = await pointOf(page, 2, third.sentAt + third.e2eMs! / 2 - t0);
    await page.mouse.move(on.x, on.y);
    await page.waitForSelector('.tooltip:not([hidden])');
    const tip = await page.textContent('.tooltip') ?? '';
    assert.ok(tip.startsWith(`Request#${third.index}`), tip);
    assert.ok(tip.includes('Sessionsession 2, turn 3 of 5'), tip);
    assert.ok(tip.includes(`Think time before${formatMs(third.scheduledAt - endOf(turns[1]!))}`), tip);
    assert.ok(tip.includes(`History tokens${third.historyTokens!.toLocaleString('en-US')}`), tip);
    // a click selects it: the details line says the same
    await page.mouse.click(on.x, on.y);
    await page.waitForFunction((i) => document.querySelector<HTMLCanvasElement>('.block.timeline canvas')!.dataset.selectedRequest === String(i), third.index);
    assert.match(await page.textContent('.timeline-details') ?? '', new RegExp(`^Request #${third.index}, session 2, turn 3 of 5, started`));
    await page.screenshot({ path: join(artifacts, 'traffic-sessions-dark.png'), fullPage: true });

    // the toggle: a row per request, then back
    const toggle = '.block.timeline button.group-sessions';
    assert.equal(await page.getAttribute(toggle, 'aria-pressed'), 'true');
    await page.click(toggle);
    await drawnAs(page, 'request');
    const flat = await timelineOf(page);
    assert.deepEqual([flat.grouping, flat.rows, flat.think, await page.getAttribute(toggle, 'aria-pressed')], ['request', run.requests.length, 0, 'false']);
    await page.click(toggle);
    await drawnAs(page, 'session');
    assert.deepEqual([(await timelineOf(page)).rows, (await timelineOf(page)).think], [7, 6 * (5 - 1)]);

    // TTFT by turn: from the engine's summary, drawn, its figures in the table
    await page.waitForSelector('figure[data-chart="ttft-by-turn"] canvas');
    assert.equal(await page.getAttribute('figure[data-chart="ttft-by-turn"]', 'data-source'), 'summary');
    assert.ok(await inkPixels(page, 'figure[data-chart="ttft-by-turn"] canvas', bg) > 800, 'the chart is drawn');
    const rows = await page.$$eval('table.turns tbody tr', (trs) => trs.map((tr) => ({
      turn: (tr as HTMLElement).dataset.turn, p50: Number(tr.querySelector<HTMLElement>('[data-stat="p50"]')!.dataset.value),
      cached: tr.querySelector<HTMLElement>('[data-stat="cached"]')?.dataset.value })));
    assert.deepEqual(rows.map((r) => r.turn), ['0', '1', '2', '3', '4']);
    assert.deepEqual(rows.map((r) => r.p50), run.summary.byTurn!.map((t) => t.ttftMs.p50));
    assert.deepEqual(rows.map((r) => Number(r.cached)), run.summary.byTurn!.map((t) => t.cachedTokens));
    assert.match(await page.textContent(`#${(await page.getAttribute('figure[data-chart="ttft-by-turn"] canvas', 'aria-describedby'))!.split(' ')[0]}`) ?? '',
      /^TTFT by turn over 5 turns: turn 1: TTFT p50 .* ms, p90 .* over 6 requests, 0 history tokens, 0 cached; turn 2:/);
    assert.equal(await page.$('.turn-verdict'), null, 'the cache served the history: no history verdict');
    const order = await page.$$eval('#app > .block', (els) => els.map((e) => e.classList[1]));
    assert.deepEqual(order, ['percentiles', 'timeline', 'turns', 'stalls', 'where', 'distributions']);
    assert.deepEqual(problems, []);
    assert.deepEqual(await page.evaluate(() => (window as unknown as { __csp: string[] }).__csp), []);
  } finally {
    await context.close();
  }
});

test('the history prefilled again each turn: TTFT climbs by turn, no cached tokens, and the history verdict is shown with the others', async () => {
  const run = fixtureSessionRun({ seed: 6, sessions: 4, turns: 6, concurrency: 2, cache: 'off' });
  const verdict = run.summary.verdicts!.find((v) => v.kind === 'history')!;
  const { context, page, problems } = await openReport(session.browser, session.server.page({ kind: 'run', run }), { theme: 'light' });
  try {
    await rendered(page);
    assert.equal(await page.textContent('.turn-verdict[data-kind="history"]'), verdict.message, 'beside the chart');
    const verdicts = await page.$$eval('.block.where ol.verdicts li', (li) => li.map((l) => [(l as HTMLElement).dataset.kind, l.textContent]));
    assert.deepEqual(verdicts, [['history', verdict.message]], 'in the verdicts of "Where the time went"');
    const p50s = await page.$$eval('table.turns [data-stat="p50"]', (tds) => tds.map((td) => Number((td as HTMLElement).dataset.value)));
    assert.ok(p50s.every((v, i) => i === 0 || v > p50s[i - 1]!), `TTFT climbs turn by turn: ${p50s.join(', ')}`);
    assert.deepEqual(await page.$$eval('table.turns [data-stat="cached"]', (tds) => tds.map((td) => td.textContent)), ['0', '0', '0', '0', '0', '0']);
    assert.ok(await inkPixels(page, 'figure[data-chart="ttft-by-turn"] canvas', THEMES.light.vars['--vscode-editor-background']!) > 800);
    await page.screenshot({ path: join(artifacts, 'traffic-history-light.png'), fullPage: true });
    const vs = await axeViolations(page, { include: '.block.turns' });
    assert.equal(vs.length, 0, describeViolations(vs));
    const tl = await axeViolations(page, { include: '.block.timeline' });
    assert.equal(tl.length, 0, describeViolations(tl));
    assert.deepEqual(problems, []);
  } finally {
    await context.close();
  }
});

test('a file without the summary\'s byTurn: TTFT by turn is worked out from the requests, to the same figures', async () => {
  const run = fixtureSessionRun({ seed: 7, sessions: 5, turns: 4, withoutByTurn: true });
  assert.equal(run.summary.byTurn, undefined);
  const { context, page, problems } = await openReport(session.browser, session.server.page({ kind: 'run', run }));
  try {
    await rendered(page);
    assert.equal(await page.getAttribute('figure[data-chart="ttft-by-turn"]', 'data-source'), 'requests');
    const p50s = await page.$$eval('table.turns [data-stat="p50"]', (tds) => tds.map((td) => Number((td as HTMLElement).dataset.value)));
    const expected = byTurnOf(run.requests, run.workload.percentiles).map((t) => t.ttftMs.p50);
    assert.equal(p50s.length, 4);
    p50s.forEach((v, i) => assert.ok(Math.abs(v - expected[i]!) < 1e-9, `turn ${i + 1}: ${v} against ${expected[i]}`));
    assert.deepEqual(problems, []);
  } finally {
    await context.close();
  }
});

test('a trace replay: the schedule lag in the header and the tooltip, the tool calls; a row per request and no session toggle', async () => {
  const run = fixtureTraceRun({ seed: 9, requests: 60, lateShare: 0.1, tools: true });
  const { context, page, problems } = await openReport(session.browser, session.server.page({ kind: 'run', run }));
  try {
    await rendered(page);
    const meta = await page.textContent('.run-header .meta') ?? '';
    assert.ok(meta.includes('trace replay at ×1') && meta.includes('the trace /w/traces/mooncake_trace.jsonl') && meta.includes('the whole trace'), meta);
    assert.equal(await page.getAttribute('.schedule-line', 'data-kept'), 'false');
    assert.equal(await page.textContent('.schedule-line'), `Schedule: ${scheduleText(run.summary.schedule!)}`);
    assert.ok((await page.textContent('.run-header .flags') ?? '').includes(cacheMeantText(run)!), 'sent warm on purpose, as the CLI says it');
    assert.equal(await page.getAttribute('.schedule-line', 'role'), 'note', 'a schedule not kept is a note');
    assert.equal(await page.textContent('.tool-calls-line'), toolCallLine(run));
    assert.deepEqual(await page.$$eval('.block.where ol.verdicts li', (li) => li.map((l) => (l as HTMLElement).dataset.kind)), ['schedule']);
    const drawn = await timelineOf(page);
    assert.deepEqual([drawn.grouping, drawn.rows, drawn.lanes], ['request', 60, 60]);
    assert.equal(await page.$('.block.timeline button.group-sessions'), null);
    assert.equal(await page.$('.block.turns'), null, 'no turns, no TTFT by turn');
    assert.match(await page.textContent('.block.timeline .legend') ?? '', /sent late against the schedule/);
    // the latest request: its lateness and its trace line in the tooltip, and its tool call
    const t0 = startOf(run);
    const late = run.requests.filter((r) => r.toolCalls).sort((a, b) => (b.sentAt - b.scheduledAt) - (a.sentAt - a.scheduledAt))[0]!;
    const lane = [...run.requests].sort((a, b) => a.scheduledAt - b.scheduledAt || a.sentAt - b.sentAt || a.index - b.index).indexOf(late);
    const on = await pointOf(page, lane, late.sentAt + late.e2eMs! / 2 - t0);
    await page.mouse.move(on.x, on.y);
    await page.waitForSelector('.tooltip:not([hidden])');
    const tip = await page.textContent('.tooltip') ?? '';
    assert.ok(tip.startsWith(`Request#${late.index}`), tip);
    assert.ok(tip.includes(`Tracetrace line ${late.traceLine! + 1}`), tip);
    assert.ok(tip.includes(`Sent late by${formatMs(late.sentAt - late.scheduledAt)}`), tip);
    assert.ok(!tip.includes('Held in the client before sending'), tip);
    assert.ok(tip.includes('Tool callget_weather: first delta'), tip);
    await page.screenshot({ path: join(artifacts, 'traffic-trace-dark.png'), fullPage: true });
    assert.deepEqual(problems, []);
  } finally {
    await context.close();
  }
});

test('a run without sessions, traces or tools is drawn as before', async () => {
  const run = fixtureRun({ seed: 12 });
  const { context, page, problems } = await openReport(session.browser, session.server.page({ kind: 'run', run }));
  try {
    await rendered(page);
    const drawn = await timelineOf(page);
    assert.deepEqual([drawn.grouping, drawn.rows, drawn.think], ['request', run.requests.length, 0]);
    for (const sel of ['.block.timeline button.group-sessions', '.block.turns', '.schedule-line', '.tool-calls-line']) assert.equal(await page.$(sel), null, sel);
    assert.match(await page.textContent('.block.timeline .legend') ?? '', /held in the client before sending/);
    assert.deepEqual(problems, []);
  } finally {
    await context.close();
  }
});
