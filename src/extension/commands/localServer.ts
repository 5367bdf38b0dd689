// Start and Stop the local server (the sidebar's buttons and the palette), and the way forward where
// it cannot start as set up: a llama-server binary picked from disk, or an endpoint instead.
import * as vscode from 'vscode';
import { Command } from '../commands';
import { BUNDLED_MISSING } from '../bundledBackend';
import type { Log } from '../log';
import type { Services } from '../services';
import { registerCommand } from './register';

const USE_BINARY = 'Use a llama-server binary…';
const ADD_ENDPOINT = 'Add endpoint';
const SHOW_LOG = 'Show log';

/**
 * Asks for a llama-server binary and sets the local server to use it (user settings:
 * localServer.backend "llama-server" and localServer.llamaServerPath). True when set.
 */
export async function useLlamaServerBinary(s: { readonly log: Pick<Log, 'info'> }): Promise<boolean> {
  const picked = await vscode.window.showOpenDialog({
    title: 'The llama-server binary (llama.cpp\'s server) for the local server',
    openLabel: 'Use this llama-server',
    canSelectFiles: true, canSelectFolders: false, canSelectMany: false,
  });
  const file = picked?.[0];
  if (!file) return false;
  const c = vscode.workspace.getConfiguration('llmProfiler');
  await c.update('localServer.llamaServerPath', file.fsPath, vscode.ConfigurationTarget.Global);
  await c.update('localServer.backend', 'llama-server', vscode.ConfigurationTarget.Global);
  s.log.info(`local server: set to llama-server at ${file.fsPath} (user settings)`);
  const pick = await vscode.window.showInformationMessage(`LLM Profiler: the local server now runs ${file.fsPath}.`, 'Start local server');
  if (pick) await vscode.commands.executeCommand(Command.StartLocalServer);
  return true;
}

/**
 * The local server cannot start as set up: says why, with buttons that lead on from the UI (a
 * llama-server binary, or an endpoint instead), rather than a setting's name to look up.
 */
export async function offerWayForward(s: Pick<Services, 'log'>, headline: string): Promise<void> {
  const pick = await vscode.window.showErrorMessage(`LLM Profiler: ${headline}`, USE_BINARY, ADD_ENDPOINT, SHOW_LOG);
  if (pick === USE_BINARY) await useLlamaServerBinary(s);
  else if (pick === ADD_ENDPOINT) await vscode.commands.executeCommand(Command.AddEndpoint);
  else if (pick === SHOW_LOG) s.log.show();
}

async function start(s: Services, args?: { parallel?: number }): Promise<{ url: string; pid: number; model: string } | undefined> {
  if (s.localServer.bundledMissing) {
    s.log.warn(`local server: not started: ${BUNDLED_MISSING}`);
    void offerWayForward(s, BUNDLED_MISSING);
    return undefined;
  }
  try {
    const h = await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: 'LLM Profiler: starting the local server…' },
      () => s.localServer.start(args?.parallel ? { parallel: args.parallel } : {}));
    void vscode.window.showInformationMessage(`LLM Profiler: local server running at ${h.url} (${h.model}).`);
    return { url: h.url, pid: h.pid, model: h.model };
  } catch (err) {
    void offerWayForward(s, `the local server did not start: ${(err as Error).message.split('\n')[0]}`);
    return undefined;
  }
}

/** How long Stop both waits for the cancelled run to end (it keeps what finished) before stopping the server. */
const RUN_END_WAIT_MS = 10_000;

/** Resolves once no run is in progress, or after `ms`. */
function runEnded(s: Pick<Services, 'jobs'>, ms: number): Promise<void> {
  if (!s.jobs.active) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    const sub = s.jobs.onDidChange(() => { if (!s.jobs.active) done(); });
    function done(): void { clearTimeout(timer); sub.dispose(); resolve(); }
  });
}

/** Stops the server; when a run is using it, asks first (stopping it would fail every request still to come). False: kept running. */
async function stop(s: Services): Promise<boolean> {
  if (s.localServer.state === 'stopped') {
    void vscode.window.showInformationMessage('LLM Profiler: the local server is not running.');
    return false;
  }
  if (s.localServer.inUse) {
    const pick = await vscode.window.showWarningMessage('A run is using the local server.', {
      modal: true,
      detail: 'Stopping the server alone would fail every request the run still sends. Stop both (the run is cancelled and keeps what finished), or cancel to keep both running.',
    }, 'Stop both');
    if (pick !== 'Stop both') return false;
    s.log.info('local server: stopping it and the run using it (asked)');
    s.jobs.cancel();
    await runEnded(s, RUN_END_WAIT_MS);
  }
  await s.localServer.stop();
  return true;
}

export function registerLocalServerCommands(s: Services): void {
  registerCommand(s.context, Command.StartLocalServer, (args?: { parallel?: number }) => start(s, args));
  registerCommand(s.context, Command.StopLocalServer, () => stop(s));
}
