// The platform VSIX as a user installs it: a fresh code-server with a fresh extensions folder, a
// workspace with no node_modules anywhere above it, and the bundled local server started from the
// sidebar, profiled from the palette, and stopped, with no process left behind. The server must run
// the VSIX's own node-llama-cpp: its native library is looked for in the process's memory map.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import type { FrameLocator, Page } from 'playwright-core';
import { processesMentioning } from '../support/processes';
import { extensionHosts, pickQuickItem, reportFrame, runFromPalette, runSteps, shot, showSidebar, waitFor, type Step } from './uiKit';

export interface LocalServerUiContext {
  readonly page: Page;
  /** code-server's --extensions-dir: where the VSIX was installed. */
  readonly extensionsDir: string;
  /** The node-llama-cpp package holding this platform's binary (e.g. linux-x64). */
  readonly binary: string;
  /** The code-server's process group (its extension host is found in it). */
  readonly codeServerPid: number;
}


/** The bundled server processes started from the installed extension (their command line names its folder). */
const serverProcesses = (extensionsDir: string): number[] => processesMentioning('localServer.mjs', extensionsDir);

const stateText = (f: FrameLocator) => f.locator('#local-server-state').innerText();

const steps: Step<LocalServerUiContext>[] = [
  {
    name: 'platform VSIX: the workbench loads and the sidebar offers the bundled local server (no "not bundled" note)',
    fn: async ({ page }) => {
      await page.locator('.monaco-workbench').waitFor({ state: 'visible', timeout: 60_000 });
      const f = await showSidebar(page);
      await f.locator('#local-server-state').waitFor({ state: 'visible', timeout: 30_000 });
      assert.match(await stateText(f), /stopped/);
      assert.equal(await f.locator('#local-server-note').count(), 0, 'the platform VSIX carries the bundled backend');
      await shot(page, 'host-40-platform-vsix-sidebar');
    },
  },
  {
    name: 'platform VSIX: Start in the sidebar runs the bundled server on the VSIX\'s own node-llama-cpp binary',
    fn: async ({ page, extensionsDir, binary }) => {
      const f = await showSidebar(page);
      await f.locator('[data-focus="server-toggle"]', { hasText: 'Start' }).click();
      await waitFor('the local server to run', async () => /running/.test(await stateText(f)), 120_000);
      assert.match(await f.locator('#local-server-state + .meta').innerText(), /port \d+/);
      const procs = serverProcesses(extensionsDir);
      assert.equal(procs.length, 1, `one server process from the installed extension: ${JSON.stringify(procs)}`);
      // the native library it runs is the VSIX's, not a checkout's or a workspace's
      const maps = readFileSync(`/proc/${procs[0]!}/maps`, 'utf8');
      const libs = [...new Set(maps.split('\n').map((l) => l.split(/\s+/)[5] ?? '').filter((p) => /(llama|ggml)[^/]*\.(so|node|dylib|dll)(\.[\d.]+)?$/.test(p)))];
      assert.ok(libs.some((l) => l.endsWith('.node')) && libs.some((l) => /ggml-cpu/.test(l)), `the server process has node-llama-cpp's addon and a ggml CPU backend loaded: ${libs.join(', ')}`);
      const own = `${extensionsDir}/`;
      for (const lib of libs) {
        assert.ok(lib.startsWith(own) && lib.includes(`/node_modules/@node-llama-cpp/${binary}/bins/`), `${lib} is loaded from the installed extension's ${binary} package`);
      }
      await shot(page, 'host-41-platform-vsix-server-running');
    },
  },
  {
    name: 'platform VSIX: Profile endpoint on the local server opens a report with TTFT and TPOT figures',
    fn: async ({ page }) => {
      await runFromPalette(page, 'LLM Profiler: Profile endpoint');
      await pickQuickItem(page, 'Local server');
      await pickQuickItem(page, 'Quick check');
      const report = await reportFrame(page);
      for (const metric of ['TTFT', 'TPOT']) {
        const row = report.locator('table.percentiles tr', { hasText: metric }).first();
        await row.waitFor({ state: 'visible', timeout: 120_000 });
        const cells = await row.locator('td').allTextContents();
        assert.ok(cells.some((t) => /\d+(\.\d+)? ms/.test(t)), `the report's ${metric} row shows figures: ${cells.join(' | ')}`);
      }
      await page.waitForTimeout(500);
      await shot(page, 'host-42-platform-vsix-report');
    },
  },
  {
    name: 'platform VSIX: Stop in the sidebar stops the server, and no server process is left',
    fn: async ({ page, extensionsDir }) => {
      const f = await showSidebar(page);
      await f.locator('[data-focus="server-toggle"]', { hasText: 'Stop' }).click();
      await waitFor('the local server to stop', async () => /stopped/.test(await stateText(f)), 30_000);
      await waitFor('no server process', () => serverProcesses(extensionsDir).length === 0, 15_000);
      await shot(page, 'host-43-platform-vsix-server-stopped');
    },
  },
  {
    name: 'platform VSIX: the extension host killed while the local server runs: the server exits, no orphan',
    fn: async ({ page, extensionsDir, codeServerPid }) => {
      const f = await showSidebar(page);
      await f.locator('[data-focus="server-toggle"]', { hasText: 'Start' }).click();
      await waitFor('the local server to run', async () => /running/.test(await stateText(f)), 120_000);
      assert.equal(serverProcesses(extensionsDir).length, 1);
      const hosts = extensionHosts(codeServerPid);
      assert.equal(hosts.length, 1, `one extension host (${hosts.join(', ')})`);
      process.kill(hosts[0]!, 'SIGKILL');
      await waitFor('no server process once its extension host is gone', () => serverProcesses(extensionsDir).length === 0, 15_000);
      await page.reload();
      await page.locator('.monaco-workbench').waitFor({ state: 'visible', timeout: 60_000 });
      await shot(page, 'host-44-platform-vsix-host-killed');
    },
  },
];

export function runLocalServerUiTests(c: LocalServerUiContext): Promise<{ passed: number; failed: number }> {
  return runSteps(steps, c, 'test/host/uiLocalServer.ts');
}
