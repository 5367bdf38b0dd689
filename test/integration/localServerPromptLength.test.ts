// The bundled llama.cpp server counts prompts as llama.cpp's server does, and serves its tokenizer
// routes (POST /tokenize, /apply-template) the same way: a synthetic prompt sized with them is the
// length asked as the server's usage counts it, within 2 % (src/engine/run/promptLength.ts). Unsized,
// the tiny synthetic model's vocabulary splits the words and the chat template and the cold-cache
// nonce add: far more than asked.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runWorkload } from '../../src/engine/run/runner';
import { defaultWorkload } from '../../src/engine/core/workload';
import type { RunFile, WorkloadSpec } from '../../src/engine/core/types';
import { chat, localServerKit, streamSse, type ChatChunk } from '../support/localServerKit';

const kit = localServerKit('llmp-promptlen-');
const ASKED = 256;

const workload = (sizing: boolean): WorkloadSpec => defaultWorkload({
  requests: 4, warmup: 1, maxTokens: 4, prefixCache: 'cold',
  prompt: { kind: 'synthetic', tokens: ASKED, sharedPrefix: false, ...(sizing ? { sizing: 'server' as const } : {}) },
});

const post = async (url: string, body: unknown): Promise<{ status: number; json: Record<string, unknown> }> => {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
};

test('bundled server: /tokenize and /apply-template as llama.cpp\'s; a prompt sized with them is the length asked within 2 %', async () => {
  const h = await kit.start({ parallel: 2 });
  try {
    // llama.cpp's shapes: {content, add_special} → {tokens}; no content, no tokens; {messages} → {prompt}
    const text = await post(`${h.url}/tokenize`, { content: 'the sea and the sky' });
    assert.equal(text.status, 200);
    const plain = text.json.tokens as number[];
    assert.ok(Array.isArray(plain) && plain.length > 0 && plain.every((t) => Number.isInteger(t)));
    const withBos = (await post(`${h.url}/tokenize`, { content: 'the sea and the sky', add_special: true })).json.tokens as number[];
    assert.equal(withBos.length, plain.length + 1, 'add_special adds BOS');
    assert.deepEqual((await post(`${h.url}/tokenize`, { model: 'x', messages: [{ role: 'user', content: 'hi' }] })).json, { tokens: [] });
    const messages = [{ role: 'user', content: 'Tell me a story about the sea.' }];
    const tpl = await post(`${h.url}/apply-template`, { messages });
    assert.equal(tpl.status, 200);
    const prompt = tpl.json.prompt as string;
    assert.match(prompt, /Tell me a story about the sea\./);
    // the template's text, tokenized with add_special, is what the chat route counts
    const counted = ((await post(`${h.url}/tokenize`, { content: prompt, add_special: true })).json.tokens as number[]).length;
    const s = await streamSse(`${h.url}/v1/chat/completions`, chat(messages[0]!.content, { stream: true, stream_options: { include_usage: true }, max_tokens: 2 }));
    assert.equal((s.events as unknown as ChatChunk[]).at(-1)!.usage!.prompt_tokens, counted);
    assert.equal((await post(`${h.url}/apply-template`, { messages: [] })).status, 400);

    const endpoint = { url: h.url, api: 'openai-chat' as const, model: h.model };
    const unsized = await runWorkload(endpoint, workload(false));
    const before = unsized.requests.filter((r) => !r.warmup).map((r) => r.promptTokens!);
    assert.ok(before.every((x) => x > ASKED * 1.02), `unsized: ${before.join(', ')} for ${ASKED} asked`);

    const run = await runWorkload(endpoint, workload(true));
    const after = run.requests.filter((r) => !r.warmup).map((r) => r.promptTokens!);
    assert.ok(after.every((x) => !Number.isNaN(x) && Math.abs(x - ASKED) <= 0.02 * ASKED), `sized: ${after.join(', ')} for ${ASKED} asked (${JSON.stringify(run.promptLength)})`);
    assert.ok(run.requests.every((r) => !r.promptTokensEstimated && r.error === undefined));
    assert.equal(run.promptLength?.method, 'tokenize');
    assert.equal(run.promptLength?.tokenizer, 'llama.cpp');
    assert.equal(run.promptLength?.sent?.requests, after.length);
  } finally {
    await kit.stop(h);
  }
});

test('bundled server: 64, 256 and 1024 tokens asked, 24 requests each 4 at a time, every one within 2 % as the server counts it (the chat API and the completions API)', async () => {
  // each slot holds 1024 prompt tokens and the reply
  const h = await kit.start({ parallel: 4, ctxSize: 4 * 2048 });
  try {
    for (const api of ['openai-chat', 'openai-completions'] as const) {
      for (const asked of [64, 256, 1024]) {
        const w = (sizing: boolean) => defaultWorkload({
          requests: 24, warmup: 1, maxTokens: 1, prefixCache: 'cold', mode: { kind: 'closed', concurrency: 4 },
          prompt: { kind: 'synthetic', tokens: asked, sharedPrefix: false, ...(sizing ? { sizing: 'server' as const } : {}) },
        });
        const counted = (r: RunFile) => r.requests.filter((q) => !q.warmup).map((q) => q.promptTokens!);
        const before = counted(await runWorkload({ url: h.url, api, model: h.model }, w(false)));
        const run = await runWorkload({ url: h.url, api, model: h.model }, w(true));
        const after = counted(run);
        const pl = run.promptLength!;
        // the figures for the record: asked → sent (median, lowest–highest), unsized beside it
        console.log(`# ${api} ${asked} asked → ${pl.sent!.p50} sent (${pl.sent!.min}–${pl.sent!.max}, ${pl.sent!.requests} requests; unsized ${Math.min(...before)}–${Math.max(...before)}; ${pl.method}${pl.tokenizer ? ` ${pl.tokenizer}` : ''}, ${pl.words} words)`);
        assert.equal(after.length, 24);
        assert.ok(after.every((x) => Math.abs(x - asked) <= 0.02 * asked), `${api}: ${after.join(', ')} for ${asked} asked (${JSON.stringify(pl)})`);
        assert.equal(pl.method, 'tokenize');
      }
    }
  } finally {
    await kit.stop(h);
  }
});
