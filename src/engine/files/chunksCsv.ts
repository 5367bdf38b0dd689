// One row per chunk of every request (RFC 4180, CRLF line ends, a header row), beside the one row per
// request of requestsToCsv (runFile.ts): the chunk arrival times a run file keeps, for spreadsheets.
import { csvText } from './csv';
import type { ScrubbedRun } from '../core/redact';
import type { StallCause } from '../core/types';

export const CHUNK_CSV_COLUMNS = ['requestIndex', 'warmup', 'chunk', 'atMs', 'epochMs', 'gapMs', 'stallCause'] as const;

/** To the µs, as the run file's times are: no binary-fraction noise such as 12.300000000000001. */
const toUs = (ms: number): number => Math.round(ms * 1000) / 1000;

function* chunkRows(run: ScrubbedRun): Generator<unknown[]> {
  for (const r of run.requests) {
    const stallAt = new Map<number, StallCause>();
    for (const s of r.stalls ?? []) stallAt.set(s.atChunk, s.cause);
    const t = r.chunkTimesMs;
    for (let k = 0; k < t.length; k++) {
      const at = t[k]!;
      yield [r.index, r.warmup, k, at, toUs(r.sentAt + at), k === 0 ? undefined : toUs(at - t[k - 1]!), stallAt.get(k)];
    }
  }
}

/**
 * Every chunk carrying content or reasoning: the request's `index`, the chunk's number (0 is the
 * first token), its arrival in ms after the request was sent and as epoch ms, the gap since the
 * chunk before (empty for the first), and the cause of the stall this chunk ended, if it ended one.
 * Every cell through csv.ts, as the requests CSV's.
 */
export function chunksToCsv(run: ScrubbedRun): string {
  return csvText(CHUNK_CSV_COLUMNS, chunkRows(run));
}
