// The pure parts of the extension's endpoint flows: which URLs need no key, whether the bundled local
// server can load from the extension's own files, what its absence says, the last target remembered
// by any path (a typed URL with the API picked for it), and the undetected-API error the extension
// rewords (the CLI's "pass --api" message unchanged).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { detectApi, reachable } from '../../src/engine/transport/detect';
import { isLoopbackUrl } from '../../src/engine/transport/loopback';
import type { EndpointEntry } from '../../src/extension/configModel';
import { BUNDLED_MISSING, bundledBackendAvailable, startFailure } from '../../src/extension/bundledBackend';
import { Targets, type TargetMemory } from '../../src/extension/targets';
import type { ConfigService } from '../../src/extension/config';
import type { ApiKeys } from '../../src/extension/secrets';
import type { TrustGate } from '../../src/extension/trust';
import type { Log } from '../../src/extension/log';
import { startScriptedServer } from '../support/scriptedServer';

test('a server on this machine needs no key: localhost, 127.0.0.0/8, ::1; nothing else', () => {
  for (const u of ['http://localhost:8080', 'http://127.0.0.1:8000/v1', 'http://127.1.2.3', 'http://[::1]:11434', 'http://ollama.localhost']) assert.equal(isLoopbackUrl(u), true, u);
  for (const u of ['https://api.openai.com', 'http://10.0.0.2:8000', 'http://127.0.0.1.evil.example', 'http://localhost.example.com', 'not a url']) assert.equal(isLoopbackUrl(u), false, u);
});

test('the bundled backend is looked for from the extension\'s own files, once', () => {
  assert.equal(bundledBackendAvailable(join(__dirname, '..', '..', 'dist')), true, 'a checkout after npm ci has node-llama-cpp');
  const bare = mkdtempSync(join(tmpdir(), 'llmp-no-nlc-'));
  try {
    assert.equal(bundledBackendAvailable(bare), false, 'an install folder without node_modules has none');
    assert.equal(bundledBackendAvailable(bare), false, 'cached');
  } finally {
    rmSync(bare, { recursive: true, force: true });
  }
});

test('a start that fails for want of node-llama-cpp says it is not bundled here, and how to go on', () => {
  const err = new Error("Cannot find package 'node-llama-cpp' imported from /ext/dist/localServer.mjs");
  const f = startFailure(err, 'bundled');
  assert.equal(f.bundledMissing, true);
  assert.equal(f.short, BUNDLED_MISSING);
  assert.match(f.short, /not bundled on this platform.*node-llama-cpp.*llama-server binary.*add an endpoint/);
  assert.match(f.message, /llmProfiler\.localServer\.backend.*Details:\nCannot find package/s);
  const other = startFailure(new Error('port in use'), 'bundled');
  assert.deepEqual(other, { message: 'port in use', short: 'port in use', bundledMissing: false });
  assert.equal(startFailure(err, 'llama-server').bundledMissing, false);
});

function fakeMemory(): TargetMemory & { data: Map<string, unknown> } {
  const data = new Map<string, unknown>();
  return { data, get: <T>(k: string) => data.get(k) as T | undefined, update: (k: string, v: unknown) => { data.set(k, v); return Promise.resolve(); } };
}

test('the last target is remembered whatever path ran it; a typed URL keeps the API picked for it', async () => {
  const entry: EndpointEntry = { name: 'vllm', url: 'http://gpu:8000', api: 'auto', origin: 'user' };
  const config = { current: { endpoints: [entry] } } as unknown as ConfigService;
  const memory = fakeMemory();
  const targets = new Targets(config, {} as ApiKeys, {} as TrustGate, {} as Log, memory);
  let told = 0;
  targets.onDidRemember(() => told++);
  assert.equal(targets.last, undefined);
  await targets.remember({ kind: 'configured', entry });
  assert.equal(targets.last, 'vllm');
  assert.deepEqual(targets.find(targets.last!), { kind: 'configured', entry });
  await targets.remember({ kind: 'url', url: 'http://127.0.0.1:9000', api: 'openai-chat' });
  assert.equal(targets.last, 'http://127.0.0.1:9000');
  assert.deepEqual(targets.find(targets.last!), { kind: 'url', url: 'http://127.0.0.1:9000', api: 'openai-chat' }, 'not asked again');
  assert.deepEqual(targets.find('http://other:1'), { kind: 'url', url: 'http://other:1' });
  await targets.remember({ kind: 'local' });
  assert.equal(targets.last, 'local');
  assert.equal(told, 3);
  await targets.remember({ kind: 'local' });
  assert.equal(told, 3, 'the same target again changes nothing');
});

test('an API no probe can tell: the CLI\'s message says --api; the error also says what the server answered, for the extension to ask', async () => {
  const server = await startScriptedServer({ apis: [] });
  try {
    const err = await detectApi(server.url).then(() => undefined, (e: unknown) => e as Error & { apiUndetected?: boolean; seen?: string });
    assert.ok(err, 'detection failed');
    assert.equal(err.name, 'PreflightError');
    assert.match(err.message, /could not tell which API .* speaks \(GET .*\); pass --api openai-chat\|/);
    assert.equal(err.apiUndetected, true);
    assert.match(err.seen ?? '', /\/api\/tags → 404/);
  } finally {
    await server.close();
  }
});

test('reachable: a server that answers at all is reachable, a URL with no path included (the sidebar\'s dot)', async () => {
  const server = await startScriptedServer({ apis: ['openai-chat'] });
  const url = server.url;
  try {
    assert.equal(await reachable(url, 3000), true, 'no path: GET /');
    assert.equal(await reachable(`${url}/v1`, 3000), true);
    assert.equal(await reachable(`${url}?team=a`, 3000), true, 'a query only');
  } finally {
    await server.close();
  }
  assert.equal(await reachable(url, 1000), false, 'closed');
});
