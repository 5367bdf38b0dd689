// The run file: versioned JSON ("llm-profiler.run", version 1), written atomically, read defensively.
// Documented field by field in docs/run-format.md; checked against the schema in runSchema.ts.
import { csvText } from './csv';
import { redactEndpoint } from '../core/redact';
import type { Scrubber, ScrubbedRun } from '../core/redact';
import { randomBytes } from 'node:crypto';
import { open, readFile, rename, stat, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { RequestRecord, RunFile } from '../core/types';
import { jsonEndsEarly } from '../core/json';
import { asRunFile } from '../core/runSchema';
import { RUN_FORMAT, RUN_VERSION } from '../core/runFormat';
import type { RunFileProblem } from '../core/runSchema';


export class RunFileError extends Error {
  override readonly name = 'RunFileError';
  constructor(message: string, readonly source?: string) {
    super(message);
  }
}

/**
 * The JSON text of a run: indented, with number arrays (chunk times) on one line to keep it compact.
 * Built for runs of any size: JSON.stringify walks the run (no recursion per element of ours), each
 * number array is swapped for a marker and joined on its own, and the markers are put back with one
 * pass over the text. (A regular expression over the laid-out arrays overflowed the stack at a few
 * million chunk times and lost the run.)
 */
export function serializeRunFile(run: RunFile, scrubber?: Scrubber): string {
  const safe: RunFile = { ...run, endpoint: redactEndpoint(run.endpoint) };
  const arrays: string[] = [];
  const tag = `\u0000${randomBytes(6).toString('hex')}:`;
  const text = JSON.stringify(
    safe,
    (_key, value: unknown) => {
      if (Array.isArray(value) && value.length > 0 && isNumberArray(value)) {
        arrays.push(`[${value.join(',')}]`);
        return `${tag}${arrays.length - 1}`;
      }
      return value;
    },
    2,
  );
  // The marker as JSON.stringify wrote it: a string that starts with an escaped NUL and a random tag.
  const marker = JSON.stringify(tag).slice(0, -1);
  const parts: string[] = [];
  let from = 0;
  for (let at = text.indexOf(marker, from); at !== -1; at = text.indexOf(marker, from)) {
    const end = text.indexOf('"', at + marker.length);
    parts.push(text.slice(from, at), arrays[Number(text.slice(at + marker.length, end))]!);
    from = end + 1;
  }
  parts.push(text.slice(from), '\n');
  // The last line of defence: a secret the job knows, wherever a server managed to put it.
  return scrubber ? scrubber.scrub(parts.join('')) : parts.join('');
}

/**
 * Finite numbers only (JSON.stringify writes NaN as null; such an array keeps the standard layout).
 * By `every`, not an indexed loop: optimized, a loop that reads the elements of arrays of every kind
 * (chunk times, records, strings) makes V8 convert each array of doubles it reads to boxed numbers,
 * and a saved run's chunk times then took three times their heap (seen in `npm run bench:soak`).
 */
function isNumberArray(a: readonly unknown[]): boolean {
  return a.every(isFiniteNumber);
}

const isFiniteNumber = (x: unknown): boolean => typeof x === 'number' && Number.isFinite(x);

/**
 * Writes a run file atomically: a temporary file in the same folder, flushed, then renamed over the
 * target. Only a scrubbed run is written (redact.ts `scrubRun`); `scrubber` scrubs the text once more.
 */
export async function writeRunFile(path: string, run: ScrubbedRun, scrubber?: Scrubber): Promise<void> {
  const text = serializeRunFile(run, scrubber);
  const tmp = join(dirname(path), `.${basename(path)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  let handle;
  try {
    handle = await open(tmp, 'wx', 0o644);
    await handle.writeFile(text, 'utf8');
    await handle.sync();
    await handle.close();
    handle = undefined;
    await rename(tmp, path);
  } catch (e) {
    await handle?.close().catch(() => undefined);
    await unlink(tmp).catch(() => undefined);
    throw e;
  }
}

/** What the old checks called each top-level part, so a missing one still reads as before. */
const MISSING_HINT: Readonly<Record<string, string>> = {
  endpoint: ' (with url and api)',
  workload: ' (with mode and percentiles)',
  requests: ' (a list)',
};

/** The sentence for a run file's problem (runSchema.ts), after "<source>: ". */
function problemText(p: RunFileProblem): string {
  switch (p.kind) {
    case 'not-object':
      return 'not an llm-profiler run file (expected a JSON object)';
    case 'format':
      return `not an llm-profiler run file (format is ${p.format === undefined ? 'missing' : JSON.stringify(p.format)}, expected "${RUN_FORMAT}")`;
    case 'version':
      return `unknown run file version ${JSON.stringify(p.version)}${p.newer ? ' (written by a newer llm-profiler: update to read it)' : ''}; this version reads version ${RUN_VERSION}`;
    case 'field':
      if (p.parent === '') return `not a valid run file: ${p.missing ? `missing "${p.key}"${MISSING_HINT[p.key] ?? ''}` : `"${p.key}" is not valid (${p.detail})`}`;
      return `not a valid run file: ${p.missing ? `${p.path} is missing` : `${p.parent} lacks a valid "${p.key}" (${p.path}: ${p.detail})`}`;
  }
}

/** Parses and checks a run file's text against the schema (runSchema.ts). Throws RunFileError with a clear message for each kind of damage. */
export function parseRunFile(text: string, source = 'run file'): RunFile {
  const body = text.replace(/^\uFEFF/, '');
  if (body.trim() === '') throw new RunFileError(`${source}: the file is empty`, source);
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch (e) {
    const msg = (e as Error).message;
    if (jsonEndsEarly(msg, body)) {
      throw new RunFileError(`${source}: the file is truncated (it ends in the middle of the JSON): was the run interrupted while writing?`, source);
    }
    throw new RunFileError(`${source}: not valid JSON (${msg})`, source);
  }
  const checked = asRunFile(value);
  if ('problem' in checked) throw new RunFileError(`${source}: ${problemText(checked.problem)}`, source);
  return checked.run;
}

/** The largest run file read: an hour at 64 streams of 128 tokens is about 270 MB (`npm run bench:soak`); a string cannot exceed about 512 MB. */
export const RUN_FILE_MAX_BYTES = 500 * 1024 * 1024;

export async function readRunFile(path: string): Promise<RunFile> {
  let text: string;
  try {
    const size = (await stat(path)).size;
    if (size > RUN_FILE_MAX_BYTES) {
      throw new RunFileError(`${path}: the file is ${Math.round(size / 2 ** 20)} MB, more than the ${RUN_FILE_MAX_BYTES / 2 ** 20} MB a run file may be: not an llm-profiler run, or a damaged one`, path);
    }
    text = await readFile(path, 'utf8');
  } catch (e) {
    if (e instanceof RunFileError) throw e;
    const code = (e as NodeJS.ErrnoException).code;
    throw new RunFileError(`${path}: cannot read the run file (${code === 'ENOENT' ? 'no such file' : code ?? (e as Error).message})`, path);
  }
  return parseRunFile(text, path);
}

const CSV_COLUMNS = [
  'index', 'warmup', 'responseId', 'scheduledAt', 'sentAt', 'headersMs', 'firstChunkMs', 'ttftMs', 'ttfoMs', 'tpotMs', 'e2eMs',
  'promptTokens', 'outputTokens', 'reasoningTokens', 'tokenSource', 'chunks', 'multiTokenChunks', 'malformedEvents',
  'httpStatus', 'errorKind', 'errorMessage',
] as const;

function rowOf(r: RequestRecord): unknown[] {
  return [
    r.index, r.warmup, r.responseId, r.scheduledAt, r.sentAt, r.headersMs, r.firstChunkMs, r.ttftMs, r.ttfoMs, r.tpotMs, r.e2eMs,
    r.promptTokens, r.outputTokens, r.reasoningTokens, r.tokenSource, r.chunkTimesMs.length, r.multiTokenChunks, r.malformedEvents,
    r.httpStatus ?? r.error?.status, r.error?.kind, r.error?.message,
  ];
}

/** One row per request (RFC 4180, CRLF line ends, a header row), for spreadsheets; every cell through csv.ts. */
export function requestsToCsv(run: ScrubbedRun): string {
  return csvText(CSV_COLUMNS, run.requests.map(rowOf));
}
