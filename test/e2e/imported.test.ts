// A run imported from another benchmark tool, in the real report bundle in Chromium: the header
// says where it came from and what its file lacks, the timeline says why it has no ticks and no
// placement in time, the tool's own figures stand beside ours, a compare with a measured run draws,
// and a file dropped on the page is handed to the host (the page reads no file). The runs come
// from the engine's own builder of imported runs (importers/common.ts importedRun).
// Needs `npm run build` (dist/webview/report.js).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { importedRun, type ImportedRunParts } from '../../src/engine/files/importers/common';
import type { ImportedFrom, RequestRecord, RunFile } from '../../src/engine/core/types';
import { formatNumber } from '../../src/present/units';
import { axeViolations, describeViolations } from '../support/axe';
import { fixtureRun, rng } from '../support/fixtureRuns';
import { openReport, reportSession, rendered } from '../support/reportHarness';

const session = reportSession();

const WORKLOAD = {
  mode: { kind: 'closed', concurrency: 4 }, requests: 24, warmup: 0, maxTokens: 64,
  prompt: { kind: 'synthetic', tokens: 128, sharedPrefix: false }, ignoreEos: false, seed: 1,
  timeoutMs: 60_000, idleTimeoutMs: 30_000, percentiles: [50, 90, 95, 99], stallFactor: 5, stallFloorMs: 100,
} as const;

/**
 * An imported run of `n` requests. `chunks`: each request's chunk arrival times (as vLLM keeps
 * them), else none (GuideLLM's first and last token only). `from.startTimes` 'none': every request
 * at the run's start, as the builder is told.
 */
function imported(from: ImportedFrom, options: { n?: number; chunks?: boolean; seed?: number } = {}): RunFile {
  const rand = rng(options.seed ?? 3);
  const t0 = Date.parse('2026-02-10T09:00:00.000Z');
  const requests: Omit<RequestRecord, 'index'>[] = [];
  for (let i = 0; i < (options.n ?? 24); i++) {
    const ttft = 40 + rand() * 60;
    const out = 32 + Math.floor(rand() * 32);
    const itl = 8 + rand() * 4;
    const chunkTimesMs = options.chunks ? Array.from({ length: out }, (_, k) => ttft + k * itl) : [];
    const e2e = ttft + (out - 1) * itl;
    const sentAt = from.startTimes === 'none' ? t0 : t0 + Math.floor(i / 4) * 900;
    requests.push({ warmup: false, scheduledAt: sentAt, sentAt, ttftMs: ttft, e2eMs: e2e, promptTokens: 128, outputTokens: out, tokenSource: 'usage', chunkTimesMs });
  }
  const parts: ImportedRunParts = {
    from, startedAt: new Date(t0).toISOString(),
    endpoint: { url: '', api: 'openai-completions', model: 'Qwen/Qwen3-0.6B' },
    points: [{ requests, workload: WORKLOAD }],
  };
  return importedRun(parts);
}

const GUIDELLM: ImportedFrom = {
  tool: 'guidellm', version: '0.3.0', file: '/data/sweeps/benchmarks.json', startTimes: 'none',
  missing: ['chunk arrival times: GuideLLM keeps only the first and last token times', 'the endpoint URL'],
  reported: {
    'time_to_first_token_ms.median': 61.5, 'time_to_first_token_ms.p99': 99.25, 'inter_token_latency_ms.mean': 10.5,
    'request_latency.median': 0.5, 'time_per_output_token_ms.mean': 11.75, 'requests_per_second.mean': 7.5,
  },
};

async function dataset(page: Page, selector: string): Promise<Record<string, string | undefined>> {
  return page.$eval(selector, (e) => ({ ...(e as HTMLElement).dataset }));
}

test('an imported run: where it came from, what its file lacks, no ticks, lanes not placed in time, and the tool\'s figures beside ours', async () => {
  const run = imported(GUIDELLM);
  const { context, page, problems } = await openReport(session.browser, session.server.page({ kind: 'run', run }));
  try {
    await rendered(page);
    assert.equal(await page.textContent('.run-header .imported-from'), 'Imported from GuideLLM 0.3.0 · benchmarks.json');
    assert.equal(await page.getAttribute('.run-header .imported-from', 'title'), '/data/sweeps/benchmarks.json', 'the whole path on hover');
    assert.deepEqual(await page.$$eval('.run-header .imported-missing [data-missing]', (es) => es.map((e) => e.textContent)), GUIDELLM.missing);
    // the timeline: a lane per request, no chunk to draw a tick from, and both notes
    const tl = await dataset(page, '.block.timeline canvas');
    assert.equal(tl.lanes, '24');
    assert.equal(tl.chunks, '0', 'no per-token ticks: the file has no chunk times');
    const notes = await page.$$eval('.block.timeline .timeline-note', (es) => es.map((e) => e.textContent));
    assert.deepEqual(notes, [
      'No per-token ticks: GuideLLM keeps only the first and last token times.',
      "Lanes are not placed in time: GuideLLM's file has no request start times, so every request is drawn from the run's start (read no overlap or concurrency from them).",
    ]);
    // the tool's own figures, in its order and under its names; ours beside those whose name says which and in what unit
    const rows = await page.$$eval('.block.reported tbody tr', (rs) => rs.map((r) => ({
      key: (r as HTMLElement).dataset.key,
      reported: r.querySelector<HTMLElement>('[data-stat="reported"]')!.dataset.value,
      ours: r.querySelector<HTMLElement>('[data-stat="ours"]')!.dataset.value,
      oursText: r.querySelector<HTMLElement>('[data-stat="ours"]')!.textContent,
      which: r.lastElementChild!.textContent,
    })));
    const s = run.summary;
    assert.deepEqual(rows.map((r) => r.key), Object.keys(GUIDELLM.reported!));
    assert.deepEqual(rows.map((r) => Number(r.reported)), Object.values(GUIDELLM.reported!));
    assert.equal(Number(rows[0]!.ours), s.ttftMs.p50);
    assert.equal(rows[0]!.which, 'TTFT median');
    assert.equal(Number(rows[1]!.ours), s.ttftMs.p99);
    assert.equal(Number(rows[2]!.ours), s.tpotMs.mean, 'GuideLLM\'s inter-token latency is our TPOT');
    assert.equal(rows[2]!.oursText, formatNumber(s.tpotMs.mean));
    assert.equal(Number(rows[3]!.ours), s.e2eMs.p50 / 1000, 'GuideLLM\'s request latency is in seconds: ours in seconds too');
    for (const r of rows.slice(4)) {
      assert.equal(r.ours, undefined, `${r.key}: a name that is none of ours gets no figure of ours`);
      assert.equal(r.which, 'not matched by name');
    }
    // those are behind a button, so the table shows what can be checked
    const visibleKeys = () => page.$$eval('.block.reported tbody tr', (rs) => rs.filter((r) => (r as HTMLElement).offsetParent !== null).map((r) => (r as HTMLElement).dataset.key));
    assert.deepEqual(await visibleKeys(), rows.slice(0, 4).map((r) => r.key));
    await page.click('.block.reported button.reported-more');
    assert.equal(await page.getAttribute('.block.reported button.reported-more', 'aria-expanded'), 'true');
    assert.deepEqual(await visibleKeys(), rows.map((r) => r.key));
    // what the file cannot give is not shown as a figure: ITL (no chunk times), stalls
    assert.equal(s.itlMs.count, 0);
    assert.deepEqual(await page.$$eval('tr[data-metric="itlMs"] td', (tds) => tds.map((td) => td.textContent)).then((t) => t.slice(1, 7)), ['–', '–', '–', '–', '–', '–']);
    assert.equal(await page.textContent('[data-figure="itl-p99"] .value'), '–');
    assert.equal(await page.textContent('[data-figure="stalls"] .value'), '–');
    assert.equal(await page.getAttribute('.block.stalls .empty', 'data-reason'), 'no-chunks');
    // the charts say what they cannot draw; the TPOT CDF has every request (the engine's TPOT from its first and last token)
    assert.equal(await page.textContent('[data-chart="itl"] .sub'), 'Nothing to draw: the GuideLLM file has no chunk arrival times.');
    assert.equal(await page.textContent('[data-chart="throughput"] .sub'), 'Not drawn: the GuideLLM file has no chunk arrival times (tokens over time) and no request start times (requests in flight).');
    // the decode bars are drawn from the first to the last token (the theme's charts-blue), with no tick in them
    const blue = await page.$eval('.block.timeline canvas', (c) => {
      const d = (c as HTMLCanvasElement).getContext('2d')!.getImageData(0, 0, (c as HTMLCanvasElement).width, (c as HTMLCanvasElement).height).data;
      let n = 0;
      for (let i = 0; i < d.length; i += 4) if (Math.abs(d[i]! - 0x37) < 12 && Math.abs(d[i + 1]! - 0x94) < 12 && Math.abs(d[i + 2]! - 0xff) < 12) n++;
      return n;
    });
    assert.ok(blue > 24 * 20, `decode bars drawn: ${blue} pixels of charts-blue`);
    // what it has is shown as for any run
    assert.equal(Number(await page.getAttribute('tr[data-metric="ttftMs"] td[data-stat="p50"]', 'data-value')), s.ttftMs.p50);
    assert.equal(await page.textContent('#h-reported'), 'As GuideLLM reported');
    assert.deepEqual(problems, []);
    const vs = await axeViolations(page);
    assert.equal(vs.length, 0, describeViolations(vs));
  } finally {
    await context.close();
  }
});

test('an imported run with chunk times and start times (as vLLM keeps them) has its ticks and no timeline note', async () => {
  const run = imported({ tool: 'vllm', version: '0.11.0', file: 'C:\\results\\vllm-qwen.json', startTimes: 'relative' }, { chunks: true });
  const { context, page, problems } = await openReport(session.browser, session.server.page({ kind: 'run', run }));
  try {
    await rendered(page);
    assert.equal(await page.textContent('.run-header .imported-from'), 'Imported from vLLM 0.11.0 · vllm-qwen.json');
    assert.equal(await page.$('.run-header .imported-missing'), null, 'nothing listed as missing');
    const chunks = run.requests.reduce((n, r) => n + r.chunkTimesMs.length, 0);
    assert.ok(chunks > 24 * 32);
    assert.equal((await dataset(page, '.block.timeline canvas')).chunks, String(chunks));
    assert.equal(await page.$('.timeline-note'), null);
    assert.equal(await page.$('.block.reported'), null, 'no "as reported" table without reported figures');
    assert.deepEqual(problems, []);
  } finally {
    await context.close();
  }
});

test('compare: a measured run against an imported one without chunk or start times draws both sides', async () => {
  const measured = fixtureRun({ seed: 5, requests: 30 });
  const other = imported(GUIDELLM);
  const { context, page, problems } = await openReport(session.browser, session.server.page({ kind: 'run', run: measured, compareWith: other }));
  try {
    await rendered(page);
    assert.equal(await page.getAttribute('body', 'data-view'), 'compare');
    assert.equal(await page.textContent('.side[data-side="B"] .imported-from'), 'Imported from GuideLLM 0.3.0 · benchmarks.json');
    assert.equal(await page.$('.side[data-side="A"] .imported-from'), null);
    // B has no ITL at all (no chunk times): its cells say so, the TTFT row compares
    assert.equal(other.summary.itlMs.count, 0);
    assert.equal(await page.textContent('tr[data-metric="itlMs"] [data-stat="b-p50"]'), '–');
    assert.equal(Number(await page.getAttribute('tr[data-metric="ttftMs"] [data-stat="b-p50"]', 'data-value')), other.summary.ttftMs.p50);
    assert.equal((await dataset(page, '.block.timeline-1 canvas')).chunks, '0');
    assert.ok(Number((await dataset(page, '.block.timeline canvas')).chunks) > 0);
    assert.equal(await page.$$eval('.block.timeline-1 .timeline-note', (es) => es.length), 2, 'B\'s timeline says what it lacks');
    assert.equal(await page.$$eval('.block.timeline .timeline-note', (es) => es.length), 0);
    assert.deepEqual(problems, []);
  } finally {
    await context.close();
  }
});

test('a file dropped on the page (Shift held in VS Code) is sent to the host by URI; a drop that names no file is said, not sent', async () => {
  const { context, page, problems } = await openReport(session.browser, session.server.page({ kind: 'empty' }));
  try {
    await page.waitForSelector('.drop-hint');
    assert.equal(await page.textContent('.drop-hint'), 'Drop a vLLM, GuideLLM or AIPerf result here (hold Shift) to open it.');
    const drop = (data: Record<string, string>, withFile: boolean) => page.evaluate(({ data, withFile }) => {
      const dt = new DataTransfer();
      for (const [k, v] of Object.entries(data)) dt.setData(k, v);
      if (withFile) dt.items.add(new File(['{}'], 'benchmarks.json', { type: 'application/json' }));
      const over = new DragEvent('dragover', { dataTransfer: dt, bubbles: true, cancelable: true });
      document.querySelector('main')!.dispatchEvent(over);
      const ev = new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true });
      document.querySelector('main')!.dispatchEvent(ev);
      return { overTaken: over.defaultPrevented, dropTaken: ev.defaultPrevented };
    }, { data, withFile });
    const posted = () => page.evaluate(() => (window as unknown as { __posted: { type: string; files?: string[] }[] }).__posted.filter((m) => m.type === 'openDropped'));
    // VS Code's Explorer: text/uri-list holds the first only, resourceurls every one
    const a = 'file:///work/results/benchmarks.json';
    const b = 'file:///work/results/profile_export.jsonl';
    assert.deepEqual(await drop({ 'text/uri-list': a, resourceurls: JSON.stringify([a, b]) }, false), { overTaken: true, dropTaken: true });
    assert.deepEqual(await posted(), [{ type: 'openDropped', files: [a, b] }]);
    // an editor tab: the uri list alone; comments in it are skipped
    await drop({ 'text/uri-list': `# from a tab\r\n${b}` }, false);
    assert.deepEqual((await posted())[1], { type: 'openDropped', files: [b] });
    // a file from the system's file manager: no path reaches a page, so nothing is sent and the page says why
    assert.deepEqual(await drop({}, true), { overTaken: true, dropTaken: true });
    assert.equal((await posted()).length, 2);
    assert.match(await page.textContent('.drop-status') ?? '', /names no file.*Open benchmark result/);
    // plain text dragged over the page is not taken
    assert.deepEqual(await drop({ 'text/plain': 'hello' }, false), { overTaken: false, dropTaken: false });
    assert.equal((await posted()).length, 2);
    assert.deepEqual(problems, []);
  } finally {
    await context.close();
  }
});

test('the importers\' own fixtures: vLLM\'s figures stand beside ours and agree; a GuideLLM sweep has its figures per point', async () => {
  const { importBenchmarkFile } = await import('../../src/engine/files/importers/index');
  const fixtures = join(__dirname, '..', 'fixtures');
  const vllm = await importBenchmarkFile(join(fixtures, 'vllm', 'concurrency2.json'));
  let { context, page, problems } = await openReport(session.browser, session.server.page({ kind: 'run', run: vllm }));
  try {
    await rendered(page);
    assert.equal(await page.textContent('.run-header .imported-from'), `Imported from vLLM${vllm.importedFrom!.version ? ` ${vllm.importedFrom!.version}` : ''} · concurrency2.json`);
    const rows = await page.$$eval('.block.reported tbody tr', (rs) => rs.map((r) => ({
      key: (r as HTMLElement).dataset.key!,
      reported: Number(r.querySelector<HTMLElement>('[data-stat="reported"]')!.dataset.value),
      ours: r.querySelector<HTMLElement>('[data-stat="ours"]')!.dataset.value,
    })));
    const matched = rows.filter((r) => r.ours !== undefined);
    // vLLM's definitions are ours: every figure matched by name agrees (numpy's and our linear percentiles, to float rounding)
    for (const k of ['median_ttft_ms', 'p99_ttft_ms', 'mean_tpot_ms', 'p99_itl_ms', 'median_e2el_ms', 'request_throughput', 'output_throughput']) {
      assert.ok(matched.some((r) => r.key === k), `${k} is set beside ours`);
    }
    for (const r of matched) assert.ok(Math.abs(Number(r.ours) - r.reported) <= 1e-9 * Math.max(1, Math.abs(r.reported)), `${r.key}: vLLM ${r.reported}, ours ${r.ours}`);
    assert.equal(await page.$('.timeline-note'), null, 'vLLM keeps chunk gaps: ticks, no note');
    assert.deepEqual(problems, []);
  } finally {
    await context.close();
  }
  const sweep = await importBenchmarkFile(join(fixtures, 'guidellm', 'sweep-v1.json'));
  assert.ok(sweep.sweep && sweep.sweep.points.length > 1);
  ({ context, page, problems } = await openReport(session.browser, session.server.page({ kind: 'run', run: sweep })));
  try {
    await rendered(page);
    const points = sweep.sweep.points.filter((p) => p.reported);
    assert.deepEqual(await page.$$eval('.block.reported button[data-point]', (bs) => bs.map((b) => (b as HTMLElement).dataset.point)), points.map((p) => p.label));
    // each point's TTFT median beside that point's own (the engine's summary of its requests), one point at a time
    const ttft = '.reported-point tr[data-key="time_to_first_token_ms.successful.median"]';
    for (const [i, p] of points.entries()) {
      if (i > 0) await page.click(`.block.reported button[data-point="${p.label}"]`);
      assert.equal(await page.getAttribute('.reported-point', 'data-point'), p.label);
      assert.equal(await page.getAttribute(`.block.reported button[data-point="${p.label}"]`, 'aria-pressed'), 'true');
      assert.equal(Number(await page.getAttribute(`${ttft} [data-stat="ours"]`, 'data-value')), p.summary.ttftMs.p50, p.label);
      assert.equal(Number(await page.getAttribute(`${ttft} [data-stat="reported"]`, 'data-value')), p.reported!['time_to_first_token_ms.successful.median'], p.label);
    }
    assert.equal(await page.$$eval('.block.timeline .timeline-note', (es) => es.length), 1, 'no ticks (GuideLLM has start times)');
    assert.deepEqual(problems, []);
    const vs = await axeViolations(page);
    assert.equal(vs.length, 0, describeViolations(vs));
  } finally {
    await context.close();
  }
});
