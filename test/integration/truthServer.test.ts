// The test servers that know the truth, tested on their own (no profiler engine): the cost-model
// server's truth log is self-consistent and its timing reports match it, the prefix cache hits and
// misses as documented, the buffering proxy bunches where it says it does (and passes through when
// it says it does), and the stream fixtures are served byte for byte.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createGunzip, gunzipSync } from 'node:zlib';
import { request } from 'undici';
import { startCostModelServer, truthCulprits } from '../support/costModelServer';
import type { CostModelServer, TruthRequest } from '../support/costModelServer';
import { startBufferingProxy } from '../support/bufferingProxy';
import { loadFixture, startFixtureServer } from '../support/fixtureServer';

const now = (): number => performance.timeOrigin + performance.now();
// Every assert.ok here has a message: a failing bare assert.ok(expr) hangs this file under tsx
// (node:assert re-reads the source to word its message and never finishes on this TypeScript).

interface Read {
  readonly at: number;
  readonly bytes: Buffer;
}

interface Reply {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  /** Every data read as it arrived (raw bytes: compressed when the proxy gzips). */
  readonly reads: readonly Read[];
  readonly body: Buffer;
}

async function post(base: string, path: string, body: unknown, headers: Record<string, string> = {}): Promise<Reply> {
  const res = await request(base + path, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  const reads: Read[] = [];
  for await (const chunk of res.body) reads.push({ at: now(), bytes: chunk as Buffer });
  return { status: res.statusCode, headers: res.headers, reads, body: Buffer.concat(reads.map((r) => r.bytes)) };
}

/** The JSON payloads of an SSE body, in order ([DONE] as the string). */
function sseEvents(text: string): unknown[] {
  return text
    .split(/\r?\n\r?\n/)
    .filter((e) => e.trim() !== '')
    .map((e) => {
      const data = e
        .split(/\r?\n/)
        .filter((l) => l.startsWith('data:'))
        .map((l) => l.slice(5).replace(/^ /, ''))
        .join('\n');
      return data === '[DONE]' ? data : JSON.parse(data);
    });
}

type Chunk = { id?: string; choices?: { delta?: { content?: string }; text?: string }[]; usage?: Record<string, unknown>; timings?: Record<string, number>; metrics?: Record<string, number> };
const isContent = (e: unknown): boolean => typeof e === 'object' && e !== null && ((e as Chunk).choices?.some((c) => !!c.delta?.content || !!c.text) ?? false);
/** Content events in one piece of an SSE body. */
const contentEventsIn = (text: string): number => (text.match(/"content":"[^"]+"/g) ?? []).length;

const words = (n: number, word = 'w'): string => Array.from({ length: n }, (_, i) => `${word}${i}`).join(' ');

function chat(prompt: string, maxTokens: number, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { model: 'cost-model', messages: [{ role: 'user', content: prompt }], max_tokens: maxTokens, stream: true, stream_options: { include_usage: true }, ...extra };
}

function truthOf(server: CostModelServer, reply: Reply): TruthRequest {
  const id = reply.headers['x-request-id'];
  assert.equal(typeof id, 'string');
  const t = server.truth.requests.get(id as string);
  assert.ok(t, `${String(id)} in the truth log`);
  return t;
}

/** Arrival time of each content chunk of a streamed reply. */
function contentTimes(reply: Reply): number[] {
  const times: number[] = [];
  for (const r of reply.reads) for (let i = contentEventsIn(r.bytes.toString('utf8')); i > 0; i--) times.push(r.at);
  return times;
}

test('the truth log: tokenSteps match the tokens emitted, the steps and the cost model', { timeout: 30_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'truth-'));
  const logPath = join(dir, 'truth.jsonl');
  const server = await startCostModelServer({ baseMs: 4, kMs: 1, prefillMsPerToken: 0.02, logPath });
  try {
    const replies = await Promise.all([5, 9, 14, 20].map((n, i) => post(server.url, '/v1/chat/completions', chat(words(10 + i * 50), n))));
    for (const [i, reply] of replies.entries()) {
      const maxTokens = [5, 9, 14, 20][i]!;
      const events = sseEvents(reply.body.toString('utf8'));
      const content = events.filter(isContent) as Chunk[];
      const t = truthOf(server, reply);
      // the response id, the header and the truth key are one
      assert.ok(content.every((c) => c.id === t.id), 'every chunk carries the request id');
      assert.equal(content.length, maxTokens);
      assert.equal(t.tokenSteps.length, maxTokens, 'one step per content chunk');
      assert.equal(t.promptTokens, 10 + i * 50);
      assert.ok(t.finished && !t.cancelled, `${t.id} finished`);
      // the first token comes from the step that ends the prefill; then one step after another
      assert.equal(t.tokenSteps[0], t.prefillStep);
      for (let k = 1; k < t.tokenSteps.length; k++) assert.equal(t.tokenSteps[k], t.tokenSteps[k - 1]! + 1, `${t.id} decodes in every step`);
      const first = server.steps[t.prefillStep!]!;
      assert.equal(t.firstTokenAt, first.endAt);
      assert.ok(first.prefilling.some((p) => p.id === t.id && p.completes && p.tokens === t.promptTokens), `${t.id} prefilled whole in step ${first.index}`);
      for (const s of t.tokenSteps.slice(1)) assert.ok(server.steps[s]!.decoding.includes(t.id), `${t.id} decoding in step ${s}`);
      assert.equal(t.lastTokenAt, server.steps[t.tokenSteps.at(-1)!]!.endAt);
      assert.equal(t.prefillMs, t.firstTokenAt! - t.admittedAt!);
      // no chunk arrives before the step that made it was due (timers may fire a fraction early)
      contentTimes(reply).forEach((at, k) => assert.ok(at >= server.steps[t.tokenSteps[k]!]!.endAt - 2, `${t.id} chunk ${k}`));
      // the usage chunk counts what the truth counts
      const usage = (events.find((e) => (e as Chunk).usage) as Chunk).usage!;
      assert.deepEqual([usage.prompt_tokens, usage.completion_tokens], [t.promptTokens, maxTokens]);
    }
    // every step costs exactly the model, and steps follow one another on the schedule
    for (const [i, s] of server.steps.entries()) {
      assert.equal(s.index, i);
      assert.ok(Math.abs(s.costMs - (4 + 1 * s.batch + 0.02 * s.prefillTokens)) < 1e-9, `step ${i} costs the model`);
      assert.equal(s.batch, s.decoding.length);
      assert.equal(s.prefillTokens, s.prefilling.reduce((a, p) => a + p.tokens, 0));
      if (i > 0) assert.ok(s.startAt >= server.steps[i - 1]!.endAt - 1, `step ${i} starts after step ${i - 1} ends`);
    }
    // tokens emitted by the steps = tokens received
    const emitted = server.steps.reduce((a, s) => a + s.decoding.length + s.prefilling.filter((p) => p.completes).length, 0);
    assert.equal(emitted, 5 + 9 + 14 + 20);
    await server.close();
    const lines = readFileSync(logPath, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { type: string; id?: string; index?: number; tokenSteps?: number[] });
    assert.equal(lines.filter((l) => l.type === 'step').length, server.steps.length);
    const logged = lines.filter((l) => l.type === 'request');
    assert.deepEqual(logged.map((l) => l.id).sort(), [...server.truth.requests.keys()].sort());
    for (const l of logged) assert.deepEqual(l.tokenSteps, server.truth.requests.get(l.id!)!.tokenSteps);
  } finally {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a long prompt prefills in one long step: a gap in the other streams, and truthCulprits names it', { timeout: 30_000 }, async () => {
  // 0.1 ms per prompt token: a 1500-word prompt is a step of 150 ms + base, against 6-7 ms decode steps
  const server = await startCostModelServer({ baseMs: 5, kMs: 1, prefillMsPerToken: 0.1 });
  try {
    const shorts = [post(server.url, '/v1/chat/completions', chat('short one', 40)), post(server.url, '/v1/chat/completions', chat('short two', 40))];
    // both short streams decoding before the long prompt comes
    while ([...server.truth.requests.values()].filter((r) => r.tokenSteps.length >= 3).length < 2) await new Promise((r) => setTimeout(r, 5));
    const long = await post(server.url, '/v1/chat/completions', chat(words(1500), 3));
    const replies = await Promise.all(shorts);
    const lt = truthOf(server, long);
    const longStep = server.steps[lt.prefillStep!]!;
    assert.ok(longStep.costMs >= 150 && longStep.costMs === Math.max(...server.steps.map((s) => s.costMs)), `the long prefill step: ${longStep.costMs} ms`);
    assert.deepEqual(longStep.prefilling.map((p) => p.id), [lt.id]);
    for (const reply of replies) {
      const t = truthOf(server, reply);
      const k = t.tokenSteps.indexOf(lt.prefillStep!);
      assert.ok(k > 0, `${t.id} was decoding while ${lt.id} prefilled`);
      // the true cause of the gap that ends at chunk k, and no cause elsewhere
      assert.deepEqual(truthCulprits(server, t.id, k), [lt.id]);
      for (let c = 1; c < t.tokenSteps.length; c++) if (c !== k) assert.ok(!truthCulprits(server, t.id, c).includes(lt.id), `chunk ${c}`);
      // and the client sees it as the stream's largest gap
      const times = contentTimes(reply);
      const gaps = times.slice(1).map((at, i) => at - times[i]!);
      const widest = gaps.indexOf(Math.max(...gaps)) + 1;
      assert.equal(widest, k, `the widest gap ends at chunk ${k} (gaps ${gaps.map((g) => g.toFixed(1)).join(' ')})`);
      // the step is ≥ 155 ms; a late previous chunk (a loaded machine) shortens the gap the client sees
      assert.ok(gaps[k - 1]! >= 100, `gap ${gaps[k - 1]} ms`);
    }
    assert.throws(() => truthCulprits(server, 'cm-999', 0), /no request/);
    assert.throws(() => truthCulprits(server, lt.id, 3), /no chunk 3/);
  } finally {
    await server.close();
  }
});

test('queueMs: zero with a free slot, the wait for the slot when the slots are full', { timeout: 30_000 }, async () => {
  const server = await startCostModelServer({ baseMs: 5, kMs: 0, parallel: 1 });
  try {
    // A holds the only slot for 40 steps (≥ 200 ms); B and C come in meanwhile and wait
    const a = post(server.url, '/v1/chat/completions', chat('first one', 40));
    await new Promise((r) => setTimeout(r, 20));
    const [ra, ...rest] = await Promise.all([a, post(server.url, '/v1/chat/completions', chat('second one', 8)), post(server.url, '/v1/chat/completions', chat('third one', 8))]);
    const ta = truthOf(server, ra!);
    assert.ok(ta.queueMs! < 5, `A is admitted at once (${ta.queueMs} ms)`);
    const [tb, tc] = rest.map((r) => truthOf(server, r)).sort((x, y) => x.admittedAt! - y.admittedAt!);
    for (const [prev, t] of [[ta, tb!], [tb!, tc!]] as const) {
      assert.ok(t.acceptedAt < ta.lastTokenAt!, `${t.id} came while A held the slot`);
      // it takes the slot as the step that emitted the previous one's last token ends
      assert.equal(t.admittedAt, prev.lastTokenAt, `${t.id} admitted as ${prev.id} ended`);
      assert.equal(t.queueMs, t.admittedAt! - t.acceptedAt);
    }
    assert.ok(tb!.queueMs! > 100, `B waited for A (${tb!.queueMs} ms)`);
    assert.ok(tc!.queueMs! > tb!.queueMs!, 'C waited for B too');
  } finally {
    await server.close();
  }
});

test("timings: llama.cpp's timings on the last chunk, vLLM's metrics on the usage chunk, both the schedule's values", { timeout: 30_000 }, async () => {
  const llama = await startCostModelServer({ baseMs: 4, kMs: 1, prefillMsPerToken: 0.05, timings: 'llamacpp' });
  const vllm = await startCostModelServer({ baseMs: 4, kMs: 1, prefillMsPerToken: 0.05, parallel: 1, timings: 'vllm' });
  const none = await startCostModelServer({ baseMs: 4, kMs: 1 });
  try {
    // llama.cpp with include_usage: on the usage chunk (the stream's last); without: on the finish chunk
    for (const includeUsage of [true, false]) {
      const reply = await post(llama.url, '/v1/chat/completions', chat(words(200), 6, { stream_options: { include_usage: includeUsage } }));
      const events = sseEvents(reply.body.toString('utf8'));
      assert.equal(events.at(-1), '[DONE]');
      const last = events.at(-2) as Chunk;
      const t = truthOf(llama, reply);
      assert.deepEqual(Object.keys(last.timings!), ['cache_n', 'prompt_n', 'prompt_ms', 'prompt_per_token_ms', 'prompt_per_second', 'predicted_n', 'predicted_ms', 'predicted_per_token_ms', 'predicted_per_second']);
      assert.equal(last.timings!.prompt_n, 200);
      assert.equal(last.timings!.cache_n, 0);
      assert.equal(last.timings!.prompt_ms, t.prefillMs);
      assert.equal(last.timings!.predicted_n, 6);
      assert.equal(last.timings!.predicted_ms, t.lastTokenAt! - t.firstTokenAt!);
      assert.equal(last.choices!.length, includeUsage ? 0 : 1, includeUsage ? 'the usage chunk' : 'the finish chunk');
      assert.equal(events.filter((e) => (e as Chunk).timings).length, 1, 'timings once');
    }
    // vLLM: the queue is apart from time_to_first_token_ms (scheduled → first token)
    const replies = await Promise.all([0, 1].map(() => post(vllm.url, '/v1/chat/completions', chat(words(100), 5))));
    for (const reply of replies) {
      const events = sseEvents(reply.body.toString('utf8'));
      const usageChunk = events.find((e) => (e as Chunk).usage) as Chunk;
      const t = truthOf(vllm, reply);
      assert.equal(usageChunk.choices!.length, 0);
      assert.deepEqual(usageChunk.metrics, {
        time_to_first_token_ms: t.firstTokenAt! - t.admittedAt!,
        generation_time_ms: t.lastTokenAt! - t.firstTokenAt!,
        queue_time_ms: t.queueMs!,
        mean_itl_ms: (t.lastTokenAt! - t.firstTokenAt!) / 4,
        tokens_per_second: (5 / (t.lastTokenAt! - t.admittedAt!)) * 1000,
      });
      assert.deepEqual(usageChunk.usage!.prompt_tokens_details, { cached_tokens: 0 });
    }
    assert.ok(replies.map((r) => truthOf(vllm, r).queueMs!).some((q) => q > 20), 'one waited for the single slot');
    // vLLM sends no metrics without a usage chunk
    const bare = await post(vllm.url, '/v1/chat/completions', chat('hi there', 3, { stream_options: undefined }));
    assert.ok(sseEvents(bare.body.toString('utf8')).every((e) => !(e as Chunk).metrics && !(e as Chunk).usage), 'no usage, no metrics');
    // non-streamed: top-level
    const whole = await post(vllm.url, '/v1/chat/completions', { ...chat('hi there', 3), stream: false });
    assert.equal((JSON.parse(whole.body.toString('utf8')) as Chunk).metrics!.queue_time_ms, truthOf(vllm, whole).queueMs);
    // default: today's output, nothing added
    const plain = await post(none.url, '/v1/chat/completions', chat('hi there', 3));
    assert.ok(sseEvents(plain.body.toString('utf8')).every((e) => e === '[DONE]' || (!(e as Chunk).timings && !(e as Chunk).metrics)), 'no timings by default');
    // llama.cpp's native /completion: an event per token (with its ids), the last with stop and timings, no [DONE]
    const native = await post(llama.url, '/completion', { prompt: words(50), n_predict: 4, stream: true, return_tokens: true });
    const ne = sseEvents(native.body.toString('utf8')) as { content: string; tokens: number[]; stop: boolean; tokens_predicted?: number; tokens_evaluated?: number; timings?: Record<string, number> }[];
    assert.equal(ne.length, 5);
    assert.ok(ne.slice(0, 4).every((e) => !e.stop && e.content.startsWith(' tok') && e.tokens.length === 1), 'a token per event');
    const fin = ne[4]!;
    assert.ok(fin.stop && fin.tokens_predicted === 4 && fin.tokens_evaluated === 50, JSON.stringify(fin));
    assert.equal(fin.timings!.prompt_ms, truthOf(llama, native).prefillMs);
  } finally {
    await Promise.all([llama.close(), vllm.close(), none.close()]);
  }
});

test('prefix cache: a repeat is served from the cache; cache_prompt:false and a new cache_salt are not', { timeout: 30_000 }, async () => {
  const server = await startCostModelServer({ baseMs: 3, kMs: 0, prefillMsPerToken: 0.2, prefixCache: true, timings: 'llamacpp' });
  const off = await startCostModelServer({ baseMs: 3, kMs: 0, prefillMsPerToken: 0.2 });
  try {
    const prompt = words(100);
    const send = async (p: string, extra: Record<string, unknown> = {}) => {
      const reply = await post(server.url, '/v1/chat/completions', chat(p, 2, extra));
      const t = truthOf(server, reply);
      const timings = (sseEvents(reply.body.toString('utf8')).find((e) => (e as Chunk).timings) as Chunk).timings!;
      assert.equal(timings.cache_n, t.cachedTokens, 'the server reports what the truth says');
      assert.equal(timings.prompt_n, t.promptTokens - t.cachedTokens);
      assert.equal(server.steps[t.prefillStep!]!.prefillTokens, t.promptTokens - t.cachedTokens, 'only the uncached tokens cost prefill');
      return t;
    };
    const cold = await send(prompt);
    assert.equal(cold.cachedTokens, 0);
    const warm = await send(prompt);
    assert.equal(warm.cachedTokens, 99, 'all but the last token');
    assert.ok(warm.prefillMs! < cold.prefillMs! / 4, `warm ${warm.prefillMs} ms vs cold ${cold.prefillMs} ms`);
    const variant = await send(words(60) + ' ' + words(40, 'x'));
    assert.equal(variant.cachedTokens, 60, 'the longest common word prefix');
    const bust = await send(prompt, { cache_prompt: false });
    assert.equal(bust.cachedTokens, 0);
    assert.equal(bust.cachePrompt, false);
    const salted = await send(prompt, { cache_salt: 'tenant-a' });
    assert.equal(salted.cachedTokens, 0, 'a new salt shares nothing');
    assert.equal(salted.cacheSalt, 'tenant-a');
    assert.equal((await send(prompt, { cache_salt: 'tenant-a' })).cachedTokens, 99, 'the same salt does');
    assert.equal((await send(prompt, { cache_salt: 'tenant-b' })).cachedTokens, 0);
    // without prefixCache, nothing is ever cached
    for (let i = 0; i < 2; i++) {
      const r = await post(off.url, '/v1/chat/completions', chat(prompt, 2));
      assert.equal(truthOf(off, r).cachedTokens, 0);
    }
  } finally {
    await Promise.all([server.close(), off.close()]);
  }
});

test('the buffering proxy: time mode bunches several events per read, pass mode one, count mode N', { timeout: 30_000 }, async () => {
  const upstream = await startCostModelServer({ baseMs: 8, kMs: 0 });
  const timed = await startBufferingProxy({ target: upstream.url, mode: 'time', flushMs: 60, headers: { 'x-cache': 'MISS' } });
  const pass = await startBufferingProxy({ target: upstream.url, mode: 'pass' });
  const counted = await startBufferingProxy({ target: upstream.url, mode: 'count', events: 5 });
  try {
    const body = chat('a prompt', 30);
    // time: each read is one flush, carrying the ~7 tokens of 60 ms
    const t = await post(timed.url, '/v1/chat/completions', body);
    const perRead = t.reads.map((r) => contentEventsIn(r.bytes.toString('utf8'))).filter((n) => n > 0);
    assert.equal(perRead.reduce((a, n) => a + n, 0), 30);
    assert.ok(perRead.reduce((a, n) => a + n, 0) / perRead.length >= 3, `content events per read: ${perRead.join(' ')}`);
    assert.equal(t.headers['x-cache'], 'MISS');
    assert.equal(t.headers['x-request-id'], truthOf(upstream, t).id, 'upstream headers come through');
    const tl = timed.log.at(-1)!;
    assert.equal(tl.path, '/v1/chat/completions');
    assert.ok(tl.flushes.filter((f) => !f.final).length >= 3, `${tl.flushes.length} flushes`);
    assert.equal(tl.flushes.at(-1)!.final, true);
    assert.equal(tl.flushes.reduce((a, f) => a + f.rawBytes, 0), tl.upstream.reduce((a, u) => a + u.bytes, 0), 'every byte forwarded once');
    assert.equal(tl.flushes.reduce((a, f) => a + f.bytes, 0), t.body.length);
    assert.ok(tl.flushes.slice(1, -1).every((f, i) => f.at - tl.flushes[i]!.at >= 50), 'flushes about flushMs apart');
    assert.ok(tl.flushes.some((f) => f.events >= 4), 'several events in a flush');
    // the client's reads line up with the proxy's flushes
    assert.ok(t.reads.length <= tl.flushes.filter((f) => f.bytes > 0).length, `${t.reads.length} reads, ${tl.flushes.length} flushes`);
    // pass: a write per upstream chunk (and the end), so one content event per read; a via header
    const p = await post(pass.url, '/v1/chat/completions', body);
    const pl = pass.log.at(-1)!;
    assert.equal(pl.flushes.length, pl.upstream.length + 1);
    assert.ok(pl.flushes.every((f, i) => i === pl.upstream.length || f.rawBytes === pl.upstream[i]!.bytes), 'each upstream chunk written as it came');
    const passReads = p.reads.map((r) => contentEventsIn(r.bytes.toString('utf8'))).filter((n) => n > 0);
    assert.equal(passReads.reduce((a, n) => a + n, 0), 30);
    // a client stalled for a step (GC, a loaded machine) may find two in its socket: tolerate one such read
    assert.ok(passReads.filter((n) => n > 1).length <= 1, `content events per read: ${passReads.join(' ')}`);
    assert.equal(p.headers.via, '1.1 test-proxy');
    // count: flushes of exactly 5 events (SSE events: the role chunk, 30 tokens, finish, usage, [DONE])
    const c = await post(counted.url, '/v1/chat/completions', body);
    const cl = counted.log.at(-1)!;
    assert.deepEqual(cl.flushes.map((f) => f.events), [5, 5, 5, 5, 5, 5, 4]);
    assert.equal(sseEvents(c.body.toString('utf8')).filter(isContent).length, 30);
    // the same stream through every proxy
    const direct = sseEvents((await post(upstream.url, '/v1/chat/completions', body)).body.toString('utf8')).filter(isContent).length;
    assert.equal(direct, 30);
  } finally {
    await Promise.all([timed.close(), pass.close(), counted.close()]);
    await upstream.close();
  }
});

test('the buffering proxy gzips an event stream, flushing the compressor at each flush', { timeout: 30_000 }, async () => {
  const upstream = await startCostModelServer({ baseMs: 8, kMs: 0 });
  const proxy = await startBufferingProxy({ target: upstream.url, mode: 'time', flushMs: 50, gzip: true });
  try {
    const res = await request(proxy.url + '/v1/chat/completions', { method: 'POST', headers: { 'content-type': 'application/json', 'accept-encoding': 'gzip' }, body: JSON.stringify(chat('a prompt', 25)) });
    assert.equal(res.headers['content-encoding'], 'gzip');
    // decompress as it arrives: text must come out before the end, a flush at a time
    const gunzip = createGunzip();
    const plain: { at: number; text: string }[] = [];
    gunzip.on('data', (b: Buffer) => plain.push({ at: now(), text: b.toString('utf8') }));
    const raw: Buffer[] = [];
    for await (const chunk of res.body) {
      raw.push(chunk as Buffer);
      gunzip.write(chunk);
    }
    gunzip.end();
    await new Promise((r) => gunzip.once('end', r));
    const text = gunzipSync(Buffer.concat(raw)).toString('utf8');
    assert.equal(plain.map((p) => p.text).join(''), text);
    assert.equal(sseEvents(text).filter(isContent).length, 25);
    const l = proxy.log.at(-1)!;
    assert.ok(l.flushes.length >= 3, `${l.flushes.length} flushes`);
    assert.ok(plain.length >= 3 && plain[0]!.at < plain.at(-1)!.at - 50, 'decompressed text arrived over time, not at the end');
  } finally {
    await proxy.close();
    await upstream.close();
  }
});

test('the buffering proxy closes cleanly with a stream in flight, and the upstream sees the client go', { timeout: 30_000 }, async () => {
  const upstream = await startCostModelServer({ baseMs: 10, kMs: 0 });
  const proxy = await startBufferingProxy({ target: upstream.url, mode: 'time', flushMs: 30 });
  try {
    const res = await request(proxy.url + '/v1/chat/completions', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(chat('a prompt', 1000)) });
    const reading = (async () => {
      try {
        for await (const chunk of res.body) void chunk;
        return 'ended';
      } catch {
        return 'broke';
      }
    })();
    await new Promise((r) => setTimeout(r, 100));
    const t0 = now();
    await proxy.close();
    assert.ok(now() - t0 < 1000, 'close does not wait for the stream');
    assert.equal(await reading, 'broke');
    const deadline = now() + 2000;
    while (!upstream.truth.requests.get('cm-0')?.cancelled && now() < deadline) await new Promise((r) => setTimeout(r, 10));
    assert.equal(upstream.truth.requests.get('cm-0')!.cancelled, true, 'the upstream request was cancelled');
    assert.ok(proxy.log[0]!.aborted, JSON.stringify(proxy.log[0]));
  } finally {
    await proxy.close();
    await upstream.close();
  }
});

test('stream fixtures: each parses, and the fixture server replays body and headers an event at a time', { timeout: 30_000 }, async () => {
  const names = ['ollama-chat', 'ollama-chat-cold-load', 'tgi-chat', 'tgi-chat-nonstream', 'vllm-chat', 'llamacpp-chat', 'llamacpp-completion'];
  for (const name of names) {
    const f = loadFixture(name);
    assert.equal(Buffer.concat([...f.events]).toString('utf8'), f.body.toString('utf8'));
    if (f.framing === 'ndjson') for (const e of f.events) JSON.parse(e.toString('utf8'));
    if (f.framing === 'sse') assert.equal(sseEvents(f.body.toString('utf8')).length, f.events.length);
    if (f.framing === 'json') JSON.parse(f.body.toString('utf8'));
  }
  // Ollama's final object carries its durations in ns
  const ollama = loadFixture('ollama-chat');
  const final = JSON.parse(ollama.events.at(-1)!.toString('utf8')) as Record<string, unknown>;
  for (const k of ['total_duration', 'load_duration', 'prompt_eval_count', 'prompt_eval_duration', 'eval_count', 'eval_duration']) assert.equal(typeof final[k], 'number', k);
  assert.equal(final.done, true);
  // TGI: no timing headers on a stream, all of them on a whole reply
  assert.equal(loadFixture('tgi-chat').headers['x-queue-time'], undefined);
  assert.equal(loadFixture('tgi-chat-nonstream').headers['x-queue-time'], '31');

  for (const name of ['tgi-chat', 'ollama-chat', 'tgi-chat-nonstream']) {
    const server = await startFixtureServer({ fixture: name, delayMs: 15 });
    try {
      const path = name.startsWith('ollama') ? '/api/chat' : '/v1/chat/completions';
      const reply = await post(server.url, path, { stream: true });
      assert.equal(reply.status, 200);
      assert.equal(reply.body.toString('utf8'), server.fixture.body.toString('utf8'));
      for (const [k, v] of Object.entries(server.fixture.headers)) if (!['date', 'transfer-encoding'].includes(k)) assert.equal(reply.headers[k], v, k);
      // with 15 ms between events, each event is its own read
      assert.equal(reply.reads.length, server.fixture.events.length);
      assert.equal(server.seen[0]!.path, path);
      const probe = await request(server.url + (name.startsWith('ollama') ? '/api/tags' : '/v1/models'));
      assert.equal(probe.statusCode, 200);
      await probe.body.json();
    } finally {
      await server.close();
    }
  }
});
