// The sweep view in a real headless Chromium: charts drawn, the operating point named, the verdicts
// shown, and a click on a dot (or a row) emits 'sweep-point-selected' with that point's requests.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { chromium } from 'playwright-core';
import { analyzeSweep, throughputAt, tpotAt } from '../../src/engine/analysis/fit';
import type { PrefillDialConfig, RunFile, Stats, Summary, SweepPoint } from '../../src/engine/core/types';
import type { Chart } from 'chart.js';

/** What the page's script puts on `window` (see the bundle's entry below), and what the test keeps there. */
type PageWindow = Window & { renderSweep(el: HTMLElement, run: unknown): void; Chart: typeof Chart; __events: unknown[] };

const stats = (mean: number, p99 = mean * 1.2, count = 8): Stats => ({ count, mean, std: 0, min: mean, max: p99, p50: mean, p90: p99, p95: p99, p99 });

function summary(tps: number, tpot: number, ttft: number, extra: Partial<Summary> = {}): Summary {
  return {
    completed: 8,
    failed: 0,
    errorsByKind: {},
    durationS: 2,
    totalInputTokens: 0,
    totalOutputTokens: tps * 2,
    requestsPerSecond: tps / 64,
    outputTokensPerSecond: tps,
    totalTokensPerSecond: tps,
    ttftMs: stats(ttft),
    tpotMs: stats(tpot, tpot * 1.1),
    itlMs: stats(tpot),
    e2eMs: stats(ttft + 63 * tpot),
    goodput: tps / 64,
    stalls: { count: 0, totalMs: 0, shareOfDecode: 0, worst: [], factor: 3, floorMs: 50 },
    malformedEvents: 0,
    tokenSource: 'usage',
    multiTokenChunks: 0,
    ...extra,
  };
}

function sweepRun(): RunFile {
  const slo = { tpotMs: 60, ttftMs: 400 };
  const points: SweepPoint[] = [1, 2, 4, 8, 16, 32, 64, 128].map((c, i) => ({
    label: `c=${c}`,
    concurrency: c,
    meanBatch: c,
    summary: summary(throughputAt(20, 1, c), tpotAt(20, 1, c), 100 + c * 3),
    requestIndexes: [i * 2, i * 2 + 1],
  }));
  const a = analyzeSweep('concurrency', points, slo);
  return {
    format: 'llm-profiler.run',
    version: 1,
    id: 'sweep-e2e',
    startedAt: new Date(0).toISOString(),
    tool: { name: 'llm-profiler', version: '0.0.0' },
    endpoint: { url: 'http://127.0.0.1:1', api: 'openai-chat' },
    workload: { mode: { kind: 'closed', concurrency: 1 }, requests: 2, warmup: 0, maxTokens: 64, prompt: { kind: 'synthetic', tokens: 16, sharedPrefix: false }, ignoreEos: true, seed: 0, timeoutMs: 1000, idleTimeoutMs: 1000, slo, percentiles: [50, 90, 95, 99], stallFactor: 3, stallFloorMs: 50 },
    requests: [],
    summary: points[0]!.summary,
    sweep: { dimension: 'concurrency', points, ...a, slo, verdicts: [...a.verdicts, { kind: 'poor-fit', message: 'R² = 0.42 (< 0.9): a test verdict' }] },
  };
}

function dialRun(): RunFile {
  const base = sweepRun();
  const config = (b: number, stall: number, ttft: number): PrefillDialConfig => ({
    batchSize: b,
    label: `batch ${b}`,
    decode: { summary: summary(300, 20, 30, { stalls: { count: stall ? 3 : 0, totalMs: stall, shareOfDecode: stall / 10000, worst: [], factor: 3, floorMs: 50 } }), requestIndexes: [0] },
    long: { summary: summary(10, 20, ttft), requestIndexes: [1] },
  });
  const { sweep: _s, ...rest } = base;
  return { ...rest, prefillDial: { configs: [config(32, 0, 900), config(512, 640, 300)], decodeStreams: 3, shortPromptTokens: 16, shortMaxTokens: 48, longPromptTokens: 1024, longMaxTokens: 4, longRate: 0.5, durationS: 10 } };
}

test('renderSweep draws the trade-off, names the points and emits sweep-point-selected', { timeout: 120_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'sweepview-'));
  const entry = join(__dirname, '../../webview/report/sweepView.ts');
  const bundle = await build({
    stdin: { contents: `import { renderSweep } from ${JSON.stringify(entry)}; import { Chart } from 'chart.js'; (window as any).renderSweep = renderSweep; (window as any).Chart = Chart;`, resolveDir: join(__dirname, '../..'), loader: 'ts' },
    bundle: true,
    write: false,
    format: 'iife',
    platform: 'browser',
  });
  const script = bundle.outputFiles[0]!.text;
  const context = await chromium.launchPersistentContext(join(dir, 'profile'), {
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  try {
    const page = context.pages()[0] ?? (await context.newPage());
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    await page.setContent(
      `<html><head><style>:root{--vscode-charts-foreground:rgb(200,200,200);--vscode-charts-lines:rgb(80,80,80);--vscode-charts-blue:rgb(0,0,255);--vscode-charts-orange:rgb(255,128,0);--vscode-charts-red:rgb(255,0,0);--vscode-charts-green:rgb(0,255,0);--vscode-charts-purple:rgb(128,0,128);--vscode-charts-yellow:rgb(255,255,0)} .sweep-canvas{position:relative;height:280px}</style></head><body><div id="c" style="width:800px"></div></body></html>`,
    );
    await page.addScriptTag({ content: script });
    const run = sweepRun();
    const out = await page.evaluate((r) => {
      const c = document.getElementById('c')!;
      const events: unknown[] = [];
      document.body.addEventListener('sweep-point-selected', (e) => events.push((e as CustomEvent).detail));
      (window as unknown as PageWindow).renderSweep(c, r);
      (window as unknown as PageWindow).__events = events;
      const canvases = Array.from(c.querySelectorAll("canvas"));
      const chart = (window as unknown as PageWindow).Chart.getChart(canvases[0]!)!;
      return {
        canvases: canvases.length,
        text: c.textContent,
        blue: chart.data.datasets[0].borderColor,
        orange: chart.data.datasets[1].borderColor,
        rows: c.querySelectorAll('tbody tr').length,
      };
    }, run as unknown as Record<string, unknown>);
    assert.equal(out.canvases, 3);
    assert.equal(out.rows, 8);
    assert.equal(out.blue, 'rgb(0,0,255)');
    assert.equal(out.orange, 'rgb(255,128,0)');
    assert.match(out.text!, /Operating point \(interactive\): c=32/);
    assert.match(out.text!, /Max throughput \(batch work\): c=128/);
    assert.match(out.text!, /Fit: TPOT\(B\) ≈ 20\.00 ms \+ 1\.000 ms × B/);
    assert.match(out.text!, /ceiling ≈ 1000 tokens\/s/);
    assert.match(out.text!, /a test verdict/);
    assert.match(out.text!, /Knee: c=64: the next doubling buys 13.5% throughput \(under 15%\)/);

    // a trade-off chart per catalogue latency the points have: TTFT and TPOT here (no TTFO without reasoning), then the fit
    assert.deepEqual(await page.$$eval('#c .sweep-chart', (els) => els.map((e) => (e as HTMLElement).dataset.chart)), ['ttftMs', 'tpotMs', 'fit']);

    // click the dot of c=8 in the first trade-off chart (TTFT)
    const box = await page.evaluate(() => {
      const canvas = document.querySelector('canvas')!;
      const chart = (window as unknown as PageWindow).Chart.getChart(canvas)!;
      const el = chart.getDatasetMeta(0).data[3];
      const r = canvas.getBoundingClientRect();
      return { x: r.left + el.x, y: r.top + el.y };
    });
    await page.mouse.click(box.x, box.y);
    await page.locator('tbody tr[data-index="5"]').click();
    const events = await page.evaluate(() => (window as unknown as PageWindow).__events);
    assert.deepEqual(events, [
      { index: 3, label: 'c=8', requestIndexes: [6, 7] },
      { index: 5, label: 'c=32', requestIndexes: [10, 11] },
    ]);
    assert.match((await page.locator('.sweep-point-details').textContent())!, /Point c=32.*met at p99/);

    // points whose replies reasoned: a TTFO trade-off chart beside TTFT's, TTFO columns in the points table and in a point's figures
    const thinking = sweepRun();
    const points = thinking.sweep!.points.map((p) => ({ ...p, summary: { ...p.summary, ttfoMs: stats(p.summary.ttftMs.mean + 40) } }));
    const ttfo = await page.evaluate((r) => {
      const c = document.getElementById('c')!;
      (window as unknown as PageWindow).renderSweep(c, r);
      (c.querySelector('tbody tr[data-index="2"]') as HTMLElement).click();
      return {
        charts: Array.from(c.querySelectorAll('.sweep-chart'), (e) => (e as HTMLElement).dataset.chart),
        header: Array.from(c.querySelectorAll('thead th'), (e) => e.textContent),
        details: c.querySelector('.sweep-point-details')!.textContent,
      };
    }, { ...thinking, sweep: { ...thinking.sweep!, points } } as unknown as Record<string, unknown>);
    assert.deepEqual(ttfo.charts, ['ttftMs', 'ttfoMs', 'tpotMs', 'fit']);
    assert.ok(ttfo.header.includes('TTFO p50') && ttfo.header.includes('TTFO p99'), ttfo.header.join(' | '));
    assert.match(ttfo.details!, /TTFO p50 \/ p99/);

    // the dial's compact view
    const dial = await page.evaluate((r) => {
      const c = document.getElementById('c')!;
      (window as unknown as PageWindow).renderSweep(c, r);
      return { text: c.textContent, canvases: c.querySelectorAll('canvas').length };
    }, dialRun() as unknown as Record<string, unknown>);
    assert.equal(dial.canvases, 1, 'the old charts are gone, one bar chart drawn');
    assert.match(dial.text!, /batch 32.*batch 512/);
    assert.match(dial.text!, /long-prompt TTFT p50900 ms300 ms/);
    assert.deepEqual(errors, []);
  } finally {
    await context.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
