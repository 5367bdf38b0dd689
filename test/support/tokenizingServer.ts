// An OpenAI-compatible server whose token counts are not one per word, with a chat template around
// every prompt, and a tokenizer endpoint in vLLM's shape, llama.cpp's (with or without its
// /apply-template), or none: what sizing a synthetic prompt to the length asked has to get right
// (src/engine/run/promptLength.ts). Its tokenizer: a run of letters is one token per four letters,
// a digit or any other visible character one token each, a chat marker ("<|im_start|>", "<|im_end|>")
// one token, BOS one more; a chat is ChatML (as the bundled server's synthetic models use it). Every
// reply's usage.prompt_tokens is that count; replies stream `max_tokens` one-word chunks. Its tokenizer
// routes can misbehave (TokenizerFault: late, never, a body far too large, counts that lie), and it
// logs when each tokenizer request came.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { chatML } from '../../src/localServer/inference';
import { listenOnLoopback } from './listen';
import { readJsonBody } from './requestBody';

export type TokenizeShape = 'vllm' | 'llama.cpp' | 'llama.cpp-text' | 'none';

const MARKERS = ['<|im_start|>', '<|im_end|>'];

/** Tokens of text as this server counts them (markers parsed as one token each); `lettersPerToken`: Infinity makes every word one token. */
export function countTokens(text: string, lettersPerToken = 4): number {
  let n = 0;
  let i = 0;
  while (i < text.length) {
    const marker = MARKERS.find((m) => text.startsWith(m, i));
    if (marker) {
      n++;
      i += marker.length;
      continue;
    }
    const c = text[i]!;
    if (/[A-Za-z]/.test(c)) {
      let j = i;
      while (j < text.length && /[A-Za-z]/.test(text[j]!)) j++;
      n += Number.isFinite(lettersPerToken) ? Math.ceil((j - i) / lettersPerToken) : 1;
      i = j;
      continue;
    }
    if (!/\s/.test(c)) n++;
    i++;
  }
  return n;
}

type Message = { role: string; content: string };

/** A chat's prompt tokens as this server counts them: BOS and the ChatML text. */
export function chatTokens(messages: readonly Message[], lettersPerToken = 4): number {
  return 1 + countTokens(chatML(messages), lettersPerToken);
}

/** How the tokenizer routes misbehave: answer late, never, with a body far too large, or with a count scaled (a tokenizer that lies). */
export interface TokenizerFault {
  readonly delayMs?: number;
  readonly hang?: boolean;
  /** Bytes of a body that never ends in JSON (written in 64 KiB chunks as the client reads). */
  readonly hugeBytes?: number;
  /** Its counts times this (0.2: a tokenizer that counts five times too few). */
  readonly scale?: number;
}

export interface TokenizingServer {
  readonly url: string;
  /** Requests per "METHOD path". */
  readonly hits: Readonly<Record<string, number>>;
  /** Each tokenizer request (/tokenize, /apply-template): its path and when it arrived (performance.now()). */
  readonly tokenizerLog: readonly { readonly path: string; readonly at: number }[];
  /** Each chat or completion request's prompt tokens, in arrival order. */
  readonly promptTokens: readonly number[];
  close(): Promise<void>;
}

const messagesOf = (b: Record<string, unknown>): Message[] =>
  Array.isArray(b.messages) ? (b.messages as { role: string; content: unknown }[]).map((m) => ({ role: m.role, content: typeof m.content === 'string' ? m.content : '' })) : [];

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

/** A body of `bytes` that is no JSON, written as fast as the client reads it (stops when it goes away). */
function hugeBody(res: ServerResponse, bytes: number): void {
  res.writeHead(200, { 'content-type': 'application/json' });
  const chunk = Buffer.alloc(65536, 0x20);
  let left = bytes;
  const more = (): void => {
    while (left > 0 && !res.destroyed) {
      left -= chunk.length;
      if (!res.write(chunk)) {
        res.once('drain', more);
        return;
      }
    }
    res.end();
  };
  more();
}

/** The tokenizer routes of `shape`; false when the request is not one of them. */
function tokenizer(shape: TokenizeShape, path: string, b: Record<string, unknown>, res: ServerResponse, lpt: number, scale: number): boolean {
  if (shape === 'none' || (path !== '/tokenize' && path !== '/apply-template')) return false;
  if (shape === 'vllm') {
    if (path !== '/tokenize') return false;
    // vLLM: messages get the chat template (and its generation prompt); a prompt gets BOS
    const exact = Array.isArray(b.messages) ? chatTokens(messagesOf(b), lpt) : typeof b.prompt === 'string' ? 1 + countTokens(b.prompt, lpt) : undefined;
    const count = exact === undefined ? undefined : Math.round(exact * scale);
    if (count === undefined) json(res, 400, { object: 'error', message: 'messages or prompt required' });
    else json(res, 200, { count, max_model_len: 8192, tokens: Array.from({ length: count }, (_, i) => i) });
    return true;
  }
  if (path === '/apply-template') {
    if (shape === 'llama.cpp-text') return false;
    json(res, 200, { prompt: chatML(messagesOf(b)) });
    return true;
  }
  // llama.cpp: no content, no tokens; add_special adds BOS
  const n = Math.round((typeof b.content === 'string' ? countTokens(b.content, lpt) + (b.add_special === true ? 1 : 0) : 0) * scale);
  json(res, 200, { tokens: Array.from({ length: n }, (_, i) => i) });
  return true;
}

function reply(res: ServerResponse, chat: boolean, promptTokens: number, maxTokens: number): void {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  const chunk = (text: string) => (chat ? { choices: [{ index: 0, delta: { content: text }, finish_reason: null }] } : { choices: [{ index: 0, text, finish_reason: null }] });
  for (let i = 0; i < maxTokens; i++) res.write(`data: ${JSON.stringify({ id: 'tok-1', object: 'x', ...chunk(' word') })}\n\n`);
  res.write(`data: ${JSON.stringify({ id: 'tok-1', choices: [], usage: { prompt_tokens: promptTokens, completion_tokens: maxTokens, total_tokens: promptTokens + maxTokens } })}\n\n`);
  res.end('data: [DONE]\n\n');
}

/**
 * `lettersPerToken`: how many letters of a word make a token (4; Infinity: every word is one token,
 * as the common tokenizers make the synthetic words, where only the template and the nonce add).
 */
export async function startTokenizingServer(shape: TokenizeShape, options: { readonly lettersPerToken?: number; readonly model?: string; readonly fault?: TokenizerFault } = {}): Promise<TokenizingServer> {
  const model = options.model ?? 'tok-model';
  const lpt = options.lettersPerToken ?? 4;
  const fault = options.fault ?? {};
  const hits: Record<string, number> = {};
  const tokenizerLog: { path: string; at: number }[] = [];
  const promptTokens: number[] = [];
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = (req.url ?? '/').split('?')[0]!;
    hits[`${req.method} ${path}`] = (hits[`${req.method} ${path}`] ?? 0) + 1;
    if (req.method === 'GET' && path === '/v1/models') return json(res, 200, { object: 'list', data: [{ id: model, object: 'model' }] });
    if (req.method !== 'POST') return json(res, 404, { error: 'not found' });
    const b = (await readJsonBody(req)) ?? {};
    if (shape !== 'none' && (path === '/tokenize' || path === '/apply-template')) {
      tokenizerLog.push({ path, at: performance.now() });
      if (fault.hang) return; // never answers (the socket is destroyed at close)
      if (fault.hugeBytes !== undefined) return hugeBody(res, fault.hugeBytes);
      if (fault.delayMs !== undefined) await new Promise((r) => setTimeout(r, fault.delayMs));
    }
    if (tokenizer(shape, path, b, res, lpt, fault.scale ?? 1)) return;
    const chat = path === '/v1/chat/completions';
    if (!chat && path !== '/v1/completions') return json(res, 404, { error: { message: `no route for POST ${path}` } });
    const n = chat ? chatTokens(messagesOf(b), lpt) : 1 + countTokens(typeof b.prompt === 'string' ? b.prompt : '', lpt);
    promptTokens.push(n);
    reply(res, chat, n, typeof b.max_tokens === 'number' ? b.max_tokens : 4);
  };
  const server = createServer((req, res) => void handle(req, res).catch(() => res.destroy()));
  const { url, sockets } = await listenOnLoopback(server);
  return {
    url,
    hits,
    tokenizerLog,
    promptTokens,
    close: () => new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      server.close(() => resolve());
    }),
  };
}
