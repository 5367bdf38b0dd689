// The report paths through the real workbench (code-server in Chromium, the VSIX installed): "Profile
// with…" from a prompt file's CodeLens, Export CSV and JSON through code-server's save dialog, Compare
// runs from the palette, Set API key (masked) and the key sent by the next run, and a deleted run's
// report. Runs after the other UI steps (test/host/ui.ts); screenshots to test-artifacts/host-3*.png.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import type { Frame, Page } from 'playwright-core';
import { clearToasts, pickQuickItem, posts, reportFrame, runFromPalette, shot, waitFor, webviewFrameWith, type Step } from './uiKit';

/** The editor tabs' titles, as the workbench shows them. */
async function tabTitles(page: Page): Promise<string[]> {
  return (await page.locator('.tabs-container .tab .label-name').allInnerTexts()).map((t) => t.trim());
}

async function waitForTab(page: Page, what: string, test: (title: string) => boolean, timeoutMs = 30_000): Promise<string> {
  let found: string | undefined;
  await waitFor(what, async () => { found = (await tabTitles(page)).find(test); return found !== undefined; }, timeoutMs)
    .catch(async (e: Error) => { throw new Error(`${e.message}; tabs: ${(await tabTitles(page)).join(' | ')}`); });
  return found!;
}

/** Opens a workspace file by name through Quick Open (the palette without its ">"). */
async function openFile(page: Page, name: string): Promise<void> {
  await page.keyboard.press('F1');
  const input = page.locator('.quick-input-widget input');
  await input.waitFor({ state: 'visible', timeout: 10_000 });
  await input.fill(name);
  await pickQuickItem(page, name);
  await page.locator('.tabs-container .tab.active', { hasText: name }).waitFor({ state: 'visible', timeout: 15_000 });
}

/**
 * Clicks an export button of the visible report and answers code-server's save dialog (its simple
 * file dialog, a quick input holding the path): the same folder it offers, under `name`. Returns the path.
 */
async function exportThroughDialog(page: Page, button: string, name: string, frame?: Frame): Promise<string> {
  const f = frame ?? await reportFrame(page);
  await f.locator('button', { hasText: button }).first().click();
  const input = page.locator('.quick-input-widget input');
  await input.waitFor({ state: 'visible', timeout: 15_000 });
  let offered = '';
  await waitFor('the dialog to offer a path', async () => { offered = await input.inputValue(); return /[\\/][^\\/]+\.(csv|json)$/.test(offered); }, 10_000);
  const target = join(dirname(offered), name);
  await input.fill(target);
  if (!frame) await shot(page, `host-3${button.endsWith('CSV') ? '2' : '3'}-export-${button.endsWith('CSV') ? 'csv' : 'json'}-dialog`);
  await page.keyboard.press('Enter');
  await waitFor(`${target} to be written`, () => existsSync(target), 20_000);
  await page.locator('.quick-input-widget').waitFor({ state: 'hidden', timeout: 10_000 });
  return target;
}

export const reportSteps: Step[] = [
  {
    name: '"Profile with…" from a prompt file\'s CodeLens: the endpoint and workload picks, then the report of that run, named for the prompt',
    fn: async ({ page, server, endpointName }) => {
      await clearToasts(page);
      // one editor group to start from: the prompt file on the left, its report beside it
      await runFromPalette(page, 'View: Close All Editor Groups');
      await openFile(page, 'greet.prompt.md');
      const lens = page.locator('.codelens-decoration a', { hasText: 'Profile with…' }).first();
      await lens.waitFor({ state: 'visible', timeout: 30_000 });
      await shot(page, 'host-30-prompt-codelens');
      const before = posts(server);
      await lens.click();
      await pickQuickItem(page, endpointName);
      await pickQuickItem(page, 'Quick check');
      await waitFor('6 requests at the server', () => posts(server) >= before + 6, 60_000);
      assert.match(JSON.stringify(server.log.at(-1)?.body.messages), /Say hello to the user/, 'the prompt of the file was sent');
      const title = await waitForTab(page, 'the report tab named for the prompt', (t) => t.startsWith('greet.prompt.md on ui-scripted, '));
      assert.match(title, /^greet\.prompt\.md on ui-scripted, .*\d{4},? \d{1,2}:\d\d:\d\d(\s?[AP]M)?$/);
      const f = await reportFrame(page);
      await f.locator('table.percentiles tr', { hasText: 'TTFT' }).first().waitFor({ state: 'visible', timeout: 30_000 });
      // the result lens appears above the prompt
      await page.locator('.codelens-decoration a', { hasText: /TTFT p50/ }).first().waitFor({ state: 'visible', timeout: 30_000 });
      await page.waitForTimeout(500);
      await shot(page, 'host-31-report-from-codelens');
    },
  },
  {
    name: 'the report\'s Export CSV and Export JSON save through code-server\'s save dialog, and what they write parses',
    fn: async ({ page }) => {
      await clearToasts(page);
      const csv = await exportThroughDialog(page, 'Export CSV', 'ui-export.csv');
      const lines = readFileSync(csv, 'utf8').trimEnd().split(/\r?\n/);
      assert.match(lines[0]!, /^index,warmup,/);
      assert.equal(lines.length, 1 + 6, 'a header and a row per request (the warmup too)');
      assert.ok(lines.slice(1).every((l) => l.split(',').length === lines[0]!.split(',').length || l.includes('"')), 'every row has the header\'s columns');
      const json = await exportThroughDialog(page, 'Export JSON', 'ui-export.json');
      const run = JSON.parse(readFileSync(json, 'utf8')) as { format?: string; requests?: unknown[]; promptRef?: { file?: string } };
      assert.equal(run.format, 'llm-profiler.run');
      assert.equal(run.requests?.length, 6);
      assert.equal(basename(run.promptRef?.file ?? ''), 'greet.prompt.md');
      await page.locator('.notifications-toasts', { hasText: 'saved' }).first().waitFor({ state: 'visible', timeout: 10_000 });
    },
  },
  {
    name: 'Compare runs from the palette: two runs picked by name, the tab names both distinctly',
    fn: async ({ page }) => {
      await runFromPalette(page, 'LLM Profiler: Compare runs');
      const row = (text: string | RegExp) => page.locator('.quick-input-list .monaco-list-row', { hasText: text }).first();
      await row(/^greet\.prompt\.md on ui-scripted/).waitFor({ state: 'visible', timeout: 15_000 });
      // every run has a name of its own: the prompt's, the palette's quick check, the sidebar form's 3 requests at 2
      const labels = await page.locator('.quick-input-list .monaco-list-row .label-name').allInnerTexts();
      assert.ok(labels.some((l) => l.startsWith('c=1 · 5 req on ui-scripted, ')), labels.join(' | '));
      assert.ok(labels.some((l) => l.startsWith('c=2 · 3 req on ui-scripted, ')), labels.join(' | '));
      await row('greet.prompt.md on ui-scripted').click();
      await row('c=2 · 3 req on ui-scripted').click();
      await shot(page, 'host-34-compare-pick');
      const ok = page.locator('.quick-input-widget .monaco-button', { hasText: 'OK' });
      if (await ok.count()) await ok.first().click();
      else await page.keyboard.press('Enter');
      const title = await waitForTab(page, 'the compare tab', (t) => t.includes(' vs '));
      const [a, b] = title.split(' vs ');
      assert.match(a!, /^greet\.prompt\.md, .*\d{4},? \d{1,2}:\d\d:\d\d(\s?[AP]M)?$/, title);
      assert.match(b!, /^c=2 · 3 req, .*\d{4},? \d{1,2}:\d\d:\d\d(\s?[AP]M)? on ui-scripted$/, title);
      // (the run's report may still be showing beside it)
      const f = await webviewFrameWith(page, 'body[data-view="compare"] [data-side="B"]');
      // the verdicts and their whiskers, worked out on the page's worker (started from a blob: as VS Code allows)
      await f.locator('body[data-comparison="done"] table.compare-verdicts tr[data-key="ttft.p50"]').waitFor({ state: 'attached', timeout: 30_000 });
      assert.equal(await f.locator('body').getAttribute('data-compare-where'), 'worker', 'the comparison ran on the report\'s worker in the real webview');
      await page.waitForTimeout(500);
      await shot(page, 'host-35-compare');
    },
  },
  {
    name: 'Set API key from the palette: a masked input box, and the next run sends the key as a bearer token',
    fn: async ({ page, server, endpointName }) => {
      const key = `sk-ui-${Date.now().toString(36)}`;
      await runFromPalette(page, 'LLM Profiler: Set API key');
      const input = page.locator('.quick-input-widget input');
      // with several endpoints configured (the endpoint steps add some) it asks which first
      const which = page.locator('.quick-input-list .monaco-list-row', { hasText: endpointName }).first();
      await waitFor('the endpoint pick or the key box', async () => (await which.isVisible()) || (await page.locator('.quick-input-widget', { hasText: 'API key for' }).isVisible()), 15_000);
      if (await which.isVisible()) await which.click();
      await page.locator('.quick-input-widget', { hasText: `API key for ${endpointName}` }).waitFor({ state: 'visible', timeout: 15_000 });
      assert.equal(await input.getAttribute('type'), 'password', 'the key is masked as it is typed');
      await input.fill(key);
      await shot(page, 'host-36-set-api-key');
      await page.keyboard.press('Enter');
      await page.locator('.quick-input-widget').waitFor({ state: 'hidden', timeout: 10_000 });
      const before = server.log.length;
      await runFromPalette(page, 'LLM Profiler: Profile endpoint');
      await pickQuickItem(page, endpointName);
      await pickQuickItem(page, 'Quick check');
      await waitFor('6 requests at the server', () => server.log.slice(before).filter((l) => l.path === '/v1/chat/completions').length >= 6, 60_000);
      const sent = server.log.slice(before).filter((l) => l.path === '/v1/chat/completions');
      assert.ok(sent.every((l) => l.authorization === `Bearer ${key}`), `every request carried the key: ${sent.map((l) => l.authorization ? 'Bearer …' : 'none').join(', ')}`);
      await waitForTab(page, 'the new run\'s report', (t) => t.startsWith('c=1 · 5 req on ui-scripted, ') && !t.includes(' vs '), 30_000);
    },
  },
  {
    name: 'a deleted run\'s report stays open and says so: a banner in the page, "(deleted)" in its title, the compare too',
    fn: async ({ page }) => {
      await clearToasts(page);
      await runFromPalette(page, 'LLM Profiler: Delete run');
      await pickQuickItem(page, 'greet.prompt.md on ui-scripted');
      const dialog = page.locator('.monaco-dialog-box');
      await dialog.waitFor({ state: 'visible', timeout: 15_000 });
      assert.match(await dialog.innerText(), /greet\.prompt\.md on ui-scripted/);
      await dialog.locator('.monaco-button', { hasText: 'Delete' }).click();
      await dialog.waitFor({ state: 'hidden', timeout: 10_000 });
      const single = await waitForTab(page, 'its report titled deleted', (t) => t.startsWith('greet.prompt.md on ui-scripted') && t.endsWith('(deleted)'));
      await waitForTab(page, 'the compare titled deleted', (t) => t.includes(' vs ') && t.endsWith('(A deleted)'));
      // the report of that run, shown (again): drawn from the panel's copy, with the banner
      await page.locator('.tabs-container .tab', { hasText: single }).first().click();
      const f = await webviewFrameWith(page, 'body[data-view="run"] .deleted-banner');
      const banner = f.locator('.deleted-banner[role="status"]');
      await banner.waitFor({ state: 'visible', timeout: 30_000 });
      assert.match(await banner.innerText(), /This run was deleted from the workspace; what you see is the copy in this panel; Export JSON keeps it/);
      await f.locator('table.percentiles tr', { hasText: 'TTFT' }).first().waitFor({ state: 'visible', timeout: 10_000 });
      await shot(page, 'host-37-deleted-run-report');
      // its copy is still whole: Export JSON saves it
      const saved = JSON.parse(readFileSync(await exportThroughDialog(page, 'Export JSON', 'ui-deleted-run.json', f), 'utf8')) as { requests?: unknown[]; promptRef?: { file?: string } };
      assert.equal(saved.requests?.length, 6);
      assert.equal(basename(saved.promptRef?.file ?? ''), 'greet.prompt.md');
      const compare = (await tabTitles(page)).find((t) => t.includes(' vs '))!;
      await page.locator('.tabs-container .tab', { hasText: compare }).first().click();
      const fc = await webviewFrameWith(page, 'body[data-view="compare"] .deleted-banner');
      assert.match(await fc.locator('.deleted-banner').innerText(), /^Run A was deleted from the workspace/);
      await shot(page, 'host-38-deleted-run-compare');
    },
  },
  {
    name: 'Sweep from Profile endpoint asks what to vary: a request-rate sweep, its values checked as typed, named for its rates',
    fn: async ({ page, server, endpointName }) => {
      await clearToasts(page);
      await runFromPalette(page, 'LLM Profiler: Profile endpoint');
      await pickQuickItem(page, endpointName);
      await pickQuickItem(page, 'Sweep');
      for (const axis of ['Concurrency', 'Request rate', 'Prompt length']) {
        await page.locator('.quick-input-list .monaco-list-row', { hasText: axis }).first().waitFor({ state: 'visible', timeout: 10_000 });
      }
      await pickQuickItem(page, 'Request rate');
      const input = page.locator('.quick-input-widget input');
      await waitFor('the offered rates', async () => (await input.inputValue()) === '1, 2, 4, 8', 10_000);
      await input.fill('4, 0');
      const message = page.locator('.quick-input-widget .quick-input-message', { hasText: '0: Enter a number above 0' });
      await message.waitFor({ state: 'visible', timeout: 10_000 });
      await shot(page, 'host-39-sweep-rate-values');
      await input.fill('4, 8');
      const before = posts(server);
      await page.keyboard.press('Enter');
      const title = await waitForTab(page, 'the sweep\'s report', (t) => t.startsWith('sweep rate 4–8/s on ui-scripted, '), 90_000);
      assert.match(title, /^sweep rate 4–8\/s on ui-scripted, .*\d{4},? \d{1,2}:\d\d:\d\d(\s?[AP]M)?$/);
      assert.ok(posts(server) - before >= 16, `two points of 8 requests each: ${posts(server) - before} at the server`);
      await webviewFrameWith(page, 'body[data-view="run"] .sweep-container');
      await page.waitForTimeout(500);
      await shot(page, 'host-3a-sweep-rate-report');
    },
  },
];
