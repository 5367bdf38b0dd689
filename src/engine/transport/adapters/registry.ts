// Which adapter speaks which API, and which API a URL names by itself. Apart from adapter.ts (the
// interface and the helpers every adapter imports), so that nothing imports back into this table and
// it can be built at load time.
import { API_KINDS } from '../../core/types';
import type { ApiKind } from '../../core/types';
import type { EndpointAdapter } from './adapter';
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

/** The adapter for an API; throws for a name that is not one (a value from outside the types). */
export function adapterFor(api: ApiKind): EndpointAdapter {
  const adapter = Object.hasOwn(ADAPTERS, api) ? ADAPTERS[api] : undefined;
  if (adapter === undefined) {
    throw new Error(`unknown API "${String(api)}" (expected one of ${API_KINDS.join(', ')})`);
  }
  return adapter;
}

/** The header an endpoint's key goes in: the one it names, else its API's own (`x-api-key`, …), else none (Authorization: Bearer). */
export function keyHeaderFor(endpoint: { readonly api: ApiKind; readonly apiKeyHeader?: string | undefined }): string | undefined {
  if (endpoint.apiKeyHeader) return endpoint.apiKeyHeader;
  return Object.hasOwn(ADAPTERS, endpoint.api) ? ADAPTERS[endpoint.api].keyHeader : undefined;
}

/**
 * The API a hosted provider's URL names, without asking it: Anthropic's hosts, Gemini's, and Azure
 * OpenAI's deployment URLs. Undefined for anything else (the Azure ".../openai/v1" form and Gemini's
 * OpenAI-compatible ".../openai/" path included: those are probed as other servers are). Pure.
 */
export function apiFromUrl(url: string): ApiKind | undefined {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return undefined;
  }
  if (u.protocol !== 'https:' && u.protocol !== 'http:') return undefined;
  const host = u.hostname.toLowerCase().replace(/\.$/, '');
  const path = u.pathname;
  if (host.endsWith('.anthropic.com')) return 'anthropic';
  if (host === 'generativelanguage.googleapis.com') return /\/openai(\/|$)/.test(path) ? undefined : 'gemini';
  const azure = ['.openai.azure.com', '.cognitiveservices.azure.com', '.services.ai.azure.com'].some((d) => host.endsWith(d));
  if (azure && /\/openai\/deployments\/[^/]+/.test(path)) return 'azure-openai';
  return undefined;
}
