// The hosted providers' adapters through the real engine (runWorkload, and the CLI as a process)
// against local fakes that replay each provider's documented stream byte for byte on a known clock
// (test/support/providerFakes.ts). What the fake received is asserted from its own log; TTFT, TPOT
// and TTFO from the run's records against the fake's pacing and against the instants the fake wrote
// each token (the same clock: the fake runs in this process).
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runWorkload } from '../../src/engine/run/runner';
import { listModels, PreflightError, preflight } from '../../src/engine/transport/detect';
import { defaultWorkload } from '../../src/engine/core/workload';
import { parseRunFile } from '../../src/engine/files/runFile';
import type { EndpointSpec, RequestRecord, RunFile } from '../../src/engine/core/types';
import type { ApiKind } from '../../src/engine/core/apis';
import { buildCli, runCliProcess } from '../support/cli';
import { ANTHROPIC_MODEL, AZURE_DEPLOYMENT, fixtureEvents, GEMINI_MODEL, isTokenEvent, startProviderFake } from '../support/providerFakes';
import type { FakeLogEntry, FakeReply, Provider, ProviderFake, ProviderFakeOptions } from '../support/providerFakes';

const KEY = 'sk-test-7f3a9c1e5b2d4f60';

async function withFake<T>(options: Omit<ProviderFakeOptions, 'key'> & { key?: string }, fn: (fake: ProviderFake) => Promise<T>): Promise<T> {
  const fake = await startProviderFake({ key: KEY, ...options });
  try {
    return await fn(fake);
  } finally {
    await fake.close();
  }
}

const endpointOf = (fake: ProviderFake, api: ApiKind, over: Partial<EndpointSpec> = {}): EndpointSpec => ({ url: fake.endpointUrl, api, model: fake.model, ...over });

function workload(requests: number) {
  return defaultWorkload({ requests, warmup: 0, maxTokens: 32, prompt: { kind: 'synthetic', tokens: 16, sharedPrefix: false }, temperature: 0, idleTimeoutMs: 5000, timeoutMs: 10_000 });
}

const byIndex = (run: RunFile): RequestRecord[] => [...run.requests].sort((a, b) => a.index - b.index);
const tokenEventCount = (provider: Provider, fixture: string): number => fixtureEvents(provider, fixture).events.filter((e) => isTokenEvent(provider, e)).length;

/**
 * One record against the fake's own write log and its pacing. The fake runs in this process, so its
 * writes and the client's stamps share a clock: every chunk is stamped after the fake wrote it (no
 * stamp before the bytes exist), most within a few ms (a loaded machine may hold one back longer).
 * TTFT and TPOT are then the pacing's, within timer slack, whenever the fake kept to its pacing
 * (timers fire late, never early; a late fake is said, and only the write-log checks stand).
 */
function assertTiming(r: RequestRecord, post: FakeLogEntry, pacing: { ttftMs: number; itlMs: number; tokenEvents: number }, label: string): { ttft: number; tpot: number; onTime: boolean } {
  assert.equal(r.error, undefined, `${label}: ${JSON.stringify(r.error)}`);
  assert.equal(r.chunkTimesMs.length, pacing.tokenEvents, `${label}: one chunk per token event, pings and the rest not counted`);
  const writes = post.tokenWrites;
  assert.equal(writes.length, pacing.tokenEvents);
  const sent = r.sentAt - performance.timeOrigin;
  const lags = r.chunkTimesMs.map((t, i) => sent + t - writes[i]!);
  const shown = lags.map((l) => l.toFixed(2)).join(' ');
  assert.ok(lags.every((l) => l >= -0.01), `${label}: a chunk stamped before it was written (lags ${shown} ms)`);
  assert.ok(median(lags) < 5 && Math.max(...lags) < 150, `${label}: chunks read long after they were written (lags ${shown} ms)`);
  const ttft = r.ttftMs!;
  const tpot = r.tpotMs!;
  const n = r.outputTokens;
  assert.equal(ttft, r.chunkTimesMs[0]);
  assert.ok(ttft >= pacing.ttftMs - 2, `${label}: TTFT ${ttft} ms, under the fake's ${pacing.ttftMs} ms`);
  // How far the fake itself strayed from its plan (first token, and the spacing of the rest).
  const firstLate = writes[0]! - post.receivedAt - pacing.ttftMs;
  const spacing = (writes[writes.length - 1]! - writes[0]!) / (writes.length - 1);
  const expectedTpot = ((pacing.tokenEvents - 1) * pacing.itlMs) / (n - 1);
  const onTime = firstLate <= 10 && Math.abs(spacing - pacing.itlMs) <= 2;
  if (onTime) {
    assert.ok(ttft <= pacing.ttftMs + 15, `${label}: TTFT ${ttft} ms for a ${pacing.ttftMs} ms pacing`);
    assert.ok(Math.abs(tpot - expectedTpot) <= 3, `${label}: TPOT ${tpot} ms, the pacing gives ${expectedTpot.toFixed(3)} ms`);
  } else {
    console.log(`# ${label}: the fake ran late (first token +${firstLate.toFixed(1)} ms, spacing ${spacing.toFixed(1)} ms for ${pacing.itlMs}): pacing checks skipped, the write-log checks stand`);
  }
  return { ttft, tpot, onTime };
}

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** What this machine measured against the fakes' pacing: printed, for the record. */
const note = (line: string): void => console.log(`# ${line}`);

test('anthropic: /v1/messages with x-api-key and anthropic-version; TTFT, TPOT and usage from the docs\' stream', async () => {
  const pacing = { ttftMs: 120, itlMs: 25, tokenEvents: tokenEventCount('anthropic', 'text') };
  assert.equal(pacing.tokenEvents, 10);
  await withFake({ provider: 'anthropic', ttftMs: pacing.ttftMs, itlMs: pacing.itlMs }, async (fake) => {
    const run = await runWorkload(endpointOf(fake, 'anthropic'), workload(2), { apiKey: KEY });
    assert.equal(run.summary.completed, 2, JSON.stringify(run.summary.errorsByKind));
    // The preflight: the model list, with the key where Anthropic takes it and the version it needs.
    const probe = fake.log[0]!;
    assert.equal(`${probe.method} ${probe.pathname} ${probe.status}`, 'GET /v1/models 200');
    assert.equal(probe.headers['anthropic-version'], '2023-06-01');
    assert.equal(probe.headers['x-api-key'], KEY);
    const posts = fake.posts();
    assert.equal(posts.length, 2);
    for (const [i, r] of byIndex(run).entries()) {
      const post = posts[i]!;
      assert.equal(post.url, '/v1/messages');
      assert.equal(post.headers['x-api-key'], KEY);
      assert.equal(post.headers['anthropic-version'], '2023-06-01');
      assert.equal(post.headerNames.includes('authorization'), false, 'no bearer token');
      const body = JSON.parse(post.body) as Record<string, unknown>;
      assert.deepEqual(Object.keys(body), ['model', 'max_tokens', 'messages', 'stream', 'temperature']);
      assert.equal(body.model, ANTHROPIC_MODEL);
      assert.equal(body.max_tokens, 32);
      assert.equal(body.stream, true);
      assert.equal((body.messages as { role: string }[])[0]!.role, 'user');
      const { ttft, tpot } = assertTiming(r, post, pacing, `anthropic #${i}`);
      assert.equal(r.responseId, 'msg_01Hq7rVxT2bNc4KdW8mPzLfA');
      assert.equal(r.promptTokens, 25);
      assert.equal(r.outputTokens, 10);
      assert.equal(r.tokenSource, 'usage');
      assert.equal(r.ttfoMs, ttft, 'no reasoning: the first output is the first token');
      note(`anthropic text #${i}: TTFT ${ttft.toFixed(1)} ms (pacing ${pacing.ttftMs}), TPOT ${tpot.toFixed(2)} ms (pacing ${pacing.itlMs})`);
    }
  });
});

test('anthropic: thinking deltas are timed as reasoning, TTFO after them; cached prompt tokens kept', async () => {
  const pacing = { ttftMs: 80, itlMs: 20, tokenEvents: tokenEventCount('anthropic', 'thinking') };
  await withFake({ provider: 'anthropic', ttftMs: pacing.ttftMs, itlMs: pacing.itlMs, replies: [{ kind: 'stream', fixture: 'thinking' }, { kind: 'stream', fixture: 'cached' }] }, async (fake) => {
    const run = await runWorkload(endpointOf(fake, 'anthropic'), workload(2), { apiKey: KEY });
    const [thinking, cached] = byIndex(run);
    // No usage in the docs' thinking example: the tokens are the chunks, reasoning and answer alike.
    const { ttft, onTime } = assertTiming(thinking!, fake.posts()[0]!, pacing, 'anthropic thinking');
    assert.equal(thinking!.tokenSource, 'chunks');
    assert.equal(thinking!.outputTokens, 10);
    const thoughts = 5;
    const ttfo = thinking!.ttfoMs!;
    assert.equal(ttft, thinking!.chunkTimesMs[0], 'TTFT is the first thinking delta');
    assert.equal(ttfo, thinking!.chunkTimesMs[thoughts], 'TTFO is the first text delta');
    if (onTime) assert.ok(Math.abs(ttfo - ttft - thoughts * pacing.itlMs) <= 6, `TTFO ${ttfo} ms, TTFT ${ttft} ms: ${thoughts} thinking deltas of ${pacing.itlMs} ms apart`);
    note(`anthropic thinking: TTFT ${ttft.toFixed(1)} ms, TTFO ${ttfo.toFixed(1)} ms (pacing: TTFO − TTFT = ${thoughts * pacing.itlMs} ms)`);
    assert.equal(cached!.error, undefined);
    assert.equal(cached!.promptTokens, 12 + 2048);
    assert.equal(cached!.serverTimings?.cachedTokens, 2048);
    assert.equal(cached!.outputTokens, 7);
  });
});

test('gemini: streamGenerateContent?alt=sse with x-goog-api-key; multi-token chunks counted from cumulative usage; TTFT, TPOT, cached tokens', async () => {
  const pacing = { ttftMs: 100, itlMs: 30, tokenEvents: tokenEventCount('gemini', 'text') };
  assert.equal(pacing.tokenEvents, 6);
  await withFake({ provider: 'gemini', ttftMs: pacing.ttftMs, itlMs: pacing.itlMs }, async (fake) => {
    const run = await runWorkload(endpointOf(fake, 'gemini'), workload(2), { apiKey: KEY });
    assert.equal(run.summary.completed, 2, JSON.stringify(run.summary.errorsByKind));
    const probe = fake.log[0]!;
    assert.equal(`${probe.method} ${probe.url} ${probe.status}`, 'GET /v1beta/models 200');
    assert.equal(probe.headers['x-goog-api-key'], KEY);
    for (const [i, r] of byIndex(run).entries()) {
      const post = fake.posts()[i]!;
      assert.equal(post.url, `/v1beta/models/${GEMINI_MODEL}:streamGenerateContent?alt=sse`);
      assert.equal(post.headers['x-goog-api-key'], KEY);
      assert.equal(post.headerNames.includes('authorization'), false);
      const body = JSON.parse(post.body) as { contents: { role: string }[]; generationConfig: Record<string, unknown> };
      assert.equal(body.contents[0]!.role, 'user');
      assert.deepEqual(body.generationConfig, { maxOutputTokens: 32, temperature: 0, seed: i });
      const { ttft, tpot } = assertTiming(r, post, pacing, `gemini #${i}`);
      assert.equal(r.outputTokens, 19);
      assert.equal(r.tokenSource, 'usage');
      assert.equal(r.promptTokens, 1210);
      assert.equal(r.serverTimings?.cachedTokens, 1024);
      assert.equal(r.multiTokenChunks, 6, 'every chunk held several tokens');
      assert.equal(r.responseId, 'mJ4aaPrXGo2p1MkP7_yg4QM');
      note(`gemini text #${i}: TTFT ${ttft.toFixed(1)} ms (pacing ${pacing.ttftMs}), TPOT ${tpot.toFixed(2)} ms (pacing ${pacing.itlMs} ms per 3.2-token chunk → ${((5 * pacing.itlMs) / 18).toFixed(2)})`);
    }
  });
});

test('gemini: the key in the URL\'s own query (?key=, a /v1beta URL), thought parts as reasoning, thoughts counted', async () => {
  const pacing = { ttftMs: 60, itlMs: 20, tokenEvents: tokenEventCount('gemini', 'thinking') };
  await withFake({ provider: 'gemini', ttftMs: pacing.ttftMs, itlMs: pacing.itlMs, replies: [{ kind: 'stream', fixture: 'thinking' }] }, async (fake) => {
    const run = await runWorkload({ url: `${fake.url}/v1beta?key=${KEY}`, api: 'gemini', model: 'models/gemini-2.5-flash' }, workload(1));
    const [r] = byIndex(run);
    const post = fake.posts()[0]!;
    assert.equal(post.url, `/v1beta/models/gemini-2.5-flash:streamGenerateContent?key=${KEY}&alt=sse`);
    assert.equal(post.headerNames.includes('x-goog-api-key'), false, 'no key given but the URL\'s');
    assert.equal(fake.log[0]!.url, `/v1beta/models?key=${KEY}`, 'the preflight under the API\'s own /v1beta, not twice');
    const { ttft, onTime } = assertTiming(r!, post, pacing, 'gemini thinking');
    assert.equal(r!.reasoningTokens, 72);
    assert.equal(r!.outputTokens, 72 + 9);
    assert.equal(r!.ttfoMs, r!.chunkTimesMs[2], 'TTFO is the first chunk after the two thought chunks');
    if (onTime) assert.ok(Math.abs(r!.ttfoMs! - ttft - 2 * pacing.itlMs) <= 6, `TTFO ${r!.ttfoMs} ms after two thought chunks from TTFT ${ttft} ms`);
    note(`gemini thinking: TTFT ${ttft.toFixed(1)} ms, TTFO ${r!.ttfoMs!.toFixed(1)} ms (pacing: TTFO − TTFT = ${2 * pacing.itlMs} ms)`);
  });
});

test('azure-openai: the deployment URL\'s api-version on every request, api-key, no ignore_eos; OpenAI\'s stream read as such', async () => {
  const pacing = { ttftMs: 90, itlMs: 15, tokenEvents: tokenEventCount('azure-openai', 'chat') };
  assert.equal(pacing.tokenEvents, 10);
  await withFake({ provider: 'azure-openai', ttftMs: pacing.ttftMs, itlMs: pacing.itlMs }, async (fake) => {
    const run = await runWorkload(endpointOf(fake, 'azure-openai'), workload(2), { apiKey: KEY });
    assert.equal(run.summary.completed, 2, JSON.stringify(run.summary.errorsByKind));
    const probe = fake.log[0]!;
    assert.equal(`${probe.method} ${probe.url} ${probe.status}`, 'GET /openai/models?api-version=2024-10-21 200');
    for (const entry of fake.log) assert.equal(entry.query['api-version'], '2024-10-21', `${entry.method} ${entry.url}`);
    for (const [i, r] of byIndex(run).entries()) {
      const post = fake.posts()[i]!;
      assert.equal(post.url, `/openai/deployments/${AZURE_DEPLOYMENT}/chat/completions?api-version=2024-10-21`);
      assert.equal(post.headers['api-key'], KEY);
      assert.equal(post.headerNames.includes('authorization'), false);
      const body = JSON.parse(post.body) as Record<string, unknown>;
      assert.equal('ignore_eos' in body, false, 'the workload asks for it; Azure refuses it');
      assert.deepEqual(body.stream_options, { include_usage: true });
      const { ttft, tpot } = assertTiming(r, post, pacing, `azure #${i}`);
      assert.equal(r.outputTokens, 10);
      assert.equal(r.promptTokens, 25);
      assert.equal(r.responseId, 'chatcmpl-B1sKq7mZ3tV9xW2cY5nR8pL4dQ6hJ');
      note(`azure-openai chat #${i}: TTFT ${ttft.toFixed(1)} ms (pacing ${pacing.ttftMs}), TPOT ${tpot.toFixed(2)} ms (pacing ${pacing.itlMs})`);
    }
  });
});

test('errors as each provider sends them: 429 (kind http, status, the provider\'s words), 529 / 503, an error event mid-stream (kind server)', async () => {
  const replies: FakeReply[] = [{ kind: 'rate-limit', retryAfterS: 7 }, { kind: 'overloaded' }, { kind: 'stream', fixture: 'error-midstream' }];
  const cases: { provider: Provider; overloaded: RegExp; midStream: RegExp; rateWords: RegExp }[] = [
    { provider: 'anthropic', rateWords: /exceed the rate limit/, overloaded: /^HTTP 529 Overloaded: Overloaded$/, midStream: /^Overloaded \(overloaded_error\)$/ },
    { provider: 'gemini', rateWords: /exceeded your current quota/, overloaded: /^HTTP 503 Service Unavailable: The model is overloaded/, midStream: /^An internal error has occurred\. .* \(500\)$/ },
    { provider: 'azure-openai', rateWords: /Please retry after 7 seconds/, overloaded: /^HTTP 503 Service Unavailable/, midStream: /^The server had an error while processing your request\. Sorry about that! \(server_error\)$/ },
  ];
  for (const c of cases) {
    await withFake({ provider: c.provider, replies, ttftMs: 20, itlMs: 5 }, async (fake) => {
      const run = await runWorkload(endpointOf(fake, c.provider), workload(3), { apiKey: KEY });
      const [limited, overloaded, broken] = byIndex(run);
      assert.equal(limited!.error?.kind, 'http', c.provider);
      assert.equal(limited!.error?.status, 429);
      assert.match(limited!.error!.message, /^HTTP 429 Too Many Requests: /);
      assert.match(limited!.error!.message, c.rateWords);
      assert.equal(overloaded!.error?.kind, 'http');
      assert.equal(overloaded!.error?.status, c.provider === 'anthropic' ? 529 : 503);
      assert.match(overloaded!.error!.message, c.overloaded);
      assert.equal(broken!.error?.kind, 'server', c.provider);
      assert.match(broken!.error!.message, c.midStream);
      assert.equal(broken!.chunkTimesMs.length, tokenEventCount(c.provider, 'error-midstream'), 'the tokens before the error are kept');
      assert.deepEqual(run.summary.errorsByKind, { http: 2, server: 1 });
      assert.deepEqual(fake.posts().map((p) => p.status), [429, c.provider === 'anthropic' ? 529 : 503, 200]);
    });
  }
});

test('keys: a wrong or missing key stops the run at preflight in each provider\'s own way; --api-key-header still wins', async () => {
  const cases: [Provider, string | undefined, RegExp][] = [
    ['anthropic', 'wrong', /refused the API key \(HTTP 401 on GET \/v1\/models\)/],
    ['gemini', 'wrong', /refused the API key \(HTTP 400 on GET \/v1beta\/models\)/],
    ['gemini', undefined, /needs an API key \(HTTP 403 on GET \/v1beta\/models\)/],
    ['azure-openai', 'wrong', /refused the API key \(HTTP 401 on GET \/models\)/],
  ];
  for (const [provider, key, message] of cases) {
    await withFake({ provider }, async (fake) => {
      await assert.rejects(runWorkload(endpointOf(fake, provider), workload(1), key ? { apiKey: key } : {}), (err: Error) => err instanceof PreflightError && message.test(err.message), `${provider} ${key}`);
      assert.equal(fake.posts().length, 0);
      assert.equal(fake.log.length, 1, 'one GET, then nothing');
      if (key) assert.equal(JSON.stringify(fake.log).includes(KEY), false);
    });
  }
  await withFake({ provider: 'anthropic' }, async (fake) => {
    await assert.rejects(preflight(endpointOf(fake, 'anthropic', { apiKeyHeader: 'authorization' }), { apiKey: KEY }), /refused the API key/);
    assert.equal(fake.log[0]!.headers.authorization, `Bearer ${KEY}`);
    assert.equal(fake.log[0]!.headers['x-api-key'], undefined);
  });
});

test('model lists: Anthropic\'s ids, Gemini\'s generating models (embeddings left out), an Azure deployment from its URL with no request', async () => {
  await withFake({ provider: 'anthropic' }, async (fake) => {
    assert.deepEqual(await listModels({ url: fake.url, api: 'anthropic' }, { apiKey: KEY }), [ANTHROPIC_MODEL]);
    assert.equal(fake.log[0]!.headers['anthropic-version'], '2023-06-01');
  });
  await withFake({ provider: 'gemini' }, async (fake) => {
    assert.deepEqual(await listModels({ url: `${fake.url}/v1beta/`, api: 'gemini' }, { apiKey: KEY }), [`models/${GEMINI_MODEL}`, 'models/gemini-2.5-flash']);
    // Either name form passes the preflight; a model not listed does not.
    await preflight({ url: fake.url, api: 'gemini', model: GEMINI_MODEL }, { apiKey: KEY });
    await preflight({ url: fake.url, api: 'gemini', model: `models/${GEMINI_MODEL}` }, { apiKey: KEY });
    await assert.rejects(preflight({ url: fake.url, api: 'gemini', model: 'gemini-1.0-nope' }, { apiKey: KEY }), /model "gemini-1.0-nope" is not served by .* \(it serves: models\/gemini-2.5-flash-lite, models\/gemini-2.5-flash\)/);
  });
  await withFake({ provider: 'azure-openai' }, async (fake) => {
    assert.deepEqual(await listModels({ url: fake.endpointUrl, api: 'azure-openai' }, { apiKey: KEY }), [AZURE_DEPLOYMENT]);
    assert.equal(fake.log.length, 0);
    // Azure lists base models, not deployments: the deployment is not checked against them.
    await preflight({ url: fake.endpointUrl, api: 'azure-openai', model: 'my-own-name' }, { apiKey: KEY });
  });
});

// ---- the CLI as a process: --api with each new kind, the key from --api-key-env ----

before(buildCli);

test('CLI: `run --api gemini|azure-openai|anthropic --api-key-env`, the model defaulted from the provider, the key never printed nor written', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'providers-'));
  try {
    for (const [provider, model] of [['gemini', `models/${GEMINI_MODEL}`], ['azure-openai', AZURE_DEPLOYMENT], ['anthropic', ANTHROPIC_MODEL]] as const) {
      await withFake({ provider, ttftMs: 20, itlMs: 5 }, async (fake) => {
        const out = join(dir, `${provider}.json`);
        const r = await runCliProcess(['run', '--url', fake.endpointUrl, '--api', provider, '--api-key-env', 'PROVIDER_TEST_KEY', '--requests', '2', '--warmup', '0', '--max-tokens', '32', '--out', out], { env: { PROVIDER_TEST_KEY: KEY } });
        assert.equal(r.code, 0, `${provider}: ${r.stderr}`);
        const run = parseRunFile(readFileSync(out, 'utf8'));
        assert.equal(run.endpoint.api, provider);
        assert.equal(run.endpoint.model, model, 'the first model the provider lists (Azure: the deployment)');
        assert.equal(run.summary.completed, 2);
        assert.equal(fake.posts().length, 2);
        const keyHeader = { anthropic: 'x-api-key', gemini: 'x-goog-api-key', 'azure-openai': 'api-key' }[provider];
        assert.ok(fake.posts().every((p) => p.headers[keyHeader] === KEY), keyHeader);
        for (const text of [r.stdout, r.stderr, readFileSync(out, 'utf8')]) assert.equal(text.includes(KEY), false);
      });
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
