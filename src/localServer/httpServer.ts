// The bundled server's HTTP face: OpenAI-compatible /v1/chat/completions, /v1/completions and
// /v1/models, llama.cpp's /completion, /health, /tokenize and /apply-template, llama.cpp-style `timings` on every response,
// llama.cpp's Prometheus /metrics, and /slots and /stats (batch sizes per engine step, JSON) for
// tests and the curious.
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { IncomingMessage, OutgoingHttpHeaders, Server, ServerResponse } from 'node:http';
import type { Token } from 'node-llama-cpp';
import { Counter, Gauge, Registry } from 'prom-client';
import { RequestError } from './inference';
import type { EngineTotals, GenerateRequest, GenerateResult, LlamaEngine } from './inference';
import { loopbackHosts, refusal } from './requestGuard';
import type { Refusal } from './requestGuard';

const MAX_BODY = 16 * 1024 * 1024;
/**
 * How much of an oversize body is read and thrown away before the 413 goes out. A reply sent while
 * the client still writes is lost: closing a socket with unread data resets it.
 */
const MAX_DRAIN = 4 * MAX_BODY;
/** Refusals logged one by one; later ones are only counted (in /stats), so a page cannot flood the log. */
const LOGGED_REFUSALS = 20;

type Api = 'chat' | 'completions' | 'llamacpp';

interface Parsed {
  readonly tokens: Token[];
  readonly stream: boolean;
  readonly includeUsage: boolean;
  readonly gen: Omit<GenerateRequest, 'tokens' | 'signal' | 'onText'>;
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

function timingsOf(r: GenerateResult): Record<string, number> {
  const pn = r.evaluatedPromptTokens;
  const gn = r.completionTokens;
  return {
    cache_n: r.promptTokens - r.evaluatedPromptTokens,
    prompt_n: pn,
    prompt_ms: r.promptMs,
    prompt_per_token_ms: pn ? r.promptMs / pn : 0,
    prompt_per_second: r.promptMs > 0 ? (pn * 1000) / r.promptMs : 0,
    predicted_n: gn,
    predicted_ms: r.predictedMs,
    predicted_per_token_ms: gn ? r.predictedMs / gn : 0,
    predicted_per_second: r.predictedMs > 0 ? (gn * 1000) / r.predictedMs : 0,
  };
}

function num(body: Record<string, unknown>, key: string, def: number | undefined, min: number, max: number): number | undefined {
  const v = body[key];
  if (v === undefined || v === null) return def;
  if (typeof v !== 'number' || !Number.isFinite(v) || v < min || v > max) throw new HttpError(400, `"${key}" must be a number from ${min} to ${max} (got ${JSON.stringify(v)})`);
  return v;
}

/**
 * /metrics as llama.cpp's server writes it (tools/server/server.cpp): its names, types and meanings,
 * read from the engine at each scrape, in a registry of its own (prom-client's global one is not
 * touched). As there, the two throughput gauges cover the time since the previous scrape, and
 * n_busy_slots_per_decode is declared a counter though it is a mean.
 */
function llamaCppMetrics(engine: LlamaEngine): Registry {
  const registry = new Registry();
  const registers = [registry];
  // prom-client's counters only count up; these mirror totals the engine keeps, at each scrape.
  const counter = (name: string, help: string, value: (t: EngineTotals) => number) =>
    new Counter({
      name: `llamacpp:${name}`,
      help,
      registers,
      collect() {
        this.reset();
        this.inc(Math.max(0, value(engine.totals())));
      },
    });
  const gauge = (name: string, help: string, value: () => number) =>
    new Gauge({
      name: `llamacpp:${name}`,
      help,
      registers,
      collect() {
        this.set(value());
      },
    });
  counter('prompt_tokens_total', 'Number of prompt tokens processed.', (t) => t.promptTokens);
  counter('prompt_seconds_total', 'Prompt process time', (t) => t.promptMs / 1000);
  counter('tokens_predicted_total', 'Number of generation tokens processed.', (t) => t.predictedTokens);
  counter('tokens_predicted_seconds_total', 'Predict process time', (t) => t.predictedMs / 1000);
  counter('n_decode_total', 'Total number of llama_decode() calls', (t) => t.decodes);
  counter('n_tokens_max', 'Largest observed n_tokens.', (t) => t.maxSlotTokens);
  counter('n_busy_slots_per_decode', 'Average number of busy slots per llama_decode() call', (t) => t.busySlots / Math.max(t.decodes, 1));
  let last = engine.totals();
  gauge('prompt_tokens_seconds', 'Average prompt throughput in tokens/s.', () => {
    const t = engine.totals();
    const rate = t.promptMs > last.promptMs ? ((t.promptTokens - last.promptTokens) * 1000) / (t.promptMs - last.promptMs) : 0;
    last = { ...last, promptTokens: t.promptTokens, promptMs: t.promptMs };
    return rate;
  });
  gauge('predicted_tokens_seconds', 'Average generation throughput in tokens/s.', () => {
    const t = engine.totals();
    const rate = t.predictedMs > last.predictedMs ? ((t.predictedTokens - last.predictedTokens) * 1000) / (t.predictedMs - last.predictedMs) : 0;
    last = { ...last, predictedTokens: t.predictedTokens, predictedMs: t.predictedMs };
    return rate;
  });
  // Older llama.cpp builds: KV cells in use over the whole context (every slot's share).
  const cells = () => engine.slots().reduce((n, s) => n + s.tokens, 0);
  gauge('kv_cache_usage_ratio', 'KV-cache usage. 1 means 100 percent usage.', () => cells() / Math.max(1, engine.slotContextSize * engine.parallel));
  gauge('kv_cache_tokens', 'KV-cache tokens.', cells);
  gauge('requests_processing', 'Number of requests processing.', () => engine.slots().filter((s) => s.phase !== 'idle').length);
  gauge('requests_deferred', 'Number of requests deferred.', () => engine.queued);
  return registry;
}

export class LocalHttpServer {
  readonly #engine: LlamaEngine;
  readonly #modelId: string;
  readonly #server: Server;
  readonly #created = Math.floor(Date.now() / 1000);
  readonly #log: (line: string) => void;
  /** Filled in by listen(): until then no request can arrive. */
  #hosts: ReadonlySet<string> = new Set();
  readonly #refused = { host: 0, origin: 0, tooLarge: 0 };
  readonly #metrics: Registry;

  constructor(engine: LlamaEngine, modelId: string, log: (line: string) => void = () => undefined) {
    this.#engine = engine;
    this.#modelId = modelId;
    this.#log = log;
    this.#metrics = llamaCppMetrics(engine);
    // Host is checked below, with a JSON answer, rather than by node's bare 400.
    this.#server = createServer({ requireHostHeader: false }, (req, res) => {
      const no = refusal(req, this.#hosts);
      if (no) return this.#refuse(req, res, no);
      this.#handle(req, res).catch((e: unknown) => {
        this.#log(`error: ${(e as Error).stack ?? String(e)}`);
        if (!res.headersSent) this.#json(res, 500, { error: { message: (e as Error).message, type: 'server_error', code: 500 } });
        else res.end();
      });
    });
    this.#server.keepAliveTimeout = 65_000;
  }

  /** Binds 127.0.0.1 only. Rejects with a clear message when the port is taken. */
  listen(port: number): Promise<number> {
    return new Promise((resolve, reject) => {
      const onError = (e: NodeJS.ErrnoException) => {
        reject(new Error(e.code === 'EADDRINUSE' ? `port ${port} on 127.0.0.1 is already in use (pick another with --port, or 0 for any free port)` : e.code === 'EACCES' ? `no permission to listen on port ${port}` : e.message));
      };
      this.#server.once('error', onError);
      this.#server.listen(port, '127.0.0.1', () => {
        this.#server.off('error', onError);
        const addr = this.#server.address();
        if (typeof addr !== 'object' || !addr) return reject(new Error('the server has no address after listening'));
        this.#hosts = loopbackHosts(addr);
        resolve(addr.port);
      });
    });
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      this.#server.close(() => resolve());
      this.#server.closeAllConnections();
    });
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const path = url.pathname.replace(/\/+$/, '') || '/';
    req.socket.setNoDelay(true);
    if (req.method === 'GET' || req.method === 'HEAD') {
      switch (path) {
        case '/health':
        case '/v1/health':
          return this.#json(res, 200, { status: 'ok' });
        case '/v1/models':
        case '/models':
          return this.#json(res, 200, { object: 'list', data: [{ id: this.#modelId, object: 'model', created: this.#created, owned_by: 'llm-profiler' }] });
        case '/slots':
          return this.#json(res, 200, this.#engine.slots());
        case '/stats':
          return this.#json(res, 200, { ...this.#engine.stats(url.searchParams.has('reset')), parallel: this.#engine.parallel, queued: this.#engine.queued, refused: { ...this.#refused }, cpuBackend: this.#engine.cpuBackend });
        case '/metrics': {
          const text = await this.#metrics.metrics();
          res.writeHead(200, { 'content-type': this.#metrics.contentType, 'content-length': Buffer.byteLength(text) });
          res.end(text);
          return;
        }
        default:
          return this.#json(res, 404, { error: { message: `no route for GET ${path}`, type: 'not_found_error', code: 404 } });
      }
    }
    if (req.method !== 'POST') return this.#json(res, 405, { error: { message: `method ${req.method} not allowed`, type: 'invalid_request_error', code: 405 } });
    if (path === '/tokenize' || path === '/apply-template') return this.#tokenizer(path, req, res);
    let api: Api;
    if (path === '/v1/chat/completions' || path === '/chat/completions') api = 'chat';
    else if (path === '/v1/completions' || path === '/completions') api = 'completions';
    else if (path === '/completion') api = 'llamacpp';
    else return this.#json(res, 404, { error: { message: `no route for POST ${path}`, type: 'not_found_error', code: 404 } });

    let parsed: Parsed;
    try {
      const body = await readJson(req);
      parsed = await this.#parse(api, body);
    } catch (e) {
      if (e instanceof HttpError || e instanceof RequestError) return this.#badRequest(res, e instanceof HttpError ? e.status : 400, e.message);
      throw e;
    }
    await this.#serve(api, parsed, res);
  }

  /** A request whose body is wrong, in OpenAI's error shape; a 413 counted, and its connection closed. */
  #badRequest(res: ServerResponse, status: number, message: string): void {
    if (status === 413) this.#refused.tooLarge++;
    // After a 413 the rest of the body is unread or thrown away: the connection cannot carry another request.
    this.#json(res, status, { error: { message, type: 'invalid_request_error', code: status } }, status === 413 ? { connection: 'close' } : {});
  }

  /**
   * llama.cpp's tokenizer routes, as its server answers them: `POST /tokenize` {content, add_special
   * (default false), parse_special (default true)} → {tokens}, and `POST /apply-template` {messages}
   * → {prompt}, the chat as the chat route tokenizes it (that text, tokenized with add_special, is
   * the chat route's prompt_tokens).
   */
  async #tokenizer(path: string, req: IncomingMessage, res: ServerResponse): Promise<void> {
    let b: Record<string, unknown>;
    try {
      b = asObject(await readJson(req));
      if (path === '/apply-template') return this.#json(res, 200, { prompt: await this.#engine.templateText(flatMessages(b.messages)) });
    } catch (e) {
      if (!(e instanceof HttpError)) throw e;
      return this.#badRequest(res, e.status, e.message);
    }
    const content = b.content;
    if (content === undefined) return this.#json(res, 200, { tokens: [] });
    if (typeof content !== 'string') return this.#badRequest(res, 400, '"content" must be a string');
    this.#json(res, 200, { tokens: this.#engine.tokenize(content, b.add_special === true, b.parse_special !== false) });
  }

  async #parse(api: Api, body: unknown): Promise<Parsed> {
    const b = asObject(body);
    let tokens: Token[];
    if (api === 'chat') {
      tokens = await this.#engine.chatTokens(flatMessages(b.messages));
    } else {
      let prompt = b.prompt;
      if (Array.isArray(prompt) && prompt.length === 1) prompt = prompt[0];
      if (typeof prompt !== 'string') throw new HttpError(400, '"prompt" must be a string');
      tokens = this.#engine.tokenize(prompt, true, false);
    }
    const n = num(b, 'n', 1, 1, 1);
    void n;
    const maxTokens = num(b, 'max_tokens', undefined, -1, 1e9) ?? num(b, 'max_completion_tokens', undefined, -1, 1e9) ?? num(b, 'n_predict', undefined, -1, 1e9);
    const stop = b.stop == null ? [] : typeof b.stop === 'string' ? [b.stop] : Array.isArray(b.stop) && b.stop.every((s) => typeof s === 'string') ? (b.stop as string[]) : null;
    if (stop === null) throw new HttpError(400, '"stop" must be a string or an array of strings');
    const seed = num(b, 'seed', undefined, -(2 ** 53), 2 ** 53);
    const so = b.stream_options as { include_usage?: unknown } | undefined;
    return {
      tokens,
      stream: b.stream === true,
      includeUsage: so?.include_usage === true,
      gen: {
        maxTokens: maxTokens === undefined || maxTokens < 0 ? undefined : Math.floor(maxTokens),
        ignoreEos: b.ignore_eos === true,
        seed: seed === undefined ? undefined : Math.abs(Math.floor(seed)) % 2 ** 32,
        temperature: num(b, 'temperature', 0.8, 0, 10)!,
        topK: num(b, 'top_k', 40, 0, 1e6)!,
        topP: num(b, 'top_p', 0.95, 0, 1)!,
        minP: num(b, 'min_p', 0.05, 0, 1)!,
        stop,
        cachePrompt: b.cache_prompt !== false,
      },
    };
  }

  async #serve(api: Api, p: Parsed, res: ServerResponse): Promise<void> {
    const ac = new AbortController();
    res.on('close', () => {
      if (!res.writableFinished) ac.abort();
    });
    const id = `${api === 'chat' ? 'chatcmpl' : 'cmpl'}-${randomBytes(12).toString('hex')}`;
    const created = Math.floor(Date.now() / 1000);
    const model = this.#modelId;
    const sse = (obj: unknown) => {
      if (!res.destroyed) res.write(`data: ${JSON.stringify(obj)}\n\n`);
    };
    let started = false;
    const startStream = () => {
      if (started) return;
      started = true;
      res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive' });
      res.flushHeaders();
    };
    // The hot path: one write per token, built from a prefix and suffix made once per response.
    const head = (obj: unknown, hole: string) => {
      const json = JSON.stringify(obj);
      const at = json.indexOf(`"${hole}"`);
      return [`data: ${json.slice(0, at)}`, `${json.slice(at + hole.length + 2)}\n\n`] as const;
    };
    const HOLE = `llmp-hole-${id}`; // nothing else in the object can contain it
    const [pre, post] =
      api === 'chat'
        ? head({ id, object: 'chat.completion.chunk', created, model, choices: [{ index: 0, delta: { content: HOLE }, logprobs: null, finish_reason: null }] }, HOLE)
        : api === 'completions'
          ? head({ id, object: 'text_completion', created, model, choices: [{ index: 0, text: HOLE, logprobs: null, finish_reason: null }] }, HOLE)
          : head({ content: HOLE, stop: false, id_slot: -1 }, HOLE);
    const onText = !p.stream
      ? undefined
      : (text: string) => {
          startStream();
          if (first && api === 'chat') {
            sse({ id, object: 'chat.completion.chunk', created, model, choices: [{ index: 0, delta: { role: 'assistant', content: text }, logprobs: null, finish_reason: null }] });
          } else if (!res.destroyed) res.write(pre + JSON.stringify(text) + post);
          first = false;
        };
    let first = true;
    let result: GenerateResult;
    try {
      result = await this.#engine.generate({ ...p.gen, tokens: p.tokens, signal: ac.signal, onText });
    } catch (e) {
      const status = e instanceof RequestError ? 400 : 500;
      const error = { message: (e as Error).message, type: status === 400 ? 'invalid_request_error' : 'server_error', code: status };
      if (!started) return this.#json(res, status, { error });
      sse({ error });
      res.end();
      return;
    }
    if (result.finishReason === 'aborted') {
      res.destroy();
      return;
    }
    const done: Finished = { api, id, created, model, result, timings: timingsOf(result) };
    if (p.stream) {
      startStream();
      endStream(res, done, p.includeUsage, sse);
    } else {
      this.#json(res, 200, wholeReply(done));
    }
  }

  /** Answers before anything is parsed or queued: a refused request never reaches the model. */
  #refuse(req: IncomingMessage, res: ServerResponse, no: Refusal): void {
    const n = ++this.#refused[no.kind];
    if (n <= LOGGED_REFUSALS) {
      const target = JSON.stringify((req.url ?? '').slice(0, 100));
      this.#log(`refused ${req.method ?? '?'} ${target} (${no.status}): ${no.message}${n === LOGGED_REFUSALS ? `; further ${no.kind} refusals are only counted in /stats` : ''}`);
    }
    this.#json(res, no.status, { error: { message: no.message, type: no.status === 403 ? 'permission_error' : 'invalid_request_error', code: no.status } });
  }

  #json(res: ServerResponse, status: number, body: unknown, headers: OutgoingHttpHeaders = {}): void {
    const text = JSON.stringify(body);
    res.writeHead(status, { ...headers, 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) });
    res.end(text);
  }
}

function asObject(body: unknown): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new HttpError(400, 'the request body must be a JSON object');
  return body as Record<string, unknown>;
}

/** A chat request's messages as role and text (an array content's text parts joined). */
function flatMessages(messages: unknown): { role: string; content: string }[] {
  if (!Array.isArray(messages) || messages.length === 0) throw new HttpError(400, '"messages" must be a non-empty array');
  return messages.map((m, i) => {
    if (typeof m !== 'object' || m === null) throw new HttpError(400, `messages[${i}] must be an object`);
    const { role, content } = m as { role?: unknown; content?: unknown };
    if (typeof role !== 'string') throw new HttpError(400, `messages[${i}].role must be a string`);
    let text: string;
    if (typeof content === 'string') text = content;
    else if (Array.isArray(content)) text = content.map((p: { type?: string; text?: string }) => (p && p.type === 'text' && typeof p.text === 'string' ? p.text : '')).join('');
    else if (content == null) text = '';
    else throw new HttpError(400, `messages[${i}].content must be a string`);
    return { role, content: text };
  });
}

/** A finished generation and the names its reply carries. */
interface Finished {
  readonly api: Api;
  readonly id: string;
  readonly created: number;
  readonly model: string;
  readonly result: GenerateResult;
  readonly timings: ReturnType<typeof timingsOf>;
}

function usageOf(r: GenerateResult) {
  return { prompt_tokens: r.promptTokens, completion_tokens: r.completionTokens, total_tokens: r.promptTokens + r.completionTokens };
}

/** The end of a stream: the finish reason (and usage when asked), then [DONE]; llama.cpp's final event. */
function endStream(res: ServerResponse, f: Finished, includeUsage: boolean, sse: (obj: unknown) => void): void {
  const { id, created, model, result, timings } = f;
  const finish = result.finishReason;
  if (f.api === 'chat') {
    sse({ id, object: 'chat.completion.chunk', created, model, choices: [{ index: 0, delta: {}, logprobs: null, finish_reason: finish }], timings });
    if (includeUsage) sse({ id, object: 'chat.completion.chunk', created, model, choices: [], usage: usageOf(result), timings });
    res.end('data: [DONE]\n\n');
  } else if (f.api === 'completions') {
    sse({ id, object: 'text_completion', created, model, choices: [{ index: 0, text: '', logprobs: null, finish_reason: finish }], timings });
    if (includeUsage) sse({ id, object: 'text_completion', created, model, choices: [], usage: usageOf(result), timings });
    res.end('data: [DONE]\n\n');
  } else {
    sse({ content: '', stop: true, model, tokens_predicted: result.completionTokens, tokens_evaluated: result.promptTokens, stop_type: finish === 'length' ? 'limit' : 'eos', timings });
    res.end();
  }
}

/** The reply to a request without `stream`: one JSON document. */
function wholeReply(f: Finished): unknown {
  const { id, created, model, result, timings } = f;
  const finish = result.finishReason;
  if (f.api === 'chat') {
    return { id, object: 'chat.completion', created, model, choices: [{ index: 0, message: { role: 'assistant', content: result.text }, logprobs: null, finish_reason: finish }], usage: usageOf(result), timings };
  }
  if (f.api === 'completions') {
    return { id, object: 'text_completion', created, model, choices: [{ index: 0, text: result.text, logprobs: null, finish_reason: finish }], usage: usageOf(result), timings };
  }
  return { content: result.text, stop: true, model, tokens_predicted: result.completionTokens, tokens_evaluated: result.promptTokens, stop_type: finish === 'length' ? 'limit' : 'eos', timings };
}

/**
 * The body as JSON. Past MAX_BODY it is read to the end and dropped, and only then refused, so that
 * the client, still writing, gets to read the 413; past MAX_BODY + MAX_DRAIN it is refused at once.
 */
function readJson(req: IncomingMessage): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const tooLarge = () => new HttpError(413, `the request body is larger than ${MAX_BODY} bytes`);
    if (Number(req.headers['content-length']) > MAX_BODY + MAX_DRAIN) return reject(tooLarge());
    const parts: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size <= MAX_BODY) parts.push(c);
      else {
        parts.length = 0;
        if (size > MAX_BODY + MAX_DRAIN) reject(tooLarge());
      }
    });
    req.on('end', () => {
      if (size > MAX_BODY) return reject(tooLarge());
      const text = Buffer.concat(parts).toString('utf8');
      try {
        resolve(JSON.parse(text));
      } catch {
        reject(new HttpError(400, `the request body is not valid JSON: ${text.slice(0, 80)}`));
      }
    });
    req.on('error', reject);
  });
}
