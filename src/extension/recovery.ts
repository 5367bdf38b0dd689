// On start, the runs a window left unfinished (its extension host killed, the window reloaded, the
// machine asleep): each journal in the run store whose writer is gone is offered, "A run against
// vllm-a stopped at 10:14 with 183 of 400 requests: Recover / Discard". Recover saves the run file
// (marked interrupted) and opens it; Discard removes the journal after asking. Nothing is loaded
// unless the run store holds a journal; a journal offered in two windows is recovered once.
import { readdir, unlink } from 'node:fs/promises';
import * as vscode from 'vscode';
import { JOURNAL_SUFFIX } from '../engine/core/runId';
import type { LeftJournal } from '../jobs/recovery';
import { finishedOf, leftLine } from '../present/recoverText';
import { hostClock } from './clock';
import { loadEngine } from './lazy';
import type { EngineModule } from './lazy';
import type { Services } from './services';

type RecoveryServices = Pick<Services, 'runs' | 'log' | 'reports' | 'runsDir'>;

/** Offers each left journal of the run store; resolves once every offer is on screen (not answered). */
export async function offerRecovery(s: RecoveryServices): Promise<void> {
  const names = await readdir(s.runsDir).catch(() => [] as string[]);
  if (!names.some((n) => n.endsWith(JOURNAL_SUFFIX))) return;
  const engine = await loadEngine();
  const left = await engine.leftJournals(s.runsDir, {
    onProblem: (path, message) => s.log.warn(`a run's journal could not be read: ${path}: ${message}`),
    onStale: (path, runFile) => s.log.info(`removed the journal ${path}: its run was saved (${runFile}) before its window stopped`),
  });
  for (const j of left) void offerOne(engine, s, j);
}

async function offerOne(engine: EngineModule, s: RecoveryServices, j: LeftJournal): Promise<void> {
  const line = leftLine(j, hostClock());
  s.log.info(`left unfinished: ${line} Journal: ${j.path}`);
  const pick = await vscode.window.showWarningMessage(`LLM Profiler: ${line}`, 'Recover', 'Discard');
  if (pick === 'Recover') await recoverOne(engine, s, j);
  else if (pick === 'Discard') await discardOne(s, j);
}

async function recoverOne(engine: EngineModule, s: RecoveryServices, j: LeftJournal): Promise<void> {
  try {
    const run = await engine.recoverJournal(j.path);
    const path = await s.runs.save(run);
    await unlink(j.path).catch(() => undefined);
    s.log.info(`run ${run.id}: recovered from its journal (${finishedOf(run.interrupted?.finished ?? run.summary.completed, run.interrupted?.total)}); saved to ${path}`);
    s.reports.show(await s.runs.load(run.id));
  } catch (e) {
    const gone = (e as NodeJS.ErrnoException).code === 'ENOENT';
    const message = gone ? 'it was recovered or discarded in another window' : s.log.redact((e as Error).message);
    s.log.error(`could not recover ${j.path}: ${message}`);
    void vscode.window.showErrorMessage(`LLM Profiler: the run could not be recovered: ${message}`);
  }
}

async function discardOne(s: RecoveryServices, j: LeftJournal): Promise<void> {
  const sure = await vscode.window.showWarningMessage(`Discard what this run measured? ${leftLine(j, hostClock())}`, { modal: true }, 'Discard');
  if (sure !== 'Discard') return;
  await unlink(j.path).catch(() => undefined);
  s.log.info(`discarded the journal ${j.path}`);
}
