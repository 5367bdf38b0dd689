// Which adapter speaks which API: one line an API, which TypeScript asks for when the API table
// (core/apis.ts) has a row with no adapter. Apart from adapter.ts (the interface and the helpers every
// adapter imports), so that nothing imports back into this table and it can be built at load time.
import { API_KINDS, apiFacts } from '../../core/apis';
import type { ApiKind } from '../../core/apis';
import type { EndpointAdapter, RegisteredAdapter } from './adapter';
import { anthropicAdapter } from './anthropic';
import { azureOpenAiAdapter } from './azureOpenai';
import { geminiAdapter } from './gemini';
import { llamacppAdapter } from './llamacpp';
import { ollamaAdapter } from './ollama';
import { openaiChatAdapter } from './openaiChat';
import { openaiCompletionsAdapter } from './openaiCompletions';

const ADAPTERS: Readonly<Record<ApiKind, EndpointAdapter>> = {
  'openai-chat': openaiChatAdapter,
  'openai-completions': openaiCompletionsAdapter,
  ollama: ollamaAdapter,
  llamacpp: llamacppAdapter,
  anthropic: anthropicAdapter,
  gemini: geminiAdapter,
  'azure-openai': azureOpenAiAdapter,
};

/** Each adapter with its row's framing, made once. */
const REGISTERED: ReadonlyMap<string, RegisteredAdapter> = new Map(API_KINDS.map((api) => [api, { ...ADAPTERS[api], framing: apiFacts(api)!.framing }]));

/** The adapter for an API; throws for a name that is not one (a value from outside the types). */
export function adapterFor(api: ApiKind): RegisteredAdapter {
  const adapter = REGISTERED.get(api);
  if (adapter === undefined) {
    throw new Error(`unknown API "${String(api)}" (expected one of ${API_KINDS.join(', ')})`);
  }
  return adapter;
}

/** The header an endpoint's key goes in: the one it names, else its API's own (`x-api-key`, …), else none (Authorization: Bearer). */
export function keyHeaderFor(endpoint: { readonly api: ApiKind; readonly apiKeyHeader?: string | undefined }): string | undefined {
  if (endpoint.apiKeyHeader) return endpoint.apiKeyHeader;
  return apiFacts(endpoint.api)?.keyHeader;
}

// The API a hosted provider's URL names is read from the table; named here too, where detection and its tests look for it.
