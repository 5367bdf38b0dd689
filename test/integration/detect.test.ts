import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import type { AddressInfo, Socket } from 'node:net';
import { detectApi, preflight, PreflightError } from '../../src/engine/transport/detect';
import { closedPort } from '../support/listen';
import { withServer } from '../support/withServer';

const preflightError = (pattern: RegExp) => (err: unknown) => {
  assert.ok(err instanceof PreflightError, `a PreflightError, got ${String(err)}`);
  assert.match(err.message, pattern);
  assert.ok(!err.message.includes('\n'), 'one line');
  return true;
};

test('detectApi tells the four kinds of server apart', async () => {
  await withServer({ apis: ['ollama'] }, async ({ url }) => assert.equal(await detectApi(url), 'ollama'));
  await withServer({ apis: ['llamacpp'] }, async ({ url }) => assert.equal(await detectApi(url), 'llamacpp'));
  await withServer({ apis: ['openai-chat', 'openai-completions'] }, async ({ url }) => assert.equal(await detectApi(url), 'openai-chat'));
  // Ollama and llama.cpp also speak OpenAI; their native APIs are preferred for their server timings.
  await withServer({}, async ({ url }) => {
    assert.equal(await detectApi(url), 'ollama');
    assert.equal(await detectApi(`${url}/v1`), 'openai-chat', 'a /v1 base URL means OpenAI');
    assert.equal(await detectApi(`${url}/v1/`), 'openai-chat');
  });
  await withServer({ apis: ['llamacpp', 'openai-chat'] }, async ({ url }) => assert.equal(await detectApi(url), 'llamacpp'));
});

test('detectApi: down, key needed, nothing recognisable', async () => {
  const port = await closedPort();
  const t0 = performance.now();
  await assert.rejects(detectApi(`http://127.0.0.1:${port}`), preflightError(new RegExp(`^cannot connect to http://127\\.0\\.0\\.1:${port} \\(connection refused, nothing listens on that port; ECONNREFUSED\\)$`)));
  assert.ok(performance.now() - t0 < 1500, 'within about a second');
  await withServer({ apis: ['openai-chat'], apiKey: 'k1' }, async ({ url }) => {
    await assert.rejects(detectApi(url), preflightError(/needs an API key \(HTTP 401/));
    await assert.rejects(detectApi(url, { apiKey: 'nope' }), preflightError(/refused the API key/));
    assert.equal(await detectApi(url, { apiKey: 'k1' }), 'openai-chat');
  });
  await withServer({ apis: [] }, async ({ url }) => {
    await assert.rejects(detectApi(url), preflightError(/could not tell which API .* speaks .*\/api\/tags → 404.*pass --api/));
  });
  await assert.rejects(detectApi('not a url'), preflightError(/not a valid URL/));
});

test('preflight: a down endpoint fails in about a second with one line', async () => {
  const port = await closedPort();
  const t0 = performance.now();
  await assert.rejects(preflight({ url: `http://127.0.0.1:${port}`, api: 'openai-chat' }), preflightError(/^cannot connect to http:\/\/127\.0\.0\.1:\d+ \(connection refused, nothing listens on that port; ECONNREFUSED\)$/));
  assert.ok(performance.now() - t0 < 1500);
});

test('preflight: a server that accepts but never answers times out', async () => {
  const sockets = new Set<Socket>();
  const silent = createServer((s) => sockets.add(s));
  await new Promise<void>((r) => silent.listen(0, '127.0.0.1', () => r()));
  const port = (silent.address() as AddressInfo).port;
  try {
    const t0 = performance.now();
    await assert.rejects(preflight({ url: `http://127.0.0.1:${port}`, api: 'llamacpp' }, { timeoutMs: 400 }), preflightError(/no answer from .* within 400 ms/));
    assert.ok(performance.now() - t0 < 1500);
  } finally {
    for (const s of sockets) s.destroy();
    await new Promise<void>((r) => silent.close(() => r()));
  }
});

test('preflight: key, API kind and model checks', async () => {
  await withServer({ apis: ['openai-chat'], apiKey: 'k1', model: 'llama-3-8b' }, async ({ url }) => {
    await assert.rejects(preflight({ url, api: 'openai-chat' }), preflightError(/needs an API key/));
    await assert.rejects(preflight({ url, api: 'openai-chat' }, { apiKey: 'k2' }), preflightError(/refused the API key/));
    await preflight({ url, api: 'openai-chat' }, { apiKey: 'k1' });
    await preflight({ url, api: 'openai-chat', model: 'llama-3-8b' }, { apiKey: 'k1' });
    await assert.rejects(preflight({ url, api: 'openai-chat', model: 'gpt-9' }, { apiKey: 'k1' }), preflightError(/model "gpt-9" is not served by .* \(it serves: llama-3-8b\)/));
    await assert.rejects(preflight({ url, api: 'ollama' }, { apiKey: 'k1' }), preflightError(/does not look like an Ollama server \(GET \/api\/tags → 404\); try --api auto/));
    await assert.rejects(preflight({ url, api: 'llamacpp' }, { apiKey: 'k1' }), preflightError(/does not look like a llama\.cpp server/));
  });
  await withServer({ apis: ['ollama'], model: 'qwen3:latest' }, async ({ url }) => {
    await preflight({ url, api: 'ollama', model: 'qwen3' });
    await assert.rejects(preflight({ url, api: 'ollama', model: 'mistral' }), preflightError(/model "mistral" is not served/));
  });
  await withServer({ apis: ['llamacpp'] }, async ({ url }) => {
    await preflight({ url, api: 'llamacpp', model: 'anything' });
  });
});
