// The server's own count of a prompt's tokens, where it serves one: vLLM's `POST /tokenize`
// ({model, messages} → {count, tokens, max_model_len}: the chat template counted, as its usage counts
// it) and llama.cpp's server (`POST /tokenize` {content, add_special} → {tokens}, the chat template
// from its `POST /apply-template` {messages} → {prompt}). Tried in that order on the APIs whose row
// says their servers may have one (core/apis.ts `tokenize`); a server with neither gives undefined,
// and the caller sizes prompts from the replies' usage instead. Only ever sent the synthetic text
// the run will send, on a pool of its own that is closed when the sizing is done.
import type { Dispatcher } from 'undici';
import { apiFacts } from '../core/apis';
import { authHeaders } from '../core/redact';
import type { EndpointSpec, NetworkSpec, Prompt } from '../core/types';
import { promptText, requestPath, splitBaseUrl } from './adapters/adapter';
import { keyHeaderFor } from './adapters/registry';
import { createDispatcher } from './connections';

/** Which way the server counted: its tokenizer's shape. */
export type TokenizerKind = 'vllm' | 'llama.cpp' | 'llama.cpp-text';

export interface TokenCounter {
  readonly kind: TokenizerKind;
  /** The server's count of the prompt as the run sends it (its chat template included, where the kind can tell it). */
  count(prompt: Prompt): Promise<number | undefined>;
  close(): Promise<void>;
}

const TIMEOUT_MS = 5000;
const MAX_BODY = 4 * 1024 * 1024;

interface Answer {
  readonly status: number;
  readonly json: unknown;
}

/** The messages as the chat APIs send a text prompt: role and content. */
function chatMessages(prompt: Prompt): { role: string; content: string }[] {
  return prompt.messages.map((m) => ({ role: m.role, content: m.content }));
}

function isChat(endpoint: EndpointSpec): boolean {
  return endpoint.api !== 'openai-completions' && endpoint.api !== 'llamacpp';
}

class Poster {
  readonly #pool: Dispatcher;
  readonly #origin: string;
  readonly #path: (p: string) => string;
  readonly #headers: Record<string, string>;

  constructor(endpoint: EndpointSpec, apiKey: string | undefined, network: NetworkSpec | undefined) {
    const split = splitBaseUrl(endpoint.url);
    this.#origin = split.origin;
    this.#path = (p) => requestPath(split, p);
    this.#headers = { ...endpoint.headers, 'content-type': 'application/json', accept: 'application/json', ...authHeaders(apiKey, keyHeaderFor(endpoint)) };
    this.#pool = createDispatcher(split.origin, network, { connections: 1, connectTimeout: TIMEOUT_MS, keepAliveTimeout: 1000 });
  }

  /** POSTs JSON; undefined when nothing answered in time (the caller falls back to usage). */
  async post(path: string, body: unknown): Promise<Answer | undefined> {
    try {
      const res = await this.#pool.request({
        origin: this.#origin, path: this.#path(path), method: 'POST', headers: this.#headers, body: JSON.stringify(body),
        signal: AbortSignal.timeout(TIMEOUT_MS), headersTimeout: TIMEOUT_MS, bodyTimeout: TIMEOUT_MS,
      });
      const parts: Buffer[] = [];
      let size = 0;
      for await (const chunk of res.body) {
        size += (chunk as Buffer).length;
        if (size > MAX_BODY) {
          res.body.destroy();
          return { status: res.statusCode, json: undefined };
        }
        parts.push(chunk as Buffer);
      }
      let json: unknown;
      try {
        json = JSON.parse(Buffer.concat(parts).toString('utf8'));
      } catch {
        json = undefined;
      }
      return { status: res.statusCode, json };
    } catch {
      return undefined;
    }
  }

  close(): Promise<void> {
    return this.#pool.close().catch(() => undefined);
  }
}

const field = (json: unknown, key: string): unknown => (typeof json === 'object' && json !== null ? (json as Record<string, unknown>)[key] : undefined);

/** vLLM's answer: {count}. */
function vllmCount(a: Answer | undefined): number | undefined {
  const n = a && a.status === 200 ? field(a.json, 'count') : undefined;
  return typeof n === 'number' && Number.isInteger(n) && n >= 0 ? n : undefined;
}

/** llama.cpp's answer: {tokens: [id | {id, piece}]}. */
function llamaCount(a: Answer | undefined): number | undefined {
  const t = a && a.status === 200 ? field(a.json, 'tokens') : undefined;
  return Array.isArray(t) ? t.length : undefined;
}

/** llama.cpp's /apply-template answer: {prompt}. */
function templated(a: Answer | undefined): string | undefined {
  const p = a && a.status === 200 ? field(a.json, 'prompt') : undefined;
  return typeof p === 'string' ? p : undefined;
}

function vllmBody(endpoint: EndpointSpec, prompt: Prompt): Record<string, unknown> {
  const model = endpoint.model !== undefined ? { model: endpoint.model } : {};
  return isChat(endpoint) ? { ...model, messages: chatMessages(prompt) } : { ...model, prompt: promptText(prompt) };
}

/** llama.cpp's count of a prompt: the chat template applied by the server (chat APIs), special tokens added as its completion does. */
async function llamaCppCount(poster: Poster, endpoint: EndpointSpec, prompt: Prompt, withTemplate: boolean): Promise<number | undefined> {
  let content = promptText(prompt);
  if (isChat(endpoint) && withTemplate) {
    const t = templated(await poster.post('/apply-template', { messages: chatMessages(prompt) }));
    if (t === undefined) return undefined;
    content = t;
  }
  return llamaCount(await poster.post('/tokenize', { content, add_special: true, parse_special: true }));
}

/**
 * A counter for the endpoint's server, told from its answer to `sample` (a prompt as the run sends
 * it); undefined when the API's servers have no tokenizer endpoint or this one answers neither shape.
 */
export async function tokenCounter(endpoint: EndpointSpec, sample: Prompt, options: { readonly apiKey?: string; readonly network?: NetworkSpec } = {}): Promise<TokenCounter | undefined> {
  if (apiFacts(endpoint.api)?.tokenize !== true) return undefined;
  let poster: Poster;
  try {
    poster = new Poster(endpoint, options.apiKey, options.network);
  } catch {
    return undefined;
  }
  const counter = (kind: TokenizerKind, count: (p: Prompt) => Promise<number | undefined>): TokenCounter => ({ kind, count, close: () => poster.close() });
  // vLLM first: llama.cpp answers a body without `content` with an empty list, never a count
  if (vllmCount(await poster.post('/tokenize', vllmBody(endpoint, sample))) !== undefined) {
    return counter('vllm', async (p) => vllmCount(await poster.post('/tokenize', vllmBody(endpoint, p))));
  }
  if (isChat(endpoint) && (await llamaCppCount(poster, endpoint, sample, true)) !== undefined) {
    return counter('llama.cpp', (p) => llamaCppCount(poster, endpoint, p, true));
  }
  if ((await llamaCppCount(poster, endpoint, sample, false)) !== undefined) {
    // the text alone: a chat API's template is left to the replies' usage
    return counter(isChat(endpoint) ? 'llama.cpp-text' : 'llama.cpp', (p) => llamaCppCount(poster, endpoint, p, false));
  }
  await poster.close();
  return undefined;
}
