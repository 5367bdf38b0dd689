import { test } from 'node:test';
import assert from 'node:assert/strict';
import { splitBaseUrl, endsWithV1 } from '../../src/engine/transport/adapters/adapter';
import { adapterFor, keyHeaderFor } from '../../src/engine/transport/adapters/registry';
import { cacheBustFor } from '../../src/engine/transport/adapters/cacheBust';
import { API_TABLE, apiFacts, apiTableMarkdown, isApiKind, probeOrder, probeTells, API_KINDS } from '../../src/engine/core/apis';
import type { EventInfo } from '../../src/engine/transport/adapters/adapter';
import { createJsonStreamParser } from '../../src/engine/transport/streamParsers';
import type { EndpointSpec, RequestSpec } from '../../src/engine/core/types';
import type { ApiKind } from '../../src/engine/core/apis';

const spec = (over: Partial<RequestSpec> = {}): RequestSpec => ({
  index: 3,
  warmup: false,
  prompt: { messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hello?' }] },
  maxTokens: 64,
  seed: 42,
  ignoreEos: true,
  temperature: 0,
  scheduledAt: 0,
  ...over,
});
const endpoint = (api: EndpointSpec['api'], url = 'http://127.0.0.1:8000', model: string | null = 'm1'): EndpointSpec =>
  model === null ? { url, api } : { url, api, model, headers: { 'x-team': 'perf' } };

/** Runs a raw stream body (as a real server sends it) through the parser and the adapter. */
function interpretStream(api: EndpointSpec['api'], raw: string): { infos: EventInfo[]; done: number; malformed: number } {
  const adapter = adapterFor(api);
  const infos: EventInfo[] = [];
  let done = 0;
  const parser = createJsonStreamParser(adapter.framing, { onValue: (v) => infos.push(adapter.interpret(v)), onDone: () => done++ });
  parser.feedBytes(Buffer.from(raw));
  parser.end();
  return { infos, done, malformed: parser.malformed };
}

test('base URLs: a trailing /v1 and a base path', () => {
  assert.deepEqual(splitBaseUrl('http://127.0.0.1:8000'), { origin: 'http://127.0.0.1:8000', basePath: '', query: '' });
  assert.deepEqual(splitBaseUrl('http://127.0.0.1:8000/v1/'), { origin: 'http://127.0.0.1:8000', basePath: '', query: '' });
  assert.deepEqual(splitBaseUrl('https://gw.example/team/llm/v1'), { origin: 'https://gw.example', basePath: '/team/llm', query: '' });
  assert.deepEqual(splitBaseUrl('https://gw.example/v1?key=k1&x=2'), { origin: 'https://gw.example', basePath: '', query: '?key=k1&x=2' });
  assert.equal(endsWithV1('http://h/v1'), true);
  assert.equal(endsWithV1('http://h/'), false);
  assert.throws(() => splitBaseUrl('localhost:8000'), /not a valid URL|unsupported URL scheme/);
  assert.throws(() => splitBaseUrl('ftp://h/'), /unsupported URL scheme "ftp:"/);
  const built = adapterFor('openai-chat').buildRequest(spec(), endpoint('openai-chat', 'https://gw.example/team/v1'));
  assert.equal(built.path, '/team/v1/chat/completions');
  // The query is sent as given, with every request (gateways take keys there).
  for (const api of ['openai-chat', 'openai-completions', 'ollama', 'llamacpp'] as const) {
    const withQuery = adapterFor(api).buildRequest(spec(), endpoint(api, 'https://gw.example/team/v1?key=k1'));
    assert.match(withQuery.path, /^\/team\/.*\?key=k1$/, api);
  }
});

test('openai-chat request: messages, usage requested, ignore_eos, seed, max_tokens, temperature', () => {
  const r = adapterFor('openai-chat').buildRequest(spec(), endpoint('openai-chat'));
  assert.equal(r.method, 'POST');
  assert.equal(r.path, '/v1/chat/completions');
  assert.equal(r.headers['content-type'], 'application/json');
  assert.equal(r.headers['x-team'], 'perf');
  assert.equal(r.headers.authorization, undefined, 'the key is the client\'s business');
  assert.deepEqual(JSON.parse(r.body), {
    model: 'm1',
    messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hello?' }],
    stream: true,
    stream_options: { include_usage: true },
    max_tokens: 64,
    temperature: 0,
    seed: 42,
    ignore_eos: true,
  });
  // Only the spec's values are sent: the prompt's own were weighed by the runner (sentWith.ts), never read here.
  const plain = JSON.parse(adapterFor('openai-chat').buildRequest(spec({ ignoreEos: false, seed: undefined, temperature: undefined, maxTokens: 9, prompt: { messages: [{ role: 'user', content: 'x' }], maxTokens: 7, temperature: 0.5 } }), endpoint('openai-chat', 'http://h', null)).body);
  assert.deepEqual(plain, { messages: [{ role: 'user', content: 'x' }], stream: true, stream_options: { include_usage: true }, max_tokens: 9 });
});

test('openai-chat events as vLLM streams them: role-only first chunk, content, finish, usage, [DONE]', () => {
  const raw = [
    'data: {"id":"chatcmpl-abc","object":"chat.completion.chunk","created":1730000000,"model":"m1","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}',
    'data: {"id":"chatcmpl-abc","object":"chat.completion.chunk","created":1730000000,"model":"m1","choices":[{"index":0,"delta":{"content":"Hi"},"logprobs":null,"finish_reason":null}]}',
    'data: {"id":"chatcmpl-abc","object":"chat.completion.chunk","created":1730000000,"model":"m1","choices":[{"index":0,"delta":{"content":" there"},"logprobs":null,"finish_reason":"length","stop_reason":null}]}',
    'data: {"id":"chatcmpl-abc","object":"chat.completion.chunk","created":1730000000,"model":"m1","choices":[],"usage":{"prompt_tokens":12,"total_tokens":14,"completion_tokens":2}}',
    'data: [DONE]',
  ].join('\n\n') + '\n\n';
  const { infos, done, malformed } = interpretStream('openai-chat', raw);
  assert.equal(done, 1);
  assert.equal(malformed, 0);
  assert.equal(infos.length, 4);
  assert.deepEqual(infos[0], { responseId: 'chatcmpl-abc' }, 'a role-only chunk carries no text');
  assert.deepEqual(infos[1], { responseId: 'chatcmpl-abc', content: 'Hi' });
  assert.equal(infos[2]!.content, ' there');
  assert.deepEqual(infos[3]!.usage, { promptTokens: 12, completionTokens: 2 });
  assert.equal(infos[3]!.content, undefined);
});

test('openai-chat reasoning: reasoning_content (older vLLM, DeepSeek) and reasoning (newer vLLM), OpenAI usage details', () => {
  const raw = [
    'data: {"id":"r1","choices":[{"index":0,"delta":{"role":"assistant","content":null,"reasoning_content":"Let me think"}}]}',
    'data: {"id":"r1","choices":[{"index":0,"delta":{"reasoning":" more"}}]}',
    'data: {"id":"r1","choices":[{"index":0,"delta":{"content":"42","reasoning_content":null}}]}',
    'data: {"id":"r1","choices":[],"usage":{"prompt_tokens":5,"completion_tokens":9,"total_tokens":14,"completion_tokens_details":{"reasoning_tokens":7}}}',
    'data: [DONE]',
  ].join('\n\n') + '\n\n';
  const { infos } = interpretStream('openai-chat', raw);
  assert.equal(infos[0]!.reasoning, 'Let me think');
  assert.equal(infos[0]!.content, undefined);
  assert.equal(infos[1]!.reasoning, ' more');
  assert.equal(infos[2]!.content, '42');
  assert.equal(infos[2]!.reasoning, undefined);
  assert.deepEqual(infos[3]!.usage, { promptTokens: 5, completionTokens: 9, reasoningTokens: 7 });
});

test('openai-chat: several choices in one chunk count as several tokens; llama.cpp timings kept; errors', () => {
  const info = adapterFor('openai-chat').interpret({ id: 'x', choices: [{ index: 0, delta: { content: 'a' } }, { index: 1, delta: { content: 'b' } }] });
  assert.equal(info.content, 'ab');
  assert.equal(info.tokens, 2);
  const final = adapterFor('openai-chat').interpret({ choices: [{ finish_reason: 'stop', index: 0, delta: {} }], id: 'chatcmpl-l', timings: { prompt_n: 10, prompt_ms: 21.5, predicted_n: 3, predicted_ms: 30.2, predicted_per_second: 99 } });
  assert.deepEqual(final.serverTimings, { source: 'llamacpp', promptTokens: 10, promptMs: 21.5, predictedTokens: 3, predictedMs: 30.2, serverTtftMs: 21.5 });
  assert.match(adapterFor('openai-chat').interpret({ error: { message: 'out of memory', type: 'InternalServerError', code: 500 } }).error!, /out of memory \(500\)/);
  assert.equal(adapterFor('openai-chat').interpret({ object: 'error', message: 'bad request', type: 'BadRequestError', code: 400 }).error, 'bad request');
  assert.deepEqual(adapterFor('openai-chat').interpret('just a string'), {});
  // A server that ignored stream:true answered with one document.
  assert.equal(adapterFor('openai-chat').interpret({ id: 'c', choices: [{ message: { role: 'assistant', content: 'whole' } }] }).content, 'whole');
});

test('openai-completions: request with a plain-text prompt, events with text', () => {
  const r = adapterFor('openai-completions').buildRequest(spec(), endpoint('openai-completions', 'http://h:1/v1'));
  assert.equal(r.path, '/v1/completions');
  const body = JSON.parse(r.body);
  assert.equal(body.prompt, 'Be brief.\n\nHello?');
  assert.deepEqual(body.stream_options, { include_usage: true });
  assert.equal(body.max_tokens, 64);
  assert.equal(body.ignore_eos, true);
  assert.equal(body.seed, 42);
  const raw = [
    'data: {"id":"cmpl-1","object":"text_completion","created":1,"model":"m1","choices":[{"index":0,"text":" Paris","logprobs":null,"finish_reason":null,"stop_reason":null}],"usage":null}',
    'data: {"id":"cmpl-1","object":"text_completion","created":1,"model":"m1","choices":[],"usage":{"prompt_tokens":4,"total_tokens":5,"completion_tokens":1}}',
    'data: [DONE]',
  ].join('\n\n') + '\n\n';
  const { infos, done } = interpretStream('openai-completions', raw);
  assert.equal(done, 1);
  assert.deepEqual(infos[0], { responseId: 'cmpl-1', content: ' Paris' });
  assert.deepEqual(infos[1]!.usage, { promptTokens: 4, completionTokens: 1 });
});

test('ollama: request options, NDJSON stream with thinking and the final object with durations', () => {
  const r = adapterFor('ollama').buildRequest(spec(), endpoint('ollama', 'http://127.0.0.1:11434'));
  assert.equal(r.path, '/api/chat');
  const body = JSON.parse(r.body);
  assert.deepEqual(body, {
    model: 'm1',
    messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hello?' }],
    stream: true,
    options: { num_predict: 64, temperature: 0, seed: 42 },
  });
  assert.equal('ignore_eos' in body, false);
  const raw = [
    '{"model":"qwen3","created_at":"2025-01-01T00:00:00.1Z","message":{"role":"assistant","content":"","thinking":"Hmm"},"done":false}',
    '{"model":"qwen3","created_at":"2025-01-01T00:00:00.2Z","message":{"role":"assistant","content":"Hello"},"done":false}',
    '{"model":"qwen3","created_at":"2025-01-01T00:00:00.3Z","message":{"role":"assistant","content":""},"done_reason":"stop","done":true,"total_duration":5043500667,"load_duration":5025959,"prompt_eval_count":26,"prompt_eval_duration":325953000,"eval_count":290,"eval_duration":4709213000}',
  ].join('\n') + '\n';
  const { infos } = interpretStream('ollama', raw);
  assert.deepEqual(infos[0], { reasoning: 'Hmm' });
  assert.deepEqual(infos[1], { content: 'Hello' });
  assert.equal(infos[2]!.done, true);
  assert.deepEqual(infos[2]!.usage, { promptTokens: 26, completionTokens: 290 });
  assert.deepEqual(infos[2]!.serverTimings, { source: 'ollama', promptTokens: 26, promptMs: 325.953, predictedTokens: 290, predictedMs: 4709.213, loadMs: 5.025959, totalMs: 5043.500667, serverTtftMs: 5.025959 + 325.953 });
  assert.equal(adapterFor('ollama').interpret({ error: 'model "nope" not found, try pulling it first' }).error, 'model "nope" not found, try pulling it first');
});

test('llamacpp: /completion request, token arrays, the final event with timings', () => {
  const r = adapterFor('llamacpp').buildRequest(spec(), endpoint('llamacpp', 'http://127.0.0.1:8080'));
  assert.equal(r.path, '/completion');
  const body = JSON.parse(r.body);
  assert.equal(body.prompt, 'Be brief.\n\nHello?');
  assert.equal(body.n_predict, 64);
  assert.equal(body.ignore_eos, true);
  assert.equal(body.seed, 42);
  assert.equal(body.temperature, 0);
  assert.equal(body.stream, true);
  assert.equal(body.return_tokens, true);
  const raw = [
    'data: {"index":0,"content":" The","tokens":[578],"stop":false,"id_slot":0,"tokens_predicted":1,"tokens_evaluated":6}',
    'data: {"index":0,"content":" cat sat","tokens":[8415,7731],"stop":false,"id_slot":0,"tokens_predicted":3,"tokens_evaluated":6}',
    'data: {"index":0,"content":"","tokens":[],"id_slot":0,"stop":true,"model":"m.gguf","tokens_predicted":3,"tokens_evaluated":6,"stop_type":"limit","timings":{"prompt_n":6,"prompt_ms":12.5,"prompt_per_token_ms":2.08,"prompt_per_second":480,"predicted_n":3,"predicted_ms":40.1,"predicted_per_token_ms":13.4,"predicted_per_second":74.8}}',
  ].join('\n\n') + '\n\n';
  const { infos, done } = interpretStream('llamacpp', raw);
  assert.equal(done, 0, 'no [DONE] on /completion');
  assert.deepEqual(infos[0], { content: ' The', tokens: 1 });
  assert.deepEqual(infos[1], { content: ' cat sat', tokens: 2 });
  assert.equal(infos[2]!.done, true);
  assert.deepEqual(infos[2]!.usage, { promptTokens: 6, completionTokens: 3 });
  assert.deepEqual(infos[2]!.serverTimings, { source: 'llamacpp', promptTokens: 6, promptMs: 12.5, predictedTokens: 3, predictedMs: 40.1, serverTtftMs: 12.5 });
});

test('server timings: vLLM per-request metrics, cached tokens, llama.cpp cache_n, kept as given', () => {
  const chat = adapterFor('openai-chat');
  const last = chat.interpret({ id: 'v', choices: [], usage: { prompt_tokens: 900, completion_tokens: 20, prompt_tokens_details: { cached_tokens: 512 } }, metrics: { queue_time_ms: 12.345, time_to_first_token_ms: 58.75, generation_time_ms: 301.5, mean_itl_ms: 15.1 } });
  assert.deepEqual(last.serverTimings, { source: 'vllm', queueMs: 12.345, promptMs: 58.75, serverTtftMs: 12.345 + 58.75, predictedMs: 301.5, meanItlMs: 15.1, cachedTokens: 512 });
  assert.equal(last.ignoredTimings, undefined);
  const llama = chat.interpret({ choices: [], timings: { prompt_n: 4, prompt_ms: 3.25, predicted_n: 8, predicted_ms: 80, cache_n: 120 } });
  assert.equal(llama.serverTimings!.cachedTokens, 120);
  // completions read the same
  assert.equal(adapterFor('openai-completions').interpret({ choices: [], metrics: { queue_time_ms: 1 } }).serverTimings!.queueMs, 1);
});

test('server timings of the wrong type, negative or absurd are ignored, each with a note', () => {
  const info = adapterFor('openai-chat').interpret({
    choices: [],
    timings: { prompt_n: -3, prompt_ms: 'fast', predicted_n: 5, predicted_ms: 1e12, cache_n: 2.5 },
    metrics: { queue_time_ms: -1, time_to_first_token_ms: { ms: 3 }, mean_itl_ms: 14 },
  });
  assert.deepEqual(info.serverTimings, { source: 'vllm', predictedTokens: 5, meanItlMs: 14 });
  assert.deepEqual(info.ignoredTimings, ['timings.prompt_n: -3', 'timings.prompt_ms: "fast"', 'timings.predicted_ms: 1000000000000', 'timings.cache_n: 2.5', 'metrics.queue_time_ms: -1', 'metrics.time_to_first_token_ms: an object']);
  const ollama = adapterFor('ollama').interpret({ done: true, prompt_eval_duration: -5, eval_count: 3 });
  assert.deepEqual(ollama.ignoredTimings, ['final.prompt_eval_duration: -5']);
  assert.deepEqual(ollama.serverTimings, { source: 'ollama', predictedTokens: 3 });
});

test('adapterFor rejects an unknown API by name', () => {
  assert.throws(() => adapterFor('grpc' as never), /unknown API "grpc"/);
});

test('the registry has an adapter for every API kind, each naming its own kind; an unknown name is refused', () => {
  for (const api of API_KINDS) assert.equal(adapterFor(api).api, api);
  assert.throws(() => adapterFor('grpc' as ApiKind), /unknown API "grpc"/);
  assert.throws(() => adapterFor('toString' as ApiKind), /unknown API "toString"/);
});

test('the API table: its ids are API_KINDS, and each row\'s framing, key header and cold way are what the adapters and the client use', () => {
  assert.deepEqual([...API_KINDS], API_TABLE.map((r) => r.id));
  assert.equal(new Set(API_KINDS).size, API_KINDS.length, 'ids unique');
  for (const row of API_TABLE) {
    assert.equal(apiFacts(row.id), row);
    assert.ok(isApiKind(row.id));
    assert.equal(adapterFor(row.id).framing, row.framing, `${row.id} framing`);
    assert.equal(keyHeaderFor({ api: row.id }), row.keyHeader, `${row.id} key header`);
    assert.equal(cacheBustFor(row.id), row.cold, `${row.id} cold`);
  }
  assert.equal(adapterFor('ollama').framing, 'ndjson');
  assert.equal(cacheBustFor('llamacpp'), 'cache_prompt');
  assert.deepEqual(API_TABLE.filter((r) => r.hosted).map((r) => r.id), ['anthropic', 'gemini', 'azure-openai']);
  assert.equal(apiFacts('toString'), undefined);
  assert.equal(isApiKind('grpc'), false);
  assert.equal(isApiKind(7), false);
});

test('detection\'s order from the table: the probes that look into the answer first, then any 2xx; each probe read as its row says', () => {
  assert.deepEqual(probeOrder().map((r) => r.id), ['ollama', 'llamacpp', 'openai-chat']);
  const [ollama, llamacpp, openai] = probeOrder().map((r) => r.detect.probe);
  assert.equal(probeTells(ollama!, 200, { models: [] }), true);
  assert.equal(probeTells(ollama!, 200, { data: [] }), false);
  assert.equal(probeTells(ollama!, 404, { models: [] }), false);
  assert.equal(probeTells(llamacpp!, 200, { total_slots: 4 }), true);
  assert.equal(probeTells(llamacpp!, 200, ['total_slots']), false);
  assert.equal(probeTells(openai!, 204, undefined), true);
  assert.equal(probeTells(openai!, 301, {}), false);
});

test('the docs\' table of APIs is made from the rows: one line each, with its label, key header and provider name', () => {
  const md = apiTableMarkdown();
  const lines = md.trim().split('\n');
  assert.equal(lines.length, 2 + API_TABLE.length);
  for (const row of API_TABLE) {
    const line = lines.find((l) => l.startsWith(`| \`${row.id}\` |`));
    assert.ok(line, row.id);
    assert.ok(line.includes(row.label) && line.includes(`\`${row.otel.provider}\``), line);
    assert.ok(line.includes(row.keyHeader !== undefined ? `\`${row.keyHeader}\`` : 'Authorization: Bearer'), line);
  }
  assert.match(md, /\| `anthropic` \| .* \| by its URL: host `\*\.anthropic\.com` \|/);
  assert.match(md, /\| `azure-openai` \| .* and a path matching `\/openai\/deployments\/\[\^\/\]\+` \|/);
  assert.match(md, /\| `llamacpp` \| .* \| GET \/props answers with `default_generation_settings` or `total_slots` \|/);
  assert.match(md, /\| `openai-completions` \| .* \| chosen with --api only \|/);
});
