import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { fromGuidellm, isGuidellm } from '../../src/engine/files/importers/guidellm';
import { importBenchmarkFile } from '../../src/engine/files/importers/index';
import { ImportError } from '../../src/engine/files/importers/common';
import { tpotOf } from '../../src/engine/analysis/metrics';
import { parseRunFile, serializeRunFile } from '../../src/engine/files/runFile';
import type { RequestRecord, RunFile, SweepPoint } from '../../src/engine/core/types';

// Fixtures: test/fixtures/guidellm/README.md (GuideLLM's own models and statistics, transcribed).
const DIR = join(__dirname, '..', 'fixtures', 'guidellm');
const SWEEP = join(DIR, 'sweep-v1.json');
const YAML = join(DIR, 'concurrent-v1.yaml');
const OLD = join(DIR, 'sweep-0.2.json');

// The parts of GuideLLM's report the tests read (its full shape is the importer's business).
interface Dist {
  count: number;
  mean: number;
  min: number;
  max: number;
  median: number;
  percentiles: Record<string, number>;
}
interface Metric {
  successful: Dist;
}
interface Req {
  request_start_time: number;
}
interface Bench {
  config: { strategy: { type_: string; rate: number }; warmup: { value: number | null } };
  args: { strategy: { type_: string } };
  scheduler_metrics: { measure_start_time: number };
  metrics: {
    request_totals: Record<'successful' | 'incomplete' | 'errored' | 'total', number>;
    requests_per_second: Metric;
    time_to_first_token_ms: Metric;
    inter_token_latency_ms: Metric;
    request_latency: Metric;
  };
  requests: { successful: Req[]; incomplete: Req[]; errored: Req[]; total: null };
  duration: number;
}
interface Report {
  metadata: { version: number; guidellm_version: string };
  benchmarks: Bench[];
}
const load = (path: string): Report => JSON.parse(readFileSync(path, 'utf8')) as Report;

/**
 * GuideLLM's percentile, transcribed from src/guidellm/schemas/statistics.py (Percentiles.from_pdf
 * @ 03820eba): values sorted and merged, probabilities = weight / total, the first value whose
 * cumulative probability reaches p (np.searchsorted(cdf, p, side="left")).
 */
function guidellmPercentile(values: readonly number[], weights: readonly number[], p: number): number {
  const pairs = values.map((v, i) => [v, weights[i]!] as const).sort((a, b) => a[0] - b[0]);
  const merged: [number, number][] = [];
  for (const [v, w] of pairs) {
    const last = merged[merged.length - 1];
    if (last && last[0] === v) last[1] += w;
    else merged.push([v, w]);
  }
  const kept = merged.filter(([, w]) => w > 0);
  const total = kept.reduce((t, [, w]) => t + w, 0);
  let cdf = 0;
  for (const [v, w] of kept) {
    cdf += w / total;
    if (cdf >= p) return v;
  }
  return kept[kept.length - 1]![0];
}

/** GuideLLM 0.2's percentile (objects/statistics.py from_distribution_function): no merging, first cdf ≥ p. */
function guidellm02Percentile(values: readonly number[], weights: readonly number[], p: number): number {
  const total = weights.reduce((t, w) => t + w, 0);
  const pairs = values.map((v, i) => [v, weights[i]! / total] as const).sort((a, b) => a[0] - b[0]);
  let cdf = 0;
  for (const [v, pr] of pairs) {
    cdf += pr;
    if (cdf >= p) return v;
  }
  return pairs[0]![0];
}

const close = (a: number, b: number, what: string, rel = 1e-9) => assert.ok(Math.abs(a - b) <= rel * Math.max(1, Math.abs(b)), `${what}: ${a} vs ${b}`);

function pointRecords(run: RunFile, p: SweepPoint): RequestRecord[] {
  return p.requestIndexes.map((i) => run.requests[i]!);
}
const measuredOk = (rs: readonly RequestRecord[]) => rs.filter((r) => !r.warmup && r.error === undefined);

/** Our statistic over a point against the one GuideLLM reported for it (one of its `metrics` entries). */
function assertMatchesGuidellm(
  ours: { count: number; mean: number; min: number; max: number; [k: `p${string}`]: number },
  theirs: Dist,
  values: readonly number[],
  weights: readonly number[],
  what: string,
  method = guidellmPercentile,
) {
  assert.equal(ours.count, values.length, `${what} count`);
  // schema 1 counts a weighted distribution by its total weight (tokens), 0.2 by its values
  assert.equal(theirs.count, method === guidellmPercentile ? Math.round(weights.reduce((t, w) => t + w, 0)) : values.length, `${what} GuideLLM's count`);
  const weighted = weights.some((w) => w !== weights[0]);
  if (!weighted) close(ours.mean, theirs.mean, `${what} mean`);
  close(ours.min, theirs.min, `${what} min`);
  close(ours.max, theirs.max, `${what} max`);
  const sorted = [...values].sort((a, b) => a - b);
  for (const [key, p] of [['p50', 50], ['p90', 90], ['p95', 95], ['p99', 99]] as const) {
    // GuideLLM's figure is its own percentile of exactly our sample…
    const reported = theirs.percentiles[key] ?? (key === 'p50' ? theirs.median : undefined);
    if (reported === undefined || ours[key] === undefined) continue;
    close(method(values, weights, p / 100), reported, `${what} ${key} (GuideLLM's method over our values)`);
    // …and ours, numpy's linear one, lies between the two neighbouring values around it
    if (!weighted) {
      const h = ((sorted.length - 1) * p) / 100;
      const lo = sorted[Math.floor(h)]!;
      const hi = sorted[Math.ceil(h)]!;
      assert.ok(ours[key] >= lo - 1e-9 && ours[key] <= hi + 1e-9, `${what} ${key}: ours ${ours[key]} within [${lo}, ${hi}]`);
      assert.ok(Math.abs(ours[key] - reported) <= hi - lo + 1e-9, `${what} ${key}: ours ${ours[key]} vs GuideLLM ${reported}`);
    }
  }
}

test('GuideLLM schema 1 sweep: one point per benchmark on the rate dimension, in GuideLLM\'s own names and order of rate', () => {
  const doc = load(SWEEP);
  assert.equal(isGuidellm(doc), true);
  const run = fromGuidellm(doc, SWEEP, {});
  assert.equal(run.importedFrom?.tool, 'guidellm');
  assert.equal(run.importedFrom?.version, '0.4.0');
  assert.equal(run.importedFrom?.startTimes, 'absolute');
  assert.ok(run.importedFrom?.missing?.some((m) => m.startsWith('chunk arrival times: GuideLLM keeps the first and last token times only')));
  assert.equal(run.endpoint.model, 'Qwen/Qwen3-0.6B');
  assert.equal(run.endpoint.api, 'openai-chat');
  const sweep = run.sweep!;
  assert.equal(sweep.dimension, 'rate');
  const byLabel = doc.benchmarks.map((b) => b.config.strategy);
  const labels = sweep.points.map((p) => p.label);
  assert.deepEqual(labels.slice(0, 1), ['synchronous']);
  assert.deepEqual(labels.slice(-1), ['throughput']);
  assert.deepEqual(
    labels.slice(1, -1),
    byLabel.filter((s) => s.type_ === 'constant').map((s) => `constant@${s.rate.toFixed(2)}`),
  );
  // the constant points at their configured rate, the closed-loop ones at the rate GuideLLM measured
  const rates = sweep.points.map((p) => p.rate!);
  assert.deepEqual([...rates].sort((a, b) => a - b), rates);
  assert.equal(rates[0], doc.benchmarks[0]!.metrics.requests_per_second.successful.mean);
  assert.equal(rates[1], doc.benchmarks[2]!.config.strategy.rate);
  // every saved request is there, placed at GuideLLM's own start time
  const saved = doc.benchmarks.flatMap((b) => [...b.requests.successful, ...b.requests.incomplete, ...b.requests.errored]);
  assert.equal(run.requests.length, saved.length);
  const starts = new Set(saved.map((q) => q.request_start_time * 1000));
  for (const r of run.requests) {
    assert.ok(starts.has(r.sentAt), `sentAt ${r.sentAt} is a GuideLLM request_start_time`);
    assert.deepEqual(r.chunkTimesMs, []);
  }
});

test('GuideLLM schema 1: TTFT, TPOT (its inter_token_latency_ms) and request latency per point against GuideLLM\'s own figures', () => {
  const doc = load(SWEEP);
  const run = fromGuidellm(doc, SWEEP, {});
  const benchFor = (p: SweepPoint) => doc.benchmarks.find((b) => p.reported?.['time_to_first_token_ms.successful.mean'] === b.metrics.time_to_first_token_ms.successful.mean);
  for (const p of run.sweep!.points) {
    const b = benchFor(p);
    assert.ok(b !== undefined, `benchmark of ${p.label}`);
    const m = b.metrics;
    const ok = measuredOk(pointRecords(run, p));
    assert.equal(p.summary.completed, m.request_totals.successful, `${p.label} completed`);
    // GuideLLM's incomplete requests (in flight when its benchmark stopped) are cancelled, apart from failures
    assert.equal(p.summary.failed, m.request_totals.errored, `${p.label} failed`);
    assert.equal(p.summary.cancelled ?? 0, m.request_totals.incomplete, `${p.label} cancelled`);
    close(p.summary.durationS, b.duration, `${p.label} duration`);
    const ttfts = ok.map((r) => r.ttftMs!);
    assertMatchesGuidellm(p.summary.ttftMs, m.time_to_first_token_ms.successful, ttfts, ttfts.map(() => 1), `${p.label} TTFT`);
    // every request of this fixture has 128 tokens: GuideLLM's token-weighted ITL is then the plain per-request mean
    const tpots = ok.map((r) => tpotOf(r)!);
    assertMatchesGuidellm(p.summary.tpotMs, m.inter_token_latency_ms.successful, tpots, ok.map((r) => r.outputTokens - 1), `${p.label} TPOT`);
    // GuideLLM's request_latency runs to the end of the stream: our lastByteMs, not our E2E (the last token)
    const latencies = ok.map((r) => r.lastByteMs! / 1000);
    close(latencies.reduce((t, x) => t + x, 0) / latencies.length, m.request_latency.successful.mean, `${p.label} request_latency mean`);
    for (const key of ['p50', 'p90', 'p99'] as const) {
      close(guidellmPercentile(latencies, latencies.map(() => 1), Number(key.slice(1)) / 100), m.request_latency.successful.percentiles[key], `${p.label} request_latency ${key}`);
    }
    for (const r of ok) assert.ok(r.e2eMs! < r.lastByteMs!, 'the last token comes before the end of the stream');
    assert.equal(p.summary.itlMs.count, 0, 'no chunk times, no ITL');
    // GuideLLM's figures are carried under its names
    assert.equal(p.reported?.['time_to_first_token_ms.successful.p99'], m.time_to_first_token_ms.successful.percentiles.p99);
    assert.equal(p.reported?.['inter_token_latency_ms.successful.mean'], m.inter_token_latency_ms.successful.mean);
    assert.equal(p.reported?.['request_totals.successful'], m.request_totals.successful);
  }
});

test('GuideLLM schema 1: warmup requests (ended before the measured phase) are kept but left out, errors and incomplete requests keep GuideLLM\'s message', () => {
  const doc = load(SWEEP);
  const run = fromGuidellm(doc, SWEEP, {});
  const warm = doc.benchmarks.find((b) => b.config.warmup.value === 2)!;
  const p = run.sweep!.points.find((pt) => pt.label === `constant@${warm.config.strategy.rate.toFixed(2)}`)!;
  const rs = pointRecords(run, p);
  assert.equal(rs.filter((r) => r.warmup).length, 2);
  for (const r of rs.filter((x) => x.warmup)) assert.ok(r.sentAt + r.lastByteMs! < warm.scheduler_metrics.measure_start_time * 1000);
  assert.equal(p.summary.completed, warm.metrics.request_totals.successful);
  assert.equal(rs.length, warm.requests.successful.length);

  const errored = run.requests.filter((r) => r.error?.kind === 'http');
  assert.equal(errored.length, 1);
  assert.equal(errored[0]!.error!.status, 500);
  assert.match(errored[0]!.error!.message, /500 Internal Server Error/);
  const incomplete = run.requests.filter((r) => r.error?.kind === 'aborted');
  assert.equal(incomplete.length, 1);
  assert.match(incomplete[0]!.error!.message, /^incomplete: Request was cancelled/);
  assert.equal(incomplete[0]!.outputTokens, 37);
});

test('GuideLLM sweep: the decoding batch of each point grows with the rate, and the TPOT(B) fit and the knee are found', () => {
  const run = fromGuidellm(load(SWEEP), SWEEP, {});
  const batches = run.sweep!.points.map((p) => p.meanBatch!);
  for (const b of batches) assert.ok(b >= 1, `meanBatch ${b}`);
  assert.ok(batches[0]! < 1.05, 'synchronous decodes alone');
  for (let i = 1; i < batches.length; i++) assert.ok(batches[i]! > batches[i - 1]!, `batch grows: ${batches}`);
  const fit = run.sweep!.fit!;
  assert.equal(run.sweep!.fitX, 'meanBatch');
  assert.ok(fit.r2 > 0.95, `r2 ${fit.r2}`);
  // the simulated server of the fixture: 11.5 ms a token alone, 1.4 ms more per other request decoding
  assert.ok(Math.abs(fit.baseMs + fit.kMs - 11.5) < 0.6, `TPOT at B=1: ${fit.baseMs + fit.kMs}`);
  assert.ok(fit.kMs > 1 && fit.kMs < 1.8, `k ${fit.kMs}`);
  assert.ok(run.sweep!.knee !== undefined);
});

test('GuideLLM YAML (one concurrent benchmark): a plain run; GuideLLM weights its ITL by tokens, ours is per request', () => {
  const doc = parseYaml(readFileSync(YAML, 'utf8')) as Report;
  assert.equal(isGuidellm(doc), true);
  const run = fromGuidellm(doc, YAML, {});
  assert.equal(run.sweep, undefined);
  assert.deepEqual(run.workload.mode, { kind: 'closed', concurrency: 4 });
  assert.equal(run.workload.maxTokens, 128);
  const m = doc.benchmarks[0]!.metrics;
  assert.equal(run.importedFrom?.reported?.['inter_token_latency_ms.successful.mean'], m.inter_token_latency_ms.successful.mean);
  const ok = measuredOk(run.requests);
  assert.equal(run.summary.completed, m.request_totals.successful);
  assert.equal(run.summary.failed, 1);
  assert.equal(run.requests.find((r) => r.error)?.error?.kind, 'timeout');
  const ttfts = ok.map((r) => r.ttftMs!);
  assertMatchesGuidellm(run.summary.ttftMs, m.time_to_first_token_ms.successful, ttfts, ttfts.map(() => 1), 'TTFT');
  const tpots = ok.map((r) => tpotOf(r)!);
  const weights = ok.map((r) => r.outputTokens - 1);
  assertMatchesGuidellm(run.summary.tpotMs, m.inter_token_latency_ms.successful, tpots, weights, 'TPOT (weighted)');
  // GuideLLM's mean is per token: Σ tpot·(n−1) / Σ (n−1); ours per request
  const perToken = tpots.reduce((t, x, i) => t + x * weights[i]!, 0) / weights.reduce((t, w) => t + w, 0);
  close(m.inter_token_latency_ms.successful.mean, perToken, 'GuideLLM ITL mean is token-weighted');
  close(run.summary.tpotMs.mean, tpots.reduce((t, x) => t + x, 0) / tpots.length, 'our TPOT mean');
  assert.ok(Math.abs(run.summary.tpotMs.mean - perToken) > 0.01, 'the two means differ when lengths differ');
});

test('GuideLLM 0.2 format: benchmarks by args.strategy, a concurrency sweep, text completions', () => {
  const doc = load(OLD);
  assert.equal(isGuidellm(doc), true);
  const run = fromGuidellm(doc, OLD, { percentiles: [50, 90, 99] });
  assert.equal(run.importedFrom?.version, undefined);
  assert.equal(run.endpoint.api, 'openai-completions');
  assert.equal(run.endpoint.url, 'http://localhost:8000');
  assert.equal(run.sweep?.dimension, 'concurrency');
  assert.deepEqual(run.sweep!.points.map((p) => [p.label, p.concurrency]), [['synchronous', 1], ['concurrent@8', 8]]);
  assert.equal(run.sweep!.fitX, 'meanBatch');
  for (const [i, p] of run.sweep!.points.entries()) {
    const m = doc.benchmarks[i]!.metrics;
    const ok = measuredOk(pointRecords(run, p));
    const ttfts = ok.map((r) => r.ttftMs!);
    assertMatchesGuidellm(p.summary.ttftMs, m.time_to_first_token_ms.successful, ttfts, ttfts.map(() => 1), `${p.label} TTFT`, guidellm02Percentile);
    const tpots = ok.map((r) => tpotOf(r)!);
    assertMatchesGuidellm(p.summary.tpotMs, m.inter_token_latency_ms.successful, tpots, ok.map((r) => r.outputTokens - 1), `${p.label} TPOT`, guidellm02Percentile);
    assert.equal(p.summary.ttftMs.p95, undefined, 'the percentiles asked for');
    assert.ok(p.summary.ttftMs.p90 !== undefined);
  }
  const failed = run.requests.find((r) => r.error)!;
  assert.equal(failed.error!.kind, 'http');
  assert.equal(failed.error!.status, 429);
});

test('GuideLLM: a schema version not known, a benchmark of no known shape, no benchmarks, no requests saved: each refused with the file and the problem', () => {
  const v2 = load(SWEEP);
  v2.metadata.version = 2;
  v2.metadata.guidellm_version = '0.9.0';
  assert.throws(() => fromGuidellm(v2, 'b.json', {}), (e: Error) => {
    assert.ok(e instanceof ImportError);
    assert.match(e.message, /^b\.json: GuideLLM report schema version 2 \(GuideLLM 0\.9\.0\) is not supported: llm-profiler reads schema version 1/);
    return true;
  });

  const odd = load(SWEEP);
  odd.benchmarks[1] = { type_: 'generative_benchmark', settings: {}, requests: {}, metrics: {} } as unknown as Bench;
  assert.throws(() => fromGuidellm(odd, 'odd.json', {}), /^ImportError: odd\.json: benchmark 2 is in no GuideLLM format known here .*its keys: type_, settings, requests, metrics$/);

  const none = load(SWEEP);
  none.benchmarks = [];
  assert.throws(() => fromGuidellm(none, 'none.json', {}), /none\.json: the GuideLLM report has no benchmarks/);

  const aggregatesOnly = load(SWEEP);
  for (const b of aggregatesOnly.benchmarks) b.requests = { successful: [], incomplete: [], errored: [], total: null };
  assert.throws(
    () => fromGuidellm(aggregatesOnly, 'agg.json', {}),
    /agg\.json: benchmark 1 \(synchronous\) has no requests saved, only GuideLLM's aggregates\. GuideLLM saves every request unless --sample-requests \(GuideLLM 0\.2: --output-sampling\) limits how many/,
  );
});

test('GuideLLM: a benchmark that saved a sample of its requests says so', () => {
  const doc = load(SWEEP);
  doc.benchmarks[0]!.requests.successful = doc.benchmarks[0]!.requests.successful.slice(0, 5);
  const run = fromGuidellm(doc, SWEEP, {});
  assert.ok(run.importedFrom?.missing?.includes("requests: GuideLLM saved 5 of benchmark 1's 8 (--sample-requests), so that point's figures are over the saved ones only"));
  assert.equal(run.sweep!.points[0]!.summary.completed, 5);
});

test('GuideLLM imports save and reopen as run files', () => {
  const runs = [fromGuidellm(load(SWEEP), SWEEP, {}), fromGuidellm(parseYaml(readFileSync(YAML, 'utf8')), YAML, {}), fromGuidellm(load(OLD), OLD, {})];
  for (const run of runs) {
    const back = parseRunFile(serializeRunFile(run), 'imported');
    assert.deepEqual(back.importedFrom, run.importedFrom);
    assert.equal(back.requests.length, run.requests.length);
    assert.deepEqual(back.summary.ttftMs, run.summary.ttftMs);
    assert.equal(back.sweep?.points.length, run.sweep?.points.length);
  }
});

test('isGuidellm: not a vLLM result, an AIPerf aggregate or a run file', () => {
  assert.equal(isGuidellm({ date: '20250101-000000', backend: 'vllm', ttfts: [0.1], itls: [[]] }), false);
  assert.equal(isGuidellm({ records: {}, input_config: {} }), false);
  assert.equal(isGuidellm({ format: 'llm-profiler-run', requests: [] }), false);
  assert.equal(isGuidellm([]), false);
  assert.equal(isGuidellm({ benchmarks: [] , metadata: { version: 1, guidellm_version: '0.4.0' } }), true);
});

test('GuideLLM through importBenchmarkFile: JSON and YAML told from their content', async () => {
  const json = await importBenchmarkFile(SWEEP);
  assert.equal(json.importedFrom?.tool, 'guidellm');
  assert.equal(json.sweep?.points.length, 5);
  const yaml = await importBenchmarkFile(YAML);
  assert.equal(yaml.importedFrom?.tool, 'guidellm');
  assert.equal(yaml.summary.completed, 14);
});
