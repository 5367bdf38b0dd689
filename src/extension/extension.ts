// Activation: wires the thin adapters together and registers every command, view and provider.
// Nothing here waits on I/O; the engine, the local server runtime and the report panel load on
// first use (see profiler.ts, localServerManager.ts, reportHost.ts).
import { activationClock } from './activationClock';
import { writeFile } from 'node:fs/promises';
import * as vscode from 'vscode';
import type { RunFile } from '../engine/types';
import { Command, VIEW_SIDEBAR } from './commands';
import { ConfigService } from './config';
import { validateEndpoint, type EndpointEntry } from './configModel';
import { PromptCodeLens, parseDocument } from './codeLens';
import { runLabel, summaryText } from './format';
import { LocalServerManager } from './localServerManager';
import { Log } from './log';
import { Profiler, type PrefillDialArgs, type ProfileArgs, type RunOutcome } from './profiler';
import { ReportHost } from './reportHost';
import { RunsModel } from './runsModel';
import { ApiKeys } from './secrets';
import { SidebarProvider } from './sidebar';
import { TrustGate } from './trust';
import { loadEngine } from './engineLoader';

const LAST_TARGET_KEY = 'llmProfiler.lastTarget';
activationClock.moduleEnd = performance.now();

/** What activate returns. `test` is only there when the extension runs under an extension test runner. */
export interface ExtensionApi {
  /** Module evaluation (from the bundle's first statement, `require('vscode')` included) plus activate(); compiling the bundle comes before and is measured by the host test. */
  readonly activationMs: number;
  readonly moduleEvalMs: number;
  readonly activateMs: number;
  readonly runsDir: string;
  readonly test?: {
    readonly trust: TrustGate;
    readonly profiler: Profiler;
    readonly localServer: LocalServerManager;
    readonly runs: RunsModel;
    readonly sidebar: SidebarProvider;
    readonly config: ConfigService;
  };
}

let stopOnDeactivate: (() => Promise<void>) | undefined;

export function activate(context: vscode.ExtensionContext): ExtensionApi {
  const started = performance.now();
  const log = new Log();
  context.subscriptions.push(log);
  const config = new ConfigService(log);
  context.subscriptions.push(config);
  const keys = new ApiKeys(context.secrets, log);
  const trust = new TrustGate();
  // Per workspace when a folder is open; otherwise the global storage (see README "Where runs are kept").
  const runsDir = vscode.Uri.joinPath(context.storageUri ?? context.globalStorageUri, 'runs').fsPath;
  const runs = new RunsModel(runsDir, log);
  context.subscriptions.push(runs);
  const localServer = new LocalServerManager(config.current.localServer, log);
  context.subscriptions.push(localServer);
  context.subscriptions.push(config.onDidChange((c) => localServer.setConfig(c.localServer)));
  const reports = new ReportHost(context, (id) => runs.load(id).catch(() => undefined), (m) => log.warn(m));
  const profiler = new Profiler(config, keys, trust, localServer, runs, reports, log);
  context.subscriptions.push(profiler);
  const sidebar = new SidebarProvider(context.extensionUri, config, keys, trust, localServer, runs, profiler);
  context.subscriptions.push(sidebar);
  context.subscriptions.push(vscode.window.registerWebviewViewProvider(VIEW_SIDEBAR, sidebar));
  context.subscriptions.push(new PromptCodeLens(config, runs));
  stopOnDeactivate = async () => { await Promise.all([localServer.stop(), profiler.stopDialServers()]); };

  const show = async (run: RunFile, compareWith?: RunFile) => {
    const panels = await reports.panels();
    if (panels) { panels.show(run, compareWith); return; }
    const text = compareWith ? `${summaryText(run)}\nvs\n${summaryText(compareWith)}` : summaryText(run);
    void vscode.window.showInformationMessage(text, { modal: false });
  };

  const pickRun = async (placeHolder: string): Promise<string | undefined> => {
    await runs.refresh();
    if (!runs.runs.length) { void vscode.window.showInformationMessage('LLM Profiler: no runs yet in this workspace. Run "Profile endpoint" first.'); return undefined; }
    const pick = await vscode.window.showQuickPick(runs.runs.map((r) => ({ label: runLabel(r), description: r.id, id: r.id })), { placeHolder });
    return pick?.id;
  };

  const loadRun = async (id: string): Promise<RunFile | undefined> => {
    try {
      return await runs.load(id);
    } catch (err) {
      const message = (err as Error).message;
      log.error(`could not open run ${id}: ${message}`);
      const panels = await reports.panels();
      if (panels) panels.showError(message, id);
      else void vscode.window.showErrorMessage(`LLM Profiler: could not open the run: ${message}`);
      return undefined;
    }
  };

  const rememberTarget = (args: ProfileArgs | undefined, outcome: RunOutcome | undefined) => {
    if (outcome && args?.endpoint) void context.workspaceState.update(LAST_TARGET_KEY, args.endpoint);
  };

  const profilePrompt = async (uri: vscode.Uri | undefined, range: vscode.Range | undefined, choose: boolean, args?: ProfileArgs): Promise<RunOutcome | undefined> => {
    const docUri = uri ?? vscode.window.activeTextEditor?.document.uri;
    if (!docUri) return undefined;
    const doc = await vscode.workspace.openTextDocument(docUri);
    const parsed = await parseDocument(doc);
    const line = range?.start.line ?? vscode.window.activeTextEditor?.selection.active.line ?? 0;
    const found = parsed.prompts.find((p) => p.range.startLine === line) ?? parsed.prompts.find((p) => p.range.startLine <= line && line <= p.range.endLine);
    if (!found) {
      const why = parsed.errors[0]?.message ?? 'no prompt at this line';
      void vscode.window.showErrorMessage(`LLM Profiler: cannot profile this prompt: ${why}`);
      return undefined;
    }
    let endpoint = args?.endpoint ?? (choose ? undefined : context.workspaceState.get<string>(LAST_TARGET_KEY));
    let preset = args?.preset ?? (choose ? undefined : 'quick');
    let target = endpoint ? profiler.targetFor(endpoint) : undefined;
    if (!target) { target = await profiler.pickTarget(); endpoint = undefined; }
    if (!target) return undefined;
    preset ??= await profiler.pickPreset();
    if (!preset) return undefined;
    let input = args?.workload;
    if (preset === 'custom' && !input) { input = await profiler.askCustom(config.current.workload); if (!input) return undefined; }
    const outcome = await profiler.run(target, preset, input, {
      prompts: [found.prompt],
      promptRef: { file: doc.uri.fsPath, startLine: found.range.startLine, name: found.name },
      slo: parsed.slo,
    });
    if (outcome) {
      const id = target.kind === 'configured' ? target.entry.name : target.kind === 'local' ? 'local' : target.url;
      void context.workspaceState.update(LAST_TARGET_KEY, id);
    }
    return outcome;
  };

  const reg = (id: Command, fn: (...args: any[]) => unknown) => context.subscriptions.push(vscode.commands.registerCommand(id, fn));

  reg(Command.ProfileEndpoint, async (args?: ProfileArgs) => {
    const outcome = await profiler.profileCommand(args);
    rememberTarget(args, outcome);
    return outcome;
  });

  reg(Command.StartLocalServer, async (args?: { parallel?: number }) => {
    try {
      const h = await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: 'LLM Profiler: starting the local server…' },
        () => localServer.start(args?.parallel ? { parallel: args.parallel } : {}));
      void vscode.window.showInformationMessage(`LLM Profiler: local server running at ${h.url} (${h.model}).`);
      return { url: h.url, pid: h.pid, model: h.model };
    } catch (err) {
      void vscode.window.showErrorMessage(`LLM Profiler: the local server did not start: ${(err as Error).message}`, 'Show log').then((p) => { if (p) log.show(); });
      return undefined;
    }
  });

  reg(Command.StopLocalServer, async () => {
    if (localServer.state === 'stopped') { void vscode.window.showInformationMessage('LLM Profiler: the local server is not running.'); return; }
    await localServer.stop();
  });

  reg(Command.AddEndpoint, async (args?: { name?: string; url?: string; api?: string; model?: string }) => {
    const existing = config.current.endpoints;
    const name = args?.name ?? await vscode.window.showInputBox({
      title: 'Add endpoint (1/4)', prompt: 'A name for it', placeHolder: 'my-vllm',
      validateInput: (v) => (!v.trim() ? 'Enter a name' : existing.some((e) => e.name === v.trim()) ? 'That name is taken' : undefined),
    });
    if (!name) return undefined;
    const url = args?.url ?? await vscode.window.showInputBox({
      title: 'Add endpoint (2/4)', prompt: 'Base URL (no key here: you can set one next)', placeHolder: 'http://127.0.0.1:8000',
      validateInput: (v) => validateEndpoint({ name: 'x', url: v.trim() }, 'user').errors[0],
    });
    if (!url) return undefined;
    const api = args?.api ?? (await vscode.window.showQuickPick(['auto', 'openai-chat', 'openai-completions', 'ollama', 'llamacpp'], { title: 'Add endpoint (3/4)', placeHolder: 'Which API does it speak? (auto detects it)' }));
    if (!api) return undefined;
    const model = args?.model ?? await vscode.window.showInputBox({ title: 'Add endpoint (4/4)', prompt: 'Model name (optional)' });
    if (model === undefined) return undefined;
    const raw = { name: name.trim(), url: url.trim(), api, ...(model.trim() ? { model: model.trim() } : {}) };
    const { entry, errors } = validateEndpoint(raw, 'user');
    if (!entry) { void vscode.window.showErrorMessage(`LLM Profiler: ${errors.join('; ')}`); return undefined; }
    const c = vscode.workspace.getConfiguration('llmProfiler');
    const user = (c.inspect<unknown[]>('endpoints')?.globalValue ?? []).slice();
    user.push(raw);
    await c.update('endpoints', user, vscode.ConfigurationTarget.Global);
    log.info(`added endpoint "${entry.name}" (${entry.url}) to user settings`);
    if (!args) {
      const pick = await vscode.window.showInformationMessage(`LLM Profiler: added "${entry.name}".`, 'Set API key', 'Profile it');
      if (pick === 'Set API key') await vscode.commands.executeCommand(Command.SetApiKey, entry.name);
      else if (pick === 'Profile it') await vscode.commands.executeCommand(Command.ProfileEndpoint, { endpoint: entry.name });
    }
    return entry.name;
  });

  reg(Command.SetApiKey, async (name?: string, key?: string) => {
    let entry: EndpointEntry | undefined;
    const eps = config.current.endpoints;
    if (name) entry = eps.find((e) => e.name === name);
    else {
      if (!eps.length) { void vscode.window.showInformationMessage('LLM Profiler: add an endpoint first.'); return false; }
      entry = (await vscode.window.showQuickPick(eps.map((e) => ({ label: e.name, description: e.url, e })), { placeHolder: 'Set the API key of which endpoint?' }))?.e;
    }
    if (!entry) { if (name) void vscode.window.showErrorMessage(`LLM Profiler: no endpoint named "${name}".`); return false; }
    if (trust.isRestricted(entry)) {
      void vscode.window.showWarningMessage(`LLM Profiler: "${entry.name}" is defined by an untrusted workspace; trust the workspace before giving it a key.`);
      return false;
    }
    const value = key ?? await vscode.window.showInputBox({
      title: `API key for ${entry.name}`, prompt: `Sent as a bearer token to ${new URL(entry.url).origin} only; kept in VS Code's secret storage. Empty removes it.`,
      password: true, ignoreFocusOut: true,
    });
    if (value === undefined) return false;
    if (value.trim()) { await keys.set(entry, value.trim()); log.info(`API key set for "${entry.name}" (stored in secret storage)`); }
    else { await keys.delete(entry.name); log.info(`API key removed for "${entry.name}"`); }
    return true;
  });

  reg(Command.OpenRun, async (runId?: string) => {
    const id = runId ?? await pickRun('Open which run?');
    if (!id) return;
    const run = await loadRun(id);
    if (run) await show(run);
  });

  reg(Command.CompareRuns, async (a?: string, b?: string) => {
    if (!a || !b) {
      await runs.refresh();
      if (runs.runs.length < 2) { void vscode.window.showInformationMessage('LLM Profiler: comparing needs two runs.'); return; }
      const picks = await vscode.window.showQuickPick(runs.runs.map((r) => ({ label: runLabel(r), description: r.id, id: r.id })), { placeHolder: 'Pick two runs to compare', canPickMany: true });
      if (!picks) return;
      if (picks.length !== 2) { void vscode.window.showWarningMessage('LLM Profiler: pick exactly two runs.'); return; }
      [a, b] = [picks[0]!.id, picks[1]!.id];
    }
    const [ra, rb] = [await loadRun(a), await loadRun(b)];
    if (ra && rb) await show(ra, rb);
  });

  reg(Command.ExportRunCsv, async (runId?: string, target?: string) => {
    const id = runId ?? await pickRun('Export which run as CSV?');
    if (!id) return undefined;
    const run = await loadRun(id);
    if (!run) return undefined;
    const dest = target ?? (await vscode.window.showSaveDialog({
      defaultUri: vscode.Uri.joinPath(vscode.workspace.workspaceFolders?.[0]?.uri ?? vscode.Uri.file(runsDir), `${run.id}.csv`),
      filters: { CSV: ['csv'] },
    }))?.fsPath;
    if (!dest) return undefined;
    const { requestsToCsv } = await loadEngine();
    await writeFile(dest, requestsToCsv(run), 'utf8');
    log.info(`exported run ${run.id} to ${dest}`);
    if (!target) void vscode.window.showInformationMessage(`LLM Profiler: exported ${run.requests.length} requests to ${dest}.`);
    return dest;
  });

  reg(Command.DeleteRun, async (runId?: string, opts?: { confirm?: boolean }) => {
    const id = runId ?? await pickRun('Delete which run?');
    if (!id) return false;
    if (opts?.confirm !== false) {
      const entry = runs.runs.find((r) => r.id === id);
      const ok = await vscode.window.showWarningMessage(`Delete the run ${entry ? runLabel(entry) : id}?`, { modal: true }, 'Delete');
      if (ok !== 'Delete') return false;
    }
    await runs.delete(id);
    log.info(`deleted run ${id}`);
    return true;
  });

  reg(Command.ShowLog, () => log.show());

  reg(Command.ComparePrefillChunks, (args?: PrefillDialArgs) => profiler.prefillDial(args));

  reg(Command.ProfilePrompt, (uri?: vscode.Uri, range?: vscode.Range, args?: ProfileArgs) => profilePrompt(uri, range, false, args));
  reg(Command.ProfilePromptWith, (uri?: vscode.Uri, range?: vscode.Range, args?: ProfileArgs) => profilePrompt(uri, range, true, args));

  reg(Command.ShowPromptProblem, async (uri?: vscode.Uri, range?: vscode.Range, message?: string) => {
    if (uri && range) await vscode.window.showTextDocument(uri, { selection: range });
    void vscode.window.showErrorMessage(`LLM Profiler: ${message ?? 'this prompt file has a problem'}`);
  });

  // Listing runs is I/O: after activation, not inside it.
  setTimeout(() => { void runs.refresh(); }, 0);

  const activationMs = performance.now() - started;
  const moduleEvalMs = activationClock.moduleEnd - activationClock.moduleStart;
  log.info(`activated: module evaluation ${moduleEvalMs.toFixed(1)} ms + activate() ${activationMs.toFixed(1)} ms; runs kept in ${runsDir}`);
  const api: ExtensionApi = {
    activationMs: moduleEvalMs + activationMs,
    moduleEvalMs,
    activateMs: activationMs,
    runsDir,
    test: context.extensionMode === vscode.ExtensionMode.Test ? { trust, profiler, localServer, runs, sidebar, config } : undefined,
  };
  return api;
}

/** Stops the local server: no process outlives the extension. */
export async function deactivate(): Promise<void> {
  const stop = stopOnDeactivate;
  stopOnDeactivate = undefined;
  await stop?.();
}
