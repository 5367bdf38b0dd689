// Each adapter's request body for the sampling settings a prompt file may give (top_p, stop, the
// penalties, a response format) and for messages with images and a participant's name: only the
// spec's values are sent (the runner applied the precedence), each in the API's own field, and
// what an API cannot take is noted on the built request, never dropped silently.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { adapterFor } from '../../src/engine/transport/adapters/registry';
import type { ChatMessage, EndpointSpec, Prompt, RequestSpec } from '../../src/engine/core/types';
import type { ApiKind } from '../../src/engine/core/apis';

const SCHEMA = { type: 'object', properties: { answer: { type: 'string' } } };
const PNG = 'iVBORw0KGgo=';
const DATA_URL = `data:image/png;base64,${PNG}`;
const HTTP_URL = 'https://example.com/cat.jpg';

const sampling = {
  temperature: 0.2,
  topP: 0.9,
  stop: ['###', 'END'],
  frequencyPenalty: 0.5,
  presencePenalty: -0.5,
  responseFormat: { type: 'json_schema', json_schema: { name: 'answer', schema: SCHEMA } },
} as const;

const spec = (prompt: Prompt, over: Partial<RequestSpec> = {}): RequestSpec => ({
  index: 0,
  warmup: false,
  // the prompt's own values must never be read by an adapter
  prompt: { ...prompt, maxTokens: 999, temperature: 1.9, topP: 0.01 },
  maxTokens: 256,
  ignoreEos: false,
  scheduledAt: 0,
  ...sampling,
  ...over,
});
const text: Prompt = { messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hi?' }] };
const imageMessage = (url: string): ChatMessage => ({ role: 'user', name: 'Alice', content: 'What is this?', parts: [{ type: 'text', text: 'What is this?' }, { type: 'image', url }] });
const withImage = (url: string): Prompt => ({ messages: [{ role: 'system', content: 'Be brief.' }, imageMessage(url)] });

function build(api: ApiKind, s: RequestSpec): { body: Record<string, unknown>; notes: readonly string[] | undefined } {
  const endpoint: EndpointSpec = { url: 'http://127.0.0.1:8000', api, model: 'm' };
  const built = adapterFor(api).buildRequest(s, endpoint);
  return { body: JSON.parse(built.body) as Record<string, unknown>, notes: built.notes };
}

test('openai-chat (and azure-openai): top_p, stop, penalties, response_format; images as a content array, name kept', () => {
  for (const api of ['openai-chat', 'azure-openai'] as const) {
    const { body, notes } = build(api, spec(withImage(DATA_URL)));
    assert.equal(body.max_tokens, 256, api);
    assert.equal(body.temperature, 0.2);
    assert.equal(body.top_p, 0.9);
    assert.deepEqual(body.stop, ['###', 'END']);
    assert.equal(body.frequency_penalty, 0.5);
    assert.equal(body.presence_penalty, -0.5);
    assert.deepEqual(body.response_format, { type: 'json_schema', json_schema: { name: 'answer', schema: SCHEMA } });
    assert.deepEqual(body.messages, [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', name: 'Alice', content: [{ type: 'text', text: 'What is this?' }, { type: 'image_url', image_url: { url: DATA_URL } }] },
    ]);
    assert.equal(notes, undefined);
  }
  // an image URL is fetched by the server: said, since it is inside TTFT
  assert.deepEqual(build('openai-chat', spec(withImage(HTTP_URL))).notes, ['image URLs are fetched by the server: the download is part of TTFT']);
  // nothing the spec does not hold is sent
  const bare = build('openai-chat', { index: 0, warmup: false, prompt: { ...text, temperature: 1, topP: 0.1 }, maxTokens: 8, ignoreEos: false, scheduledAt: 0 }).body;
  assert.deepEqual(Object.keys(bare).sort(), ['max_tokens', 'messages', 'model', 'stream', 'stream_options']);
});

test('openai-completions: the sampling fields as chat; images cannot be sent: the text is, and a note says so', () => {
  const { body, notes } = build('openai-completions', spec(withImage(DATA_URL)));
  assert.equal(body.prompt, 'Be brief.\n\nWhat is this?');
  assert.equal(body.max_tokens, 256);
  assert.equal(body.top_p, 0.9);
  assert.deepEqual(body.stop, ['###', 'END']);
  assert.equal(body.frequency_penalty, 0.5);
  assert.deepEqual(body.response_format, sampling.responseFormat);
  assert.deepEqual(notes, ['images are not sent: the openai-completions API takes text only']);
  assert.equal(build('openai-completions', spec(text)).notes, undefined);
});

test('llamacpp /completion: n_predict, top_p, stop, penalties, the schema as json_schema; text only', () => {
  const { body, notes } = build('llamacpp', spec(withImage(DATA_URL)));
  assert.equal(body.n_predict, 256);
  assert.equal(body.temperature, 0.2);
  assert.equal(body.top_p, 0.9);
  assert.deepEqual(body.stop, ['###', 'END']);
  assert.equal(body.frequency_penalty, 0.5);
  assert.equal(body.presence_penalty, -0.5);
  assert.deepEqual(body.json_schema, SCHEMA);
  assert.equal(body.response_format, undefined);
  assert.deepEqual(notes, ['images are not sent: the llamacpp API takes text only']);
  // json_object: any JSON, as llama.cpp documents `{}`
  assert.deepEqual(build('llamacpp', spec(text, { responseFormat: { type: 'json_object' } })).body.json_schema, {});
  assert.equal(build('llamacpp', spec(text, { responseFormat: { type: 'text' } })).body.json_schema, undefined);
});

test("ollama: options.top_p/stop/penalties, format 'json' or the schema; inline images as base64, URLs noted", () => {
  const { body, notes } = build('ollama', spec(withImage(DATA_URL)));
  assert.deepEqual(body.options, { num_predict: 256, temperature: 0.2, top_p: 0.9, stop: ['###', 'END'], frequency_penalty: 0.5, presence_penalty: -0.5 });
  assert.deepEqual(body.format, SCHEMA);
  assert.deepEqual(body.messages, [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'What is this?', images: [PNG] }]);
  assert.equal(notes, undefined);
  assert.equal(build('ollama', spec(text, { responseFormat: { type: 'json_object' } })).body.format, 'json');
  const url = build('ollama', spec(withImage(HTTP_URL)));
  assert.deepEqual(url.body.messages, [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'What is this?' }]);
  assert.deepEqual(url.notes, ['image URLs are not sent: the ollama API takes images inline only (a data: URL, a file next to the prompt)']);
});

test('anthropic: top_p, stop_sequences; image blocks (base64, url); no penalties, no response_format: noted', () => {
  const { body, notes } = build('anthropic', spec(withImage(DATA_URL)));
  assert.equal(body.max_tokens, 256);
  assert.equal(body.temperature, 0.2);
  assert.equal(body.top_p, 0.9);
  assert.deepEqual(body.stop_sequences, ['###', 'END']);
  for (const k of ['stop', 'frequency_penalty', 'presence_penalty', 'response_format']) assert.equal(body[k], undefined, k);
  assert.equal(body.system, 'Be brief.');
  assert.deepEqual(body.messages, [{ role: 'user', content: [{ type: 'text', text: 'What is this?' }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } }] }]);
  assert.deepEqual(notes, ['frequency and presence penalties are not sent: the anthropic API has none', 'the response format is not sent: the anthropic API has no response_format']);
  const url = build('anthropic', spec(withImage(HTTP_URL), { frequencyPenalty: undefined, presencePenalty: undefined, responseFormat: undefined }));
  assert.deepEqual((url.body.messages as { content: unknown[] }[])[0]!.content[1], { type: 'image', source: { type: 'url', url: HTTP_URL } });
  assert.deepEqual(url.notes, ['image URLs are fetched by the server: the download is part of TTFT']);
});

test('gemini: generationConfig topP, stopSequences, penalties, JSON with responseJsonSchema; inlineData and fileData', () => {
  const { body, notes } = build('gemini', spec(withImage(DATA_URL)));
  assert.deepEqual(body.generationConfig, {
    maxOutputTokens: 256, temperature: 0.2, topP: 0.9, stopSequences: ['###', 'END'], frequencyPenalty: 0.5, presencePenalty: -0.5,
    responseMimeType: 'application/json', responseJsonSchema: SCHEMA,
  });
  assert.deepEqual(body.contents, [{ role: 'user', parts: [{ text: 'What is this?' }, { inlineData: { mimeType: 'image/png', data: PNG } }] }]);
  assert.deepEqual(body.systemInstruction, { parts: [{ text: 'Be brief.' }] });
  assert.equal(notes, undefined);
  const json = build('gemini', spec(text, { responseFormat: { type: 'json_object' } })).body.generationConfig as Record<string, unknown>;
  assert.equal(json.responseMimeType, 'application/json');
  assert.equal(json.responseJsonSchema, undefined);
  const url = build('gemini', spec(withImage(HTTP_URL)));
  assert.deepEqual((url.body.contents as { parts: unknown[] }[])[0]!.parts[1], { fileData: { mimeType: 'image/jpeg', fileUri: HTTP_URL } });
  assert.deepEqual(url.notes, ['image URLs are fetched by the server: the download is part of TTFT']);
});

test('a system message with images: the APIs whose system prompt is text say so', () => {
  const p: Prompt = { messages: [{ role: 'system', content: 'Look.', parts: [{ type: 'text', text: 'Look.' }, { type: 'image', url: DATA_URL }] }, { role: 'user', content: 'Well?' }] };
  assert.deepEqual(build('anthropic', spec(p, { frequencyPenalty: undefined, presencePenalty: undefined, responseFormat: undefined })).notes, ["images in system messages are not sent: the anthropic API's system prompt is text only"]);
  assert.deepEqual(build('gemini', spec(p)).notes, ["images in system messages are not sent: the gemini API's system prompt is text only"]);
});
