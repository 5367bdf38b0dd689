// The hosted providers' adapters (Anthropic, Gemini, Azure OpenAI): the request each builds, what each
// reads out of the fixture streams of test/fixtures/streams/{anthropic,gemini,azure-openai} (through
// the real stream parser, fed whole and cut at every byte), and which API a provider's URL names.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { adapterFor, keyHeaderFor } from '../../src/engine/transport/adapters/registry';
import { API_KINDS, apiFacts, apiFromUrl } from '../../src/engine/core/apis';
import { deploymentOf } from '../../src/engine/transport/adapters/azureOpenai';
import { modelPath } from '../../src/engine/transport/adapters/gemini';
import type { EventInfo } from '../../src/engine/transport/adapters/adapter';
import { detectApi } from '../../src/engine/transport/detect';
import { createJsonStreamParser } from '../../src/engine/transport/streamParsers';
import type { EndpointSpec, RequestSpec, ToolDefinition } from '../../src/engine/core/types';
import type { ApiKind } from '../../src/engine/core/apis';
import { eventData, fixtureEvents, isTokenEvent } from '../support/providerFakes';
import type { Provider } from '../support/providerFakes';

const spec = (over: Partial<RequestSpec> = {}): RequestSpec => ({
  index: 0,
  warmup: false,
  prompt: { messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hello?' }, { role: 'assistant', content: 'Hi.' }, { role: 'user', content: 'Why is the sky blue?' }] },
  maxTokens: 64,
  seed: 42,
  ignoreEos: true,
  temperature: 0.5,
  scheduledAt: 0,
  ...over,
});
const endpoint = (api: ApiKind, url: string, model?: string, headers?: Record<string, string>): EndpointSpec => ({ url, api, ...(model !== undefined ? { model } : {}), ...(headers ? { headers } : {}) });

/** The infos of a fixture stream, parsed by the real parser: whole, or cut in two at `cut`. */
function interpretFixture(provider: Provider, name: string, cut?: number): { infos: EventInfo[]; malformed: number } {
  const adapter = adapterFor(provider);
  const infos: EventInfo[] = [];
  const parser = createJsonStreamParser(adapter.framing, { onValue: (v) => infos.push(adapter.interpret(v)) });
  const body = fixtureEvents(provider, name).body;
  if (cut === undefined) parser.feedBytes(body);
  else {
    parser.feedBytes(body.subarray(0, cut));
    parser.feedBytes(body.subarray(cut));
  }
  parser.end();
  return { infos, malformed: parser.malformed };
}

const texts = (infos: EventInfo[], field: 'content' | 'reasoning'): string[] => infos.flatMap((i) => (i[field] ? [i[field]] : []));

test('apiFromUrl: the hosted providers\' real URLs name their API; anything else is left to probing', () => {
  const cases: [string, ApiKind | undefined][] = [
    ['https://api.anthropic.com', 'anthropic'],
    ['https://api.anthropic.com/v1', 'anthropic'],
    ['https://API.Anthropic.com./', 'anthropic'],
    ['https://generativelanguage.googleapis.com', 'gemini'],
    ['https://generativelanguage.googleapis.com/v1beta?key=abc', 'gemini'],
    ['https://myres.openai.azure.com/openai/deployments/gpt-4o?api-version=2024-10-21', 'azure-openai'],
    ['https://myres.openai.azure.com/openai/deployments/gpt-4o/chat/completions?api-version=2024-10-21', 'azure-openai'],
    ['https://myres.cognitiveservices.azure.com/openai/deployments/o4-mini?api-version=2025-01-01-preview', 'azure-openai'],
    ['https://myproj.services.ai.azure.com/openai/deployments/gpt-4.1?api-version=2024-10-21', 'azure-openai'],
    // The Azure v1 form is OpenAI's API; Gemini's OpenAI-compatible path is not the native one.
    ['https://myres.openai.azure.com/openai/v1', undefined],
    ['https://myres.openai.azure.com', undefined],
    ['https://generativelanguage.googleapis.com/v1beta/openai/', undefined],
    ['https://api.openai.com/v1', undefined],
    ['http://127.0.0.1:8000', undefined],
    // Look-alikes are not the providers.
    ['https://api.anthropic.com.attacker.example/v1', undefined],
    ['https://anthropic.com-proxy.example', undefined],
    ['https://myres.openai.azure.com.evil.example/openai/deployments/x', undefined],
    ['https://generativelanguage.googleapis.com.evil.example', undefined],
    ['ftp://api.anthropic.com', undefined],
    ['not a url', undefined],
  ];
  for (const [url, api] of cases) assert.equal(apiFromUrl(url), api, url);
});

test('detectApi answers a provider URL from the URL alone, before any request', async () => {
  // Nothing is reachable from a test: a probe would fail with a PreflightError, not return.
  assert.equal(await detectApi('https://api.anthropic.com', { timeoutMs: 50 }), 'anthropic');
  assert.equal(await detectApi('https://generativelanguage.googleapis.com/v1beta', { timeoutMs: 50 }), 'gemini');
  assert.equal(await detectApi('https://myres.openai.azure.com/openai/deployments/gpt-4o?api-version=2024-10-21', { timeoutMs: 50 }), 'azure-openai');
});

test('each provider\'s key header, unless the endpoint names one; Anthropic\'s version on every probe', () => {
  assert.equal(keyHeaderFor({ api: 'anthropic' }), 'x-api-key');
  assert.equal(keyHeaderFor({ api: 'gemini' }), 'x-goog-api-key');
  assert.equal(keyHeaderFor({ api: 'azure-openai' }), 'api-key');
  assert.equal(keyHeaderFor({ api: 'openai-chat' }), undefined);
  assert.equal(keyHeaderFor({ api: 'anthropic', apiKeyHeader: 'authorization' }), 'authorization');
  assert.deepEqual(adapterFor('anthropic').probeHeaders, { 'anthropic-version': '2023-06-01' });
  assert.equal(adapterFor('gemini').probeHeaders, undefined);
});

test('anthropic request: /v1/messages, system apart, anthropic-version, no seed nor ignore_eos', () => {
  const a = adapterFor('anthropic');
  const r = a.buildRequest(spec(), endpoint('anthropic', 'https://api.anthropic.com', 'claude-sonnet-4-5', { 'x-team': 'perf' }));
  assert.equal(r.method, 'POST');
  assert.equal(r.path, '/v1/messages');
  assert.equal(r.headers['x-api-key'], undefined, 'the key is the client\'s business');
  assert.deepEqual(r.headers, { 'x-team': 'perf', 'content-type': 'application/json', accept: 'text/event-stream', 'anthropic-version': '2023-06-01' });
  assert.deepEqual(JSON.parse(r.body), {
    model: 'claude-sonnet-4-5',
    max_tokens: 64,
    system: 'Be brief.',
    messages: [{ role: 'user', content: 'Hello?' }, { role: 'assistant', content: 'Hi.' }, { role: 'user', content: 'Why is the sky blue?' }],
    stream: true,
    temperature: 0.5,
  });
  // A version the endpoint sets wins, in any case; a base path and a query are kept (a gateway in front, /v1 dropped).
  const own = a.buildRequest(spec({ temperature: undefined, seed: undefined }), endpoint('anthropic', 'https://gw.example/anthropic/v1?team=a', 'm', { 'Anthropic-Version': '2024-01-01' }));
  assert.equal(own.path, '/anthropic/v1/messages?team=a');
  assert.equal(own.headers['Anthropic-Version'], '2024-01-01');
  assert.equal(own.headers['anthropic-version'], undefined);
  // A prompt that is only a system text is the user's turn; a cold request's nonce leads the first message.
  const lone = JSON.parse(a.buildRequest(spec({ prompt: { messages: [{ role: 'system', content: 'Say hi.' }] }, cacheBust: 'nonce', nonce: 'k3f9' }), endpoint('anthropic', 'http://h', 'm')).body) as Record<string, unknown>;
  assert.deepEqual(lone.messages, [{ role: 'user', content: '[k3f9] Say hi.' }]);
  assert.equal('system' in lone, false);
});

test('anthropic stream (docs\' basic layout): text deltas, pings ignored, id, usage, message_stop', () => {
  const { infos, malformed } = interpretFixture('anthropic', 'text');
  assert.equal(malformed, 0);
  assert.equal(texts(infos, 'content').join(''), 'The sky looks blue because air scatters short wavelengths most.');
  assert.equal(texts(infos, 'content').length, 10);
  assert.deepEqual(infos[0], { usage: { promptTokens: 25 }, responseId: 'msg_01Hq7rVxT2bNc4KdW8mPzLfA' }, 'message_start\'s output_tokens is a placeholder');
  assert.deepEqual(infos[1], {}, 'content_block_start with empty text');
  assert.deepEqual(infos[2], {}, 'ping');
  const delta = infos.find((i) => i.usage?.completionTokens !== undefined);
  assert.deepEqual(delta?.usage, { completionTokens: 10 });
  assert.deepEqual(infos[infos.length - 1], { done: true });
  assert.equal(infos.filter((i) => i.done).length, 1);
});

test('anthropic: cached prompt tokens (input + cache read + cache write), thinking as reasoning, signature not a token, errors', () => {
  const cached = interpretFixture('anthropic', 'cached').infos[0]!;
  assert.deepEqual(cached.usage, { promptTokens: 12 + 0 + 2048 });
  assert.deepEqual(cached.serverTimings, { cachedTokens: 2048 });

  const { infos } = interpretFixture('anthropic', 'thinking');
  const reasoning = texts(infos, 'reasoning');
  assert.equal(reasoning.length, 5);
  assert.match(reasoning[0]!, /^Light from the sun/);
  assert.equal(texts(infos, 'content').join(''), 'Air scatters blue light most.');
  const firstText = infos.findIndex((i) => i.content);
  assert.ok(infos.findIndex((i) => i.reasoning) < firstText, 'reasoning comes first');
  assert.equal(infos.filter((i) => i.content || i.reasoning).length, 10, 'the signature delta is no token');
  assert.equal(infos.some((i) => i.usage), false, 'the docs\' thinking example carries no usage');

  const broken = interpretFixture('anthropic', 'error-midstream').infos;
  assert.equal(texts(broken, 'content').length, 3);
  assert.equal(broken[broken.length - 1]!.error, 'Overloaded (overloaded_error)');

  const a = adapterFor('anthropic');
  assert.deepEqual(a.interpret({ type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '{"loc' } }), { toolCalls: [{ index: 1, args: '{"loc' }] }, 'a tool call\'s piece, not text');
  assert.deepEqual(a.interpret({ type: 'content_block_delta', index: 0, delta: { type: 'citations_delta', citation: {} } }), {});
  assert.deepEqual(a.interpret({ type: 'some_future_event' }), {});
  assert.deepEqual(a.interpret({ error: { message: 'upstream timed out', code: 504 } }), { error: 'upstream timed out (504)' }, 'a gateway\'s error object');
  assert.deepEqual(a.interpret({ type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 30, input_tokens: 5, cache_read_input_tokens: 100 } }).usage, { promptTokens: 105, completionTokens: 30 });
  // stream:true ignored by something in between: the whole Message as one document.
  const whole = a.interpret({ id: 'msg_1', type: 'message', role: 'assistant', content: [{ type: 'thinking', thinking: 'hm' }, { type: 'text', text: 'Hi!' }], usage: { input_tokens: 9, output_tokens: 4 } });
  assert.deepEqual(whole, { usage: { promptTokens: 9, completionTokens: 4 }, responseId: 'msg_1', content: 'Hi!', reasoning: 'hm', done: true });
  assert.deepEqual(a.interpret('ping'), {});
});

test('gemini request: the model in the path (either name form), alt=sse after the URL\'s own query, roles user/model, systemInstruction', () => {
  const g = adapterFor('gemini');
  const r = g.buildRequest(spec(), endpoint('gemini', 'https://generativelanguage.googleapis.com', 'gemini-2.5-flash', { 'x-team': 'perf' }));
  assert.equal(r.path, '/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse');
  assert.deepEqual(r.headers, { 'x-team': 'perf', 'content-type': 'application/json', accept: 'text/event-stream' });
  assert.deepEqual(JSON.parse(r.body), {
    contents: [
      { role: 'user', parts: [{ text: 'Hello?' }] },
      { role: 'model', parts: [{ text: 'Hi.' }] },
      { role: 'user', parts: [{ text: 'Why is the sky blue?' }] },
    ],
    systemInstruction: { parts: [{ text: 'Be brief.' }] },
    generationConfig: { maxOutputTokens: 64, temperature: 0.5, seed: 42 },
  });
  const path = (url: string, model = 'gemini-2.5-flash'): string => g.buildRequest(spec(), endpoint('gemini', url, model)).path;
  assert.equal(path('https://generativelanguage.googleapis.com/v1beta/', 'models/gemini-2.5-flash'), '/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse');
  assert.equal(path('https://generativelanguage.googleapis.com/v1alpha'), '/v1alpha/models/gemini-2.5-flash:streamGenerateContent?alt=sse');
  assert.equal(path('https://generativelanguage.googleapis.com/v1beta?key=K1'), '/v1beta/models/gemini-2.5-flash:streamGenerateContent?key=K1&alt=sse');
  assert.equal(path('https://gw.example/google?key=K1&alt=json&x=1'), '/google/v1beta/models/gemini-2.5-flash:streamGenerateContent?key=K1&x=1&alt=sse');
  assert.equal(path('https://generativelanguage.googleapis.com', 'tunedModels/my-tune'), '/v1beta/tunedModels/my-tune:streamGenerateContent?alt=sse');
  assert.equal(modelPath('a b'), 'models/a%20b');
  assert.throws(() => g.buildRequest(spec(), endpoint('gemini', 'https://generativelanguage.googleapis.com')), /needs a model/);
  const body = JSON.parse(g.buildRequest(spec({ seed: undefined, temperature: undefined, maxTokens: 7, prompt: { messages: [{ role: 'user', content: 'x' }], maxTokens: 99 } }), endpoint('gemini', 'http://h', 'm')).body) as Record<string, unknown>;
  assert.deepEqual(body, { contents: [{ role: 'user', parts: [{ text: 'x' }] }], generationConfig: { maxOutputTokens: 7 } }, "the spec's max tokens, never the prompt's own");
  assert.equal(g.probeBaseUrl!('https://generativelanguage.googleapis.com/v1beta?key=K1'), 'https://generativelanguage.googleapis.com/?key=K1');
  assert.equal(g.probeBaseUrl!('https://gw.example/google/'), 'https://gw.example/google');
});

test('gemini stream (CRLF frames): cumulative usage, cached tokens, thought parts as reasoning, errors', () => {
  const { infos, malformed } = interpretFixture('gemini', 'text');
  assert.equal(malformed, 0);
  assert.equal(infos.length, 6);
  assert.equal(texts(infos, 'content').join(''), 'The sky looks blue because the air scatters short wavelengths of sunlight far more than long ones.');
  assert.deepEqual(infos.map((i) => i.usage?.completionTokens), [4, 7, 9, 12, 15, 19], 'cumulative, as sent');
  assert.ok(infos.every((i) => i.usage?.promptTokens === 1210 && i.serverTimings?.cachedTokens === 1024 && i.responseId === 'mJ4aaPrXGo2p1MkP7_yg4QM'));
  assert.equal(infos.some((i) => i.done), false, 'the stream ends with the connection');

  const thinking = interpretFixture('gemini', 'thinking').infos;
  assert.equal(texts(thinking, 'reasoning').length, 2);
  assert.match(texts(thinking, 'reasoning')[0]!, /^\*\*Recalling Rayleigh scattering\*\*/);
  assert.equal(texts(thinking, 'content').join(''), 'Air scatters blue light more than red light.');
  assert.deepEqual(thinking[0]!.usage, { promptTokens: 9, completionTokens: 38, reasoningTokens: 38 });
  assert.deepEqual(thinking[thinking.length - 1]!.usage, { promptTokens: 9, completionTokens: 9 + 72, reasoningTokens: 72 });

  const broken = interpretFixture('gemini', 'error-midstream').infos;
  assert.equal(texts(broken, 'content').length, 2);
  assert.match(broken[2]!.error!, /^An internal error has occurred\..* \(500\)$/);

  const g = adapterFor('gemini');
  assert.deepEqual(g.interpret({ promptFeedback: { blockReason: 'SAFETY' }, usageMetadata: { promptTokenCount: 5 } }), { error: 'the prompt was blocked (SAFETY)' });
  assert.deepEqual(g.interpret({ candidates: [{ content: { parts: [{ text: '', thoughtSignature: 'EqMD' }], role: 'model' }, finishReason: 'STOP', index: 0 }] }), {}, 'a signature part is no token');
  assert.deepEqual(g.interpret({ candidates: [{ content: { parts: [{ functionCall: { name: 'f', args: {} } }] } }] }), { toolCalls: [{ name: 'f', args: '{}' }] }, 'a call, not text');
  assert.deepEqual(g.interpret({ usageMetadata: { promptTokenCount: 3, cachedContentTokenCount: -1 } }), { usage: { promptTokens: 3 }, ignoredTimings: ['usageMetadata.cachedContentTokenCount: -1'] });
});

test('azure-openai request: the deployment URL\'s path and api-version, OpenAI\'s body, never ignore_eos; the v1 form', () => {
  const z = adapterFor('azure-openai');
  const url = 'https://myres.openai.azure.com/openai/deployments/gpt-4o?api-version=2024-10-21';
  const r = z.buildRequest(spec(), endpoint('azure-openai', url, 'gpt-4o'));
  assert.equal(r.path, '/openai/deployments/gpt-4o/chat/completions?api-version=2024-10-21');
  assert.deepEqual(JSON.parse(r.body), {
    model: 'gpt-4o',
    messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hello?' }, { role: 'assistant', content: 'Hi.' }, { role: 'user', content: 'Why is the sky blue?' }],
    stream: true,
    stream_options: { include_usage: true },
    max_tokens: 64,
    temperature: 0.5,
    seed: 42,
  });
  const path = (u: string): string => z.buildRequest(spec(), endpoint('azure-openai', u, 'd')).path;
  assert.equal(path('https://myres.openai.azure.com/openai/deployments/gpt-4o/chat/completions?api-version=2024-10-21'), '/openai/deployments/gpt-4o/chat/completions?api-version=2024-10-21');
  assert.equal(path('https://apim.example/team/openai/deployments/gpt-4o/?api-version=2024-10-21'), '/team/openai/deployments/gpt-4o/chat/completions?api-version=2024-10-21');
  assert.equal(path('https://myres.openai.azure.com/openai/v1'), '/openai/v1/chat/completions');
  assert.equal(deploymentOf(url), 'gpt-4o');
  assert.equal(deploymentOf('https://r.openai.azure.com/openai/deployments/my%20dep/chat/completions'), 'my dep');
  assert.equal(deploymentOf('https://r.openai.azure.com/openai/v1'), undefined);
  assert.equal(z.probeBaseUrl!(url), 'https://myres.openai.azure.com/openai?api-version=2024-10-21');
});

test('azure-openai stream: the prompt-filter chunk and the role chunk carry no token; content, usage, id as OpenAI\'s', () => {
  const { infos, malformed } = interpretFixture('azure-openai', 'chat');
  assert.equal(malformed, 0);
  assert.deepEqual(infos[0], {}, 'prompt_filter_results with an empty id');
  assert.deepEqual(infos[1], { responseId: 'chatcmpl-B1sKq7mZ3tV9xW2cY5nR8pL4dQ6hJ' });
  assert.equal(texts(infos, 'content').length, 10);
  assert.deepEqual(infos[infos.length - 1]!.usage, { promptTokens: 25, completionTokens: 10, reasoningTokens: 0 });
  assert.deepEqual(infos[infos.length - 1]!.serverTimings, { cachedTokens: 0 });
  const broken = interpretFixture('azure-openai', 'error-midstream').infos;
  assert.equal(texts(broken, 'content').length, 3);
  assert.equal(broken[broken.length - 1]!.error, 'The server had an error while processing your request. Sorry about that! (server_error)');
});

test('every provider fixture reads the same cut at any byte, and the fake\'s token events are the adapter\'s', () => {
  const fixtures: [Provider, string][] = [
    ['openai-chat', 'text'], ['openai-chat', 'tool-call'],
    ['anthropic', 'text'], ['anthropic', 'cached'], ['anthropic', 'thinking'], ['anthropic', 'error-midstream'], ['anthropic', 'tool-call'],
    ['gemini', 'text'], ['gemini', 'thinking'], ['gemini', 'error-midstream'], ['gemini', 'tool-call'],
    ['azure-openai', 'chat'], ['azure-openai', 'error-midstream'],
  ];
  for (const [provider, name] of fixtures) {
    const whole = JSON.stringify(interpretFixture(provider, name).infos);
    const { events, body } = fixtureEvents(provider, name);
    assert.equal(Buffer.concat(events).equals(body), true, `${provider}/${name}: the events are the body`);
    for (let cut = 1; cut < body.length; cut++) {
      const { infos, malformed } = interpretFixture(provider, name, cut);
      if (malformed !== 0 || JSON.stringify(infos) !== whole) assert.fail(`${provider}/${name} cut at byte ${cut} reads differently (${malformed} malformed)`);
    }
    // The fake paces the events it sees as tokens: they must be the ones the adapter reads text from.
    const adapter = adapterFor(provider);
    const fromFake = events.map((e) => isTokenEvent(provider, e));
    const fromAdapter = events.map((e) => {
      const d = eventData(e);
      const info = d === undefined ? {} : adapter.interpret(d);
      return Boolean(info.content || info.reasoning || info.toolCalls?.some((t) => t.name || t.args));
    });
    assert.deepEqual(fromFake, fromAdapter, `${provider}/${name}`);
  }
});

// ---- tools and structured output ----

const WEATHER: ToolDefinition = {
  type: 'function',
  function: { name: 'get_weather', description: 'The weather in a city now', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false } },
};
const BARE: ToolDefinition = { type: 'function', function: { name: 'now' } };
const SCHEMA = { type: 'json_schema', json_schema: { name: 'answer', schema: { type: 'object', properties: { a: { type: 'string' } } } } } as const;
const bodyOf = (api: ApiKind, over: Partial<RequestSpec>, model = 'm'): Record<string, unknown> => JSON.parse(adapterFor(api).buildRequest(spec({ ignoreEos: false, ...over }), endpoint(api, 'http://h:1', model)).body) as Record<string, unknown>;
const notesOf = (api: ApiKind, over: Partial<RequestSpec>): readonly string[] => adapterFor(api).buildRequest(spec(over), endpoint(api, 'http://h:1', 'm')).notes ?? [];

test('tools in each API\'s own form: OpenAI\'s as given, Anthropic\'s input_schema, Gemini\'s functionDeclarations, Ollama\'s; none where the API has no field', () => {
  const tools = [WEATHER, BARE];
  for (const api of ['openai-chat', 'azure-openai'] as const) {
    const body = bodyOf(api, { tools, responseFormat: SCHEMA });
    assert.deepEqual(body.tools, tools, api);
    assert.deepEqual(body.response_format, SCHEMA, api);
    assert.deepEqual(body.stream_options, { include_usage: true }, `${api}: usage still asked for`);
  }
  const anthropic = bodyOf('anthropic', { tools, responseFormat: SCHEMA });
  assert.deepEqual(anthropic.tools, [
    { name: 'get_weather', description: 'The weather in a city now', input_schema: WEATHER.function.parameters },
    { name: 'now', input_schema: { type: 'object', properties: {} } },
  ], 'an input schema is required: an empty object\'s when none is given');
  assert.equal('response_format' in anthropic, false);
  assert.deepEqual(notesOf('anthropic', { tools, responseFormat: SCHEMA }), ['the response format is not sent: the anthropic API has no response_format']);
  const gemini = bodyOf('gemini', { tools, responseFormat: SCHEMA });
  assert.deepEqual(gemini.tools, [{ functionDeclarations: [{ name: 'get_weather', description: 'The weather in a city now', parametersJsonSchema: WEATHER.function.parameters }, { name: 'now' }] }]);
  assert.deepEqual((gemini.generationConfig as Record<string, unknown>).responseJsonSchema, SCHEMA.json_schema.schema);
  assert.equal((gemini.generationConfig as Record<string, unknown>).responseMimeType, 'application/json');
  const ollama = bodyOf('ollama', { tools, responseFormat: SCHEMA });
  assert.deepEqual(ollama.tools, tools);
  assert.deepEqual(ollama.format, SCHEMA.json_schema.schema);
  // An empty list is none (`--tools none` against a prompt file's own): no field, no note.
  for (const api of ['openai-chat', 'anthropic', 'gemini', 'ollama', 'openai-completions', 'llamacpp'] as const) {
    assert.equal('tools' in bodyOf(api, { tools: [] }), false, api);
    assert.deepEqual(notesOf(api, { tools: [] }), [], api);
  }
  // APIs without a field for them: the text goes, the tools do not, and a note says so once per prompt.
  for (const api of ['openai-completions', 'llamacpp'] as const) {
    assert.equal('tools' in bodyOf(api, { tools }), false, api);
    assert.deepEqual(notesOf(api, { tools }), [`tools are not sent: the ${api} API takes no function definitions, so no tool call is timed`], api);
  }
  for (const api of ['openai-chat', 'azure-openai', 'anthropic', 'gemini', 'ollama'] as const) assert.deepEqual(notesOf(api, { tools }), [], api);
  // the API table says which take them, as the adapters do (the run table words a run by the row)
  for (const api of API_KINDS) assert.equal(apiFacts(api)?.tools === true, 'tools' in bodyOf(api, { tools }), api);
});

test('tool calls read as each API streams them: OpenAI\'s delta.tool_calls pieces, Anthropic\'s tool_use block, Gemini\'s whole functionCall parts', () => {
  const calls = (infos: EventInfo[]) => infos.flatMap((i) => i.toolCalls ?? []);
  const joined = (infos: EventInfo[], index?: number) => calls(infos).filter((c) => index === undefined || c.index === index).map((c) => c.args ?? '').join('');

  const openai = interpretFixture('openai-chat', 'tool-call').infos;
  assert.deepEqual(calls(openai)[0], { index: 0, id: 'call_Q4mK8rT2vX9bN1cZ7dL3fH6j', name: 'get_weather' }, 'the first piece: id and name, empty arguments left out');
  assert.equal(calls(openai).length, 13);
  assert.equal(joined(openai), '{"city":"Paris, France","unit":"celsius"}');
  assert.equal(texts(openai, 'content').length, 0, 'a null content is no text');
  assert.deepEqual(openai[openai.length - 1]!.usage?.completionTokens, 17);

  const anthropic = interpretFixture('anthropic', 'tool-call').infos;
  assert.equal(texts(anthropic, 'content').join(''), "I'll look up the weather in Paris.");
  assert.deepEqual(calls(anthropic)[0], { index: 1, id: 'toolu_01Hk4Wq8Zr2Tn6Vb9Xc3Md7P', name: 'get_weather' });
  assert.deepEqual(calls(anthropic)[1], { index: 1 }, 'the empty input_json_delta carries nothing');
  assert.equal(joined(anthropic, 1), '{"city": "Paris, France", "unit": "celsius"}');

  const gemini = interpretFixture('gemini', 'tool-call').infos;
  assert.equal(texts(gemini, 'content').join(''), 'Checking both cities.');
  assert.deepEqual(calls(gemini), [
    { name: 'get_weather', args: '{"city":"Paris, France","unit":"celsius"}' },
    { name: 'get_weather', args: '{"city":"Tokyo, Japan","unit":"celsius"}' },
  ], 'no index: each named part is a call of its own');

  // Parallel calls in one OpenAI delta, the older function_call, a whole message; Ollama's whole calls.
  const o = adapterFor('openai-chat');
  assert.deepEqual(o.interpret({ choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: '{"a' } }, { index: 1, id: 'c2', function: { name: 'g', arguments: '' } }] } }] }).toolCalls, [{ index: 0, args: '{"a' }, { index: 1, id: 'c2', name: 'g' }]);
  assert.deepEqual(o.interpret({ choices: [{ delta: { function_call: { name: 'f', arguments: '{}' } } }] }).toolCalls, [{ index: 0, name: 'f', args: '{}' }]);
  assert.deepEqual(o.interpret({ choices: [{ message: { content: null, tool_calls: [{ id: 'x', type: 'function', function: { name: 'f', arguments: '{"q":1}' } }] } }] }).toolCalls, [{ index: 0, id: 'x', name: 'f', args: '{"q":1}' }]);
  assert.equal(o.interpret({ choices: [{ delta: { tool_calls: 'nonsense' } }] }).toolCalls, undefined);
  assert.deepEqual(adapterFor('ollama').interpret({ message: { role: 'assistant', content: '', tool_calls: [{ function: { name: 'get_weather', arguments: { city: 'Toronto' } } }] }, done: false }).toolCalls, [{ name: 'get_weather', args: '{"city":"Toronto"}' }]);
  // A tool_use block inside a whole Message (stream:true ignored).
  const whole = adapterFor('anthropic').interpret({ id: 'm', type: 'message', content: [{ type: 'text', text: 'ok' }, { type: 'tool_use', id: 't', name: 'f', input: { a: 1 } }] });
  assert.deepEqual(whole.toolCalls, [{ index: 1, name: 'f', args: '{"a":1}' }]);
});
