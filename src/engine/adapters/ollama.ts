// Ollama's native chat API (/api/chat): NDJSON, one object per line. Text is in `message.content`,
// thinking models put reasoning in `message.thinking`. The final object (`done: true`) carries the
// server's own counts and durations in nanoseconds, kept here as ServerTimings in ms. Ollama has no
// ignore_eos; max tokens, temperature and seed go in `options`.
import type { EndpointSpec, RequestSpec, ServerTimings } from '../types';
import type { BuiltRequest, EndpointAdapter, EventInfo, UsageInfo } from './adapter';
import { count, duration, isObject, str } from '../json';
import { joinPath, jsonHeaders, maxTokensOf, streamError } from './adapter';

const NS_PER_MS = 1e6;

export const ollamaAdapter: EndpointAdapter = {
  api: 'ollama',
  framing: 'ndjson',
  probePath: '/api/tags',

  buildRequest(spec: RequestSpec, endpoint: EndpointSpec): BuiltRequest {
    const options: Record<string, unknown> = { num_predict: maxTokensOf(spec) };
    const temperature = spec.temperature ?? spec.prompt.temperature;
    if (temperature !== undefined) options.temperature = temperature;
    if (spec.seed !== undefined) options.seed = spec.seed;
    const body: Record<string, unknown> = {};
    if (endpoint.model !== undefined) body.model = endpoint.model;
    body.messages = spec.prompt.messages.map((m) => ({ role: m.role, content: m.content }));
    body.stream = true;
    body.options = options;
    return { method: 'POST', path: joinPath(endpoint, '/api/chat'), headers: jsonHeaders(endpoint, 'application/x-ndjson'), body: JSON.stringify(body) };
  },

  interpret(event: unknown): EventInfo {
    if (!isObject(event)) return {};
    const error = streamError(event);
    if (error !== undefined) return { error };
    const info: { content?: string; reasoning?: string; usage?: UsageInfo; serverTimings?: ServerTimings; done?: boolean } = {};
    if (isObject(event.message)) {
      const c = str(event.message.content);
      const r = str(event.message.thinking);
      if (c) info.content = c;
      if (r) info.reasoning = r;
    }
    if (event.done === true) {
      info.done = true;
      const usage: { promptTokens?: number; completionTokens?: number } = {};
      const promptTokens = count(event.prompt_eval_count);
      const evalCount = count(event.eval_count);
      if (promptTokens !== undefined) usage.promptTokens = promptTokens;
      if (evalCount !== undefined) usage.completionTokens = evalCount;
      if (promptTokens !== undefined || evalCount !== undefined) info.usage = usage;
      const t: { promptTokens?: number; promptMs?: number; predictedTokens?: number; predictedMs?: number; loadMs?: number; totalMs?: number } = {};
      const ms = (v: unknown) => {
        const n = duration(v);
        return n === undefined ? undefined : n / NS_PER_MS;
      };
      const promptMs = ms(event.prompt_eval_duration);
      const predictedMs = ms(event.eval_duration);
      const loadMs = ms(event.load_duration);
      const totalMs = ms(event.total_duration);
      if (promptTokens !== undefined) t.promptTokens = promptTokens;
      if (promptMs !== undefined) t.promptMs = promptMs;
      if (evalCount !== undefined) t.predictedTokens = evalCount;
      if (predictedMs !== undefined) t.predictedMs = predictedMs;
      if (loadMs !== undefined) t.loadMs = loadMs;
      if (totalMs !== undefined) t.totalMs = totalMs;
      if (Object.keys(t).length > 0) info.serverTimings = t;
    }
    return info;
  },
};
