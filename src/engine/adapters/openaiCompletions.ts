// OpenAI-compatible text completions (/v1/completions): the prompt is plain text, each choice's text
// is in `text`. Usage and `ignore_eos` as for chat.
import type { EndpointSpec, RequestSpec } from '../types';
import type { BuiltRequest, EndpointAdapter, EventInfo } from './adapter';
import { commonSampling, joinPath, jsonHeaders, maxTokensOf, promptText } from './adapter';
import { sentPrompt } from './cacheBust';
import { interpretOpenAi } from './openaiChat';

export const openaiCompletionsAdapter: EndpointAdapter = {
  api: 'openai-completions',
  framing: 'sse',
  probePath: '/v1/models',

  buildRequest(spec: RequestSpec, endpoint: EndpointSpec): BuiltRequest {
    const body: Record<string, unknown> = {};
    if (endpoint.model !== undefined) body.model = endpoint.model;
    body.prompt = promptText(sentPrompt(spec));
    body.stream = true;
    body.stream_options = { include_usage: true };
    body.max_tokens = maxTokensOf(spec);
    commonSampling(spec, body);
    return { method: 'POST', path: joinPath(endpoint, '/v1/completions'), headers: jsonHeaders(endpoint, 'text/event-stream'), body: JSON.stringify(body) };
  },

  interpret(event: unknown): EventInfo {
    return interpretOpenAi(event, 'completions');
  },
};
