// Anthropic's Messages API (POST /v1/messages), streamed as named SSE events whose data carries the
// same `type`: message_start (the message id, input usage), content_block_start/_delta/_stop,
// message_delta (usage.output_tokens, cumulative), message_stop, any number of `ping`s, and `error`
// (e.g. overloaded_error) in the middle of a stream. Text deltas are output; thinking deltas are
// reasoning, so TTFO lands beside TTFT; signature deltas are not tokens. A tool call is a tool_use
// block: content_block_start names it, input_json_delta pieces stream its arguments. The key goes
// in `x-api-key`, every request names an `anthropic-version`. System messages are the top-level
// `system`, not turns. Anthropic refuses fields it does not know (`seed`, `ignore_eos`): not sent.
// Sampling: temperature, top_p, stop_sequences; the API has no penalties and no response_format
// (each noted, not sent). Images are image blocks: base64 for `data:` URLs, a url source for http(s).
// Tools are `{name, description, input_schema}` (an input schema is required: an empty object's when
// the definition has none).
import type { EndpointSpec, RequestSpec, ToolDefinition } from '../../core/types';
import type { BuiltRequest, EndpointAdapter, EventInfo, TimingFields, ToolCallDelta, Turn, UsageInfo } from './adapter';
import { count, isObject, str } from '../../core/json';
import { bodyStart, cachedTokens, dataUrl, hasTools, IMAGE_URL_NOTE, joinPath, jsonHeaders, jsonPost, maxTokensOf, OPENAI_MODELS, splitSystem, streamError, systemImagesNote, withDefaultHeaders, withTimings } from './adapter';

const ANTHROPIC_VERSION = '2023-06-01';
const API_HEADERS: Readonly<Record<string, string>> = { 'anthropic-version': ANTHROPIC_VERSION };

export const anthropicAdapter: EndpointAdapter = {
  api: 'anthropic',
  probePath: '/v1/models',
  probeHeaders: API_HEADERS,
  // Its list holds dated ids, not the aliases it also serves: not the whole list.
  models: { ...OPENAI_MODELS, complete: () => false },

  buildRequest(spec: RequestSpec, endpoint: EndpointSpec): BuiltRequest {
    const { body, prompt } = bodyStart(spec, endpoint);
    const { system, turns, systemImages } = splitSystem(prompt);
    body.max_tokens = maxTokensOf(spec);
    if (system !== undefined) body.system = system;
    body.messages = turns.map(anthropicMessage);
    body.stream = true;
    if (spec.temperature !== undefined) body.temperature = spec.temperature;
    if (spec.topP !== undefined) body.top_p = spec.topP;
    if (spec.stop !== undefined && spec.stop.length > 0) body.stop_sequences = [...spec.stop];
    if (hasTools(spec)) body.tools = spec.tools.map(anthropicTool);
    const notes: string[] = [];
    if (turns.some((t) => t.parts?.some((p) => p.type === 'image' && !p.url.startsWith('data:')))) notes.push(IMAGE_URL_NOTE);
    if (systemImages) notes.push(systemImagesNote('anthropic'));
    if (spec.frequencyPenalty !== undefined || spec.presencePenalty !== undefined) notes.push('frequency and presence penalties are not sent: the anthropic API has none');
    if (spec.responseFormat !== undefined && spec.responseFormat.type !== 'text') notes.push('the response format is not sent: the anthropic API has no response_format');
    return jsonPost(joinPath(endpoint, '/v1/messages'), withDefaultHeaders(jsonHeaders(endpoint, 'text/event-stream'), API_HEADERS), body, notes);
  },

  interpret(event: unknown): EventInfo {
    if (!isObject(event)) return {};
    switch (event.type) {
      case 'content_block_delta': {
        const delta = event.delta;
        if (!isObject(delta)) return {};
        if (delta.type === 'text_delta') return textOf(str(delta.text), 'content');
        if (delta.type === 'thinking_delta') return textOf(str(delta.thinking), 'reasoning');
        if (delta.type === 'input_json_delta') return toolPiece(event.index, { args: str(delta.partial_json) });
        return {}; // signature_delta, citations: not tokens of the answer
      }
      case 'content_block_start': {
        // Always empty today; a block that starts with text would still be text.
        const block = event.content_block;
        if (!isObject(block)) return {};
        if (block.type === 'text') return textOf(str(block.text), 'content');
        if (block.type === 'thinking') return textOf(str(block.thinking), 'reasoning');
        // a tool call (server_tool_use: one Anthropic runs itself): its name now, its input in input_json_delta pieces
        if (block.type === 'tool_use' || block.type === 'server_tool_use') return toolPiece(event.index, { id: str(block.id), name: str(block.name) });
        return {};
      }
      case 'message_start':
        return isObject(event.message) ? messageInfo(event.message, false) : {};
      case 'message_delta':
        return usageInfo(event.usage);
      case 'message_stop':
        return { done: true };
      case 'error':
        return { error: streamError(event) ?? 'error' };
      case 'message':
        // stream:true ignored (a gateway that buffers): the whole Message in one JSON document.
        return messageInfo(event, true);
      default: {
        // ping, content_block_stop, event types added later; and a gateway's own error object
        const error = streamError(event);
        return error !== undefined ? { error } : {};
      }
    }
  },
};

/** A turn as the Messages API takes it: text as a string, text with images as content blocks. */
function anthropicMessage(t: Turn): Record<string, unknown> {
  if (!t.parts) return { role: t.role, content: t.content };
  // Anthropic refuses an empty text block
  const content = t.parts.filter((p) => p.type !== 'text' || p.text !== '').map((p) => {
    if (p.type === 'text') return { type: 'text', text: p.text };
    const inline = dataUrl(p.url);
    return { type: 'image', source: inline ? { type: 'base64', media_type: inline.mediaType, data: inline.base64 } : { type: 'url', url: p.url } };
  });
  return { role: t.role, content };
}

/** A tool definition as the Messages API takes it. */
function anthropicTool(t: ToolDefinition): Record<string, unknown> {
  const f = t.function;
  return { name: f.name, ...(f.description !== undefined ? { description: f.description } : {}), input_schema: f.parameters ?? { type: 'object', properties: {} } };
}

/** A piece of the tool call in content block `index`. */
function toolPiece(index: unknown, piece: { readonly id?: string | undefined; readonly name?: string | undefined; readonly args?: string | undefined }): EventInfo {
  const i = count(index);
  const call: ToolCallDelta = { ...(i !== undefined ? { index: i } : {}), ...(piece.id ? { id: piece.id } : {}), ...(piece.name ? { name: piece.name } : {}), ...(piece.args ? { args: piece.args } : {}) };
  return { toolCalls: [call] };
}

function textOf(text: string | undefined, as: 'content' | 'reasoning'): EventInfo {
  return text ? { [as]: text } : {};
}

/** message_start's message (or a whole Message): its id, its usage, and with `whole` its content. */
function messageInfo(message: Record<string, unknown>, whole: boolean): EventInfo {
  const usage = usageInfo(message.usage, !whole);
  const info: { -readonly [K in keyof EventInfo]: EventInfo[K] } = { ...usage };
  const id = str(message.id);
  if (id) info.responseId = id;
  if (whole) {
    let content = '';
    let reasoning = '';
    const calls: ToolCallDelta[] = [];
    for (const [i, block] of (Array.isArray(message.content) ? message.content : []).entries()) {
      if (!isObject(block)) continue;
      if (block.type === 'text') content += str(block.text) ?? '';
      else if (block.type === 'thinking') reasoning += str(block.thinking) ?? '';
      else if (block.type === 'tool_use' && typeof block.name === 'string') calls.push({ index: i, name: block.name, args: JSON.stringify(block.input ?? {}) });
    }
    if (content) info.content = content;
    if (reasoning) info.reasoning = reasoning;
    if (calls.length > 0) info.toolCalls = calls;
    info.done = true;
  }
  return info;
}

/**
 * Anthropic's usage object. `input_tokens` counts only the prompt tokens neither read from nor written
 * to the cache, so the prompt is the three together; the ones read from the cache are its cached
 * tokens. `output_tokens` is cumulative (message_delta), thinking included. message_start's
 * output_tokens is a placeholder (1 or 2) before anything is generated: not kept as a count.
 */
function usageInfo(value: unknown, start = false): { usage?: UsageInfo } & TimingFields {
  if (!isObject(value)) return {};
  const usage: { promptTokens?: number; completionTokens?: number } = {};
  const input = count(value.input_tokens);
  const created = count(value.cache_creation_input_tokens);
  const read = count(value.cache_read_input_tokens);
  if (input !== undefined) usage.promptTokens = input + (created ?? 0) + (read ?? 0);
  const output = count(value.output_tokens);
  if (output !== undefined && !start) usage.completionTokens = output;
  const counted = usage.promptTokens !== undefined || usage.completionTokens !== undefined;
  return withTimings<{ usage?: UsageInfo } & TimingFields>(counted ? { usage } : {}, cachedTokens(value, 'cache_read_input_tokens', 'usage'));
}
