// Add endpoint (to the user's settings) and Set API key (to secret storage).
import * as vscode from 'vscode';
import { API_KINDS } from '../../engine/types';
import { Command } from '../commands';
import { validateEndpoint, type EndpointEntry } from '../configModel';
import type { Services } from '../services';
import { registerCommand } from './register';

interface AddEndpointArgs {
  readonly name?: string;
  readonly url?: string;
  readonly api?: string;
  readonly model?: string;
}

async function askEndpoint(s: Services, args: AddEndpointArgs | undefined): Promise<Record<string, string> | undefined> {
  const existing = s.config.current.endpoints;
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
  const api = args?.api ?? (await vscode.window.showQuickPick(['auto', ...API_KINDS], { title: 'Add endpoint (3/4)', placeHolder: 'Which API does it speak? (auto detects it)' }));
  if (!api) return undefined;
  const model = args?.model ?? await vscode.window.showInputBox({ title: 'Add endpoint (4/4)', prompt: 'Model name (optional)' });
  if (model === undefined) return undefined;
  return { name: name.trim(), url: url.trim(), api, ...(model.trim() ? { model: model.trim() } : {}) };
}

async function addEndpoint(s: Services, args: AddEndpointArgs | undefined): Promise<string | undefined> {
  const raw = await askEndpoint(s, args);
  if (!raw) return undefined;
  const { entry, errors } = validateEndpoint(raw, 'user');
  if (!entry) { void vscode.window.showErrorMessage(`LLM Profiler: ${errors.join('; ')}`); return undefined; }
  const c = vscode.workspace.getConfiguration('llmProfiler');
  const user = (c.inspect<unknown[]>('endpoints')?.globalValue ?? []).slice();
  user.push(raw);
  await c.update('endpoints', user, vscode.ConfigurationTarget.Global);
  s.log.info(`added endpoint "${entry.name}" (${entry.url}) to user settings`);
  if (!args) {
    const pick = await vscode.window.showInformationMessage(`LLM Profiler: added "${entry.name}".`, 'Set API key', 'Profile it');
    if (pick === 'Set API key') await vscode.commands.executeCommand(Command.SetApiKey, entry.name);
    else if (pick === 'Profile it') await vscode.commands.executeCommand(Command.ProfileEndpoint, { endpoint: entry.name });
  }
  return entry.name;
}

async function pickEndpoint(s: Services, name: string | undefined): Promise<EndpointEntry | undefined> {
  const eps = s.config.current.endpoints;
  if (name) {
    const entry = eps.find((e) => e.name === name);
    if (!entry) void vscode.window.showErrorMessage(`LLM Profiler: no endpoint named "${name}".`);
    return entry;
  }
  if (!eps.length) { void vscode.window.showInformationMessage('LLM Profiler: add an endpoint first.'); return undefined; }
  return (await vscode.window.showQuickPick(eps.map((e) => ({ label: e.name, description: e.url, e })), { placeHolder: 'Set the API key of which endpoint?' }))?.e;
}

async function setApiKey(s: Services, name: string | undefined, key: string | undefined): Promise<boolean> {
  const entry = await pickEndpoint(s, name);
  if (!entry) return false;
  if (s.trust.isRestricted(entry)) {
    void vscode.window.showWarningMessage(`LLM Profiler: "${entry.name}" is defined by an untrusted workspace; trust the workspace before giving it a key.`);
    return false;
  }
  const value = key ?? await vscode.window.showInputBox({
    title: `API key for ${entry.name}`, prompt: `Sent as a bearer token to ${new URL(entry.url).origin} only; kept in VS Code's secret storage. Empty removes it.`,
    password: true, ignoreFocusOut: true,
  });
  if (value === undefined) return false;
  if (value.trim()) { await s.keys.set(entry, value.trim()); s.log.info(`API key set for "${entry.name}" (stored in secret storage)`); }
  else { await s.keys.delete(entry.name); s.log.info(`API key removed for "${entry.name}"`); }
  return true;
}

export function registerEndpointCommands(s: Services): void {
  registerCommand(s.context, Command.AddEndpoint, (args?: AddEndpointArgs) => addEndpoint(s, args));
  registerCommand(s.context, Command.SetApiKey, (name?: string, key?: string) => setApiKey(s, name, key));
}
