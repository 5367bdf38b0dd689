// No number on the report contradicts another, and each word keeps one meaning (issue 32 §1), in
// Chromium over the real bundle: the fixture runs (test/support/fixtureRuns.ts) summarized by the
// engine itself (its verdicts, its stalls' causes), read together: the verdicts' shares of TTFT p99
// add up and use the legend's words; the legend, the bars and the text name each part as
// src/engine/analysis/phases.ts PHASE_WORDS does; the stall time says it is summed over streams; the
// tiles all have tooltips and no tooltip shows a float's noise; stalls whose cause is not shown are
// grey, not orange; ITL's tiny median is explained on its tile; the header says the prompt tokens
// the server counted beside those asked; the tab's title, the run list and the header say the start
// time in one form, in the host's locale and zone, though the browser has others. Screenshots in test-artifacts/. Needs `npm run build`.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { analyzeTiming, annotateRequests } from '../../src/engine/analysis/attribution';
import { summarize } from '../../src/engine/analysis/metrics';
import { PHASE_WORDS, type PhaseKind } from '../../src/engine/analysis/phases';
import type { RequestRecord, RunFile, WorkloadSpec } from '../../src/engine/core/types';
import { indexEntry } from '../../src/extension/runStore';
import { runName } from '../../src/present/runText';
import { formatMs } from '../../src/present/units';
import type { SidebarState, SurfaceClock } from '../../src/shared/protocol';
import { TRAFFIC_DEFAULTS } from '../../src/jobs/presets';
import { fixtureRun, fixtureWhereRun } from '../support/fixtureRuns';
import { openReport, rendered, reportSession, THEMES } from '../support/reportHarness';
import { openSidebar, startSidebarServer, type SidebarServer } from '../support/sidebarHarness';

const artifacts = join(__dirname, '..', '..', 'test-artifacts');
// the extension host's locale and zone (src/extension/clock.ts), which it names tabs and runs in and
// hands to its pages; the browser's own are others (code-server, Remote), and must not show
const HOST: SurfaceClock = { locale: 'en-GB', timeZone: 'Asia/Kolkata' };
const BROWSER = { locale: 'en-US', timezoneId: 'America/Los_Angeles' } as const;
const session = reportSession(HOST);
let sidebar: SidebarServer;

before(async () => {
  mkdirSync(artifacts, { recursive: true });
  sidebar = await startSidebarServer(HOST);
});
after(() => sidebar?.close());

/** The run as the engine writes it: its stalls judged and the summary (verdicts included) computed by the engine, not the fixture. */
function engineRun(run: RunFile, requests: readonly RequestRecord[] = run.requests, workload: WorkloadSpec = run.workload): RunFile {
  const analysis = analyzeTiming(requests, workload);
  const annotated = annotateRequests(requests, analysis);
  return { ...run, workload, requests: annotated, summary: summarize(annotated, workload, { durationS: run.summary.durationS, analysis }) };
}

/** "#cca700" as getComputedStyle says it: "rgb(204, 167, 0)". */
const rgbOf = (hex: string): string => `rgb(${[1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16)).join(', ')})`;

/** A llama.cpp server's view: its prompt time and TTFT, no queue (what the run had). */
function llamaStyle(r: RequestRecord): RequestRecord {
  const st = r.serverTimings;
  if (!st?.promptMs) return r;
  return { ...r, serverTimings: { source: 'llamacpp', promptMs: st.promptMs, serverTtftMs: st.promptMs }, transportMs: r.ttftMs! - st.promptMs };
}

/**
 * The contradiction: the slowest request almost all prefill, the next mostly waiting. Shares
 * of "TTFT p99" taken from each part's own p99 (other requests) came to 91 % prefill and 44 % waiting.
 */
function tailSplit(requests: readonly RequestRecord[]): RequestRecord[] {
  const order = requests.filter((r) => !r.warmup && r.ttftMs !== undefined && r.serverTimings?.promptMs !== undefined).sort((a, b) => b.ttftMs! - a.ttftMs!);
  const share = new Map([[order[0]!.index, 0.91], [order[1]!.index, 0.3]]);
  return requests.map((r) => {
    const s = share.get(r.index);
    if (s === undefined) return r;
    const promptMs = r.ttftMs! * s;
    return { ...r, serverTimings: { source: 'llamacpp', promptMs, serverTtftMs: promptMs }, transportMs: r.ttftMs! - promptMs };
  });
}

/** A run where the server reported nothing: the client's clock alone. */
function clientOnly(r: RequestRecord): RequestRecord {
  const { serverTimings: _s, transportMs: _t, ...rest } = r;
  return rest;
}

interface Read {
  readonly legend: { kind: string; text: string; title: string }[];
  readonly barLabels: string[];
  readonly evidence: string;
  readonly verdicts: string[];
  readonly tiles: { id: string; label: string; value: string; note: string; title: string; bad: boolean }[];
  readonly titles: string[];
  readonly timing: string[];
}

async function readReport(page: Page): Promise<Read> {
  return page.evaluate(() => ({
    legend: Array.from(document.querySelectorAll<HTMLElement>('.where-plot .legend li[data-kind]')).map((li) => ({ kind: li.dataset.kind!, text: li.textContent ?? '', title: li.title })),
    barLabels: Array.from(document.querySelectorAll('.where-bar')).map((b) => b.getAttribute('aria-label') ?? ''),
    evidence: document.querySelector('.where-evidence')?.textContent ?? '',
    verdicts: Array.from(document.querySelectorAll('ol.verdicts li')).map((li) => li.textContent ?? ''),
    tiles: Array.from(document.querySelectorAll<HTMLElement>('.headline .figure')).map((f) => ({
      id: f.dataset.figure!, label: f.querySelector('.label')?.textContent ?? '', value: f.querySelector('.value')?.textContent ?? '',
      note: f.querySelector('.note')?.textContent ?? '', title: f.title, bad: f.classList.contains('bad'),
    })),
    titles: Array.from(document.querySelectorAll<HTMLElement>('[title]')).map((e) => e.title),
    timing: Array.from(document.querySelectorAll('.where-timing tbody th')).map((th) => th.textContent ?? ''),
  }));
}

const KINDS = Object.keys(PHASE_WORDS) as PhaseKind[];
const SHORT_TO_KIND = new Map(KINDS.map((k) => [PHASE_WORDS[k].short, k] as const));

/** Every claim the issue found contradicted, checked on one read of a report. */
function checkAgree(r: Read, run: RunFile, label: string): void {
  // the legend: each part by its one label, its meaning in the tooltip
  assert.ok(r.legend.length >= 2, `${label}: a legend`);
  for (const li of r.legend) {
    const k = li.kind as PhaseKind;
    assert.equal(li.text, PHASE_WORDS[k].label, `${label}: legend of ${k}`);
    assert.equal(li.title, PHASE_WORDS[k].means, `${label}: legend tooltip of ${k}`);
  }
  const shown = new Set(r.legend.map((l) => l.kind as PhaseKind));
  // the bars' text names only the parts of the legend, by the legend's labels
  for (const b of r.barLabels) {
    for (const k of KINDS) if (b.includes(`${PHASE_WORDS[k].label} `) && k !== 'decode') assert.ok(shown.has(k), `${label}: bar names ${k} the legend lacks: ${b}`);
  }
  // the section's text defines the words of the parts it shows, as the legend's tooltips do
  for (const k of shown) if (k !== 'decode') assert.ok(r.evidence.includes(PHASE_WORDS[k].means), `${label}: the text defines ${k}: ${r.evidence}`);
  // the verdicts' shares of TTFT p99 are of the same requests: they add up; each names a part of the legend
  // (every share any verdict gives of TTFT p99, whatever its words)
  const total = r.verdicts.filter((v) => v.includes('TTFT p99')).flatMap((v) => [...v.matchAll(/(\d+)%/g)].map((m) => Number(m[1]))).reduce((a, x) => a + x, 0);
  assert.ok(total <= 101, `${label}: the shares of TTFT p99 add up to ${total}%: ${r.verdicts.join(' | ')}`);
  const shares = r.verdicts.flatMap((v) => [...v.matchAll(/(\d+)% of TTFT is ([\w+ ]+?) \(/g)].map((m) => ({ pct: Number(m[1]), word: m[2]! })));
  for (const s of shares) {
    const k = SHORT_TO_KIND.get(s.word);
    assert.ok(k && shown.has(k), `${label}: verdict word "${s.word}" is a part of the legend (${[...shown].join(', ')})`);
    assert.ok(r.verdicts.some((v) => v.includes(`${s.word} (${PHASE_WORDS[k!].means})`)), `${label}: "${s.word}" means what the legend says`);
  }
  // the TTFT p99 a verdict quotes is the tile's
  const p99Tile = r.tiles.find((t) => t.id === 'ttft-p99')!;
  for (const v of r.verdicts) {
    const m = /^At TTFT p99 \(([^;]+);/.exec(v);
    if (m) assert.equal(m[1], p99Tile.value, `${label}: TTFT p99 in "${v}"`);
  }
  // the client-vs-server table names the rest of TTFT as the bars do
  for (const row of r.timing) if (/client − server/.test(row)) assert.ok(/^(transport|wait) /.test(row) && shown.has(row.split(' ')[0] as PhaseKind), `${label}: table row ${row}`);
  // every tile has a tooltip; no tooltip anywhere shows a float's noise
  for (const t of r.tiles) assert.ok(t.title.length > 0, `${label}: tile ${t.id} has a tooltip`);
  for (const t of r.titles) assert.doesNotMatch(t, /\d\.\d{7,}/, `${label}: a raw float in a tooltip: ${t}`);
  // the stall time is a sum over the streams; said so, and where it exceeds the run, said why
  const st = run.summary.stalls;
  const stalls = r.tiles.find((t) => t.id === 'stalls')!;
  if (st.count > 0) {
    assert.match(stalls.note, /summed over [\d,]+ streams|in one stream/, `${label}: ${stalls.note}`);
    if (st.totalMs > run.summary.durationS * 1000) assert.match(stalls.note, /the run took .*streams stalled at the same time/, stalls.note);
    assert.match(stalls.title, /^Stalls: A stall is a gap between two chunks of one stream longer than both/, stalls.title);
    // defined once: the run's own factor and floor, not the catalogue's words beside them
    assert.equal(stalls.title.match(/gaps? between/gi)?.length, 1, stalls.title);
  }
}

test('the engine\'s verdicts, the legend, the bars and the tiles agree: vLLM-style, llama.cpp-style and client-only runs', { timeout: 120_000 }, async () => {
  const base = fixtureWhereRun({ seed: 41, requests: 40, concurrency: 4 });
  const runs: [string, RunFile][] = [
    ['vllm', engineRun(base)],
    ['llamacpp', engineRun({ ...base, id: 'agree-llama' }, base.requests.map(llamaStyle))],
    ['llamacpp-tail', engineRun({ ...base, id: 'agree-llama-tail' }, tailSplit(base.requests.map(llamaStyle)))],
    ['client', engineRun({ ...base, id: 'agree-client' }, base.requests.map(clientOnly))],
  ];
  for (const [label, run] of runs) {
    const { context, page, problems } = await openReport(session.browser, session.server.page({ kind: 'run', run }), BROWSER);
    try {
      await rendered(page);
      await page.waitForSelector('.where-bar');
      const r = await readReport(page);
      checkAgree(r, run, label);
      if (label === 'llamacpp') {
        // the run: a llama.cpp server, whose queue is not reported: "wait", never "queue + prefill"
        assert.ok(r.legend.some((l) => l.kind === 'wait'));
        assert.ok(!r.legend.some((l) => l.kind === 'queuePrefill'));
        assert.ok(!(await page.textContent('.block.where'))!.includes(PHASE_WORDS.queuePrefill.label));
        await (await page.$('.block.where'))!.screenshot({ path: join(artifacts, 'numbers-where-llamacpp.png') });
      }
      if (label === 'llamacpp-tail') {
        // both parts of the slowest request's TTFT, which add up
        assert.ok(r.verdicts.some((v) => /of TTFT is prefill/.test(v)), r.verdicts.join(' | '));
        await (await page.$('ol.verdicts'))!.screenshot({ path: join(artifacts, 'numbers-verdicts-add-up.png') });
      }
      if (label === 'client') assert.deepEqual(r.legend.map((l) => l.kind).sort(), ['decode', 'headers', 'queuePrefill']);
      if (label === 'vllm') await (await page.$('.headline'))!.screenshot({ path: join(artifacts, 'numbers-tiles.png') });
      assert.deepEqual(problems, []);
    } finally {
      await context.close();
    }
  }
});

test('stalls whose cause is not shown are grey, said as what they could be; stalls a prefill caused are orange', async () => {
  // one stream at a time: no request of the run can be prefilling during another's stall
  const alone = fixtureRun({ seed: 5, requests: 12, concurrency: 1, stallEveryMs: 900, stallMs: 300, errorRate: 0 });
  const quiet = engineRun({ ...alone, id: 'stalls-unknown' });
  assert.ok(quiet.summary.stalls.count > 0 && quiet.summary.stalls.byCause?.unknown === quiet.summary.stalls.count, JSON.stringify(quiet.summary.stalls.byCause));
  const caused = engineRun(fixtureWhereRun({ seed: 41, requests: 40, concurrency: 4 }));
  assert.ok((caused.summary.stalls.byCause?.prefill ?? 0) > 0);
  const orange = rgbOf(THEMES.dark.vars['--vscode-charts-orange']!);
  for (const [run, alarm] of [[quiet, false], [caused, true]] as const) {
    const { context, page, problems } = await openReport(session.browser, session.server.page({ kind: 'run', run }));
    try {
      await rendered(page);
      const tile = page.locator('.figure[data-figure="stalls"]');
      assert.equal(await tile.evaluate((e) => e.classList.contains('bad')), alarm);
      const border = await tile.evaluate((e) => getComputedStyle(e).borderLeftColor);
      assert.equal(border === orange, alarm, `border ${border}`);
      if (!alarm) {
        assert.match((await tile.locator('.note').textContent())!, /cause not shown/);
        assert.match((await tile.getAttribute('title'))!, /it could be this machine .*the server's own pauses/);
        // the list says the same in grey, and the verdict says what it could be
        const why = page.locator('.stall.cause-unknown .why').first();
        assert.match((await why.textContent())!, /cause not shown \(no request of this run was prefilling then\)/);
        assert.match((await why.getAttribute('title'))!, /it could be this machine/);
        assert.ok((await page.locator('ol.verdicts li').allTextContents()).some((v) => /cause not shown/.test(v)));
        // the ratio of a stall is explained where it is shown
        assert.match((await page.locator('.stall .ratio').first().getAttribute('title'))!, /its size is said against the larger of the two/);
        assert.match((await page.locator('.block.stalls > .sub').textContent())!, /A stall is a gap between two chunks/);
        await page.locator('.headline').screenshot({ path: join(artifacts, 'numbers-stalls-unknown-grey.png') });
        await page.locator('.block.stalls').screenshot({ path: join(artifacts, 'numbers-stalls-list.png') });
      }
      // the verdict of a gap whose cause is not shown: its own kind, last, grey, never the bold headline
      const verdicts = await page.evaluate(() => Array.from(document.querySelectorAll<HTMLElement>('ol.verdicts li')).map((li) => ({
        kind: li.dataset.kind ?? '', text: li.textContent ?? '', color: getComputedStyle(li).color, weight: getComputedStyle(li).fontWeight })));
      const unknown = verdicts.findIndex((x) => x.kind === 'stalls-unknown');
      assert.ok(alarm || unknown >= 0, JSON.stringify(verdicts));
      if (unknown >= 0) {
        assert.equal(unknown, verdicts.length - 1, `last: ${verdicts.map((x) => x.kind).join(', ')}`);
        assert.match(verdicts[unknown]!.text, /cause not shown/);
        assert.equal(verdicts[unknown]!.weight, '400', 'not bold, even alone');
        assert.equal(verdicts[unknown]!.color, rgbOf(THEMES.dark.vars['--vscode-descriptionForeground']!), 'grey');
        assert.ok(verdicts.slice(0, unknown).every((x) => x.color !== verdicts[unknown]!.color), 'the verdicts with a cause are not grey');
      }
      await page.locator('ol.verdicts').screenshot({ path: join(artifacts, alarm ? 'numbers-verdicts-cause-first.png' : 'numbers-verdict-unknown-grey.png') });
      assert.deepEqual(problems, []);
    } finally {
      await context.close();
    }
  }
});

test('ITL\'s median of a bursty stream is explained on its tile; the percentile table\'s tooltips are the values in full', async () => {
  const base = fixtureRun({ seed: 9, requests: 20, concurrency: 2, stallEveryMs: 0, errorRate: 0 });
  // chunks two to a network read: every other gap 0.02 ms
  const bursty = base.requests.map((r) => ({ ...r, chunkTimesMs: r.chunkTimesMs.map((c, i) => (i % 2 === 1 ? r.chunkTimesMs[i - 1]! + 0.02 : c)) }));
  const run = engineRun({ ...base, id: 'itl-bursts' }, bursty);
  assert.ok(run.summary.itlMs.p50! < 0.1 && run.summary.itlMs.p50! >= 0.01, `ITL p50 ${run.summary.itlMs.p50}`);
  const { context, page, problems } = await openReport(session.browser, session.server.page({ kind: 'run', run }));
  try {
    await rendered(page);
    const itl = page.locator('.figure[data-figure="itl-p99"]');
    assert.match((await itl.locator('.note').textContent())!, /chunks come in bursts/);
    assert.match((await itl.getAttribute('title'))!, new RegExp(`ITL p50 is ${formatMs(run.summary.itlMs.p50).replace('.', '\\.')}: chunks arrive in bursts`));
    assert.match((await page.locator('#pct-caption').textContent())!, /ITL p50 is .*chunks arrive in bursts/);
    const cell = page.locator('#pct-ttftMs td[data-stat="p50"]');
    const raw = Number(await cell.getAttribute('data-value'));
    assert.equal(await cell.getAttribute('title'), `${Number(raw.toPrecision(6)).toLocaleString('en-US', { maximumFractionDigits: 20 })} ms`);
    await page.locator('.headline').screenshot({ path: join(artifacts, 'numbers-itl-bursts.png') });
    assert.deepEqual(problems, []);
  } finally {
    await context.close();
  }
});

test('the header says the prompt tokens the server counted beside those asked; tab, run list and header say the time in one form', async () => {
  const base = fixtureRun({ seed: 3, requests: 10, concurrency: 1, errorRate: 0, startedAt: '2026-12-05T09:14:03.000Z' });
  const counts = [345, 351, 349, 347, 350, 348, 346, 351, 349, 350];
  const workload = { ...base.workload, prompt: { kind: 'synthetic' as const, tokens: 256, sharedPrefix: false } };
  // a run from before sizing: the server counted far more than the 256 asked
  const old = engineRun({ ...base, id: 'prompt-old' }, base.requests.map((r) => ({ ...r, promptTokens: r.warmup ? 350 : counts[r.index % counts.length]! })), workload);
  // a sized run: the server's tokenizer sized the text
  const sizedRequests = base.requests.map((r) => ({ ...r, promptTokens: r.warmup ? 256 : 255 + (r.index % 3) }));
  const sized: RunFile = { ...engineRun({ ...base, id: 'prompt-sized' }, sizedRequests, { ...workload, prompt: { ...workload.prompt, sizing: 'server', words: 197 } }),
    promptLength: { method: 'tokenize', asked: 256, words: 197, tokenizer: 'vllm', sent: { p50: 256, min: 255, max: 257, requests: 10 } } };
  for (const [run, expected] of [
    [old, /^349-token prompts as the server counted them \(345–351; 256 asked\)$/],
    [sized, /^256-token prompts as the server counted them \(255–257; 256 asked, sized with the server's tokenizer\)$/],
  ] as const) {
    const { context, page, problems } = await openReport(session.browser, session.server.page({ kind: 'run', run }), BROWSER);
    try {
      await rendered(page);
      const meta = (await page.locator('.run-header .meta').first().textContent())!;
      const parts = meta.split(' · ');
      assert.ok(parts.some((p) => expected.test(p)), meta);
      // the start time as the tab's title says it (runName, the extension host's formatter) and as the run list does
      const entry = indexEntry(run, `/runs/${run.id}.json`);
      const tab = runName(entry, { clock: HOST });
      const when = tab.slice(tab.indexOf(', ') + 2);
      assert.equal(when, '5 Dec 2026, 14:44:03', 'the host\'s form: en-GB, Asia/Kolkata');
      // the browser's own locale and zone would say it otherwise ("Dec 5, 2026, 1:14:03 AM"): the page must not
      const browserOwn = new Date(run.startedAt).toLocaleString(BROWSER.locale, { dateStyle: 'medium', timeStyle: 'medium', timeZone: BROWSER.timezoneId });
      assert.notEqual(browserOwn, when);
      assert.equal(await page.evaluate(() => Intl.DateTimeFormat().resolvedOptions().timeZone), BROWSER.timezoneId, 'the page runs in another zone');
      assert.ok(meta.endsWith(` · ${when}`), `header "${meta}" ends with the tab's time "${when}"`);
      assert.ok(!meta.includes(browserOwn), meta);
      assert.doesNotMatch(meta, /UTC|T\d\d:/);
      if (run === sized) await page.locator('.run-header').screenshot({ path: join(artifacts, 'numbers-header-prompt-time.png') });
      const state: SidebarState = {
        endpoints: [], localServer: { state: 'stopped', source: 'preset:tiny', parallel: 4 }, workload: { concurrency: 1, requests: 10, maxTokens: 128, promptTokens: 256 },
        trafficDefaults: TRAFFIC_DEFAULTS, problems: [],
        runs: [{ id: run.id, name: tab, endpointName: entry.endpointName, startedAt: entry.startedAt, completed: entry.completed, failed: entry.failed, cancelled: entry.cancelled,
          ttftP50Ms: entry.ttftP50Ms, tpotP50Ms: entry.tpotP50Ms, ...(entry.prompt ? { prompt: entry.prompt } : {}) },
        // a row without a name: the page says its time itself, in the host's form
        { id: `${run.id}-unnamed`, name: '', endpointName: 'unnamed', startedAt: entry.startedAt, completed: 1, failed: 0, cancelled: false }],
      };
      const sb = await openSidebar(session.browser, sidebar.page(state), BROWSER);
      try {
        const row = sb.page.locator('li.item').first();
        assert.equal(await row.locator('.name').textContent(), tab);
        const rowMeta = (await row.locator('.meta').textContent())!;
        // the time once, in the name, as the tab says it; no second form beside it
        assert.ok(!rowMeta.includes(when) && !/\d{1,2}\/\d{1,2}\/\d{4}|UTC|\d\d:\d\d/.test(rowMeta), `run list "${rowMeta}": no other time`);
        assert.ok(rowMeta.includes(run === sized ? '256-token prompts (256 asked)' : '349-token prompts (256 asked)'), rowMeta);
        const unnamed = (await sb.page.locator('li.item[data-key$="-unnamed"] .meta').textContent())!;
        assert.ok(unnamed.startsWith(`${when} · `), `the unnamed row says the time as the tab does: "${unnamed}"`);
        if (run === sized) await sb.page.locator('li.item').first().screenshot({ path: join(artifacts, 'numbers-sidebar-run.png') });
        assert.deepEqual(sb.problems, []);
      } finally {
        await sb.context.close();
      }
      assert.deepEqual(problems, []);
    } finally {
      await context.close();
    }
  }
});

test('an imported run says its prompts and its stopped requests as its tool counted them; "all failed" counts only the requests that finished', async () => {
  const base = fixtureRun({ seed: 7, requests: 8, concurrency: 2, errorRate: 0, warmup: 0 });
  // as importers/guidellm.ts records a run: the mean input as the synthetic length, each request's count by GuideLLM, incomplete requests "aborted"
  const counts = [298, 250, 341, 300, 296, 310];
  const requests = base.requests.map((r, i): RequestRecord => (i < 6 ? { ...r, promptTokens: counts[i]! }
    : { ...r, ttftMs: undefined, e2eMs: undefined, chunkTimesMs: [], error: { kind: 'aborted', message: 'incomplete: GuideLLM cancelled the request when the benchmark stopped' } }));
  const imported = engineRun({ ...base, id: 'imported-words', importedFrom: { tool: 'guidellm', file: 'benchmarks.json', startTimes: 'absolute' } }, requests,
    { ...base.workload, prompt: { kind: 'synthetic', tokens: 299, sharedPrefix: false } });
  // a run of ours whose every request that finished got 404, three more cancelled by the user
  const notFound = { kind: 'http' as const, status: 404, message: 'HTTP 404 Not Found: no route for POST /vl/v1/chat/completions' };
  const failed = engineRun({ ...base, id: 'all-failed-cancelled', cancelled: true }, base.requests.map((r, i): RequestRecord => ({ ...r, ttftMs: undefined, e2eMs: undefined, chunkTimesMs: [], outputTokens: 0,
    error: i < 5 ? notFound : { kind: 'aborted', message: 'cancelled' } })));
  for (const [run, shot] of [[imported, 'numbers-imported-words.png'], [failed, 'numbers-all-failed-cancelled.png']] as const) {
    const { context, page, problems } = await openReport(session.browser, session.server.page({ kind: 'run', run }), BROWSER);
    try {
      await rendered(page);
      const header = (await page.locator('.run-header').textContent())!;
      const errors = (await page.locator('.figure[data-figure="errors"] .note').textContent()) ?? '';
      if (run === imported) {
        assert.match(header, /· 299-token prompts as GuideLLM counted them \(250–341\) ·/, header);
        assert.doesNotMatch(header, /server counted|asked/, header);
        assert.equal(errors, '2 stopped when GuideLLM\'s benchmark ended (not failures)');
      } else {
        assert.equal(await page.locator('.all-failed').textContent(),
          'All 5 requests that finished failed; 3 were cancelled. The first failure: HTTP 404 Not Found: no route for POST /vl/v1/chat/completions. Every request that finished got 404: is the URL\'s path right?');
        assert.match(header, /3 requests cancelled \(in flight when the run was cancelled; not failures\)/, header);
        assert.equal(errors, 'http 5: 404 ×5; 3 cancelled (not failures)');
      }
      await page.locator('.run-header').screenshot({ path: join(artifacts, shot) });
      assert.deepEqual(problems, []);
    } finally {
      await context.close();
    }
  }
});
