/**
 * A scripted streaming LLM server for tests and benchmarks: a real node:http server on 127.0.0.1
 * (port 0 unless given) that speaks all four APIs the engine measures, emits tokens on a known
 * schedule, and records the time at which it wrote each chunk, so a client's measurements can be
 * checked against the server's own record.
 *
 * Routes (each API's routes only when that API is in `options.apis`, default all four):
 *   POST /v1/chat/completions  openai-chat (SSE, role-only first chunk, usage chunk, [DONE])
 *   POST /v1/completions       openai-completions (SSE)
 *   GET  /v1/models            OpenAI model list (openai-chat or openai-completions)
 *   POST /api/chat             ollama (NDJSON, final object with *_count and *_duration in ns)
 *   GET  /api/tags, /api/version
 *   POST /completion           llamacpp (SSE, `tokens` arrays, final event with `timings`, no [DONE])
 *   GET  /props, /health
 *   GET  /__log                the write log as JSON (ScriptedRequestLog[]); DELETE /__log clears it
 *
 * Options (ScriptedServerOptions), all optional:
 *   tokens            tokens per response. Default: the request's own max tokens
 *                     (max_tokens / n_predict / options.num_predict), else 16.
 *   ttftMs            delay from the request's arrival to the first token chunk (default 20).
 *   itlMs             delay between token chunks (default 5).
 *   tokensPerChunk    tokens per chunk (default 1): llamacpp gets a `tokens` array of that length;
 *                     the others get the texts joined in one delta, as speculative decoding does.
 *   roleChunk         openai-chat: send a role-only chunk (`delta: {role, content: ""}`) with the
 *                     headers, before the first token, as vLLM does (default true).
 *   reasoningTokens   the first K tokens are reasoning: chat `delta.<reasoningField>`, ollama
 *                     `message.thinking` (default 0).
 *   reasoningField    'reasoning_content' (default) or 'reasoning'.
 *   streamId          put an `id` in OpenAI chunks (default true). Ids are `chatcmpl-<seq>` / `cmpl-<seq>`.
 *   requestIdHeader   send `x-request-id: req-<seq>` (default true).
 *   usage             OpenAI: send the usage chunk when the request asks (`stream_options.include_usage`),
 *                     true (default) | false (never, as some servers do).
 *   tailDelayMs       a pause between the last token chunk and what follows it (the finish-reason chunk,
 *                     the usage chunk and [DONE]; Ollama's and llama.cpp's final object), default 0:
 *                     a late tail must not count in E2E.
 *   tokenText         (i) => text of token i (default `tok<i> `). Not available in the separate process.
 *   model             model name reported (default 'scripted-model').
 *   apis              which APIs to serve (default all four): for detection tests.
 *   apiKey            when set, every route but /__log answers 401 unless `Authorization: Bearer <apiKey>`.
 *   fault             a ScriptedFault for every request, or (info) => fault | undefined per request.
 *   faultsBySeed      { [seed]: ScriptedFault }: the serializable way to pick faults (separate process).
 *   keepAliveTimeoutMs  server keep-alive (default 120000, so warmed connections stay open).
 *   port              port to listen on (default 0: any free port).
 *
 * Faults (ScriptedFault):
 *   { kind: 'http', status, body?, headers? }       answer with that status and body (e.g. 500, 429)
 *   { kind: 'reset', afterTokens }                  destroy the socket (RST) after K token chunks
 *   { kind: 'malformed-json', atToken }              a `data: {"choices": [` event (NDJSON: a broken line) before token K
 *   { kind: 'malformed-sse', atToken }               a line that is no SSE field before token K
 *   { kind: 'stall', afterTokens, ms }               an extra gap of `ms` after K tokens (0: before the first)
 *   { kind: 'stream-error', afterTokens, message? }  an error object in the stream after K tokens, then the end
 *
 * Times are epoch ms with µs resolution (`performance.timeOrigin + performance.now()`), read right
 * after `res.write` returns. Find a request's log by its response id (stream id or x-request-id),
 * its seed, or its order (`seq`).
 *
 * As its own process (so a benchmark measures a client in a different process):
 *   node --import tsx test/support/scriptedServerMain.ts '<options as JSON>'
 * prints one line `{"port":N}` and serves until stdin closes or SIGTERM; or use
 * startScriptedServerProcess(options) below, which does that and fetches /__log for you.
 */
import { createServer } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import type { ApiKind } from '../../src/engine/core/apis';
import { isObject } from '../../src/engine/core/json';
import { readJsonBody } from './requestBody';

export type ScriptedFault =
  | { readonly kind: 'http'; readonly status: number; readonly body?: string; readonly headers?: Readonly<Record<string, string>> }
  | { readonly kind: 'reset'; readonly afterTokens: number }
  | { readonly kind: 'malformed-json'; readonly atToken: number }
  | { readonly kind: 'malformed-sse'; readonly atToken: number }
  | { readonly kind: 'stall'; readonly afterTokens: number; readonly ms: number }
  | { readonly kind: 'stream-error'; readonly afterTokens: number; readonly message?: string };

export interface ScriptedRequestInfo {
  readonly seq: number;
  readonly api: ApiKind;
  readonly seed?: number;
  readonly body: Record<string, unknown>;
}

export interface ScriptedServerOptions {
  readonly tokens?: number;
  readonly ttftMs?: number;
  readonly itlMs?: number;
  readonly tokensPerChunk?: number;
  readonly roleChunk?: boolean;
  readonly reasoningTokens?: number;
  readonly reasoningField?: 'reasoning_content' | 'reasoning';
  readonly streamId?: boolean;
  readonly requestIdHeader?: boolean;
  readonly usage?: boolean;
  readonly tailDelayMs?: number;
  readonly tokenText?: (i: number) => string;
  readonly model?: string;
  readonly apis?: readonly ApiKind[];
  readonly apiKey?: string;
  /** The header the key must come in (e.g. 'api-key'); default Authorization: Bearer. */
  readonly apiKeyHeader?: string;
  readonly fault?: ScriptedFault | ((info: ScriptedRequestInfo) => ScriptedFault | undefined);
  readonly faultsBySeed?: Readonly<Record<string, ScriptedFault>>;
  readonly keepAliveTimeoutMs?: number;
  readonly port?: number;
  /** Serve https:// with this certificate and key (PEM) instead of http://. */
  readonly tls?: { readonly cert: string; readonly key: string };
}

export type ScriptedWriteKind = 'role' | 'content' | 'reasoning' | 'usage' | 'final' | 'done' | 'error' | 'malformed';

export interface ScriptedWrite {
  /** Epoch ms, read right after res.write. */
  readonly at: number;
  readonly kind: ScriptedWriteKind;
  /** Tokens in this chunk (content and reasoning chunks). */
  readonly tokens: number;
  /** The engine step that wrote it (stepServer.ts only): chunks of one step went out back to back. */
  readonly step?: number;
}

export interface ScriptedRequestLog {
  readonly seq: number;
  readonly api: ApiKind;
  readonly path: string;
  readonly seed?: number;
  /** The stream's `id` (OpenAI APIs), when sent. */
  readonly streamId?: string;
  /** The x-request-id header, when sent. */
  readonly requestId?: string;
  readonly authorization?: string;
  readonly body: Record<string, unknown>;
  readonly receivedAt: number;
  headersAt?: number;
  readonly writes: ScriptedWrite[];
  endedAt?: number;
  /** True when the client went away before the end. */
  clientClosed?: boolean;
  readonly fault?: ScriptedFault['kind'];
}

export interface ScriptedServer {
  readonly url: string;
  readonly port: number;
  /** Every request so far, in arrival order. */
  readonly log: readonly ScriptedRequestLog[];
  /** By response id (stream id or x-request-id) or by seed. */
  find(idOrSeed: string | number): ScriptedRequestLog | undefined;
  /** Requests received per route, GETs included. */
  readonly hits: Readonly<Record<string, number>>;
  /** Sockets opened so far (to check keep-alive and warming). */
  readonly connections: number;
  clearLog(): void;
  close(): Promise<void>;
}

const now = (): number => performance.timeOrigin + performance.now();

const ALL_APIS: readonly ApiKind[] = ['openai-chat', 'openai-completions', 'ollama', 'llamacpp'];

const POST_ROUTES: Readonly<Record<string, ApiKind>> = {
  '/v1/chat/completions': 'openai-chat',
  '/v1/completions': 'openai-completions',
  '/api/chat': 'ollama',
  '/completion': 'llamacpp',
};

export async function startScriptedServer(options: ScriptedServerOptions = {}): Promise<ScriptedServer> {
  const apis = new Set(options.apis ?? ALL_APIS);
  const model = options.model ?? 'scripted-model';
  const log: ScriptedRequestLog[] = [];
  const hits: Record<string, number> = {};
  const sockets = new Set<Socket>();
  let connections = 0;
  let seq = 0;

  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    const path = (req.url ?? '/').split('?')[0]!;
    hits[`${req.method} ${path}`] = (hits[`${req.method} ${path}`] ?? 0) + 1;
    if (path === '/__log') {
      if (req.method === 'DELETE') {
        log.length = 0;
        res.writeHead(204).end();
      } else {
        sendJson(res, 200, log);
      }
      return;
    }
    const presented = options.apiKeyHeader ? req.headers[options.apiKeyHeader.toLowerCase()] : req.headers.authorization;
    if (options.apiKey !== undefined && presented !== (options.apiKeyHeader ? options.apiKey : `Bearer ${options.apiKey}`)) {
      sendJson(res, 401, { error: { message: 'Invalid API key', type: 'invalid_request_error', code: 'invalid_api_key' } });
      req.resume();
      return;
    }
    if (req.method === 'GET') {
      serveGet(path, res);
      req.resume();
      return;
    }
    const api = POST_ROUTES[path];
    if (req.method !== 'POST' || api === undefined || !apis.has(api)) {
      sendJson(res, 404, { error: `no route ${req.method} ${path}` });
      req.resume();
      return;
    }
    const receivedAt = now();
    void readJsonBody(req).then((body) => {
      if (!body) sendJson(res, 400, { error: 'request body is not JSON' });
      else stream(api, path, body, req, res, receivedAt);
    });
  };
  const serverOptions = { keepAliveTimeout: options.keepAliveTimeoutMs ?? 120_000 };
  const server: Server = options.tls ? createTlsServer({ ...serverOptions, cert: options.tls.cert, key: options.tls.key }, handle) : createServer(serverOptions, handle);

  server.on('connection', (socket: Socket) => {
    connections++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });

  function serveGet(path: string, res: ServerResponse): void {
    if (path === '/v1/models' && (apis.has('openai-chat') || apis.has('openai-completions'))) {
      sendJson(res, 200, { object: 'list', data: [{ id: model, object: 'model', created: 0, owned_by: 'scripted' }] });
    } else if (path === '/api/tags' && apis.has('ollama')) {
      sendJson(res, 200, { models: [{ name: model, model, size: 1 }] });
    } else if (path === '/api/version' && apis.has('ollama')) {
      sendJson(res, 200, { version: '0.0.0-scripted' });
    } else if (path === '/props' && apis.has('llamacpp')) {
      sendJson(res, 200, { default_generation_settings: { n_ctx: 4096 }, total_slots: 4, model_path: `/models/${model}.gguf` });
    } else if (path === '/health' && apis.has('llamacpp')) {
      sendJson(res, 200, { status: 'ok' });
    } else {
      sendJson(res, 404, { error: `no route GET ${path}` });
    }
  }

  function pickFault(info: ScriptedRequestInfo): ScriptedFault | undefined {
    if (info.seed !== undefined && options.faultsBySeed?.[String(info.seed)]) return options.faultsBySeed[String(info.seed)];
    const f = options.fault;
    return typeof f === 'function' ? f(info) : f;
  }

  function stream(api: ApiKind, path: string, body: Record<string, unknown>, req: IncomingMessage, res: ServerResponse, receivedAt: number): void {
    const n = ++seq;
    const seed = seedOf(api, body);
    const info: ScriptedRequestInfo = seed === undefined ? { seq: n, api, body } : { seq: n, api, seed, body };
    const fault = pickFault(info);
    const isOpenAi = api === 'openai-chat' || api === 'openai-completions';
    const streamId = isOpenAi && options.streamId !== false ? `${api === 'openai-chat' ? 'chatcmpl' : 'cmpl'}-${n}` : undefined;
    const requestId = options.requestIdHeader !== false ? `req-${n}` : undefined;
    const entry: ScriptedRequestLog = {
      seq: n,
      api,
      path,
      ...(seed !== undefined ? { seed } : {}),
      ...(streamId !== undefined ? { streamId } : {}),
      ...(requestId !== undefined ? { requestId } : {}),
      ...(req.headers.authorization !== undefined ? { authorization: req.headers.authorization } : {}),
      body,
      receivedAt,
      writes: [],
      ...(fault ? { fault: fault.kind } : {}),
    };
    log.push(entry);

    if (fault?.kind === 'http') {
      res.writeHead(fault.status, { 'content-type': 'application/json', ...(requestId ? { 'x-request-id': requestId } : {}), ...fault.headers });
      res.end(fault.body ?? JSON.stringify({ error: { message: `scripted ${fault.status}`, code: fault.status } }));
      entry.endedAt = now();
      return;
    }

    const total = Math.max(0, options.tokens ?? maxTokensOf(api, body) ?? 16);
    const perChunk = Math.max(1, options.tokensPerChunk ?? 1);
    const reasoningTokens = options.reasoningTokens ?? 0;
    const reasoningField = options.reasoningField ?? 'reasoning_content';
    const itl = options.itlMs ?? 5;
    const ttft = options.ttftMs ?? 20;
    const text = options.tokenText ?? ((i: number) => `tok${i} `);
    const wantsUsage = options.usage !== false && isObject(body.stream_options) && body.stream_options.include_usage === true;
    const created = Math.floor(Date.now() / 1000);
    const sse = api !== 'ollama';
    let sent = 0; // tokens written
    let chunks = 0; // token chunks written
    let timer: NodeJS.Timeout | undefined;
    let finished = false;

    res.on('close', () => {
      if (timer) clearTimeout(timer);
      if (!finished) {
        finished = true;
        entry.clientClosed = true;
      }
    });

    const write = (payload: string, kind: ScriptedWriteKind, tokens = 0): void => {
      res.write(payload);
      entry.writes.push({ at: now(), kind, tokens });
    };
    const frame = (obj: unknown): string => (sse ? `data: ${JSON.stringify(obj)}\n\n` : `${JSON.stringify(obj)}\n`);
    const end = (): void => {
      finished = true;
      res.end();
      entry.endedAt = now();
    };

    res.writeHead(200, {
      'content-type': sse ? 'text/event-stream' : 'application/x-ndjson',
      'cache-control': 'no-cache',
      ...(requestId ? { 'x-request-id': requestId } : {}),
    });
    res.flushHeaders();
    entry.headersAt = now();
    if (api === 'openai-chat' && options.roleChunk !== false) {
      write(frame(chatChunk(streamId, created, model, { role: 'assistant', content: '' }, null)), 'role');
    }

    const tokenChunk = (first: number, count: number): { payload: string; kind: ScriptedWriteKind } => {
      let t = '';
      for (let i = first; i < first + count; i++) t += text(i);
      const reasoning = first < reasoningTokens;
      switch (api) {
        case 'openai-chat':
          return { payload: frame(chatChunk(streamId, created, model, reasoning ? { [reasoningField]: t } : { content: t }, null)), kind: reasoning ? 'reasoning' : 'content' };
        case 'openai-completions':
          return { payload: frame({ ...(streamId ? { id: streamId } : {}), object: 'text_completion', created, model, choices: [{ index: 0, text: t, logprobs: null, finish_reason: null }], usage: null }), kind: 'content' };
        case 'ollama':
          return {
            payload: frame({ model, created_at: new Date().toISOString(), message: reasoning ? { role: 'assistant', content: '', thinking: t } : { role: 'assistant', content: t }, done: false }),
            kind: reasoning ? 'reasoning' : 'content',
          };
        case 'llamacpp': {
          const ids: number[] = [];
          for (let i = first; i < first + count; i++) ids.push(1000 + i);
          return { payload: frame({ index: 0, content: t, tokens: ids, stop: false, id_slot: 0, tokens_predicted: first + count, tokens_evaluated: 8 }), kind: 'content' };
        }
        default:
          // The hosted providers' APIs have fakes of their own (providerFakes.ts); no route here leads to them.
          throw new Error(`the scripted server does not speak ${api}`);
      }
    };

    let tailWaited = false;
    const finish = (): void => {
      const tail = options.tailDelayMs ?? 0;
      if (tail > 0 && !tailWaited) {
        tailWaited = true;
        timer = setTimeout(finish, tail);
        return;
      }
      timer = undefined;
      if (finished) return;
      const endAt = now();
      switch (api) {
        case 'openai-chat':
          write(frame(chatChunk(streamId, created, model, {}, 'length')), 'final');
          if (wantsUsage) write(frame({ ...(streamId ? { id: streamId } : {}), object: 'chat.completion.chunk', created, model, choices: [], usage: { prompt_tokens: 8, completion_tokens: sent, total_tokens: 8 + sent } }), 'usage');
          write('data: [DONE]\n\n', 'done');
          break;
        case 'openai-completions':
          write(frame({ ...(streamId ? { id: streamId } : {}), object: 'text_completion', created, model, choices: [{ index: 0, text: '', logprobs: null, finish_reason: 'length' }], usage: null }), 'final');
          if (wantsUsage) write(frame({ ...(streamId ? { id: streamId } : {}), object: 'text_completion', created, model, choices: [], usage: { prompt_tokens: 8, completion_tokens: sent, total_tokens: 8 + sent } }), 'usage');
          write('data: [DONE]\n\n', 'done');
          break;
        case 'ollama': {
          const ns = (ms: number) => Math.round(ms * 1e6);
          const firstAt = entry.writes.find((w) => w.tokens > 0)?.at ?? endAt;
          write(frame({
            model, created_at: new Date().toISOString(), message: { role: 'assistant', content: '' }, done_reason: 'length', done: true,
            total_duration: ns(endAt - receivedAt), load_duration: ns(0.5), prompt_eval_count: 8, prompt_eval_duration: ns(firstAt - receivedAt),
            eval_count: sent, eval_duration: ns(endAt - firstAt),
          }), 'final');
          break;
        }
        case 'llamacpp': {
          const firstAt = entry.writes.find((w) => w.tokens > 0)?.at ?? endAt;
          write(frame({
            index: 0, content: '', tokens: [], id_slot: 0, stop: true, model, tokens_predicted: sent, tokens_evaluated: 8, stop_type: 'limit',
            timings: { prompt_n: 8, prompt_ms: firstAt - receivedAt, prompt_per_token_ms: 1, prompt_per_second: 1000, predicted_n: sent, predicted_ms: endAt - firstAt, predicted_per_token_ms: 1, predicted_per_second: 1000 },
          }), 'final');
          break;
        }
      }
      end();
    };

    const step = (): void => {
      timer = undefined;
      if (finished) return;
      if (fault?.kind === 'reset' && chunks >= fault.afterTokens) {
        finished = true;
        entry.endedAt = now();
        const socket = res.socket as (Socket & { resetAndDestroy?: () => void }) | null;
        if (socket?.resetAndDestroy) socket.resetAndDestroy();
        else socket?.destroy();
        return;
      }
      if (fault?.kind === 'stream-error' && chunks >= fault.afterTokens) {
        const message = fault.message ?? 'scripted failure in the stream';
        if (api === 'ollama') write(frame({ error: message }), 'error');
        else write(frame({ error: { message, type: 'InternalServerError', code: 500 } }), 'error');
        if (isOpenAi) write('data: [DONE]\n\n', 'done');
        end();
        return;
      }
      if (sent >= total) {
        finish();
        return;
      }
      if (fault?.kind === 'malformed-json' && fault.atToken === chunks) {
        write(sse ? 'data: {"choices": [\n\n' : '{"message": {"content": \n', 'malformed');
      }
      if (fault?.kind === 'malformed-sse' && fault.atToken === chunks && sse) {
        write('this line is not server-sent events\n\n', 'malformed');
      }
      const count = Math.min(perChunk, total - sent);
      const { payload, kind } = tokenChunk(sent, count);
      write(payload, kind, count);
      sent += count;
      chunks++;
      // The end follows the last token at once (vLLM sends finish_reason and usage right after it), so
      // e2e − TTFT spans exactly the token gaps.
      if (sent >= total && !(fault && 'afterTokens' in fault && fault.afterTokens >= chunks && fault.kind !== 'stall')) finish();
      else schedule(itl);
    };
    const schedule = (delay: number): void => {
      if (fault?.kind === 'stall' && fault.afterTokens === chunks) delay += fault.ms;
      timer = setTimeout(step, delay);
    };
    // The first token is `ttft` after the request arrived, whatever the headers cost.
    schedule(Math.max(0, ttft - (now() - receivedAt)));
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;

  return {
    url: `${options.tls ? 'https' : 'http'}://127.0.0.1:${port}`,
    port,
    log,
    hits,
    get connections() {
      return connections;
    },
    find(idOrSeed) {
      if (typeof idOrSeed === 'number') return log.find((e) => e.seed === idOrSeed);
      return log.find((e) => e.streamId === idOrSeed || e.requestId === idOrSeed);
    },
    clearLog() {
      log.length = 0;
    },
    close() {
      return new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const s of sockets) s.destroy();
      });
    },
  };
}

function chatChunk(id: string | undefined, created: number, model: string, delta: Record<string, unknown>, finishReason: string | null): unknown {
  return { ...(id ? { id } : {}), object: 'chat.completion.chunk', created, model, choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }] };
}

function sendJson(res: ServerResponse, status: number, value: unknown): void {
  const text = JSON.stringify(value);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function seedOf(api: ApiKind, body: Record<string, unknown>): number | undefined {
  const s = api === 'ollama' && isObject(body.options) ? body.options.seed : body.seed;
  return typeof s === 'number' ? s : undefined;
}

function maxTokensOf(api: ApiKind, body: Record<string, unknown>): number | undefined {
  const v = api === 'ollama' ? (isObject(body.options) ? body.options.num_predict : undefined) : api === 'llamacpp' ? body.n_predict : body.max_tokens;
  return typeof v === 'number' ? v : undefined;
}

// ---- The same server in its own process ----

export interface ScriptedServerProcess {
  readonly url: string;
  readonly port: number;
  readonly pid: number;
  fetchLog(): Promise<ScriptedRequestLog[]>;
  clearLog(): Promise<void>;
  close(): Promise<void>;
}

/** Starts scriptedServerMain.ts in a child process (options must be JSON: no functions). */
export function startScriptedServerProcess(options: Omit<ScriptedServerOptions, 'tokenText' | 'fault'> & { fault?: ScriptedFault } = {}): Promise<ScriptedServerProcess> {
  return startServerProcess(join(__dirname, 'scriptedServerMain.ts'), 'scripted server', options);
}

/**
 * The child's side of startServerProcess, for a main file: starts the server with the options JSON in
 * argv[2], prints `{"port":N}` once listening, and exits when stdin closes (so it never outlives its
 * parent) or on SIGTERM/SIGINT.
 */
export function serveAsProcess<O>(name: string, start: (options: O) => Promise<{ readonly port: number; close(): Promise<void> }>): void {
  const main = async () => {
    const server = await start(JSON.parse(process.argv[2] ?? '{}') as O);
    process.stdout.write(`${JSON.stringify({ port: server.port })}\n`);
    let closing = false;
    const stop = () => {
      if (closing) return;
      closing = true;
      void server.close().then(() => process.exit(0));
    };
    process.stdin.on('end', stop);
    process.stdin.on('close', stop);
    process.stdin.resume();
    process.on('SIGTERM', stop);
    process.on('SIGINT', stop);
  };
  main().catch((err: unknown) => {
    process.stderr.write(`${name}: ${(err as Error).message}\n`);
    process.exit(1);
  });
}

/**
 * Starts a test server's main file (scriptedServerMain.ts, stepServerMain.ts) in a child process:
 * it prints `{"port"}` once listening, serves its write log at /__log, and exits when its stdin closes.
 */
export async function startServerProcess(entry: string, name: string, options: unknown): Promise<ScriptedServerProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', entry, JSON.stringify(options)], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    const onData = (b: Buffer) => {
      out += b.toString('utf8');
      const nl = out.indexOf('\n');
      if (nl === -1) return;
      child.stdout!.off('data', onData);
      try {
        resolve((JSON.parse(out.slice(0, nl)) as { port: number }).port);
      } catch {
        reject(new Error(`${name} printed ${out.slice(0, nl)}`));
      }
    };
    child.stdout!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`${name} exited (${code}) before listening`)));
  });
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    port,
    pid: child.pid!,
    async fetchLog() {
      const r = await fetch(`${url}/__log`);
      return (await r.json()) as ScriptedRequestLog[];
    },
    async clearLog() {
      await fetch(`${url}/__log`, { method: 'DELETE' });
    },
    close() {
      return new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.stdin!.end(); // the child exits when its stdin closes
        setTimeout(() => child.kill('SIGKILL'), 3000).unref();
      });
    },
  };
}
