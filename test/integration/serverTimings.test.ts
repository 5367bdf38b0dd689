// Server timings as each server sends them (test/fixtures/streams: Ollama, TGI, vLLM, llama.cpp),
// read by the real client from a real socket: the values kept are the ones in the fixture, to the
// millisecond the server gave, under our fixed names. Expectations are read out of the fixture
// itself, so a fixture replaced by a real capture keeps the test honest.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createEndpointClient } from '../../src/engine/transport/client';
import { annotateRequests, analyzeTiming } from '../../src/engine/analysis/attribution';
import { defaultWorkload } from '../../src/engine/core/workload';
import { startFixtureServer } from '../support/fixtureServer';
import type { RequestRecord } from '../../src/engine/core/types';
import type { ApiKind } from '../../src/engine/core/apis';

async function sendOne(fixture: string, api: ApiKind): Promise<{ record: RequestRecord; last: Record<string, unknown>; headers: Record<string, string> }> {
  const server = await startFixtureServer({ fixture, delayMs: 3 });
  const client = createEndpointClient({ url: server.url, api, model: 'm' }, { connections: 1, timeoutMs: 10_000, idleTimeoutMs: 5_000 });
  try {
    await client.warm();
    const record = await client.send(
      { index: 0, warmup: false, prompt: { messages: [{ role: 'user', content: 'Why is the sky blue?' }] }, maxTokens: 8, ignoreEos: false, scheduledAt: Date.now() },
      new AbortController().signal,
    );
    const body = server.fixture.body.toString('utf8');
    const objects = body
      .split(/\n/)
      .map((l) => l.replace(/^data:\s?/, '').trim())
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    return { record, last: objects[objects.length - 1]!, headers: server.fixture.headers as Record<string, string> };
  } finally {
    await client.close();
    await server.close();
  }
}

test('Ollama: the final object\'s ns durations become ms, load + prompt is its TTFT', async () => {
  for (const fixture of ['ollama-chat', 'ollama-chat-cold-load']) {
    const { record, last } = await sendOne(fixture, 'ollama');
    assert.equal(record.error, undefined, JSON.stringify(record.error));
    const ns = (k: string) => (last[k] as number) / 1e6;
    assert.deepEqual(record.serverTimings, {
      source: 'ollama',
      promptTokens: last.prompt_eval_count,
      promptMs: ns('prompt_eval_duration'),
      predictedTokens: last.eval_count,
      predictedMs: ns('eval_duration'),
      loadMs: ns('load_duration'),
      totalMs: ns('total_duration'),
      serverTtftMs: ns('load_duration') + ns('prompt_eval_duration'),
    });
    // the cold load is the server's own TTFT: far above what the replay took, so transport goes negative and says so
    const [annotated] = annotateRequests([record], analyzeTiming([record], defaultWorkload()));
    assert.equal(annotated!.transportMs, Math.round((record.ttftMs! - record.serverTimings!.serverTtftMs!) * 1000) / 1000);
  }
});

test('TGI: a streamed reply carries no timing headers; a non-streamed one gives queue and inference in whole ms', async () => {
  const streamed = await sendOne('tgi-chat', 'openai-chat');
  assert.equal(streamed.record.error, undefined, JSON.stringify(streamed.record.error));
  assert.ok(streamed.record.chunkTimesMs.length >= 2, 'tokens from "data:{" lines without a space');
  assert.equal(streamed.record.serverTimings, undefined);
  const whole = await sendOne('tgi-chat-nonstream', 'openai-chat');
  assert.equal(whole.record.error, undefined, JSON.stringify(whole.record.error));
  const h = whole.headers;
  assert.deepEqual(whole.record.serverTimings, {
    source: 'tgi',
    totalMs: Number(h['x-total-time']),
    queueMs: Number(h['x-queue-time']),
    inferenceMs: Number(h['x-inference-time']),
    promptTokens: Number(h['x-prompt-tokens']),
    predictedTokens: Number(h['x-generated-tokens']),
  });
});

test('vLLM: per-request metrics and cached tokens from the usage chunk', async () => {
  const { record, last } = await sendOne('vllm-chat', 'openai-chat');
  assert.equal(record.error, undefined, JSON.stringify(record.error));
  const m = last.metrics as Record<string, number>;
  const usage = last.usage as { prompt_tokens_details: { cached_tokens: number } };
  const st = record.serverTimings!;
  assert.equal(st.source, 'vllm');
  assert.equal(st.queueMs, m.queue_time_ms);
  assert.equal(st.promptMs, m.time_to_first_token_ms);
  assert.equal(st.serverTtftMs, m.queue_time_ms! + m.time_to_first_token_ms!);
  assert.equal(st.predictedMs, m.generation_time_ms);
  assert.equal(st.meanItlMs, m.mean_itl_ms);
  assert.equal(st.cachedTokens, usage.prompt_tokens_details.cached_tokens);
});

test('llama.cpp: timings with cache_n, on its OpenAI chat stream and on native /completion', async () => {
  for (const [fixture, api] of [['llamacpp-chat', 'openai-chat'], ['llamacpp-completion', 'llamacpp']] as const) {
    const { record, last } = await sendOne(fixture, api);
    assert.equal(record.error, undefined, `${fixture}: ${JSON.stringify(record.error)}`);
    const t = last.timings as Record<string, number>;
    assert.deepEqual(record.serverTimings, {
      source: 'llamacpp',
      promptTokens: t.prompt_n,
      promptMs: t.prompt_ms,
      predictedTokens: t.predicted_n,
      predictedMs: t.predicted_ms,
      cachedTokens: t.cache_n,
      serverTtftMs: t.prompt_ms,
    }, fixture);
  }
});
