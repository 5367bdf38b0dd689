// Pin a run as the baseline of its endpoint (URL and model) or of its prompt file, and unpin it: from
// the palette (a run picked), the sidebar's run item or the report. Later runs there are compared with
// it: the prompt's CodeLens says by how much, the sidebar marks a run that regressed.
import { basename } from 'node:path';
import * as vscode from 'vscode';
import { runLabel } from '../../present/runText';
import { endpointKey, type BaselineScope } from '../baselines';
import { Command } from '../commands';
import { hostClock } from '../clock';
import type { RunIndexEntry } from '../runStore';
import type { Services } from '../services';
import { registerCommand } from './register';
import { pickRun } from './runs';

/** What a pin makes the run the baseline of, in words: "the prompt file greet.prompt.md", "the endpoint http://…/v1 (model m)". */
export function scopeText(run: Pick<RunIndexEntry, 'url' | 'model' | 'promptFile'>, scope: BaselineScope): string {
  if (scope === 'promptFile') return `the prompt file ${basename(run.promptFile ?? '')}`;
  return `the endpoint ${run.url}${run.model ? ` (model ${run.model})` : ''}`;
}

async function entryOf(s: Services, id: string): Promise<RunIndexEntry | undefined> {
  let entry = s.runs.runs.find((r) => r.id === id);
  if (!entry) {
    await s.runs.refresh();
    entry = s.runs.runs.find((r) => r.id === id);
  }
  if (!entry) void vscode.window.showErrorMessage(`LLM Profiler: the run ${id} is not stored in this workspace.`);
  return entry;
}

async function chooseScope(run: RunIndexEntry): Promise<BaselineScope | undefined> {
  if (!run.promptFile) return 'endpoint';
  const items: (vscode.QuickPickItem & { scope: BaselineScope })[] = [
    { label: 'Baseline of its prompt file', description: basename(run.promptFile), detail: 'Later runs of this prompt are compared with it (the CodeLens, the sidebar)', scope: 'promptFile' },
    { label: 'Baseline of its endpoint', description: endpointKey(run.url, run.model), detail: 'Later runs on this endpoint and model are compared with it', scope: 'endpoint' },
  ];
  return (await vscode.window.showQuickPick(items, { placeHolder: `Pin ${runLabel(run, hostClock())} as the baseline of…` }))?.scope;
}

/** Pins a run; resolves to where (scope and key), or undefined when nothing was pinned. */
async function pinBaseline(s: Services, runId: string | undefined, scope: BaselineScope | undefined): Promise<{ scope: BaselineScope; key: string } | undefined> {
  const id = runId ?? await pickRun(s, 'Pin which run as a baseline?');
  if (!id) return undefined;
  const run = await entryOf(s, id);
  if (!run) return undefined;
  if (scope === 'promptFile' && !run.promptFile) {
    void vscode.window.showErrorMessage(`LLM Profiler: ${runLabel(run, hostClock())} was not sent from a prompt file; it can be the baseline of its endpoint.`);
    return undefined;
  }
  const chosen = scope ?? await chooseScope(run);
  if (!chosen) return undefined;
  const key = await s.baselines.store.pin(run, chosen);
  s.log.info(`pinned run ${run.id} as the baseline of ${chosen} ${key}`);
  void vscode.window.showInformationMessage(`LLM Profiler: ${runLabel(run, hostClock())} is now the baseline of ${scopeText(run, chosen)}.`);
  return { scope: chosen, key };
}

/** Unpins a run wherever it is a baseline; resolves to the number of pins removed. */
async function unpinBaseline(s: Services, runId: string | undefined): Promise<number> {
  let id = runId;
  if (!id) {
    const pins = s.baselines.store.all();
    if (!pins.length) { void vscode.window.showInformationMessage('LLM Profiler: no run is pinned as a baseline.'); return 0; }
    const items = pins.map((p) => {
      const run = s.runs.runs.find((r) => r.id === p.runId);
      return { label: run ? runLabel(run, hostClock()) : p.runId, description: p.scope === 'promptFile' ? `prompt file ${basename(p.key)}` : `endpoint ${p.key}`, runId: p.runId };
    });
    id = (await vscode.window.showQuickPick(items, { placeHolder: 'Unpin which baseline?' }))?.runId;
    if (!id) return 0;
  }
  const removed = await s.baselines.store.unpin(id);
  s.log.info(`unpinned run ${id} (${removed} baseline${removed === 1 ? '' : 's'})`);
  return removed;
}

export function registerBaselineCommands(s: Services): void {
  registerCommand(s.context, Command.PinBaseline, (runId?: string, scope?: BaselineScope) => pinBaseline(s, runId, scope));
  registerCommand(s.context, Command.UnpinBaseline, (runId?: string) => unpinBaseline(s, runId));
}
