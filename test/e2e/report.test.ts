// The report webview in headless Chromium, served with the same HTML (and CSP) the host uses.
// Needs `npm run build` (dist/webview/report.js). Screenshots go to test-artifacts/.
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import type { RunFile } from '../../src/engine/core/types';
import { formatMs } from '../../src/present/units';
import { fixtureRun, fixtureSweepRun, statsOf, truncatedRunText, unknownVersionRun } from '../support/fixtureRuns';
import { latenciesFor, metricsFor } from '../../src/present/metricCatalogue';
import { openReport, reportSession, rendered, sendToPage, switchTheme, THEMES, type ThemeName } from '../support/reportHarness';

const artifacts = join(__dirname, '..', '..', 'test-artifacts');
const session = reportSession();

before(() => mkdirSync(artifacts, { recursive: true }));


/** Pixels of a canvas that differ from the given background colour (#rrggbb). */
async function inkPixels(page: Page, selector: string, bg: string): Promise<number> {
  return page.evaluate(({ selector, bg }) => {
    const c = document.querySelector<HTMLCanvasElement>(selector);
    if (!c) throw new Error(`no canvas ${selector}`);
    const ctx = c.getContext('2d')!;
    const d = ctx.getImageData(0, 0, c.width, c.height).data;
    const r = parseInt(bg.slice(1, 3), 16), g = parseInt(bg.slice(3, 5), 16), b = parseInt(bg.slice(5, 7), 16);
    let n = 0;
    for (let i = 0; i < d.length; i += 4) {
      if (d[i + 3]! > 0 && (Math.abs(d[i]! - r) > 24 || Math.abs(d[i + 1]! - g) > 24 || Math.abs(d[i + 2]! - b) > 24)) n++;
    }
    return n;
  }, { selector, bg });
}

/** Waits past the next frame: a view is set at once and drawn (its figures written on the canvas) at the next frame. */
async function drawn(page: Page): Promise<void> {
  await page.evaluate(() => new Promise((resolve) => { requestAnimationFrame(() => setTimeout(resolve, 0)); }));
}

function viewOf(page: Page): Promise<{ start: number; end: number; laneStart: number; laneEnd: number; frames: number }> {
  return page.$eval('.block.timeline canvas', (c) => ({
    start: Number((c as HTMLCanvasElement).dataset.viewStart),
    end: Number((c as HTMLCanvasElement).dataset.viewEnd),
    laneStart: Number((c as HTMLCanvasElement).dataset.laneStart),
    laneEnd: Number((c as HTMLCanvasElement).dataset.laneEnd),
    frames: Number((c as HTMLCanvasElement).dataset.frames),
  }));
}

/** A fixture run as the engine summarizes one whose replies streamed no reasoning: without TTFO (the fixtures give every run TTFO = TTFT). */
function withoutTtfo(run: RunFile): RunFile {
  return { ...run, summary: { ...run.summary, ttfoMs: undefined } };
}

/** A fixture run whose replies reasoned first: each request's answer 40 ms after its first token, and the summary's TTFO over them. */
function withReasoning(run: RunFile): RunFile {
  const requests = run.requests.map((r) => (r.ttftMs === undefined ? r : { ...r, ttfoMs: r.ttftMs + 40, reasoningTokens: 4 }));
  const ttfos = requests.filter((r) => !r.warmup && !r.error && r.ttfoMs !== undefined).map((r) => r.ttfoMs!);
  return { ...run, requests, summary: { ...run.summary, ttfoMs: statsOf(ttfos, run.workload.percentiles) } };
}

test('the table and the headline show exactly the summary values of the run file', async () => {
  const run = withoutTtfo(fixtureRun({ seed: 11, requests: 50 }));
  const { context, page, problems } = await openReport(session.browser, session.server.page({ kind: 'run', run }));
  try {
    await rendered(page);
    const cells = await page.$$eval('table.percentiles tbody tr', (rows) => rows.map((r) => ({
      metric: (r as HTMLElement).dataset.metric,
      cells: Array.from(r.querySelectorAll("td")).map((td) => ({ stat: td.dataset.stat, value: td.dataset.value, text: td.textContent })),
    })));
    assert.deepEqual(cells.map((c) => c.metric), ['ttftMs', 'tpotMs', 'itlMs', 'e2eMs']);
    let checked = 0;
    for (const row of cells) {
      const stats = run.summary[row.metric as 'ttftMs'] as unknown as Record<string, number>;
      for (const c of row.cells) {
        if (c.stat === 'slo') continue;
        const expected = stats[c.stat!]!;
        assert.equal(Number(c.value), expected, `${row.metric} ${c.stat}: the engine's value, unchanged`);
        if (c.stat !== 'count') assert.equal(c.text, formatMs(expected), `${row.metric} ${c.stat} shown as ${formatMs(expected)}`);
        checked++;
      }
    }
    assert.equal(checked, 4 * 7);
    // the SLO that the fixture misses (TPOT p99 against 25 ms) is marked, the one it meets is not
    assert.deepEqual(run.summary.sloMissed, ['tpotMs']);
    assert.match(await page.textContent('tr[data-metric="tpotMs"] td[data-stat="slo"]') ?? '', /missed/);
    assert.doesNotMatch(await page.textContent('tr[data-metric="ttftMs"] td[data-stat="slo"]') ?? '', /missed/);
    assert.equal(await page.$eval('[data-figure="tpot-p99"]', (e) => e.classList.contains('missed')), true);
    assert.equal(await page.textContent('[data-figure="ttft-p99"] .value'), formatMs(run.summary.ttftMs.p99));
    assert.equal(Number(await page.getAttribute('[data-figure="output-tps"]', 'data-value')), run.summary.outputTokensPerSecond);
    assert.equal(Number(await page.getAttribute('[data-figure="stalls"]', 'data-value')), run.summary.stalls.count);
    // the page said `ready` first and kept the run id for the serializer
    const posted = await page.evaluate(() => (window as unknown as { __posted: { type: string }[] }).__posted);
    assert.equal(posted[0]?.type, 'ready');
    assert.deepEqual(await page.evaluate(() => (window as unknown as { __state: unknown }).__state), { runId: run.id });
    assert.deepEqual(problems, []);
  } finally {
    await context.close();
  }
});

test('the timeline and the charts are drawn (pixels read back), the stalls list is there', async () => {
  const run = fixtureRun({ seed: 12 });
  const { context, page, problems } = await openReport(session.browser, session.server.page({ kind: 'run', run }), { theme: 'dark' });
  try {
    await rendered(page);
    const bg = THEMES.dark.vars['--vscode-editor-background']!;
    const timelineInk = await inkPixels(page, '.block.timeline canvas', bg);
    assert.ok(timelineInk > 5000, `timeline has ${timelineInk} drawn pixels`);
    for (const id of ['ttft', 'tpot', 'itl', 'itl-time', 'throughput']) {
      const ink = await inkPixels(page, `figure[data-chart="${id}"] canvas`, bg);
      assert.ok(ink > 500, `chart ${id} has ${ink} drawn pixels`);
    }
    assert.ok(Number(await page.getAttribute('.block.timeline canvas', 'data-stalls-drawn')) > 0, 'stalls highlighted');
    // hovering a lane shows that request
    const ordered = [...run.requests].sort((a, b) => a.scheduledAt - b.scheduledAt || a.sentAt - b.sentAt || a.index - b.index);
    const t0 = Math.min(...run.requests.map((r) => Math.min(r.scheduledAt, r.sentAt)));
    const k = 12;
    const req = ordered[k]!;
    const v = await viewOf(page);
    const box = (await (await page.$('.block.timeline canvas'))!.boundingBox())!;
    const t = req.sentAt + (req.e2eMs ?? 0) / 2 - t0;
    const x = box.x + 44 + ((t - v.start) / (v.end - v.start)) * (box.width - 44);
    const y = box.y + ((k + 0.5 - v.laneStart) / (v.laneEnd - v.laneStart)) * (box.height - 22);
    await page.mouse.move(x, y);
    await page.waitForSelector('.tooltip:not([hidden])');
    const tip = await page.textContent('.tooltip') ?? '';
    assert.ok(tip.startsWith(`Request#${req.index}${req.warmup ? ' (warmup)' : ''}Prompt tokens`), tip);
    assert.ok(tip.includes(req.responseId ?? 'no id'), `the response id in ${tip}`);
    assert.ok(tip.includes(formatMs(req.ttftMs)), 'its TTFT');
    const stalls = await page.$$('.stalls-list button.stall');
    assert.equal(stalls.length, Math.min(10, run.summary.stalls.worst.length));
    assert.deepEqual(problems, []);
  } finally {
    await context.close();
  }
});

test('wheel, keys and buttons zoom; Enter on a stall selects it on the timeline', async () => {
  const run = fixtureRun({ seed: 13, requests: 60 });
  const { context, page, problems } = await openReport(session.browser, session.server.page({ kind: 'run', run }));
  try {
    await rendered(page);
    const full = await viewOf(page);
    const box = (await page.$('.block.timeline canvas'))!;
    const b = (await box.boundingBox())!;
    await page.mouse.move(b.x + b.width * 0.6, b.y + b.height * 0.4);
    await page.mouse.wheel(0, -600);
    await page.waitForFunction((f) => Number(document.querySelector<HTMLCanvasElement>('.block.timeline canvas')!.dataset.frames) > f, full.frames);
    const zoomed = await viewOf(page);
    assert.ok(zoomed.end - zoomed.start < (full.end - full.start) * 0.7, `wheel zoomed in: ${zoomed.end - zoomed.start} < ${full.end - full.start}`);
    assert.ok(zoomed.start > full.start, 'around the cursor, not the left edge');
    // drag pans
    await page.mouse.move(b.x + b.width * 0.6, b.y + b.height * 0.4);
    await page.mouse.down();
    await page.mouse.move(b.x + b.width * 0.3, b.y + b.height * 0.4, { steps: 4 });
    await page.mouse.up();
    await drawn(page);
    const panned = await viewOf(page);
    assert.ok(panned.start > zoomed.start, 'dragging left moves later in time');
    assert.ok(Math.abs((panned.end - panned.start) - (zoomed.end - zoomed.start)) < 1e-6, 'panning keeps the span');
    // keyboard: 0 resets, + zooms
    await box.focus();
    await page.keyboard.press('0');
    await page.waitForFunction((s) => Number(document.querySelector<HTMLCanvasElement>('.block.timeline canvas')!.dataset.viewStart) === s, full.start);
    await page.keyboard.press('+');
    await page.waitForFunction((w) => {
      const c = document.querySelector<HTMLCanvasElement>('.block.timeline canvas')!;
      return Number(c.dataset.viewEnd) - Number(c.dataset.viewStart) < w;
    }, full.end - full.start);
    await page.click('.block.timeline button:text("Reset")');
    await page.waitForFunction((s) => Number(document.querySelector<HTMLCanvasElement>('.block.timeline canvas')!.dataset.viewStart) === s, full.start);
    // the stalls list is reachable by keyboard and Enter shows the stall
    const worst = run.summary.stalls.worst[0]!;
    await page.focus('.stalls-list button.stall');
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => document.body.dataset.selectedStall !== undefined);
    assert.equal(await page.evaluate(() => document.body.dataset.selectedStall), `${worst.requestIndex}:${worst.startMs}`);
    await page.waitForFunction((w) => {
      const c = document.querySelector<HTMLCanvasElement>('.block.timeline canvas')!;
      return Number(c.dataset.viewEnd) - Number(c.dataset.viewStart) < w;
    }, full.end - full.start);
    const sel = await viewOf(page);
    const stallStart = worst.startAt - Math.min(...run.requests.map((r) => Math.min(r.scheduledAt, r.sentAt)));
    assert.ok(sel.start <= stallStart && sel.end >= stallStart + worst.gapMs, 'the whole stall is in view');
    assert.ok(sel.laneEnd - sel.laneStart <= 24, 'zoomed to the lanes around it');
    assert.equal(await page.evaluate(() => document.activeElement?.tagName), 'CANVAS', 'focus moves to the timeline');
    assert.deepEqual(problems, []);
  } finally {
    await context.close();
  }
});

test('live mode fills in, drops a stale update, and ends on the final run', async () => {
  const run = fixtureRun({ seed: 14, requests: 30, warmup: 0 });
  const { context, page, problems } = await openReport(session.browser, session.server.page({ kind: 'loading' }));
  try {
    await page.waitForSelector('body[data-view="empty"]');
    const empty: RunFile = { ...run, requests: [] };
    await sendToPage(page, { type: 'liveStart', runId: run.id, run: empty });
    await page.waitForSelector('body[data-view="live"]');
    const ordered = [...run.requests].sort((a, b) => a.sentAt + (a.e2eMs ?? 0) - (b.sentAt + (b.e2eMs ?? 0)));
    for (let i = 0; i < ordered.length; i += 10) {
      const batch = ordered.slice(i, i + 10);
      await sendToPage(page, { type: 'liveUpdate', runId: run.id, records: batch,
        progress: { runId: run.id, succeeded: i + batch.length, failed: 0, finished: i + batch.length, total: 30, inFlight: 4, elapsedS: (i + 10) / 3, ttftP50Ms: 180, outputTokensPerSecond: 120 } });
      await page.waitForFunction((n) => document.body.dataset.liveRecords === String(n), i + batch.length);
    }
    // a late update from another run is ignored
    const other = fixtureRun({ seed: 99, requests: 5, warmup: 0 });
    await sendToPage(page, { type: 'liveUpdate', runId: other.id, records: other.requests.map((r) => ({ ...r, index: r.index + 1000 })),
      progress: { runId: other.id, succeeded: 5, failed: 0, finished: 5, inFlight: 0, elapsedS: 1 } });
    await page.waitForFunction(() => document.body.dataset.staleDropped === '1');
    assert.equal(await page.evaluate(() => document.body.dataset.liveRecords), '30');
    assert.equal(await page.textContent('[data-figure="done"] .value'), '30 of 30');
    const chunks = run.requests.reduce((a, r) => a + r.chunkTimesMs.length, 0);
    assert.match(await page.textContent('.block.timeline .sub') ?? '', new RegExp(`^30 requests in start order · ${chunks.toLocaleString('en-US')} chunks`));
    const bg = THEMES.dark.vars['--vscode-editor-background']!;
    assert.ok(await inkPixels(page, '.block.timeline canvas', bg) > 2000, 'the live timeline is drawn');
    await page.screenshot({ path: join(artifacts, 'report-live-dark.png'), fullPage: true });
    // a stale end is ignored too; the real end shows the final run with the engine's figures
    await sendToPage(page, { type: 'liveEnd', runId: other.id, run: other });
    await page.waitForFunction(() => document.body.dataset.staleDropped === '2');
    assert.equal(await page.evaluate(() => document.body.dataset.view), 'live');
    await sendToPage(page, { type: 'liveEnd', runId: run.id, run });
    await rendered(page);
    assert.equal(await page.evaluate(() => document.body.dataset.view), 'run');
    assert.equal(await page.textContent('tr[data-metric="ttftMs"] td[data-stat="p99"]'), formatMs(run.summary.ttftMs.p99));
    assert.deepEqual(await page.evaluate(() => (window as unknown as { __state: unknown }).__state), { runId: run.id });
    assert.deepEqual(problems, []);
  } finally {
    await context.close();
  }
});

test('an unknown version, a truncated file and a non-run get a clear message, not a blank page', async () => {
  const { context, page, problems } = await openReport(session.browser, session.server.page({ kind: 'run', run: unknownVersionRun() as RunFile }));
  try {
    await page.waitForSelector('body[data-view="error"]');
    assert.match(await page.textContent('.error-view') ?? '', /version 2.*reads version 1/);
    // the host parses files with the engine's parser and sends its message
    const { parseRunFile } = await import('../../src/engine/files/runFile');
    let message = '';
    try { parseRunFile(truncatedRunText(), '/runs/broken.json'); } catch (e) { message = (e as Error).message; }
    assert.match(message, /truncated/);
    await sendToPage(page, { type: 'runError', message, path: '/runs/broken.json' });
    await page.waitForFunction((m) => document.querySelector('.error-view .message')?.textContent === m, message);
    assert.equal(await page.textContent('.error-view .path'), '/runs/broken.json');
    assert.equal(await page.getAttribute('.error-view', 'role'), 'alert');
    await sendToPage(page, { type: 'showRun', run: { hello: 'world' } });
    await page.waitForFunction(() => /not an LLM Profiler run file/.test(document.querySelector('.error-view')?.textContent ?? ''));
    await page.screenshot({ path: join(artifacts, 'report-error-dark.png') });
    assert.deepEqual(problems, []);
  } finally {
    await context.close();
  }
});

test('TTFO is shown wherever TTFT is, as the metric catalogue says: tiles, percentile row, CDF, compare', async () => {
  const run = withReasoning(fixtureRun({ seed: 13, requests: 30, id: 'thinking' }));
  const plain = withoutTtfo(fixtureRun({ seed: 14, requests: 30, id: 'plain' }));
  const one = await openReport(session.browser, session.server.page({ kind: 'run', run }));
  try {
    const { page } = one;
    await rendered(page);
    assert.deepEqual(await page.$$eval('table.percentiles tbody tr', (rows) => rows.map((r) => (r as HTMLElement).dataset.metric)), latenciesFor('percentiles', [run.summary]).map((m) => m.key));
    assert.equal(await page.textContent('tr[data-metric="ttfoMs"] td[data-stat="p99"]'), formatMs(run.summary.ttfoMs!.p99));
    assert.equal(Number(await page.getAttribute('[data-figure="ttfo-p50"]', 'data-value')), run.summary.ttfoMs!.p50);
    // every tile is a catalogue metric's, and every catalogue tile metric has one
    const tiles = await page.$$eval('.headline [data-figure]', (els) => els.map((e) => (e as HTMLElement).dataset.figure!));
    const tileOf = (id: string) => metricsFor('tiles').find((m) => (m.kind === 'figure' ? id === m.id : id.startsWith(`${m.id}-`)))?.key;
    assert.deepEqual([...new Set(tiles.map(tileOf))].sort(), metricsFor('tiles', [run.summary]).map((m) => m.key).sort());
    const charts = await page.$$eval('figure[data-chart]', (els) => els.map((e) => (e as HTMLElement).dataset.chart!));
    for (const m of latenciesFor('distributions', [run.summary])) assert.ok(charts.includes(m.id), `a ${m.label} CDF`);
    const bg = THEMES.dark.vars['--vscode-editor-background']!;
    assert.ok(await inkPixels(page, 'figure[data-chart="ttfo"] canvas', bg) > 500, 'the TTFO CDF is drawn');
    assert.deepEqual(one.problems, []);
  } finally {
    await one.context.close();
  }
  // without reasoning, no TTFO anywhere
  const none = await openReport(session.browser, session.server.page({ kind: 'run', run: plain }));
  try {
    await rendered(none.page);
    assert.equal(await none.page.$('[data-metric="ttfoMs"], [data-figure^="ttfo-"], figure[data-chart="ttfo"]'), null);
  } finally {
    await none.context.close();
  }
  // a compare shows it when one side has it; the other side's is a dash
  const cmp = await openReport(session.browser, session.server.page({ kind: 'run', run, compareWith: plain }));
  try {
    await rendered(cmp.page);
    assert.equal(await cmp.page.textContent('table.compare tr[data-metric="ttfoMs"] td[data-stat="a-p50"]'), formatMs(run.summary.ttfoMs!.p50));
    assert.equal(await cmp.page.textContent('table.compare tr[data-metric="ttfoMs"] td[data-stat="b-p50"]'), '–');
    assert.ok(await cmp.page.$('figure[data-chart="ttfo"] canvas'), 'the TTFO CDFs overlaid');
    assert.deepEqual(cmp.problems, []);
  } finally {
    await cmp.context.close();
  }
});

test('compare: CDFs overlaid and a table of p50/p99 differences', async () => {
  const a = fixtureRun({ seed: 21, requests: 40, id: 'run-a' });
  const b = fixtureRun({ seed: 22, requests: 40, concurrency: 8, id: 'run-b' });
  const { context, page, problems } = await openReport(session.browser, session.server.page({ kind: 'run', run: a, compareWith: b }));
  try {
    await rendered(page);
    assert.equal(await page.evaluate(() => document.body.dataset.view), 'compare');
    for (const m of ['ttftMs', 'tpotMs', 'itlMs', 'e2eMs'] as const) {
      assert.equal(await page.textContent(`table.compare tr[data-metric="${m}"] td[data-stat="a-p50"]`), formatMs(a.summary[m].p50));
      assert.equal(await page.textContent(`table.compare tr[data-metric="${m}"] td[data-stat="b-p99"]`), formatMs(b.summary[m].p99));
      const d = await page.textContent(`table.compare tr[data-metric="${m}"] td[data-stat="d-p99"]`);
      assert.ok(d && d.startsWith(b.summary[m].p99! > a.summary[m].p99! ? '+' : '−'), `${m} Δ p99 has the right sign: ${d}`);
    }
    const bg = THEMES.dark.vars['--vscode-editor-background']!;
    for (const id of ['ttft', 'tpot', 'itl']) assert.ok(await inkPixels(page, `figure[data-chart="${id}"] canvas`, bg) > 500);
    assert.equal(await page.$$eval('.timeline-canvas', (c) => c.length), 2, 'both timelines');
    assert.deepEqual(await page.evaluate(() => (window as unknown as { __state: unknown }).__state), { runId: 'run-a', compareId: 'run-b' });
    await page.screenshot({ path: join(artifacts, 'report-compare-dark.png'), fullPage: true });
    assert.deepEqual(problems, []);
  } finally {
    await context.close();
  }
});

test('exports post CSV, JSON, trace, chunks CSV and PNG requests to the host', async () => {
  const run = fixtureRun({ seed: 15 });
  const { context, page } = await openReport(session.browser, session.server.page({ kind: 'run', run }));
  try {
    await rendered(page);
    await page.click('button:text("Export CSV")');
    await page.click('button:text("Export JSON")');
    await page.click('button:text("Export trace")');
    await page.click('button:text("Export chunks CSV")');
    await page.click('figure[data-chart="ttft"] button.png');
    await page.click('.block.timeline button:text("PNG")');
    const posted = await page.evaluate(() => (window as unknown as { __posted: Record<string, string>[] }).__posted);
    assert.deepEqual(posted.slice(1, 5), [
      { type: 'exportCsv', runId: run.id },
      { type: 'exportJson', runId: run.id },
      { type: 'exportTrace', runId: run.id },
      { type: 'exportChunksCsv', runId: run.id },
    ]);
    const pngs = posted.filter((m) => m.type === 'exportPng');
    assert.deepEqual(pngs.map((m) => m.name), [`${run.id}-ttft-cdf.png`, `${run.id}-timeline.png`]);
    for (const p of pngs) {
      assert.match(p.dataUrl!, /^data:image\/png;base64,/);
      assert.ok(p.dataUrl!.length > 2000, 'a real image');
    }
  } finally {
    await context.close();
  }
});

test('themes: light, dark and high contrast read from the VS Code variables (screenshots), and a switch redraws', async () => {
  const run = fixtureRun({ seed: 16 });
  for (const theme of ['light', 'dark', 'high-contrast'] as ThemeName[]) {
    const { context, page, problems } = await openReport(session.browser, session.server.page({ kind: 'run', run }), { theme });
    try {
      await rendered(page);
      const bg = THEMES[theme].vars['--vscode-editor-background']!;
      // the timeline's background is the editor's, so the corner pixel is exactly that colour
      const corner = await page.$eval('.block.timeline canvas', (c) => [...(c as HTMLCanvasElement).getContext('2d')!.getImageData(2, 2, 1, 1).data].slice(0, 3));
      assert.deepEqual(corner, [1, 3, 5].map((i) => parseInt(bg.slice(i, i + 2), 16)), `${theme} background`);
      await page.screenshot({ path: join(artifacts, `report-${theme}.png`), fullPage: true });
      assert.deepEqual(problems, []);
    } finally {
      await context.close();
    }
  }
  const { context, page } = await openReport(session.browser, session.server.page({ kind: 'run', run }), { theme: 'dark' });
  try {
    await rendered(page);
    await switchTheme(page, 'light');
    await page.waitForFunction(() => document.body.dataset.themeKind === 'light');
    await page.waitForFunction(() => {
      const c = document.querySelector<HTMLCanvasElement>('.block.timeline canvas')!;
      const d = c.getContext('2d')!.getImageData(2, 2, 1, 1).data;
      return d[0] === 255 && d[1] === 255 && d[2] === 255;
    }, undefined, { timeout: 5000 });
  } finally {
    await context.close();
  }
});

test('a narrow editor group (420 px): no sideways scrolling of the page, everything still drawn', async () => {
  const run = fixtureRun({ seed: 17 });
  const { context, page, problems } = await openReport(session.browser, session.server.page({ kind: 'run', run }), { theme: 'dark', width: 420 });
  try {
    await rendered(page);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert.ok(overflow <= 0, `page scrolls sideways by ${overflow} px`);
    const w = await page.$eval('.block.timeline canvas', (c) => c.getBoundingClientRect().width);
    assert.ok(w <= 420 && w > 300, `timeline fits: ${w}`);
    await page.screenshot({ path: join(artifacts, 'report-narrow-dark.png'), fullPage: true });
    assert.deepEqual(problems, []);
  } finally {
    await context.close();
  }
});

test('a sweep run shows the sweep view, and choosing a point shows its requests on the timeline', async () => {
  const run = fixtureSweepRun();
  const { context, page, problems } = await openReport(session.browser, session.server.page({ kind: 'run', run }));
  try {
    await rendered(page);
    await page.waitForSelector('.block.sweep .sweep-view canvas');
    const bg = THEMES.dark.vars['--vscode-editor-background']!;
    assert.ok(await inkPixels(page, '.block.sweep canvas', bg) > 500, 'the sweep curve is drawn');
    const point = run.sweep!.points[2]!;
    await page.$eval('.block.sweep .sweep-container', (el, detail) => {
      el.dispatchEvent(new CustomEvent('sweep-point-selected', { detail, bubbles: true }));
    }, { index: 2, label: point.label, requestIndexes: point.requestIndexes });
    await page.waitForFunction(() => document.body.dataset.shownRequests !== undefined);
    await drawn(page);
    const v = await viewOf(page);
    assert.equal(v.laneEnd - v.laneStart, point.requestIndexes.length, 'the lanes of that point');
    await page.screenshot({ path: join(artifacts, 'report-sweep-dark.png'), fullPage: true });
    assert.deepEqual(problems, [], 'no CSP violation or error, the sweep view included');
  } finally {
    await context.close();
  }
});
