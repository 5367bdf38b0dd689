// Connection reuse against the real llama.cpp llama-server, which closes every connection that
// carried a stream 0.2 to 8 ms after its last chunk although it answered `Keep-Alive: timeout=5,
// max=100` (cpp-httplib, see src/engine/transport/retry.ts). Skipped, saying why, when no llama-server binary
// is found: `npm run build:llama-server` builds one (about 10 minutes on 2 cores), or put one on PATH.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { runWorkload } from '../../src/engine/run/runner';
import { defaultWorkload } from '../../src/engine/core/workload';
import type { RequestRecord, RunFile } from '../../src/engine/core/types';
import { startLocalServer } from '../../src/localServer/launcher';
import type { LocalServerHandle } from '../../src/localServer/types';
import { findLlamaServer } from '../../src/localServer/paths';
import { ensureSyntheticModel, PRESETS } from '../../src/localServer/synthetic';
import { startTcpRelay } from '../support/tcpRelay';

const binary = findLlamaServer();
const skip = binary ? false : 'no llama-server binary on PATH or in the cache (npm run build:llama-server builds one)';
if (skip) console.log(`# skipped: ${skip}`);

let server: LocalServerHandle | undefined;

before(async () => {
  if (skip) return;
  const modelPath = await ensureSyntheticModel(PRESETS.tiny);
  server = await startLocalServer({ backend: 'llama-server', model: { kind: 'file', path: modelPath }, parallel: 4, threads: 1, ctxSize: 4 * 1024 });
});

after(async () => {
  await server?.stop();
});

/** llama-server's own count of generated tokens (its /metrics, on with --metrics as the launcher starts it). */
async function tokensPredicted(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const m = /^llamacpp:tokens_predicted_total (\d+(?:\.\d+)?)/m.exec(text);
  assert.ok(m, 'llamacpp:tokens_predicted_total in /metrics');
  return Number(m[1]);
}

const retriesOf = (requests: readonly RequestRecord[]): number => requests.reduce((n, r) => n + (r.retries?.length ?? 0), 0);

async function profile(url: string): Promise<RunFile> {
  return runWorkload(
    { url, api: 'openai-chat', model: server!.model },
    defaultWorkload({ mode: { kind: 'closed', concurrency: 4 }, requests: 32, warmup: 1, maxTokens: 8, prompt: { kind: 'synthetic', tokens: 32, sharedPrefix: false } }),
  );
}

/** Every request was generated once: the server's token count grew by exactly what the records got. */
async function assertGeneratedOnce(run: RunFile, before: number): Promise<void> {
  const after = await tokensPredicted(server!.url);
  const got = run.requests.reduce((n, r) => n + r.outputTokens, 0);
  assert.equal(after - before, got, `llama-server generated ${after - before} tokens for ${run.requests.length} requests that received ${got}`);
}

test('llama-server, concurrency 4 × 32 requests: no request fails to connection reuse; each retry is recorded and the server generated each request once', { skip }, async () => {
  const before = await tokensPredicted(server!.url);
  const run = await profile(server!.url);
  const retries = run.requests.flatMap((r) => r.retries ?? []);
  console.log(`# llama-server direct: ${run.summary.failed} failed, ${retries.length} sent again after a closed connection`);
  assert.equal(run.summary.failed, 0, JSON.stringify(run.requests.filter((r) => r.error).map((r) => r.error)));
  for (const t of retries) {
    assert.equal(t.reason, 'connection-closed');
    assert.equal(t.error.kind, 'reset');
  }
  await assertGeneratedOnce(run, before);
});

test('llama-server behind a relay that passes its FIN on 20 ms late: every request it drops unanswered is sent again, and none is answered twice', { skip }, async () => {
  // The relay widens the server's own window (its FIN 0.2 to 8 ms after the last chunk) so that a
  // slot's next request lands in it every time, and counts what the server closes on unanswered.
  const relay = await startTcpRelay(Number(new URL(server!.url).port), { delayServerFinMs: 20 });
  try {
    const before = await tokensPredicted(server!.url);
    const run = await profile(relay.url);
    const dropped = relay.unanswered().filter((e) => e.what?.startsWith('POST'));
    console.log(`# llama-server via relay: ${run.summary.failed} failed, ${dropped.length} requests dropped unanswered by the server, ${retriesOf(run.requests)} sent again`);
    assert.equal(run.summary.failed, 0, JSON.stringify(run.requests.filter((r) => r.error).map((r) => r.error)));
    assert.ok(dropped.length >= 4, `the server closed ${dropped.length} connections under a request it had received`);
    assert.equal(retriesOf(run.requests), dropped.length, 'one retry per request the server dropped');
    // the server closed every connection that carried a stream, whatever its Keep-Alive header said
    const streamed = new Set(relay.events.filter((e) => e.kind === 'request' && e.what?.startsWith('POST')).map((e) => e.conn));
    const serverClosed = new Set(relay.events.filter((e) => e.kind === 'server-fin').map((e) => e.conn));
    for (const c of streamed) assert.ok(serverClosed.has(c), `connection ${c} carried a stream and the server closed it`);
    await assertGeneratedOnce(run, before);
  } finally {
    await relay.close();
  }
});
