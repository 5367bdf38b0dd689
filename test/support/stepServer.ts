/**
 * A step server: an OpenAI-chat streaming server that emits tokens the way a continuous-batching
 * engine does (vLLM, SGLang, TGI, llama.cpp's server with several slots). One engine loop runs with a
 * fixed step period; at every step it writes one token chunk to every stream in the batch, back to
 * back, so a client with N streams receives a burst of N chunks every step, not N streams each on its
 * own timer (scriptedServer.ts). Every write is logged with the time it returned, in the same
 * ScriptedRequestLog shape as the scripted server, so `bench/engine.ts` compares against either.
 *
 * Scheduling (stepMs, ttftMs):
 *   - a request arrives, its headers and the role-only chunk are written at once (as vLLM does);
 *   - it waits `ttftMs` (queue + prefill), then joins the batch at the next step: its first token is
 *     written in that step, with the others';
 *   - each step writes one token to every stream in the batch, in the order they joined, then the
 *     finish-reason chunk, the usage chunk (when asked) and [DONE] right after a stream's last token;
 *   - a step begins stepMs after the one before began (or later, when the timer is late: a late step
 *     delays the next, as a long engine step does; never two steps to catch up).
 *
 * Routes: POST /v1/chat/completions (SSE), GET /v1/models, GET/DELETE /__log.
 * Options (StepServerOptions): stepMs (default 10), ttftMs (default 20), tokens (default: the
 * request's max_tokens, else 16), model, roleChunk (default true), port.
 *
 * In its own process (what a benchmark wants: the client measured in a different process):
 *   startStepServerProcess(options) → { url, port, pid, fetchLog(), clearLog(), close() }
 * which runs `node --import tsx test/support/stepServerMain.ts '<options JSON>'`.
 */
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { join } from 'node:path';
import { isObject } from '../../src/engine/core/json';
import { readJsonBody } from './requestBody';
import { startServerProcess } from './scriptedServer';
import type { ScriptedRequestLog, ScriptedServerProcess, ScriptedWriteKind } from './scriptedServer';

export interface StepServerOptions {
  /** The engine step: one token per stream per step, ms (default 10). */
  readonly stepMs?: number;
  /** Queue + prefill: from a request's arrival until it joins the batch, ms (default 20). */
  readonly ttftMs?: number;
  /** Tokens per response (default: the request's max_tokens, else 16). */
  readonly tokens?: number;
  readonly model?: string;
  /** The models GET /v1/models lists (default: `model` alone), for a client that names one per request. */
  readonly models?: readonly string[];
  readonly roleChunk?: boolean;
  readonly port?: number;
}

export interface StepServer {
  readonly url: string;
  readonly port: number;
  readonly log: readonly ScriptedRequestLog[];
  /** Steps run so far, and the largest number of streams written in one step. */
  readonly steps: number;
  readonly maxBatch: number;
  clearLog(): void;
  close(): Promise<void>;
}

const now = (): number => performance.timeOrigin + performance.now();

interface Stream {
  readonly res: ServerResponse;
  readonly entry: ScriptedRequestLog;
  readonly id: string;
  readonly created: number;
  readonly total: number;
  readonly wantsUsage: boolean;
  readonly readyAt: number;
  sent: number;
  done: boolean;
}

export async function startStepServer(options: StepServerOptions = {}): Promise<StepServer> {
  const stepMs = options.stepMs ?? 10;
  const ttftMs = options.ttftMs ?? 20;
  const model = options.model ?? 'scripted-model';
  if (!(stepMs > 0)) throw new Error(`stepMs must be > 0 (got ${stepMs})`);
  const log: ScriptedRequestLog[] = [];
  const sockets = new Set<Socket>();
  const waiting: Stream[] = []; // in arrival order, so in readyAt order (ttft is the same for all)
  let batch: Stream[] = [];
  let seq = 0;
  let steps = 0;
  let maxBatch = 0;
  let timer: NodeJS.Timeout | NodeJS.Immediate | undefined;
  let stepStart = 0;
  let due = 0;

  const frame = (obj: unknown): string => `data: ${JSON.stringify(obj)}\n\n`;
  const chunk = (s: Stream, delta: Record<string, unknown>, finish: string | null): string =>
    frame({ id: s.id, object: 'chat.completion.chunk', created: s.created, model, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] });
  const write = (s: Stream, payload: string, kind: ScriptedWriteKind, tokens = 0): void => {
    s.res.write(payload);
    s.entry.writes.push(tokens > 0 ? { at: now(), kind, tokens, step: steps } : { at: now(), kind, tokens });
  };

  // Node's timers run on the loop's cached millisecond clock and may fire up to a millisecond early:
  // the rest is waited out in event-loop turns, so a step never begins before it is due.
  const wake = (): void => {
    const left = due - now();
    if (left > 1.5) timer = setTimeout(wake, left - 1);
    else if (left > 0) timer = setImmediate(wake);
    else step();
  };

  const step = (): void => {
    timer = undefined;
    const t = now();
    stepStart = t;
    while (waiting.length > 0 && waiting[0]!.readyAt <= t) {
      const s = waiting.shift()!;
      if (!s.done) batch.push(s);
    }
    steps++;
    if (batch.length > maxBatch) maxBatch = batch.length;
    // The step's output: one token for every stream, back to back.
    for (const s of batch) {
      if (s.done) continue;
      write(s, chunk(s, { content: `tok${s.sent} ` }, null), 'content', 1);
      s.sent++;
      if (s.sent >= s.total) {
        write(s, chunk(s, {}, 'length'), 'final');
        if (s.wantsUsage) write(s, frame({ id: s.id, object: 'chat.completion.chunk', created: s.created, model, choices: [], usage: { prompt_tokens: 8, completion_tokens: s.sent, total_tokens: 8 + s.sent } }), 'usage');
        write(s, 'data: [DONE]\n\n', 'done');
        s.done = true;
        s.res.end();
        s.entry.endedAt = now();
      }
    }
    batch = batch.filter((s) => !s.done);
    schedule();
  };

  // The next step stepMs after this one began (a late step delays the next: no catching up);
  // idle (no timer) while nothing is waiting or running.
  const schedule = (): void => {
    if (timer !== undefined) return;
    if (batch.length === 0 && waiting.length === 0) return;
    const t = now();
    // An idle engine starts its next step when the first waiting request is ready.
    due = batch.length > 0 ? stepStart + stepMs : Math.max(waiting[0]!.readyAt, stepStart + stepMs);
    timer = setTimeout(wake, Math.max(0, due - t - 1));
  };

  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    const path = (req.url ?? '/').split('?')[0]!;
    if (path === '/__log') {
      if (req.method === 'DELETE') {
        log.length = 0;
        res.writeHead(204).end();
      } else sendJson(res, 200, log);
      req.resume();
      return;
    }
    if (req.method === 'GET' && path === '/v1/models') {
      sendJson(res, 200, { object: 'list', data: (options.models ?? [model]).map((id) => ({ id, object: 'model', created: 0, owned_by: 'step-server' })) });
      req.resume();
      return;
    }
    if (req.method !== 'POST' || path !== '/v1/chat/completions') {
      sendJson(res, 404, { error: `no route ${req.method} ${path}` });
      req.resume();
      return;
    }
    const receivedAt = now();
    void readJsonBody(req).then((body) => {
      if (!body) {
        sendJson(res, 400, { error: 'request body is not JSON' });
        return;
      }
      const n = ++seq;
      const id = `chatcmpl-${n}`;
      const seed = typeof body.seed === 'number' ? body.seed : undefined;
      const entry: ScriptedRequestLog = { seq: n, api: 'openai-chat', path, ...(seed !== undefined ? { seed } : {}), streamId: id, requestId: `req-${n}`, body, receivedAt, writes: [] };
      log.push(entry);
      const maxTokens = typeof body.max_tokens === 'number' ? body.max_tokens : undefined;
      const s: Stream = {
        res,
        entry,
        id,
        created: Math.floor(Date.now() / 1000),
        total: Math.max(1, options.tokens ?? maxTokens ?? 16),
        wantsUsage: isObject(body.stream_options) && body.stream_options.include_usage === true,
        readyAt: receivedAt + ttftMs,
        sent: 0,
        done: false,
      };
      res.on('close', () => {
        if (!s.done) {
          s.done = true;
          entry.clientClosed = true;
        }
      });
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'x-request-id': `req-${n}` });
      res.flushHeaders();
      entry.headersAt = now();
      if (options.roleChunk !== false) write(s, chunk(s, { role: 'assistant', content: '' }, null), 'role');
      waiting.push(s);
      schedule();
    });
  };

  const server = createServer({ keepAliveTimeout: 120_000 }, handle);
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.setNoDelay(true);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    log,
    get steps() {
      return steps;
    },
    get maxBatch() {
      return maxBatch;
    },
    clearLog() {
      log.length = 0;
    },
    close() {
      if (timer !== undefined) {
        clearTimeout(timer as NodeJS.Timeout);
        clearImmediate(timer as NodeJS.Immediate);
      }
      timer = undefined;
      return new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const s of sockets) s.destroy();
      });
    },
  };
}

function sendJson(res: ServerResponse, status: number, value: unknown): void {
  const text = JSON.stringify(value);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/** The step server in a child process (stepServerMain.ts); the same handle as startScriptedServerProcess's. */
export function startStepServerProcess(options: StepServerOptions = {}): Promise<ScriptedServerProcess> {
  return startServerProcess(join(__dirname, 'stepServerMain.ts'), 'step server', options);
}
