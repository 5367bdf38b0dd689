/**
 * A hostile streaming server for the security tests: a real node:http server on 127.0.0.1 that
 * speaks the four APIs' framings but behaves as the test script says (redirect elsewhere, hang,
 * stream without end, echo the key, send terminal escapes, answer HTML or gzip), and logs the truth
 * of every request it received (method, URL with its query, all headers), so a test can assert what
 * reached it (a key, a query) against its own record, not against what the client says it sent.
 */
import { listenOnLoopback } from './listen';
import { createServer } from 'node:http';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { ApiKind } from '../../src/engine/core/apis';

export interface Seen {
  readonly method: string;
  /** Path and query, as received. */
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

export interface TruthServer {
  /** http://127.0.0.1:PORT */
  readonly url: string;
  /** Every request received, in arrival order. */
  readonly seen: readonly Seen[];
  /** Whether any request (its URL, headers or body) carried `text`. */
  carried(text: string): boolean;
  close(): Promise<void>;
}

/** The handler answers; the request's body has been read (capped at 1 MB) and logged before it runs. */
export type Handler = (req: IncomingMessage, res: ServerResponse, seen: Seen) => void;

export async function startTruthServer(handler: Handler): Promise<TruthServer> {
  const seen: Seen[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (b: Buffer) => {
      size += b.length;
      if (size <= 1 << 20) chunks.push(b);
    });
    req.on('end', () => {
      const s: Seen = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
      seen.push(s);
      try {
        handler(req, res, s);
      } catch (err) {
        res.destroy(err as Error);
      }
    });
  });
  const { url, sockets } = await listenOnLoopback(server);
  return {
    url,
    seen,
    carried: (text) => seen.some((s) => s.url.includes(text) || s.body.includes(text) || Object.values(s.headers).some((v) => (Array.isArray(v) ? v.join(',') : v ?? '').includes(text))),
    close: () => new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      server.close(() => resolve());
    }),
  };
}

/** Where each API is probed (preflight, warming), lists models, and generates. */
export const ROUTES: Readonly<Record<ApiKind, { readonly probe: string; readonly models: string; readonly generate: string }>> = {
  'openai-chat': { probe: '/v1/models', models: '/v1/models', generate: '/v1/chat/completions' },
  'openai-completions': { probe: '/v1/models', models: '/v1/models', generate: '/v1/completions' },
  ollama: { probe: '/api/tags', models: '/api/tags', generate: '/api/chat' },
  llamacpp: { probe: '/health', models: '/v1/models', generate: '/completion' },
  anthropic: { probe: '/v1/models', models: '/v1/models', generate: '/v1/messages' },
  gemini: { probe: '/v1beta/models', models: '/v1beta/models', generate: '/v1beta/models/m:streamGenerateContent' },
  // A root URL is Azure's ".../openai/v1" form: OpenAI's paths; the probe is the resource's model list.
  'azure-openai': { probe: '/models', models: '/models', generate: '/v1/chat/completions' },
};

export const ALL_APIS: readonly ApiKind[] = ['openai-chat', 'openai-completions', 'ollama', 'llamacpp'];

/** The body of a model list (or the health answer) that the API's client reads. */
export function modelsBody(api: ApiKind, model: string): unknown {
  if (api === 'gemini') return { models: [{ name: `models/${model}`, supportedGenerationMethods: ['generateContent'] }] };
  return api === 'ollama' ? { models: [{ name: model }] } : { object: 'list', data: [{ id: model, object: 'model' }] };
}

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

/** Answers a GET the way the API's preflight and model listing expect. */
export function answerGet(api: ApiKind, path: string, res: ServerResponse, model = 'm'): void {
  if (api === 'llamacpp' && path === '/health') return sendJson(res, 200, { status: 'ok' });
  sendJson(res, 200, modelsBody(api, model));
}

const isSse = (api: ApiKind) => api !== 'ollama';

/** Starts a streamed answer with the API's content type. */
export function startStream(api: ApiKind, res: ServerResponse, headers: Record<string, string> = {}): void {
  res.writeHead(200, { 'content-type': isSse(api) ? 'text/event-stream' : 'application/x-ndjson', 'cache-control': 'no-cache', ...headers });
}

function frame(api: ApiKind, event: unknown): string {
  // Anthropic names each event after its type.
  const type = typeof event === 'object' && event !== null ? (event as { type?: unknown }).type : undefined;
  if (api === 'anthropic' && typeof type === 'string') return `event: ${type}\ndata: ${JSON.stringify(event)}\n\n`;
  return isSse(api) ? `data: ${JSON.stringify(event)}\n\n` : `${JSON.stringify(event)}\n`;
}

/** One token event in the API's shape; `id` goes where the API carries a response id. */
export function tokenEvent(api: ApiKind, text: string, id?: string): string {
  switch (api) {
    case 'openai-chat':
    case 'azure-openai': return frame(api, { id, object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content: text }, finish_reason: null }] });
    case 'openai-completions': return frame(api, { id, object: 'text_completion', choices: [{ index: 0, text, finish_reason: null }] });
    case 'ollama': return frame(api, { model: 'm', message: { role: 'assistant', content: text }, done: false });
    case 'llamacpp': return frame(api, { content: text, tokens: [1], stop: false });
    case 'anthropic': return (id !== undefined ? frame(api, { type: 'message_start', message: { id, type: 'message', role: 'assistant', content: [] } }) : '') + frame(api, { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } });
    case 'gemini': return frame(api, { candidates: [{ content: { parts: [{ text }], role: 'model' }, index: 0 }], ...(id !== undefined ? { responseId: id } : {}) });
  }
}

/** The events that end a stream normally. */
export function endEvents(api: ApiKind, id?: string): string {
  switch (api) {
    case 'openai-chat':
    case 'azure-openai': return frame(api, { id, object: 'chat.completion.chunk', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }) + 'data: [DONE]\n\n';
    case 'openai-completions': return frame(api, { id, object: 'text_completion', choices: [{ index: 0, text: '', finish_reason: 'stop' }] }) + 'data: [DONE]\n\n';
    case 'ollama': return frame(api, { model: 'm', message: { role: 'assistant', content: '' }, done: true, eval_count: 1, prompt_eval_count: 1 });
    case 'llamacpp': return frame(api, { content: '', stop: true, tokens_predicted: 1, tokens_evaluated: 1 });
    case 'anthropic': return frame(api, { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null } }) + frame(api, { type: 'message_stop' });
    case 'gemini': return frame(api, { candidates: [{ content: { parts: [{ text: '' }], role: 'model' }, finishReason: 'STOP', index: 0 }], usageMetadata: { promptTokenCount: 1 } });
  }
}

/** An error object inside the stream, as servers send one. */
export function errorEvent(api: ApiKind, message: string): string {
  return frame(api, { error: { message, type: 'server_error' } });
}

/** A short, complete, well-formed stream of `n` tokens. */
export function answerStream(api: ApiKind, res: ServerResponse, n = 3, options: { id?: string; headers?: Record<string, string> } = {}): void {
  startStream(api, res, options.headers);
  let text = '';
  for (let i = 0; i < n; i++) text += tokenEvent(api, `t${i} `, options.id);
  res.end(text + endEvents(api, options.id));
}
