// In-host tests of prompt-file variables and refused files: ▶ Profile asks for a `.prompt.md`'s
// `${input:…}` in VS Code's real input box, fills `${selection}` from the active editor, sends both to a
// real server on 127.0.0.1, remembers the answer (the second run asks nothing), and a `.prompty`
// whose front matter is broken shows its refusal and no run lens. Self-contained: its own server,
// endpoint and files, all removed at the end.
//
// Answering the input box: the suite and the extension share one `vscode` API object (the suite is
// loaded from inside the extension's folder), so the suite wraps window.showInputBox: it records
// the options the extension passed, shows the real box with the answer as its value and accepts it
// through the workbench's own command, as Enter would.
import assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { readRunFile } from '../../../src/engine/files/runFile';
import { parsePromptFile } from '../../../src/engine/prompts/promptFiles';
import type { ExtensionApi } from '../../../src/extension/extension';
import type { RunOutcome } from '../../../src/extension/jobRunner';
import { startScriptedServer, type ScriptedServer } from '../../support/scriptedServer';
import { hostTest, until } from './harness';

const EXT_ID = 'llm-profiler.llm-profiler';
const cfg = () => vscode.workspace.getConfiguration('llmProfiler');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function folder(): vscode.Uri {
  const f = vscode.workspace.workspaceFolders?.[0];
  assert.ok(f, 'the test workspace is open');
  return vscode.Uri.joinPath(f.uri, 'vars-test');
}

/** Wraps showInputBox for the duration of `fn`: each box gets the next answer (none left: Esc). */
async function withInputBoxes<T>(answers: (string | undefined)[], fn: (shown: vscode.InputBoxOptions[]) => Promise<T>): Promise<T> {
  const win = vscode.window as { showInputBox: typeof vscode.window.showInputBox };
  const original = win.showInputBox;
  const shown: vscode.InputBoxOptions[] = [];
  win.showInputBox = (options?: vscode.InputBoxOptions, token?: vscode.CancellationToken) => {
    shown.push({ ...options });
    const answer = answers.shift();
    const box = original.call(vscode.window, { ...options, value: answer ?? '' }, token);
    let settled = false;
    void box.then(() => { settled = true; }, () => { settled = true; });
    void (async () => {
      for (let i = 0; i < 100 && !settled; i++) {
        await sleep(100);
        if (!settled) await vscode.commands.executeCommand(answer === undefined ? 'workbench.action.closeQuickOpen' : 'workbench.action.acceptSelectedQuickOpenItem');
      }
    })();
    return box;
  };
  try {
    return await fn(shown);
  } finally {
    win.showInputBox = original;
  }
}

let api: ExtensionApi;
let server: ScriptedServer;
let endpointsBefore: unknown;

async function setUp(): Promise<void> {
  const ext = vscode.extensions.getExtension<ExtensionApi>(EXT_ID);
  assert.ok(ext);
  api = await ext.activate();
  assert.ok(api.test, 'test hooks');
  server = await startScriptedServer({ ttftMs: 5, itlMs: 1, tokens: 8, model: 'vars-model', apis: ['openai-chat'] });
  endpointsBefore = cfg().inspect<unknown[]>('endpoints')?.globalValue;
  const mine = { name: 'host-vars', url: server.url, api: 'openai-chat', model: 'vars-model' };
  await cfg().update('endpoints', [...(Array.isArray(endpointsBefore) ? endpointsBefore : []), mine], vscode.ConfigurationTarget.Global);
  await until('the endpoint in the config snapshot', () => api.test!.config.current.endpoints.some((e) => e.name === 'host-vars'));
  await api.test.promptAnswers.clear();
}

async function tearDown(): Promise<void> {
  await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  await cfg().update('endpoints', endpointsBefore, vscode.ConfigurationTarget.Global);
  await api.test!.promptAnswers.clear();
  await vscode.workspace.fs.delete(folder(), { recursive: true, useTrash: false }).then(undefined, () => undefined);
  await server.close();
}

const sentBodies = () => server.log.filter((l) => l.path === '/v1/chat/completions').map((l) => JSON.stringify(l.body.messages));

export function registerPromptVariableTests(): void {
  hostTest('prompt file variables: ▶ Profile asks for ${input:…} once, fills ${selection} from the active editor, and remembers the answer', async () => {
    await setUp();
    try {
      const promptUri = vscode.Uri.joinPath(folder(), 'topic.prompt.md');
      await vscode.workspace.fs.writeFile(promptUri, Buffer.from('---\ndescription: vars\n---\nWrite one line about ${input:topic:a topic}, given this code:\n${selection}\n'));
      const codeUri = vscode.Uri.joinPath(folder(), 'code.ts');
      const selected = 'const answer = 42; // SELECTED-7f3';
      await vscode.workspace.fs.writeFile(codeUri, Buffer.from(`// before\n${selected}\n// after\n`));
      // The code editor is the active one, with a line selected: ${selection} is its text, as VS Code's variables say.
      const codeEditor = await vscode.window.showTextDocument(codeUri);
      codeEditor.selection = new vscode.Selection(1, 0, 1, selected.length);
      const profile = () => vscode.commands.executeCommand<RunOutcome | undefined>('llmProfiler.profilePrompt', promptUri, new vscode.Range(0, 0, 0, 0), { endpoint: 'host-vars' });

      const first = await withInputBoxes(['prefill queues'], async (shown) => {
        const outcome = await profile();
        assert.equal(shown.length, 1, `one input box: ${JSON.stringify(shown)}`);
        assert.equal(shown[0]!.title, 'LLM Profiler: ${input:topic}');
        assert.equal(shown[0]!.prompt, 'a topic', 'the placeholder is the question');
        assert.equal(shown[0]!.value, '', 'nothing to pre-fill the first time');
        assert.equal(shown[0]!.ignoreFocusOut, true);
        return outcome;
      });
      assert.ok(first && !first.cancelled, 'the run finished');
      const bodies = sentBodies();
      assert.ok(bodies.length >= 2, `requests reached the server: ${bodies.length}`);
      assert.ok(bodies.every((b) => b.includes('Write one line about prefill queues, given this code:') && b.includes(selected)), `each request carried the answer and the selection: ${bodies[0]}`);
      assert.ok(!bodies.some((b) => b.includes('${input:') || b.includes('${selection}')), 'nothing sent as written');
      const run = await readRunFile(first.path);
      const source = run.workload.prompt;
      assert.equal(source.kind, 'file');
      assert.deepEqual(source.kind === 'file' ? source.vars : undefined, { selection: selected, topic: 'prefill queues' }, 'the run file records the values, as --var would');

      // Again: the answer is remembered, no box, the same prompt.
      server.clearLog();
      const second = await withInputBoxes([], async (shown) => {
        const outcome = await profile();
        assert.equal(shown.length, 0, 'no input box the second time');
        return outcome;
      });
      assert.ok(second && !second.cancelled);
      const again = sentBodies();
      assert.ok(again.length >= 2 && again.every((b) => b.includes('about prefill queues,') && b.includes(selected)), 'the same answer was sent');

      // Profile with… asks again, the remembered answer pre-filled; Esc cancels the whole run.
      server.clearLog();
      const cancelled = await withInputBoxes([undefined], async (shown) => {
        const outcome = await vscode.commands.executeCommand<RunOutcome | undefined>('llmProfiler.profilePromptWith', promptUri, new vscode.Range(0, 0, 0, 0), { endpoint: 'host-vars', preset: 'quick' });
        assert.equal(shown.length, 1);
        assert.equal(shown[0]!.value, 'prefill queues', 'pre-filled with the remembered answer');
        return outcome;
      });
      assert.equal(cancelled, undefined, 'Esc: nothing ran');
      assert.equal(sentBodies().length, 0);
    } finally {
      await tearDown();
    }
  }, 90_000);

  hostTest('prompt file variables: a secret-looking input is asked masked every time, sent, and never remembered or written into the run file', async () => {
    await setUp();
    try {
      const uri = vscode.Uri.joinPath(folder(), 'secret.prompt.md');
      await vscode.workspace.fs.writeFile(uri, Buffer.from('Use ${input:api_token} to say hi.\n'));
      await vscode.window.showTextDocument(uri);
      const token = 'tok-9d1c-secret';
      const outcome = await withInputBoxes([token], async (shown) => {
        const o = await vscode.commands.executeCommand<RunOutcome | undefined>('llmProfiler.profilePrompt', uri, new vscode.Range(0, 0, 0, 0), { endpoint: 'host-vars' });
        assert.equal(shown.length, 1);
        assert.equal(shown[0]!.password, true, 'masked');
        return o;
      });
      assert.ok(outcome);
      assert.ok(sentBodies().some((b) => b.includes(`Use ${token} to say hi.`)), 'the prompt was filled with it');
      const run = await readRunFile(outcome.path);
      assert.ok(!JSON.stringify(run).includes(token), 'not in the run file');
      assert.deepEqual(api.test!.promptAnswers.get(uri), {}, 'not remembered');
      await withInputBoxes([undefined], async (shown) => {
        await vscode.commands.executeCommand('llmProfiler.profilePrompt', uri, new vscode.Range(0, 0, 0, 0), { endpoint: 'host-vars' });
        assert.equal(shown.length, 1, 'asked again');
      });
    } finally {
      await tearDown();
    }
  }, 60_000);

  hostTest('a .prompty whose front matter is broken shows its refusal first and no run lens; a missing input gets a fill lens', async () => {
    await setUp();
    try {
      const lensesOf = async (uri: vscode.Uri) => (await vscode.commands.executeCommand<vscode.CodeLens[]>('vscode.executeCodeLensProvider', uri, 10)) ?? [];
      const text = '---\nname: Broken\nmodel:\n  api: chat\n  parameters: [max_tokens: 32\n---\nsystem:\nBe terse.\n\nuser:\nHello\n';
      const uri = vscode.Uri.joinPath(folder(), 'broken.prompty');
      await vscode.workspace.fs.writeFile(uri, Buffer.from(text));
      await vscode.workspace.openTextDocument(uri);
      const expected = parsePromptFile('broken.prompty', text).refusal;
      assert.ok(expected, 'the reader refuses it');
      const lenses = await until('lenses in broken.prompty', async () => { const l = await lensesOf(uri); return l.length ? l : undefined; });
      assert.equal(lenses[0]!.command?.command, 'llmProfiler.showPromptProblem');
      assert.equal(lenses[0]!.command?.title, `$(error) ${expected.message}`, 'the refusal first');
      assert.equal(lenses[0]!.range.start.line, expected.line ?? 0, 'at its line');
      assert.deepEqual(lenses.filter((l) => /^llmProfiler\.profilePrompt/.test(l.command?.command ?? '')).map((l) => l.command!.title), [], 'no ▶ Profile, Profile with… or cache check');

      // A Prompty input with neither sample nor default: a lens names it; answering it removes the lens.
      const tone = vscode.Uri.joinPath(folder(), 'tone.prompty');
      await vscode.workspace.fs.writeFile(tone, Buffer.from('---\nname: Tone\ninputs:\n  tone:\n    type: string\n    description: the tone to answer in\n---\nuser:\nSay hi in a {{tone}} tone.\n'));
      await vscode.workspace.openTextDocument(tone);
      const fill = await until('the fill lens', async () => (await lensesOf(tone)).find((l) => l.command?.command === 'llmProfiler.fillPromptVariables'));
      assert.equal(fill.command!.title, '1 variable to fill: tone');
      await withInputBoxes(['dry'], async (shown) => {
        assert.equal(await vscode.commands.executeCommand('llmProfiler.fillPromptVariables', ...(fill.command!.arguments ?? [])), true);
        assert.equal(shown[0]!.prompt, 'the tone to answer in', 'the description is the question');
      });
      await until('the fill lens gone', async () => !(await lensesOf(tone)).some((l) => l.command?.command === 'llmProfiler.fillPromptVariables'));
      assert.deepEqual(api.test!.promptAnswers.get(tone), { tone: 'dry' });
    } finally {
      await tearDown();
    }
  }, 60_000);
}
