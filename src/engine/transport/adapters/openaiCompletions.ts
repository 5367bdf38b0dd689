// OpenAI-compatible text completions (/v1/completions): the prompt is plain text, each choice's text
// is in `text`. Usage, `ignore_eos` and the sampling fields as for chat; images and tools cannot be
// sent (noted).
import type { EndpointSpec, Prompt, RequestSpec } from '../../core/types';
import type { BuiltRequest, EndpointAdapter, EventInfo } from './adapter';
import { hasImages, hasTools, noToolsNote, OPENAI_MODELS, promptText, textOnlyNote } from './adapter';
import { interpretOpenAi, openaiRequest } from './openaiChat';

export const openaiCompletionsAdapter: EndpointAdapter = {
  api: 'openai-completions',
  probePath: '/v1/models',
  models: OPENAI_MODELS,

  buildRequest(spec: RequestSpec, endpoint: EndpointSpec): BuiltRequest {
    const notes = (prompt: Prompt): string[] => [...(hasImages(prompt) ? [textOnlyNote('openai-completions')] : []), ...(hasTools(spec) ? [noToolsNote('openai-completions')] : [])];
    return openaiRequest(spec, endpoint, '/v1/completions', (prompt) => ({ prompt: promptText(prompt) }), notes);
  },

  interpret(event: unknown): EventInfo {
    return interpretOpenAi(event, 'completions');
  },
};
