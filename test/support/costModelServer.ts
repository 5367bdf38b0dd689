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
// Speaks OpenAI /v1/chat/completions and /v1/completions (SSE, with the usage chunk when
// stream_options.include_usage is set, and non-streaming), /v1/models and /health. Prompt tokens
// are counted as whitespace-separated words of the prompt text (every message's content joined).
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface CostModelOptions {
  readonly baseMs: number;
  readonly kMs: number;
  /** Prefill cost per prompt token, ms (default 0). */
  readonly prefillMsPerToken?: number;
  /** Prompt tokens per step (chunked prefill); undefined: a whole prompt in one step. */
  readonly prefillChunk?: number;
  /** Sequences admitted at once (the server's slots); more wait in a queue. Default unlimited. */
  readonly parallel?: number;
  readonly model?: string;
  /** Output tokens when a request gives no max_tokens. Default 16. */
  readonly defaultMaxTokens?: number;
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

export interface CostModelServer {
  readonly url: string;
  readonly model: string;
  readonly steps: readonly CostModelStep[];
  /** Requests accepted so far. */
  readonly requests: number;
  close(): Promise<void>;
}

interface Sequence {
  readonly id: string;
  readonly kind: 'chat' | 'completions';
  readonly res: ServerResponse;
  readonly stream: boolean;
  readonly usage: boolean;
  readonly promptTokens: number;
  readonly maxTokens: number;
  prefillLeft: number;
  emitted: number;
  decoding: boolean;
  done: boolean;
  text: string[];
}

const now = (): number => performance.timeOrigin + performance.now();

export async function startCostModelServer(options: CostModelOptions): Promise<CostModelServer> {
  const model = options.model ?? 'cost-model';
  const parallel = options.parallel ?? Number.POSITIVE_INFINITY;
  const prefillPerToken = options.prefillMsPerToken ?? 0;
  const chunk = options.prefillChunk ?? Number.POSITIVE_INFINITY;
  const steps: CostModelStep[] = [];
  const queue: Sequence[] = [];
  const active: Sequence[] = [];
  let nextId = 0;
  let requests = 0;
  let clock = 0; // scheduled end of the last step
  let timer: NodeJS.Timeout | undefined;
  let closed = false;

  /** `continuing`: called as the previous step ends, so this one starts at its scheduled end. */
  const schedule = (continuing = false): void => {
    if (timer || closed) return;
    while (active.length < parallel && queue.length > 0) active.push(queue.shift()!);
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
    const startAt = continuing ? clock : now(); // after idle, start now
    const endAt = startAt + costMs;
    clock = endAt;
    steps.push({ startAt, endAt, batch: decoding.length, prefillTokens, costMs });
    timer = setTimeout(() => {
      timer = undefined;
      for (const s of decoding) if (!s.done) emit(s);
      for (const { seq, tokens } of prefilled) {
        if (seq.done) continue;
        seq.prefillLeft -= tokens;
        if (seq.prefillLeft <= 0) {
          seq.decoding = true;
          emit(seq); // the step that ends the prefill yields the first token
        }
      }
      for (let i = active.length - 1; i >= 0; i--) if (active[i]!.done) active.splice(i, 1);
      schedule(true);
    }, Math.max(0, endAt - now()));
  };

  const emit = (s: Sequence): void => {
    const token = ` tok${s.emitted}`;
    s.emitted++;
    const last = s.emitted >= s.maxTokens;
    if (s.stream) {
      const choice =
        s.kind === 'chat'
          ? { index: 0, delta: { content: token }, finish_reason: null }
          : { index: 0, text: token, finish_reason: null };
      write(s, chunkOf(s, [choice]));
      if (last) {
        const end = s.kind === 'chat' ? { index: 0, delta: {}, finish_reason: 'length' } : { index: 0, text: '', finish_reason: 'length' };
        write(s, chunkOf(s, [end]));
        if (s.usage) write(s, { ...chunkOf(s, []), usage: usageOf(s) });
        s.res.end('data: [DONE]\n\n');
      }
    } else {
      s.text.push(token);
      if (last) {
        const body =
          s.kind === 'chat'
            ? { id: s.id, object: 'chat.completion', created: 0, model, choices: [{ index: 0, message: { role: 'assistant', content: s.text.join('') }, finish_reason: 'length' }], usage: usageOf(s) }
            : { id: s.id, object: 'text_completion', created: 0, model, choices: [{ index: 0, text: s.text.join(''), finish_reason: 'length' }], usage: usageOf(s) };
        s.res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      }
    }
    if (last) s.done = true;
  };

  const chunkOf = (s: Sequence, choices: unknown[]) => ({
    id: s.id,
    object: s.kind === 'chat' ? 'chat.completion.chunk' : 'text_completion',
    created: 0,
    model,
    choices,
  });
  const usageOf = (s: Sequence) => ({ prompt_tokens: s.promptTokens, completion_tokens: s.emitted, total_tokens: s.promptTokens + s.emitted });
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
    const kind = path === '/v1/chat/completions' ? 'chat' : path === '/v1/completions' ? 'completions' : undefined;
    if (req.method !== 'POST' || !kind) {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"message":"not found"}}');
      return;
    }
    const parts: Buffer[] = [];
    for await (const c of req) parts.push(c as Buffer);
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(Buffer.concat(parts).toString('utf8')) as Record<string, unknown>;
    } catch {
      res.writeHead(400, { 'content-type': 'application/json' }).end('{"error":{"message":"bad JSON"}}');
      return;
    }
    const text =
      kind === 'chat'
        ? (Array.isArray(body.messages) ? body.messages : []).map((m) => String((m as { content?: unknown }).content ?? '')).join(' ')
        : String(body.prompt ?? '');
    const promptTokens = Math.max(1, text.split(/\s+/).filter(Boolean).length);
    const maxTokens = Math.max(1, Number(body.max_tokens ?? body.max_completion_tokens ?? options.defaultMaxTokens ?? 16) | 0);
    const stream = body.stream === true;
    const so = body.stream_options as { include_usage?: boolean } | undefined;
    requests++;
    const seq: Sequence = {
      id: `cm-${nextId++}`,
      kind,
      res,
      stream,
      usage: so?.include_usage === true,
      promptTokens,
      maxTokens,
      prefillLeft: promptTokens,
      emitted: 0,
      decoding: false,
      done: false,
      text: [],
    };
    if (stream) {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'x-request-id': seq.id });
      if (kind === 'chat') write(seq, chunkOf(seq, [{ index: 0, delta: { role: 'assistant' }, finish_reason: null }]));
    }
    // a client that goes away frees its slot at once
    res.on('close', () => {
      if (!seq.done) {
        seq.done = true;
        const qi = queue.indexOf(seq);
        if (qi >= 0) queue.splice(qi, 1);
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
  return {
    url: `http://127.0.0.1:${port}`,
    model,
    steps,
    get requests() {
      return requests;
    },
    async close() {
      closed = true;
      if (timer) clearTimeout(timer);
      timer = undefined;
      for (const s of [...queue, ...active]) if (!s.res.writableEnded) s.res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
