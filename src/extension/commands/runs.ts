// The stored runs: open, compare, export as CSV, delete; and the log and a prompt file's problem.
import { writeFile } from 'node:fs/promises';
import * as vscode from 'vscode';
import { scrubRun } from '../../engine/core/redact';
import type { RunFile } from '../../engine/core/types';
import { importedNameParts } from '../../present/importText';
import { runFileName, runLabel, runNameParts } from '../../present/runText';
import { formatMs } from '../../present/units';
import { Command } from '../commands';
import { loadFiles } from '../lazy';
import type { RunIndexEntry } from '../runStore';
import { saidSaved } from '../savedFile';
import { hostClock } from '../clock';
import type { SurfaceClock } from '../../shared/protocol';
import type { Services } from '../services';
import { registerCommand } from './register';

/** A stored run as a quick pick item: its name, its figures, its id. */
function runItem(r: RunIndexEntry, clock: SurfaceClock): vscode.QuickPickItem & { id: string } {
  const figures = [`${r.completed} completed`, r.failed ? `${r.failed} failed` : '', r.cancelled ? 'cancelled' : '', r.interrupted ? 'interrupted: recovered from its journal' : '',
    r.ttftP50Ms !== undefined ? `TTFT p50 ${formatMs(r.ttftP50Ms)}` : '', r.tpotP50Ms !== undefined ? `TPOT p50 ${formatMs(r.tpotP50Ms)}` : ''];
  return { label: runLabel(r, clock), description: r.id, detail: figures.filter(Boolean).join(' · '), id: r.id };
}

export async function pickRun(s: Services, placeHolder: string): Promise<string | undefined> {
  await s.runs.refresh();
  if (!s.runs.runs.length) { void vscode.window.showInformationMessage('LLM Profiler: no runs yet in this workspace. Run "Profile endpoint" first.'); return undefined; }
  const pick = await vscode.window.showQuickPick(s.runs.runs.map((r) => runItem(r, hostClock())), { placeHolder, matchOnDescription: true });
  return pick?.id;
}

/** A stored run, or undefined after saying why it cannot be read (in the report panel). */
async function loadRun(s: Services, id: string): Promise<RunFile | undefined> {
  try {
    return await s.runs.load(id);
  } catch (err) {
    const message = (err as Error).message;
    s.log.error(`could not open run ${id}: ${message}`);
    s.reports.showError(message, id);
    return undefined;
  }
}

async function openRun(s: Services, runId: string | undefined): Promise<void> {
  const id = runId ?? await pickRun(s, 'Open which run?');
  if (!id) return;
  const run = await loadRun(s, id);
  if (run) s.reports.show(run);
}

async function compareRuns(s: Services, a: string | undefined, b: string | undefined): Promise<void> {
  if (!a || !b) {
    await s.runs.refresh();
    if (s.runs.runs.length < 2) { void vscode.window.showInformationMessage('LLM Profiler: comparing needs two runs.'); return; }
    const picks = await vscode.window.showQuickPick(s.runs.runs.map((r) => runItem(r, hostClock())), { placeHolder: 'Pick two runs to compare', canPickMany: true, matchOnDescription: true });
    if (!picks) return;
    if (picks.length !== 2) { void vscode.window.showWarningMessage('LLM Profiler: pick exactly two runs.'); return; }
    [a, b] = [picks[0]!.id, picks[1]!.id];
  }
  const [ra, rb] = [await loadRun(s, a), await loadRun(s, b)];
  if (ra && rb) s.reports.show(ra, rb);
}

async function exportCsv(s: Services, runId: string | undefined, target: string | undefined): Promise<string | undefined> {
  const id = runId ?? await pickRun(s, 'Export which run as CSV?');
  if (!id) return undefined;
  const run = await loadRun(s, id);
  if (!run) return undefined;
  const dest = target ?? (await vscode.window.showSaveDialog({
    defaultUri: vscode.Uri.joinPath(vscode.workspace.workspaceFolders?.[0]?.uri ?? vscode.Uri.file(s.runsDir), runFileName(importedNameParts(run) ?? runNameParts(run), '.csv')),
    filters: { CSV: ['csv'] },
  }))?.fsPath;
  if (!dest) return undefined;
  const { requestsToCsv } = await loadFiles();
  await writeFile(dest, requestsToCsv(scrubRun(run, s.log.scrubber)), 'utf8');
  s.log.info(`exported run ${run.id} to ${dest}`);
  if (!target) void saidSaved(`LLM Profiler: exported ${run.requests.length} requests to ${dest}.`, vscode.Uri.file(dest));
  return dest;
}

async function deleteRun(s: Services, runId: string | undefined, opts: { confirm?: boolean } | undefined): Promise<boolean> {
  const id = runId ?? await pickRun(s, 'Delete which run?');
  if (!id) return false;
  if (opts?.confirm !== false) {
    const entry = s.runs.runs.find((r) => r.id === id);
    const ok = await vscode.window.showWarningMessage(`Delete the run ${entry ? runLabel(entry, hostClock()) : id}?`, { modal: true }, 'Delete');
    if (ok !== 'Delete') return false;
  }
  await s.runs.delete(id);
  // a deleted run is nobody's baseline any more
  await s.baselines.forgetRun(id);
  s.log.info(`deleted run ${id}`);
  // a report showing it keeps its copy, and says so
  s.reports.markDeleted(id);
  return true;
}

async function showPromptProblem(uri: vscode.Uri | undefined, range: vscode.Range | undefined, message: string | undefined, severity?: 'error' | 'warning'): Promise<void> {
  if (uri && range) await vscode.window.showTextDocument(uri, { selection: range });
  const text = `LLM Profiler: ${message ?? 'this prompt file has a problem'}`;
  void (severity === 'warning' ? vscode.window.showWarningMessage(text) : vscode.window.showErrorMessage(text));
}

export function registerRunCommands(s: Services): void {
  registerCommand(s.context, Command.OpenRun, (runId?: string) => openRun(s, runId));
  registerCommand(s.context, Command.CompareRuns, (a?: string, b?: string) => compareRuns(s, a, b));
  registerCommand(s.context, Command.ExportRunCsv, (runId?: string, target?: string) => exportCsv(s, runId, target));
  registerCommand(s.context, Command.DeleteRun, (runId?: string, opts?: { confirm?: boolean }) => deleteRun(s, runId, opts));
  registerCommand(s.context, Command.ShowLog, () => s.log.show());
  registerCommand(s.context, Command.ShowPromptProblem, (uri?: vscode.Uri, range?: vscode.Range, message?: string, severity?: 'error' | 'warning') => showPromptProblem(uri, range, message, severity));
}
