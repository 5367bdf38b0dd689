// Run ids: UTC time to the second (so they sort by time as text) and 6 random base-36 characters.

export function newRunId(now: Date = new Date()): string {
  const t = now.toISOString().slice(0, 19).replace(/:/g, '-');
  const bytes = globalThis.crypto.getRandomValues(new Uint8Array(6));
  let suffix = '';
  for (const b of bytes) suffix += (b % 36).toString(36);
  return `${t}-${suffix}`;
}

/** A file name safe on every platform, from a run id. */
export function runFileName(id: string): string {
  return `${id.replace(/[^A-Za-z0-9._-]/g, '_')}.json`;
}

/** How a run's journal is named (files/journal.ts): `<run id>.journal.jsonl`, or beside --out `<out>.<run id>.journal.jsonl`. */
export const JOURNAL_SUFFIX = '.journal.jsonl';

/** A journal's file name in a run store, from the run's id. */
export function journalFileName(id: string): string {
  return `${id.replace(/[^A-Za-z0-9._-]/g, '_')}${JOURNAL_SUFFIX}`;
}
