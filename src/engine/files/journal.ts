// A run's journal: JSON Lines appended while the run goes, so that a process killed mid-run (kill -9,
// the OOM killer, a machine that sleeps, a window reloaded) loses nothing that finished. The head line
// says what ran and against what (keys scrubbed as everywhere), then one line per finished request,
// sweep point and repetition, and now and then the progress (what was in flight). Lines are written
// at least every second and at every point's end (fdatasync), at a tracked position so that a write
// cut short by a full disk is finished later, never written twice. The run file is written first,
// renamed into place, and only then is the journal removed; run/recover.ts makes a run file of a
// journal that was left. Documented in docs/run-format.md ("Journals").
import { open, readdir, lstat, unlink } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { createReadStream, readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Scrubber } from '../core/redact';
import { TOOL_VERSION } from '../core/runFormat';
import { JOURNAL_SUFFIX } from '../core/runId';
import { isEndpointRecord, isPromptRecords, isRequestRecord, isSweepPoint, isWorkloadSpec } from '../core/runSchema';
import type { EndpointSpec, NetworkRecord, Progress, PromptRecord, RequestRecord, SweepPoint, WorkloadSpec } from '../core/types';

export const JOURNAL_FORMAT = 'llm-profiler.journal';
export const JOURNAL_VERSION = 1;
/** The largest journal read (a soak's hours of requests with their chunk times). */
export const JOURNAL_MAX_BYTES = 2 * 1024 ** 3;
/** How often buffered lines reach the disk, at most. */
export const JOURNAL_INTERVAL_MS = 1000;
/** Lines kept in memory while writes fail (a full disk), at most. */
const CARRY_MAX_BYTES = 32 * 1024 * 1024;

export type JournalKind = 'run' | 'sweep';

/** What ran, written once, first. */
export interface JournalHead {
  readonly t: 'head';
  readonly format: typeof JOURNAL_FORMAT;
  readonly version: typeof JOURNAL_VERSION;
  readonly id: string;
  readonly kind: JournalKind;
  /** ISO time. */
  readonly startedAt: string;
  /** The process writing it, and its machine: a journal whose writer is alive is not recovered. */
  readonly pid: number;
  readonly host: string;
  /** The writer's start, where the system tells it (Linux: boot id and start tick): a pid reused after a reboot is not the writer. */
  readonly proc?: string;
  readonly tool: string;
  /** Redacted, with how it was reached (the run file's endpoint). */
  readonly endpoint: EndpointSpec & NetworkRecord & { readonly detectedApi?: boolean };
  /** A sweep's base workload (each point's differs in the swept field only). */
  readonly workload: WorkloadSpec;
  readonly prompts?: readonly PromptRecord[];
  readonly sweep?: { readonly dimension: 'concurrency' | 'rate' | 'promptTokens'; readonly values: readonly number[] };
  /** `run --repeat N`. */
  readonly repeat?: number;
  /** Where the run file was to be written (absolute), when the CLI was given --out. */
  readonly out?: string;
}

export type JournalHeadInput = Omit<JournalHead, 't' | 'format' | 'version' | 'pid' | 'host' | 'proc' | 'tool'>;

export interface JournalProgress {
  readonly t: 'progress';
  /** Epoch ms. */
  readonly at: number;
  readonly finished: number;
  readonly inFlight: number;
  readonly total?: number;
}

export type JournalLine =
  | JournalHead
  | { readonly t: 'request'; readonly r: RequestRecord }
  | { readonly t: 'point'; readonly i: number; readonly point: SweepPoint }
  | { readonly t: 'repetition'; readonly i: number; readonly at: number }
  | JournalProgress
  | { readonly t: 'end'; readonly at: number; readonly cancelled: boolean };

export interface JournalWriterOptions {
  /** Scrubs each line's text once more (the job's secrets, wherever a server put them). */
  readonly scrubber?: Scrubber;
  readonly intervalMs?: number;
  /** The first write that failed (a full disk, a folder removed): said once; the run goes on, lines are kept to retry. */
  onError?(e: NodeJS.ErrnoException): void;
}

/** Appends journal lines: buffered, written and synced every interval and at each checkpoint. */
export class JournalWriter {
  readonly path: string;
  readonly #handle: FileHandle;
  readonly #o: JournalWriterOptions;
  #pending: string[] = [];
  /** Bytes of a buffer already written (a write cut short by ENOSPC is finished from here). */
  #carry: Buffer | undefined;
  #position = 0;
  #progress: JournalProgress | undefined;
  #progressWritten: JournalProgress | undefined;
  #chain: Promise<void> = Promise.resolve();
  #timer: NodeJS.Timeout;
  #error: NodeJS.ErrnoException | undefined;
  #closed = false;
  /** Lines were dropped (a write failed for longer than CARRY_MAX_BYTES of lines could wait). */
  #lost = false;

  private constructor(path: string, handle: FileHandle, o: JournalWriterOptions) {
    this.path = path;
    this.#handle = handle;
    this.#o = o;
    this.#timer = setInterval(() => void this.flush(false), o.intervalMs ?? JOURNAL_INTERVAL_MS);
    this.#timer.unref();
  }

  /** Creates the journal (never over an existing file) with its head line, synced. */
  static async create(path: string, head: JournalHeadInput, o: JournalWriterOptions = {}): Promise<JournalWriter> {
    const handle = await open(path, 'wx', 0o600);
    const w = new JournalWriter(path, handle, o);
    const proc = processStart(process.pid);
    w.append({ t: 'head', format: JOURNAL_FORMAT, version: JOURNAL_VERSION, ...head, pid: process.pid, host: hostname(), ...(proc ? { proc } : {}), tool: TOOL_VERSION });
    await w.flush(true);
    return w;
  }

  /** The first write error, if any (the journal then lacks lines from that moment until a retry wrote them). */
  get error(): NodeJS.ErrnoException | undefined {
    return this.#error;
  }

  /** Every line appended so far is on the disk (after an error: a later write caught up). */
  get caughtUp(): boolean {
    return !this.#lost && !this.#carry && this.#pending.length === 0;
  }

  append(line: JournalLine): void {
    if (this.#closed) return;
    const text = JSON.stringify(line);
    this.#pending.push(this.#o.scrubber ? this.#o.scrubber.scrub(text) : text);
  }

  /** The latest progress: written with the next flush when it changed. */
  progress(p: Pick<Progress, 'finished' | 'inFlight' | 'total'>): void {
    this.#progress = { t: 'progress', at: Date.now(), finished: p.finished, inFlight: p.inFlight, ...(p.total !== undefined ? { total: p.total } : {}) };
  }

  /** Writes what is buffered (and syncs it to the disk with `sync`); one flush at a time, in order. */
  flush(sync = true): Promise<void> {
    this.#chain = this.#chain.then(() => this.#write(sync));
    return this.#chain;
  }

  async #write(sync: boolean): Promise<void> {
    const p = this.#progress;
    if (p && (p.finished !== this.#progressWritten?.finished || p.inFlight !== this.#progressWritten.inFlight)) {
      this.#pending.push(JSON.stringify(p));
      this.#progressWritten = p;
    }
    if (this.#pending.length === 0 && !this.#carry) return;
    const fresh = this.#pending.length > 0 ? Buffer.from(`${this.#pending.join('\n')}\n`, 'utf8') : undefined;
    const buf = this.#carry && fresh ? Buffer.concat([this.#carry, fresh]) : (this.#carry ?? fresh!);
    this.#carry = undefined;
    this.#pending = [];
    let done = 0;
    try {
      while (done < buf.length) {
        const { bytesWritten } = await this.#handle.write(buf, done, buf.length - done, this.#position);
        done += bytesWritten;
        this.#position += bytesWritten;
      }
      if (sync) await this.#handle.datasync();
    } catch (e) {
      if (done < buf.length) this.#carry = buf.subarray(done);
      // a disk full for long: what waits is bounded; past it the journal is not whole (the run file is written elsewhere at the end)
      if ((this.#carry?.length ?? 0) > CARRY_MAX_BYTES) {
        this.#carry = undefined;
        this.#lost = true;
      }
      if (!this.#error) {
        this.#error = e as NodeJS.ErrnoException;
        try { this.#o.onError?.(this.#error); } catch { /* a listener must not break the run */ }
      }
    }
  }

  /** Flushes and closes; the file stays (the run was not stored yet, or could not be). */
  async close(): Promise<void> {
    if (this.#closed) return;
    clearInterval(this.#timer);
    await this.flush(true);
    this.#closed = true;
    await this.#handle.close().catch(() => undefined);
  }

  /** Closes and removes the journal: call only once the run file is in place. */
  async discard(): Promise<void> {
    if (!this.#closed) {
      clearInterval(this.#timer);
      this.#closed = true;
      await this.#chain;
      await this.#handle.close().catch(() => undefined);
    }
    await unlink(this.path).catch(() => undefined);
  }
}

// ---- Reading ----

/** A journal as read back: what ran, what finished, and when the writer was last heard from. */
export interface JournalContents {
  readonly path: string;
  readonly head: JournalHead;
  /** In the order written (a request appears once; a duplicate index keeps the last). */
  readonly records: readonly RequestRecord[];
  readonly points: readonly { readonly i: number; readonly point: SweepPoint }[];
  readonly repetitions: readonly { readonly i: number; readonly at: number }[];
  readonly progress?: JournalProgress;
  /** The run ended (its run file could not be written). */
  readonly end?: { readonly at: number; readonly cancelled: boolean };
  /** Epoch ms of the latest moment the journal shows (a record's end, a progress line). */
  readonly lastSeenAt: number;
  readonly lastRecordAt?: number;
  /** Lines that could not be read (cut by the kill, damaged) and were skipped. */
  readonly skipped: number;
}

export class JournalError extends Error {
  override readonly name = 'JournalError';
  /** The file system's code when the journal could not be read at all (ENOENT: it is gone, recovered or discarded elsewhere). */
  readonly code?: string;

  constructor(message: string, code?: string) {
    super(message);
    if (code !== undefined) this.code = code;
  }
}

function isHead(x: unknown): x is JournalHead {
  const h = x as Partial<JournalHead> | null;
  return !!h && h.t === 'head' && h.format === JOURNAL_FORMAT && typeof h.id === 'string' && h.id !== '' && (h.kind === 'run' || h.kind === 'sweep') &&
    typeof h.startedAt === 'string' && typeof h.pid === 'number' && typeof h.host === 'string' && isEndpointRecord(h.endpoint) && isWorkloadSpec(h.workload) &&
    (h.prompts === undefined || isPromptRecords(h.prompts)) && (h.repeat === undefined || typeof h.repeat === 'number') && (h.out === undefined || typeof h.out === 'string') &&
    (h.sweep === undefined || (typeof h.sweep === 'object' && Array.isArray(h.sweep.values) && h.sweep.values.every((n) => typeof n === 'number')));
}

/** The end of a request, epoch ms: its last token or failure, else its last byte, else its send. */
export function recordEnd(r: RequestRecord): number {
  return r.sentAt + Math.max(r.e2eMs ?? 0, r.lastByteMs ?? 0);
}

class JournalReader {
  readonly records = new Map<number, RequestRecord>();
  readonly points: { i: number; point: SweepPoint }[] = [];
  readonly repetitions: { i: number; at: number }[] = [];
  progress: JournalProgress | undefined;
  end: { at: number; cancelled: boolean } | undefined;
  lastSeenAt = 0;
  lastRecordAt: number | undefined;
  skipped = 0;

  /** One line after the head; false when it could not be read. */
  line(x: unknown): boolean {
    const l = x as Partial<Record<string, unknown>> | null;
    if (!l || typeof l !== 'object') return false;
    const at = typeof l.at === 'number' && Number.isFinite(l.at) ? l.at : undefined;
    switch (l.t) {
      case 'request': {
        if (!isRequestRecord(l.r)) return false;
        this.records.delete(l.r.index);
        this.records.set(l.r.index, l.r);
        const end = recordEnd(l.r);
        this.lastRecordAt = Math.max(this.lastRecordAt ?? 0, end);
        this.lastSeenAt = Math.max(this.lastSeenAt, end);
        return true;
      }
      case 'point':
        if (typeof l.i !== 'number' || !isSweepPoint(l.point)) return false;
        this.points.push({ i: l.i, point: l.point });
        return true;
      case 'repetition':
        if (typeof l.i !== 'number' || at === undefined) return false;
        this.repetitions.push({ i: l.i, at });
        this.lastSeenAt = Math.max(this.lastSeenAt, at);
        return true;
      case 'progress':
        if (at === undefined || typeof l.finished !== 'number' || typeof l.inFlight !== 'number') return false;
        this.progress = l as unknown as JournalProgress;
        this.lastSeenAt = Math.max(this.lastSeenAt, at);
        return true;
      case 'end':
        if (at === undefined) return false;
        this.end = { at, cancelled: l.cancelled === true };
        this.lastSeenAt = Math.max(this.lastSeenAt, at);
        return true;
      default:
        return false;
    }
  }
}

/** The largest head line read on its own (a head holds the workload and the prompt list). */
const HEAD_MAX_BYTES = 4 * 1024 * 1024;

/** A journal's head line alone (what ran, who wrote it), without reading the rest. */
export async function readJournalHead(path: string): Promise<JournalHead> {
  const handle = await open(path, 'r');
  try {
    const buf = Buffer.alloc(Math.min(HEAD_MAX_BYTES, (await handle.stat()).size));
    const { bytesRead } = await handle.read(buf, 0, buf.length, 0);
    const text = buf.subarray(0, bytesRead).toString('utf8');
    const nl = text.indexOf('\n');
    let value: unknown;
    try {
      value = JSON.parse(nl === -1 ? text : text.slice(0, nl));
    } catch {
      value = undefined;
    }
    if (!isHead(value)) throw new JournalError(`${path}: not an llm-profiler journal (its first line is not a journal head)`);
    return value;
  } finally {
    await handle.close();
  }
}

/** Reads a journal: its head must be whole; any other line that cannot be read is skipped and counted. */
export async function readJournal(path: string): Promise<JournalContents> {
  const st = await lstat(path).catch((e: NodeJS.ErrnoException) => {
    throw new JournalError(`${path}: cannot read the journal (${e.code === 'ENOENT' ? 'no such file' : e.code ?? e.message})`, e.code);
  });
  if (!st.isFile()) throw new JournalError(`${path}: not a regular file`);
  if (st.size > JOURNAL_MAX_BYTES) throw new JournalError(`${path}: ${Math.round(st.size / 2 ** 20)} MB, more than a journal may be`);
  const lines = createInterface({ input: createReadStream(path, { encoding: 'utf8', end: Math.max(0, st.size - 1) }), crlfDelay: Infinity });
  let head: JournalHead | undefined;
  const reader = new JournalReader();
  for await (const text of lines) {
    if (text.trim() === '') continue;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      value = undefined;
    }
    if (!head) {
      if (!isHead(value)) throw new JournalError(`${path}: not an llm-profiler journal (its first line is not a journal head)`);
      head = value;
      reader.lastSeenAt = Date.parse(head.startedAt) || 0;
    } else if (!reader.line(value)) reader.skipped++;
  }
  if (!head) throw new JournalError(`${path}: the journal is empty`);
  return {
    path,
    head,
    records: [...reader.records.values()],
    points: reader.points,
    repetitions: reader.repetitions,
    ...(reader.progress ? { progress: reader.progress } : {}),
    ...(reader.end ? { end: reader.end } : {}),
    lastSeenAt: reader.lastSeenAt,
    ...(reader.lastRecordAt !== undefined ? { lastRecordAt: reader.lastRecordAt } : {}),
    skipped: reader.skipped,
  };
}

/**
 * The process that wrote a journal: still running (its journal is not left over), gone, or on another
 * machine (a shared folder: it cannot be told from here).
 */
export function writerState(head: Pick<JournalHead, 'pid' | 'host' | 'proc'>): 'running' | 'gone' | 'elsewhere' {
  if (head.host !== hostname()) return 'elsewhere';
  try {
    process.kill(head.pid, 0);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EPERM') return 'gone';
  }
  // the pid is alive: the writer only if it is the same process (a pid is reused after a reboot or in a new container)
  if (head.proc === undefined) return 'running';
  const now = processStart(head.pid);
  return now === undefined || now === head.proc ? 'running' : 'gone';
}

/**
 * A process's start, told apart from any other process with its pid: this boot's id and the process's
 * start tick (Linux /proc); undefined where the system does not say.
 */
export function processStart(pid: number): string | undefined {
  try {
    const boot = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // the fields after the command (in parentheses, which may hold spaces): state is field 3, starttime field 22
    const start = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
    return start !== undefined && /^\d+$/.test(start) ? `${boot}:${start}` : undefined;
  } catch {
    return undefined;
  }
}

/** The journals in a folder (regular files named …journal.jsonl whose name starts with `prefix`), sorted. */
export async function journalsIn(dir: string, prefix = ''): Promise<string[]> {
  const names = await readdir(dir).catch(() => [] as string[]);
  const out: string[] = [];
  for (const n of names.filter((x) => x.endsWith(JOURNAL_SUFFIX) && x.startsWith(prefix)).sort()) {
    const st = await lstat(join(dir, n)).catch(() => undefined);
    if (st?.isFile()) out.push(join(dir, n));
  }
  return out;
}
