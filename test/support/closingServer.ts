/**
 * A streaming server that closes keep-alive connections the way llama.cpp's llama-server does (raw
 * TCP, so every byte and every close is its own): a streamed response is sent chunked with
 * `Keep-Alive: timeout=5, max=100` and no `Connection: close`, then the connection is shut anyway.
 * In llama-server the stream's content provider (tools/server/server-http.cpp) calls sink.done(),
 * which writes the last chunk `0\r\n\r\n`, and then returns false; cpp-httplib's
 * write_content_chunked takes that for a cancelled write, process_request fails, the keep-alive
 * loop ends, and drain_and_close_socket shuts the socket for writing (the FIN), reads and throws away
 * whatever arrives for 100 ms, and closes it. Its HTTP thread gets there 0.2 to 8 ms after the last
 * chunk (measured through a TCP relay); here the gap is `closeAfterMs` (default 20 ms), so that a
 * client that sends its next request at once lands in it every time.
 *
 * Everything received is logged (`log`): each request with its connection, its seed and whether it
 * was answered or thrown away unread, as llama-server throws it away.
 *
 * Routes: POST /v1/chat/completions (openai-chat SSE, usage chunk, [DONE]), POST /completion
 * (llama.cpp's native SSE); GET /v1/models, /health, /props with Content-Length, kept alive; anything
 * else 404 with `Connection: close`, as cpp-httplib closes after any error status.
 */
import { createServer } from 'node:net';
import type { AddressInfo, Socket } from 'node:net';
import { Timers } from './listen';

export interface ClosingServerOptions {
  /** ms from the last chunk of a streamed response to the FIN (default 20). */
  readonly closeAfterMs?: number;
  /** ms the closing connection is drained before it is destroyed (cpp-httplib: 100). */
  readonly drainMs?: number;
  /** Tokens per streamed response (default: the request's max_tokens / n_predict, else 4). */
  readonly tokens?: number;
  /** ms between tokens (default 2). */
  readonly itlMs?: number;
  /** POSTs (by their order of arrival, from 1) read and thrown away at once, the connection closed: a server that closes before answering. */
  readonly discard?: (seq: number) => boolean;
}

export interface ClosingServerEntry {
  /** Order of arrival among all requests, from 1. */
  readonly seq: number;
  /** The connection it came on (from 1), and how many requests that connection carried before it. */
  readonly conn: number;
  readonly onConn: number;
  readonly method: string;
  readonly path: string;
  readonly seed?: number;
  /** Epoch ms it was read. */
  readonly receivedAt: number;
  /** 'answered': a response was written; 'discarded': read and thrown away by a closing connection. */
  readonly outcome: 'answered' | 'discarded';
  /** The id its stream carried (chatcmpl-<seq> / x-request-id req-<seq>), when answered with a stream. */
  readonly responseId?: string;
}

export interface ClosingServer {
  readonly url: string;
  readonly log: readonly ClosingServerEntry[];
  /** Connections accepted so far. */
  readonly connections: number;
  /** Connections this server closed right after a streamed response (llama-server's way). */
  readonly closedAfterStream: number;
  close(): Promise<void>;
}

const now = (): number => performance.timeOrigin + performance.now();

interface Parsed {
  readonly method: string;
  readonly path: string;
  readonly body: Buffer;
  readonly size: number;
}

/** One whole request at the start of `buf` (Content-Length bodies only: what the profiler sends), or undefined. */
function parseRequest(buf: Buffer): Parsed | undefined {
  const end = buf.indexOf('\r\n\r\n');
  if (end < 0) return undefined;
  const head = buf.subarray(0, end).toString('latin1');
  const [line = '', ...fields] = head.split('\r\n');
  const [method = '', path = ''] = line.split(' ');
  let length = 0;
  for (const f of fields) {
    const i = f.indexOf(':');
    if (i > 0 && f.slice(0, i).trim().toLowerCase() === 'content-length') length = Number(f.slice(i + 1).trim());
  }
  if (buf.length < end + 4 + length) return undefined;
  return { method, path, body: buf.subarray(end + 4, end + 4 + length), size: end + 4 + length };
}

function jsonBody(body: Buffer): Record<string, unknown> {
  try {
    const v = JSON.parse(body.toString('utf8')) as unknown;
    return typeof v === 'object' && v !== null ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

function chunk(text: string): string {
  return `${Buffer.byteLength(text).toString(16)}\r\n${text}\r\n`;
}

export async function startClosingServer(options: ClosingServerOptions = {}): Promise<ClosingServer> {
  const log: ClosingServerEntry[] = [];
  const sockets = new Set<Socket>();
  const closeAfterMs = options.closeAfterMs ?? 20;
  const drainMs = options.drainMs ?? 100;
  const itlMs = options.itlMs ?? 2;
  let seq = 0;
  let posts = 0;
  let connections = 0;
  let closedAfterStream = 0;

  const server = createServer((socket) => {
    const conn = ++connections;
    sockets.add(socket);
    socket.setNoDelay(true);
    let buf: Buffer = Buffer.alloc(0);
    let onConn = 0;
    let busy = false; // a response is being written: the next request waits (no pipelining)
    let closing = false; // past the last chunk of a stream: whatever comes is thrown away
    const timers = new Timers();
    const later = (ms: number, fn: () => void): void => timers.later(ms, fn);
    socket.on('close', () => {
      sockets.delete(socket);
      timers.clear();
    });
    socket.on('error', () => undefined);

    const shut = (): void => {
      // drain_and_close_socket: shutdown(SHUT_WR), drain for a while, close
      socket.end();
      later(drainMs, () => socket.destroy());
    };

    const next = (): void => {
      while (!busy) {
        const req = parseRequest(buf);
        if (!req) return;
        buf = buf.subarray(req.size);
        const body = jsonBody(req.body);
        const seed = typeof body.seed === 'number' ? body.seed : undefined;
        const base = { seq: ++seq, conn, onConn: onConn++, method: req.method, path: req.path, ...(seed !== undefined ? { seed } : {}), receivedAt: now() };
        if (closing) {
          log.push({ ...base, outcome: 'discarded' });
          continue;
        }
        if (req.method === 'POST' && options.discard?.(++posts)) {
          log.push({ ...base, outcome: 'discarded' });
          closing = true;
          shut();
          continue;
        }
        if (req.method === 'GET') {
          log.push({ ...base, outcome: 'answered' });
          answerGet(req.path);
          continue;
        }
        if (req.method === 'POST' && (req.path === '/v1/chat/completions' || req.path === '/completion')) {
          const entry: ClosingServerEntry = { ...base, outcome: 'answered', responseId: req.path === '/completion' ? `req-${base.seq}` : `chatcmpl-${base.seq}` };
          log.push(entry);
          stream(req.path, body, entry);
          continue;
        }
        log.push({ ...base, outcome: 'answered' });
        const text = JSON.stringify({ error: { message: 'File Not Found', type: 'not_found_error', code: 404 } });
        socket.write(`HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: ${Buffer.byteLength(text)}\r\nContent-Type: application/json; charset=utf-8\r\n\r\n${text}`);
        closing = true;
        shut();
      }
    };

    const answerGet = (path: string): void => {
      const value =
        path === '/v1/models'
          ? { object: 'list', data: [{ id: 'closing-model', object: 'model', created: 0, owned_by: 'llamacpp' }] }
          : path === '/props'
            ? { default_generation_settings: { n_ctx: 4096 }, total_slots: 4, model_path: '/models/closing-model.gguf' }
            : path === '/health'
              ? { status: 'ok' }
              : undefined;
      if (value === undefined) {
        const text = JSON.stringify({ error: { message: 'File Not Found', type: 'not_found_error', code: 404 } });
        socket.write(`HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: ${Buffer.byteLength(text)}\r\nContent-Type: application/json; charset=utf-8\r\n\r\n${text}`);
        closing = true;
        shut();
        return;
      }
      const text = JSON.stringify(value);
      socket.write(`HTTP/1.1 200 OK\r\nKeep-Alive: timeout=5, max=100\r\nContent-Length: ${Buffer.byteLength(text)}\r\nContent-Type: application/json; charset=utf-8\r\n\r\n${text}`);
    };

    const stream = (path: string, body: Record<string, unknown>, entry: ClosingServerEntry): void => {
      busy = true;
      const native = path === '/completion';
      const asked = native ? body.n_predict : body.max_tokens;
      const total = options.tokens ?? (typeof asked === 'number' ? asked : 4);
      const id = entry.responseId!;
      socket.write(
        `HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nKeep-Alive: timeout=5, max=100\r\nServer: llama.cpp\r\nTransfer-Encoding: chunked\r\nX-Accel-Buffering: no\r\n${native ? `X-Request-Id: ${id}\r\n` : ''}\r\n`,
      );
      let sent = 0;
      const step = (): void => {
        if (socket.destroyed) return;
        if (sent < total) {
          const piece = native
            ? { index: 0, content: `tok${sent} `, tokens: [1000 + sent], stop: false, id_slot: 0, tokens_predicted: sent + 1, tokens_evaluated: 8 }
            : { id, object: 'chat.completion.chunk', created: 0, model: 'closing-model', choices: [{ index: 0, delta: { content: `tok${sent} ` }, finish_reason: null }] };
          socket.write(chunk(`data: ${JSON.stringify(piece)}\n\n`));
          sent++;
          later(itlMs, step);
          return;
        }
        if (native) {
          socket.write(chunk(`data: ${JSON.stringify({ index: 0, content: '', tokens: [], stop: true, tokens_predicted: sent, tokens_evaluated: 8, timings: { prompt_n: 8, prompt_ms: 1, predicted_n: sent, predicted_ms: sent * itlMs } })}\n\n`));
        } else {
          socket.write(chunk(`data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created: 0, model: 'closing-model', choices: [{ index: 0, delta: {}, finish_reason: 'length' }] })}\n\n`));
          socket.write(chunk(`data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created: 0, model: 'closing-model', choices: [], usage: { prompt_tokens: 8, completion_tokens: sent, total_tokens: 8 + sent } })}\n\n`));
          socket.write(chunk('data: [DONE]\n\n'));
        }
        // sink.done(): the last chunk, then the provider's `false` ends the connection
        socket.write('0\r\n\r\n');
        busy = false;
        closing = true;
        closedAfterStream++;
        later(closeAfterMs, shut);
        next();
      };
      step();
    };

    socket.on('data', (b: Buffer) => {
      buf = buf.length === 0 ? b : Buffer.concat([buf, b]);
      next();
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    log,
    get connections() {
      return connections;
    },
    get closedAfterStream() {
      return closedAfterStream;
    },
    close() {
      return new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const s of sockets) s.destroy();
      });
    },
  };
}
