// A reverse proxy on 127.0.0.1 that buffers a streamed response the way real middleboxes do, and
// logs what it did, so a test can check that the profiler saw bunching where (and only where) the
// proxy bunched:
//   - 'time':  body bytes are held and written to the client in ONE write every flushMs (nginx with
//              proxy_buffering on, a CDN); the end is flushed at once.
//   - 'count': written every N complete events (SSE events end with a blank line, NDJSON lines with
//              a newline), the rest at the end.
//   - 'pass':  each upstream chunk written through at once, Nagle off on both sockets, with a
//              `via: 1.1 test-proxy` header: a proxy that is there but must NOT be flagged.
// `gzip: true` compresses the body (content-encoding: gzip), flushing the compressor at each flush,
// as a proxy that compresses an event stream does. Plain node:http both ways; the request (method,
// path, headers, body) is forwarded as it came, the response headers (bar hop-by-hop ones) as they
// came plus `headers`.
import { listenOnLoopback } from './listen';
import { readBody } from './requestBody';
import { Agent, createServer, request as httpRequest } from 'node:http';
import type { IncomingHttpHeaders, IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { constants as zlibConstants, createGzip } from 'node:zlib';
import type { Gzip } from 'node:zlib';

export type BufferingMode =
  | { readonly mode: 'time'; readonly flushMs: number }
  | { readonly mode: 'count'; readonly events: number }
  | { readonly mode: 'pass' };

export type BufferingProxyOptions = BufferingMode & {
  /** The upstream base URL (http://127.0.0.1:PORT). */
  readonly target: string;
  /** Extra response headers (e.g. `via`, `x-cache`); they win over the upstream's. */
  readonly headers?: Readonly<Record<string, string>>;
  /** Compress the body with gzip, the compressor flushed at every flush. */
  readonly gzip?: boolean;
};

/** One write to the client. */
export interface ProxyFlush {
  /** Epoch ms of the write. */
  readonly at: number;
  /** Bytes written to the client (compressed when gzip). */
  readonly bytes: number;
  /** Upstream (uncompressed) bytes in it. */
  readonly rawBytes: number;
  /** Complete events (SSE events or NDJSON lines) that ended in it. */
  readonly events: number;
  /** The write at the upstream's end. */
  readonly final: boolean;
}

/** What the proxy did with one request (filled in as the exchange goes). */
export interface ProxiedRequest {
  readonly method: string;
  /** Path and query, as forwarded. */
  readonly path: string;
  /** Epoch ms the client's request arrived. */
  readonly receivedAt: number;
  readonly status?: number;
  /** Epoch ms the response headers went to the client. */
  readonly headersAt?: number;
  /** Every upstream body chunk as it arrived: epoch ms and bytes. */
  readonly upstream: readonly { readonly at: number; readonly bytes: number }[];
  /** Every write to the client, in order. */
  readonly flushes: readonly ProxyFlush[];
  /** Epoch ms the response to the client ended (or broke). */
  readonly endedAt?: number;
  /** The exchange broke (upstream error, or the client went away). */
  readonly aborted?: boolean;
}

type Entry = { -readonly [K in keyof ProxiedRequest]: ProxiedRequest[K] } & {
  upstream: { at: number; bytes: number }[];
  flushes: ProxyFlush[];
};

export interface BufferingProxy {
  /** http://127.0.0.1:PORT: the client's base URL. */
  readonly url: string;
  /** One entry per request, in arrival order. */
  readonly log: readonly ProxiedRequest[];
  close(): Promise<void>;
}

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-authenticate', 'proxy-authorization', 'proxy-connection', 'te', 'trailer', 'transfer-encoding', 'upgrade']);
const LF = 0x0a;
const CR = 0x0d;

const now = (): number => performance.timeOrigin + performance.now();

function forwardable(headers: IncomingHttpHeaders, drop: readonly string[] = []): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {};
  for (const [k, v] of Object.entries(headers)) if (v !== undefined && !HOP_BY_HOP.has(k) && !drop.includes(k)) out[k] = v;
  return out;
}

/**
 * Counts complete events in a byte stream, across chunk boundaries: SSE events end at a blank line
 * (LF LF, CR ignored so CRLF CRLF counts too), NDJSON lines at a LF after some content.
 * `ends(chunk)` gives the offsets just past each event end in the chunk.
 */
function eventCounter(sse: boolean): (chunk: Buffer) => number[] {
  let lastWasLf = false;
  let lineHasContent = false;
  return (chunk) => {
    const ends: number[] = [];
    for (let i = 0; i < chunk.length; i++) {
      const c = chunk[i]!;
      if (c === CR) continue;
      if (c === LF) {
        if (sse ? lastWasLf : lineHasContent) ends.push(i + 1);
        lastWasLf = true;
        lineHasContent = false;
      } else {
        lastWasLf = false;
        lineHasContent = true;
      }
    }
    return ends;
  };
}

export async function startBufferingProxy(options: BufferingProxyOptions): Promise<BufferingProxy> {
  const target = new URL(options.target);
  const agent = new Agent({ keepAlive: true });
  const log: Entry[] = [];
  const timers = new Set<NodeJS.Timeout>();
  const upstreams = new Set<ReturnType<typeof httpRequest>>();
  /** One per exchange not yet closed: close() waits for them, so the log is final when it resolves. */
  const live = new Set<Promise<void>>();

  const handle = (req: IncomingMessage, res: ServerResponse, body: Buffer, entry: Entry): void => {
    const pass = options.mode === 'pass';
    if (pass) req.socket.setNoDelay(true);
    const headers = forwardable(req.headers, ['host', 'content-length', ...(options.gzip ? ['accept-encoding'] : [])]);
    headers.host = target.host;
    headers['content-length'] = body.length;
    const up = httpRequest({ host: target.hostname, port: target.port, method: req.method, path: entry.path, headers, agent }, (ures) => {
      upstreams.delete(up);
      if (pass) ures.socket.setNoDelay(true);
      const resHeaders = forwardable(ures.headers, ['content-length', ...(options.gzip ? ['content-encoding'] : [])]);
      if (pass) resHeaders.via = '1.1 test-proxy';
      if (options.gzip) {
        resHeaders['content-encoding'] = 'gzip';
        resHeaders.vary = 'accept-encoding';
      }
      Object.assign(resHeaders, options.headers);
      entry.status = ures.statusCode ?? 502;
      res.writeHead(entry.status, resHeaders);
      res.flushHeaders();
      entry.headersAt = now();

      const sse = String(ures.headers['content-type'] ?? '').includes('text/event-stream');
      const ends = eventCounter(sse);
      let pending: Buffer[] = [];
      let pendingBytes = 0;
      let pendingEvents = 0;
      let ended = false;
      const gz: Gzip | undefined = options.gzip ? createGzip() : undefined;
      const gzOut: Buffer[] = [];
      gz?.on('data', (b: Buffer) => gzOut.push(b));
      // flushes run one after another: with gzip each waits for the compressor
      let chain: Promise<void> = Promise.resolve();

      const send = (data: Buffer, events: number, final: boolean): void => {
        chain = chain.then(
          () =>
            new Promise<void>((resolve) => {
              const out = (bytes: Buffer): void => {
                if (bytes.length > 0 && !res.destroyed) res.write(bytes);
                entry.flushes.push({ at: now(), bytes: bytes.length, rawBytes: data.length, events, final });
                if (final) {
                  res.end();
                  entry.endedAt = now();
                }
                resolve();
              };
              if (!gz) return out(data);
              if (final) {
                gz.once('end', () => out(Buffer.concat(gzOut.splice(0))));
                gz.end(data);
              } else {
                gz.write(data);
                gz.flush(zlibConstants.Z_SYNC_FLUSH, () => out(Buffer.concat(gzOut.splice(0))));
              }
            }),
        );
      };
      const flushPending = (final: boolean): void => {
        if (pendingBytes === 0 && !final) return;
        const data = pending.length === 1 ? pending[0]! : Buffer.concat(pending, pendingBytes);
        const events = pendingEvents;
        pending = [];
        pendingBytes = 0;
        pendingEvents = 0;
        send(data, events, final);
      };
      const hold = (b: Buffer, events: number): void => {
        pending.push(b);
        pendingBytes += b.length;
        pendingEvents += events;
      };

      let timer: NodeJS.Timeout | undefined;
      if (options.mode === 'time') {
        timer = setInterval(() => flushPending(false), options.flushMs);
        timers.add(timer);
      }
      const stop = (): void => {
        if (timer) {
          clearInterval(timer);
          timers.delete(timer);
        }
      };

      ures.on('data', (b: Buffer) => {
        entry.upstream.push({ at: now(), bytes: b.length });
        const at = ends(b);
        if (options.mode === 'pass') return send(b, at.length, false);
        if (options.mode === 'time') return hold(b, at.length);
        // count: cut at the end of every Nth event
        let from = 0;
        for (const end of at) {
          hold(b.subarray(from, end), 1);
          from = end;
          if (pendingEvents >= options.events) flushPending(false);
        }
        if (from < b.length) hold(b.subarray(from), 0);
      });
      ures.on('end', () => {
        ended = true;
        stop();
        flushPending(true);
      });
      ures.on('error', () => {
        stop();
        entry.aborted = true;
        entry.endedAt = now();
        res.destroy();
      });
      res.on('close', () => {
        stop();
        if (!ended) {
          ures.destroy();
          gz?.destroy();
        }
      });
    });
    upstreams.add(up);
    up.on('error', (err) => {
      upstreams.delete(up);
      entry.aborted = true;
      entry.endedAt = now();
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: `proxy: ${err.message}` } }));
      else res.destroy();
    });
    res.on('close', () => {
      if (res.writableFinished) return;
      entry.aborted = true;
      entry.endedAt ??= now();
      up.destroy();
    });
    up.end(body);
  };

  const server = createServer((req, res) => {
    const entry: Entry = { method: req.method ?? 'GET', path: req.url ?? '/', receivedAt: now(), upstream: [], flushes: [] };
    log.push(entry);
    const settled = new Promise<void>((resolve) => res.once('close', resolve));
    live.add(settled);
    void settled.then(() => live.delete(settled));
    void readBody(req).then((raw) => handle(req, res, raw, entry));
  });
  const { url, sockets } = await listenOnLoopback(server);
  // a second server.close() would wait for a 'close' event that has already gone
  let closing: Promise<void> | undefined;
  return {
    url,
    log,
    close() {
      closing ??= (async () => {
        for (const t of timers) clearInterval(t);
        timers.clear();
        for (const u of upstreams) u.destroy();
        for (const s of sockets) s.destroy();
        agent.destroy();
        await Promise.all([...live, new Promise<void>((resolve) => server.close(() => resolve()))]);
      })();
      return closing;
    },
  };
}
