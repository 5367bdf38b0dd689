// Serves one stream fixture of test/fixtures/streams (a server's response body byte for byte, and its
// headers) on 127.0.0.1, an event at a time with small delays, so an integration test can run the
// real client against what vLLM, TGI, llama.cpp or Ollama send. Every POST gets the fixture; the GETs
// a client probes first (/health, /v1/models, /api/tags) get a plausible answer. See the folder's
// README.md for where each fixture's shape comes from.
import { closerOf, listenOnLoopback, Timers } from './listen';
import { readBody } from './requestBody';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http';
import { join } from 'node:path';

export const FIXTURE_DIR = join(__dirname, '../fixtures/streams');

/** The body file extensions, in the order they are looked for. */
const BODIES = [
  ['.sse', 'sse'],
  ['.ndjson', 'ndjson'],
  ['.json', 'json'],
] as const;

export interface Fixture {
  readonly name: string;
  readonly framing: 'sse' | 'ndjson' | 'json';
  readonly status: number;
  /** Response headers as the server sent them (lower-case names). */
  readonly headers: Readonly<Record<string, string>>;
  /** The request that produced it (documentation; not checked). */
  readonly request?: unknown;
  /** The raw body. */
  readonly body: Buffer;
  /** The body cut after each event (SSE: a blank line; NDJSON: a line); one piece for JSON. Concatenated they are `body`. */
  readonly events: readonly Buffer[];
}

/** Reads `NAME.headers.json` and `NAME.sse|.ndjson|.json` from test/fixtures/streams (or `dir`). */
export function loadFixture(name: string, dir = FIXTURE_DIR): Fixture {
  const meta = JSON.parse(readFileSync(join(dir, `${name}.headers.json`), 'utf8')) as { status?: number; headers?: Record<string, string>; request?: unknown };
  for (const [ext, framing] of BODIES) {
    let body: Buffer;
    try {
      body = readFileSync(join(dir, name + ext));
    } catch {
      continue;
    }
    return { name, framing, status: meta.status ?? 200, headers: meta.headers ?? {}, request: meta.request, body, events: cut(body, framing) };
  }
  throw new Error(`no body for fixture ${name} in ${dir} (.sse, .ndjson or .json)`);
}

function cut(body: Buffer, framing: Fixture['framing']): Buffer[] {
  if (framing === 'json') return [body];
  const sep = framing === 'sse' ? '\n\n' : '\n';
  const out: Buffer[] = [];
  let from = 0;
  for (let at = body.indexOf(sep, from); at >= 0; at = body.indexOf(sep, from)) {
    out.push(body.subarray(from, at + sep.length));
    from = at + sep.length;
  }
  if (from < body.length) out.push(body.subarray(from));
  return out;
}

export interface FixtureServerOptions {
  /** A fixture name in test/fixtures/streams, or a loaded Fixture. */
  readonly fixture: string | Fixture;
  /** ms between events (default 5). */
  readonly delayMs?: number;
  /** ms from the headers to the first event (default delayMs). */
  readonly firstDelayMs?: number;
  /** Model name for the probe answers (default 'fixture-model'). */
  readonly model?: string;
}

export interface FixtureServer {
  readonly url: string;
  readonly fixture: Fixture;
  /** Every POST received: method, path with query, headers, body. */
  readonly seen: readonly { readonly method: string; readonly path: string; readonly headers: IncomingHttpHeaders; readonly body: string }[];
  close(): Promise<void>;
}

// set by node itself, or meaningless once the body is re-sent in pieces
const NOT_REPLAYED = new Set(['connection', 'keep-alive', 'transfer-encoding', 'date', 'content-length']);

export async function startFixtureServer(options: FixtureServerOptions): Promise<FixtureServer> {
  const fixture = typeof options.fixture === 'string' ? loadFixture(options.fixture) : options.fixture;
  const delayMs = options.delayMs ?? 5;
  const firstDelayMs = options.firstDelayMs ?? delayMs;
  const model = options.model ?? 'fixture-model';
  const seen: { method: string; path: string; headers: IncomingHttpHeaders; body: string }[] = [];
  const timers = new Timers();
  const later = (ms: number, fn: () => void): void => timers.later(ms, fn);

  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    if (req.method === 'GET' || req.method === 'HEAD') {
      const body = path === '/health' ? { status: 'ok' } : path === '/api/tags' ? { models: [{ name: model, model }] } : path === '/v1/models' ? { object: 'list', data: [{ id: model, object: 'model' }] } : undefined;
      if (!body) return void res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not found"}');
      return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    }
    void readBody(req).then((raw) => {
      seen.push({ method: req.method ?? '', path: req.url ?? '/', headers: req.headers, body: raw.toString('utf8') });
      const headers: OutgoingHttpHeaders = {};
      for (const [k, v] of Object.entries(fixture.headers)) {
        const name = k.toLowerCase();
        // a whole (JSON) body goes in one write: its length still holds
        if (!NOT_REPLAYED.has(name) || (name === 'content-length' && fixture.framing === 'json')) headers[k] = v;
      }
      res.socket?.setNoDelay(true);
      res.writeHead(fixture.status, headers);
      res.flushHeaders();
      const events = fixture.events;
      const next = (i: number): void => {
        if (res.destroyed) return;
        if (i === events.length - 1) return void res.end(events[i]);
        res.write(events[i]);
        later(delayMs, () => next(i + 1));
      };
      if (events.length === 0) res.end();
      else later(firstDelayMs, () => next(0));
    });
  });
  const { url, sockets } = await listenOnLoopback(server);
  return {
    url,
    fixture,
    seen,
    close: closerOf(server, sockets, timers),
  };
}
