// The server's own count of a prompt's tokens, where it serves one: vLLM's `POST /tokenize`
// ({model, messages} → {count, tokens, max_model_len}: the chat template counted, as its usage counts
// it) and llama.cpp's server (`POST /tokenize` {content, add_special} → {tokens}, the chat template
// from its `POST /apply-template` {messages} → {prompt}). Tried in that order where the API's row says
// its servers may have one (core/apis.ts `tokenize`): llama.cpp's own API anywhere, the OpenAI-compatible
// ones only at a loopback or private address (a hosted service has no such route and would get the
// key with every POST). A server with neither gives undefined, and the caller sizes prompts from the
// replies' usage instead. Only ever sent the synthetic text the run will send, on a pool of its own
// (destroyed when the sizing is done); every POST stops when the caller's signal aborts (the run's
// Cancel, the sizing's deadline), and a body is read up to MAX_BODY only.
import type { Dispatcher } from 'undici';
import { apiFacts } from '../core/apis';
import { count, isObject, parseJson, str } from '../core/json';
import { authHeaders } from '../core/redact';
import type { EndpointSpec, NetworkSpec, Prompt, TokenizerKind } from '../core/types';
import { promptText, requestPath, splitBaseUrl } from './adapters/adapter';
import { keyHeaderFor } from './adapters/registry';
import { createDispatcher } from './connections';
import { isPrivateUrl } from './loopback';
import { readCapped } from './readCapped';

export interface TokenCounter {
  readonly kind: TokenizerKind;
  /** The server's count of the sample it was told from (the caller's first count, not asked again). */
  readonly sampleCount: number;
  /** The server's count of the prompt as the run sends it (its chat template included, where the kind can tell it). */
  count(prompt: Prompt): Promise<number | undefined>;
  close(): Promise<void>;
}

export interface CounterOptions {
  readonly apiKey?: string;
  readonly network?: NetworkSpec;
  /** Aborts every POST in flight and those after it: the run's Cancel, the sizing's deadline. */
  readonly signal?: AbortSignal;
  /** One POST's limit (default 5 s). */
  readonly timeoutMs?: number;
}

const TIMEOUT_MS = 5000;
/** A count is a short JSON answer; vLLM's lists the token ids too (a few bytes each). */
const MAX_BODY = 1024 * 1024;

interface Answer {
  readonly status: number;
  readonly json: unknown;
}

/** Whether sizing may ask this endpoint's server for its tokenizer (the API's row, and for a self-hosted kind a private address). */
export function mayTokenize(endpoint: EndpointSpec): boolean {
  const how = apiFacts(endpoint.api)?.tokenize;
  return how === 'own' || (how === 'self-hosted' && isPrivateUrl(endpoint.url));
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
  readonly #signal: AbortSignal | undefined;
  readonly #timeoutMs: number;

  constructor(endpoint: EndpointSpec, options: CounterOptions) {
    const split = splitBaseUrl(endpoint.url);
    this.#origin = split.origin;
    this.#path = (p) => requestPath(split, p);
    this.#headers = { ...endpoint.headers, 'content-type': 'application/json', accept: 'application/json', ...authHeaders(options.apiKey, keyHeaderFor(endpoint)) };
    this.#signal = options.signal;
    this.#timeoutMs = options.timeoutMs ?? TIMEOUT_MS;
    this.#pool = createDispatcher(split.origin, options.network, { connections: 1, connectTimeout: this.#timeoutMs, keepAliveTimeout: 1000 });
  }

  get stopped(): boolean {
    return this.#signal?.aborted === true;
  }

  /** POSTs JSON; undefined when nothing answered in time, or the signal aborted (the caller falls back to usage). */
  async post(path: string, body: unknown): Promise<Answer | undefined> {
    if (this.stopped) return undefined;
    const timeout = AbortSignal.timeout(this.#timeoutMs);
    const signal = this.#signal ? AbortSignal.any([this.#signal, timeout]) : timeout;
    try {
      const res = await this.#pool.request({
        origin: this.#origin, path: this.#path(path), method: 'POST', headers: this.#headers, body: JSON.stringify(body),
        signal, headersTimeout: this.#timeoutMs, bodyTimeout: this.#timeoutMs,
      });
      const read = await readCapped(res.body, MAX_BODY);
      return { status: res.statusCode, json: read.whole ? parseJson(read.text) : undefined };
    } catch {
      return undefined;
    }
  }

  /** At once: a POST still in flight (aborted or not) does not hold the sizing up. */
  close(): Promise<void> {
    return this.#pool.destroy().catch(() => undefined);
  }
}

/** `key` of a 200 answer's JSON object. */
const field = (a: Answer | undefined, key: string): unknown => (a && a.status === 200 && isObject(a.json) ? a.json[key] : undefined);

/** vLLM's answer: {count}. */
function vllmCount(a: Answer | undefined): number | undefined {
  return count(field(a, 'count'));
}

/** llama.cpp's answer: {tokens: [id | {id, piece}]}. */
function llamaCount(a: Answer | undefined): number | undefined {
  const t = field(a, 'tokens');
  return Array.isArray(t) ? t.length : undefined;
}

/** llama.cpp's /apply-template answer: {prompt}. */
function templated(a: Answer | undefined): string | undefined {
  return str(field(a, 'prompt'));
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
 * it), whose count it keeps; undefined when sizing may not ask this endpoint (mayTokenize), or it
 * answers neither shape before the signal aborts.
 */
export async function tokenCounter(endpoint: EndpointSpec, sample: Prompt, options: CounterOptions = {}): Promise<TokenCounter | undefined> {
  if (!mayTokenize(endpoint) || options.signal?.aborted) return undefined;
  let poster: Poster;
  try {
    poster = new Poster(endpoint, options);
  } catch {
    return undefined;
  }
  const counter = (kind: TokenizerKind, sampleCount: number, count: (p: Prompt) => Promise<number | undefined>): TokenCounter => ({ kind, sampleCount, count, close: () => poster.close() });
  // vLLM first: llama.cpp answers a body without `content` with an empty list, never a count
  const v = vllmCount(await poster.post('/tokenize', vllmBody(endpoint, sample)));
  if (v !== undefined) return counter('vllm', v, async (p) => vllmCount(await poster.post('/tokenize', vllmBody(endpoint, p))));
  const templatedCount = isChat(endpoint) && !poster.stopped ? await llamaCppCount(poster, endpoint, sample, true) : undefined;
  if (templatedCount !== undefined) return counter('llama.cpp', templatedCount, (p) => llamaCppCount(poster, endpoint, p, true));
  const text = poster.stopped ? undefined : await llamaCppCount(poster, endpoint, sample, false);
  // the text alone: a chat API's template is left to the replies' usage
  if (text !== undefined) return counter(isChat(endpoint) ? 'llama.cpp-text' : 'llama.cpp', text, (p) => llamaCppCount(poster, endpoint, p, false));
  await poster.close();
  return undefined;
}
