// Which API does a base URL speak, and is the endpoint usable at all? Both answer before a run
// starts, in about a second, with one line a user can act on. Every GET here goes through undici
// with no redirect following of its own: a redirect within the endpoint's origin is followed (a few
// hops, same headers), one to another origin is never followed (the key would go with it) and is
// reported with its Location.
import type { Dispatcher } from 'undici';
import { API_KINDS } from '../core/types';
import type { ApiKind, EndpointSpec, NetworkSpec } from '../core/types';
import { endsWithV1, requestPath, splitBaseUrl, withDefaultHeaders } from './adapters/adapter';
import type { EndpointAdapter, SplitUrl } from './adapters/adapter';
import { deploymentOf } from './adapters/azureOpenai';
import { adapterFor, apiFromUrl, keyHeaderFor } from './adapters/registry';
import { isObject, parseJson } from '../core/json';
import { connectionFailure, createDispatcher } from './connections';
import { authHeaders, displayUrl, fromServer, Scrubber, secretsOf } from '../core/redact';

/** A one-line, user-facing reason why a run cannot start. */
export class PreflightError extends Error {
  override readonly name = 'PreflightError';
}

/**
 * No probe told which API a server speaks. The message is the CLI's (pass --api); the extension
 * tells it by `apiUndetected` (the engine is its own bundle there, so not by instanceof) and asks.
 */
export class ApiUndetectedError extends PreflightError {
  readonly apiUndetected = true;
  constructor(readonly shownUrl: string, readonly seen: string) {
    super(`could not tell which API ${shownUrl} speaks (GET ${seen}); pass --api ${API_KINDS.join('|')}`);
  }
}

const DEFAULT_TIMEOUT_MS = 2000;
/** Connecting is the part that hangs on a dead host; it gets at most a second. */
const CONNECT_TIMEOUT_MS = 1000;
const MAX_PROBE_BODY = 256 * 1024;
/** Redirects followed within the endpoint's own origin. */
const MAX_SAME_ORIGIN_REDIRECTS = 3;

interface ProbeResult {
  readonly path: string;
  readonly status?: number;
  readonly json?: unknown;
  readonly text?: string;
  /** A redirect to another origin, not followed: where it pointed (shown, credentials removed). */
  readonly redirect?: string;
  /** Set when the request itself failed (no HTTP answer). */
  /** `described`: the message is a whole sentence about the connection (connectionFailure's), shown as it is. */
  readonly failure?: { readonly code: string; readonly message: string; readonly described?: boolean };
}

export interface ProbeOptions {
  readonly timeoutMs?: number;
  readonly apiKey?: string;
  readonly apiKeyHeader?: string;
  readonly headers?: Readonly<Record<string, string>>;
  /** Proxy and certificates. */
  readonly network?: NetworkSpec;
}

/** The GETs of one check against one base URL: its pool, its path parts, its headers, the secrets to keep out of messages. */
class Prober {
  readonly shownUrl: string;
  readonly scrubber: Scrubber;
  readonly #pool: Dispatcher;
  readonly #timeoutMs: number;
  readonly #url: string;
  readonly #network: NetworkSpec | undefined;
  readonly #split: SplitUrl;
  readonly #headers: Record<string, string>;

  constructor(url: string, options: ProbeOptions) {
    try {
      this.#split = splitBaseUrl(url);
    } catch (err) {
      throw new PreflightError((err as Error).message.replace(url, displayUrl(url)));
    }
    this.shownUrl = displayUrl(url);
    this.#url = url;
    this.#network = options.network;
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.scrubber = new Scrubber(secretsOf({ url, headers: options.headers }, options.apiKey));
    this.#headers = { ...options.headers, accept: 'application/json', ...authHeaders(options.apiKey, options.apiKeyHeader) };
    // Through a proxy, connecting is two hops (and a tunnel): it gets more time.
    const connectTimeout = options.network?.proxy !== undefined ? Math.max(CONNECT_TIMEOUT_MS, this.#timeoutMs) : CONNECT_TIMEOUT_MS;
    this.#pool = createDispatcher(this.#split.origin, options.network, { connections: 4, connectTimeout, keepAliveTimeout: 1000 });
  }

  /** GET an API path (from the server root) under the endpoint's base path, with its query. */
  async get(path: string): Promise<ProbeResult> {
    const signal = AbortSignal.timeout(this.#timeoutMs);
    // the server root of a URL without a path is "/" (an empty request path is no request at all)
    let target = requestPath(this.#split, path);
    if (!target.startsWith('/')) target = `/${target}`;
    try {
      for (let hop = 0; ; hop++) {
        const res = await this.#pool.request({ origin: this.#split.origin, path: target, method: 'GET', headers: this.#headers, signal, headersTimeout: this.#timeoutMs, bodyTimeout: this.#timeoutMs });
        const text = await readCapped(res.body);
        const location = header(res.headers, 'location');
        if (res.statusCode >= 300 && res.statusCode < 400 && location !== undefined) {
          const next = this.#sameOrigin(location, target);
          if (next !== undefined && hop < MAX_SAME_ORIGIN_REDIRECTS) {
            target = next;
            continue;
          }
          return { path, status: res.statusCode, redirect: this.#shown(location, target), text };
        }
        return { path, status: res.statusCode, json: parseJson(text), text };
      }
    } catch (err) {
      const e = err as Error & { code?: string; cause?: { code?: string } };
      const known = connectionFailure(err, this.#url, this.#network);
      let code = known?.code ?? e.code ?? e.cause?.code ?? e.name;
      if (known === undefined && (e.name === 'TimeoutError' || code === 'UND_ERR_ABORTED' || signal.aborted)) code = 'TIMEOUT';
      return { path, failure: { code: fromServer(code, this.scrubber, 80, true), message: fromServer(known?.message ?? e.message, this.scrubber, 300, true), ...(known ? { described: true } : {}) } };
    }
  }

  /** The path to follow when a redirect stays in the endpoint's origin; undefined when it leaves it. */
  #sameOrigin(location: string, from: string): string | undefined {
    try {
      const u = new URL(location, this.#split.origin + from);
      return u.origin === this.#split.origin ? u.pathname + u.search : undefined;
    } catch {
      return undefined;
    }
  }

  #shown(location: string, from: string): string {
    let abs = location;
    try {
      abs = new URL(location, this.#split.origin + from).toString();
    } catch {
      // shown as given
    }
    return fromServer(displayUrl(abs), this.scrubber, 200, true);
  }

  /** What a server said, made one safe line: no control characters, no secret, at most `max` characters. */
  said(text: string | undefined, max = 160): string {
    const line = (text ?? '').split('\n', 1)[0]!.trim();
    return line ? `: ${fromServer(line, this.scrubber, max, true)}` : '';
  }

  failureLine(failure: NonNullable<ProbeResult['failure']>): string {
    if (failure.described) return failure.message;
    if (failure.code === 'TIMEOUT') return `no answer from ${this.shownUrl} within ${this.#timeoutMs} ms`;
    if (failure.code === 'UND_ERR_CONNECT_TIMEOUT') return `cannot connect to ${this.shownUrl} (connect timeout)`;
    return `cannot connect to ${this.shownUrl} (${failure.code})`;
  }

  keyLine(status: number, path: string, apiKey: string | undefined): string {
    return apiKey
      ? `${this.shownUrl} refused the API key (HTTP ${status} on GET ${path}): the key is wrong or lacks access`
      : `${this.shownUrl} needs an API key (HTTP ${status} on GET ${path}): pass one with --api-key-env VAR`;
  }

  redirectLine(r: ProbeResult): string {
    return `${this.shownUrl} redirects GET ${r.path} to ${r.redirect} (HTTP ${r.status}); a redirect to another origin is not followed, so no key or header goes there: use that URL if you trust it`;
  }

  async close(): Promise<void> {
    await this.#pool.destroy().catch(() => undefined);
  }
}

function header(headers: Record<string, string | string[] | undefined>, name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}

async function readCapped(body: AsyncIterable<unknown>): Promise<string> {
  const parts: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    const b = chunk as Buffer;
    if (size < MAX_PROBE_BODY) parts.push(b.length + size > MAX_PROBE_BODY ? b.subarray(0, MAX_PROBE_BODY - size) : b);
    size += b.length;
  }
  return Buffer.concat(parts).toString('utf8');
}

const ok = (r: ProbeResult): boolean => r.status !== undefined && r.status >= 200 && r.status < 300;
const unauthorized = (r: ProbeResult): boolean => r.status === 401 || r.status === 403;

async function withProber<T>(url: string, options: ProbeOptions, fn: (p: Prober) => Promise<T>): Promise<T> {
  const p = new Prober(url, options);
  try {
    return await fn(p);
  } finally {
    await p.close();
  }
}

/**
 * Picks the API a base URL speaks: a hosted provider's URL names it (Anthropic, Gemini, an Azure
 * OpenAI deployment: apiFromUrl, no request); else Ollama when /api/tags answers with a model list,
 * llama.cpp when /props answers with its settings, else OpenAI chat when /v1/models answers. A URL
 * ending in /v1 means OpenAI. Throws PreflightError when the server is down or no probe tells.
 */
export async function detectApi(url: string, options: ProbeOptions = {}): Promise<ApiKind> {
  const named = apiFromUrl(url);
  if (named !== undefined) return named;
  return withProber(url, options, async (p) => {
    if (endsWithV1(url)) {
      const r = await p.get('/v1/models');
      if (r.failure) throw new PreflightError(p.failureLine(r.failure));
      if (r.redirect !== undefined) throw new PreflightError(p.redirectLine(r));
      if (unauthorized(r)) throw new PreflightError(p.keyLine(r.status!, '/v1/models', options.apiKey));
      return 'openai-chat';
    }
    const all = await Promise.all([p.get('/api/tags'), p.get('/props'), p.get('/v1/models')]);
    const [tags, props, models] = all;
    if (all.every((r) => r.failure)) throw new PreflightError(p.failureLine(tags.failure!));
    if (ok(tags) && isObject(tags.json) && Array.isArray(tags.json.models)) return 'ollama';
    if (ok(props) && isObject(props.json) && ('default_generation_settings' in props.json || 'total_slots' in props.json)) return 'llamacpp';
    if (ok(models)) return 'openai-chat';
    const denied = all.find(unauthorized);
    if (denied) throw new PreflightError(p.keyLine(denied.status!, denied.path, options.apiKey));
    const redirected = all.find((r) => r.redirect !== undefined);
    if (redirected) throw new PreflightError(p.redirectLine(redirected));
    const seen = all.map((r) => `${r.path} → ${r.status ?? r.failure?.code}`).join(', ');
    throw new ApiUndetectedError(p.shownUrl, seen);
  });
}

/** Longer names are not model names (a hostile list): skipped. */
const MODEL_NAME_MAX = 1000;

/**
 * The models a server lists (/v1/models, /api/tags for Ollama, Gemini's /v1beta/models), in its
 * order; empty when it lists none or cannot say. An Azure OpenAI deployment URL names its one model.
 */
export async function listModels(endpoint: Pick<EndpointSpec, 'url' | 'api' | 'headers' | 'apiKeyHeader'>, options: { timeoutMs?: number; apiKey?: string; network?: NetworkSpec } = {}): Promise<string[]> {
  if (endpoint.api === 'azure-openai') {
    const deployment = deploymentOf(endpoint.url);
    return deployment !== undefined ? [deployment] : [];
  }
  let adapter: EndpointAdapter;
  try {
    adapter = adapterFor(endpoint.api);
  } catch {
    return [];
  }
  const path = endpoint.api === 'ollama' ? '/api/tags' : endpoint.api === 'anthropic' || endpoint.api === 'gemini' ? adapter.probePath : '/v1/models';
  return withProber(probeUrl(endpoint.url, adapter), probeOptions(endpoint, options, adapter), async (p) => {
    const r = await p.get(path);
    if (!ok(r)) return [];
    // As served: the name is sent back in every request and must match exactly. Whatever prints or
    // shows it cleans it there (the CLI's printer, the extension's log; the webview sets text only).
    return servedModels(endpoint.api, r.json).filter((m) => m !== '' && m.length <= MODEL_NAME_MAX);
  });
}

/** The probes' options for an endpoint: its key in the header its API takes, and the headers the API wants on every request (Anthropic's version). */
function probeOptions(endpoint: Pick<EndpointSpec, 'api' | 'headers' | 'apiKeyHeader'>, options: { timeoutMs?: number; apiKey?: string; network?: NetworkSpec }, adapter: EndpointAdapter): ProbeOptions {
  const keyHeader = keyHeaderFor(endpoint);
  const headers = adapter.probeHeaders !== undefined ? withDefaultHeaders(endpoint.headers, adapter.probeHeaders) : endpoint.headers;
  return {
    ...(options.network ? { network: options.network } : {}),
    ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
    ...(options.apiKey ? { apiKey: options.apiKey } : {}),
    ...(keyHeader ? { apiKeyHeader: keyHeader } : {}),
    ...(headers ? { headers } : {}),
  };
}

/** The base URL an API's probe path goes under (a Gemini URL's own /v1beta, an Azure deployment's resource). */
function probeUrl(url: string, adapter: EndpointAdapter): string {
  return adapter.probeBaseUrl?.(url) ?? url;
}

/**
 * Checks that an endpoint answers, accepts the key, and (when it lists models) serves the model
 * asked for. Throws PreflightError with one line; returns quietly when a run can start.
 */
export async function preflight(endpoint: EndpointSpec, options: { timeoutMs?: number; apiKey?: string; network?: NetworkSpec } = {}): Promise<void> {
  let adapter;
  try {
    adapter = adapterFor(endpoint.api);
  } catch (err) {
    throw new PreflightError((err as Error).message);
  }
  await withProber(probeUrl(endpoint.url, adapter), probeOptions(endpoint, options, adapter), async (p) => {
    const url = p.shownUrl;
    const r = await p.get(adapter.probePath);
    if (r.failure) throw new PreflightError(p.failureLine(r.failure));
    if (r.redirect !== undefined) throw new PreflightError(p.redirectLine(r));
    const status = r.status!;
    // Gemini answers a wrong key with 400 INVALID_ARGUMENT, reason API_KEY_INVALID.
    if (unauthorized(r) || (status === 400 && endpoint.api === 'gemini' && (r.text ?? '').includes('API_KEY_INVALID'))) {
      throw new PreflightError(p.keyLine(status, adapter.probePath, options.apiKey));
    }
    if (status === 404) {
      // Some OpenAI-compatible gateways have no model list, and a hosted API's may not be where its
      // probe looks (Azure's, under some api-versions): the first request will tell.
      if (endpoint.api !== 'ollama' && endpoint.api !== 'llamacpp') return;
      const what = endpoint.api === 'ollama' ? 'an Ollama server' : 'a llama.cpp server';
      throw new PreflightError(`${url} does not look like ${what} (GET ${adapter.probePath} → 404); try --api auto`);
    }
    if (status === 503 && endpoint.api === 'llamacpp') throw new PreflightError(`${url} is not ready (HTTP 503 on GET /health${p.said(r.text)}); the model may still be loading`);
    if (status >= 300) throw new PreflightError(`${url} answered HTTP ${status} to GET ${adapter.probePath}${p.said(r.text)}`);
    // Anthropic lists dated ids, not the aliases it also serves; Azure lists base models, not
    // deployments; a Gemini list with a next page is not the whole list.
    const complete = endpoint.api !== 'anthropic' && endpoint.api !== 'azure-openai' && !(isObject(r.json) && typeof r.json.nextPageToken === 'string' && r.json.nextPageToken !== '');
    if (endpoint.model !== undefined && complete) {
      const served = servedModels(endpoint.api, r.json);
      if (served.length > 0 && !served.some((m) => sameModel(m, endpoint.model!, endpoint.api))) {
        const list = served.slice(0, 8).map((m) => fromServer(m, p.scrubber, 80, true)).join(', ') + (served.length > 8 ? ', …' : '');
        throw new PreflightError(`model "${fromServer(endpoint.model, p.scrubber, 200, true)}" is not served by ${url} (it serves: ${list})`);
      }
    }
  });
}

function servedModels(api: ApiKind, json: unknown): string[] {
  if (!isObject(json)) return [];
  if (api === 'ollama') {
    return Array.isArray(json.models) ? json.models.flatMap((m) => (isObject(m) && typeof m.name === 'string' ? [m.name] : [])) : [];
  }
  if (api === 'openai-chat' || api === 'openai-completions' || api === 'anthropic') {
    return Array.isArray(json.data) ? json.data.flatMap((m) => (isObject(m) && typeof m.id === 'string' ? [m.id] : [])) : [];
  }
  if (api === 'gemini') {
    // "models/gemini-2.5-flash", and only the models that generate text (the list has embedding ones too).
    const generates = (m: Record<string, unknown>): boolean => !Array.isArray(m.supportedGenerationMethods) || m.supportedGenerationMethods.includes('generateContent') || m.supportedGenerationMethods.includes('streamGenerateContent');
    return Array.isArray(json.models) ? json.models.flatMap((m) => (isObject(m) && typeof m.name === 'string' && generates(m) ? [m.name] : [])) : [];
  }
  return [];
}

function sameModel(served: string, wanted: string, api: ApiKind): boolean {
  if (served === wanted) return true;
  // Gemini lists "models/gemini-2.5-flash" for "gemini-2.5-flash".
  if (api === 'gemini') return served === `models/${wanted}`;
  // Ollama lists "llama3:latest" for "llama3".
  return api === 'ollama' && !wanted.includes(':') && served === `${wanted}:latest`;
}

/** Whether anything answers HTTP at a URL (any status): one GET with no key and no redirect followed off the origin. */
export async function reachable(url: string, timeoutMs = 3000, network?: NetworkSpec): Promise<boolean> {
  try {
    return await withProber(url, { timeoutMs, ...(network ? { network } : {}) }, async (p) => (await p.get('')).failure === undefined);
  } catch {
    return false; // not a URL
  }
}
