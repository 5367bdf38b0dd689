// llama.cpp's native completion API (/completion): SSE without a [DONE] sentinel; each event has
// `content`, and `tokens` (the token ids, asked for with return_tokens) whose length tells how many
// tokens a chunk carried (several with speculative decoding). The last event has `stop: true`, the
// server's `timings` (prompt_n/prompt_ms/predicted_n/predicted_ms) and the counts
// `tokens_predicted`/`tokens_evaluated`. Sampling as llama.cpp's README names it: top_p, stop (a
// list), frequency/presence_penalty, and a response format as `json_schema` (`{}`: any JSON). The
// prompt is text: images cannot be sent here (noted).
import type { EndpointSpec, RequestSpec, ServerTimings } from '../../core/types';
import type { BuiltRequest, EndpointAdapter, EventInfo, UsageInfo } from './adapter';
import { count, isObject, str } from '../../core/json';
import { hasImages, joinPath, jsonHeaders, jsonSchemaOf, llamaTimings, maxTokensOf, promptText, snakeSampling, streamError, textOnlyNote } from './adapter';
import { sentPrompt } from './cacheBust';

export const llamacppAdapter: EndpointAdapter = {
  api: 'llamacpp',
  framing: 'sse',
  probePath: '/health',

  buildRequest(spec: RequestSpec, endpoint: EndpointSpec): BuiltRequest {
    const body: Record<string, unknown> = {};
    if (endpoint.model !== undefined) body.model = endpoint.model;
    const prompt = sentPrompt(spec);
    body.prompt = promptText(prompt);
    body.stream = true;
    body.n_predict = maxTokensOf(spec);
    body.return_tokens = true;
    // a cold request: the slot's cached prefix is not reused (llama-server's default is to reuse it)
    if (spec.cacheBust === 'cache_prompt') body.cache_prompt = false;
    snakeSampling(spec, body);
    const schema = jsonSchemaOf(spec);
    if (schema !== undefined) body.json_schema = schema;
    if (spec.seed !== undefined) body.seed = spec.seed;
    if (spec.ignoreEos) body.ignore_eos = true;
    const built: BuiltRequest = { method: 'POST', path: joinPath(endpoint, '/completion'), headers: jsonHeaders(endpoint, 'text/event-stream'), body: JSON.stringify(body) };
    return hasImages(prompt) ? { ...built, notes: [textOnlyNote('llamacpp')] } : built;
  },

  interpret(event: unknown): EventInfo {
    if (!isObject(event)) return {};
    const error = streamError(event);
    if (error !== undefined) return { error };
    const info: { content?: string; tokens?: number; usage?: UsageInfo; serverTimings?: ServerTimings; ignoredTimings?: readonly string[]; done?: boolean } = {};
    const content = str(event.content);
    if (content) info.content = content;
    if (Array.isArray(event.tokens) && event.tokens.length > 0 && content) info.tokens = event.tokens.length;
    if (event.stop === true) {
      info.done = true;
      const usage: { promptTokens?: number; completionTokens?: number } = {};
      const predicted = count(event.tokens_predicted);
      const evaluated = count(event.tokens_evaluated);
      if (predicted !== undefined) usage.completionTokens = predicted;
      if (evaluated !== undefined) usage.promptTokens = evaluated;
      if (predicted !== undefined || evaluated !== undefined) info.usage = usage;
      const timings = llamaTimings(event.timings);
      if (timings?.timings) info.serverTimings = timings.timings;
      if (timings?.notes) info.ignoredTimings = timings.notes;
    }
    return info;
  },
};
