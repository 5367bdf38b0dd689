// In-host tests of comparisons in the editor. Baselines: a prompt's run pinned as its prompt file's baseline (LLM Profiler: Pin as
// baseline), the prompt profiled again against a server that decodes three times slower, and then the
// prompt's CodeLens reads "TPOT p50 … · +…% vs baseline (slower)" (opening the comparison), the
// sidebar marks the new run with what regressed and the old one as the baseline; unpinned, the lens is
// the run's figures again. The comparison runs on the extension's comparison thread (dist/files.js).
// "Compare two endpoints": two configured endpoints run as one interleaved A/B, both runs stored and
// opened in the report's Compare. Self-contained: their own servers, endpoints and files, removed at the end.
import assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { readRunFile } from '../../../src/engine/files/runFile';
import type { RunFile } from '../../../src/engine/core/types';
import type { ExtensionApi } from '../../../src/extension/extension';
import type { AbOutcome, RunOutcome } from '../../../src/extension/jobRunner';
import { startScriptedServer, type ScriptedServer } from '../../support/scriptedServer';
import { hostTest, until } from './harness';

const EXT_ID = 'llm-profiler.llm-profiler';
const cfg = () => vscode.workspace.getConfiguration('llmProfiler');

function folder(): vscode.Uri {
  const f = vscode.workspace.workspaceFolders?.[0];
  assert.ok(f, 'the test workspace is open');
  return vscode.Uri.joinPath(f.uri, 'baseline-test');
}

async function lensesOf(uri: vscode.Uri): Promise<vscode.CodeLens[]> {
  return (await vscode.commands.executeCommand<vscode.CodeLens[]>('vscode.executeCodeLensProvider', uri, 10)) ?? [];
}

export function registerBaselineTests(): void {
  hostTest('a prompt run pinned as its file\'s baseline: the next run\'s CodeLens says it is slower, and the sidebar marks what regressed', async () => {
    const api = await vscode.extensions.getExtension<ExtensionApi>(EXT_ID)!.activate();
    assert.ok(api.test, 'test hooks');
    // the same model and first token; the second decodes three times slower
    const fast = await startScriptedServer({ ttftMs: 5, itlMs: 2, tokens: 12, model: 'baseline-model', apis: ['openai-chat'] });
    const slow = await startScriptedServer({ ttftMs: 5, itlMs: 6, tokens: 12, model: 'baseline-model', apis: ['openai-chat'] });
    const before = cfg().inspect<unknown[]>('endpoints')?.globalValue;
    const others = Array.isArray(before) ? before : [];
    const useServer = async (server: ScriptedServer) => {
      await cfg().update('endpoints', [...others, { name: 'host-baseline', url: server.url, api: 'openai-chat', model: 'baseline-model' }], vscode.ConfigurationTarget.Global);
      await until(`host-baseline on ${server.url}`, () => api.test!.config.current.endpoints.some((e) => e.name === 'host-baseline' && e.url === server.url));
    };
    const uri = vscode.Uri.joinPath(folder(), 'greet.prompt.md');
    const profile = () => vscode.commands.executeCommand<RunOutcome | undefined>('llmProfiler.profilePromptWith', uri, new vscode.Range(0, 0, 0, 0),
      { endpoint: 'host-baseline', preset: 'custom', workload: { requests: 30, concurrency: 2 } });
    const resultLens = async () => (await lensesOf(uri)).find((l) => l.command?.command === 'llmProfiler.openRun' || l.command?.command === 'llmProfiler.compareRuns');
    try {
      await vscode.workspace.fs.writeFile(uri, Buffer.from('Say hello in one short sentence.\n'));
      await vscode.workspace.openTextDocument(uri);
      await useServer(fast);
      const first = await profile();
      assert.ok(first && !first.cancelled, 'the first run finished');
      assert.deepEqual(await vscode.commands.executeCommand('llmProfiler.pinBaseline', first.runId, 'promptFile'), { scope: 'promptFile', key: uri.fsPath });
      assert.equal(api.test.baselines.store.get('promptFile', uri.fsPath), first.runId, 'kept in the workspace state');
      // the baseline's own lens: its figures, and that it is the baseline
      const own = await until('the baseline\'s lens', async () => { const l = await resultLens(); return l?.command?.title.endsWith(' · baseline') ? l : undefined; });
      assert.match(own.command!.title, /^TTFT p50 [\d.,]+ ms · p99 [\d.,]+ ms · TPOT [\d.,]+ ms · baseline$/);

      await useServer(slow);
      const second = await profile();
      assert.ok(second && !second.cancelled, 'the second run finished');
      // worked out on the comparison thread, then the lens follows
      const lens = await until('the lens against the baseline', async () => {
        const l = await resultLens();
        return l?.command?.command === 'llmProfiler.compareRuns' ? l : undefined;
      }, 30_000);
      assert.match(lens.command!.title, /^(TTFT|TPOT|ITL|E2E) p50 [\d.,]+ ms · \+\d+(\.\d)?% vs baseline \(slower\)$/);
      assert.deepEqual(lens.command!.arguments, [first.runId, second.runId], 'it opens the comparison, the baseline as A');
      assert.match(lens.command!.tooltip ?? '', /TPOT p50 \d+(\.\d)?% slower, 95% CI/);

      const state = api.test.sidebar.state();
      const marked = state.runs.find((r) => r.id === second.runId);
      assert.ok(marked?.regressed?.some((l) => /^TPOT p50 \d+(\.\d)?% slower than baseline /.test(l)), JSON.stringify(marked));
      assert.deepEqual(state.runs.find((r) => r.id === first.runId)?.baselineOf, ['promptFile']);
      assert.equal(state.runs.find((r) => r.id === first.runId)?.regressed, undefined);

      // unpinned: the run's own figures again, no mark
      assert.equal(await vscode.commands.executeCommand('llmProfiler.unpinBaseline', first.runId), 1);
      await until('the lens without a baseline', async () => (await resultLens())?.command?.command === 'llmProfiler.openRun');
      assert.equal(api.test.sidebar.state().runs.find((r) => r.id === second.runId)?.regressed, undefined);
    } finally {
      await vscode.commands.executeCommand('workbench.action.closeAllEditors');
      await cfg().update('endpoints', before, vscode.ConfigurationTarget.Global);
      await vscode.workspace.fs.delete(folder(), { recursive: true, useTrash: false }).then(undefined, () => undefined);
      await fast.close();
      await slow.close();
    }
  }, 120_000);

  hostTest('Compare two endpoints: an interleaved A/B of two configured endpoints, both runs stored as a pair and opened side by side', async () => {
    const api = await vscode.extensions.getExtension<ExtensionApi>(EXT_ID)!.activate();
    assert.ok(api.test, 'test hooks');
    const fast = await startScriptedServer({ ttftMs: 5, itlMs: 2, tokens: 12, model: 'ab-model', apis: ['openai-chat'] });
    const slow = await startScriptedServer({ ttftMs: 5, itlMs: 6, tokens: 12, model: 'ab-model', apis: ['openai-chat'] });
    const before = cfg().inspect<unknown[]>('endpoints')?.globalValue;
    const posted = api.test.webviewPosts as unknown[];
    const from = posted.length;
    try {
      await cfg().update('endpoints', [...(Array.isArray(before) ? before : []),
        { name: 'ab-fast', url: fast.url, api: 'openai-chat', model: 'ab-model' }, { name: 'ab-slow', url: slow.url, api: 'openai-chat', model: 'ab-model' }], vscode.ConfigurationTarget.Global);
      await until('both endpoints', () => ['ab-fast', 'ab-slow'].every((n) => api.test!.config.current.endpoints.some((e) => e.name === n)));
      const outcome = await vscode.commands.executeCommand<AbOutcome | undefined>('llmProfiler.compareEndpoints', { a: 'ab-fast', b: 'ab-slow', requests: 20, blocks: 2, concurrency: 2 });
      assert.ok(outcome && !outcome.a.cancelled && !outcome.b.cancelled, 'the A/B finished');
      const [a, b]: RunFile[] = [await readRunFile(outcome.a.path), await readRunFile(outcome.b.path)];
      assert.equal(a.endpoint.url, fast.url);
      assert.equal(b.endpoint.url, slow.url);
      assert.deepEqual([a.ab?.side, b.ab?.side, a.ab?.otherId, b.ab?.otherId], ['A', 'B', b.id, a.id]);
      assert.equal(a.ab?.pairId, b.ab?.pairId, 'one pair: the comparison pairs their blocks');
      assert.equal(a.summary.completed, 20);
      assert.equal(b.summary.completed, 20);
      // interleaved: block 0 A then B, block 1 B then A: the fast server was sent requests after the slow one's first
      const times = (srv: typeof fast) => srv.log.filter((l) => l.path === '/v1/chat/completions').map((l) => l.receivedAt);
      assert.ok(Math.max(...times(fast)) > Math.min(...times(slow)), 'not A entirely then B');
      assert.ok(Math.min(...times(fast)) < Math.min(...times(slow)), 'A first in the first block');
      await until('both runs listed', () => [a.id, b.id].every((id) => api.test!.runs.runs.some((r) => r.id === id)));
      await until('the report\'s Compare got both', () => posted.slice(from).some((m) => (m as { type?: string }).type === 'showRun'
        && (m as { run?: RunFile }).run?.id === a.id && (m as { compareWith?: RunFile }).compareWith?.id === b.id), 15_000);
    } finally {
      await vscode.commands.executeCommand('workbench.action.closeAllEditors');
      await cfg().update('endpoints', before, vscode.ConfigurationTarget.Global);
      await fast.close();
      await slow.close();
    }
  }, 120_000);
}
