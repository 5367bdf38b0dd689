// Add, Edit and Remove endpoint (the user's settings) and Set API key (secret storage). Adding asks
// name, URL, API and model; "auto" probes the server at once and asks for the API when no probe tells.
import * as vscode from 'vscode';
import { Command } from '../commands';
import { isLoopbackUrl } from '../../engine/transport/loopback';
import { validateEndpoint, type EndpointEntry } from '../configModel';
import { apiItems, detectApi, pickApiOrFixUrl, unreachableAt } from '../pickers';
import { withScheme } from '../../jobs/urls';
import { askUrl } from '../urlBox';
import { urlProblem } from '../urlInput';
import type { Services } from '../services';
import { registerCommand } from './register';

interface AddEndpointArgs {
  readonly name?: string;
  readonly url?: string;
  readonly api?: string;
  readonly model?: string;
  /** 'return': no follow-up notification (a picker goes on with the new endpoint). */
  readonly then?: 'return';
}

type RawEndpoint = Record<string, unknown>;

function userEndpoints(): RawEndpoint[] {
  const list = vscode.workspace.getConfiguration('llmProfiler').inspect<unknown[]>('endpoints')?.globalValue;
  return Array.isArray(list) ? list.slice() as RawEndpoint[] : [];
}

async function saveUserEndpoints(list: readonly RawEndpoint[]): Promise<void> {
  await vscode.workspace.getConfiguration('llmProfiler').update('endpoints', list, vscode.ConfigurationTarget.Global);
}

/**
 * The API step: a pick of auto and the kinds; auto probes the server now (where it answers, its API
 * is what is saved) and asks for the kind when no probe can tell. `note` says what was found.
 */
async function askApi(s: Services, title: string, url: string, current: string | undefined): Promise<{ api: string; note: string } | 'fix-url' | undefined> {
  const items = [
    { label: 'auto', description: 'detect it now (and at each run, if the server cannot be reached now)', api: 'auto' },
    ...apiItems().map(({ label, description, api }) => ({ label, description, api: api as string })),
  ];
  if (current) items.sort((a, b) => Number(b.api === current) - Number(a.api === current));
  const pick = await vscode.window.showQuickPick(items, { title, placeHolder: 'Which API does it speak? (auto detects it)', matchOnDescription: true, ignoreFocusOut: true });
  if (!pick) return undefined;
  if (pick.api !== 'auto') return { api: pick.api, note: '' };
  const found = await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: `LLM Profiler: detecting the API of ${url}…` }, () => detectApi(s, url));
  if ('api' in found) {
    s.log.info(`${url} speaks ${found.api} (detected)`);
    return { api: found.api, note: `Detected: ${found.api}. ` };
  }
  if ('undetected' in found) {
    s.log.info(`could not tell which API ${url} speaks (GET ${found.undetected})${found.notFound ? ': every probe got 404' : ''}: asking`);
    // every probe got 404 under the URL's path: the path is asked about first
    const api = await pickApiOrFixUrl(title, url, found);
    return api === 'fix-url' ? api : api ? { api, note: '' } : undefined;
  }
  s.log.info(`the API of ${url} is detected at each run: ${found.failed}`);
  return { api: 'auto', note: 'Not reachable now: its API is detected when it is profiled. ' };
}

/**
 * The URL step ("host:port" taken as http://; checked as it is typed: nothing answering is said, and
 * Enter again keeps it) and the API step, back to the URL when the user goes to fix its path.
 */
async function askUrlAndApi(s: Services, verb: string, args: AddEndpointArgs | undefined, editing: RawEndpoint | undefined): Promise<{ url: string; api: string; note: string } | undefined> {
  let value = typeof editing?.url === 'string' ? editing.url : '';
  for (;;) {
    const url = (args?.url !== undefined ? withScheme(args.url) : undefined) ?? await askUrl({
      title: `${verb} (2/4)`, prompt: 'Base URL (host:port is taken as http://; no key here: you can set one next)', placeHolder: 'http://127.0.0.1:8000',
      value, ignoreFocusOut: true,
      problem: urlProblem,
      unreachable: (v) => unreachableAt(s, v),
      whenUnreachable: 'warn',
      takeAnyway: 'Fix the URL, or press Enter again to keep it: its API is then detected when it is profiled',
    });
    if (!url) return undefined;
    const asked = args?.api !== undefined ? { api: args.api, note: '' } : await askApi(s, `${verb} (3/4)`, url, typeof editing?.api === 'string' ? editing.api : undefined);
    if (asked === 'fix-url' && args?.url === undefined) { value = url; continue; }
    if (!asked || asked === 'fix-url') return undefined;
    return { url, ...asked };
  }
}

/** The input steps of Add endpoint, or of Edit endpoint with `editing`'s values filled in. */
async function askEndpoint(s: Services, args: AddEndpointArgs | undefined, editing?: RawEndpoint): Promise<RawEndpoint | undefined> {
  const verb = editing ? 'Edit endpoint' : 'Add endpoint';
  const oldName = typeof editing?.name === 'string' ? editing.name : undefined;
  const existing = s.config.current.endpoints;
  const name = args?.name ?? await vscode.window.showInputBox({
    title: `${verb} (1/4)`, prompt: 'A name for it', placeHolder: 'my-vllm', value: oldName ?? '', ignoreFocusOut: true,
    validateInput: (v) => (!v.trim() ? 'Enter a name' : v.trim() !== oldName && existing.some((e) => e.name === v.trim()) ? 'That name is taken' : undefined),
  });
  if (!name) return undefined;
  const asked = await askUrlAndApi(s, verb, args, editing);
  if (!asked) return undefined;
  const { url } = asked;
  const model = args?.model ?? await vscode.window.showInputBox({
    title: `${verb} (4/4)`, prompt: `${asked.note}Model name (optional: empty takes the first the server lists)`,
    value: typeof editing?.model === 'string' ? editing.model : '', ignoreFocusOut: true,
  });
  if (model === undefined) return undefined;
  // Edit keeps what the steps do not ask (headers, apiKeyEnv, apiKeyHeader).
  const kept: RawEndpoint = { ...editing };
  delete kept.model;
  return { ...kept, name: name.trim(), url: url.trim(), api: asked.api, ...(model.trim() ? { model: model.trim() } : {}) };
}

/** After adding: what to do next. A key first only where one is likely needed (not a server on this machine). */
async function offerNext(entry: EndpointEntry): Promise<void> {
  const actions = isLoopbackUrl(entry.url) ? ['Profile it', 'Set API key'] : ['Set API key', 'Profile it'];
  const pick = await vscode.window.showInformationMessage(`LLM Profiler: added "${entry.name}".`, ...actions);
  if (pick === 'Set API key') await vscode.commands.executeCommand(Command.SetApiKey, entry.name);
  else if (pick === 'Profile it') await vscode.commands.executeCommand(Command.ProfileEndpoint, { endpoint: entry.name });
}

async function addEndpoint(s: Services, args: AddEndpointArgs | undefined): Promise<string | undefined> {
  const raw = await askEndpoint(s, args);
  if (!raw) return undefined;
  const { entry, errors } = validateEndpoint(raw, 'user');
  if (!entry) { void vscode.window.showErrorMessage(`LLM Profiler: ${errors.join('; ')}`); return undefined; }
  await saveUserEndpoints([...userEndpoints(), raw]);
  s.log.info(`added endpoint "${entry.name}" (${entry.url}) to user settings`);
  await settled(s, entry.name);
  if (!args) void offerNext(entry);
  return entry.name;
}

/** Waits (briefly) until the config snapshot has the endpoint, so that what comes next finds it. */
async function settled(s: Services, name: string): Promise<void> {
  for (let i = 0; i < 20 && !s.config.current.endpoints.some((e) => e.name === name); i++) await new Promise((r) => setTimeout(r, 50));
}

/** A user-settings endpoint by name, or picked among them; workspace ones are edited in the workspace's settings. */
async function pickUserEndpoint(s: Services, name: string | undefined, what: string): Promise<{ entry: EndpointEntry; index: number; list: RawEndpoint[] } | undefined> {
  const list = userEndpoints();
  const mine = s.config.current.endpoints.filter((e) => e.origin === 'user');
  let entry: EndpointEntry | undefined;
  if (name) {
    entry = mine.find((e) => e.name === name);
    if (!entry) {
      const other = s.config.current.endpoints.find((e) => e.name === name);
      void vscode.window.showErrorMessage(other ? `LLM Profiler: "${name}" is defined in the workspace's settings: change it there.` : `LLM Profiler: no endpoint named "${name}" in your user settings.`);
      return undefined;
    }
  } else {
    if (!mine.length) { void vscode.window.showInformationMessage('LLM Profiler: no endpoint in your user settings yet: add one first.'); return undefined; }
    entry = (await vscode.window.showQuickPick(mine.map((e) => ({ label: e.name, description: e.url, e })), { placeHolder: `${what} which endpoint?` }))?.e;
    if (!entry) return undefined;
  }
  const index = list.findIndex((r) => typeof r?.name === 'string' && r.name.trim() === entry.name);
  if (index < 0) return undefined;
  return { entry, index, list };
}

async function editEndpoint(s: Services, name: string | undefined, args?: AddEndpointArgs): Promise<string | undefined> {
  const found = await pickUserEndpoint(s, name, 'Edit');
  if (!found) return undefined;
  const { entry: old, index, list } = found;
  const raw = await askEndpoint(s, args, list[index]);
  if (!raw) return undefined;
  const { entry, errors } = validateEndpoint(raw, 'user');
  if (!entry) { void vscode.window.showErrorMessage(`LLM Profiler: ${errors.join('; ')}`); return undefined; }
  // The stored key follows a new name while the URL's origin is the same; a key never goes to another origin.
  const hadKey = await s.keys.has(old);
  const sameOrigin = new URL(old.url).origin === new URL(entry.url).origin;
  if (hadKey && old.name !== entry.name && sameOrigin) {
    const key = await s.keys.resolve(old, false);
    if (key) await s.keys.set(entry, key);
    await s.keys.delete(old.name);
  } else if (hadKey && !sameOrigin) {
    await s.keys.delete(old.name);
    void vscode.window.showInformationMessage(`LLM Profiler: the API key of "${old.name}" was for ${new URL(old.url).origin}; it was removed. Set one for the new URL if it needs one.`);
  }
  list[index] = raw;
  await saveUserEndpoints(list);
  s.log.info(`edited endpoint "${old.name}"${old.name !== entry.name ? ` (now "${entry.name}")` : ''}: ${entry.url}, api ${entry.api}`);
  await settled(s, entry.name);
  return entry.name;
}

async function removeEndpoint(s: Services, name: string | undefined, opts?: { confirm?: boolean }): Promise<boolean> {
  const found = await pickUserEndpoint(s, name, 'Remove');
  if (!found) return false;
  const { entry, index, list } = found;
  if (opts?.confirm !== false) {
    const ok = await vscode.window.showWarningMessage(`Remove the endpoint "${entry.name}" (${entry.url}) from your user settings?`,
      { modal: true, detail: 'Its stored API key is deleted too. Its runs are kept.' }, 'Remove');
    if (ok !== 'Remove') return false;
  }
  list.splice(index, 1);
  await saveUserEndpoints(list);
  await s.keys.delete(entry.name);
  s.log.info(`removed endpoint "${entry.name}" (${entry.url}) from user settings, and its stored key`);
  return true;
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
  const local = isLoopbackUrl(entry.url) ? ' A server on this machine usually needs none.' : '';
  const value = key ?? await vscode.window.showInputBox({
    title: `API key for ${entry.name}`, prompt: `Sent as a bearer token to ${new URL(entry.url).origin} only; kept in VS Code's secret storage. Empty removes it.${local}`,
    password: true, ignoreFocusOut: true,
  });
  if (value === undefined) return false;
  if (value.trim()) { await s.keys.set(entry, value.trim()); s.log.info(`API key set for "${entry.name}" (stored in secret storage)`); }
  else { await s.keys.delete(entry.name); s.log.info(`API key removed for "${entry.name}"`); }
  return true;
}

export function registerEndpointCommands(s: Services): void {
  registerCommand(s.context, Command.AddEndpoint, (args?: AddEndpointArgs) => addEndpoint(s, args));
  registerCommand(s.context, Command.EditEndpoint, (name?: string, args?: AddEndpointArgs) => editEndpoint(s, name, args));
  registerCommand(s.context, Command.RemoveEndpoint, (name?: string, opts?: { confirm?: boolean }) => removeEndpoint(s, name, opts));
  registerCommand(s.context, Command.SetApiKey, (name?: string, key?: string) => setApiKey(s, name, key));
}
