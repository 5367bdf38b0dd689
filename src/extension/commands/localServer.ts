// Start and Stop the local server (the sidebar's buttons and the palette).
import * as vscode from 'vscode';
import { Command } from '../commands';
import type { Services } from '../services';
import { registerCommand } from './register';

async function start(s: Services, args?: { parallel?: number }): Promise<{ url: string; pid: number; model: string } | undefined> {
  try {
    const h = await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: 'LLM Profiler: starting the local server…' },
      () => s.localServer.start(args?.parallel ? { parallel: args.parallel } : {}));
    void vscode.window.showInformationMessage(`LLM Profiler: local server running at ${h.url} (${h.model}).`);
    return { url: h.url, pid: h.pid, model: h.model };
  } catch (err) {
    void vscode.window.showErrorMessage(`LLM Profiler: the local server did not start: ${(err as Error).message}`, 'Show log').then((p) => { if (p) s.log.show(); });
    return undefined;
  }
}

async function stop(s: Services): Promise<void> {
  if (s.localServer.state === 'stopped') {
    void vscode.window.showInformationMessage('LLM Profiler: the local server is not running.');
    return;
  }
  await s.localServer.stop();
}

export function registerLocalServerCommands(s: Services): void {
  registerCommand(s.context, Command.StartLocalServer, (args?: { parallel?: number }) => start(s, args));
  registerCommand(s.context, Command.StopLocalServer, () => stop(s));
}
