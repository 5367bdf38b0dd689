// The journals that runs left when their process died (files/journal.ts), one rule for every surface:
// a journal is left when its writer is gone and its run file was never written. One whose writer still
// runs (a run going on in another window) or that another machine wrote is not offered; one whose run
// file is in place (the process died between writing it and removing the journal) is stale and goes.
// Each left journal is offered with the same sentence (present/recoverText.ts `leftLine`), and its run
// file made by run/recover.ts.
import { open, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { displayUrl } from '../engine/core/redact';
import { runFileName } from '../engine/core/runId';
import { journalsIn, readJournal, readJournalHead, writerState } from '../engine/files/journal';
import type { JournalHead } from '../engine/files/journal';
import { recoverRun } from '../engine/run/recover';
import type { RunFile } from '../engine/core/types';

export interface LeftJournal {
  readonly path: string;
  readonly head: JournalHead;
  readonly kind: 'run' | 'sweep';
  /** The endpoint's name, else its URL (secrets redacted). */
  readonly against: string;
  /** Measured requests finished. */
  readonly finished: number;
  /** The requests asked for, when the run was bound by a count. */
  readonly total?: number;
  /** ISO time the journal was last written. */
  readonly stoppedAt: string;
}

/** Whether the file at `path` is the run file of run `id` (its head names it: the id is among the first keys written). */
async function isRunFileOf(path: string, id: string): Promise<boolean> {
  const handle = await open(path, 'r').catch(() => undefined);
  if (!handle) return false;
  try {
    const buf = Buffer.alloc(4096);
    const { bytesRead } = await handle.read(buf, 0, buf.length, 0);
    return buf.subarray(0, bytesRead).toString('utf8').includes(`"id": ${JSON.stringify(id)}`);
  } finally {
    await handle.close();
  }
}

/** The run's file is already written (where the run was to go, or in the journal's own folder, a run store): the journal is stale. */
export async function runFileWritten(head: JournalHead, dir: string): Promise<string | undefined> {
  for (const path of [head.out, join(dir, runFileName(head.id))]) {
    if (path !== undefined && (await isRunFileOf(path, head.id))) return path;
  }
  return undefined;
}

export interface LeftOptions {
  /** Only journals whose name starts so (`<out>.`: those a run with --out left). */
  readonly prefix?: string;
  onProblem?(path: string, message: string): void;
  /** A stale journal was removed (its run file is `runFile`). */
  onStale?(path: string, runFile: string): void;
}

/** The journals in `dir` left by a process that is gone, oldest first; stale ones are removed. */
export async function leftJournals(dir: string, o: LeftOptions = {}): Promise<LeftJournal[]> {
  const out: LeftJournal[] = [];
  for (const path of await journalsIn(dir, o.prefix)) {
    try {
      const head = await readJournalHead(path);
      if (writerState(head) !== 'gone') continue;
      const written = await runFileWritten(head, dir);
      if (written !== undefined) {
        await unlink(path).catch(() => undefined);
        o.onStale?.(path, written);
        continue;
      }
      out.push(await leftOf(path));
    } catch (e) {
      o.onProblem?.(path, (e as Error).message);
    }
  }
  return out;
}

async function leftOf(path: string): Promise<LeftJournal> {
  const j = await readJournal(path);
  const total = j.progress?.total;
  return {
    path,
    head: j.head,
    kind: j.head.kind,
    against: j.head.endpoint.name ?? displayUrl(j.head.endpoint.url),
    finished: j.records.filter((r) => !r.warmup).length,
    ...(total !== undefined ? { total } : {}),
    stoppedAt: new Date(j.lastSeenAt).toISOString(),
  };
}

/** The run file of the journal at `path` (not yet scrubbed by the surface's own scrubber). */
export async function recoverJournal(path: string, now = new Date()): Promise<RunFile> {
  return recoverRun(await readJournal(path), now);
}
