// Ollama's native chat API (/api/chat): NDJSON, one object per line. Text is in `message.content`,
// thinking models put reasoning in `message.thinking`. The final object (`done: true`) carries the
// server's own counts and durations in nanoseconds, kept here as ServerTimings in ms. Ollama has no
// ignore_eos; max tokens, temperature and seed go in `options`.
import type { EndpointSpec, RequestSpec, ServerTimings } from '../types';
import type { BuiltRequest, EndpointAdapter, EventInfo, UsageInfo } from './adapter';
import { count, isObject, str } from '../json';
import { joinPath, jsonHeaders, maxTokensOf, streamError, TimingReader } from './adapter';
import { sentPrompt } from './cacheBust';

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
    body.messages = sentPrompt(spec).messages.map((m) => ({ role: m.role, content: m.content }));
    body.stream = true;
    body.options = options;
    return { method: 'POST', path: joinPath(endpoint, '/api/chat'), headers: jsonHeaders(endpoint, 'application/x-ndjson'), body: JSON.stringify(body) };
  },

  interpret(event: unknown): EventInfo {
    if (!isObject(event)) return {};
    const error = streamError(event);
    if (error !== undefined) return { error };
    const info: { content?: string; reasoning?: string; usage?: UsageInfo; serverTimings?: ServerTimings; ignoredTimings?: readonly string[]; done?: boolean } = {};
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
