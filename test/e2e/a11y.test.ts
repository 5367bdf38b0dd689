// axe-core over the report webview in every view it has (one run with stalls, SLOs, errors, "Sent
// with" and "Where the time went"; a compare with its verdicts and whiskers; a sweep; the prefill dial; a prefix-cache check; the
// error view; a live run mid-way), in the light, dark and high-contrast themes, at a normal width and
// a narrow one (420 px, an editor split in two): no serious or critical violation, and nothing wider
// than the page (a wide table scrolls in its own region). Needs
// `npm run build` (dist/webview/report.js).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { analyzeSweep } from '../../src/engine/analysis/fit';
import type { PrefillDialConfig, RunFile } from '../../src/engine/core/types';
import { axeViolations, describeViolations, type AxeViolation } from '../support/axe';
import { fixtureRun, fixtureSweepRun, fixtureWhereRun } from '../support/fixtureRuns';
import { openReport, reportSession, rendered, sendToPage, THEMES, type ThemeName } from '../support/reportHarness';
import type { ReportInitialState } from '../../src/extension/webviewHtml';

const session = reportSession();

/** The run view with everything it can show: stalls with their causes, SLOs (one missed), errors, "Sent with", server timings and /metrics. */
function fullRun(): RunFile {
  const run = fixtureWhereRun({ seed: 41, requests: 40, errorRate: 0.08 });
  return {
    ...run,
    prompts: [{ source: 'answer.prompt.yml', name: 'answer', sent: { maxTokens: 256, temperature: 0.5 }, from: { maxTokens: 'file', temperature: 'workload' } }],
    requests: run.requests.map((r) => ({ ...r, promptRef: 0 })),
  };
}

/** A concurrency sweep with its analysis: knee, operating point, verdicts, flags in the header. */
function analysedSweep(): RunFile {
  const run = fixtureSweepRun(31);
  const slo = { tpotMs: 25, ttftMs: 400 };
  const a = analyzeSweep('concurrency', run.sweep!.points, slo);
  return { ...run, sweep: { ...run.sweep!, ...a, slo } };
}

function dialRun(): RunFile {
  const base = fixtureSweepRun(33);
  const pts = base.sweep!.points;
  const config = (b: number, i: number): PrefillDialConfig => ({
    batchSize: b, label: `batch ${b}`,
    decode: { summary: pts[i]!.summary, requestIndexes: pts[i]!.requestIndexes },
    long: { summary: pts[i + 1]!.summary, requestIndexes: pts[i + 1]!.requestIndexes },
  });
  const { sweep: _s, ...rest } = base;
  return { ...rest, id: 'fixture-dial', prefillDial: { configs: [config(32, 0), config(512, 2)], decodeStreams: 3, shortPromptTokens: 16, shortMaxTokens: 48, longPromptTokens: 1024, longMaxTokens: 4, longRate: 0.5, durationS: 10 } };
}

function cacheCheckRun(): RunFile {
  return { ...fixtureRun({ seed: 5, requests: 9 }), prefixCache: { coldTtftMs: 44.2, warmTtftMs: 6.9, variantTtftMs: 8.1, cachedTokens: 1023, hit: true, rounds: 3,
    message: 'The server caches prompt prefixes: a repeated prompt starts in 16 % of the time a new one takes.' } };
}

interface View {
  readonly name: string;
  /** Opens the view in the page and waits until it is drawn. */
  readonly show: (open: (state: ReportInitialState) => Promise<Page>) => Promise<Page>;
}

const runView = (name: string, make: () => RunFile, compare?: () => RunFile): View => ({
  name,
  show: async (open) => {
    const page = await open(compare ? { kind: 'run', run: make(), compareWith: compare() } : { kind: 'run', run: make() });
    await rendered(page);
    // a compare's verdicts and their whiskers come from its worker a moment later: checked with them
    if (compare) await page.waitForSelector('body[data-comparison="done"]', { timeout: 30_000 });
    return page;
  },
});

const VIEWS: readonly View[] = [
  runView('run', fullRun),
  runView('compare', () => fixtureWhereRun({ seed: 46, requests: 30, prefixCache: 'warm', id: 'warm-run' }), () => fixtureWhereRun({ seed: 47, requests: 30, id: 'cold-run', buffered: true })),
  runView('sweep', analysedSweep),
  runView('prefill dial', dialRun),
  runView('prefix-cache check', cacheCheckRun),
  {
    name: 'error',
    show: async (open) => {
      const page = await open({ kind: 'error', message: 'The run file is cut short (unexpected end of JSON).', path: '/tmp/runs/cut.json' });
      await page.waitForSelector('.error-view');
      return page;
    },
  },
  {
    name: 'live',
    show: async (open) => {
      const run = fixtureRun({ seed: 14, requests: 30, warmup: 0 });
      const page = await open({ kind: 'loading' });
      await page.waitForSelector('body[data-view="empty"]');
      await sendToPage(page, { type: 'liveStart', runId: run.id, run: { ...run, requests: [] } });
      await page.waitForSelector('body[data-view="live"]');
      const half = run.requests.slice(0, 15);
      await sendToPage(page, { type: 'liveUpdate', runId: run.id, records: half,
        progress: { runId: run.id, succeeded: 15, failed: 0, finished: 15, total: 30, inFlight: 4, elapsedS: 5, ttftP50Ms: 180, outputTokensPerSecond: 120 } });
      await page.waitForFunction(() => document.body.dataset.liveRecords === '15');
      return page;
    },
  },
];

const THEME_NAMES = Object.keys(THEMES) as ThemeName[];
const WIDTHS = [1100, 420] as const;

/** Runs `fn` on every item, `n` at a time; the results in the items' order. */
async function eachAtMost<T, R>(items: readonly T[], n: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < items.length; i = next++) results[i] = await fn(items[i]!);
  };
  await Promise.all(Array.from({ length: Math.min(n, items.length) }, worker));
  return results;
}

/** One theme and width of a view, in its own browser context: what axe found, and the page's own problems. */
async function checkView(view: View, theme: ThemeName, width: number): Promise<{ found: string[]; problems: string[] }> {
  const found: string[] = [];
  let context: Awaited<ReturnType<typeof openReport>>['context'] | undefined;
  let seen: readonly string[] = [];
  try {
    const page = await view.show(async (state) => {
      const opened = await openReport(session.browser, session.server.page(state), { theme, width });
      context = opened.context;
      seen = opened.problems;
      return opened.page;
    });
    // nothing runs off the side of the page: wide tables scroll in their own region
    const [scrollW, innerW] = await page.evaluate(() => [document.documentElement.scrollWidth, window.innerWidth]);
    if (scrollW! > innerW!) found.push(`${theme} @ ${width}px: the page scrolls sideways (${scrollW} px wide)`);
    const vs: AxeViolation[] = await axeViolations(page);
    const nodes = vs.reduce((a, v) => a + v.nodes.length, 0);
    if (vs.length) found.push(`${theme} @ ${width}px (${nodes} node(s)):\n  ${describeViolations(vs, 100)}`);
    return { found, problems: seen.map((p) => `${theme} @ ${width}px: ${p}`) };
  } finally {
    await context?.close();
  }
}

// Each theme and width is a page of its own: two are checked at once (Chromium's renderer and the
// page's script take turns with axe on the other), in the same order of results.
const CASES = THEME_NAMES.flatMap((theme) => WIDTHS.map((width) => [theme, width] as const));

for (const view of VIEWS) {
  test(`axe: the ${view.name} view has no serious or critical violation in any theme, wide or narrow`, { timeout: 180_000 }, async () => {
    const results = await eachAtMost(CASES, 2, ([theme, width]) => checkView(view, theme, width));
    const found = results.flatMap((r) => r.found);
    const problems = results.flatMap((r) => r.problems);
    assert.equal(found.length, 0, `axe violations in the ${view.name} view:\n${found.join('\n')}`);
    assert.deepEqual(problems, [], 'no console error, page error or CSP violation');
  });
}
