import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { aiperfAggregateAlone, fromAiperf, isAiperfAggregate, isAiperfRecord } from '../../src/engine/files/importers/aiperf';
import { importBenchmarkFile } from '../../src/engine/files/importers/index';
import { ImportError } from '../../src/engine/files/importers/common';
import { parseRunFile, serializeRunFile } from '../../src/engine/files/runFile';
import type { RunFile, Stats } from '../../src/engine/core/types';

// Fixtures: test/fixtures/aiperf/README.md (AIPerf's example artifacts' shape and its later one).
const DIR = join(__dirname, '..', 'fixtures', 'aiperf');
const OLD = join(DIR, 'run-2025-10', 'profile_export.jsonl');
const OLD_AGG = join(DIR, 'run-2025-10', 'profile_export_aiperf.json');
const NEW = join(DIR, 'run-2026', 'profile_export.jsonl');
const NEW_AGG = join(DIR, 'run-2026', 'profile_export_aiperf.json');

// The parts of AIPerf's files the tests read: a JsonMetricResult, a record line.
type MetricResult = Record<string, number>;
type Aggregate = Record<string, MetricResult>;
interface Line {
  metadata: Record<string, number>;
  metrics: Record<string, { value: number | number[]; unit: string }>;
}
const aggregate = (path: string): Aggregate => JSON.parse(text(path)) as Aggregate;
const recordsOf = (path: string): Aggregate => (JSON.parse(text(path)) as { records: Aggregate }).records;
const linesOf = (path: string): Line[] => text(path).trim().split('\n').map((l) => JSON.parse(l) as Line);
const text = (path: string) => readFileSync(path, 'utf8');
const ALL = [1, 5, 10, 25, 50, 75, 90, 95, 99];

const close = (a: number, b: number, what: string) => assert.ok(Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(b)), `${what}: ${a} vs ${b}`);

/** Ours against AIPerf's JsonMetricResult: the same method (numpy linear percentiles, population std), so the same figures. */
function assertSame(ours: Stats, theirs: MetricResult, what: string) {
  if (theirs.count !== undefined) assert.equal(ours.count, theirs.count, `${what} count`);
  close(ours.mean, theirs.avg!, `${what} avg`);
  close(ours.std, theirs.std!, `${what} std`);
  close(ours.min, theirs.min!, `${what} min`);
  close(ours.max, theirs.max!, `${what} max`);
  for (const p of ALL) close(ours[`p${p}`]!, theirs[`p${p}`]!, `${what} p${p}`);
}

test('AIPerf (later shape): TTFT, TPOT (its inter_token_latency), E2E (request_latency) and ITL (inter_chunk_latency) equal AIPerf\'s figures', async () => {
  const run = await fromAiperf(NEW, text(NEW), { percentiles: ALL });
  const agg = aggregate(NEW_AGG);
  assert.deepEqual(
    { tool: run.importedFrom?.tool, version: run.importedFrom?.version, files: run.importedFrom?.files, startTimes: run.importedFrom?.startTimes, missing: run.importedFrom?.missing },
    { tool: 'aiperf', version: '0.5.0', files: [NEW_AGG], startTimes: 'absolute', missing: undefined },
  );
  assertSame(run.summary.ttftMs, agg.time_to_first_token!, 'TTFT');
  assertSame(run.summary.tpotMs, agg.inter_token_latency!, 'TPOT');
  assertSame(run.summary.e2eMs, agg.request_latency!, 'E2E');
  assertSame(run.summary.itlMs, agg.inter_chunk_latency!, 'ITL');
  assert.equal(run.summary.completed, agg.request_count!.avg);
  close(run.summary.durationS, agg.benchmark_duration!.avg!, 'duration');
  assert.equal(run.importedFrom?.reported?.['time_to_first_token.p99'], agg.time_to_first_token!.p99);
  assert.equal(run.importedFrom?.reported?.['request_throughput.avg'], agg.request_throughput!.avg);
  // how it was sent, from input_config
  assert.equal(run.workload.mode.kind, 'open');
  assert.equal(run.workload.mode.kind === 'open' && run.workload.mode.rate, 4);
  assert.deepEqual(run.endpoint, { url: 'http://127.0.0.1:8000', api: 'openai-completions', model: 'Qwen/Qwen3-0.6B' });
  // the failed request, as AIPerf recorded it
  const failed = run.requests.filter((r) => r.error);
  assert.equal(failed.length, 1);
  assert.deepEqual(failed[0]!.error, { kind: 'http', message: 'Service Unavailable: {"error": "the engine is overloaded, retry later"}', status: 503 });
  assert.equal(failed[0]!.httpStatus, 503);
  assert.equal(run.summary.errorsByStatus?.['503'], 1);
});

test('AIPerf: each request placed at its own start, its chunks rebuilt from inter_chunk_latency, ending at request_latency', async () => {
  const run = await fromAiperf(NEW, text(NEW), {});
  const byStart = new Map(linesOf(NEW).map((l) => [l.metadata.request_start_ns! / 1e6, l.metrics]));
  for (const r of run.requests) {
    const m = byStart.get(r.sentAt)!;
    assert.ok(m !== undefined, `a line starts at ${r.sentAt}`);
    if (r.error) continue;
    assert.equal(r.ttftMs, m.time_to_first_token!.value);
    assert.equal(r.chunkTimesMs.length, m.output_sequence_length!.value);
    const icl = m.inter_chunk_latency!.value as number[];
    assert.equal(r.chunkTimesMs[0], r.ttftMs);
    const gaps = r.chunkTimesMs.slice(1).map((t, i) => t - r.chunkTimesMs[i]!);
    gaps.forEach((g, i) => assert.ok(Math.abs(g - icl[i]!) < 1e-9));
    assert.ok(Math.abs(r.chunkTimesMs.at(-1)! - r.e2eMs!) < 1e-6, 'the last chunk is request_latency');
    assert.equal(r.promptTokens, 550);
  }
  assert.ok(run.summary.stalls.count > 0, 'the stalls in the chunk gaps are found');
});

test('AIPerf (example artifacts\' shape): records under "records", warmup left out, cancelled requests aborted, reasoning tokens kept', async () => {
  const run = await fromAiperf(OLD, text(OLD), { percentiles: ALL });
  const agg = recordsOf(OLD_AGG);
  assert.equal(run.importedFrom?.version, undefined, 'this shape names no version');
  assert.deepEqual(run.importedFrom?.files, [OLD_AGG]);
  assert.deepEqual(run.importedFrom?.missing, ['time to first output token (after the reasoning): this AIPerf file has reasoning tokens but no time_to_first_output_token']);
  assertSame(run.summary.ttftMs, agg.ttft!, 'TTFT');
  assertSame(run.summary.tpotMs, agg.inter_token_latency!, 'TPOT');
  assertSame(run.summary.e2eMs, agg.request_latency!, 'E2E');
  assertSame(run.summary.itlMs, agg.inter_chunk_latency!, 'ITL');
  assert.equal(run.summary.completed, agg.request_count!.avg);
  // AIPerf counts its cancelled requests among its errors; here they are cancelled, apart from failures
  assert.equal(run.summary.failed + (run.summary.cancelled ?? 0), agg.error_request_count!.avg);
  assert.equal(run.requests.filter((r) => r.warmup).length, 2);
  const cancelled = run.requests.filter((r) => r.error);
  assert.equal(cancelled.length, 3);
  for (const r of cancelled) assert.deepEqual(r.error, { kind: 'aborted', message: 'RequestCancellationError: Request was cancelled after 0.000 seconds' });
  // the first cancelled line of AIPerf's example, at its own start
  assert.ok(run.requests.some((r) => r.error && r.sentAt === Number('1759522419154829652') / 1e6));
  assert.ok(run.requests.filter((r) => !r.error).every((r) => (r.reasoningTokens ?? 0) > 0 && r.reasoningTokens! < r.outputTokens));
  assert.deepEqual(run.workload.mode, { kind: 'closed', concurrency: 8 });
  assert.deepEqual(run.endpoint, { url: 'http://localhost:9000', api: 'openai-chat', model: 'openai/gpt-oss-20b' });
  assert.equal(run.workload.maxTokens, 250);
});

function scratch(): string {
  return mkdtempSync(join(tmpdir(), 'aiperf-import-'));
}

test('AIPerf without its profile_export_aiperf.json: imported, and missing says what is not known', async () => {
  const dir = scratch();
  try {
    const file = join(dir, 'profile_export.jsonl');
    copyFileSync(NEW, file);
    const run = await fromAiperf(file, text(file), {});
    assert.equal(run.importedFrom?.files, undefined);
    assert.equal(run.importedFrom?.version, undefined);
    assert.equal(run.importedFrom?.reported, undefined);
    assert.deepEqual(run.importedFrom?.missing, [
      "how the requests were sent (concurrency or rate) and AIPerf's own figures: profile_export_aiperf.json was not beside the file",
    ]);
    assert.equal(run.summary.completed, 20);
    // a malformed aggregate beside it is named, and the requests still come in
    writeFileSync(join(dir, 'profile_export_aiperf.json'), '{"records": ');
    const again = await fromAiperf(file, text(file), {});
    assert.match(again.importedFrom!.missing![0]!, /^profile_export_aiperf\.json beside the file is not JSON \(.+\): AIPerf's settings and figures are left out$/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('AIPerf: records without inter_chunk_latency have no chunk times, and missing says how many', async () => {
  const lines = linesOf(NEW);
  for (const l of lines.slice(0, 5)) delete l.metrics.inter_chunk_latency;
  const run = await fromAiperf('x.jsonl', lines.map((l) => JSON.stringify(l)).join('\n'), {});
  const bare = run.requests.filter((r) => !r.error && r.chunkTimesMs.length === 0);
  assert.equal(bare.length, 5);
  for (const r of bare) assert.ok(r.tpotMs !== undefined && r.e2eMs !== undefined, 'TPOT and E2E without the chunks');
  assert.ok(run.importedFrom?.missing?.includes('chunk arrival times: AIPerf wrote no inter_chunk_latency for 5 of 20 streamed requests, so those have no inter-token latencies (ITL), stalls or per-chunk timeline'));
});

test('AIPerf bad input: a malformed line (by number), a line that is no record, an empty file, the aggregate given alone', async () => {
  const lines = text(NEW).split('\n');
  const broken = [...lines.slice(0, 2), lines[2]!.slice(0, 80), ...lines.slice(3)].join('\n');
  await assert.rejects(fromAiperf('p.jsonl', broken, {}), (e: Error) => {
    assert.ok(e instanceof ImportError);
    assert.match(e.message, /^p\.jsonl: line 3 is not JSON \(.+\); each line of AIPerf's profile_export\.jsonl is one JSON record$/);
    return true;
  });
  const stranger = [lines[0], '{"hello": "world"}', lines[1]].join('\n');
  await assert.rejects(fromAiperf('p.jsonl', stranger, {}), /p\.jsonl: line 2 is not an AIPerf record: it needs "metadata" \(with request_start_ns or timestamp_ns\) and "metrics"/);
  await assert.rejects(fromAiperf('p.jsonl', '\n\n', {}), /p\.jsonl: no AIPerf records: the file is empty/);
  const aggregate = /profile_export_aiperf\.json: this is AIPerf's aggregate \(profile_export_aiperf\.json\): it holds AIPerf's summary figures, not the requests\. Open the profile_export\.jsonl beside it/;
  await assert.rejects(fromAiperf(NEW_AGG, text(NEW_AGG), {}), aggregate);
  await assert.rejects(fromAiperf(OLD_AGG, JSON.stringify(JSON.parse(text(OLD_AGG))), {}), aggregate);
  assert.match(aiperfAggregateAlone(NEW_AGG).message, aggregate);
  await assert.rejects(importBenchmarkFile(OLD_AGG), aggregate);
  await assert.rejects(importBenchmarkFile(NEW_AGG), aggregate);
});

test('AIPerf imports save and reopen as run files', async () => {
  for (const file of [OLD, NEW]) {
    const run = await fromAiperf(file, text(file), {});
    const back = parseRunFile(serializeRunFile(run), 'imported');
    assert.deepEqual(back.importedFrom, run.importedFrom);
    assert.deepEqual(back.requests.map((r) => r.chunkTimesMs.length), run.requests.map((r) => r.chunkTimesMs.length));
    assert.deepEqual(back.summary.tpotMs, run.summary.tpotMs);
  }
});

test('isAiperfRecord and isAiperfAggregate tell AIPerf\'s files from others', () => {
  assert.equal(isAiperfRecord(JSON.parse(text(NEW).split('\n')[0]!)), true);
  assert.equal(isAiperfRecord(JSON.parse(text(OLD).split('\n')[0]!)), true);
  assert.equal(isAiperfRecord({ metadata: {}, metrics: {} }), false);
  assert.equal(isAiperfRecord({ benchmarks: [] }), false);
  assert.equal(isAiperfAggregate(JSON.parse(text(NEW_AGG))), true);
  assert.equal(isAiperfAggregate(JSON.parse(text(OLD_AGG))), true);
  assert.equal(isAiperfAggregate({ benchmarks: [], metadata: { version: 1 } }), false);
});

test('AIPerf through importBenchmarkFile: the .jsonl told from its first line, the aggregate read beside it', async () => {
  const run: RunFile = await importBenchmarkFile(OLD);
  assert.equal(run.importedFrom?.tool, 'aiperf');
  assert.deepEqual(run.importedFrom?.files, [OLD_AGG]);
  assert.equal(run.summary.completed, 24);
});
