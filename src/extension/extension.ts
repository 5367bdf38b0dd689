// Activation: builds the services once and hands them to each area's registrations. Nothing here
// waits on I/O; the engine (dist/engine.js), run and prompt files (dist/files.js), the local server
// runtime and the report's chart code load on first use.
import { activationClock } from './activationClock';
import * as vscode from 'vscode';
import { registerBaselineCommands } from './commands/baselines';
import { registerCompareEndpointsCommand } from './commands/compareEndpoints';
import { registerEndpointCommands } from './commands/endpoints';
import { registerImportCommands } from './commands/import';
import { registerLocalServerCommands } from './commands/localServer';
import { registerProfileCommands } from './commands/profile';
import { registerRunCommands } from './commands/runs';
import { BaselineService } from './baselineService';
import { VIEW_SIDEBAR } from './commands';
import { PromptCodeLens } from './codeLens';
import { PromptDiagnostics } from './promptDiagnostics';
import { MultilineInput } from './multilineInput';
import { ConfigService } from './config';
import { JobRunner } from './jobRunner';
import { LocalServerManager } from './localServerManager';
import { Log } from './log';
import { NetworkSettings } from './proxySettings';
import { PromptAnswers, promptReader } from './promptVariables';
import { offerRecovery } from './recovery';
import { ReportPanels } from './reportPanel';
import { RunsModel } from './runsModel';
import { ApiKeys } from './secrets';
import type { Services } from './services';
import { SidebarProvider } from './sidebar';
import { Targets } from './targets';
import { TrustGate } from './trust';
import { registerWalkthrough } from './walkthrough';

activationClock.moduleEnd = performance.now();

/** What activate returns. `test` is only there when the extension runs under an extension test runner. */
export interface ExtensionApi {
  /** Module evaluation (from the bundle's first statement, `require('vscode')` included) plus activate(); compiling the bundle comes before and is measured by the host test. */
  readonly activationMs: number;
  readonly moduleEvalMs: number;
  readonly activateMs: number;
  readonly runsDir: string;
  readonly test?: Pick<Services, 'trust' | 'localServer' | 'runs' | 'config' | 'jobs' | 'promptAnswers' | 'baselines'> & { readonly sidebar: SidebarProvider; /** Everything posted to a webview (state and messages, as scrubbed), from activation on. */ readonly webviewPosts: readonly unknown[] };
}

/** Set by activate, awaited by deactivate: no process outlives the extension. */
let stopOnDeactivate: (() => Promise<void>) | undefined;

function services(context: vscode.ExtensionContext): Services {
  const own = <T extends vscode.Disposable>(d: T): T => { context.subscriptions.push(d); return d; };
  const log = own(new Log());
  const config = own(new ConfigService(log));
  const keys = new ApiKeys(context.secrets, log);
  const trust = new TrustGate();
  // Per workspace when a folder is open; otherwise the global storage (see docs/extension.md, "Where runs are kept").
  const runsDir = vscode.Uri.joinPath(context.storageUri ?? context.globalStorageUri, 'runs').fsPath;
  const runs = own(new RunsModel(runsDir, log));
  const localServer = own(new LocalServerManager(config.current.localServer, log));
  own(config.onDidChange((c) => localServer.setConfig(c.localServer)));
  const reports = own(new ReportPanels(context, (id) => runs.load(id).catch(() => undefined), log));
  const network = new NetworkSettings(config, log);
  const jobs = own(new JobRunner(runs, reports, localServer, log, network, config));
  // a value that may span lines (a diff, code) is typed into an editor, not the one-line input box
  const promptAnswers = own(new PromptAnswers(context.workspaceState, own(new MultilineInput())));
  // its thread starts on the first read, not here
  const reader = own(promptReader(context, log));
  // pins in the workspace's state; comparisons on their own thread, started on the first
  const baselines = own(new BaselineService(context, runs, log));
  return { context, log, config, keys, trust, targets: new Targets(config, keys, trust, log, context.workspaceState), runs, localServer, reports, jobs, network, runsDir, promptAnswers, promptReader: reader, baselines };
}

export function activate(context: vscode.ExtensionContext): ExtensionApi {
  const started = performance.now();
  const s = services(context);
  const sidebar = new SidebarProvider(context.extensionUri, s);
  // not retained while hidden: its page keeps the form as typed in getState, and comes back with it
  context.subscriptions.push(sidebar, vscode.window.registerWebviewViewProvider(VIEW_SIDEBAR, sidebar),
    new PromptCodeLens(s.config, s.runs, s.promptAnswers, s.promptReader, s.baselines), new PromptDiagnostics(s.config, s.promptReader, s.promptAnswers));
  registerWalkthrough(s);
  registerProfileCommands(s);
  registerLocalServerCommands(s);
  registerEndpointCommands(s);
  registerRunCommands(s);
  registerImportCommands(s);
  registerBaselineCommands(s);
  registerCompareEndpointsCommand(s);
  stopOnDeactivate = async () => { await Promise.all([s.localServer.stop(), s.jobs.stopServers()]); };
  // Listing runs is I/O: after activation, not inside it.
  setTimeout(() => { void s.runs.refresh(); }, 0);
  // A run a killed or reloaded window left: offered once the window is up.
  setTimeout(() => { void offerRecovery(s).catch((e: Error) => s.log.error(`looking for unfinished runs: ${e.message}`)); }, 0);

  const activateMs = performance.now() - started;
  const moduleEvalMs = activationClock.moduleEnd - activationClock.moduleStart;
  s.log.info(`activated: module evaluation ${moduleEvalMs.toFixed(1)} ms + activate() ${activateMs.toFixed(1)} ms; runs kept in ${s.runsDir}`);
  const test = context.extensionMode === vscode.ExtensionMode.Test ? { trust: s.trust, jobs: s.jobs, localServer: s.localServer, runs: s.runs, sidebar, config: s.config, promptAnswers: s.promptAnswers, baselines: s.baselines, webviewPosts: s.log.tapWebview() } : undefined;
  return { activationMs: moduleEvalMs + activateMs, moduleEvalMs, activateMs, runsDir: s.runsDir, ...(test ? { test } : {}) };
}

/** Stops the local server and any server a job started: no process outlives the extension. */
export async function deactivate(): Promise<void> {
  const stop = stopOnDeactivate;
  stopOnDeactivate = undefined;
  await stop?.();
}
