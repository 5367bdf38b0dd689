// OpenAI-compatible text completions (/v1/completions): the prompt is plain text, each choice's text
// is in `text`. Usage, `ignore_eos` and the sampling fields as for chat; images cannot be sent (noted).
import type { EndpointSpec, RequestSpec } from '../../core/types';
import type { BuiltRequest, EndpointAdapter, EventInfo } from './adapter';
import { commonSampling, hasImages, joinPath, jsonHeaders, maxTokensOf, promptText, textOnlyNote } from './adapter';
import { sentPrompt } from './cacheBust';
import { interpretOpenAi } from './openaiChat';

export const openaiCompletionsAdapter: EndpointAdapter = {
  api: 'openai-completions',
  framing: 'sse',
  probePath: '/v1/models',

  buildRequest(spec: RequestSpec, endpoint: EndpointSpec): BuiltRequest {
    const body: Record<string, unknown> = {};
    if (endpoint.model !== undefined) body.model = endpoint.model;
    const prompt = sentPrompt(spec);
    body.prompt = promptText(prompt);
    body.stream = true;
    body.stream_options = { include_usage: true };
    body.max_tokens = maxTokensOf(spec);
    commonSampling(spec, body);
    const built: BuiltRequest = { method: 'POST', path: joinPath(endpoint, '/v1/completions'), headers: jsonHeaders(endpoint, 'text/event-stream'), body: JSON.stringify(body) };
    return hasImages(prompt) ? { ...built, notes: [textOnlyNote('openai-completions')] } : built;
  },

  interpret(event: unknown): EventInfo {
    return interpretOpenAi(event, 'completions');
  },
};
