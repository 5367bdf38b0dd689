// OpenAI-compatible text completions (/v1/completions): the prompt is plain text, each choice's text
// is in `text`. Usage, `ignore_eos` and the sampling fields as for chat; images cannot be sent (noted).
import type { EndpointSpec, RequestSpec } from '../../core/types';
import type { BuiltRequest, EndpointAdapter, EventInfo } from './adapter';
import { hasImages, OPENAI_MODELS, promptText, textOnlyNote } from './adapter';
import { interpretOpenAi, openaiRequest } from './openaiChat';

export const openaiCompletionsAdapter: EndpointAdapter = {
  api: 'openai-completions',
  probePath: '/v1/models',
  models: OPENAI_MODELS,

  buildRequest(spec: RequestSpec, endpoint: EndpointSpec): BuiltRequest {
    return openaiRequest(spec, endpoint, '/v1/completions', (prompt) => ({ prompt: promptText(prompt) }), (prompt) => (hasImages(prompt) ? [textOnlyNote('openai-completions')] : []));
  },

  interpret(event: unknown): EventInfo {
    return interpretOpenAi(event, 'completions');
  },
};
