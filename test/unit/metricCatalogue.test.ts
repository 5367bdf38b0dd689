// The metric catalogue drives every surface: each surface shows exactly the catalogue's metrics
// marked for it (those the run has), and nothing outside the catalogue. The CLI's table is read back
// as text; the report's tiles, percentile and compare tables and CDFs from the view models its DOM is
// drawn from (webview/report/figures.ts); the sweep's points table as the CLI and the report show it.
// The catalogue's own rules: TTFO is shown wherever TTFT is, every latency on every latency surface.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { summarize } from '../../src/engine/analysis/metrics';
import { defaultWorkload } from '../../src/engine/core/workload';
import type { RequestRecord, RunFile, SloSpec, Summary } from '../../src/engine/core/types';
import { formatRunTable } from '../../src/present/runText';
import { sweepTable } from '../../src/present/sweepText';
import { METRIC_CATALOGUE, metricOf, metricsFor, metricTableMarkdown, type Metric, type MetricKey, type Surface } from '../../src/present/metricCatalogue';
import { compareRows, distributionMetrics, headlineFigures, percentileRows } from '../../webview/report/figures';
import { fixtureSweepRun } from '../support/fixtureRuns';

/** A request streamed with `reasoning` thought chunks before its answer (TTFO after them), chunks 10 ms apart. */
function request(index: number, ttftMs: number, reasoning: number, answer = 6): RequestRecord {
  const chunkTimesMs = Array.from({ length: reasoning + answer }, (_, k) => ttftMs + k * 10);
  return {
    index, warmup: false, scheduledAt: index * 5, sentAt: index * 5, ttftMs, ttfoMs: chunkTimesMs[reasoning],
    e2eMs: chunkTimesMs.at(-1), promptTokens: 32, outputTokens: chunkTimesMs.length, ...(reasoning ? { reasoningTokens: reasoning } : {}),
    tokenSource: 'usage', chunkTimesMs,
  };
}

/** A run summarized by the engine: with reasoning (TTFO) and an SLO (goodput), or neither. */
function run(id: string, reasoning: boolean, slo?: SloSpec): RunFile {
  const requests = Array.from({ length: 8 }, (_, i) => request(i, 80 + i * 7, reasoning && i % 2 === 0 ? 3 : 0));
  const workload = defaultWorkload({ percentiles: [50, 90, 99], ...(slo ? { slo } : {}) });
  return {
    format: 'llm-profiler.run', version: 1, id, startedAt: '2026-01-01T00:00:00Z', tool: { name: 'llm-profiler', version: '0.0.0' },
    endpoint: { url: 'http://127.0.0.1:8000', api: 'openai-chat', model: 'm' }, workload, requests, summary: summarize(requests, workload, { durationS: 1 }),
  };
}

const keys = (ms: readonly Metric[]): MetricKey[] => ms.map((m) => m.key).sort();
const sorted = (ks: readonly MetricKey[]): MetricKey[] => [...new Set(ks)].sort();
/** The catalogue's metrics marked for a surface that these summaries have: what the surface must show. */
const expected = (surface: Surface, ...summaries: Summary[]): MetricKey[] => keys(metricsFor(surface, summaries));

const thinking = run('thinking', true, { ttftMs: 500, tpotMs: 50 });
const plain = run('plain', false);

test('the catalogue: TTFO is shown wherever TTFT is; every latency on every latency surface; every tile in the CLI; every row in the docs', () => {
  const surfaces = (k: MetricKey) => [...metricOf(k).shown].sort();
  assert.deepEqual(surfaces('ttfoMs'), surfaces('ttftMs'));
  for (const m of METRIC_CATALOGUE) {
    if (m.kind === 'latency') for (const s of ['cli', 'tiles', 'percentiles', 'compare', 'sweep', 'docs'] as const) assert.ok(m.shown.includes(s), `${m.label} is not on the ${s} surface`);
    if (m.shown.includes('tiles')) assert.ok(m.shown.includes('cli'), `${m.label} is a tile but not in the CLI's table`);
    assert.ok(m.shown.includes('docs'), `${m.label} is not in the docs`);
    assert.ok(m.means.length > 20 && m.unit, `${m.label} says what it means and its unit`);
  }
  assert.equal(new Set(METRIC_CATALOGUE.map((m) => m.key)).size, METRIC_CATALOGUE.length, 'a row per summary field');
  assert.equal(new Set(METRIC_CATALOGUE.map((m) => m.id)).size, METRIC_CATALOGUE.length, 'a row per id');
  assert.ok(thinking.summary.ttfoMs && thinking.summary.goodput !== undefined, 'the engine summarized TTFO and goodput');
  assert.equal(plain.summary.ttfoMs, undefined);
});

/** The metrics the CLI's table shows, read back from its text: the latency table's rows and the figures' lines. */
function cliShows(text: string): MetricKey[] {
  const lines = text.split('\n');
  const head = lines.findIndex((l) => l.startsWith('Metric (ms)'));
  const shown: MetricKey[] = [];
  for (const l of lines.slice(head + 1)) {
    if (l.trim() === '') break;
    const name = l.split(/\s+/)[0]!;
    const m = METRIC_CATALOGUE.find((x) => x.kind === 'latency' && x.label === name);
    assert.ok(m, `the CLI's latency table has a row "${name}" that is not in the catalogue`);
    shown.push(m.key);
  }
  // the figures' lines, between what was sent and the latency table: each a catalogue row's line
  const connections = lines.findIndex((l) => /^(Sent with|Connections):/.test(l));
  for (const l of lines.slice(connections + 1, head)) {
    if (l.trim() === '' || l.startsWith('  ')) continue;
    const label = /^([^:]+):/.exec(l)?.[1];
    const m = METRIC_CATALOGUE.find((x) => x.kind === 'figure' && x.cliLine === label);
    assert.ok(m, `the CLI's table has a line "${label}" that is not in the catalogue`);
    shown.push(m.key);
  }
  if (lines.some((l) => l.startsWith('Stalls: '))) shown.push('stalls');
  return sorted(shown);
}

test('the CLI table shows each catalogue metric marked for it that the run has, and nothing else', () => {
  for (const r of [thinking, plain]) assert.deepEqual(cliShows(formatRunTable(r)), expected('cli', r.summary), r.id);
  assert.ok(cliShows(formatRunTable(thinking)).includes('ttfoMs'));
  assert.ok(!cliShows(formatRunTable(plain)).includes('goodput'), 'no SLO, no goodput line');
});

/** The catalogue row a tile shows, from its id ("ttft-p99", "ttft-cache", "errors"). */
function tileMetric(id: string): MetricKey {
  const m = METRIC_CATALOGUE.find((x) => (x.kind === 'figure' ? id === x.id : id.startsWith(`${x.id}-`)));
  assert.ok(m, `a tile "${id}" is not a catalogue metric`);
  return m.key;
}

test('the report: tiles, percentile table, compare table and CDFs show each catalogue metric marked for them, and nothing else', () => {
  for (const r of [thinking, plain]) {
    const tiles = headlineFigures(r);
    assert.deepEqual(sorted(tiles.map((f) => tileMetric(f.id))), expected('tiles', r.summary), `${r.id}: tiles`);
    for (const f of tiles) assert.ok(f.label.startsWith(metricOf(tileMetric(f.id)).label), `${f.id} is labelled ${f.label}`);
    assert.deepEqual(sorted(percentileRows(r).map((x) => x.metric.key)), expected('percentiles', r.summary), `${r.id}: percentiles`);
    assert.deepEqual(sorted(distributionMetrics(r).map((m) => m.key)), expected('distributions', r.summary), `${r.id}: CDFs`);
  }
  assert.deepEqual(headlineFigures(thinking).filter((f) => f.id.startsWith('ttfo-')).map((f) => f.id), ['ttfo-p50', 'ttfo-p99']);
  // a compare shows a metric either side has
  assert.deepEqual(sorted(compareRows(thinking, plain).map((x) => x.metric.key)), expected('compare', thinking.summary, plain.summary));
  assert.ok(compareRows(plain, thinking).some((x) => x.metric.key === 'ttfoMs'), 'TTFO compared when one side has it');
  assert.ok(!compareRows(plain, plain).some((x) => x.metric.key === 'ttfoMs'));
  assert.deepEqual(sorted(distributionMetrics(plain, thinking).map((m) => m.key)), expected('distributions', plain.summary, thinking.summary));
});

/** The sweep's own columns, beside the catalogue's figures. */
const SWEEP_OWN = new Set(['point', 'B', 'residual', '']);

function sweepShows(r: RunFile): MetricKey[] {
  return sorted(sweepTable(r).header.filter((h) => !SWEEP_OWN.has(h)).map((h) => {
    const m = METRIC_CATALOGUE.find((x) => (x.kind === 'figure' ? h === x.column : h.startsWith(`${x.label} p`)));
    assert.ok(m, `the sweep's column "${h}" is not a catalogue metric`);
    return m.key;
  }));
}

test('the sweep points table (the CLI and the report) shows each catalogue metric marked for it, TTFO when a point has it', () => {
  // the engine gives a point TTFO only when a reply streamed reasoning: none here
  const fixture = fixtureSweepRun();
  const points = fixture.sweep!.points.map((p) => ({ ...p, summary: { ...p.summary, ttfoMs: undefined } }));
  const sweep: RunFile = { ...fixture, sweep: { ...fixture.sweep!, points } };
  assert.deepEqual(sweepShows(sweep), expected('sweep', ...points.map((p) => p.summary)));
  assert.ok(!sweepShows(sweep).includes('ttfoMs'));
  const withTtfo: RunFile = { ...sweep, sweep: { ...sweep.sweep!, points: points.map((p, i) => (i === 1 ? { ...p, summary: { ...p.summary, ttfoMs: thinking.summary.ttfoMs } } : p)) } };
  assert.deepEqual(sweepShows(withTtfo), expected('sweep', ...withTtfo.sweep!.points.map((p) => p.summary)));
  assert.ok(sweepShows(withTtfo).includes('ttfoMs'));
  const { header, rows } = sweepTable(withTtfo);
  const p50 = header.indexOf('TTFO p50');
  assert.deepEqual(rows.map((r) => r[p50]), points.map((_, i) => (i === 1 ? rows[1]![p50]! : '–')), 'a point without TTFO shows a dash');
  assert.notEqual(rows[1]![p50], '–');
});

test('the docs table has a row per catalogue metric, with its unit and meaning', () => {
  const md = metricTableMarkdown().split('\n');
  assert.equal(md.length, 2 + metricsFor('docs').length);
  for (const m of metricsFor('docs')) {
    const row = md.find((l) => l.startsWith(`| ${m.label}`));
    assert.ok(row, `${m.label} in the docs`);
    assert.ok(row.includes(`| ${m.unit} |`) && row.includes(m.means), row);
  }
});
