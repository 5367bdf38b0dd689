import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formatProgressLine, formatRunTable, formatErrors, formatStalls } from '../../src/present/runText';
import { summarize } from '../../src/engine/analysis/metrics';
import { defaultWorkload } from '../../src/engine/core/workload';
import { promptWords } from '../../src/present/workloadText';
import type { RequestRecord, RunFile } from '../../src/engine/core/types';

function run(requests: RequestRecord[], slo?: { ttftMs: number }): RunFile {
  const workload = defaultWorkload({ percentiles: [50, 90, 99], ...(slo ? { slo } : {}) });
  return {
    format: 'llm-profiler.run', version: 1, id: 'x', startedAt: '2026-01-01T00:00:00Z', tool: { name: 'llm-profiler', version: '0.0.0' },
    endpoint: { url: 'http://127.0.0.1:8000', api: 'openai-chat', model: 'm' }, workload, requests, summary: summarize(requests, workload, { durationS: 1 }),
  };
}

const ok = (index: number, times: number[]): RequestRecord => ({ index, warmup: false, scheduledAt: 0, sentAt: 0, ttftMs: times[0], e2eMs: times[times.length - 1], outputTokens: times.length, tokenSource: 'usage', chunkTimesMs: times });

test('progress line: done/total, in flight, TTFT p50, tokens/s', () => {
  assert.equal(formatProgressLine({ runId: 'r', succeeded: 3, failed: 0, finished: 3, total: 10, inFlight: 2, ttftP50Ms: 312.4, outputTokensPerSecond: 421.26, elapsedS: 3.21 }), '3/10 done · 2 in flight · TTFT p50 312 ms · 421.3 tok/s · 3.2 s');
  assert.equal(formatProgressLine({ runId: 'r', succeeded: 0, failed: 1, finished: 1, inFlight: 0, elapsedS: 0 }), '1 done (1 failed) · 0 in flight · 0.0 s');
});

test('the table: a row per metric, a column per percentile, the goodput, stalls and errors lines', () => {
  const r = run([ok(0, [100, 110, 120, 300, 310]), ok(1, [90, 100, 110])], { ttftMs: 95 });
  const t = formatRunTable(r);
  assert.match(t, /Metric \(ms\)\s+mean\s+p50\s+p90\s+p99\s+n/);
  assert.match(t, /^TTFT\s+95\.00\s+95\.00\s+99\.00\s+99\.90\s+2$/m);
  assert.match(t, /^ITL\s/m);
  assert.match(t, /Request goodput \(req\/s\):\s+1\.00\s+\(SLO ttft=95\)/);
  assert.match(t, /SLO: MISSED at p99: ttft/);
  assert.match(t, /Stalls: 1 \(cause not shown 1\), 180 ms summed over the streams/);
  assert.match(t, /Errors: none/);
  assert.match(t, /counted from server usage/);
  // another tool's result: that tool counted them (usage or its own tokenizer; its file does not say which)
  const imported = formatRunTable({ ...r, importedFrom: { tool: 'aiperf', file: 'profile_export.jsonl', startTimes: 'absolute' } });
  assert.match(imported, /^Total generated tokens:\s+8 \(as AIPerf counted them\)$/m);
  assert.doesNotMatch(imported, /server usage/);
});

test('empty metrics show a dash, errors are listed by kind and HTTP status', () => {
  const failed: RequestRecord = { index: 0, warmup: false, scheduledAt: 0, sentAt: 0, outputTokens: 0, tokenSource: 'chunks', chunkTimesMs: [], error: { kind: 'http', status: 500, message: 'HTTP 500' } };
  const r = run([failed]);
  assert.match(formatRunTable(r), /^TTFT\s+–\s+–\s+–\s+–\s+0$/m);
  assert.equal(formatErrors(r.summary), 'Errors: 1 of 1 (http 1: 500 ×1)');
  assert.match(formatRunTable(r), /^ {2}first: request 0: HTTP 500$/m);
  assert.match(formatStalls(r.summary), /^Stalls: none \(no gap between two chunks/);
});

test('an imported run\'s prompts are as its tool counted them: no "server counted", nothing "asked" of ours', () => {
  // as importers/vllm.ts records them: synthetic prompts of the mean input length, each request's count from the tool's tokenizer
  const requests = [298, 250, 341].map((n, i) => ({ ...ok(i, [100, 110]), promptTokens: n }));
  const base = run(requests);
  const imported: RunFile = { ...base, workload: { ...base.workload, prompt: { kind: 'synthetic', tokens: 296, sharedPrefix: false } },
    importedFrom: { tool: 'vllm', file: 'result.json', startTimes: 'relative' } };
  const t = formatRunTable(imported);
  assert.match(t, /^Prompts:\s+298-token prompts as vLLM counted them \(250–341\)$/m);
  assert.doesNotMatch(t, /server counted|asked/);
  assert.equal(promptWords(imported, true), '298-token prompts as vLLM counted them', 'the run list\'s few words');
  // a file with no count per request: the tool's mean
  const means: RunFile = { ...imported, requests: requests.map(({ promptTokens: _p, ...r }) => r) };
  assert.equal(promptWords(means), '296-token prompts on average, as vLLM counted them');
  // a run of ours says the server's count beside the length asked, as before
  assert.match(promptWords({ ...imported, importedFrom: undefined }), /^298-token prompts as the server counted them \(250–341; 296 asked\)$/);
});
