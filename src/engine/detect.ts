// Which API does a base URL speak, and is the endpoint usable at all? Both answer before a run
// starts, in about a second, with one line a user can act on.
import { Pool } from 'undici';
import type { ApiKind, EndpointSpec } from './types';
import { endsWithV1, splitBaseUrl } from './adapters/adapter';
import { adapterFor } from './adapters/registry';
import { isObject } from './json';
import { authHeaders } from './redact';

/** A one-line, user-facing reason why a run cannot start. */
export class PreflightError extends Error {
  override readonly name = 'PreflightError';
}

const DEFAULT_TIMEOUT_MS = 2000;
/** Connecting is the part that hangs on a dead host; it gets at most a second. */
const CONNECT_TIMEOUT_MS = 1000;
const MAX_PROBE_BODY = 256 * 1024;

interface ProbeResult {
  readonly path: string;
  readonly status?: number;
  readonly json?: unknown;
  readonly text?: string;
  /** Set when the request itself failed (no HTTP answer). */
  readonly failure?: { readonly code: string; readonly message: string };
}

interface ProbeOptions {
  readonly timeoutMs?: number;
  readonly apiKey?: string;
  readonly apiKeyHeader?: string;
  readonly headers?: Readonly<Record<string, string>>;
}

async function probe(pool: Pool, basePath: string, path: string, options: ProbeOptions): Promise<ProbeResult> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const headers: Record<string, string> = { ...options.headers, accept: 'application/json' };
  Object.assign(headers, authHeaders(options.apiKey, options.apiKeyHeader));
  const signal = AbortSignal.timeout(timeoutMs);
  try {
    const res = await pool.request({ path: basePath + path, method: 'GET', headers, signal, headersTimeout: timeoutMs, bodyTimeout: timeoutMs });
    const parts: Buffer[] = [];
    let size = 0;
    for await (const chunk of res.body) {
      const b = chunk as Buffer;
      if (size < MAX_PROBE_BODY) parts.push(b);
      size += b.length;
    }
    const text = Buffer.concat(parts).toString('utf8');
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { path, status: res.statusCode, json, text };
  } catch (err) {
    const e = err as Error & { code?: string; cause?: { code?: string } };
    let code = e.code ?? e.cause?.code ?? e.name;
    if (e.name === 'TimeoutError' || code === 'UND_ERR_ABORTED' || signal.aborted) code = 'TIMEOUT';
    return { path, failure: { code, message: e.message } };
  }
}

function poolFor(url: string): { pool: Pool; basePath: string } {
  let split;
  try {
    split = splitBaseUrl(url);
  } catch (err) {
    throw new PreflightError((err as Error).message);
  }
  const pool = new Pool(split.origin, { connections: 4, connectTimeout: CONNECT_TIMEOUT_MS, keepAliveTimeout: 1000 });
  pool.on('connectionError', () => {});
  return { pool, basePath: split.basePath };
}

async function closePool(pool: Pool): Promise<void> {
  await pool.destroy().catch(() => undefined);
}

function failureLine(url: string, failure: NonNullable<ProbeResult['failure']>, timeoutMs: number): string {
  if (failure.code === 'TIMEOUT') return `no answer from ${url} within ${timeoutMs} ms`;
  if (failure.code === 'UND_ERR_CONNECT_TIMEOUT') return `cannot connect to ${url} (connect timeout)`;
  return `cannot connect to ${url} (${failure.code})`;
}

function keyLine(url: string, status: number, path: string, apiKey: string | undefined): string {
  return apiKey
    ? `${url} refused the API key (HTTP ${status} on GET ${path}): the key is wrong or lacks access`
    : `${url} needs an API key (HTTP ${status} on GET ${path}): pass one with --api-key-env VAR`;
}

function snippet(text: string | undefined): string {
  const line = (text ?? '').split('\n', 1)[0]!.trim();
  return line ? `: ${line.length > 160 ? `${line.slice(0, 160)}…` : line}` : '';
}

const ok = (r: ProbeResult): boolean => r.status !== undefined && r.status >= 200 && r.status < 300;
const unauthorized = (r: ProbeResult): boolean => r.status === 401 || r.status === 403;

/**
 * Picks the API a base URL speaks: Ollama when /api/tags answers with a model list, llama.cpp when
 * /props answers with its settings, else OpenAI chat when /v1/models answers. A URL ending in /v1
 * means OpenAI. Throws PreflightError when the server is down or no probe tells.
 */
export async function detectApi(url: string, options: { timeoutMs?: number; apiKey?: string; apiKeyHeader?: string; headers?: Record<string, string> } = {}): Promise<ApiKind> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const { pool, basePath } = poolFor(url);
  try {
    if (endsWithV1(url)) {
      const r = await probe(pool, basePath, '/v1/models', options);
      if (r.failure) throw new PreflightError(failureLine(url, r.failure, timeoutMs));
      if (unauthorized(r)) throw new PreflightError(keyLine(url, r.status!, '/v1/models', options.apiKey));
      return 'openai-chat';
    }
    const [tags, props, models] = await Promise.all([
      probe(pool, basePath, '/api/tags', options),
      probe(pool, basePath, '/props', options),
      probe(pool, basePath, '/v1/models', options),
    ]);
    const all = [tags, props, models];
    if (all.every((r) => r.failure)) throw new PreflightError(failureLine(url, tags.failure!, timeoutMs));
    if (ok(tags) && isObject(tags.json) && Array.isArray(tags.json.models)) return 'ollama';
    if (ok(props) && isObject(props.json) && ('default_generation_settings' in props.json || 'total_slots' in props.json)) return 'llamacpp';
    if (ok(models)) return 'openai-chat';
    const denied = all.find(unauthorized);
    if (denied) throw new PreflightError(keyLine(url, denied.status!, denied.path, options.apiKey));
    const seen = all.map((r) => `${r.path} → ${r.status ?? r.failure?.code}`).join(', ');
    throw new PreflightError(`could not tell which API ${url} speaks (GET ${seen}); pass --api openai-chat|openai-completions|ollama|llamacpp`);
  } finally {
    await closePool(pool);
  }
}

/**
 * Checks that an endpoint answers, accepts the key, and (when it lists models) serves the model
 * asked for. Throws PreflightError with one line; returns quietly when a run can start.
 */
export async function preflight(endpoint: EndpointSpec, options: { timeoutMs?: number; apiKey?: string } = {}): Promise<void> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  let adapter;
  try {
    adapter = adapterFor(endpoint.api);
  } catch (err) {
    throw new PreflightError((err as Error).message);
  }
  const { pool, basePath } = poolFor(endpoint.url);
  const url = endpoint.url;
  try {
    const probeOptions: ProbeOptions = {
      timeoutMs,
      ...(options.apiKey ? { apiKey: options.apiKey } : {}),
      ...(endpoint.apiKeyHeader ? { apiKeyHeader: endpoint.apiKeyHeader } : {}),
      ...(endpoint.headers ? { headers: endpoint.headers } : {}),
    };
    const r = await probe(pool, basePath, adapter.probePath, probeOptions);
    if (r.failure) throw new PreflightError(failureLine(url, r.failure, timeoutMs));
    const status = r.status!;
    if (unauthorized(r)) throw new PreflightError(keyLine(url, status, adapter.probePath, options.apiKey));
    if (status === 404) {
      // Some OpenAI-compatible gateways have no model list; the first request will tell.
      if (endpoint.api === 'openai-chat' || endpoint.api === 'openai-completions') return;
      const what = endpoint.api === 'ollama' ? 'an Ollama server' : 'a llama.cpp server';
      throw new PreflightError(`${url} does not look like ${what} (GET ${adapter.probePath} → 404); try --api auto`);
    }
    if (status === 503 && endpoint.api === 'llamacpp') throw new PreflightError(`${url} is not ready (HTTP 503 on GET /health${snippet(r.text)}); the model may still be loading`);
    if (status >= 400) throw new PreflightError(`${url} answered HTTP ${status} to GET ${adapter.probePath}${snippet(r.text)}`);
    if (endpoint.model !== undefined) {
      const served = servedModels(endpoint.api, r.json);
      if (served.length > 0 && !served.some((m) => sameModel(m, endpoint.model!, endpoint.api))) {
        const list = served.slice(0, 8).join(', ') + (served.length > 8 ? ', …' : '');
        throw new PreflightError(`model "${endpoint.model}" is not served by ${url} (it serves: ${list})`);
      }
    }
  } finally {
    await closePool(pool);
  }
}

function servedModels(api: ApiKind, json: unknown): string[] {
  if (!isObject(json)) return [];
  if (api === 'ollama') {
    return Array.isArray(json.models) ? json.models.flatMap((m) => (isObject(m) && typeof m.name === 'string' ? [m.name] : [])) : [];
  }
  if (api === 'openai-chat' || api === 'openai-completions') {
    return Array.isArray(json.data) ? json.data.flatMap((m) => (isObject(m) && typeof m.id === 'string' ? [m.id] : [])) : [];
  }
  return [];
}

function sameModel(served: string, wanted: string, api: ApiKind): boolean {
  if (served === wanted) return true;
  // Ollama lists "llama3:latest" for "llama3".
  return api === 'ollama' && !wanted.includes(':') && served === `${wanted}:latest`;
}
