// The bundled llama.cpp server for real, where it is timed: a tiny synthetic model, served by
// dist/localServer.mjs through the launcher, spoken to over HTTP with node's fetch and profiled with
// the engine. Its start, failures, stop and HTTP guards, which time nothing tightly, are in
// localServerLifecycle.test.ts (they share the machine with other test files; this file runs alone).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeFirstStrategy } from '../../src/localServer/inference';
import { chat, localServerKit, streamSse, waitFor, type ChatChunk } from '../support/localServerKit';

const kit = localServerKit('llmp-local-');
const { start, stop } = kit;

test('bundled server: OpenAI chat/completions, llama.cpp /completion, exact token counts, timings, ids, models, health', async () => {
  const h = await start();
  try {
    assert.match(h.url, /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.equal(h.backend, 'bundled');
    assert.equal((await fetch(`${h.url}/health`)).status, 200);
    const models = (await (await fetch(`${h.url}/v1/models`)).json()) as { data: { id: string }[] };
    assert.deepEqual(models.data.map((m) => m.id), [h.model]);

    // Streaming chat, usage chunk, ignore_eos: exactly max_tokens content chunks.
    const s = await streamSse(`${h.url}/v1/chat/completions`, chat('Tell me a story about the sea.', { stream: true, stream_options: { include_usage: true }, max_tokens: 24, ignore_eos: true }));
    const chunks = s.events as unknown as ChatChunk[];
    assert.ok(s.done, 'ends with [DONE]');
    const content = chunks.filter((c) => c.choices[0]?.delta.content);
    assert.equal(content.length, 24, 'one content chunk per token');
    assert.equal(chunks[0]!.choices[0]!.delta.role, 'assistant');
    assert.equal(new Set(chunks.map((c) => c.id)).size, 1, 'one id per response');
    assert.match(chunks[0]!.id, /^chatcmpl-/);
    const final = chunks.find((c) => c.choices[0]?.finish_reason)!;
    assert.equal(final.choices[0]!.finish_reason, 'length');
    assert.equal(final.timings!.predicted_n, 24);
    const usage = chunks.at(-1)!;
    assert.deepEqual(usage.choices, []);
    assert.equal(usage.usage!.completion_tokens, 24);
    assert.ok(usage.usage!.prompt_tokens > 8);
    assert.equal(usage.timings!.prompt_n + usage.timings!.cache_n!, usage.usage!.prompt_tokens);
    assert.ok(usage.timings!.prompt_ms > 0 && usage.timings!.predicted_ms > 0);
    const text = content.map((c) => c.choices[0]!.delta.content).join('');
    assert.doesNotMatch(text, /\uFFFD|<0x|<\|im_|<s>|<\/s>/, 'readable: no byte or control tokens');
    assert.match(text, /^[\x20-\x7e]+$/);

    // Non-streamed completions: exact count, a cmpl- id, usage and timings in the body.
    const r = (await (await fetch(`${h.url}/v1/completions`, { method: 'POST', body: JSON.stringify({ prompt: 'The model', max_tokens: 17, ignore_eos: true }) })).json()) as {
      id: string;
      choices: { text: string; finish_reason: string }[];
      usage: { completion_tokens: number; prompt_tokens: number };
      timings: { predicted_n: number };
    };
    assert.match(r.id, /^cmpl-/);
    assert.equal(r.usage.completion_tokens, 17);
    assert.equal(r.timings.predicted_n, 17);
    assert.equal(r.choices[0]!.finish_reason, 'length');
    assert.ok(r.choices[0]!.text.length > 0);

    // Streamed completions.
    const sc = await streamSse(`${h.url}/v1/completions`, { prompt: 'Hello', max_tokens: 9, ignore_eos: true, stream: true, stream_options: { include_usage: true } });
    const cc = sc.events as { choices: { text?: string }[]; usage?: { completion_tokens: number } }[];
    assert.equal(cc.filter((c) => c.choices[0]?.text).length, 9);
    assert.equal(cc.at(-1)!.usage!.completion_tokens, 9);

    // llama.cpp's own /completion.
    const lc = await streamSse(`${h.url}/completion`, { prompt: 'Hello', n_predict: 7, ignore_eos: true, stream: true });
    const last = lc.events.at(-1) as { stop: boolean; tokens_predicted: number; timings: { predicted_n: number } };
    assert.equal(last.stop, true);
    assert.equal(last.tokens_predicted, 7);
    assert.equal(lc.events.filter((e) => e.content).length, 7);

    // Per-request seed: same seed, same text. Without cache_prompt every run evaluates the same batches
    // (a cached prefix changes the float sums slightly, and random weights make near-ties common).
    const seeded = async (seed: number) => ((await (await fetch(`${h.url}/v1/chat/completions`, { method: 'POST', body: JSON.stringify(chat('Seeded', { max_tokens: 12, ignore_eos: true, seed, temperature: 1, cache_prompt: false })) })).json()) as { choices: { message: { content: string } }[] }).choices[0]!.message.content;
    const a = await seeded(42);
    assert.equal(await seeded(42), a);
    const others = [await seeded(43), await seeded(44)];
    assert.ok(others.some((o) => o !== a), 'another seed gives other text');

    // Bad requests are 400s with a message; the server keeps serving.
    const bad = await fetch(`${h.url}/v1/chat/completions`, { method: 'POST', body: '{not json' });
    assert.equal(bad.status, 400);
    assert.match(((await bad.json()) as { error: { message: string } }).error.message, /not valid JSON/);
    const long = await fetch(`${h.url}/v1/completions`, { method: 'POST', body: JSON.stringify({ prompt: 'word '.repeat(1500), max_tokens: 1 }) });
    assert.equal(long.status, 400);
    assert.match(((await long.json()) as { error: { message: string } }).error.message, /more than a slot holds: 1024 tokens \(this server's --ctx-size 4096 over --parallel 4\); start it with --ctx-size \d+/);
    assert.equal((await fetch(`${h.url}/v1/nothing`, { method: 'POST', body: '{}' })).status, 404);
    assert.equal((await fetch(`${h.url}/health`)).status, 200);
  } finally {
    await stop(h);
  }
});

test('continuous batching: full batches over the busy slots, a queue beyond them, TPOT rises with parallel sequences', async () => {
  const h = await start({ parallel: 4 });
  try {
    const run = async (n: number, maxTokens: number) => {
      const results = await Promise.all(
        Array.from({ length: n }, (_, i) =>
          streamSse(`${h.url}/v1/chat/completions`, chat(`Request number ${i}`, { stream: true, stream_options: { include_usage: true }, max_tokens: maxTokens, ignore_eos: true, seed: i })),
        ),
      );
      return results.map((r) => {
        const usage = (r.events.at(-1) as ChatChunk).usage!;
        assert.equal(usage.completion_tokens, maxTokens, 'exact token count');
        const contentTimes = r.chunkTimes.slice(0, maxTokens);
        return (contentTimes.at(-1)! - contentTimes[0]!) / (maxTokens - 1);
      });
    };
    await run(1, 8); // warm
    // Load from other processes only ever adds time, so the least of two rounds is compared.
    const tpot1 = Math.min((await run(1, 48))[0]!, (await run(1, 48))[0]!);
    await fetch(`${h.url}/stats?reset`);
    const means4: number[] = [];
    for (let round = 0; round < 2; round++) {
      const t4 = await run(4, 48);
      means4.push(t4.reduce((a, b) => a + b, 0) / t4.length);
    }
    const stats = (await (await fetch(`${h.url}/stats`)).json()) as { steps: number; fullSteps: number; sequencesPerStep: Record<string, number>; fullBatchesEnabled: boolean };
    assert.equal(stats.fullBatchesEnabled, true);
    // Every step's batch holds every slot that had work; many steps hold all four.
    assert.ok(stats.fullSteps / stats.steps >= 0.95, `full batches: ${JSON.stringify(stats)}`);
    assert.ok((stats.sequencesPerStep['4'] ?? 0) >= 40, `steps with 4 sequences: ${JSON.stringify(stats.sequencesPerStep)}`);
    const mean4 = Math.min(...means4);
    assert.ok(mean4 > tpot1, `TPOT at 4 sequences (${mean4.toFixed(2)} ms) is above TPOT alone (${tpot1.toFixed(2)} ms)`);

    // Six requests on four slots: two wait in the queue, all finish exactly.
    await fetch(`${h.url}/stats?reset`);
    const six = await run(6, 16);
    assert.equal(six.length, 6);
    const st = (await (await fetch(`${h.url}/stats`)).json()) as { steps: number; fullSteps: number };
    assert.ok(st.fullSteps / st.steps >= 0.9, `full batches with a queue: ${JSON.stringify(st)}`);
  } finally {
    await stop(h);
  }
});

test('--batch-size is the prefill chunk: a long prompt goes in chunks, between the other stream\'s decode steps', async () => {
  const h = await start({ parallel: 2, batchSize: 64 });
  try {
    const ac = new AbortController();
    let decoding = 0;
    const background = streamSse(`${h.url}/v1/completions`, { prompt: 'background', max_tokens: 1500, ignore_eos: true, stream: true }, ac.signal, () => {
      decoding++;
    }).catch((e: Error) => e);
    await waitFor(() => decoding > 2, 20_000, 'the background stream to decode');
    await fetch(`${h.url}/stats?reset`);
    const long = (await (await fetch(`${h.url}/v1/completions`, { method: 'POST', body: JSON.stringify({ prompt: 'word '.repeat(600), max_tokens: 2, ignore_eos: true }) })).json()) as { usage: { prompt_tokens: number } };
    const stats = (await (await fetch(`${h.url}/stats`)).json()) as { recent: { tokens: number; sequences: number; busySlots: number }[] };
    ac.abort();
    await background;
    const promptTokens = long.usage.prompt_tokens;
    assert.ok(promptTokens > 500);
    assert.ok(stats.recent.every((s) => s.tokens <= 64), `no step over 64 tokens: ${JSON.stringify(stats.recent.map((s) => s.tokens))}`);
    // The prefill steps: full 64-token batches holding the prompt chunk and the other stream's token.
    const prefill = stats.recent.filter((s) => s.tokens > 2);
    assert.ok(prefill.length >= Math.floor(promptTokens / 64), `${prefill.length} prefill chunks for ${promptTokens} tokens`);
    assert.ok(prefill.every((s) => s.sequences === 2), `every chunk shares its step with the decoding stream: ${JSON.stringify(stats.recent)}`);
  } finally {
    await stop(h);
  }
});

test('decodeFirstStrategy: one token per busy sequence first, prompts FIFO in the rest, emitted in sequence-id order', () => {
  const item = (n: number, seq: number) => ({ tokens: new Array<number>(n).fill(1), seq });
  const [p3, d0, p1, d2] = [item(600, 3), item(1, 0), item(100, 1), item(1, 2)];
  const out = decodeFirstStrategy({ items: [p3, d0, p1, d2], size: 64 }, (i) => i.seq);
  assert.deepEqual(out.map((r) => [r.item.seq, r.processAmount]), [[0, 1], [1, 1], [2, 1], [3, 61]], 'the first prompt in the queue takes the rest');
  const small = decodeFirstStrategy({ items: [item(10, 5), item(1, 4), item(20, 6)], size: 64 }, (i) => i.seq);
  assert.deepEqual(small.map((r) => [r.item.seq, r.processAmount]), [[4, 1], [5, 10], [6, 20]]);
  // More sequences than the budget: the rest wait, none is given 0 (node-llama-cpp would read 0 as 1).
  const tight = decodeFirstStrategy({ items: [item(1, 2), item(1, 1), item(1, 0)], size: 2 }, (i) => i.seq);
  assert.deepEqual(tight.map((r) => [r.item.seq, r.processAmount]), [[1, 1], [2, 1]]);
});

test('without the yield, node-llama-cpp 3.21.1 splits the batches (what the fix is for)', async () => {
  const h = await start({ parallel: 2, fullBatches: false });
  try {
    await Promise.all([0, 1].map((i) => streamSse(`${h.url}/v1/completions`, { prompt: `split ${i}`, max_tokens: 40, ignore_eos: true, stream: true })));
    const stats = (await (await fetch(`${h.url}/stats`)).json()) as { steps: number; fullSteps: number; fullBatchesEnabled: boolean };
    assert.equal(stats.fullBatchesEnabled, false);
    assert.ok(stats.fullSteps / stats.steps < 0.6, `split batches upstream: ${JSON.stringify(stats)}`);
  } finally {
    await stop(h);
  }
});

test('a client that disconnects frees its slot at once; a queued request then starts', async () => {
  const h = await start({ parallel: 2 });
  try {
    const slots = async () => (await (await fetch(`${h.url}/slots`)).json()) as { id: number; phase: string }[];
    const acs = [new AbortController(), new AbortController()];
    let firstChunks = 0;
    const long = acs.map((ac, i) =>
      streamSse(`${h.url}/v1/chat/completions`, chat(`long ${i}`, { stream: true, max_tokens: 1500, ignore_eos: true }), ac.signal, () => {
        firstChunks++;
      }).catch((e: Error) => e),
    );
    await waitFor(() => firstChunks >= 2, 20_000, 'both long streams to start');
    assert.deepEqual((await slots()).map((s) => s.phase), ['decode', 'decode']);
    // A third request waits: both slots are busy.
    let thirdFirstAt = 0;
    const third = streamSse(`${h.url}/v1/chat/completions`, chat('third', { stream: true, max_tokens: 5, ignore_eos: true }), undefined, () => {
      thirdFirstAt ||= performance.now();
    });
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(thirdFirstAt, 0, 'the third request is queued');
    const t0 = performance.now();
    acs[0]!.abort();
    const r3 = await third;
    assert.ok(thirdFirstAt - t0 < 5000, `the queued request started ${Math.round(thirdFirstAt - t0)} ms after the disconnect`);
    assert.equal(r3.events.filter((e) => (e as ChatChunk).choices[0]?.delta.content).length, 5);
    assert.equal((await slots()).filter((s) => s.phase === 'decode').length, 1, 'the other long stream still runs');
    acs[1]!.abort();
    await Promise.all(long);
    await waitFor(async () => (await slots()).every((s) => s.phase === 'idle'), 5000, 'all slots idle after both disconnects');
  } finally {
    await stop(h);
  }
});

test('profiled with the engine: exact token counts from usage, server timings recorded', async () => {
  const { runWorkload } = await import('../../src/engine/run/runner');
  const { defaultWorkload } = await import('../../src/engine/core/workload');
  const h = await start({ parallel: 2 });
  try {
    const run = await runWorkload(
      { url: h.url, api: 'openai-chat', model: h.model },
      defaultWorkload({ mode: { kind: 'closed', concurrency: 2 }, requests: 6, warmup: 1, maxTokens: 20, prompt: { kind: 'synthetic', tokens: 64, sharedPrefix: false } }),
    );
    assert.equal(run.summary.completed, 6, JSON.stringify(run.summary.errorsByKind));
    assert.equal(run.summary.failed, 0);
    const measured = run.requests.filter((r) => !r.warmup);
    for (const r of measured) {
      assert.equal(r.outputTokens, 20);
      assert.equal(r.tokenSource, 'usage');
      assert.equal(r.chunkTimesMs.length, 20);
      assert.ok(r.ttftMs! > 0 && r.tpotMs! > 0);
      assert.match(r.responseId ?? '', /^chatcmpl-/);
    }
    assert.equal(run.summary.totalOutputTokens, 120);
  } finally {
    await stop(h);
  }
});

