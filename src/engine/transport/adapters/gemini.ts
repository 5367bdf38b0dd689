// Google's Gemini API (generativelanguage.googleapis.com): POST
// {base}/v1beta/models/{model}:streamGenerateContent?alt=sse with the key in `x-goog-api-key` (or the
// URL's own `?key=`, kept as given). Each SSE `data:` is a whole GenerateContentResponse:
// candidates[].content.parts[] with text, parts marked `thought: true` being reasoning, and a
// usageMetadata whose counts are cumulative (candidatesTokenCount, thoughtsTokenCount apart; the
// prompt's cachedContentTokenCount inside promptTokenCount). An error is `{error: {code, message,
// status}}`. Turns are `user` / `model`; system messages go in systemInstruction. Gemini refuses
// unknown fields: no ignore_eos. Sampling goes in generationConfig (topP, stopSequences, the
// penalties); a response format as responseMimeType application/json, with a json_schema's schema
// as responseJsonSchema (JSON Schema as given, not the OpenAPI subset of responseSchema). Images:
// inlineData for `data:` URLs, fileData for http(s) URLs (fetched by Gemini, noted). Tools are
// `tools: [{functionDeclarations: [{name, description, parametersJsonSchema}]}]` (the parameters as the
// JSON Schema they are, as for the response format: `parameters` takes only an OpenAPI subset, which
// refuses OpenAI's usual `additionalProperties`); a call streams as a functionCall part `{name, args}`,
// whole in one chunk.
import type { ContentPart, EndpointSpec, RequestSpec, ToolDefinition } from '../../core/types';
import type { BuiltRequest, EndpointAdapter, EventInfo, TimingFields, ToolCallDelta, UsageInfo } from './adapter';
import { count, isObject, str } from '../../core/json';
import { cachedTokens, dataUrl, hasTools, IMAGE_URL_NOTE, jsonHeaders, jsonPost, jsonSchemaOf, maxTokensOf, replacePath, requestPath, splitBaseUrl, splitSystem, streamError, systemImagesNote, withTimings } from './adapter';
import { sentPrompt } from './cacheBust';

const IMAGE_TYPES: Readonly<Record<string, string>> = { png: 'image/png', jpg: 'image/jpeg', jpeg: 'image/jpeg', gif: 'image/gif', webp: 'image/webp', heic: 'image/heic', heif: 'image/heif' };

/** A content part as Gemini takes it: text, inlineData (a `data:` URL), or fileData (a URL Gemini fetches; its type from the extension when it has one). */
function geminiPart(p: ContentPart): Record<string, unknown> {
  if (p.type === 'text') return { text: p.text };
  const inline = dataUrl(p.url);
  if (inline) return { inlineData: { mimeType: inline.mediaType, data: inline.base64 } };
  const ext = /\.([a-z0-9]+)(?:[?#]|$)/i.exec(p.url)?.[1]?.toLowerCase();
  const mimeType = ext !== undefined ? IMAGE_TYPES[ext] : undefined;
  return { fileData: { ...(mimeType !== undefined ? { mimeType } : {}), fileUri: p.url } };
}

/** The API version asked for when the URL names none. */
const DEFAULT_VERSION = '/v1beta';
/** A version segment at the end of the URL's path: the API's own, not a base path to prefix. splitBaseUrl has already dropped a /v1. */
const VERSION_AT_END = /\/v1(?:alpha|beta)\d*$/;

export const geminiAdapter: EndpointAdapter = {
  api: 'gemini',
  probePath: `${DEFAULT_VERSION}/models`,
  models: {
    path: `${DEFAULT_VERSION}/models`,
    names: geminiModels,
    // A list with a next page is not the whole list.
    complete: (json) => !(isObject(json) && typeof json.nextPageToken === 'string' && json.nextPageToken !== ''),
    // Gemini lists "models/gemini-2.5-flash" for "gemini-2.5-flash".
    same: (served, wanted) => served === `models/${wanted}`,
  },

  keyRefused(status: number, body: string): boolean {
    // A wrong key is a 400 INVALID_ARGUMENT, reason API_KEY_INVALID.
    return status === 400 && body.includes('API_KEY_INVALID');
  },

  probeBaseUrl(url: string): string {
    return replacePath(url, VERSION_AT_END, '');
  },

  buildRequest(spec: RequestSpec, endpoint: EndpointSpec): BuiltRequest {
    if (endpoint.model === undefined) throw new Error('the Gemini API needs a model in the URL path: pass --model (e.g. gemini-2.5-flash)');
    const split = splitBaseUrl(endpoint.url);
    const root = VERSION_AT_END.test(split.basePath) ? split.basePath : split.basePath + DEFAULT_VERSION;
    const path = requestPath({ ...split, basePath: root, query: withAltSse(split.query) }, `/${modelPath(endpoint.model)}:streamGenerateContent`);
    const { system, turns, systemImages } = splitSystem(sentPrompt(spec));
    const body: Record<string, unknown> = {
      contents: turns.map((m) => ({ role: m.role === 'assistant' ? 'model' : 'user', parts: m.parts ? m.parts.filter((p) => p.type !== 'text' || p.text !== '').map(geminiPart) : [{ text: m.content }] })),
    };
    if (system !== undefined) body.systemInstruction = { parts: [{ text: system }] };
    if (hasTools(spec)) body.tools = [{ functionDeclarations: spec.tools.map(geminiFunction) }];
    const config: Record<string, unknown> = { maxOutputTokens: maxTokensOf(spec) };
    if (spec.temperature !== undefined) config.temperature = spec.temperature;
    if (spec.topP !== undefined) config.topP = spec.topP;
    if (spec.stop !== undefined && spec.stop.length > 0) config.stopSequences = [...spec.stop];
    if (spec.frequencyPenalty !== undefined) config.frequencyPenalty = spec.frequencyPenalty;
    if (spec.presencePenalty !== undefined) config.presencePenalty = spec.presencePenalty;
    const schema = jsonSchemaOf(spec);
    if (schema !== undefined) {
      config.responseMimeType = 'application/json';
      if (spec.responseFormat?.type === 'json_schema') config.responseJsonSchema = schema;
    }
    if (spec.seed !== undefined) config.seed = spec.seed;
    body.generationConfig = config;
    const notes: string[] = [];
    if (turns.some((t) => t.parts?.some((p) => p.type === 'image' && !p.url.startsWith('data:')))) notes.push(IMAGE_URL_NOTE);
    if (systemImages) notes.push(systemImagesNote('gemini'));
    return jsonPost(path, jsonHeaders(endpoint, 'text/event-stream'), body, notes);
  },

  interpret(event: unknown): EventInfo {
    if (!isObject(event)) return {};
    const error = streamError(event);
    if (error !== undefined) return { error };
    const info: { -readonly [K in keyof EventInfo]: EventInfo[K] } = {};
    const id = str(event.responseId);
    if (id) info.responseId = id;
    let content = '';
    let reasoning = '';
    let calls: ToolCallDelta[] | undefined; // made only for a chunk that carries a call
    const candidates = Array.isArray(event.candidates) ? event.candidates : [];
    for (const candidate of candidates) {
      if (!isObject(candidate) || !isObject(candidate.content) || !Array.isArray(candidate.content.parts)) continue;
      for (const part of candidate.content.parts) {
        if (!isObject(part)) continue;
        if (isObject(part.functionCall)) (calls ??= []).push(functionCallOf(part.functionCall));
        const text = str(part.text);
        if (!text) continue; // a thoughtSignature with empty text
        if (part.thought === true) reasoning += text;
        else content += text;
      }
    }
    if (content) info.content = content;
    if (reasoning) info.reasoning = reasoning;
    if (calls !== undefined) info.toolCalls = calls;
    // A prompt refused before any candidate: say so rather than "ended without a single token".
    if (candidates.length === 0 && isObject(event.promptFeedback)) {
      const reason = str(event.promptFeedback.blockReason);
      if (reason) return { ...info, error: `the prompt was blocked (${reason})` };
    }
    const usage = usageOf(event.usageMetadata);
    if (usage.usage) info.usage = usage.usage;
    if (usage.serverTimings) info.serverTimings = usage.serverTimings;
    if (usage.ignoredTimings) info.ignoredTimings = usage.ignoredTimings;
    return info;
  },
};

/** A function declaration as Gemini takes it. */
function geminiFunction(t: ToolDefinition): Record<string, unknown> {
  const f = t.function;
  return { name: f.name, ...(f.description !== undefined ? { description: f.description } : {}), ...(f.parameters !== undefined ? { parametersJsonSchema: f.parameters } : {}) };
}

/** A functionCall part: a whole call (its name, its args as JSON text); one without a name continues the call before it. */
function functionCallOf(call: Record<string, unknown>): ToolCallDelta {
  const name = str(call.name);
  const id = str(call.id);
  const args = call.args !== undefined ? JSON.stringify(call.args) : undefined;
  return { ...(id ? { id } : {}), ...(name ? { name } : {}), ...(args ? { args } : {}) };
}

/** The models Gemini lists (as "models/gemini-2.5-flash"), only those that generate text: the list has embedding ones too. */
function geminiModels(json: unknown): string[] {
  if (!isObject(json) || !Array.isArray(json.models)) return [];
  const generates = (m: Record<string, unknown>): boolean => !Array.isArray(m.supportedGenerationMethods) || m.supportedGenerationMethods.includes('generateContent') || m.supportedGenerationMethods.includes('streamGenerateContent');
  return json.models.flatMap((m) => (isObject(m) && typeof m.name === 'string' && generates(m) ? [m.name] : []));
}

/** "gemini-2.5-flash" and "models/gemini-2.5-flash" name the same model; "tunedModels/x" is its own collection. */
export function modelPath(model: string): string {
  const named = model.includes('/') ? model : `models/${model}`;
  return named.split('/').map(encodeURIComponent).join('/');
}

/** The endpoint's query as given (`?key=…`), with `alt=sse` (and no other `alt`). */
function withAltSse(query: string): string {
  const params = query.replace(/^\?/, '').split('&').filter((p) => p !== '' && !/^alt(=|$)/i.test(p));
  params.push('alt=sse');
  return `?${params.join('&')}`;
}

/**
 * usageMetadata, cumulative on every chunk that has it: output is candidates and thoughts together
 * (as OpenAI's completion_tokens holds its reasoning tokens), thoughts also apart; the prompt count
 * includes the cached tokens, which are also kept as the server's cached count.
 */
function usageOf(value: unknown): { usage?: UsageInfo } & TimingFields {
  if (!isObject(value)) return {};
  const usage: { promptTokens?: number; completionTokens?: number; reasoningTokens?: number } = {};
  const prompt = count(value.promptTokenCount);
  const candidates = count(value.candidatesTokenCount);
  const thoughts = count(value.thoughtsTokenCount);
  if (prompt !== undefined) usage.promptTokens = prompt;
  if (candidates !== undefined || thoughts !== undefined) usage.completionTokens = (candidates ?? 0) + (thoughts ?? 0);
  if (thoughts !== undefined) usage.reasoningTokens = thoughts;
  return withTimings<{ usage?: UsageInfo } & TimingFields>(Object.keys(usage).length > 0 ? { usage } : {}, cachedTokens(value, 'cachedContentTokenCount', 'usageMetadata'));
}
