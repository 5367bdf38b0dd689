// The run file: versioned JSON ("llm-profiler.run", version 1), written atomically, read defensively.
// Documented field by field in docs/run-format.md.
import { redactEndpoint } from './redact';
import { randomBytes } from 'node:crypto';
import { open, readFile, rename, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { RequestRecord, RunFile } from './types';
import { version as packageVersion } from '../../package.json';

export const RUN_FORMAT = 'llm-profiler.run';
export const RUN_VERSION = 1;
export const TOOL_NAME = 'llm-profiler';
export const TOOL_VERSION: string = packageVersion;

export class RunFileError extends Error {
  override readonly name = 'RunFileError';
  constructor(message: string, readonly source?: string) {
    super(message);
  }
}

/** A new run id: UTC time to the second (sorts by time as text) and 6 random base-36 characters. */
export function newRunId(now: Date = new Date()): string {
  const t = now.toISOString().slice(0, 19).replace(/:/g, '-');
  const bytes = randomBytes(6);
  let suffix = '';
  for (const b of bytes) suffix += (b % 36).toString(36);
  return `${t}-${suffix}`;
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

function need(cond: boolean, what: string, where: string): void {
  if (!cond) throw new RunFileError(`${where}: not a valid run file: ${what}`, where);
}

/** Parses and checks a run file's text. Throws RunFileError with a clear message for each kind of damage. */
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
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new RunFileError(`${source}: not an llm-profiler run file (expected a JSON object)`, source);
  const o = value as Record<string, unknown>;
  if (o.format !== RUN_FORMAT) {
    throw new RunFileError(`${source}: not an llm-profiler run file (format is ${o.format === undefined ? 'missing' : JSON.stringify(o.format)}, expected "${RUN_FORMAT}")`, source);
  }
  if (o.version !== RUN_VERSION) {
    const newer = typeof o.version === 'number' && o.version > RUN_VERSION;
    throw new RunFileError(
      `${source}: unknown run file version ${JSON.stringify(o.version)}${newer ? ' (written by a newer llm-profiler: update to read it)' : ''}; this version reads version ${RUN_VERSION}`,
      source,
    );
  }
  need(typeof o.id === 'string' && o.id !== '', 'missing "id"', source);
  need(typeof o.startedAt === 'string', 'missing "startedAt"', source);
  const ep = o.endpoint as Record<string, unknown> | undefined;
  need(!!ep && typeof ep === 'object' && typeof ep.url === 'string' && typeof ep.api === 'string', 'missing "endpoint" (with url and api)', source);
  const wl = o.workload as Record<string, unknown> | undefined;
  need(!!wl && typeof wl === 'object' && !!wl.mode && Array.isArray(wl.percentiles), 'missing "workload" (with mode and percentiles)', source);
  need(Array.isArray(o.requests), 'missing "requests" (a list)', source);
  (o.requests as unknown[]).forEach((r, i) => {
    const rr = r as Record<string, unknown> | null;
    need(
      !!rr && typeof rr === 'object' && typeof rr.index === 'number' && typeof rr.sentAt === 'number' && typeof rr.outputTokens === 'number' && Array.isArray(rr.chunkTimesMs),
      `requests[${i}] lacks index, sentAt, outputTokens or chunkTimesMs`,
      source,
    );
  });
  const s = o.summary as Record<string, unknown> | undefined;
  need(!!s && typeof s === 'object', 'missing "summary"', source);
  for (const k of ['ttftMs', 'tpotMs', 'itlMs', 'e2eMs'] as const) {
    const st = s![k] as Record<string, unknown> | undefined;
    need(!!st && typeof st === 'object' && typeof st.mean === 'number', `summary.${k} is missing`, source);
  }
  need(typeof s!.requestsPerSecond === 'number' && typeof s!.outputTokensPerSecond === 'number', 'summary lacks the throughputs', source);
  return value as RunFile;
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
