// Trace files: what production sent, replayed at its timestamps (`--trace`). Two formats:
// - Mooncake JSONL, as AIPerf's `mooncake_trace` loader reads it (ai-dynamo/aiperf,
//   src/aiperf/dataset/loader/mooncake_trace.py with generator/prompt.py `_build_token_sequence`):
//   one JSON object a line, `timestamp` (ms), `input_length`, `output_length`, optional `hash_ids`.
//   Hash id i stands for block i of the prompt, 512 tokens; the last block holds what is left of
//   input_length, from 1 to 512 tokens (AIPerf refuses any other count of ids, and so does this).
//   The same id gives the same text wherever it appears, so a prefix cache sees the sharing the
//   trace recorded. AIPerf's other line forms (text_input, messages, payload, session_id, delay) are
//   refused by name: a line here is one request at its timestamp.
// - The Azure LLM inference trace CSV (Azure/AzurePublicDataset, AzureLLMInferenceDataset2023.md and
//   2024.md): a header `TIMESTAMP,ContextTokens,GeneratedTokens`, TIMESTAMP a date and time as the
//   files write it ("2023-11-16 18:17:03.9799600", UTC unless an offset is given); requests are sent
//   at their times relative to the earliest.
// Both are untrusted files (untrustedFile.ts: bounded in bytes and time), every number is
// range-checked, and a refusal names the file's line (1-based, as editors show).
import { constants } from 'node:buffer';
import type { Prompt } from '../core/types';
import { isObject } from '../core/json';
import { Rng } from '../core/random';
import { readUntrustedFile, UntrustedFileError } from '../files/untrustedFile';
import { WORDS } from './syntheticPrompts';

export type TraceFormat = 'mooncake' | 'azure';

/** Tokens a Mooncake hash id stands for (the FAST25 traces' block size, AIPerf's default). */
export const TRACE_BLOCK_TOKENS = 512;
/** The longest prompt or reply a trace line may ask for, tokens. */
export const MAX_TRACE_TOKENS = 1_048_576;
/** The most requests one trace may hold: more is cut before it is replayed (`head -n`). */
export const MAX_TRACE_REQUESTS = 2_000_000;
/** Timestamps past this (ms, ≈ the year 2286 as epoch ms) are refused as nonsense. */
const MAX_TIMESTAMP_MS = 1e13;
/** The largest hash id: a 32-bit block number. */
const MAX_HASH_ID = 4_294_967_295;
/** A trace larger than this is refused: the longest string this JavaScript engine holds. */
const MAX_TRACE_BYTES = constants.MAX_STRING_LENGTH;
const READ_TIMEOUT_MS = 120_000;

/** One request of a trace. */
export interface TraceEntry {
  /** Its position among the file's requests, in file order, from 0 (a record's `traceLine`). */
  readonly line: number;
  /** When it was sent, ms after the trace's earliest request. */
  readonly atMs: number;
  readonly inputLength: number;
  /** Its reply's length (max tokens); absent: the workload's max tokens. */
  readonly outputLength?: number;
  /** Mooncake's block ids, one per 512 prompt tokens. */
  readonly hashIds?: readonly number[];
}

export interface Trace {
  readonly format: TraceFormat;
  /** In the order they are sent: by time, file order among equal times. */
  readonly entries: readonly TraceEntry[];
}

/** A trace that cannot be replayed; `line` is the file's line (1-based) when one is to blame. */
export class TraceError extends Error {
  override readonly name = 'TraceError';
  constructor(message: string, readonly line?: number) {
    super(message);
  }
}

const intText = (n: number): string => n.toLocaleString('en-US');

/** A whole number within [lo, hi], or the reason it is not. */
function wholeIn(value: unknown, key: string, lo: number, hi: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < lo || value > hi) {
    throw new Error(`"${key}" must be a whole number from ${intText(lo)} to ${intText(hi)}, got ${JSON.stringify(value) ?? 'nothing'}`);
  }
  return value;
}

/** AIPerf's rule: n ids for a prompt whose last block holds 1 to 512 tokens. */
function checkBlocks(inputLength: number, ids: readonly number[]): void {
  const last = inputLength - (ids.length - 1) * TRACE_BLOCK_TOKENS;
  if (last < 1 || last > TRACE_BLOCK_TOKENS) {
    const need = Math.ceil(inputLength / TRACE_BLOCK_TOKENS);
    throw new Error(`"hash_ids" has ${ids.length} block${ids.length === 1 ? '' : 's'} of ${TRACE_BLOCK_TOKENS} tokens for an input_length of ${intText(inputLength)}: it needs ${need}`);
  }
}

const REFUSED_KEYS: Readonly<Record<string, string>> = {
  text_input: 'a prompt given as text',
  messages: 'a prompt given as messages',
  payload: 'a request body given whole',
  session_id: "AIPerf's multi-turn form",
  delay: "AIPerf's multi-turn form",
};

/** One Mooncake line's request (its position and time set by the caller). */
function mooncakeLine(value: unknown): Omit<TraceEntry, 'line' | 'atMs'> & { readonly timestamp: number } {
  if (!isObject(value)) throw new Error('expected a JSON object');
  for (const [key, what] of Object.entries(REFUSED_KEYS)) {
    if (value[key] !== undefined) throw new Error(`"${key}" (${what}) is not replayed here: a trace line is one request built from its lengths, sent at its timestamp`);
  }
  if (value.timestamp === undefined) throw new Error('needs a "timestamp" (ms): a trace is replayed at its times');
  const ts = value.timestamp;
  if (typeof ts !== 'number' || !Number.isFinite(ts) || ts < 0 || ts > MAX_TIMESTAMP_MS) throw new Error(`"timestamp" must be a number of ms from 0 to ${MAX_TIMESTAMP_MS.toExponential()}, got ${JSON.stringify(ts)}`);
  const inputLength = wholeIn(value.input_length, 'input_length', 1, MAX_TRACE_TOKENS);
  const outputLength = value.output_length === undefined || value.output_length === null ? undefined : wholeIn(value.output_length, 'output_length', 1, MAX_TRACE_TOKENS);
  let hashIds: number[] | undefined;
  if (value.hash_ids !== undefined && value.hash_ids !== null) {
    if (!Array.isArray(value.hash_ids)) throw new Error('"hash_ids" must be a list of block ids');
    if (value.hash_ids.length > 0) {
      hashIds = value.hash_ids.map((id, i) => wholeIn(id, `hash_ids[${i}]`, 0, MAX_HASH_ID));
      checkBlocks(inputLength, hashIds);
    }
  }
  return { timestamp: ts, inputLength, ...(outputLength !== undefined ? { outputLength } : {}), ...(hashIds ? { hashIds } : {}) };
}

/** The file's lines, a BOM dropped, and the 1-based line number of each. */
function linesOf(text: string): string[] {
  return text.replace(/^\uFEFF/, '').split(/\r?\n/);
}

function tooMany(name: string, line: number, max: number): TraceError {
  return new TraceError(`${name}:${line}: more than ${intText(max)} requests: replay a part of the trace (head -n ${max})`, line);
}

function parseMooncake(text: string, name: string, maxRequests: number): { entries: TraceEntry[]; times: number[] } {
  const entries: TraceEntry[] = [];
  const times: number[] = [];
  const lines = linesOf(text);
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i]!.trim();
    if (raw === '') continue;
    if (entries.length >= maxRequests) throw tooMany(name, i + 1, maxRequests);
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch (e) {
      throw new TraceError(`${name}:${i + 1}: not valid JSON (${(e as Error).message})`, i + 1);
    }
    try {
      const { timestamp, ...rest } = mooncakeLine(value);
      times.push(timestamp);
      entries.push({ line: entries.length, atMs: 0, ...rest });
    } catch (e) {
      throw new TraceError(`${name}:${i + 1}: ${(e as Error).message}`, i + 1);
    }
  }
  return { entries, times };
}

const AZURE_TIME = /^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:?\d{2})?$/;

/** An Azure TIMESTAMP as epoch ms ("2023-11-16 18:17:03.9799600": UTC, or at the offset it gives). */
export function azureTimeMs(text: string): number | undefined {
  const m = AZURE_TIME.exec(text);
  if (!m) return undefined;
  const [y, mo, d, h, mi, s] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  if (mo < 1 || mo > 12 || d < 1 || h > 23 || mi > 59 || s > 59) return undefined;
  const day = Date.UTC(y, mo - 1, d, h, mi, s);
  if (new Date(day).getUTCDate() !== d) return undefined; // 2023-02-30
  const fraction = m[7] !== undefined ? Number(`0.${m[7]}`) * 1000 : 0;
  const zone = m[8];
  let offsetMin = 0;
  if (zone !== undefined && zone !== 'Z') {
    const [hh, mm] = [Number(zone.slice(1, 3)), Number(zone.slice(-2))];
    if (hh > 23 || mm > 59) return undefined;
    offsetMin = (zone[0] === '-' ? -1 : 1) * (hh * 60 + mm);
  }
  return day + fraction - offsetMin * 60_000;
}

/** A CSV line's cells, trimmed, quotes around a cell dropped (the Azure files quote nothing). */
function cells(line: string): string[] {
  return line.split(',').map((c) => c.trim().replace(/^"(.*)"$/, '$1'));
}

const AZURE_COLUMNS = ['TIMESTAMP', 'ContextTokens', 'GeneratedTokens'] as const;

function azureColumns(header: string, name: string, line: number): number[] {
  const names = cells(header).map((c) => c.toLowerCase());
  const at = AZURE_COLUMNS.map((c) => names.indexOf(c.toLowerCase()));
  if (at.some((i) => i < 0)) {
    throw new TraceError(`${name}:${line}: expected the Azure LLM inference trace's header (${AZURE_COLUMNS.join(',')}), got "${header.slice(0, 120)}"`, line);
  }
  return at;
}

function azureRow(row: string[], at: readonly number[]): { timestamp: number; inputLength: number; outputLength: number } {
  if (row.length < Math.max(...at) + 1) throw new Error(`expected ${AZURE_COLUMNS.length} cells (${AZURE_COLUMNS.join(',')}), got ${row.length}`);
  const cell = (i: number) => row[at[i]!]!;
  const timestamp = azureTimeMs(cell(0));
  if (timestamp === undefined) throw new Error(`TIMESTAMP must be a date and time as in Azure's files ("2023-11-16 18:17:03.9799600"), got "${cell(0).slice(0, 60)}"`);
  const count = (i: number) => (/^\d+$/.test(cell(i)) ? Number(cell(i)) : Number.NaN);
  return {
    timestamp,
    inputLength: wholeIn(count(1), 'ContextTokens', 1, MAX_TRACE_TOKENS),
    outputLength: wholeIn(count(2), 'GeneratedTokens', 1, MAX_TRACE_TOKENS),
  };
}

function parseAzure(text: string, name: string, maxRequests: number): { entries: TraceEntry[]; times: number[] } {
  const entries: TraceEntry[] = [];
  const times: number[] = [];
  const lines = linesOf(text);
  let at: number[] | undefined;
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i]!.trim();
    if (raw === '') continue;
    if (at === undefined) {
      at = azureColumns(raw, name, i + 1);
      continue;
    }
    if (entries.length >= maxRequests) throw tooMany(name, i + 1, maxRequests);
    try {
      const { timestamp, ...rest } = azureRow(cells(raw), at);
      times.push(timestamp);
      entries.push({ line: entries.length, atMs: 0, ...rest });
    } catch (e) {
      throw new TraceError(`${name}:${i + 1}: ${(e as Error).message}`, i + 1);
    }
  }
  return { entries, times };
}

/** The format a trace's text is in: JSON lines are Mooncake's, a TIMESTAMP header Azure's; else the name's extension says (.csv: Azure). */
export function traceFormatOfText(text: string, name = ''): TraceFormat {
  const first = linesOf(text.slice(0, 4096)).find((l) => l.trim() !== '')?.trim() ?? '';
  if (first.startsWith('{')) return 'mooncake';
  if (/\bTIMESTAMP\b/i.test(first) && first.includes(',')) return 'azure';
  return /\.csv$/i.test(name) ? 'azure' : 'mooncake';
}

/**
 * Parses a trace (its format told from the text when not given). Requests are put in time order
 * (file order among equal times) with their times made relative to the earliest.
 */
export function parseTrace(text: string, name = 'trace', format: TraceFormat = traceFormatOfText(text, name), maxRequests = MAX_TRACE_REQUESTS): Trace {
  const { entries, times } = format === 'azure' ? parseAzure(text, name, maxRequests) : parseMooncake(text, name, maxRequests);
  if (entries.length === 0) throw new TraceError(`${name}: no requests in the trace`);
  let t0 = Infinity;
  for (const t of times) if (t < t0) t0 = t;
  const timed = entries.map((e, i) => ({ ...e, atMs: times[i]! - t0 }));
  // Array.prototype.sort is stable: equal times keep file order
  timed.sort((a, b) => a.atMs - b.atMs);
  return { format, entries: timed };
}

/** Reads a trace as untrusted (a regular file, bounded in bytes and time) and parses it; throws TraceError. */
export async function readTrace(path: string, format?: TraceFormat, maxBytes = MAX_TRACE_BYTES): Promise<Trace> {
  let text: string;
  try {
    text = (await readUntrustedFile(path, { maxBytes, timeoutMs: READ_TIMEOUT_MS })).toString('utf8');
  } catch (e) {
    if (e instanceof UntrustedFileError) throw new TraceError(`cannot read the trace ${path}: ${e.message}`);
    throw e;
  }
  return parseTrace(text, path, format ?? traceFormatOfText(text, path));
}

// ---- The prompts: built to the stated lengths, shared where the trace shares ----

/**
 * Words of syntheticPrompts.ts WORDS that the bundled server's synthetic models split into several
 * tokens (their vocabulary, localServer/synthetic.ts, has a word list of its own): a trace's prompts
 * leave them out, so that a word is one token there as in the test servers' count and about one in
 * the GPT, Llama, Mistral and Qwen tokenizers. test/unit/traces.test.ts checks the rest with the
 * synthetic models' own counter.
 */
const SPLIT_BY_SYNTHETIC_MODELS = new Set('into its because stone glass train cat heart chair window wall floor garden bridge hill lake spring summer winter evening'.split(' '));
/** The words a trace's prompts are made of: one token each, lower case and capitalised. */
export const TRACE_WORDS: readonly string[] = WORDS.filter((w) => !SPLIT_BY_SYNTHETIC_MODELS.has(w));
const BASE = TRACE_WORDS.length;
const capitalized = (w: string): string => w[0]!.toUpperCase() + w.slice(1);

/** `n` in base-|TRACE_WORDS| digits, least significant first, at least `min` words: ids that differ differ early. */
function digitWords(n: number, min: number, word: (i: number) => string): string[] {
  const out: string[] = [];
  let rest = Math.max(0, Math.floor(n));
  do {
    out.push(word(rest % BASE));
    rest = Math.floor(rest / BASE);
  } while (rest > 0 || out.length < min);
  return out;
}

/** Blocks' texts made lately, by id: a trace shares its prefixes over and over. */
const BLOCK_CACHE = new Map<number, string>();
const BLOCK_CACHE_SIZE = 4096;

/**
 * The 512 words of hash id `id`: the id spelled in lower-case words (so different ids part at the
 * first word, or within the first three), then words drawn from a generator seeded by the id
 * alone. The same id gives the same text in every request and every run.
 */
export function blockText(id: number): string {
  const known = BLOCK_CACHE.get(id);
  if (known !== undefined) return known;
  const words = digitWords(id, 3, (i) => TRACE_WORDS[i]!);
  const rng = new Rng(id ^ 0x5eed7ace);
  while (words.length < TRACE_BLOCK_TOKENS) words.push(TRACE_WORDS[rng.int(BASE)]!);
  const text = words.slice(0, TRACE_BLOCK_TOKENS).join(' ');
  if (BLOCK_CACHE.size >= BLOCK_CACHE_SIZE) BLOCK_CACHE.delete(BLOCK_CACHE.keys().next().value!);
  BLOCK_CACHE.set(id, text);
  return text;
}

/** The first `n` words of a text of single-space-separated words. */
function firstWords(text: string, n: number): string {
  let at = -1;
  for (let i = 0; i < n; i++) {
    at = text.indexOf(' ', at + 1);
    if (at < 0) return text;
  }
  return text.slice(0, at);
}

/**
 * Text of its own for request `index`, `n` words: led by the index spelled in capitalised words
 * (which no block text starts with), then words seeded by the run's seed and the index.
 */
export function uniqueText(index: number, n: number, seed: number): string {
  const words = digitWords(index, 2, (i) => capitalized(TRACE_WORDS[i]!));
  const rng = new Rng(seed * 1_000_003 + index * 7 + 3);
  while (words.length < n) words.push(TRACE_WORDS[rng.int(BASE)]!);
  return words.slice(0, n).join(' ');
}

/**
 * The prompt text of a trace line: block i is hash_ids[i]'s text, the last block cut to what is left
 * of input_length; without hash_ids, text of its own (`index`: the request's). One word is one token
 * to the test servers (whitespace-separated words) and to the bundled server's synthetic models, and
 * about one in the GPT, Llama, Mistral and Qwen tokenizers (TRACE_WORDS); the chat template adds the
 * server's few tokens around it (about 20 for the synthetic models: under 2% from 1,100 tokens).
 */
export function traceText(entry: Pick<TraceEntry, 'inputLength' | 'hashIds'>, index: number, seed: number): string {
  const ids = entry.hashIds;
  if (!ids || ids.length === 0) return uniqueText(index, entry.inputLength, seed);
  const parts: string[] = [];
  for (let i = 0; i < ids.length; i++) {
    const left = entry.inputLength - i * TRACE_BLOCK_TOKENS;
    const text = blockText(ids[i]!);
    parts.push(left >= TRACE_BLOCK_TOKENS ? text : firstWords(text, left));
  }
  return parts.join(' ');
}

/** A trace line as a prompt: its text, and its reply's length as the prompt's own max tokens. */
export function tracePrompt(entry: TraceEntry, index: number, seed: number): Prompt {
  return {
    messages: [{ role: 'user', content: traceText(entry, index, seed) }],
    source: `synthetic (trace line ${entry.line + 1})`,
    estimatedTokens: entry.inputLength,
    ...(entry.outputLength !== undefined ? { maxTokens: entry.outputLength } : {}),
  };
}

/**
 * Where a trace's requests come from: measured request k is the trace's k-th (in time order), tagged
 * with its line; a warmup request sends text of its own of the k-th line's lengths, so that it warms
 * the server without putting any of the trace's blocks in its cache.
 */
export function traceSource(trace: Trace, seed: number) {
  const n = trace.entries.length;
  return {
    trace,
    promptFor(index: number, warmup: boolean, k: number): { readonly prompt: Prompt; readonly tags?: { readonly traceLine: number } } {
      const entry = trace.entries[k % n]!;
      if (warmup) return { prompt: tracePrompt({ ...entry, hashIds: [] }, index, seed) };
      return { prompt: tracePrompt(entry, index, seed), tags: { traceLine: entry.line } };
    },
  };
}

/** When each request is due, ms after the replay starts: the trace's times over the speed. */
export function traceOffsetsMs(trace: Trace, speed: number): number[] {
  return trace.entries.map((e) => e.atMs / speed);
}
