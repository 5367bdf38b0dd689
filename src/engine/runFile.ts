// The run file: versioned JSON ("llm-profiler.run", version 1), written atomically, read defensively.
// Documented field by field in docs/run-format.md; checked against the schema in runSchema.ts.
import { redactEndpoint } from './redact';
import { randomBytes } from 'node:crypto';
import { open, readFile, rename, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { RequestRecord, RunFile } from './types';
import { asRunFile, RUN_FORMAT, RUN_VERSION } from './runSchema';
import type { RunFileProblem } from './runSchema';
import { TOOL_NAME, TOOL_VERSION } from './runFormat';

export { TOOL_NAME, TOOL_VERSION };

export class RunFileError extends Error {
  override readonly name = 'RunFileError';
  constructor(message: string, readonly source?: string) {
    super(message);
  }
}

/** The JSON text of a run: indented, with number arrays (chunk times) on one line to keep it compact. */
export function serializeRunFile(run: RunFile): string {
  const safe: RunFile = { ...run, endpoint: redactEndpoint(run.endpoint) };
  const text = JSON.stringify(safe, null, 2);
  // Only arrays that JSON.stringify laid out over lines: a string value never holds a raw newline,
  // so text inside strings is never touched.
  return text.replace(/\[\n\s*(-?[\d.eE+-]+(?:,\n\s*-?[\d.eE+-]+)*)\n\s*\]/g, (_m, inner: string) => `[${inner.split(/,\n\s*/).join(',')}]`) + '\n';
}

/** Writes a run file atomically: a temporary file in the same folder, flushed, then renamed over the target. */
export async function writeRunFile(path: string, run: RunFile): Promise<void> {
  const text = serializeRunFile(run);
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
    // V8 names the position of the failure: at (or past) the last character means the text just stops.
    const at = /at position (\d+)/.exec(msg);
    const atEnd = at !== null && Number(at[1]) >= body.trimEnd().length - 1;
    if (/end of (JSON )?input/i.test(msg) || atEnd) {
      throw new RunFileError(`${source}: the file is truncated (it ends in the middle of the JSON): was the run interrupted while writing?`, source);
    }
    throw new RunFileError(`${source}: not valid JSON (${msg})`, source);
  }
  const checked = asRunFile(value);
  if ('problem' in checked) throw new RunFileError(`${source}: ${problemText(checked.problem)}`, source);
  return checked.run;
}

export async function readRunFile(path: string): Promise<RunFile> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
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

function csvCell(value: unknown): string {
  if (value === undefined || value === null) return '';
  const s = String(value);
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

function rowOf(r: RequestRecord): unknown[] {
  return [
    r.index, r.warmup, r.responseId, r.scheduledAt, r.sentAt, r.headersMs, r.firstChunkMs, r.ttftMs, r.ttfoMs, r.tpotMs, r.e2eMs,
    r.promptTokens, r.outputTokens, r.reasoningTokens, r.tokenSource, r.chunkTimesMs.length, r.multiTokenChunks, r.malformedEvents,
    r.httpStatus ?? r.error?.status, r.error?.kind, r.error?.message,
  ];
}

/** One row per request (RFC 4180, CRLF line ends, a header row), for spreadsheets. */
export function requestsToCsv(run: RunFile): string {
  const lines = [CSV_COLUMNS.join(',')];
  for (const r of run.requests) lines.push(rowOf(r).map(csvCell).join(','));
  return lines.join('\r\n') + '\r\n';
}
