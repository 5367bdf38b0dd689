// In-host tests of the endpoint commands: Add endpoint's "auto" probing the server at once (the API
// saved where a probe tells, a pick where none can), Edit keeping a renamed endpoint's key, Remove
// deleting it, and the sidebar following (its form switched to the new endpoint, its dot checked).
// The quick picks and input boxes are answered by wrapping window.showQuickPick/showInputBox (the
// suite and the extension share one `vscode` API object, as promptVariables.ts explains). Its own
// servers and endpoints, all removed at the end.
import assert from 'node:assert/strict';
import * as vscode from 'vscode';
import type { ExtensionApi } from '../../../src/extension/extension';
import { startScriptedServer, type ScriptedServer } from '../../support/scriptedServer';
import { hostTest, until } from './harness';

const EXT_ID = 'llm-profiler.llm-profiler';
const cfg = () => vscode.workspace.getConfiguration('llmProfiler');

type Answer = string | ((items: readonly vscode.QuickPickItem[]) => vscode.QuickPickItem | undefined);

/** Answers the next input boxes and quick picks in order (a string: the input's value, or the pick whose label it is); records what was asked. */
async function answering<T>(answers: Answer[], fn: () => Promise<T>): Promise<{ result: T; asked: string[] }> {
  const w = vscode.window as unknown as Record<string, unknown>;
  const [box, pick] = [w.showInputBox, w.showQuickPick];
  const asked: string[] = [];
  const next = () => {
    if (!answers.length) throw new Error(`no answer left after: ${asked.join(' | ')}`);
    return answers.shift()!;
  };
  w.showInputBox = async (o?: vscode.InputBoxOptions) => {
    asked.push(`box ${o?.title}: ${o?.prompt ?? ''}`);
    const a = next();
    return typeof a === 'string' ? a : undefined;
  };
  w.showQuickPick = async (items: readonly vscode.QuickPickItem[] | Thenable<readonly vscode.QuickPickItem[]>, o?: vscode.QuickPickOptions) => {
    const list = await items;
    asked.push(`pick ${o?.title}: ${o?.placeHolder ?? ''}`);
    const a = next();
    return typeof a === 'string' ? list.find((i) => i.label === a) : a(list);
  };
  const create = w.createInputBox as () => vscode.InputBox;
  w.createInputBox = () => answeredBox(create.call(vscode.window), asked, next);
  try {
    return { result: await fn(), asked };
  } finally {
    w.showInputBox = box;
    w.showQuickPick = pick;
    w.createInputBox = create;
  }
}

/**
 * A real input box (the URL step's: urlBox.ts checks as it is typed) answered as the next answer says:
 * shown, its value set and accepted, as Enter would; a non-string answer hides it, as Escape would.
 */
function answeredBox(real: vscode.InputBox, asked: string[], next: () => Answer): vscode.InputBox {
  const accepts: Array<() => unknown> = [];
  return new Proxy(real, {
    get(t, p) {
      if (p === 'onDidAccept') return (l: () => unknown) => { accepts.push(l); return t.onDidAccept(() => undefined); };
      if (p === 'show') {
        return () => {
          t.show();
          asked.push(`box ${t.title}: ${t.prompt ?? ''}`);
          const a = next();
          if (typeof a !== 'string') { t.hide(); return; }
          t.value = a;
          setTimeout(() => { for (const l of accepts) void l(); }, 0);
        };
      }
      const v = Reflect.get(t, p) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(t) : v;
    },
    set: (t, p, v) => Reflect.set(t, p, v),
  });
}

function userEntries(): Record<string, unknown>[] {
  return (cfg().inspect<Record<string, unknown>[]>('endpoints')?.globalValue ?? []).slice();
}

export function registerEndpointTests(): void {
  let api: ExtensionApi;
  let servers: ScriptedServer[] = [];
  let saved: unknown;

  hostTest('endpoints: Add endpoint with "auto" probes the server at once and saves the API it speaks', async () => {
    api = await vscode.extensions.getExtension<ExtensionApi>(EXT_ID)!.activate();
    saved = cfg().inspect('endpoints')?.globalValue;
    const llama = await startScriptedServer({ apis: ['llamacpp'] });
    servers.push(llama);
    // the view checks a new endpoint's dot while it is open (a probe is a request: none for a closed view)
    await vscode.commands.executeCommand('llmProfiler.sidebar.focus');
    // a webview's first load (its page fetched and its script posting "ready") took over 10 s once on CI
    await until('the sidebar view to be open', () => api.test!.sidebar.isOpen, 45_000);
    const { result, asked } = await answering(['ep-llama', llama.url, 'auto', ''], () =>
      Promise.resolve(vscode.commands.executeCommand<string | undefined>('llmProfiler.addEndpoint', { then: 'return' })));
    assert.equal(result, 'ep-llama');
    assert.equal(asked.length, 4, asked.join(' | '));
    assert.match(asked[3]!, /Detected: llamacpp\./, 'the model step says what was found');
    assert.deepEqual(userEntries().find((e) => e.name === 'ep-llama'), { name: 'ep-llama', url: llama.url, api: 'llamacpp' });
    // the sidebar switched its form to it and checked it unasked
    await until('the sidebar to select it', () => api.test!.sidebar.state().select?.id === 'cfg:ep-llama');
    await until('its dot to turn reachable', () => api.test!.sidebar.state().endpoints.find((e) => e.id === 'cfg:ep-llama')?.reachable === 'yes');
  });

  hostTest('endpoints: Add endpoint on a server whose API no probe tells asks which (in words for the UI), and saves the pick', async () => {
    const plain = await startScriptedServer({ apis: [] });
    servers.push(plain);
    const { result, asked } = await answering(['ep-plain', plain.url, 'auto', 'openai-completions', 'm1'], () =>
      Promise.resolve(vscode.commands.executeCommand<string | undefined>('llmProfiler.addEndpoint', { then: 'return' })));
    assert.equal(result, 'ep-plain');
    assert.match(asked[3]!, /^pick Add endpoint \(3\/4\): Which API does http:\/\/127\.0\.0\.1:\d+ speak\? No probe could tell \(it answered GET .*404.*\)$/);
    assert.doesNotMatch(asked.join('\n'), /--api/);
    assert.deepEqual(userEntries().find((e) => e.name === 'ep-plain'), { name: 'ep-plain', url: plain.url, api: 'openai-completions', model: 'm1' });
  });

  hostTest('endpoints: Edit asks the same steps filled in and keeps a renamed endpoint\'s key; Remove deletes the entry and its key', async () => {
    assert.equal(await vscode.commands.executeCommand('llmProfiler.setApiKey', 'ep-plain', 'sk-edit-test'), true);
    await until('the key shown', () => api.test!.sidebar.state().endpoints.find((e) => e.name === 'ep-plain')?.hasKey);
    // the edit steps start from the entry's values: Enter on each keeps it; the API pick lists its own first
    const seen: string[] = [];
    const keep = (items: readonly vscode.QuickPickItem[]) => { seen.push(items.map((i) => i.label).join(',')); return items[0]; };
    const { result } = await answering(['ep-plain-2', servers[1]!.url, keep, 'm2'], () =>
      Promise.resolve(vscode.commands.executeCommand<string | undefined>('llmProfiler.editEndpoint', 'ep-plain')));
    assert.equal(result, 'ep-plain-2');
    assert.match(seen[0]!, /^openai-completions,auto,/, 'the API it has comes first');
    const entries = userEntries();
    assert.equal(entries.some((e) => e.name === 'ep-plain'), false);
    assert.deepEqual(entries.find((e) => e.name === 'ep-plain-2'), { name: 'ep-plain-2', url: servers[1]!.url, api: 'openai-completions', model: 'm2' });
    await until('the key kept under the new name', () => api.test!.sidebar.state().endpoints.find((e) => e.name === 'ep-plain-2')?.hasKey);
    assert.equal(await vscode.commands.executeCommand('llmProfiler.removeEndpoint', 'ep-plain-2', { confirm: false }), true);
    assert.equal(userEntries().some((e) => e.name === 'ep-plain-2'), false);
    // added again under that name and URL: no key comes back
    await vscode.commands.executeCommand('llmProfiler.addEndpoint', { name: 'ep-plain-2', url: servers[1]!.url, api: 'openai-chat', model: '' });
    await until('listed again', () => api.test!.sidebar.state().endpoints.some((e) => e.name === 'ep-plain-2'));
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(api.test!.sidebar.state().endpoints.find((e) => e.name === 'ep-plain-2')?.hasKey, false, 'the removed endpoint\'s key was deleted');
    // a workspace's endpoint is not the user's to edit here
    assert.equal(await vscode.commands.executeCommand('llmProfiler.removeEndpoint', 'no-such-endpoint', { confirm: false }), false);
  });

  hostTest('endpoints: (cleanup) the user endpoints as they were, the servers closed', async () => {
    await cfg().update('endpoints', saved, vscode.ConfigurationTarget.Global);
    await Promise.all(servers.map((s) => s.close()));
    servers = [];
  });
}
