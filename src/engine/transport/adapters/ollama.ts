// Ollama's native chat API (/api/chat): NDJSON, one object per line. Text is in `message.content`,
// thinking models put reasoning in `message.thinking`. The final object (`done: true`) carries the
// server's own counts and durations in nanoseconds, kept here as ServerTimings in ms. Ollama has no
// ignore_eos; max tokens, temperature, top_p, stop, the penalties and seed go in `options`, a response
// format in `format` ("json", or the JSON schema itself). Images travel as base64 in a message's
// `images`: an image given by URL cannot be (noted). Tools go as OpenAI's function definitions, as
// /api/chat takes them; a call comes whole in one object's `message.tool_calls[{function: {name,
// arguments}}]`, the arguments an object.
import type { ChatMessage, EndpointSpec, RequestSpec, ServerTimings } from '../../core/types';
import type { BuiltRequest, EndpointAdapter, EventInfo, ToolCallDelta, UsageInfo } from './adapter';
import { isObject, str } from '../../core/json';
import { bodyStart, countsUsage, dataUrl, hasTools, joinPath, jsonHeaders, jsonPost, jsonSchemaOf, maxTokensOf, snakeSampling, streamError, TimingReader } from './adapter';

const NS_PER_MS = 1e6;
const URL_NOTE = 'image URLs are not sent: the ollama API takes images inline only (a data: URL, a file next to the prompt)';

/** A message as /api/chat takes it: its text, and its inline images as base64 (`skippedUrls`: it had images given by URL, not sent). */
function ollamaMessage(m: ChatMessage): { message: Record<string, unknown>; skippedUrls: boolean } {
  const message: Record<string, unknown> = { role: m.role, content: m.content };
  let skippedUrls = false;
  const images: string[] = [];
  for (const p of m.parts ?? []) {
    if (p.type !== 'image') continue;
    const inline = dataUrl(p.url);
    if (inline) images.push(inline.base64);
    else skippedUrls = true;
  }
  if (images.length > 0) message.images = images;
  return { message, skippedUrls };
}

export const ollamaAdapter: EndpointAdapter = {
  api: 'ollama',
  probePath: '/api/tags',
  serverName: 'an Ollama server',
  models: {
    path: '/api/tags',
    names: (json) => (isObject(json) && Array.isArray(json.models) ? json.models.flatMap((m) => (isObject(m) && typeof m.name === 'string' ? [m.name] : [])) : []),
    // Ollama lists "llama3:latest" for "llama3".
    same: (served, wanted) => !wanted.includes(':') && served === `${wanted}:latest`,
  },

  buildRequest(spec: RequestSpec, endpoint: EndpointSpec): BuiltRequest {
    const options: Record<string, unknown> = { num_predict: maxTokensOf(spec) };
    snakeSampling(spec, options);
    if (spec.seed !== undefined) options.seed = spec.seed;
    const { body, prompt } = bodyStart(spec, endpoint);
    let urls = false;
    body.messages = prompt.messages.map((m) => {
      const { message, skippedUrls } = ollamaMessage(m);
      urls ||= skippedUrls;
      return message;
    });
    body.stream = true;
    const schema = jsonSchemaOf(spec);
    if (schema !== undefined) body.format = spec.responseFormat?.type === 'json_schema' ? schema : 'json';
    if (hasTools(spec)) body.tools = spec.tools;
    body.options = options;
    return jsonPost(joinPath(endpoint, '/api/chat'), jsonHeaders(endpoint, 'application/x-ndjson'), body, urls ? [URL_NOTE] : []);
  },

  interpret(event: unknown): EventInfo {
    if (!isObject(event)) return {};
    const error = streamError(event);
    if (error !== undefined) return { error };
    const info: { content?: string; reasoning?: string; usage?: UsageInfo; serverTimings?: ServerTimings; ignoredTimings?: readonly string[]; done?: boolean; toolCalls?: ToolCallDelta[] } = {};
    if (isObject(event.message)) {
      const c = str(event.message.content);
      const r = str(event.message.thinking);
      if (c) info.content = c;
      if (r) info.reasoning = r;
      if (Array.isArray(event.message.tool_calls)) {
        const calls = event.message.tool_calls.flatMap(ollamaCall);
        if (calls.length > 0) info.toolCalls = calls;
      }
    }
    if (event.done === true) {
      info.done = true;
      const usage = countsUsage(event.prompt_eval_count, event.eval_count);
      if (usage) info.usage = usage;
      // Durations in ns. Ollama's own TTFT: loading the model, then the prompt (no queue is reported).
      const t = new TimingReader(event, 'final', 'ollama');
      t.count('prompt_eval_count', 'promptTokens');
      const prompt = t.ms('prompt_eval_duration', 'promptMs', NS_PER_MS);
      t.count('eval_count', 'predictedTokens');
      t.ms('eval_duration', 'predictedMs', NS_PER_MS);
      const load = t.ms('load_duration', 'loadMs', NS_PER_MS);
      t.ms('total_duration', 'totalMs', NS_PER_MS);
      if (prompt !== undefined) t.timings.serverTtftMs = (load ?? 0) + prompt;
      if (t.any) info.serverTimings = { ...t.timings };
      if (t.notes.length > 0) info.ignoredTimings = t.notes;
    }
    return info;
  },
};

/** One of a message's tool calls, whole: its name and its arguments (an object) as JSON text. */
function ollamaCall(call: unknown): ToolCallDelta[] {
  if (!isObject(call) || !isObject(call.function)) return [];
  const name = str(call.function.name);
  const args = call.function.arguments !== undefined ? JSON.stringify(call.function.arguments) : undefined;
  return [{ ...(name ? { name } : {}), ...(args ? { args } : {}) }];
}
