// OpenAI-compatible chat completions (/v1/chat/completions), as OpenAI, vLLM, SGLang, llama.cpp's
// server and Ollama's /v1 speak it. vLLM sends a role-only first chunk (not a token), puts reasoning
// in `reasoning_content` (older) or `reasoning` (newer), and with `stream_options.include_usage` ends
// with a chunk whose `choices` is empty and whose `usage` holds the counts. A message with images is
// sent as OpenAI's content array (text and image_url parts, as vLLM, SGLang and llama.cpp take it);
// a participant's name as the message's `name`. Tools go as given (OpenAI's function definitions);
// a tool call streams as `delta.tool_calls[{index, id, function: {name, arguments}}]`, the name in
// the call's first piece and the arguments' JSON text in pieces after it.
import type { ChatMessage, EndpointSpec, Prompt, RequestSpec } from '../../core/types';
import type { BuiltRequest, EndpointAdapter, EventInfo, TimingFields, ToolCallDelta } from './adapter';
import { count, isObject, str } from '../../core/json';
import { bodyStart, commonSampling, hasImageUrls, hasTools, IMAGE_URL_NOTE, joinPath, jsonHeaders, jsonPost, llamaTimings, maxTokensOf, mergeTimings, OPENAI_MODELS, openaiCachedTokens, openaiUsage, streamError, vllmMetrics, withTimings } from './adapter';

export const openaiChatAdapter: EndpointAdapter = {
  api: 'openai-chat',
  probePath: '/v1/models',
  models: OPENAI_MODELS,

  buildRequest(spec: RequestSpec, endpoint: EndpointSpec): BuiltRequest {
    const ask = (prompt: Prompt): Record<string, unknown> => ({ messages: prompt.messages.map(openaiMessage), ...(hasTools(spec) ? { tools: spec.tools } : {}) });
    return openaiRequest(spec, endpoint, '/v1/chat/completions', ask, (prompt) => (hasImageUrls(prompt) ? [IMAGE_URL_NOTE] : []));
  },

  interpret(event: unknown): EventInfo {
    return interpretOpenAi(event, 'chat');
  },
};

/**
 * The request both OpenAI APIs send to `path`: the model, what `ask` gives for the prompt (messages,
 * or the text), streaming with a last usage chunk, max_tokens and the sampling fields; `notes` says
 * what of the prompt could not be sent.
 */
export function openaiRequest(spec: RequestSpec, endpoint: EndpointSpec, path: string, ask: (p: Prompt) => Record<string, unknown>, notes: (p: Prompt) => string[]): BuiltRequest {
  const { body, prompt } = bodyStart(spec, endpoint);
  Object.assign(body, ask(prompt));
  body.stream = true;
  body.stream_options = { include_usage: true };
  body.max_tokens = maxTokensOf(spec);
  commonSampling(spec, body);
  return jsonPost(joinPath(endpoint, path), jsonHeaders(endpoint, 'text/event-stream'), body, notes(prompt));
}

/** A chat message as OpenAI takes it: text as a string, text with images as a content array. */
function openaiMessage(m: ChatMessage): Record<string, unknown> {
  const content = m.parts
    ? m.parts.map((p) => (p.type === 'text' ? { type: 'text', text: p.text } : { type: 'image_url', image_url: { url: p.url } }))
    : m.content;
  return { role: m.role, ...(m.name !== undefined ? { name: m.name } : {}), content };
}

/** Shared by chat and completions: they differ only in where a choice keeps its text. */
export function interpretOpenAi(event: unknown, kind: 'chat' | 'completions'): EventInfo {
  if (!isObject(event)) return {};
  const error = streamError(event);
  if (error !== undefined) return { error };
  const info: {
    content?: string; reasoning?: string; tokens?: number; usage?: ReturnType<typeof openaiUsage>; responseId?: string; toolCalls?: ToolCallDelta[];
  } & TimingFields = {};
  const id = str(event.id);
  if (id) info.responseId = id;
  const choices = event.choices;
  if (Array.isArray(choices) && choices.length > 0) {
    let content: string | undefined;
    let reasoning: string | undefined;
    let textChoices = 0;
    for (const choice of choices) {
      if (!isObject(choice)) continue;
      let c: string | undefined;
      let r: string | undefined;
      if (kind === 'chat') {
        // `delta` when streamed; `message` when a server ignored stream:true and answered in one document.
        const delta = isObject(choice.delta) ? choice.delta : isObject(choice.message) ? choice.message : undefined;
        if (delta) {
          c = str(delta.content);
          r = str(delta.reasoning_content) ?? str(delta.reasoning);
          // the hot path: a text delta allocates nothing for tool calls
          if (Array.isArray(delta.tool_calls) || isObject(delta.function_call)) {
            const calls = toolCallsOf(delta);
            if (calls.length > 0) (info.toolCalls ??= []).push(...calls);
          }
        }
      } else {
        c = str(choice.text);
      }
      if (c) content = content === undefined ? c : content + c;
      if (r) reasoning = reasoning === undefined ? r : reasoning + r;
      if (c || r) textChoices++;
    }
    if (content !== undefined) info.content = content;
    if (reasoning !== undefined) info.reasoning = reasoning;
    // Several choices with text in one event: each is at least one token.
    if (textChoices > 1) info.tokens = textChoices;
  }
  const usage = openaiUsage(event.usage);
  if (usage) info.usage = usage;
  // llama.cpp's `timings`, vLLM's per-request `metrics`, OpenAI's cached prompt tokens: whichever the server sends.
  return withTimings(info, mergeTimings(llamaTimings(event.timings), vllmMetrics(event.metrics), openaiCachedTokens(event.usage)));
}

/**
 * A delta's (or a whole message's) tool calls: `tool_calls[{index, id, function: {name, arguments}}]`
 * (a whole message's have no index: their position is), and the older `function_call` as call 0.
 */
function toolCallsOf(delta: Record<string, unknown>): ToolCallDelta[] {
  const out: ToolCallDelta[] = [];
  const piece = (index: number | undefined, id: unknown, fn: unknown): void => {
    if (!isObject(fn)) return;
    const name = str(fn.name);
    const args = str(fn.arguments);
    const callId = str(id);
    out.push({ ...(index !== undefined ? { index } : {}), ...(callId ? { id: callId } : {}), ...(name ? { name } : {}), ...(args ? { args } : {}) });
  };
  if (Array.isArray(delta.tool_calls)) {
    delta.tool_calls.forEach((call, i) => {
      if (isObject(call)) piece(count(call.index) ?? i, call.id, call.function);
    });
  }
  if (isObject(delta.function_call)) piece(0, undefined, delta.function_call);
  return out;
}
