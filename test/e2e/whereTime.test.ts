// "Where the time went" in the report webview, in headless Chromium: the stacked bars, the client
// against the server, the server's /metrics, the verdicts, stalls attributed to a culprit's prefill
// (and selecting one outlines that prefill on the timeline), the buffering verdict in the header,
// the prefix cache beside TTFT, and a run file from before all this still drawn without an error.
// Needs `npm run build` (dist/webview/report.js). Screenshots go to test-artifacts/.
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import type { RunFile } from '../../src/engine/core/types';
import { formatMs } from '../../src/present/units';
import { buildLanes } from '../../webview/report/lanes';
import { BAND_THRESHOLD } from '../../webview/report/whereView';
import { fixtureRun, fixtureWhereRun } from '../support/fixtureRuns';
import { openReport, reportSession, rendered, switchTheme, THEMES } from '../support/reportHarness';

const artifacts = join(__dirname, '..', '..', 'test-artifacts');
const session = reportSession();

before(() => mkdirSync(artifacts, { recursive: true }));


/** The measured, successful requests that got a first token: one bar each below the band threshold. */
function barredRequests(run: RunFile) {
  return run.requests.filter((r) => !r.warmup && !r.error && r.ttftMs !== undefined);
}

/** "#d18616" → "rgb(209, 134, 22)", as getComputedStyle writes it. */
function rgb(hex: string): string {
  return `rgb(${[1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16)).join(', ')})`;
}

async function inkPixels(page: Page, selector: string, bg: string): Promise<number> {
  return page.evaluate(({ selector, bg }) => {
    const c = document.querySelector<HTMLCanvasElement>(selector);
    if (!c) throw new Error(`no canvas ${selector}`);
    const d = c.getContext('2d')!.getImageData(0, 0, c.width, c.height).data;
    const r = parseInt(bg.slice(1, 3), 16), g = parseInt(bg.slice(3, 5), 16), b = parseInt(bg.slice(5, 7), 16);
    let n = 0;
    for (let i = 0; i < d.length; i += 4) {
      if (d[i + 3]! > 0 && (Math.abs(d[i]! - r) > 24 || Math.abs(d[i + 1]! - g) > 24 || Math.abs(d[i + 2]! - b) > 24)) n++;
    }
    return n;
  }, { selector, bg });
}

test('the section: a bar per request in start order from the server timings, the client-vs-server table, /metrics and the verdicts', async () => {
  const run = fixtureWhereRun({ seed: 41, requests: 40 });
  const { context, page, problems } = await openReport(session.browser, session.server.page({ kind: 'run', run }));
  try {
    await rendered(page);
    // a heading the section is labelled by
    assert.equal(await page.textContent('.block.where > h2'), 'Where the time went');
    assert.equal(await page.getAttribute('.block.where', 'aria-labelledby'), 'h-where');
    // after the timeline and its stalls, before the distributions
    const order = await page.$$eval('#app > .block', (els) => els.map((e) => e.classList[1]));
    assert.deepEqual(order, ['percentiles', 'timeline', 'stalls', 'where', 'distributions']);
    // one bar per request, in the timeline's (start) order, each with its text alternative
    const expected = barredRequests(run);
    assert.ok(expected.length <= BAND_THRESHOLD);
    const bars = await page.$$eval('.where-bar', (els) => els.map((e) => ({
      index: (e as HTMLElement).dataset.index, evidence: (e as HTMLElement).dataset.evidence, role: e.getAttribute('role'),
      label: e.getAttribute('aria-label') ?? '', kinds: Array.from(e.querySelectorAll<HTMLElement>('.seg')).map((s) => s.dataset.kind),
    })));
    assert.equal(bars.length, expected.length, 'a bar per measured request with a first token');
    const laneOrder = buildLanes(run).lanes.map((l) => l.request).filter((r) => expected.includes(r)).map((r) => String(r.index));
    assert.deepEqual(bars.map((b) => b.index), laneOrder, "the timeline's order");
    for (const b of bars) {
      assert.equal(b.role, 'img');
      assert.equal(b.evidence, 'server');
      assert.match(b.label, new RegExp(`^Request #${b.index} \\(server's timings\\): queue \\(server\\) .+, prefill \\(server\\) .+, decode .+; total .+`));
      assert.deepEqual(b.kinds, ['queue', 'prefill', 'transport', 'decode'], 'segments in time order');
    }
    // the bar's segments add up to its height, the tallest bar fills the plot
    const heights = await page.$$eval('.where-bar', (els) => els.map((e) => parseFloat((e as HTMLElement).style.height)));
    assert.ok(Math.abs(Math.max(...heights) - 100) < 1e-6);
    // colours come from the theme's chart tokens
    const dark = THEMES.dark.vars;
    assert.equal(await page.$eval('.where-bar .seg-queue', (e) => getComputedStyle(e).backgroundColor), rgb(dark['--vscode-charts-orange']!));
    assert.equal(await page.$eval('.where-bar .seg-prefill', (e) => getComputedStyle(e).backgroundColor), rgb(dark['--vscode-charts-purple']!));
    assert.equal(await page.$eval('.where-bar .seg-transport', (e) => getComputedStyle(e).backgroundColor), rgb(dark['--vscode-charts-green']!));
    assert.equal(await page.$eval('.where-bar .seg-decode', (e) => getComputedStyle(e).backgroundColor), rgb(dark['--vscode-charts-blue']!));
    // up to the first token: no decode
    await page.click('.block.where button:text("Up to the first token")');
    await page.waitForSelector('.where-bars[data-mode="ttft"]');
    assert.equal(await page.$$eval('.where-bar .seg-decode', (e) => e.length), 0);
    assert.equal(await page.getAttribute('.block.where button:text("Up to the first token")', 'aria-pressed'), 'true');
    await page.click('.block.where button:text("Whole request")');
    await page.waitForSelector('.where-bars[data-mode="e2e"]');

    // the client against the server, from the shared layer's table
    const s = run.summary.server!;
    const rows = await page.$$eval('table.where-timing tbody tr', (trs) => trs.map((tr) => Array.from(tr.children).map((c) => c.textContent)));
    const byName = new Map(rows.map((r) => [r[0], r.slice(1)] as const));
    assert.deepEqual(byName.get('TTFT (client)'), [formatMs(run.summary.ttftMs.p50), formatMs(run.summary.ttftMs.p99)]);
    assert.deepEqual(byName.get('TTFT (server)'), [formatMs(s.ttftServerMs!.p50), formatMs(s.ttftServerMs!.p99)]);
    assert.deepEqual(byName.get('queue (server)'), [formatMs(s.queueMs!.p50), formatMs(s.queueMs!.p99)]);
    assert.deepEqual(byName.get('prefill (server)'), [formatMs(s.promptMs!.p50), formatMs(s.promptMs!.p99)]);
    assert.ok([...byName.keys()].some((k) => k?.startsWith('transport')), 'a transport row');
    assert.deepEqual(await page.$$eval('table.where-timing thead th', (th) => th.map((t) => t.textContent)), ['', 'p50', 'p99']);

    // the server's /metrics: its lines and the gauges chart
    assert.ok(await page.$$eval('.server-metrics-lines li', (li) => li.length) > 0, 'metrics lines');
    await page.waitForSelector('figure[data-chart="server-gauges"] canvas');
    assert.ok(await inkPixels(page, 'figure[data-chart="server-gauges"] canvas', dark['--vscode-editor-background']!) > 300, 'the gauges are drawn');
    assert.match(await page.getAttribute('figure[data-chart="server-gauges"] canvas', 'aria-label') ?? '', /running up to \d+, waiting up to \d+, KV cache up to/);

    // the verdicts, in the engine's words and order, at the end of the section
    const verdicts = await page.$$eval('.block.where ol.verdicts li', (li) => li.map((l) => [(l as HTMLElement).dataset.kind, l.textContent]));
    assert.deepEqual(verdicts, run.summary.verdicts!.map((v) => [v.kind, v.message]));
    assert.equal(await page.$eval('.block.where .where', (w) => w.lastElementChild?.tagName), 'OL', 'the verdicts come last');

    // clicking a bar shows its request on the timeline
    const target = bars[5]!;
    await page.click(`.where-bar[data-index="${target.index}"]`);
    await page.waitForFunction(() => document.body.dataset.shownRequests !== undefined);
    const lane = buildLanes(run).laneOf.get(Number(target.index))!;
    assert.equal(await page.evaluate(() => document.body.dataset.shownRequests), `${lane}-${lane}`);

    await page.screenshot({ path: join(artifacts, 'where-dark.png'), fullPage: true });
    // a theme switch recolours the bars (CSS variables) and the gauges (read again from the theme)
    await switchTheme(page, 'light');
    await page.waitForFunction(() => document.body.dataset.themeKind === 'light');
    const light = THEMES.light.vars;
    assert.equal(await page.$eval('.where-bar .seg-prefill', (e) => getComputedStyle(e).backgroundColor), rgb(light['--vscode-charts-purple']!));
    assert.ok(await inkPixels(page, 'figure[data-chart="server-gauges"] canvas', light['--vscode-editor-background']!) > 300, 'the gauges redrawn on the light background');
    assert.deepEqual(problems, []);
  } finally {
    await context.close();
  }
});

test(`more than ${BAND_THRESHOLD} requests: four bars, one per TTFT band`, async () => {
  const run = fixtureWhereRun({ seed: 42, requests: 200, concurrency: 8, chunksPerRequest: 24, serverMetrics: false });
  const { context, page, problems } = await openReport(session.browser, session.server.page({ kind: 'run', run }));
  try {
    await rendered(page);
    const bars = await page.$$eval('.where-bar', (els) => els.map((e) => ({ band: (e as HTMLElement).dataset.band, label: e.getAttribute('aria-label') ?? '' })));
    assert.deepEqual(bars.map((b) => b.band), ['TTFT p0–p50', 'TTFT p50–p90', 'TTFT p90–p99', 'TTFT p99–p100']);
    const counts = bars.map((b) => Number(/\(([\d,]+) requests, mean\)/.exec(b.label)![1]!.replace(/,/g, '')));
    assert.equal(counts.reduce((a, b) => a + b, 0), barredRequests(run).length, 'every request in one band');
    assert.equal(await page.$$eval('.where-labels span', (s) => s.length), 4, 'each band labelled under its bar');
    assert.equal(await page.$('figure[data-chart="server-gauges"]'), null, 'no /metrics, no chart');
    assert.deepEqual(problems, []);
  } finally {
    await context.close();
  }
});

test('a prefill stall names its culprit, and selecting it outlines the culprit\'s prefill on its lane', async () => {
  const run = fixtureWhereRun({ seed: 43, requests: 40 });
  const worst = run.summary.stalls.worst.find((w) => w.cause === 'prefill' && w.culprits?.length)!;
  assert.ok(worst, 'the fixture has a prefill stall among the worst');
  const culprit = run.requests.find((r) => r.index === worst.culprits![0]!.index)!;
  const { context, page, problems } = await openReport(session.browser, session.server.page({ kind: 'run', run }));
  try {
    await rendered(page);
    const sel = `.stalls-list button.stall[data-request="${worst.requestIndex}"][data-start="${worst.startMs}"]`;
    const why = await page.textContent(`${sel} .why`);
    assert.equal(why, `stalled ${formatMs(worst.gapMs)} by #${culprit.index}'s ${culprit.promptTokens!.toLocaleString('en-US')}-token prefill`);
    assert.equal(await page.getAttribute(sel, 'data-cause'), 'prefill');
    // the timeline colours stalls by cause: the engine's, not its own rule
    const kinds = await page.$eval('.block.timeline canvas', (c) => (c as HTMLCanvasElement).dataset.stallKindsDrawn);
    assert.ok(kinds?.split(',').includes('prefill'), `kinds drawn: ${kinds}`);
    assert.ok(!kinds?.split(',').includes('rule'), 'no stall found by the fallback rule');
    assert.ok(await page.$('.block.timeline .legend .sw-culprit'), 'the legend names the culprit outline');

    await page.click(sel);
    await page.waitForFunction(() => document.body.dataset.selectedStall !== undefined);
    assert.equal(await page.evaluate(() => document.body.dataset.selectedStall), `${worst.requestIndex}:${worst.startMs}`);
    assert.equal(await page.evaluate(() => document.body.dataset.stallCulprits), worst.culprits!.map((c) => c.index).join(','));
    const model = buildLanes(run);
    const culpritLane = model.laneOf.get(culprit.index)!;
    await page.waitForFunction(() => Number(document.querySelector<HTMLCanvasElement>('.block.timeline canvas')!.dataset.prefillDrawn) > 0);
    const v = await page.$eval('.block.timeline canvas', (c) => ({ ...(c as HTMLCanvasElement).dataset }));
    assert.equal(v.culpritLanes!.split(',')[0], String(culpritLane));
    assert.ok(Number(v.laneStart) <= culpritLane && culpritLane < Number(v.laneEnd), 'the culprit lane is in view');
    // its prefill (first token back by the server's prompt time) is in view too
    const prefillEnd = culprit.sentAt + culprit.ttftMs! - model.t0;
    const prefillStart = prefillEnd - culprit.serverTimings!.promptMs!;
    assert.ok(Number(v.viewStart) <= prefillStart && prefillEnd <= Number(v.viewEnd), 'the whole prefill is in view');
    await (await page.$('.block.timeline'))!.screenshot({ path: join(artifacts, 'where-stall-culprit-dark.png') });
    // resetting the view clears the outline
    await page.keyboard.press('0');
    await page.waitForFunction(() => document.querySelector<HTMLCanvasElement>('.block.timeline canvas')!.dataset.prefillDrawn === '0');
    assert.deepEqual(problems, []);
  } finally {
    await context.close();
  }
});

test('a buffered stream: the header says so, and ITL/TPOT carry the flag; an unbuffered one does not', async () => {
  const run = fixtureWhereRun({ seed: 44, requests: 30, buffered: true });
  const { context, page, problems } = await openReport(session.browser, session.server.page({ kind: 'run', run }));
  try {
    await rendered(page);
    const header = await page.textContent('.run-header .buffering') ?? '';
    assert.match(header, /buffered between the server and you/);
    assert.match(header, new RegExp(`TTFT inflated by about ${formatMs(run.summary.buffering!.inflationMs).replace('.', '\\.')}`));
    assert.equal(await page.getAttribute('.run-header .buffering', 'role'), 'note');
    for (const id of ['tpot-p50', 'tpot-p99', 'itl-p99']) {
      assert.equal(await page.getAttribute(`[data-figure="${id}"]`, 'data-proxy'), 'true', id);
      assert.match(await page.textContent(`[data-figure="${id}"] .note`) ?? '', /measures the proxy, not the server/);
    }
    assert.equal(await page.getAttribute('[data-figure="ttft-p50"]', 'data-proxy'), null);
    for (const m of ['tpotMs', 'itlMs']) {
      assert.equal(await page.getAttribute(`table.percentiles tr[data-metric="${m}"]`, 'data-proxy'), 'true');
      assert.match(await page.textContent(`table.percentiles tr[data-metric="${m}"] th`) ?? '', /measures the proxy/);
    }
    assert.equal(await page.getAttribute('table.percentiles tr[data-metric="ttftMs"]', 'data-proxy'), null);
    // its stalls are the buffer's flushes, coloured and worded as such
    assert.match(await page.textContent('.stalls-list button.stall[data-cause="buffering"] .why') ?? '', /buffered between the server and you/);
    const kinds = await page.$eval('.block.timeline canvas', (c) => (c as HTMLCanvasElement).dataset.stallKindsDrawn);
    assert.equal(kinds, 'buffering');
    await page.screenshot({ path: join(artifacts, 'where-buffered-dark.png') });
    assert.deepEqual(problems, []);
  } finally {
    await context.close();
  }
  const plain = fixtureWhereRun({ seed: 45, requests: 20 });
  const o = await openReport(session.browser, session.server.page({ kind: 'run', run: plain }));
  try {
    await rendered(o.page);
    assert.equal(await o.page.$('.run-header .buffering'), null);
    assert.equal(await o.page.$$eval('[data-proxy]', (e) => e.length), 0);
    assert.deepEqual(o.problems, []);
  } finally {
    await o.context.close();
  }
});

test('prefix cache: TTFT cold against warm beside the TTFT figure, and a compare of warm against cold says why TTFT differs', async () => {
  const warm = fixtureWhereRun({ seed: 46, requests: 30, prefixCache: 'warm', id: 'warm-run' });
  const cold = fixtureWhereRun({ seed: 47, requests: 30, id: 'cold-run' });
  const pc = warm.summary.prefixCache!;
  assert.ok(pc.warmRequests > 0 && pc.coldRequests > 0);
  const { context, page, problems } = await openReport(session.browser, session.server.page({ kind: 'run', run: warm }));
  try {
    await rendered(page);
    const figures = await page.$$eval('.headline .figure', (f) => f.map((x) => (x as HTMLElement).dataset.figure));
    assert.deepEqual(figures.slice(0, 3), ['ttft-p50', 'ttft-p99', 'ttft-cache'], 'next to the TTFT figures');
    assert.equal(await page.textContent('[data-figure="ttft-cache"] .value'), `${formatMs(pc.coldTtftMs!.p50)} / ${formatMs(pc.warmTtftMs!.p50)}`);
    assert.ok((await page.textContent('[data-figure="ttft-cache"] .note'))!.length > 0, 'with the cache in words');
    assert.deepEqual(problems, []);
  } finally {
    await context.close();
  }
  const o = await openReport(session.browser, session.server.page({ kind: 'run', run: cold }));
  try {
    await rendered(o.page);
    assert.equal(await o.page.$('[data-figure="ttft-cache"]'), null, 'a cold run has no warm figure');
  } finally {
    await o.context.close();
  }
  const c = await openReport(session.browser, session.server.page({ kind: 'run', run: warm, compareWith: cold }));
  try {
    await rendered(c.page);
    const caveat = await c.page.textContent('.compare-caveats li[data-caveat="prefix-cache"]') ?? '';
    assert.match(caveat, /^TTFT: the prefix cache served A, not B/);
    assert.ok(await c.page.$('.side[data-side="A"] [data-figure="ttft-cache"]'), "A's headline shows its warm split");
    assert.equal(await c.page.$('.side[data-side="B"] [data-figure="ttft-cache"]'), null);
    await c.page.screenshot({ path: join(artifacts, 'where-compare-warm-cold-dark.png') });
    assert.deepEqual(c.problems, []);
  } finally {
    await c.context.close();
  }
});

test('a run file from before any of this renders without an error: bars from the client\'s clock, stalls by the old rule', async () => {
  const run = fixtureRun({ seed: 48, requests: 30 });
  for (const r of run.requests) assert.equal(r.serverTimings ?? r.stalls ?? r.transportMs, undefined);
  assert.equal(run.summary.verdicts ?? run.summary.server ?? run.summary.buffering ?? run.summary.prefixCache ?? run.serverMetrics, undefined);
  for (const theme of ['dark', 'light', 'high-contrast'] as const) {
    const { context, page, problems } = await openReport(session.browser, session.server.page({ kind: 'run', run }), { theme });
    try {
      await rendered(page);
      const bars = await page.$$eval('.where-bar', (els) => els.map((e) => [(e as HTMLElement).dataset.evidence, e.getAttribute('aria-label') ?? '']));
      assert.equal(bars.length, barredRequests(run).length);
      for (const [evidence, label] of bars) {
        assert.equal(evidence, 'client');
        assert.match(label!, /\(client's inference\)/);
      }
      assert.match(await page.textContent('.where-evidence') ?? '', /client's clock only/);
      assert.equal(await page.$('table.where-timing'), null);
      assert.equal(await page.$('ol.verdicts'), null);
      assert.equal(await page.$('.server-metrics-lines'), null);
      assert.equal(await page.$('.run-header .buffering'), null);
      assert.equal(await page.$$eval('.stalls-list .why', (e) => e.length), 0, 'no cause without the engine\'s verdict');
      assert.equal(await page.$$eval('.block.timeline .legend li', (li) => li.filter((l) => l.textContent!.startsWith('stall')).length), 1, 'one kind of stall');
      if (run.summary.stalls.count > 0) {
        const kinds = await page.$eval('.block.timeline canvas', (c) => (c as HTMLCanvasElement).dataset.stallKindsDrawn);
        assert.equal(kinds, 'rule', 'stalls found by the run\'s own rule');
      }
      const stall = await page.$('.stalls-list button.stall');
      if (stall) {
        await stall.click();
        await page.waitForFunction(() => document.body.dataset.selectedStall !== undefined);
        assert.equal(await page.evaluate(() => document.body.dataset.stallCulprits), undefined);
      }
      if (theme === 'light') await page.screenshot({ path: join(artifacts, 'where-old-run-light.png'), fullPage: true });
      assert.deepEqual(problems, [], theme);
    } finally {
      await context.close();
    }
  }
});

test('a narrow editor group (420 px): the section, its table and the buffering note fit without sideways scrolling', async () => {
  const run = fixtureWhereRun({ seed: 49, requests: 30, buffered: true });
  const { context, page, problems } = await openReport(session.browser, session.server.page({ kind: 'run', run }), { width: 420 });
  try {
    await rendered(page);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert.ok(overflow <= 0, `page scrolls sideways by ${overflow} px`);
    const w = await page.$eval('.where-bars', (e) => e.getBoundingClientRect().width);
    assert.ok(w > 300 && w <= 420, `bars fit: ${w}`);
    await page.screenshot({ path: join(artifacts, 'where-narrow-dark.png'), fullPage: true });
    assert.deepEqual(problems, []);
  } finally {
    await context.close();
  }
});
