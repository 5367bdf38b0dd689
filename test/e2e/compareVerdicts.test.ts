// The report's Compare in headless Chromium: per figure the verdict in words (the engine's comparison,
// worded by src/present/compareText.ts as the CLI words it) and its 95% interval drawn as a whisker on
// one % axis, coloured by the verdict; what makes two runs hard to compare said first, once each; and
// the bootstrap of two 10,000-request runs worked out on the report's worker, the page responsive.
// Needs `npm run build` (dist/webview/report.js, with the comparison worker inside it).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { compareRuns } from '../../src/engine/analysis/compare';
import type { RequestRecord, RunFile } from '../../src/engine/core/types';
import { rowSentence } from '../../src/present/compareText';
import { fixtureRun, fixtureWhereRun, summarizeFixture } from '../support/fixtureRuns';
import { openReport, reportSession, rendered, THEMES } from '../support/reportHarness';

const session = reportSession();

/** The run as if every request decoded `factor` times slower: each gap between chunks stretched, TTFT unchanged. */
function slowerDecode(run: RunFile, factor: number, id: string): RunFile {
  const requests = run.requests.map((r): RequestRecord => {
    const c = r.chunkTimesMs;
    if (c.length < 2) return r;
    const chunkTimesMs = c.map((t) => Math.round((c[0]! + (t - c[0]!) * factor) * 1000) / 1000);
    const last = chunkTimesMs[chunkTimesMs.length - 1]!;
    const e2eMs = r.error ? last + 0.4 : last;
    return { ...r, chunkTimesMs, e2eMs, lastByteMs: last + 0.4, tpotMs: r.ttftMs !== undefined && r.outputTokens > 1 ? (e2eMs - r.ttftMs) / (r.outputTokens - 1) : undefined };
  });
  return { ...run, id, requests, summary: summarizeFixture(requests, run.workload) };
}

async function verdictsDone(page: Page): Promise<void> {
  await page.waitForSelector('body[data-comparison="done"]', { timeout: 60_000 });
}

interface DrawnRow { key: string; verdict: string; sentence: string; whisker?: { cls: string; zeroX: number; lo: number; hi: number; point: number; stroke: string } }

function drawnRows(page: Page): Promise<DrawnRow[]> {
  // no named functions inside: the page gets this as text, without the helpers tsx adds for names
  return page.$$eval('table.compare-verdicts tbody tr', (trs) => trs.map((tr) => {
    const t = tr as HTMLElement;
    const svg = t.querySelector('svg.whisker');
    if (!svg) return { key: t.dataset.key!, verdict: t.dataset.verdict!, sentence: t.querySelector('td.sentence')!.textContent! };
    const caps = Array.from(svg.querySelectorAll('line.cap')).map((c) => (c as SVGLineElement).x1.baseVal.value);
    return {
      key: t.dataset.key!, verdict: t.dataset.verdict!, sentence: t.querySelector('td.sentence')!.textContent!,
      whisker: {
        cls: svg.getAttribute('class')!, zeroX: (svg.querySelector('line.zero') as SVGLineElement).x1.baseVal.value, lo: caps[0]!, hi: caps[1]!,
        point: (svg.querySelector('circle.point') as SVGCircleElement).cx.baseVal.value, stroke: getComputedStyle(svg.querySelector('line.ci')!).stroke,
      },
    };
  }));
}

/** "#f14c4c" → "rgb(241, 76, 76)", as getComputedStyle gives a colour. */
function rgb(hex: string): string {
  return `rgb(${parseInt(hex.slice(1, 3), 16)}, ${parseInt(hex.slice(3, 5), 16)}, ${parseInt(hex.slice(5, 7), 16)})`;
}

test('A/B: B decodes 30% slower; TPOT says slower in words first, its whisker red and right of 0; the words are the engine\'s, as the CLI says them', async () => {
  const a = fixtureRun({ seed: 61, requests: 200, id: 'ab-a' });
  const b = slowerDecode(fixtureRun({ seed: 62, requests: 200 }), 1.3, 'ab-b');
  const expected = compareRuns(a, b);
  const { context, page, problems } = await openReport(session.browser, session.server.page({ kind: 'run', run: a, compareWith: b }));
  try {
    await rendered(page);
    await verdictsDone(page);
    assert.equal(await page.getAttribute('body', 'data-compare-where'), 'worker', 'worked out on the report\'s worker');
    const rows = await drawnRows(page);
    // every row of the engine's comparison, in its order, each worded by rowSentence: the same seed and resamples give the same numbers
    assert.deepEqual(rows.map((r) => [r.key, r.verdict, r.sentence]), expected.rows.map((r) => [r.key, r.verdict, rowSentence(r)]));
    const tpot = rows.find((r) => r.key === 'tpot.p50')!;
    assert.match(tpot.sentence, /^TPOT p50 (2\d|3\d)\.\d% slower, 95% CI \d+\.\d–\d+\.\d%$/);
    assert.ok(tpot.whisker, 'drawn');
    assert.match(tpot.whisker.cls, /\bverdict-slower\b/);
    assert.ok(tpot.whisker.lo > tpot.whisker.zeroX && tpot.whisker.point > tpot.whisker.lo && tpot.whisker.hi > tpot.whisker.point, `the interval right of 0, around its point: ${JSON.stringify(tpot.whisker)}`);
    assert.equal(tpot.whisker.stroke, rgb(THEMES.dark.vars['--vscode-charts-red']!), 'slower in the theme\'s red');
    // TTFT did not change (the same distribution): no difference, grey, its interval across 0
    const ttft = rows.find((r) => r.key === 'ttft.p50')!;
    assert.equal(ttft.verdict, 'no-difference');
    assert.match(ttft.whisker!.cls, /\bverdict-no-difference\b/);
    assert.ok(ttft.whisker!.lo < ttft.whisker!.zeroX && ttft.whisker!.hi > ttft.whisker!.zeroX);
    assert.equal(ttft.whisker!.stroke, rgb(THEMES.dark.vars['--vscode-descriptionForeground']!));
    // one axis for all: the same zero everywhere, a tick labelled 0
    assert.equal(new Set(rows.filter((r) => r.whisker).map((r) => r.whisker!.zeroX)).size, 1);
    assert.ok(await page.$$eval('.whisker-axis text.zero', (t) => t.map((x) => x.textContent)).then((t) => t.includes('0')));
    // the drawing's text alternative is its sentence
    assert.equal(await page.getAttribute('tr[data-key="tpot.p50"] svg.whisker', 'aria-labelledby'), 'verdict-tpot-p50');
    assert.match(await page.textContent('.compare-status') ?? '', /^B against A, \d+ figures: \d+ slower/);
    // A can be pinned as the baseline from here (the host runs LLM Profiler: Pin as baseline)
    await page.getByRole('button', { name: 'Pin as baseline of A' }).click();
    const posted = await page.evaluate(() => (window as unknown as { __posted: { type: string }[] }).__posted.filter((m) => m.type === 'pinBaseline'));
    assert.deepEqual(posted, [{ type: 'pinBaseline', runId: 'ab-a' }]);
    assert.deepEqual(problems, []);
  } finally {
    await context.close();
  }
});

test('A/A: two runs of the same thing; TPOT p50 says no difference we can detect, with the change these samples could detect, grey across 0', async () => {
  const a = fixtureRun({ seed: 63, requests: 200, id: 'aa-a' });
  const b = fixtureRun({ seed: 64, requests: 200, id: 'aa-b' });
  const { context, page, problems } = await openReport(session.browser, session.server.page({ kind: 'run', run: a, compareWith: b }));
  try {
    await verdictsDone(page);
    const rows = await drawnRows(page);
    for (const key of ['ttft.p50', 'tpot.p50', 'e2e.p50']) {
      const r = rows.find((x) => x.key === key)!;
      assert.equal(r.verdict, 'no-difference', `${key}: ${r.sentence}`);
      assert.match(r.sentence, /: no difference we can detect \(95% CI −\d+\.\d% to \+\d+\.\d%; these samples detect changes of \d+\.\d% or more\)$/);
      assert.match(r.whisker!.cls, /\bverdict-no-difference\b/);
      assert.ok(r.whisker!.lo < r.whisker!.zeroX && r.whisker!.zeroX < r.whisker!.hi, `${key} across 0`);
    }
    // p99 of 200 requests is judged (5 beyond it a side); nothing red where nothing changed
    assert.deepEqual(rows.filter((r) => r.verdict === 'slower' && /p50|mean/.test(r.key)).map((r) => r.sentence), []);
    assert.deepEqual(problems, []);
  } finally {
    await context.close();
  }
});

test('what makes two runs hard to compare is said first, in one list, each thing once: the engine\'s refusal, the report\'s cache and buffering caveats', async () => {
  const warm = fixtureWhereRun({ seed: 46, requests: 30, prefixCache: 'warm', id: 'warm-run' });
  const cold = fixtureWhereRun({ seed: 47, requests: 30, id: 'cold-run', buffered: true, concurrency: 8 });
  const { context, page, problems } = await openReport(session.browser, session.server.page({ kind: 'run', run: warm, compareWith: cold }));
  try {
    await rendered(page);
    assert.equal(await page.$$eval('ul.compare-caveats', (l) => l.length), 1, 'one list');
    const items = await page.$$eval('ul.compare-caveats li', (li) => li.map((l) => ({ kind: (l as HTMLElement).dataset.caveat, severity: (l as HTMLElement).dataset.severity, text: l.textContent })));
    assert.equal(items[0]!.severity, 'refuse', 'a refusal first');
    assert.equal(items[0]!.text, 'Not the same workload: the load differs: BASE concurrency 4, NEW concurrency 8');
    const kinds = items.map((i) => i.kind);
    assert.ok(kinds.includes('prefix-cache') && kinds.includes('buffering'), kinds.join());
    assert.ok(!kinds.includes('cache'), 'the engine\'s cache note is the report\'s prefix-cache caveat: said once');
    assert.equal(kinds.filter((k) => k === 'buffering').length, 1, 'buffering said once');
    assert.equal(new Set(items.map((i) => i.text)).size, items.length);
    // before the verdicts, and said before they are worked out
    assert.ok(await page.$eval('ul.compare-caveats', (l) => Boolean(l.compareDocumentPosition(document.querySelector('.compare-status')!) & Node.DOCUMENT_POSITION_FOLLOWING)));
    await verdictsDone(page);
    assert.deepEqual(problems, []);
  } finally {
    await context.close();
  }
});

test('two runs of 10,000 requests: the bootstrap runs on the report\'s worker while the page stays responsive', async () => {
  const a = fixtureRun({ seed: 65, requests: 10_000, concurrency: 32, id: 'big-a' });
  const b = slowerDecode(fixtureRun({ seed: 66, requests: 10_000, concurrency: 32 }), 1.05, 'big-b');
  const { context, page, problems } = await openReport(session.browser, session.server.page({ kind: 'run', run: a, compareWith: b }));
  try {
    await rendered(page);
    // once the report's first frame is painted (two timelines and the CDFs of 640,000 gaps: a few hundred ms
    // after it is drawn), the longest the page's thread was held until the verdicts came
    await page.evaluate(() => new Promise((resolve) => { requestAnimationFrame(() => setTimeout(resolve, 0)); }));
    assert.equal(await page.getAttribute('body', 'data-comparison'), 'pending', 'still working: the measure below is of the time it works');
    const held = await page.evaluate(() => new Promise<{ maxGapMs: number; waitedMs: number; comparisonMs: number }>((resolve) => {
      let last = performance.now();
      let maxGapMs = 0;
      const t0 = last;
      const tick = setInterval(() => {
        const now = performance.now();
        maxGapMs = Math.max(maxGapMs, now - last);
        last = now;
        if (document.body.dataset.comparison === 'done' || document.body.dataset.comparison === 'error') {
          clearInterval(tick);
          resolve({ maxGapMs, waitedMs: now - t0, comparisonMs: Number(document.body.dataset.comparisonMs) });
        }
      }, 10);
    }));
    console.log(`10,000 + 10,000 requests: verdicts in ${held.comparisonMs.toFixed(0)} ms from the start of the compare view, ${held.waitedMs.toFixed(0)} ms after it was drawn; the page's thread held at most ${held.maxGapMs.toFixed(0)} ms meanwhile`);
    assert.equal(await page.getAttribute('body', 'data-comparison'), 'done');
    assert.equal(await page.getAttribute('body', 'data-compare-where'), 'worker');
    // over more than the 200 ms allowed below: a bootstrap on the page's thread would hold it that long at once
    // (the engine's time blocks made it fast enough that 500 ms, the first bound, was not always left after the draw)
    assert.ok(held.waitedMs > 250, `measured over ${held.waitedMs.toFixed(0)} ms of the bootstrap`);
    assert.ok(held.maxGapMs < 200, `the page was held ${held.maxGapMs.toFixed(0)} ms while the intervals were worked out`);
    // and the 5% slower decode is found in 10,000 requests
    assert.equal(await page.getAttribute('tr[data-key="tpot.p50"]', 'data-verdict'), 'slower');
    assert.deepEqual(problems, []);
  } finally {
    await context.close();
  }
});
