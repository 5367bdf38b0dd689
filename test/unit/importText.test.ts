// What an imported run says about itself (src/present/importText.ts), over the importers' own fixture
// files read by the real importers: its name, its line, its timeline notes, and the tool's figures
// set beside ours only where the name says which of ours it is and in what unit.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { importBenchmarkFile } from '../../src/engine/files/importers/index';
import type { RunFile } from '../../src/engine/core/types';
import { fileBaseName, importedLine, importedNameParts, reportedRows, timelineNotes } from '../../src/present/importText';

const fixtures = join(__dirname, '..', 'fixtures');
const chunksOf = (run: RunFile) => run.requests.reduce((n, r) => n + r.chunkTimesMs.length, 0);

test('vLLM: every figure of vLLM\'s that names one of ours agrees with ours; the rest are left unmatched', async () => {
  const run = await importBenchmarkFile(join(fixtures, 'vllm', 'concurrency2.json'));
  const rows = reportedRows(run.importedFrom, run.summary);
  const by = new Map(rows.map((r) => [r.key, r]));
  assert.equal(by.get('median_ttft_ms')?.oursLabel, 'TTFT median');
  assert.equal(by.get('p99_itl_ms')?.ours, run.summary.itlMs.p99);
  assert.equal(by.get('mean_e2el_ms')?.ours, run.summary.e2eMs.mean);
  assert.equal(by.get('output_throughput')?.ours, run.summary.outputTokensPerSecond);
  for (const key of ['duration', 'num_prompts', 'total_token_throughput', 'max_concurrency']) if (by.has(key)) assert.equal(by.get(key)!.ours, undefined, key);
  const matched = rows.filter((r) => r.ours !== undefined);
  assert.ok(matched.length >= 30, `${matched.length} matched`);
  for (const r of matched) assert.ok(Math.abs(r.ours! - r.value) <= 1e-9 * Math.max(1, Math.abs(r.value)), `${r.key}: vLLM ${r.value}, ours ${r.ours}`);
  assert.deepEqual(timelineNotes(run, chunksOf(run)), [], 'chunk times and start times: nothing to say');
  assert.match(importedLine(run.importedFrom!), /^Imported from vLLM( \S+)? · concurrency2\.json$/);
});

test('GuideLLM: its inter-token latency is our TPOT, its request latency is in seconds, its other names are none of ours', async () => {
  const run = await importBenchmarkFile(join(fixtures, 'guidellm', 'concurrent-v1.yaml'));
  const by = new Map(reportedRows(run.importedFrom, run.summary).map((r) => [r.key, r]));
  assert.equal(by.get('inter_token_latency_ms.successful.median')?.ours, run.summary.tpotMs.p50);
  assert.equal(by.get('inter_token_latency_ms.successful.median')?.oursLabel, 'TPOT median');
  assert.equal(by.get('request_latency.successful.p99')?.ours, run.summary.e2eMs.p99 / 1000);
  assert.equal(by.get('time_to_first_token_ms.successful.std_dev')?.ours, run.summary.ttftMs.std);
  for (const key of ['time_per_output_token_ms.successful.mean', 'time_to_first_output_token_ms.successful.median', 'requests_per_second.successful.mean', 'time_to_first_token_ms.successful.count']) {
    assert.ok(by.has(key), `${key} reported`);
    assert.equal(by.get(key)!.ours, undefined, `${key} is none of ours`);
  }
  // no chunk times: the timeline says so in the importer's words
  assert.equal(chunksOf(run), 0);
  const [note, ...rest] = timelineNotes(run, 0);
  assert.match(note!, /^No per-token ticks: GuideLLM keeps the first and last token times only/);
  assert.deepEqual(rest, [], 'GuideLLM has start times');
  const name = importedNameParts(run)!;
  assert.match(name.what, /^GuideLLM c=\d+ · \d+ req · concurrent-v1\.yaml$/);
  assert.equal(name.endpointName, run.endpoint.url);
});

test('AIPerf: its inter-chunk latency is our ITL and its inter-token latency our TPOT, both in ms', async () => {
  const run = await importBenchmarkFile(join(fixtures, 'aiperf', 'run-2026', 'profile_export.jsonl'));
  const by = new Map(reportedRows(run.importedFrom, run.summary).map((r) => [r.key, r]));
  assert.equal(by.get('inter_chunk_latency.p99')?.oursLabel, 'ITL p99');
  assert.equal(by.get('inter_chunk_latency.p99')?.ours, run.summary.itlMs.p99);
  assert.equal(by.get('inter_token_latency.avg')?.ours, run.summary.tpotMs.mean);
  assert.equal(by.get('request_latency.p50')?.ours, run.summary.e2eMs.p50);
  assert.equal(by.get('request_throughput.avg')?.ours, run.summary.requestsPerSecond);
  assert.equal(by.get('time_to_second_token.p50')?.ours, undefined);
});

test('a file without start times: lanes not placed in time; a file without chunk times and no word on them: a plain reason', () => {
  const from = { tool: 'vllm', file: 'C:\\runs\\old.json', startTimes: 'none', missing: ['the endpoint URL'] } as const;
  assert.deepEqual(timelineNotes({ importedFrom: from }, 0), [
    "No per-token ticks: vLLM's file has no chunk arrival times.",
    "Lanes are not placed in time: vLLM's file has no request start times, so every request is drawn from the run's start (read no overlap or concurrency from them).",
  ]);
  assert.deepEqual(timelineNotes({}, 0), [], 'a measured run');
  assert.equal(fileBaseName('C:\\runs\\old.json'), 'old.json');
  assert.equal(fileBaseName('/data/benchmarks.json'), 'benchmarks.json');
  assert.equal(importedLine(from), 'Imported from vLLM · old.json');
});
