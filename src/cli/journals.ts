// The CLI's side of a run's journal (jobs/journal.ts): where it goes (beside --out, else the journal
// home), the journals earlier runs left there (said before a run starts), and what happens to it once
// the run ends: removed when the run file is in place, kept and named when it could not be written.
import { lstat, mkdir } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import type { ScrubbedRun } from '../engine/core/redact';
import { writeRunFile } from '../engine/files/runFile';
import { fsErrorText } from '../engine/files/fsErrors';
import { journalFileName, runFileName } from '../engine/core/runId';
import { JobJournal, journalHome } from '../jobs/journal';
import { leftJournals } from '../jobs/recovery';
import { leftLine } from '../present/recoverText';
import type { Job } from '../jobs/job';
import type { CliIo } from './io';
import type { Printer } from './printer';

/** The journal of a run or sweep job: `<out>.<run id>.journal.jsonl` beside --out, else in the journal home. Undefined for other jobs. */
export async function journalFor(job: Job, runId: string, out: string | undefined, io: CliIo, printer: Printer): Promise<JobJournal | undefined> {
  if (job.kind !== 'run' && job.kind !== 'sweep') return undefined;
  const target = out !== undefined ? resolve(io.cwd, out) : undefined;
  let dir: string;
  try {
    dir = target !== undefined ? dirname(target) : journalHome(io.env);
    await mkdir(dir, { recursive: true });
  } catch (e) {
    printer.err(`llm-profiler: warning: no journal for this run (${(e as NodeJS.ErrnoException).code ?? (e as Error).message}): a run killed before its end would be lost\n`);
    return undefined;
  }
  const name = target !== undefined ? `${basename(target)}.${journalFileName(runId)}` : journalFileName(runId);
  return new JobJournal({
    path: join(dir, name),
    ...(target !== undefined ? { out: target } : {}),
    scrubber: printer.scrubber,
    onError: (m) => printer.err(`llm-profiler: warning: ${m}\n`),
  });
}

/** Journals that runs which did not end left beside `out` and in the journal home: said, with how to recover them. */
export async function sayLeftovers(out: string | undefined, io: CliIo, printer: Printer): Promise<void> {
  const target = out !== undefined ? resolve(io.cwd, out) : undefined;
  const found = [
    ...(target !== undefined ? await leftJournals(dirname(target), { prefix: `${basename(target)}.` }) : []),
    ...(await leftJournals(journalHome(io.env))),
  ];
  for (const j of found) printer.err(`llm-profiler: ${leftLine(j)} Its journal: llm-profiler recover ${j.path}\n`);
}

/**
 * After the run: the journal goes once the run file is in place (or no file was asked for). When
 * --out could not be written, a whole journal stays and is named; one that lacks lines (its disk was
 * full too), or that is no longer where it was written (its folder was removed during the run: the
 * lines went to a file no name reaches), or none at all, is replaced by the run file written into the
 * journal home.
 */
export async function settleJournal(journal: JobJournal | undefined, run: ScrubbedRun, stored: boolean, io: CliIo, printer: Printer): Promise<void> {
  if (stored) return journal?.discard();
  const there = journal !== undefined && (await lstat(journal.path).then((st) => st.isFile(), () => false));
  if (journal && there && (await journal.whole())) {
    await journal.keep(run);
    printer.err(`llm-profiler: every finished request is in the journal ${journal.path}: llm-profiler recover ${journal.path} --out OTHER.json\n`);
    return;
  }
  const home = journalHome(io.env);
  const fallback = join(home, runFileName(run.id));
  try {
    await mkdir(home, { recursive: true });
    await writeRunFile(fallback, run, printer.scrubber);
    printer.err(`llm-profiler: the run is kept in ${fallback}\n`);
    await journal?.discard();
  } catch (e) {
    await journal?.keep(run);
    const rest = journal && there ? `what the journal ${journal.path} holds can be recovered` : 'the run is lost';
    printer.err(`llm-profiler: the run could not be kept in ${fallback} either (${fsErrorText(e)}); ${rest}\n`);
  }
}
