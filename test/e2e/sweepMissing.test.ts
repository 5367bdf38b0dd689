// A sweep's report in Chromium with the real bundle and the host's CSP (test/support/reportHarness.ts),
// for issue 32: a sweep that stopped early (2 of the 4 points asked) says so in its first line; the
// verdict about a missing SLO names VS Code's setting, not the CLI's flag; the headline tiles say they
// pool every point; each dot's label is drawn whole inside its chart (the rightmost point's "2 · max
// throughput" used to run past the canvas's edge, "2 · m"). Needs `npm run build`
// (dist/webview/report.js). Screenshots go to test-artifacts/.
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { analyzeSweep } from '../../src/engine/analysis/fit';
import type { RunFile } from '../../src/engine/core/types';
import { fixtureSweepRun, summarizeFixture } from '../support/fixtureRuns';
import { openReport, rendered, reportSession } from '../support/reportHarness';

const artifacts = join(__dirname, '..', '..', 'test-artifacts');
const session = reportSession();
before(() => mkdirSync(artifacts, { recursive: true }));

/**
 * The fixture's concurrency sweep stopped after its second point of four, with no SLO; the second
 * point's throughput a round 600 tokens/s, so that the x axis ends at it (its dot on the chart's right edge).
 */
function stoppedSweep(): RunFile {
  const full = fixtureSweepRun(41);
  const points = full.sweep!.points.slice(0, 2).map((p, i) => ({ ...p, summary: { ...p.summary, outputTokensPerSecond: i === 0 ? 350 : 600 } }));
  const kept = new Set(points.flatMap((p) => p.requestIndexes));
  const requests = full.requests.filter((r) => kept.has(r.index));
  const workload = { ...full.workload, slo: undefined };
  const analysis = analyzeSweep('concurrency', points, undefined);
  return {
    ...full,
    workload,
    requests,
    summary: summarizeFixture(requests, workload),
    sweep: { dimension: 'concurrency', points, ...analysis, stoppedEarly: { afterLabel: points[1]!.label, reason: 'throughput rose 1% while e2e p50 rose 90%', asked: 4 } },
  };
}

/** Records every text the page's canvases draw, with where and how wide, from now on. */
async function recordCanvasText(page: Page): Promise<void> {
  await page.evaluate(() => {
    const w = window as unknown as { __texts: { text: string; left: number; right: number; canvas: number; canvasWidth: number }[] };
    w.__texts = [];
    const original = CanvasRenderingContext2D.prototype.fillText;
    CanvasRenderingContext2D.prototype.fillText = function (this: CanvasRenderingContext2D, text: string, x: number, y: number, maxWidth?: number) {
      // where the text lands in CSS pixels: the context's transform (chart.js scales by the pixel ratio) and its alignment
      const width = this.measureText(text).width;
      const m = this.getTransform();
      const scale = m.a || 1;
      const px = m.e / scale + x;
      const left = this.textAlign === 'right' || this.textAlign === 'end' ? px - width : this.textAlign === 'center' ? px - width / 2 : px;
      const canvases = Array.from(document.querySelectorAll('canvas'));
      w.__texts.push({ text, left, right: left + width, canvas: canvases.indexOf(this.canvas), canvasWidth: this.canvas.clientWidth });
      return maxWidth === undefined ? original.call(this, text, x, y) : original.call(this, text, x, y, maxWidth);
    };
  });
}

test('a sweep stopped early: why first, VS Code\'s words for the SLO, the tiles pooled said, every dot label whole', { timeout: 120_000 }, async () => {
  const run = stoppedSweep();
  const { context, page, problems } = await openReport(session.browser, session.server.page({ kind: 'run', run }), { width: 900 });
  try {
    await rendered(page);
    await page.waitForSelector('.sweep-facts li');
    const facts = await page.$$eval('.sweep-facts li', (li) => li.map((l) => [l.className, l.textContent ?? '']));
    assert.equal(facts[0]![0], 'sweep-stopped', `the first fact: ${JSON.stringify(facts)}`);
    assert.equal(facts[0]![1], 'Stopped early after concurrency 2 (2 of the 4 points asked): throughput rose 1% while e2e p50 rose 90%.');
    const noSlo = facts.find(([cls]) => cls!.includes('sweep-verdict-no-slo'))![1]!;
    assert.match(noSlo, /set llmProfiler\.slo in the settings/);
    const text = await page.textContent('body') ?? '';
    assert.doesNotMatch(text, /--slo/, 'no CLI flag in VS Code');
    assert.equal(await page.textContent('.headline .headline-note'),
      `All 2 points pooled (concurrency 1 to concurrency 2, ${run.requests.length} requests): each point's own figures are in the sweep view.`);

    // the dots' labels, drawn again at another width (chart.js redraws on resize)
    await recordCanvasText(page);
    await page.setViewportSize({ width: 760, height: 900 });
    const labels = async () => (await page.evaluate(() => (window as unknown as { __texts: { text: string; left: number; right: number; canvasWidth: number }[] }).__texts))
      .filter((t) => / · /.test(t.text) || /^\d+$/.test(t.text));
    await page.waitForFunction(() => ((window as unknown as { __texts?: { text: string }[] }).__texts ?? []).some((t) => t.text.includes('max throughput')), undefined, { timeout: 15_000 });
    const drawn = await labels();
    const marked = drawn.filter((t) => t.text.includes('max throughput'));
    assert.ok(marked.length > 0, `the max-throughput point is labelled: ${JSON.stringify(drawn.map((t) => t.text))}`);
    for (const t of drawn) {
      assert.ok(t.left >= 0 && t.right <= t.canvasWidth + 0.5, `"${t.text}" drawn from ${t.left.toFixed(1)} to ${t.right.toFixed(1)} px on a ${t.canvasWidth} px canvas`);
    }
    await page.locator('.block.sweep').screenshot({ path: join(artifacts, 'sweep-stopped-early.png') });
    await page.locator('.headline').screenshot({ path: join(artifacts, 'sweep-tiles-pooled.png') });
    assert.deepEqual(problems, []);
  } finally {
    await context.close();
  }
});
