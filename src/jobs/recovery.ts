// The journals that runs left in a folder when their process died (files/journal.ts), as a surface
// offers them ("a run against vllm-a stopped at 10:14 with 183 of 400 requests"), and the run file
// of one (run/recover.ts). A journal whose writer still runs (a run going on in another window) or
// that another machine wrote is not offered.
import { journalsIn, readJournal, readJournalHead, writerState } from '../engine/files/journal';
import type { JournalHead } from '../engine/files/journal';
import { recoverRun } from '../engine/run/recover';
import type { RunFile } from '../engine/core/types';

export interface LeftJournal {
  readonly path: string;
  readonly head: JournalHead;
  /** Measured requests finished. */
  readonly finished: number;
  /** The requests asked for, when the run was bound by a count. */
  readonly total?: number;
  /** ISO time the journal was last written. */
  readonly stoppedAt: string;
}

/** The journals in `dir` whose writer is gone, oldest first; one that cannot be read is skipped (said by `onProblem`). */
export async function leftJournals(dir: string, onProblem?: (path: string, message: string) => void): Promise<LeftJournal[]> {
  const out: LeftJournal[] = [];
  for (const path of await journalsIn(dir)) {
    try {
      if (writerState(await readJournalHead(path)) !== 'gone') continue;
      const j = await readJournal(path);
      const total = j.progress?.total;
      out.push({
        path,
        head: j.head,
        finished: j.records.filter((r) => !r.warmup).length,
        ...(total !== undefined ? { total } : {}),
        stoppedAt: new Date(j.lastSeenAt).toISOString(),
      });
    } catch (e) {
      onProblem?.(path, (e as Error).message);
    }
  }
  return out;
}

/** The run file of the journal at `path` (not yet scrubbed by the surface's own scrubber). */
export async function recoverJournal(path: string, now = new Date()): Promise<RunFile> {
  return recoverRun(await readJournal(path), now);
}
