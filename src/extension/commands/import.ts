// "Open benchmark result…": another tool's per-request output (the tools of IMPORT_TOOL_ROWS in
// engine/core/types.ts) made a run by the engine's importers (loaded with the run files,
// dist/files.js), stored like a measured run and shown in the report.
// From the palette (a file picker), the Explorer's context menu (its Uri and the selection) and a
// file dropped on the report panel (reportPanel.ts passes the URIs the page was handed).
import * as vscode from 'vscode';
import { IMPORT_TOOL_NAMES, IMPORT_TOOL_ROWS, type RunFile } from '../../engine/core/types';
import { importedLine } from '../../present/importText';
import { Command } from '../commands';
import { loadFiles } from '../lazy';
import type { Services } from '../services';
import { registerCommand } from './register';

/** What the command did: for its callers (the drop on the report, the host tests). */
export interface ImportOutcome {
  /** The runs stored, in the order of the files. */
  readonly runIds: readonly string[];
  /** One message per file that could not be imported: it names the file and what is wrong. Nothing of it was stored. */
  readonly errors: readonly string[];
}

/** The extensions of the files the tools write, each once (the picker's filter). */
const IMPORT_EXTENSIONS: readonly string[] = [...new Set(IMPORT_TOOL_ROWS.flatMap((t) => t.extensions))];
/** More than this at once is refused (each file becomes a run and a report panel). */
const MAX_FILES = 10;

/** A Uri the extension host can read as a file: file:, or the remote's own path when the workbench names it vscode-remote:. */
function localPath(uri: vscode.Uri): string | undefined {
  if (uri.scheme === 'file') return uri.fsPath;
  if (uri.scheme === 'vscode-remote' && vscode.env.remoteName) return uri.path;
  return undefined;
}

function asUri(v: unknown): vscode.Uri | undefined {
  if (v instanceof vscode.Uri) return v;
  if (typeof v === 'string' && v) return /^[a-z][a-z0-9+.-]+:\/\//i.test(v) ? vscode.Uri.parse(v) : vscode.Uri.file(v);
  return undefined;
}

/** The files named by the command's arguments: the Explorer passes the clicked file and the whole selection. */
function argumentUris(first: unknown, all: unknown): vscode.Uri[] {
  const list = Array.isArray(all) && all.length ? all : first !== undefined ? [first] : [];
  const out: vscode.Uri[] = [];
  for (const v of list) {
    const u = asUri(v);
    if (u && !out.some((o) => o.toString() === u.toString())) out.push(u);
  }
  return out;
}

async function pickFiles(): Promise<vscode.Uri[] | undefined> {
  return vscode.window.showOpenDialog({
    canSelectFiles: true, canSelectFolders: false, canSelectMany: true,
    filters: { [`Benchmark results (${IMPORT_TOOL_ROWS.map((t) => t.label).join(', ')})`]: [...IMPORT_EXTENSIONS], 'All files': ['*'] },
    title: `Open a ${IMPORT_TOOL_NAMES} benchmark result`,
    openLabel: 'Open',
    ...(vscode.workspace.workspaceFolders?.[0] ? { defaultUri: vscode.workspace.workspaceFolders[0].uri } : {}),
  });
}

/** Imports one file: the run, or the message that says why not (logged; nothing stored). */
async function importOne(uri: vscode.Uri): Promise<RunFile | string> {
  const path = localPath(uri);
  if (!path) return `${uri.toString(true)}: only a file on the machine the extension runs on can be opened as a benchmark result`;
  try {
    const { importBenchmarkFile } = await loadFiles();
    return await importBenchmarkFile(path);
  } catch (err) {
    // an ImportError names the file and the problem; anything else gets the file named here
    const e = err as Error;
    return e.name === 'ImportError' ? e.message : `${path}: ${e.message}`;
  }
}

/**
 * Imports each file, stores each run (the sidebar lists it; compare can pick it) and shows it; with
 * exactly two, offers to compare them. Errors go to a notification and the log, one per file.
 */
async function openBenchmarkResults(s: Services, uris: readonly vscode.Uri[]): Promise<ImportOutcome> {
  if (uris.length > MAX_FILES) {
    const message = `LLM Profiler: ${uris.length} files is more than the ${MAX_FILES} that can be opened at once.`;
    void vscode.window.showErrorMessage(message);
    return { runIds: [], errors: [message] };
  }
  const runs: RunFile[] = [];
  const errors: string[] = [];
  /** The files refused as a result that may be datasets of prompts (JSON, JSON Lines): offered to profile with. */
  const maybeDatasets = new Map<string, vscode.Uri>();
  await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: 'LLM Profiler' }, async (progress) => {
    for (const uri of uris) {
      progress.report({ message: `opening ${uri.path.split('/').pop() ?? uri.path}…` });
      const got = await importOne(uri);
      if (typeof got === 'string') {
        errors.push(got);
        if (/\.jsonl?$/i.test(uri.path) && localPath(uri)) maybeDatasets.set(got, uri);
        s.log.error(`could not open a benchmark result: ${got}`);
        continue;
      }
      try {
        // the same file of the same run opened again replaces its earlier import (its id kept): no second copy in the list
        await s.runs.refresh();
        const earlier = s.runs.runs.find((r) => r.importedFile === got.importedFrom?.file && r.startedAt === got.startedAt);
        const run = earlier ? { ...got, id: earlier.id } : got;
        const path = await s.runs.save(run);
        s.log.info(`${importedLine(run.importedFrom!)}: ${earlier ? 'replaced' : 'stored as'} run ${run.id} (${path})`);
        runs.push(run);
      } catch (err) {
        const message = `${localPath(uri) ?? uri.toString(true)}: imported, but the run could not be stored: ${(err as Error).message}`;
        errors.push(message);
        s.log.error(message);
      }
    }
  });
  for (const message of errors) {
    // a ShareGPT or prompts file is not a result: it can be sent instead (Profile with this dataset)
    const dataset = maybeDatasets.get(message);
    void vscode.window.showErrorMessage(`LLM Profiler: ${message}`, ...(dataset ? ['Profile with this dataset'] : []), 'Show log').then((pick) => {
      if (pick === 'Show log') s.log.show();
      else if (pick && dataset) void vscode.commands.executeCommand(Command.ProfileDataset, dataset);
    });
  }
  for (const run of runs) s.reports.show(run);
  if (runs.length === 2) {
    const [a, b] = runs as [RunFile, RunFile];
    void vscode.window.showInformationMessage('LLM Profiler: opened two benchmark results.', 'Compare them').then((pick) => { if (pick) s.reports.show(a, b); });
  }
  return { runIds: runs.map((r) => r.id), errors };
}

export function registerImportCommands(s: Services): void {
  // palette: no arguments (a picker); Explorer: (clicked, selection); the report's drop: (undefined, uris)
  registerCommand(s.context, Command.OpenBenchmarkResult, async (first?: unknown, all?: unknown): Promise<ImportOutcome | undefined> => {
    let uris = argumentUris(first, all);
    if (uris.length === 0) {
      const picked = await pickFiles();
      if (!picked?.length) return undefined;
      uris = picked;
    }
    return openBenchmarkResults(s, uris);
  });
}
