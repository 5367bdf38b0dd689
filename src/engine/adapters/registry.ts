// Which adapter speaks which API. Apart from adapter.ts (the interface and the helpers every adapter
// imports), so that nothing imports back into this table and it can be built at load time.
import type { ApiKind } from '../types';
import type { EndpointAdapter } from './adapter';
import { llamacppAdapter } from './llamacpp';
import { ollamaAdapter } from './ollama';
import { openaiChatAdapter } from './openaiChat';
import { openaiCompletionsAdapter } from './openaiCompletions';

const ADAPTERS: Readonly<Record<ApiKind, EndpointAdapter>> = {
  'openai-chat': openaiChatAdapter,
  'openai-completions': openaiCompletionsAdapter,
  ollama: ollamaAdapter,
  llamacpp: llamacppAdapter,
};

/** The adapter for an API; throws for a name that is not one (a value from outside the types). */
export function adapterFor(api: ApiKind): EndpointAdapter {
  const adapter = Object.hasOwn(ADAPTERS, api) ? ADAPTERS[api] : undefined;
  if (adapter === undefined) {
    throw new Error(`unknown API "${String(api)}" (expected one of openai-chat, openai-completions, ollama, llamacpp)`);
  }
  return adapter;
}
