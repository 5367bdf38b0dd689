// A real streaming HTTP server on 127.0.0.1 that behaves like an inference engine's scheduler with
// a known cost model, so that a sweep can be checked against the truth:
//   every engine step costs EXACTLY baseMs + kMs·B + prefillMsPerToken·(prompt tokens prefilled in it)
// where B is the number of sequences decoding in that step; each step emits one token to each of
// them. A new sequence's prompt is prefilled either whole in one step (no chunk: a long prompt lands
// in one long step and stalls every stream that is decoding) or `prefillChunk` tokens per step,
// interleaved with the decode steps (chunked prefill). The step that finishes a prefill emits the
// sequence's first token; from the next step on it decodes.
//
// Steps are scheduled on an absolute clock (each ends `cost` ms after the previous one's scheduled
// end, or after now when idle), so timer lateness on a loaded machine jitters single chunks but never
// accumulates: a request's TPOT, the mean of its step durations, is the model's. The scheduled steps
// are kept in `steps` for assertions.
//
// The truth log (`truth`) says, for every request and every step, what the scheduler did: when a
// request was accepted, admitted, prefilled, which step emitted each of its tokens, which requests
// prefilled in each step. A client record's `responseId` is the request's `cm-N` id (sent as the
// response `id` and the `x-request-id` header), so a test can hold what the profiler concluded (a
// queue time, a stall's culprits, cached tokens) against what really happened. The server's own
// timing reports (`timings: 'llamacpp' | 'vllm'`) are computed from the same schedule, so a client
// that keeps them can be checked to the millisecond.
//
// Speaks OpenAI /v1/chat/completions and /v1/completions (SSE, with the usage chunk when
// stream_options.include_usage is set, and non-streaming), llama.cpp's native /completion,
// /v1/models and /health. Prompt tokens are counted as whitespace-separated words of the prompt text
// (every message's content joined); the prefix cache compares prompts word by word. What each chat
// request carried (every message's role, length and content hash) and what it streamed back (the
// reply's length and hash) are in its truth, so a multi-turn test can check each turn's history.
import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import type { WriteStream } from 'node:fs';
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readJsonBody } from './requestBody';

export interface CostModelOptions {
  readonly baseMs: number;
  readonly kMs: number;
  /** Prefill cost per prompt token, ms (default 0). Cached prompt tokens cost nothing. */
  readonly prefillMsPerToken?: number;
  /** Prompt tokens per step (chunked prefill); undefined: a whole prompt in one step. */
  readonly prefillChunk?: number;
  /** Sequences admitted at once (the server's slots); more wait in a queue. Default unlimited. */
  readonly parallel?: number;
  readonly model?: string;
  /** Output tokens when a request gives no max_tokens. Default 16. */
  readonly defaultMaxTokens?: number;
  /**
   * The server's own timing report, as real servers send it (default 'none': no report).
   * - 'llamacpp': a `timings` object {cache_n, prompt_n, prompt_ms, prompt_per_token_ms,
   *   prompt_per_second, predicted_n, predicted_ms, predicted_per_token_ms, predicted_per_second} on
   *   the last chunk of the stream (the usage chunk when stream_options.include_usage is set, else
   *   the finish chunk), top-level in a non-streamed reply; prompt_n counts the evaluated (uncached)
   *   prompt tokens, cache_n the cached ones. llama.cpp tools/server/server-task.cpp,
   *   `to_json_oaicompat_chat_stream` (`deltas.back().push_back({"timings", ...})`).
   * - 'vllm': a `metrics` object {queue_time_ms, time_to_first_token_ms, generation_time_ms,
   *   mean_itl_ms, tokens_per_second} on the usage chunk (so only with include_usage, as vLLM), and
   *   usage.prompt_tokens_details.cached_tokens. vLLM's time_to_first_token_ms runs from scheduling
   *   to the first token: the queue is NOT in it (vllm/entrypoints/generate/base/serving.py,
   *   `build_per_request_timing_metrics`).
   * llama.cpp's native /completion always carries `timings` on its last event, whatever this says.
   */
  readonly timings?: 'none' | 'llamacpp' | 'vllm';
  /**
   * Remember the prompts prefilled (the last 256) and serve the longest common word prefix with any
   * of them from the cache: only the uncached tokens cost prefill (at least one token is always
   * evaluated, as real servers do). The lookup is made when a request is admitted; a prompt is
   * remembered once its prefill completes (so two identical prompts admitted together both miss).
   * `cache_prompt: false` in a body skips the lookup (llama.cpp; the prompt is still remembered, as the
   * slot keeps it); `cache_salt` (vLLM) keeps prompts with different salts apart. Default false.
   */
  readonly prefixCache?: boolean;
  /** Each token's text carries its request's number (" tok3.12": token 3 of cm-12), so that every reply is its own text (a multi-turn test tells each turn's reply apart). Default false: " tok3". */
  readonly distinctReplies?: boolean;
  /** Write the truth log here as JSON lines ({"type":"step",…} and {"type":"request",…}); complete after close(). */
  readonly logPath?: string;
}

export interface CostModelStep {
  /** Epoch ms at which the step was scheduled to start and end. */
  readonly startAt: number;
  readonly endAt: number;
  /** Sequences decoding in the step. */
  readonly batch: number;
  readonly prefillTokens: number;
  readonly costMs: number;
}

/** One engine step as the scheduler ran it (a CostModelStep, so `steps` and `truth.steps` are one array). */
export interface TruthStep extends CostModelStep {
  /** Its position in `steps`. */
  readonly index: number;
  /** The requests decoding in it: each got one token at `endAt` (unless it went away meanwhile). */
  readonly decoding: readonly string[];
  /**
   * The requests prefilling in it, with the (uncached) prompt tokens each prefilled here; `completes`:
   * its prefill ended here, so this step also emitted its first token.
   */
  readonly prefilling: readonly { readonly id: string; readonly tokens: number; readonly completes: boolean }[];
}

/** One request as the scheduler handled it. Times are epoch ms on the scheduler's clock (scheduled, not observed). */
export interface TruthRequest {
  /** `cm-N`: the response `id` and `x-request-id`, so a client record's `responseId` finds it. */
  readonly id: string;
  readonly route: 'chat' | 'completions' | 'llamacpp';
  readonly stream: boolean;
  /** The body was read and the request joined the queue. */
  readonly acceptedAt: number;
  /**
   * It left the queue for a slot: the scheduled start of the first step planned after it got one
   * (a step never starts before the requests admitted to it arrived).
   */
  readonly admittedAt?: number;
  /** Scheduled start of the first step that prefilled any of its tokens. */
  readonly prefillStartAt?: number;
  /** Index of the step that completed its prefill; it also emitted the first token (tokenSteps[0]). */
  readonly prefillStep?: number;
  /** That step's scheduled end: when its first token was due. */
  readonly firstTokenAt?: number;
  /** Scheduled end of the step that emitted its last token so far. */
  readonly lastTokenAt?: number;
  /** admittedAt − acceptedAt: time in the server's queue. */
  readonly queueMs?: number;
  /** firstTokenAt − admittedAt: from admission to the end of the prefill step (any wait for prefill budget included). */
  readonly prefillMs?: number;
  /** Prompt tokens (whitespace-separated words of the prompt). */
  readonly promptTokens: number;
  /** Prompt tokens served from the prefix cache (0 without prefixCache, with cache_prompt:false, or no match). */
  readonly cachedTokens: number;
  readonly maxTokens: number;
  /** tokenSteps[i]: the index of the step that produced its i-th token, i.e. its i-th content chunk. */
  readonly tokenSteps: readonly number[];
  /** Whether it asked to use the prefix cache (`cache_prompt`, default true). */
  readonly cachePrompt: boolean;
  /** vLLM's `cache_salt`, when sent. */
  readonly cacheSalt?: string;
  /** Every token emitted. */
  readonly finished: boolean;
  /** The client went away first. */
  readonly cancelled: boolean;
  /** (chat) The messages it carried, in order: each one's role, content length and contentHash. */
  readonly messages?: readonly ReceivedMessage[];
  /** The content it streamed (every token emitted, as the client received them): length and contentHash; set when it ended. */
  readonly reply?: { readonly chars: number; readonly hash: string };
}

/** One message of a chat request as the server received it (its content's text: a list of parts as given, JSON). */
export interface ReceivedMessage {
  readonly role: string;
  readonly chars: number;
  readonly hash: string;
}

/** The hash the truth log gives a text: the first 16 hex digits of its SHA-256. */
export function contentHash(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 16);
}

function receivedOf(messages: readonly unknown[]): ReceivedMessage[] {
  return messages.map((m) => {
    const o = (m ?? {}) as { role?: unknown; content?: unknown };
    const text = typeof o.content === 'string' ? o.content : JSON.stringify(o.content ?? '');
    return { role: String(o.role), chars: text.length, hash: contentHash(text) };
  });
}

export interface CostModelTruth {
  readonly requests: ReadonlyMap<string, TruthRequest>;
  readonly steps: readonly TruthStep[];
}

export interface CostModelServer {
  readonly url: string;
  readonly model: string;
  readonly steps: readonly TruthStep[];
  readonly truth: CostModelTruth;
  /** Requests accepted so far. */
  readonly requests: number;
  close(): Promise<void>;
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] };
type Route = TruthRequest['route'];

interface Sequence {
  readonly id: string;
  readonly route: Route;
  readonly res: ServerResponse;
  readonly stream: boolean;
  readonly usage: boolean;
  readonly returnTokens: boolean;
  readonly words: readonly string[];
  readonly promptTokens: number;
  readonly maxTokens: number;
  readonly truth: Mutable<TruthRequest> & { tokenSteps: number[] };
  prefillLeft: number;
  emitted: number;
  decoding: boolean;
  done: boolean;
  text: string[];
  /** Every token emitted, streamed or not (the truth's reply). */
  emittedText: string[];
}

interface CacheEntry {
  readonly salt: string;
  readonly words: readonly string[];
}

const CACHE_ENTRIES = 256;

const now = (): number => performance.timeOrigin + performance.now();

/** Whole words shared at the start of both lists. */
function commonPrefix(a: readonly string[], b: readonly string[]): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a[i] === b[i]) i++;
  return i;
}

export async function startCostModelServer(options: CostModelOptions): Promise<CostModelServer> {
  const model = options.model ?? 'cost-model';
  const parallel = options.parallel ?? Number.POSITIVE_INFINITY;
  const prefillPerToken = options.prefillMsPerToken ?? 0;
  const chunk = options.prefillChunk ?? Number.POSITIVE_INFINITY;
  const timingsKind = options.timings ?? 'none';
  const steps: TruthStep[] = [];
  const truthRequests = new Map<string, TruthRequest>();
  const cache: CacheEntry[] = [];
  const queue: Sequence[] = [];
  const active: Sequence[] = [];
  let nextId = 0;
  let requests = 0;
  let clock = 0; // scheduled end of the last step
  let timer: NodeJS.Timeout | undefined;
  let closed = false;

  // the log: a step's line once it ran, a request's once it ended; the rest at close()
  const log: WriteStream | undefined = options.logPath ? createWriteStream(options.logPath) : undefined;
  const loggedSteps = new Set<number>();
  const loggedRequests = new Set<string>();
  const logStep = (st: TruthStep): void => {
    if (!log || loggedSteps.has(st.index)) return;
    loggedSteps.add(st.index);
    log.write(JSON.stringify({ type: 'step', ...st }) + '\n');
  };
  const logRequest = (r: TruthRequest): void => {
    if (!log || loggedRequests.has(r.id)) return;
    loggedRequests.add(r.id);
    log.write(JSON.stringify({ type: 'request', ...r }) + '\n');
  };

  const lookupCache = (s: Sequence): number => {
    if (!options.prefixCache || !s.truth.cachePrompt) return 0;
    const salt = s.truth.cacheSalt ?? '';
    let best = 0;
    for (const e of cache) if (e.salt === salt) best = Math.max(best, commonPrefix(e.words, s.words));
    // a server always evaluates at least the last prompt token, to get logits for the first output
    return Math.min(best, s.promptTokens - 1);
  };
  const remember = (s: Sequence): void => {
    if (!options.prefixCache) return;
    const salt = s.truth.cacheSalt ?? '';
    const same = cache.findIndex((e) => e.salt === salt && e.words.length === s.words.length && commonPrefix(e.words, s.words) === s.words.length);
    if (same >= 0) cache.splice(same, 1);
    cache.push({ salt, words: s.words });
    if (cache.length > CACHE_ENTRIES) cache.shift();
  };

  const admit = (s: Sequence, stepStartAt: number): void => {
    const t = s.truth;
    t.admittedAt = stepStartAt;
    t.queueMs = t.admittedAt - t.acceptedAt;
    t.cachedTokens = lookupCache(s);
    s.prefillLeft = s.promptTokens - t.cachedTokens;
  };

  /** `continuing`: called as the previous step ends, so this one starts at its scheduled end. */
  const schedule = (continuing = false): void => {
    if (timer || closed) return;
    let startAt = continuing ? clock : now(); // after idle, start now
    const admitted: Sequence[] = [];
    while (active.length + admitted.length < parallel && queue.length > 0) admitted.push(queue.shift()!);
    // a request that came in after the scheduled start (the timer ran late) starts the step on arrival
    for (const s of admitted) startAt = Math.max(startAt, s.truth.acceptedAt);
    for (const s of admitted) {
      admit(s, startAt);
      active.push(s);
    }
    const decoding = active.filter((s) => s.decoding && !s.done);
    let budget = chunk;
    const prefilled: { seq: Sequence; tokens: number }[] = [];
    for (const s of active) {
      if (s.decoding || s.done || budget <= 0) continue;
      const take = Math.min(budget, s.prefillLeft);
      prefilled.push({ seq: s, tokens: take });
      budget -= take;
    }
    if (decoding.length === 0 && prefilled.length === 0) return; // idle
    const prefillTokens = prefilled.reduce((a, p) => a + p.tokens, 0);
    const costMs = options.baseMs + options.kMs * decoding.length + prefillPerToken * prefillTokens;
    const endAt = startAt + costMs;
    clock = endAt;
    const index = steps.length;
    const prefilling = prefilled.map((p) => ({ id: p.seq.id, tokens: p.tokens, completes: p.tokens >= p.seq.prefillLeft }));
    const step: TruthStep = { index, startAt, endAt, batch: decoding.length, prefillTokens, costMs, decoding: decoding.map((s) => s.id), prefilling };
    steps.push(step);
    for (const { seq } of prefilled) seq.truth.prefillStartAt ??= startAt;
    timer = setTimeout(() => {
      timer = undefined;
      for (const s of decoding) if (!s.done) emit(s, step);
      for (const { seq, tokens } of prefilled) {
        if (seq.done) continue;
        seq.prefillLeft -= tokens;
        if (seq.prefillLeft <= 0) {
          seq.decoding = true;
          seq.truth.prefillStep = index;
          seq.truth.firstTokenAt = endAt;
          seq.truth.prefillMs = endAt - seq.truth.admittedAt!;
          remember(seq);
          emit(seq, step); // the step that ends the prefill yields the first token
        }
      }
      logStep(step);
      for (let i = active.length - 1; i >= 0; i--) if (active[i]!.done) active.splice(i, 1);
      schedule(true);
    }, Math.max(0, endAt - now()));
  };

  const emit = (s: Sequence, step: TruthStep): void => {
    const token = options.distinctReplies ? ` tok${s.emitted}.${s.id.slice(3)}` : ` tok${s.emitted}`;
    s.emitted++;
    s.emittedText.push(token);
    s.truth.tokenSteps.push(step.index);
    s.truth.lastTokenAt = step.endAt;
    const last = s.emitted >= s.maxTokens;
    if (last) {
      s.done = true;
      s.truth.finished = true;
      setReply(s);
    }
    if (s.route === 'llamacpp') emitNative(s, token, last);
    else if (s.stream) {
      const choice =
        s.route === 'chat'
          ? { index: 0, delta: { content: token }, finish_reason: null }
          : { index: 0, text: token, finish_reason: null };
      write(s, chunkOf(s, [choice]));
      if (last) {
        const end = s.route === 'chat' ? { index: 0, delta: {}, finish_reason: 'length' } : { index: 0, text: '', finish_reason: 'length' };
        const finish: Record<string, unknown> = chunkOf(s, [end]);
        const usageChunk: Record<string, unknown> | undefined = s.usage ? { ...chunkOf(s, []), usage: usageOf(s) } : undefined;
        // llama.cpp: timings on the last chunk of the stream; vLLM: metrics on the usage chunk only
        if (timingsKind === 'llamacpp') (usageChunk ?? finish).timings = llamaTimingsOf(s);
        if (timingsKind === 'vllm' && usageChunk) usageChunk.metrics = vllmMetricsOf(s);
        write(s, finish);
        if (usageChunk) write(s, usageChunk);
        s.res.end('data: [DONE]\n\n');
      }
    } else {
      s.text.push(token);
      if (last) {
        const body: Record<string, unknown> =
          s.route === 'chat'
            ? { id: s.id, object: 'chat.completion', created: 0, model, choices: [{ index: 0, message: { role: 'assistant', content: s.text.join('') }, finish_reason: 'length' }], usage: usageOf(s) }
            : { id: s.id, object: 'text_completion', created: 0, model, choices: [{ index: 0, text: s.text.join(''), finish_reason: 'length' }], usage: usageOf(s) };
        if (timingsKind === 'llamacpp') body.timings = llamaTimingsOf(s);
        if (timingsKind === 'vllm') body.metrics = vllmMetricsOf(s);
        s.res.writeHead(200, { 'content-type': 'application/json', 'x-request-id': s.id }).end(JSON.stringify(body));
      }
    }
    if (last) logRequest(s.truth);
  };

  const setReply = (s: Sequence): void => {
    const text = s.emittedText.join('');
    s.truth.reply = { chars: text.length, hash: contentHash(text) };
  };

  /** llama.cpp's /completion: one event per token, the last with stop, the counts and timings; no [DONE]. */
  const emitNative = (s: Sequence, token: string, last: boolean): void => {
    const tokens = s.returnTokens ? [1000 + s.emitted] : [];
    if (s.stream) {
      s.res.write(`data: ${JSON.stringify({ index: 0, content: token, tokens, stop: false, id_slot: -1, tokens_predicted: s.emitted, tokens_evaluated: s.promptTokens })}\n\n`);
      if (last) s.res.end(`data: ${JSON.stringify(nativeFinal(s, ''))}\n\n`);
    } else {
      s.text.push(token);
      if (last) s.res.writeHead(200, { 'content-type': 'application/json', 'x-request-id': s.id }).end(JSON.stringify(nativeFinal(s, s.text.join(''))));
    }
  };
  const nativeFinal = (s: Sequence, content: string) => ({
    index: 0,
    content,
    tokens: [],
    id_slot: 0,
    stop: true,
    model,
    tokens_predicted: s.emitted,
    tokens_evaluated: s.promptTokens,
    generation_settings: { n_predict: s.maxTokens, stream: s.stream },
    prompt: '',
    has_new_line: false,
    truncated: false,
    stop_type: 'limit',
    stopping_word: '',
    tokens_cached: s.promptTokens + s.emitted,
    timings: llamaTimingsOf(s),
  });

  const chunkOf = (s: Sequence, choices: unknown[]): Record<string, unknown> => ({
    id: s.id,
    object: s.route === 'chat' ? 'chat.completion.chunk' : 'text_completion',
    created: 0,
    model,
    choices,
  });
  const usageOf = (s: Sequence) => {
    const usage: Record<string, unknown> = { prompt_tokens: s.promptTokens, completion_tokens: s.emitted, total_tokens: s.promptTokens + s.emitted };
    if (timingsKind === 'vllm') usage.prompt_tokens_details = { cached_tokens: s.truth.cachedTokens };
    return usage;
  };
  // nlohmann::json writes a non-finite double as null, as llama.cpp's server does for 0 ms
  const finite = (v: number): number | null => (Number.isFinite(v) ? v : null);
  const llamaTimingsOf = (s: Sequence) => {
    const t = s.truth;
    const promptN = s.promptTokens - t.cachedTokens;
    const promptMs = t.prefillMs!;
    const predictedMs = t.lastTokenAt! - t.firstTokenAt!;
    return {
      cache_n: t.cachedTokens,
      prompt_n: promptN,
      prompt_ms: promptMs,
      prompt_per_token_ms: finite(promptMs / promptN),
      prompt_per_second: finite((1e3 / promptMs) * promptN),
      predicted_n: s.emitted,
      predicted_ms: predictedMs,
      predicted_per_token_ms: finite(predictedMs / s.emitted),
      predicted_per_second: finite((1e3 / predictedMs) * s.emitted),
    };
  };
  const vllmMetricsOf = (s: Sequence) => {
    const t = s.truth;
    const generation = t.lastTokenAt! - t.firstTokenAt!;
    const metrics: Record<string, number> = {
      time_to_first_token_ms: t.firstTokenAt! - t.admittedAt!,
      generation_time_ms: generation,
      queue_time_ms: t.queueMs!,
    };
    // vLLM serializes with exclude_none: no mean ITL for a single token
    if (s.emitted > 1) metrics.mean_itl_ms = generation / (s.emitted - 1);
    const inference = t.lastTokenAt! - t.admittedAt!;
    if (inference > 0) metrics.tokens_per_second = (s.emitted / inference) * 1000;
    return metrics;
  };
  const write = (s: Sequence, obj: unknown): void => {
    s.res.write(`data: ${JSON.stringify(obj)}\n\n`);
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: String(err) } }));
    });
  });

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = (req.url ?? '/').split('?')[0]!;
    if (req.method === 'GET' && path === '/health') {
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok"}');
      return;
    }
    if (req.method === 'GET' && path === '/v1/models') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ object: 'list', data: [{ id: model, object: 'model', owned_by: 'test' }] }));
      return;
    }
    const route: Route | undefined = path === '/v1/chat/completions' ? 'chat' : path === '/v1/completions' ? 'completions' : path === '/completion' ? 'llamacpp' : undefined;
    if (req.method !== 'POST' || !route) {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"message":"not found"}}');
      return;
    }
    const body = await readJsonBody(req);
    if (!body) {
      res.writeHead(400, { 'content-type': 'application/json' }).end('{"error":{"message":"bad JSON"}}');
      return;
    }
    const text =
      route === 'chat'
        ? (Array.isArray(body.messages) ? body.messages : []).map((m) => String((m as { content?: unknown }).content ?? '')).join(' ')
        : String(body.prompt ?? '');
    const words = text.split(/\s+/).filter(Boolean);
    const promptTokens = Math.max(1, words.length);
    const maxTokens = Math.max(1, Number(body.max_tokens ?? body.max_completion_tokens ?? body.n_predict ?? options.defaultMaxTokens ?? 16) | 0);
    const stream = body.stream === true;
    const so = body.stream_options as { include_usage?: boolean } | undefined;
    requests++;
    const id = `cm-${nextId++}`;
    const truth: Sequence['truth'] = {
      id,
      route,
      stream,
      acceptedAt: now(),
      promptTokens,
      cachedTokens: 0,
      maxTokens,
      tokenSteps: [],
      cachePrompt: body.cache_prompt !== false,
      finished: false,
      cancelled: false,
    };
    if (typeof body.cache_salt === 'string') truth.cacheSalt = body.cache_salt;
    if (route === 'chat' && Array.isArray(body.messages)) truth.messages = receivedOf(body.messages);
    truthRequests.set(id, truth);
    const seq: Sequence = {
      id,
      route,
      res,
      stream,
      usage: so?.include_usage === true,
      returnTokens: body.return_tokens === true,
      words: words.length > 0 ? words : [''],
      promptTokens,
      maxTokens,
      truth,
      prefillLeft: promptTokens,
      emitted: 0,
      decoding: false,
      done: false,
      text: [],
      emittedText: [],
    };
    if (stream) {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'x-request-id': seq.id });
      if (route === 'chat') write(seq, chunkOf(seq, [{ index: 0, delta: { role: 'assistant' }, finish_reason: null }]));
    }
    // a client that goes away frees its slot at once
    res.on('close', () => {
      if (!seq.done) {
        seq.done = true;
        truth.cancelled = true;
        setReply(seq);
        const qi = queue.indexOf(seq);
        if (qi >= 0) queue.splice(qi, 1);
        logRequest(truth);
      }
    });
    queue.push(seq);
    schedule();
  };

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  let closing: Promise<void> | undefined;
  return {
    url: `http://127.0.0.1:${port}`,
    model,
    steps,
    truth: { requests: truthRequests, steps },
    get requests() {
      return requests;
    },
    close() {
      closing ??= (async () => {
        closed = true;
        if (timer) clearTimeout(timer);
        timer = undefined;
        for (const s of [...queue, ...active]) if (!s.res.writableEnded) s.res.destroy();
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
        if (log) {
          for (const st of steps) logStep(st);
          for (const r of truthRequests.values()) logRequest(r);
          await new Promise<void>((resolve, reject) => log.end((err?: Error | null) => (err ? reject(err) : resolve())));
        }
      })();
      return closing;
    },
  };
}

/**
 * The true cause of a gap in one stream: the requests whose prompt tokens were prefilled in the step
 * that produced chunk `atChunk` of request `responseId` (itself excluded). With one token per step,
 * the gap before that chunk is exactly that step, so these are the culprits an attribution should name.
 */
export function truthCulprits(server: { readonly truth: CostModelTruth }, responseId: string, atChunk: number): string[] {
  const r = server.truth.requests.get(responseId);
  if (!r) throw new Error(`no request ${responseId} in the truth log`);
  const stepIndex = r.tokenSteps[atChunk];
  if (stepIndex === undefined) throw new Error(`${responseId} has no chunk ${atChunk} (it emitted ${r.tokenSteps.length})`);
  return server.truth.steps[stepIndex]!.prefilling.map((p) => p.id).filter((id) => id !== responseId);
}
