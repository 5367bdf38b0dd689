// llama.cpp's native completion API (/completion): SSE without a [DONE] sentinel; each event has
// `content`, and `tokens` (the token ids, asked for with return_tokens) whose length tells how many
// tokens a chunk carried (several with speculative decoding). The last event has `stop: true`, the
// server's `timings` (prompt_n/prompt_ms/predicted_n/predicted_ms) and the counts
// `tokens_predicted`/`tokens_evaluated`. Sampling as llama.cpp's README names it: top_p, stop (a
// list), frequency/presence_penalty, and a response format as `json_schema` (`{}`: any JSON). The
// prompt is text: images cannot be sent here, nor tools (its /v1/chat/completions takes them: `--api
// openai-chat`) (noted).
import type { EndpointSpec, RequestSpec } from '../../core/types';
import type { BuiltRequest, EndpointAdapter, EventInfo, TimingFields, UsageInfo } from './adapter';
import { isObject, str } from '../../core/json';
import { bodyStart, countsUsage, hasImages, hasTools, joinPath, jsonHeaders, jsonPost, jsonSchemaOf, llamaTimings, maxTokensOf, noToolsNote, promptText, snakeSampling, streamError, textOnlyNote, withTimings } from './adapter';

export const llamacppAdapter: EndpointAdapter = {
  api: 'llamacpp',
  probePath: '/health',
  serverName: 'a llama.cpp server',
  loadingStatus: 503,

  buildRequest(spec: RequestSpec, endpoint: EndpointSpec): BuiltRequest {
    const { body, prompt } = bodyStart(spec, endpoint);
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
    const notes = [...(hasImages(prompt) ? [textOnlyNote('llamacpp')] : []), ...(hasTools(spec) ? [noToolsNote('llamacpp')] : [])];
    return jsonPost(joinPath(endpoint, '/completion'), jsonHeaders(endpoint, 'text/event-stream'), body, notes);
  },

  interpret(event: unknown): EventInfo {
    if (!isObject(event)) return {};
    const error = streamError(event);
    if (error !== undefined) return { error };
    const info: { content?: string; tokens?: number; done?: boolean; usage?: UsageInfo } & TimingFields = {};
    const content = str(event.content);
    if (content) info.content = content;
    if (Array.isArray(event.tokens) && event.tokens.length > 0 && content) info.tokens = event.tokens.length;
    if (event.stop !== true) return info;
    info.done = true;
    const usage = countsUsage(event.tokens_evaluated, event.tokens_predicted);
    if (usage) info.usage = usage;
    return withTimings(info, llamaTimings(event.timings));
  },
};
