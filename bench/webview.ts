// `npm run bench:webview`: the report panel on runs of 10 thousand, 100 thousand and 1 million
// chunks in headless Chromium. Prints: the first draw (message in → timeline on the canvas, and the
// whole report with its charts), the JS heap after it, and the frame time of a zoom step (the
// timeline's draw after a wheel event; worst case: at the full view every chunk is visited).
// Targets at 1M chunks: the timeline first drawn ≤ 300 ms; a zoom frame's draw ≤ 16 ms at the median
// (60 frames a second) and ≤ 33 ms at the worst. Figures depend on the machine.
import { cpus, loadavg } from 'node:os';
import { fixtureWithChunks } from '../test/support/fixtureRuns';
import { launchChromium, openReport, startReportServer } from '../test/support/reportHarness';

interface Row { chunks: number; requests: number; parseMs: number; firstDrawMs: number; fullMs: number; heapMB: number; zoomMinMs: number; zoomMedianMs: number; zoomMaxMs: number; zoomFrameMs: number }

async function main(): Promise<void> {
  const sizes = (process.argv[2]?.split(',').map(Number)) ?? [10_000, 100_000, 1_000_000];
  const server = await startReportServer();
  const browser = await launchChromium();
  const rows: Row[] = [];
  try {
    for (const size of sizes) {
      const run = fixtureWithChunks(size);
      const chunks = run.requests.reduce((a, r) => a + r.chunkTimesMs.length, 0);
      const text = JSON.stringify(run);
      const { context, page, problems } = await openReport(browser, server.page({ kind: 'loading' }), { width: 1280, height: 900 });
      try {
        await page.waitForSelector('body[data-view="empty"]');
        await page.evaluate((t) => { (window as unknown as { __runText: string }).__runText = t; }, text);
        const cdp = await context.newCDPSession(page);
        await cdp.send('HeapProfiler.collectGarbage');
        const first = await page.evaluate(() => {
          const w = window as unknown as { __runText: string };
          const t0 = performance.now();
          const run = JSON.parse(w.__runText) as unknown; // what structured-cloning the host's message costs, roughly
          const t1 = performance.now();
          w.__runText = '';
          window.dispatchEvent(new MessageEvent('message', { data: { type: 'showRun', run } }));
          const t2 = performance.now(); // the table and the timeline are drawn synchronously
          return { parseMs: t1 - t0, firstDrawMs: t2 - t1, startedAt: t1 };
        });
        const fullMs = await page.evaluate(async () => {
          while (!document.body.dataset.rendered) await new Promise((r) => setTimeout(r, 5));
          return Number(document.body.dataset.rendered);
        });
        await cdp.send('HeapProfiler.collectGarbage');
        const heap = await cdp.send('Runtime.getHeapUsage') as { usedSize: number };
        // (no named functions inside: tsx would wrap them in a helper the page does not have)
        const zoom = await page.evaluate(async () => {
          const c = document.querySelector<HTMLCanvasElement>('.block.timeline canvas')!;
          const r = c.getBoundingClientRect();
          const draws: number[] = [];
          const frames: number[] = [];
          for (let i = 0; i < 12; i++) {
            const before = Number(c.dataset.frames);
            const t0 = performance.now();
            // in then out again: every step stays near the full view, the most work per frame
            c.dispatchEvent(new WheelEvent('wheel', { deltaY: i % 2 ? 200 : -200, clientX: r.left + r.width / 2, clientY: r.top + r.height / 2, bubbles: true, cancelable: true }));
            while (Number(c.dataset.frames) === before) await new Promise((res) => requestAnimationFrame(() => res(undefined)));
            frames.push(performance.now() - t0);
            draws.push(Number(c.dataset.drawMs));
          }
          const inOrder = draws.slice();
          draws.sort((a, b) => a - b);
          frames.sort((a, b) => a - b);
          return { median: draws[draws.length >> 1]!, max: draws[draws.length - 1]!, frame: frames[frames.length >> 1]!, inOrder };
        });
        if (process.env.BENCH_SCREENSHOT) await page.screenshot({ path: `test-artifacts/bench-${chunks}.png` });
        if (problems.length) console.error(`  problems on the page: ${problems.join('; ')}`);
        rows.push({ chunks, requests: run.requests.length, parseMs: first.parseMs, firstDrawMs: first.firstDrawMs, fullMs,
          heapMB: heap.usedSize / 1048576, zoomMinMs: zoom.inOrder.reduce((a, b) => Math.min(a, b), Infinity), zoomMedianMs: zoom.median, zoomMaxMs: zoom.max, zoomFrameMs: zoom.frame });
        console.error(`  ${chunks} chunks: zoom draws in order (ms): ${zoom.inOrder.map((d) => d.toFixed(1)).join(' ')}`);
      } finally {
        await context.close();
      }
    }
  } finally {
    await browser.close();
    await server.close();
  }
  const f = (n: number) => n.toFixed(1).padStart(9);
  console.log('\nreport webview, headless Chromium (software rendering), 1280×900');
  console.log('   chunks  requests  JSON.parse  first draw  all charts   JS heap  zoom draw min/p50/max          wheel→frame p50');
  for (const r of rows) {
    console.log(`${String(r.chunks).padStart(9)} ${String(r.requests).padStart(9)} ${f(r.parseMs)} ms${f(r.firstDrawMs)} ms${f(r.fullMs)} ms${f(r.heapMB)} MB  ${r.zoomMinMs.toFixed(1)} / ${r.zoomMedianMs.toFixed(1)} / ${r.zoomMaxMs.toFixed(1)} ms ${f(r.zoomFrameMs)} ms`);
  }
  const big = rows.find((r) => r.chunks >= 900_000);
  if (big) {
    console.log(`\ntargets (1M chunks): first draw ${big.firstDrawMs.toFixed(0)} ms (≤ 300: ${big.firstDrawMs <= 300 ? 'met' : 'MISSED'}), ` +
      `zoom frame ${big.zoomMedianMs.toFixed(1)} ms median (≤ 16: ${big.zoomMedianMs <= 16 ? 'met' : 'MISSED'}), ${big.zoomMaxMs.toFixed(1)} ms worst (≤ 33: ${big.zoomMaxMs <= 33 ? 'met' : 'missed'})`);
    console.log(`(JS heap: the V8 heap after a GC; the typed arrays' buffers are outside it. Load average now: ${loadavg().map((l) => l.toFixed(1)).join(' ')} on ${cpus().length} cores: a busy machine spreads the frame times.)`);
  }
}

main().catch((e) => { console.error(e); process.exitCode = 1; });
