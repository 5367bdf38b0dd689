// Every command handler is registered through here and owned by the extension's context.
import * as vscode from 'vscode';
import type { Command } from '../commands';

export function registerCommand<A extends unknown[]>(context: vscode.ExtensionContext, id: Command, fn: (...args: A) => unknown): void {
  context.subscriptions.push(vscode.commands.registerCommand(id, fn as (...args: unknown[]) => unknown));
}
