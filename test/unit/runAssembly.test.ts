// The run file assembled from a run's parts: one place that redacts the endpoint.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { assembleRunFile } from '../../src/engine/run/runAssembly';
import { redactEndpoint } from '../../src/engine/core/redact';
import { parseRunFile, serializeRunFile } from '../../src/engine/files/runFile';
import { TOOL_VERSION } from '../../src/engine/core/runFormat';
import { defaultWorkload } from '../../src/engine/core/workload';
import type { RequestRecord } from '../../src/engine/core/types';

const requests: RequestRecord[] = [
  { index: 0, warmup: false, scheduledAt: 1000, sentAt: 1000, outputTokens: 3, tokenSource: 'usage', chunkTimesMs: [10, 20, 30], ttftMs: 10, e2eMs: 30, lastByteMs: 31, tpotMs: 10 },
];

test('redactEndpoint: no credentials in the URL, credential-like header values redacted, the rest kept', () => {
  const e = redactEndpoint({ name: 'n', url: 'https://alice:s3cret@gw.example/v1', api: 'openai-chat', model: 'm', headers: { Authorization: 'Bearer sk-1', 'X-Team': 'perf' }, apiKeyHeader: 'api-key' });
  assert.deepEqual(e, { name: 'n', url: 'https://gw.example/v1', api: 'openai-chat', model: 'm', headers: { Authorization: '<redacted>', 'X-Team': 'perf' }, apiKeyHeader: 'api-key' });
  assert.deepEqual(redactEndpoint({ url: 'http://127.0.0.1:8000', api: 'ollama' }), { url: 'http://127.0.0.1:8000', api: 'ollama' });
});

test('assembleRunFile: the format head, the redacted endpoint, the summary over the measured span', () => {
  const workload = defaultWorkload({ requests: 1, warmup: 0 });
  const run = assembleRunFile({
    id: 'r1', startedAt: '2026-12-02T15:04:05.000Z', endedAt: '2026-12-02T15:04:06.000Z', cancelled: true,
    endpoint: { url: 'http://u:p@127.0.0.1:9/v1', api: 'openai-chat', headers: { 'X-Api-Key': 'k-1' } },
    detectedApi: true, workload, connection: { connections: 1, connectMs: [1.5] }, requests, durationS: 2,
  });
  assert.equal(run.format, 'llm-profiler.run');
  assert.equal(run.version, 1);
  assert.deepEqual(run.tool, { name: 'llm-profiler', version: TOOL_VERSION });
  assert.equal(run.cancelled, true);
  assert.deepEqual(run.endpoint, { url: 'http://127.0.0.1:9/v1', api: 'openai-chat', headers: { 'X-Api-Key': '<redacted>' }, detectedApi: true });
  assert.equal(run.summary.durationS, 2);
  assert.equal(run.summary.requestsPerSecond, 0.5);
  assert.deepEqual(parseRunFile(serializeRunFile(run)), JSON.parse(JSON.stringify(run)));
  const plain = assembleRunFile({ id: 'r2', startedAt: 'a', endedAt: 'b', cancelled: false, endpoint: { url: 'http://h', api: 'llamacpp' }, workload, requests: [], durationS: 0 });
  assert.equal('cancelled' in plain || 'connection' in plain || 'detectedApi' in plain.endpoint, false);
});
