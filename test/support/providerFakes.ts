// Local fakes of the hosted providers' streaming APIs (OpenAI chat completions, Anthropic Messages,
// Gemini streamGenerateContent, Azure OpenAI deployments) on 127.0.0.1. Each replays a stream fixture of
// test/fixtures/streams/{openai-chat,anthropic,gemini,azure-openai} byte for byte (see the README.md there for the
// document each follows), an event at a time on a known clock: the events before the first token at
// once, the first token event `ttftMs` after the request arrived, each later one `itlMs` after the one
// before (scheduled from the arrival, so timer lateness does not add up), the events after a token
// with it. It checks the key where the provider takes it (and Anthropic's anthropic-version),
// answering as the provider does when they are wrong, and logs every request it got, what it
// answered and when it wrote each token event, on the same clock as the client (performance.now).
// A tool call's pieces (its name, each piece of its arguments) are token events too, logged apart
// as well (toolWrites), with what each carried.
import { closerOf, listenOnLoopback, Timers } from './listen';
import { loadFixture, FIXTURE_DIR } from './fixtureServer';
import { readBody } from './requestBody';
import { createServer } from 'node:http';
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import { join } from 'node:path';

export type Provider = 'openai-chat' | 'anthropic' | 'gemini' | 'azure-openai';

/** What the fake answers to one generation request. */
export type FakeReply =
  | { readonly kind: 'stream'; readonly fixture: string }
  /** 429 as the provider sends it: Anthropic and Azure with `retry-after`, Gemini with a RetryInfo detail. */
  | { readonly kind: 'rate-limit'; readonly retryAfterS: number }
  /** Anthropic's 529 overloaded_error; Gemini's and Azure's 503. */
  | { readonly kind: 'overloaded' };

export interface ProviderFakeOptions {
  readonly provider: Provider;
  /** The one key accepted. */
  readonly key: string;
  /** One per generation request, in order; the last is repeated. Default: the provider's plain text stream. */
  readonly replies?: readonly FakeReply[];
  /** ms from the request's arrival to the first token event (default 40). */
  readonly ttftMs?: number;
  /** ms between token events (default 10). */
  readonly itlMs?: number;
}

export interface FakeLogEntry {
  readonly method: string;
  /** Path and query as received. */
  readonly url: string;
  readonly pathname: string;
  readonly query: Readonly<Record<string, string>>;
  /** Header names as received (lower case), sorted. */
  readonly headerNames: readonly string[];
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
  /** The status answered, and for a stream its fixture. */
  status?: number;
  fixture?: string;
  /** performance.now() when the request's body had arrived. */
  receivedAt: number;
  /** performance.now() at each token event written (text, reasoning or a tool call's piece). */
  readonly tokenWrites: number[];
  /** The token events that carried a tool call's piece: when written, and the pieces as the fake reads them. */
  readonly toolWrites: { readonly at: number; readonly pieces: readonly ToolPiece[] }[];
}

/** A tool call's piece in an event, as the fake reads its own stream: the call (its index, or its order), its name, its argument text. */
export interface ToolPiece {
  readonly call: number;
  readonly name?: string;
  readonly args: string;
}

export interface ProviderFake {
  /** http://127.0.0.1:PORT */
  readonly url: string;
  /** The URL to profile: the root, or for Azure the deployment URL with its api-version. */
  readonly endpointUrl: string;
  readonly model: string;
  readonly log: readonly FakeLogEntry[];
  /** The generation requests only. */
  posts(): readonly FakeLogEntry[];
  close(): Promise<void>;
}

export const OPENAI_MODEL = 'gpt-4.1-mini';
export const ANTHROPIC_MODEL = 'claude-sonnet-4-5-20250929';
export const GEMINI_MODEL = 'gemini-2.5-flash-lite';
export const AZURE_DEPLOYMENT = 'gpt-4o';
export const AZURE_API_VERSION = '2024-10-21';

const DEFAULT_FIXTURE: Readonly<Record<Provider, string>> = { 'openai-chat': 'text', anthropic: 'text', gemini: 'text', 'azure-openai': 'chat' };

/** A fixture's raw events: the body cut after each blank line (LF or CRLF, as the provider frames them). */
export function fixtureEvents(provider: Provider, name: string): { readonly events: readonly Buffer[]; readonly headers: Readonly<Record<string, string>>; readonly body: Buffer } {
  const f = loadFixture(name, join(FIXTURE_DIR, provider));
  const events: Buffer[] = [];
  const text = f.body.toString('latin1');
  const sep = /\r\n\r\n|\n\n/g;
  let from = 0;
  for (let m = sep.exec(text); m !== null; m = sep.exec(text)) {
    events.push(f.body.subarray(from, m.index + m[0].length));
    from = m.index + m[0].length;
  }
  if (from < f.body.length) events.push(f.body.subarray(from));
  return { events, headers: f.headers, body: f.body };
}

/** The JSON of an SSE event's data line, or undefined ([DONE], no data). */
export function eventData(event: Buffer): unknown {
  const line = event.toString('utf8').split(/\r?\n/).find((l) => l.startsWith('data:'));
  const data = line?.slice(5).trim();
  if (data === undefined || !data.startsWith('{')) return undefined;
  return JSON.parse(data) as unknown;
}

/** A field of a JSON object by path, or undefined. */
function at(value: unknown, ...path: (string | number)[]): unknown {
  let v = value;
  for (const k of path) v = typeof v === 'object' && v !== null ? (v as Record<string | number, unknown>)[k] : undefined;
  return v;
}

const nonEmpty = (v: unknown): boolean => typeof v === 'string' && v !== '';
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

/** The tool call pieces an event carries (a name, or argument text), the fake's own reading of its stream, apart from the adapters'. */
export function toolPieces(provider: Provider, event: Buffer): ToolPiece[] {
  const d = eventData(event);
  const piece = (call: number, name: unknown, args: unknown): ToolPiece[] =>
    nonEmpty(name) || nonEmpty(args) ? [{ call, ...(nonEmpty(name) ? { name: name as string } : {}), args: nonEmpty(args) ? (args as string) : '' }] : [];
  switch (provider) {
    case 'anthropic': {
      const block = at(d, 'content_block');
      if (at(d, 'type') === 'content_block_start' && at(block, 'type') === 'tool_use') return piece(at(d, 'index') as number, at(block, 'name'), '');
      if (at(d, 'type') === 'content_block_delta' && at(d, 'delta', 'type') === 'input_json_delta') return piece(at(d, 'index') as number, undefined, at(d, 'delta', 'partial_json'));
      return [];
    }
    case 'gemini':
      // whole calls, numbered in the order the stream gives them by the caller (call: -1 here)
      return list(at(d, 'candidates')).flatMap((c) => list(at(c, 'content', 'parts')).flatMap((part) => {
        const call = at(part, 'functionCall');
        return call === undefined ? [] : piece(-1, at(call, 'name'), at(call, 'args') === undefined ? '' : JSON.stringify(at(call, 'args')));
      }));
    case 'openai-chat':
    case 'azure-openai':
      return list(at(d, 'choices')).flatMap((c) => list(at(c, 'delta', 'tool_calls')).flatMap((t) => piece(at(t, 'index') as number, at(t, 'function', 'name'), at(t, 'function', 'arguments'))));
  }
}

/** Whether an event carries answer or reasoning text, or a tool call's piece: the fake's own reading of its stream, apart from the adapters'. */
export function isTokenEvent(provider: Provider, event: Buffer): boolean {
  if (toolPieces(provider, event).length > 0) return true;
  const d = eventData(event);
  switch (provider) {
    case 'anthropic': {
      const type = at(d, 'delta', 'type');
      return at(d, 'type') === 'content_block_delta' && ((type === 'text_delta' && nonEmpty(at(d, 'delta', 'text'))) || (type === 'thinking_delta' && nonEmpty(at(d, 'delta', 'thinking'))));
    }
    case 'gemini':
      return list(at(d, 'candidates')).some((c) => list(at(c, 'content', 'parts')).some((part) => nonEmpty(at(part, 'text'))));
    case 'openai-chat':
    case 'azure-openai':
      return list(at(d, 'choices')).some((c) => nonEmpty(at(c, 'delta', 'content')));
  }
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}, pretty = false): void {
  const text = pretty ? JSON.stringify(body, null, 2) : JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)), ...headers });
  res.end(text);
}

// ---- the providers' own error answers (docs' shapes; texts shortened) ----

const anthropicError = (res: ServerResponse, status: number, type: string, message: string, headers: Record<string, string> = {}): void =>
  sendJson(res, status, { type: 'error', error: { type, message } }, { 'request-id': 'req_011CFakeErr0r', ...headers });

// Google's APIs pretty-print their errors.
const googleError = (res: ServerResponse, status: number, state: string, message: string, details?: unknown[]): void =>
  sendJson(res, status, { error: { code: status, message, status: state, ...(details ? { details } : {}) } }, {}, true);

const azureError = (res: ServerResponse, status: number, code: string, message: string, headers: Record<string, string> = {}): void =>
  sendJson(res, status, { error: { code, message } }, { 'apim-request-id': '00000000-fake-4000-8000-000000000000', ...headers });

const openaiError = (res: ServerResponse, status: number, type: string, code: string | null, message: string, headers: Record<string, string> = {}): void =>
  sendJson(res, status, { error: { message, type, param: null, code } }, { 'x-request-id': 'req_0fake0000000000000000000000000000', ...headers });

export async function startProviderFake(options: ProviderFakeOptions): Promise<ProviderFake> {
  const { provider, key } = options;
  const ttftMs = options.ttftMs ?? 40;
  const itlMs = options.itlMs ?? 10;
  const replies = options.replies ?? [{ kind: 'stream', fixture: DEFAULT_FIXTURE[provider] }];
  const log: FakeLogEntry[] = [];
  const timers = new Timers();
  let posts = 0;
  const later = (ms: number, fn: () => void): void => timers.later(ms, fn);

  /** Replays a fixture: leading events at once, then each token event on its slot, the events after a token with it. */
  const stream = (entry: FakeLogEntry, res: ServerResponse, name: string): void => {
    const { events, headers } = fixtureEvents(provider, name);
    entry.status = 200;
    entry.fixture = name;
    const out: Record<string, string> = {};
    for (const [k, v] of Object.entries(headers)) if (!['content-length', 'transfer-encoding', 'connection', 'date'].includes(k)) out[k] = v;
    res.socket?.setNoDelay(true);
    res.writeHead(200, out);
    // Groups: what is written at once; a token event starts a new group.
    const groups: { token: boolean; bytes: Buffer[]; tool: ToolPiece[] }[] = [{ token: false, bytes: [], tool: [] }];
    for (const e of events) {
      if (isTokenEvent(provider, e)) groups.push({ token: true, bytes: [e], tool: toolPieces(provider, e) });
      else groups[groups.length - 1]!.bytes.push(e);
    }
    let slot = 0;
    const plan = groups.map((g) => (g.token ? ttftMs + itlMs * slot++ : 0));
    const start = entry.receivedAt;
    const write = (i: number): void => {
      if (res.destroyed) return;
      const g = groups[i]!;
      if (g.token) entry.tokenWrites.push(performance.now());
      if (g.tool.length > 0) entry.toolWrites.push({ at: entry.tokenWrites[entry.tokenWrites.length - 1]!, pieces: g.tool });
      const last = i === groups.length - 1;
      const bytes = Buffer.concat(g.bytes);
      if (last) res.end(bytes);
      else {
        if (bytes.length > 0) res.write(bytes);
        const next = start + plan[i + 1]!;
        later(next - performance.now(), () => write(i + 1));
      }
    };
    res.flushHeaders();
    write(0);
  };

  const answer = (entry: FakeLogEntry, res: ServerResponse, reply: FakeReply): void => {
    if (reply.kind === 'stream') return stream(entry, res, reply.fixture);
    if (reply.kind === 'rate-limit') {
      entry.status = 429;
      const s = reply.retryAfterS;
      if (provider === 'anthropic') return anthropicError(res, 429, 'rate_limit_error', 'This request would exceed the rate limit for your organization of 50 requests per minute. Please try again later.', { 'retry-after': String(s), 'anthropic-ratelimit-requests-remaining': '0' });
      if (provider === 'gemini') {
        return googleError(res, 429, 'RESOURCE_EXHAUSTED', 'You exceeded your current quota, please check your plan and billing details.', [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: `${s}s` }]);
      }
      if (provider === 'openai-chat') return openaiError(res, 429, 'requests', 'rate_limit_exceeded', `Rate limit reached for ${OPENAI_MODEL} on requests per min (RPM): Limit 3, Used 3, Requested 1. Please try again in ${s}s.`, { 'retry-after': String(s) });
      return azureError(res, 429, '429', `Requests to the ChatCompletions_Create Operation under Azure OpenAI API version ${AZURE_API_VERSION} have exceeded token rate limit of your current OpenAI S0 pricing tier. Please retry after ${s} seconds.`, { 'retry-after': String(s), 'retry-after-ms': String(s * 1000) });
    }
    if (provider === 'anthropic') {
      entry.status = 529;
      return anthropicError(res, 529, 'overloaded_error', 'Overloaded');
    }
    entry.status = 503;
    if (provider === 'gemini') return googleError(res, 503, 'UNAVAILABLE', 'The model is overloaded. Please try again later.');
    if (provider === 'openai-chat') return openaiError(res, 503, 'server_error', null, 'The engine is currently overloaded, please try again later');
    return azureError(res, 503, '503', 'The service is temporarily unable to process your request. Please try again later.');
  };

  /** The provider's answer when the key (or Anthropic's version) is wrong; undefined when all is well. */
  const refuse = (entry: FakeLogEntry, res: ServerResponse): boolean => {
    const h = entry.headers;
    const fail = (status: number, send: () => void): boolean => {
      entry.status = status;
      send();
      return true;
    };
    if (provider === 'anthropic') {
      if (h['x-api-key'] !== key) return fail(401, () => anthropicError(res, 401, 'authentication_error', 'invalid x-api-key'));
      if (h['anthropic-version'] === undefined) return fail(400, () => anthropicError(res, 400, 'invalid_request_error', 'anthropic-version: header is required'));
      return false;
    }
    if (provider === 'openai-chat') {
      if (h.authorization !== `Bearer ${key}`) return fail(401, () => openaiError(res, 401, 'invalid_request_error', 'invalid_api_key', 'Incorrect API key provided. You can find your API key at https://platform.openai.com/account/api-keys.'));
      return false;
    }
    if (provider === 'gemini') {
      const given = h['x-goog-api-key'] ?? entry.query.key;
      if (given === undefined) return fail(403, () => googleError(res, 403, 'PERMISSION_DENIED', "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API."));
      if (given !== key) {
        return fail(400, () => googleError(res, 400, 'INVALID_ARGUMENT', 'API key not valid. Please pass a valid API key.', [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'API_KEY_INVALID', domain: 'googleapis.com' }]));
      }
      return false;
    }
    if (entry.query['api-version'] === undefined) return fail(404, () => azureError(res, 404, '404', 'Resource not found'));
    if (h['api-key'] !== key) {
      return fail(401, () => azureError(res, 401, '401', 'Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for an active subscription and use a correct regional API endpoint for your resource.'));
    }
    return false;
  };

  const route = (entry: FakeLogEntry, res: ServerResponse): void => {
    const p = entry.pathname;
    if (refuse(entry, res)) return;
    const reject = (status: number, send: (status: number) => void): void => {
      entry.status = status;
      send(status);
    };
    const notFound = (): void => {
      entry.status = 404;
      if (provider === 'anthropic') return anthropicError(res, 404, 'not_found_error', 'Not found');
      if (provider === 'gemini') return googleError(res, 404, 'NOT_FOUND', 'Method not found.');
      if (provider === 'openai-chat') return openaiError(res, 404, 'invalid_request_error', null, `Invalid URL (${entry.method} ${p})`);
      return azureError(res, 404, '404', 'Resource not found');
    };
    if (entry.method === 'GET') {
      entry.status = 200;
      if (provider === 'anthropic' && p === '/v1/models') {
        return sendJson(res, 200, { data: [{ type: 'model', id: ANTHROPIC_MODEL, display_name: 'Claude Sonnet 4.5', created_at: '2025-09-29T00:00:00Z' }], has_more: false, first_id: ANTHROPIC_MODEL, last_id: ANTHROPIC_MODEL });
      }
      if (provider === 'gemini' && p === '/v1beta/models') {
        // An embedding model first, as Google's list has them among the others.
        return sendJson(res, 200, {
          models: [
            { name: 'models/text-embedding-004', displayName: 'Text Embedding 004', supportedGenerationMethods: ['embedContent'] },
            { name: `models/${GEMINI_MODEL}`, displayName: 'Gemini 2.5 Flash-Lite', supportedGenerationMethods: ['generateContent', 'countTokens', 'createCachedContent', 'batchGenerateContent'] },
            { name: 'models/gemini-2.5-flash', displayName: 'Gemini 2.5 Flash', supportedGenerationMethods: ['generateContent', 'countTokens', 'createCachedContent', 'batchGenerateContent'] },
          ],
        }, {}, true);
      }
      if (provider === 'azure-openai' && p === '/openai/models') return sendJson(res, 200, { data: [{ id: 'gpt-4o-2024-11-20', status: 'succeeded', object: 'model' }], object: 'list' });
      if (provider === 'openai-chat' && p === '/v1/models') return sendJson(res, 200, { object: 'list', data: [{ id: OPENAI_MODEL, object: 'model', created: 1744316542, owned_by: 'system' }] });
      return notFound();
    }
    if (entry.method !== 'POST') return notFound();
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(entry.body) as Record<string, unknown>;
    } catch {
      return reject(400, (s) => sendJson(res, s, { error: { message: 'the body is not JSON' } }));
    }
    if (provider === 'openai-chat') {
      if (p !== '/v1/chat/completions') return notFound();
      if (body.model !== OPENAI_MODEL) return reject(404, (s) => openaiError(res, s, 'invalid_request_error', 'model_not_found', `The model \`${String(body.model)}\` does not exist or you do not have access to it.`));
      if ('ignore_eos' in body) return reject(400, (s) => openaiError(res, s, 'invalid_request_error', null, 'Unrecognized request argument supplied: ignore_eos'));
    } else if (provider === 'anthropic') {
      if (p !== '/v1/messages') return notFound();
      if (typeof body.max_tokens !== 'number') return reject(400, (s) => anthropicError(res, s, 'invalid_request_error', 'max_tokens: Field required'));
      if (body.model !== ANTHROPIC_MODEL) return reject(404, (s) => anthropicError(res, s, 'not_found_error', `model: ${String(body.model)}`));
    } else if (provider === 'gemini') {
      const m = /^\/v1beta\/models\/([^/:]+):streamGenerateContent$/.exec(p);
      if (!m) return notFound();
      if (entry.query.alt !== 'sse') return reject(400, (s) => googleError(res, s, 'INVALID_ARGUMENT', 'this fake serves alt=sse only'));
      const model = decodeURIComponent(m[1]!);
      if (model !== GEMINI_MODEL && model !== 'gemini-2.5-flash') {
        return reject(404, (s) => googleError(res, s, 'NOT_FOUND', `models/${model} is not found for API version v1beta, or is not supported for generateContent.`));
      }
    } else {
      const m = /^\/openai\/deployments\/([^/]+)\/chat\/completions$/.exec(p);
      if (!m) return notFound();
      if (m[1] !== AZURE_DEPLOYMENT) return reject(404, (s) => azureError(res, s, 'DeploymentNotFound', 'The API deployment for this resource does not exist.'));
      if ('ignore_eos' in body) return reject(400, (s) => azureError(res, s, 'BadRequest', 'Unrecognized request argument supplied: ignore_eos'));
    }
    const reply = replies[Math.min(posts++, replies.length - 1)]!;
    answer(entry, res, reply);
  };

  const server = createServer((req, res) => {
    void readBody(req).then((raw) => {
      const u = new URL(req.url ?? '/', 'http://fake');
      const entry: FakeLogEntry = {
        method: req.method ?? '',
        url: req.url ?? '/',
        pathname: u.pathname,
        query: Object.fromEntries(u.searchParams),
        headerNames: Object.keys(req.headers).sort(),
        headers: req.headers,
        body: raw.toString('utf8'),
        receivedAt: performance.now(),
        tokenWrites: [],
        toolWrites: [],
      };
      log.push(entry);
      route(entry, res);
    });
  });
  const { url, sockets } = await listenOnLoopback(server);
  return {
    url,
    endpointUrl: provider === 'azure-openai' ? `${url}/openai/deployments/${AZURE_DEPLOYMENT}?api-version=${AZURE_API_VERSION}` : url,
    model: provider === 'openai-chat' ? OPENAI_MODEL : provider === 'anthropic' ? ANTHROPIC_MODEL : provider === 'gemini' ? GEMINI_MODEL : AZURE_DEPLOYMENT,
    log,
    posts: () => log.filter((e) => e.method === 'POST'),
    close: closerOf(server, sockets, timers),
  };
}
