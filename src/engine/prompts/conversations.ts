// Conversations: what a multi-turn run's sessions send. A dataset's lines read as conversations
// (`--multi-turn`), or synthetic chats (`--chat`). A conversation is its user turns in order; the
// assistant turns a dataset holds are never sent (the history carries the replies as the server
// streamed them, run/sessions.ts), only their length, as vLLM reads ShareGPT. The dataset is read
// through the untrusted dataset read (dataset.ts), a bad line refused naming its line.
import type { ChatMessage, Prompt, WorkloadSpec } from '../core/types';
import { isObject } from '../core/json';
import { Rng } from '../core/random';
import { datasetEntries, positiveInt, readDataset, role, SHAREGPT_ROLES } from './dataset';
import { estimatePromptTokens, estimateTokens, numberWords, syntheticPrompt, WORDS } from './syntheticPrompts';

/** The most user turns one conversation may have: a session is sent turn by turn, each carrying all before it. */
export const MAX_TURNS = 1000;
/** The longest think time a turn may ask for, ms (an hour, as --think-time): a run waits it out. */
export const MAX_THINK_TIME_MS = 3_600_000;
/** The longest session_id kept. */
const MAX_SESSION_ID = 256;

/** One user turn: what it adds to the history, then waits for the reply. */
export interface ConversationTurn {
  /** The system messages given since the last user message, then the user's. */
  readonly messages: readonly ChatMessage[];
  /** Its reply's length: the turn's own max_tokens, else the line's, else the dataset reply's length. */
  readonly maxTokens?: number;
  /** Wait this long after the previous reply ended before sending this turn (the turn's own, else the line's). */
  readonly thinkTimeMs?: number;
}

export interface Conversation {
  /** Where it came from: "file:3" (a line), "file[2]" (an array entry), "chat". */
  readonly source: string;
  /** The line's session_id, when it gave one. */
  readonly id?: string;
  readonly turns: readonly ConversationTurn[];
}

/** One speaker's entry of a conversation line, before turns are made of them. */
interface Entry {
  readonly role: ChatMessage['role'];
  readonly content: string;
  readonly maxTokens?: number;
  readonly thinkTimeMs?: number;
}

function thinkTime(value: unknown, key: string): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > MAX_THINK_TIME_MS) throw new Error(`"${key}" must be a number of ms from 0 to ${MAX_THINK_TIME_MS}`);
  return value;
}

/** `{"role", "content", "max_tokens"?, "think_time_ms"?}`: an entry of `turns` (or of `messages`). */
function turnEntry(x: unknown, where: string): Entry {
  if (!isObject(x)) throw new Error(`${where} must be an object`);
  if (typeof x.content !== 'string') throw new Error(`${where}.content must be a string`);
  const maxTokens = positiveInt(x.max_tokens, `${where}.max_tokens`);
  const think = thinkTime(x.think_time_ms, `${where}.think_time_ms`);
  return { role: role(x.role, where), content: x.content, ...(maxTokens !== undefined ? { maxTokens } : {}), ...(think !== undefined ? { thinkTimeMs: think } : {}) };
}

/** `{"from", "value"}`: an entry of ShareGPT's `conversations`. */
function shareGptEntry(x: unknown, where: string): Entry {
  if (!isObject(x) || typeof x.value !== 'string') throw new Error(`${where} needs "from" and a string "value"`);
  const r = SHAREGPT_ROLES[String(x.from).toLowerCase()];
  if (!r) throw new Error(`${where}.from: unknown speaker ${JSON.stringify(x.from)}`);
  return { role: r, content: x.value };
}

function entriesOf(o: Record<string, unknown>): { entries: Entry[]; key: string } {
  const list = (key: string, each: (x: unknown, where: string) => Entry) => ({ entries: (o[key] as unknown[]).map((x, i) => each(x, `${key}[${i}]`)), key });
  if (Array.isArray(o.turns)) return list('turns', turnEntry);
  if (Array.isArray(o.conversations)) return list('conversations', shareGptEntry);
  if (Array.isArray(o.messages)) return list('messages', turnEntry);
  if (typeof o.prompt === 'string') return { entries: [{ role: 'user', content: o.prompt }], key: 'prompt' };
  throw new Error('expected a conversation: "turns" (a list of {role, content}), "conversations" (ShareGPT), "messages" (a list) or "prompt" (a string)');
}

/**
 * The user turns of a speaker list: each user entry ends a turn (with the system entries before it);
 * an assistant entry is not sent, its length is the output length of the turn before it (when
 * neither that turn nor the line gives max_tokens). `line`: the line's own max_tokens and think time.
 */
function turnsOf(entries: readonly Entry[], key: string, line: { maxTokens?: number; thinkTimeMs?: number }): ConversationTurn[] {
  const turns: { messages: ChatMessage[]; own?: number; replyLength?: number; thinkTimeMs?: number }[] = [];
  let pending: ChatMessage[] = [];
  entries.forEach((e, i) => {
    if (e.role === 'assistant') {
      const last = turns[turns.length - 1];
      if (last && last.replyLength === undefined) last.replyLength = Math.max(1, estimateTokens(e.content));
      return;
    }
    pending.push({ role: e.role, content: e.content });
    if (e.role !== 'user') return;
    if (turns.length === MAX_TURNS) throw new Error(`${key}[${i}]: more than ${MAX_TURNS} user turns in one conversation`);
    const think = e.thinkTimeMs ?? line.thinkTimeMs;
    turns.push({ messages: pending, ...(e.maxTokens !== undefined ? { own: e.maxTokens } : {}), ...(think !== undefined ? { thinkTimeMs: think } : {}) });
    pending = [];
  });
  if (turns.length === 0) throw new Error('no user turn');
  if (pending.length > 0) throw new Error(`${key}: a system message after the last user turn would never be sent`);
  return turns.map((t) => {
    const maxTokens = t.own ?? line.maxTokens ?? t.replyLength;
    return { messages: t.messages, ...(maxTokens !== undefined ? { maxTokens } : {}), ...(t.thinkTimeMs !== undefined ? { thinkTimeMs: t.thinkTimeMs } : {}) };
  });
}

function sessionIdOf(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  if (typeof value === 'string' && value.length <= MAX_SESSION_ID) return value;
  throw new Error(`"session_id" must be a string of at most ${MAX_SESSION_ID} characters, or a number`);
}

/**
 * One line of a multi-turn dataset as a conversation. Accepted: `{"session_id"?, "turns": [{"role":
 * "user"|"system"|"assistant", "content", "max_tokens"?, "think_time_ms"?}]}`, ShareGPT
 * `{"conversations": [{"from", "value"}]}`, `{"messages": [...]}` (as `turns`), and `{"prompt"}` (one
 * turn); the line's own "max_tokens" / "output_len" and "think_time_ms" apply to every turn that
 * gives none.
 */
export function parseConversation(value: unknown, source: string): Conversation {
  if (!isObject(value)) throw new Error('expected a JSON object');
  const maxTokens = positiveInt(value.max_tokens, 'max_tokens') ?? positiveInt(value.output_len, 'output_len');
  const think = thinkTime(value.think_time_ms, 'think_time_ms');
  const id = sessionIdOf(value.session_id);
  const { entries, key } = entriesOf(value);
  const turns = turnsOf(entries, key, { ...(maxTokens !== undefined ? { maxTokens } : {}), ...(think !== undefined ? { thinkTimeMs: think } : {}) });
  return { source, ...(id !== undefined ? { id } : {}), turns };
}

/** A multi-turn dataset's conversations (JSON Lines or one JSON array); a bad line throws DatasetError naming it. */
export function parseConversations(text: string, name = 'dataset'): Conversation[] {
  return datasetEntries(text, name, parseConversation, 'conversations');
}

/** Reads a multi-turn dataset as untrusted (dataset.ts's read) and parses its conversations. */
export async function loadConversations(path: string, maxBytes?: number): Promise<Conversation[]> {
  return parseConversations(await readDataset(path, maxBytes), path);
}

/**
 * The session's number in words, least significant first: two sessions' first turns differ from their
 * first word. Capitalised: apart from the warmup's synthetic prompts, led by lower-case words.
 */
function sessionLead(k: number): string[] {
  return [...numberWords(k).reverse().map((w) => w[0]!.toUpperCase() + w.slice(1)), 'session'];
}

/**
 * Synthetic session k (`--chat`): `turns` user turns of `userTokens` words each (≈ tokens, as
 * syntheticPrompt's words), drawn from a generator seeded by the seed, the session and the turn. The
 * first turn leads with the session's number, so no two sessions share history, nor a session and the
 * warmup's synthetic prompts.
 */
export function chatConversation(k: number, chat: { readonly turns: number; readonly userTokens: number }, seed = 0): Conversation {
  const n = Math.max(1, Math.floor(chat.userTokens));
  const turns: ConversationTurn[] = [];
  for (let t = 0; t < chat.turns; t++) {
    const rng = new Rng(seed * 1_000_003 + k * 7919 + t * 31 + 0x5e55);
    const words = t === 0 ? sessionLead(k).slice(0, n) : [];
    while (words.length < n) words.push(WORDS[rng.int(WORDS.length)]!);
    turns.push({ messages: [{ role: 'user', content: words.join(' ') }] });
  }
  return { source: 'synthetic chat', turns };
}

/** The prompt of one turn: the history, then what the turn adds; sent with the turn's own output length. */
export function turnPrompt(history: readonly ChatMessage[], turn: ConversationTurn, source: string): Prompt {
  const messages = [...history, ...turn.messages];
  return { messages, source, estimatedTokens: estimatePromptTokens(messages), ...(turn.maxTokens !== undefined ? { maxTokens: turn.maxTokens } : {}) };
}

/** A whole conversation as one prompt (every turn's messages, no replies): what a job sizes a server's context by, before it runs. */
export function wholeConversation(c: Conversation): Prompt {
  return turnPrompt(c.turns.slice(0, -1).flatMap((t) => t.messages), c.turns[c.turns.length - 1]!, c.source);
}

/** What a multi-turn run's sessions send: session k's conversation, and the warmup's single requests. */
export interface SessionSource {
  /** The dataset's conversations (session k sends conversation k mod this); undefined: synthetic, as many as asked. */
  readonly conversations?: number;
  conversation(k: number): Conversation;
  /** The user turns session k sends. */
  turnsOf(k: number): number;
  /** Warmup request k: a single synthetic prompt the size of a first turn, sharing no session's text. */
  warmupPrompt(k: number): Prompt;
}

/** The sessions of a chat workload or a multi-turn dataset (read now). */
export async function sessionSource(w: WorkloadSpec): Promise<SessionSource> {
  const p = w.prompt;
  if (p.kind === 'chat') {
    return {
      conversation: (k) => chatConversation(k, p, w.seed),
      turnsOf: () => p.turns,
      warmupPrompt: (k) => syntheticPrompt(k, p.userTokens, { seed: w.seed }),
    };
  }
  if (p.kind !== 'dataset') throw new Error(`the ${p.kind} prompt source has no conversations`);
  const list = await loadConversations(p.path);
  const firstTurn = Math.max(1, estimatePromptTokens(list[0]!.turns[0]!.messages));
  return {
    conversations: list.length,
    conversation: (k) => list[k % list.length]!,
    turnsOf: (k) => list[k % list.length]!.turns.length,
    warmupPrompt: (k) => syntheticPrompt(k, firstTurn, { seed: w.seed }),
  };
}

/** Turns the first `sessions` sessions send in all (the run's planned requests). */
export function plannedTurns(source: SessionSource, sessions: number): number {
  let n = 0;
  for (let k = 0; k < sessions; k++) n += source.turnsOf(k);
  return n;
}
