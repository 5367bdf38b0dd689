// Which API does a base URL speak, and is the endpoint usable at all? Both answer before a run
// starts, in about a second, with one line a user can act on. Every GET here goes through undici
// with no redirect following of its own: a redirect within the endpoint's origin is followed (a few
// hops, same headers), one to another origin is never followed (the key would go with it) and is
// reported with its Location. Which API says what is the API table's (core/apis.ts) and each adapter's:
// nothing here names an API.
import type { Dispatcher } from 'undici';
import { API_KINDS, API_TABLE, apiFromUrl, probeOrder, probeTells } from '../core/apis';
import type { ApiKind } from '../core/apis';
import { REACH_TIMEOUT_MS, type EndpointSpec, type NetworkSpec, type Reach } from '../core/types';
import { endsWithV1, requestPath, splitBaseUrl, withDefaultHeaders } from './adapters/adapter';
import type { EndpointAdapter, SplitUrl } from './adapters/adapter';
import { adapterFor, keyHeaderFor } from './adapters/registry';
import { parseJson } from '../core/json';
import { cannotConnect, connectionFailure, createDispatcher } from './connections';
import { readCapped } from './readCapped';
import { authHeaders, displayUrl, fromServer, Scrubber, secretsOf } from '../core/redact';

/** A one-line, user-facing reason why a run cannot start. */
export class PreflightError extends Error {
  override readonly name = 'PreflightError';
}

/**
 * No probe told which API a server speaks. The message is the CLI's (pass --api); the extension
 * tells it by `apiUndetected` (the engine is its own bundle there, so not by instanceof) and asks.
 */
class ApiUndetectedError extends PreflightError {
  readonly apiUndetected = true;
  /**
   * `notFound`: every probe answered 404. Under a URL with a path ("/vl" for "/v1") that path is the
   * likelier mistake than an API no probe knows, and the message says so first.
   */
  constructor(readonly shownUrl: string, readonly seen: string, readonly notFound = false, underPath = false) {
    super(`could not tell which API ${shownUrl} speaks (GET ${seen}); ${notFound && underPath ? 'every probe got 404 under its path: check the URL\'s path, or ' : ''}pass --api ${API_KINDS.join('|')}`);
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
        const { text } = await readCapped(res.body, MAX_PROBE_BODY);
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
    return cannotConnect(this.shownUrl, failure.code);
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
 * Picks the API a base URL speaks, in the API table's order of detection (core/apis.ts): a hosted
 * provider's URL names it (Anthropic, Gemini, an Azure OpenAI deployment: no request); a URL ending
 * in /v1 means OpenAI; else every API's probe is sent at once and the first whose answer tells wins
 * (Ollama's /api/tags model list, llama.cpp's /props settings, then any /v1/models answer). Throws
 * PreflightError when the server is down or no probe tells.
 */
export async function detectApi(url: string, options: ProbeOptions = {}): Promise<ApiKind> {
  const named = apiFromUrl(url);
  if (named !== undefined) return named;
  return withProber(url, options, async (p) => {
    const v1 = API_TABLE.find((r) => r.detect?.v1Root === true && r.detect.probe !== undefined);
    if (v1 !== undefined && endsWithV1(url)) {
      const path = v1.detect!.probe!.path;
      const r = await p.get(path);
      if (r.failure) throw new PreflightError(p.failureLine(r.failure));
      if (r.redirect !== undefined) throw new PreflightError(p.redirectLine(r));
      if (unauthorized(r)) throw new PreflightError(p.keyLine(r.status!, path, options.apiKey));
      return v1.id;
    }
    const order = probeOrder();
    const paths = [...new Set(order.map((row) => row.detect.probe.path))];
    const all = await Promise.all(paths.map((path) => p.get(path)));
    if (all.every((r) => r.failure)) throw new PreflightError(p.failureLine(all[0]!.failure!));
    const answer = new Map(all.map((r) => [r.path, r]));
    const told = order.find((row) => {
      const r = answer.get(row.detect.probe.path)!;
      return probeTells(row.detect.probe, r.status, r.json);
    });
    if (told !== undefined) return told.id;
    const denied = all.find(unauthorized);
    if (denied) throw new PreflightError(p.keyLine(denied.status!, denied.path, options.apiKey));
    const redirected = all.find((r) => r.redirect !== undefined);
    if (redirected) throw new PreflightError(p.redirectLine(redirected));
    const seen = all.map((r) => `${r.path} → ${r.status ?? r.failure?.code}`).join(', ');
    throw new ApiUndetectedError(p.shownUrl, seen, all.every((r) => r.status === 404), new URL(url).pathname.replace(/\/+$/, '') !== '');
  });
}

/** Longer names are not model names (a hostile list): skipped. */
const MODEL_NAME_MAX = 1000;

/**
 * The models a server lists (its API's list: /v1/models, Ollama's /api/tags, Gemini's /v1beta/models),
 * in its order; empty when it lists none or cannot say. A URL that names its model (an Azure OpenAI
 * deployment's) gives that one, unasked.
 */
export async function listModels(endpoint: Pick<EndpointSpec, 'url' | 'api' | 'headers' | 'apiKeyHeader'>, options: { timeoutMs?: number; apiKey?: string; network?: NetworkSpec } = {}): Promise<string[]> {
  let adapter: EndpointAdapter;
  try {
    adapter = adapterFor(endpoint.api);
  } catch {
    return [];
  }
  if (adapter.modelsOf !== undefined) return adapter.modelsOf(endpoint.url);
  const list = adapter.models;
  if (list === undefined) return [];
  return withProber(probeUrl(endpoint.url, adapter), probeOptions(endpoint, options, adapter), async (p) => {
    const r = await p.get(list.path);
    if (!ok(r)) return [];
    // As served: the name is sent back in every request and must match exactly. Whatever prints or
    // shows it cleans it there (the CLI's printer, the extension's log; the webview sets text only).
    return list.names(r.json).filter((m) => m !== '' && m.length <= MODEL_NAME_MAX);
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
 * Checks that an endpoint answers, accepts the key, and (when its probe's answer is the whole model
 * list) serves the model asked for. Throws PreflightError with one line; returns quietly when a run can start.
 */
export async function preflight(endpoint: EndpointSpec, options: { timeoutMs?: number; apiKey?: string; network?: NetworkSpec } = {}): Promise<void> {
  let adapter: EndpointAdapter;
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
    if (unauthorized(r) || adapter.keyRefused?.(status, r.text ?? '') === true) {
      throw new PreflightError(p.keyLine(status, adapter.probePath, options.apiKey));
    }
    if (status === 404) {
      // Some OpenAI-compatible gateways have no model list, and a hosted API's may not be where its
      // probe looks (Azure's, under some api-versions): the first request will tell.
      if (adapter.serverName === undefined) return;
      throw new PreflightError(`${url} does not look like ${adapter.serverName} (GET ${adapter.probePath} → 404); try --api auto`);
    }
    if (status === adapter.loadingStatus) throw new PreflightError(`${url} is not ready (HTTP ${status} on GET ${adapter.probePath}${p.said(r.text)}); the model may still be loading`);
    if (status >= 300) throw new PreflightError(`${url} answered HTTP ${status} to GET ${adapter.probePath}${p.said(r.text)}`);
    if (endpoint.model !== undefined) checkModel(p, adapter, r.json, endpoint.model);
  });
}

/** Throws when the probe's answer is the API's whole model list and the model is not in it. */
function checkModel(p: Prober, adapter: EndpointAdapter, json: unknown, model: string): void {
  const list = adapter.models;
  if (list === undefined || list.path !== adapter.probePath || list.complete?.(json) === false) return;
  const served = list.names(json);
  if (served.length === 0 || served.some((m) => m === model || list.same?.(m, model) === true)) return;
  const names = served.slice(0, 8).map((m) => fromServer(m, p.scrubber, 80, true)).join(', ') + (served.length > 8 ? ', …' : '');
  throw new PreflightError(`model "${fromServer(model, p.scrubber, 200, true)}" is not served by ${p.shownUrl} (it serves: ${names})`);
}

/** Whether anything answers HTTP at a URL, how fast, or why not: one GET with no key and no redirect followed off the origin. */
export async function checkReach(url: string, timeoutMs = REACH_TIMEOUT_MS, network?: NetworkSpec): Promise<Reach> {
  try {
    return await withProber(url, { timeoutMs, ...(network ? { network } : {}) }, async (p): Promise<Reach> => {
      const started = performance.now();
      const r = await p.get('');
      return r.failure === undefined ? { reachable: true, ms: performance.now() - started } : { reachable: false, code: r.failure.code, message: p.failureLine(r.failure) };
    });
  } catch (e) {
    return { reachable: false, code: 'BAD_URL', message: (e as Error).message };
  }
}

/** Whether anything answers HTTP at a URL (any status): checkReach's yes or no. */
export async function reachable(url: string, timeoutMs = REACH_TIMEOUT_MS, network?: NetworkSpec): Promise<boolean> {
  return (await checkReach(url, timeoutMs, network)).reachable;
}
