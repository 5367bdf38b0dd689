// JSONL datasets: one prompt per line, in the shapes people already have.
import { constants } from 'node:buffer';
import type { ChatMessage, Prompt } from '../core/types';
import { estimatePromptTokens, estimateTokens } from './syntheticPrompts';
import { isObject } from '../core/json';
import { toolDefinitions } from '../core/toolDefinitions';
import { readUntrustedFile, UntrustedFileError } from '../files/untrustedFile';

export class DatasetError extends Error {
  override readonly name = 'DatasetError';
  constructor(message: string, readonly line?: number) {
    super(message);
  }
}

export const SHAREGPT_ROLES: Readonly<Record<string, ChatMessage['role']>> = {
  human: 'user',
  user: 'user',
  gpt: 'assistant',
  assistant: 'assistant',
  chatgpt: 'assistant',
  bard: 'assistant',
  bing: 'assistant',
  model: 'assistant',
  system: 'system',
};

export function role(value: unknown, where: string): ChatMessage['role'] {
  if (value === 'system' || value === 'user' || value === 'assistant') return value;
  if (value === 'developer') return 'system';
  throw new Error(`${where}: role must be system, user or assistant, got ${JSON.stringify(value)}`);
}

export function positiveInt(value: unknown, key: string): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) throw new Error(`"${key}" must be a whole number ≥ 1`);
  return value;
}

/**
 * One line of a dataset. Accepted: {"prompt": "..."}, {"messages": [{"role", "content"}]},
 * ShareGPT {"conversations": [{"from", "value"}]} (the turns up to the first human turn are the
 * prompt; the reply after it, when present, sets the output length as vLLM does), each with an
 * optional "max_tokens" / "output_len" and "tools" (OpenAI's function definitions).
 */
function parseLine(value: unknown, source: string): Prompt {
  if (!isObject(value)) throw new Error('expected a JSON object');
  const o = value;
  let maxTokens = positiveInt(o.max_tokens, 'max_tokens') ?? positiveInt(o.output_len, 'output_len');
  let messages: ChatMessage[];
  if (typeof o.prompt === 'string') {
    messages = [{ role: 'user', content: o.prompt }];
  } else if (Array.isArray(o.messages)) {
    messages = o.messages.map((m, i) => {
      if (m === null || typeof m !== 'object') throw new Error(`messages[${i}] must be an object`);
      const mm = m as Record<string, unknown>;
      if (typeof mm.content !== 'string') throw new Error(`messages[${i}].content must be a string`);
      return { role: role(mm.role, `messages[${i}]`), content: mm.content };
    });
  } else if (Array.isArray(o.conversations)) {
    messages = [];
    const turns = o.conversations;
    let i = 0;
    for (; i < turns.length; i++) {
      const t = turns[i] as Record<string, unknown> | null;
      if (t === null || typeof t !== 'object' || typeof t.value !== 'string') throw new Error(`conversations[${i}] needs "from" and a string "value"`);
      const r = SHAREGPT_ROLES[String(t.from).toLowerCase()];
      if (!r) throw new Error(`conversations[${i}].from: unknown speaker ${JSON.stringify(t.from)}`);
      messages.push({ role: r, content: t.value });
      if (r === 'user') break;
    }
    const reply = turns[i + 1] as Record<string, unknown> | undefined;
    if (maxTokens === undefined && reply && typeof reply.value === 'string' && SHAREGPT_ROLES[String(reply.from).toLowerCase()] === 'assistant') {
      maxTokens = Math.max(1, estimateTokens(reply.value));
    }
  } else if (Array.isArray(o.turns)) {
    throw new Error('a conversation ("turns") is read only as a session: read the dataset with multiTurn (--multi-turn)');
  } else {
    throw new Error('expected "prompt" (a string), "messages" (a list) or "conversations" (ShareGPT)');
  }
  if (messages.length === 0 || !messages.some((m) => m.role === 'user')) throw new Error('no user message');
  // the line's own function definitions (OpenAI's form), sent with it unless --tools says otherwise
  const tools = o.tools === undefined || o.tools === null ? undefined : toolDefinitions(o.tools, '"tools"');
  if (typeof tools === 'string') throw new Error(tools);
  return {
    messages,
    source,
    estimatedTokens: estimatePromptTokens(messages),
    ...(maxTokens !== undefined ? { maxTokens } : {}),
    ...(tools !== undefined ? { tools } : {}),
  };
}

/**
 * Parses a JSONL dataset. Blank lines are skipped; a bad line throws DatasetError naming its line
 * (1-based, as editors show). A file that is one JSON array (the ShareGPT dump as published) is
 * accepted too, its entries named by position.
 */
export function parseDataset(text: string, name = 'dataset'): Prompt[] {
  return datasetEntries(text, name, parseLine, 'prompts');
}

/** Each entry of a dataset (JSON Lines, or one JSON array) through `parse`, a bad one refused naming its line; `what`: the refusal of an empty file. */
export function datasetEntries<T>(text: string, name: string, parse: (value: unknown, source: string) => T, what: string): T[] {
  const out: T[] = [];
  const body = text.replace(/^\uFEFF/, '');
  if (body.trimStart().startsWith('[')) {
    let entries: unknown;
    try {
      entries = JSON.parse(body);
    } catch (e) {
      throw new DatasetError(`${name}: not valid JSON (${(e as Error).message})`);
    }
    if (!Array.isArray(entries)) throw new DatasetError(`${name}: expected a JSON array or one JSON object per line`);
    entries.forEach((entry, i) => {
      try {
        out.push(parse(entry, `${name}[${i}]`));
      } catch (e) {
        throw new DatasetError(`${name}: entry ${i}: ${(e as Error).message}`);
      }
    });
    if (out.length === 0) throw new DatasetError(`${name}: no ${what} in the dataset`);
    return out;
  }
  const lines = body.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (line === '') continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (e) {
      throw new DatasetError(`${name}:${i + 1}: not valid JSON (${(e as Error).message})`, i + 1);
    }
    try {
      out.push(parse(value, `${name}:${i + 1}`));
    } catch (e) {
      throw new DatasetError(`${name}:${i + 1}: ${(e as Error).message}`, i + 1);
    }
  }
  if (out.length === 0) throw new DatasetError(`${name}: no ${what} in the dataset`);
  return out;
}

/** Datasets larger than this are refused: the longest string this JavaScript engine holds, so a larger file could not be parsed anyway. */
const MAX_DATASET_BYTES = constants.MAX_STRING_LENGTH;

/** Reads a dataset as untrusted (a regular file, at most MAX_DATASET_BYTES read) and parses it. */
export async function loadDataset(path: string, maxBytes = MAX_DATASET_BYTES): Promise<Prompt[]> {
  return parseDataset(await readDataset(path, maxBytes), path);
}

/** A dataset's text, read as untrusted (a regular file, at most `maxBytes`); a DatasetError when it cannot be. */
export async function readDataset(path: string, maxBytes = MAX_DATASET_BYTES): Promise<string> {
  try {
    return (await readUntrustedFile(path, { maxBytes, timeoutMs: 120_000 })).toString('utf8');
  } catch (e) {
    const why = e instanceof UntrustedFileError ? e.message : ((e as NodeJS.ErrnoException).code ?? (e as Error).message);
    throw new DatasetError(`cannot read dataset ${path}: ${why}${e instanceof UntrustedFileError && e.reason === 'too-large' ? ' (split it into smaller files)' : ''}`);
  }
}
