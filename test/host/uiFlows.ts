// Flows that used to end wrong, through the real workbench (code-server in Chromium, the VSIX
// installed), each against servers this file starts: a slow scripted server, one that answers 404 to
// everything (a "/vl" typed for "/v1"), a port where nothing listens, and a stand-in llama-server for
// the local server (the universal VSIX has no bundled backend: the settings name a llama-server binary,
// and the window is reloaded). Last of test/host/ui.ts's steps; screenshots to test-artifacts/host-8*.png.
//  - "127.0.0.1:PORT" is taken as http://, and a dead port is said at the URL step, which stays open;
//  - closing the live report mid-run: the run ends saved, a toast offers it, no error tab;
//  - a second run is refused before the pickers (Profile endpoint; Profile with this dataset before its
//    file dialog); "Cancel run" is in the palette while a run goes on;
//  - a cancelled run's requests are counted apart from failures (report, error tile, sidebar);
//  - every request failed: the header and a toast say so with the first error's words, figures read
//    "–"; a 404 under the URL's path is blamed on the path first (Enter a URL…, Add endpoint);
//  - the local server: a restart for more slots is said; stopping it mid-run asks first.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { writeFakeLlamaServer } from '../support/fakeLlamaServer';
import { closerOf, listenOnLoopback } from '../support/listen';
import { startScriptedServer, type ScriptedServer } from '../support/scriptedServer';
import { freePort } from './codeServer';
import { clearToasts, openPalette, pickQuickItem, quickInput, reportFrame, runFromPalette, shot, showSidebar, waitFor, type Step } from './uiKit';

interface Servers {
  /** Streams slowly: a Quick check takes about 20 s, a Load test over a minute. */
  readonly slow: ScriptedServer;
  /** Answers 404 to every request, as a server does for a path it has no route for. */
  readonly notFound: { readonly url: string; close(): Promise<void> };
  /** A port nothing listens on (bound, then closed). */
  readonly deadPort: number;
}

let servers: Servers | undefined;

async function up(): Promise<Servers> {
  if (servers) return servers;
  const slow = await startScriptedServer({ ttftMs: 50, itlMs: 60, model: 'ui-model', apis: ['openai-chat'] });
  const s404 = createServer((req, res) => {
    req.resume();
    res.writeHead(404, { 'content-type': 'text/plain' }).end(`no route for ${req.method} ${req.url}`);
  });
  const { url, sockets } = await listenOnLoopback(s404);
  servers = { slow, notFound: { url, close: closerOf(s404, sockets) }, deadPort: await freePort() };
  return servers;
}

/**
 * The palette is opened by F1 or, where F1 does not reach (just after other steps, the focus in a
 * place that keeps it, seen here once), the title bar's command center.
 */
const PALETTE = { commandCenter: true } as const;

const toasts = (page: Page, text: string | RegExp) => page.locator('.notifications-toasts .notification-toast', { hasText: text });

/**
 * No editor open (an earlier report's webview would be found first), no toast up. An editor an
 * earlier step left unsaved (an untitled prompt file) makes VS Code ask first: not saved.
 */
async function fresh(page: Page): Promise<void> {
  await runFromPalette(page, 'View: Close All Editors', PALETTE);
  const dialog = page.locator('.monaco-dialog-box');
  await dialog.waitFor({ state: 'visible', timeout: 1500 }).then(async () => {
    await dialog.locator('.monaco-button', { hasText: /Don.t Save/ }).click();
    await dialog.waitFor({ state: 'hidden', timeout: 10_000 });
  }, () => undefined);
  await clearToasts(page, PALETTE);
}

const message = (page: Page) => page.locator('.quick-input-widget .quick-input-message');
const placeholder = async (page: Page) => (await page.locator('.quick-input-widget .quick-input-box input').first().getAttribute('placeholder')) ?? '';

/** Profile endpoint → Enter a URL… → `url` → (its API picked when asked) → `workload`. */
async function profileUrl(page: Page, url: string, workload: string, api?: string): Promise<void> {
  await runFromPalette(page, 'LLM Profiler: Profile endpoint', PALETTE);
  await pickQuickItem(page, 'Enter a URL…');
  const input = await quickInput(page, 'Profile endpoint');
  await input.fill(url);
  await input.press('Enter');
  if (api) await pickQuickItem(page, api);
  await quickInput(page, 'Profile endpoint: workload');
  await pickQuickItem(page, workload);
}

const posts = (s: ScriptedServer, from: number) => s.log.slice(from).filter((l) => l.path === '/v1/chat/completions');
const inFlight = (s: ScriptedServer, from: number) => posts(s, from).filter((l) => l.endedAt === undefined && !l.clientClosed).length;

/** Whether the palette offers a command now (its when-clause holds). */
async function paletteOffers(page: Page, label: string): Promise<boolean> {
  const input = await openPalette(page);
  await input.fill(`>${label}`);
  await page.waitForTimeout(800);
  const n = await page.locator('.quick-input-list .monaco-list-row', { hasText: label }).count();
  await page.keyboard.press('Escape');
  return n > 0;
}

/** The user settings file of this code-server (its --user-data-dir, from its command line). */
function userSettingsPath(pid: number): string {
  const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
  const dir = args[args.indexOf('--user-data-dir') + 1];
  assert.ok(dir, 'the code-server names its --user-data-dir');
  return join(dir, 'User', 'settings.json');
}

function editSettings(path: string, change: (s: Record<string, unknown>) => void): void {
  const s = JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
  change(s);
  writeFileSync(path, JSON.stringify(s, null, 2));
}

const LOCAL_KEYS = ['llmProfiler.localServer.backend', 'llmProfiler.localServer.llamaServerPath'] as const;

export const flowSteps: Step[] = [
  {
    name: 'Enter a URL…: "127.0.0.1:PORT" with nothing listening is said at the URL step (before Enter, and Enter keeps the step open); host:port of a live server goes on to the workload',
    fn: async ({ page }) => {
      const { slow, deadPort } = await up();
      await fresh(page);
      await runFromPalette(page, 'LLM Profiler: Profile endpoint', PALETTE);
      await pickQuickItem(page, 'Enter a URL…');
      const input = await quickInput(page, 'Profile endpoint');
      await input.fill(`127.0.0.1:${deadPort}`);
      // the words of a run's error (cannot connect to …), not a second table's
      const dead = `Not reachable: cannot connect to http://127.0.0.1:${deadPort} (connection refused, nothing listens on that port; ECONNREFUSED)`;
      await message(page).filter({ hasText: dead }).waitFor({ state: 'visible', timeout: 15_000 });
      assert.doesNotMatch(await message(page).innerText(), /not a valid URL/);
      await shot(page, 'host-80-url-dead-port-typed');
      await input.press('Enter');
      await page.waitForTimeout(1500);
      assert.match(await message(page).innerText(), new RegExp(`${dead.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}.*start the server, or fix the URL`));
      assert.equal(await page.locator('.quick-input-widget .quick-input-title', { hasText: 'workload' }).count(), 0, 'no workload pick after a dead URL');
      await shot(page, 'host-81-url-dead-port-enter');
      await input.fill(`127.0.0.1:${slow.port}`);
      await input.press('Enter');
      await quickInput(page, 'Profile endpoint: workload');
      await shot(page, 'host-82-url-no-scheme-taken');
      await page.keyboard.press('Escape');
    },
  },
  {
    name: 'closing the live report mid-run: the run ends saved, a toast says so with Open (no "Webview is disposed", no "cannot show run" tab)',
    fn: async ({ page }) => {
      const { slow } = await up();
      await fresh(page);
      const from = slow.log.length;
      await profileUrl(page, slow.url, 'Quick check');
      const live = page.locator('.tabs-container .tab', { hasText: '● ' }).first();
      await live.waitFor({ state: 'visible', timeout: 30_000 });
      await waitFor('two requests at the server', () => posts(slow, from).length >= 2, 30_000);
      await shot(page, 'host-83-live-report');
      await live.hover();
      await live.locator('.action-label.codicon-close, .codicon-close').first().click();
      await waitFor('the live tab to close', async () => (await page.locator('.tabs-container .tab', { hasText: '● ' }).count()) === 0, 10_000);
      const saved = toasts(page, 'the run finished and was saved (its report was closed)');
      await saved.first().waitFor({ state: 'visible', timeout: 90_000 });
      await page.waitForTimeout(1000);
      assert.equal(await toasts(page, /Webview is disposed| failed: /).count(), 0, 'no failure toast');
      assert.equal(await page.locator('.tabs-container .tab', { hasText: 'cannot show run' }).count(), 0, 'no error tab');
      assert.ok(posts(slow, from).length >= 6, 'the run went on to its end (1 warmup + 5)');
      await shot(page, 'host-84-live-closed-saved');
      await saved.first().locator('.monaco-button', { hasText: 'Open' }).click();
      const f = await reportFrame(page);
      await f.locator('table.percentiles tr', { hasText: 'TTFT' }).first().waitFor({ state: 'visible', timeout: 30_000 });
      await shot(page, 'host-85-live-closed-opened');
    },
  },
  {
    name: 'a run in progress: Profile endpoint says so before any picker; "LLM Profiler: Cancel run" is in the palette while it goes on, cancels it, and leaves with it',
    fn: async ({ page }) => {
      const { slow } = await up();
      await fresh(page);
      assert.equal(await paletteOffers(page, 'LLM Profiler: Cancel run'), false, 'no Cancel run without a run');
      const from = slow.log.length;
      await profileUrl(page, slow.url, 'Load test');
      // some requests done, 8 in flight: a cancel then keeps some and cancels the rest
      await waitFor('8 requests done and 8 in flight', () => posts(slow, from).filter((l) => l.endedAt !== undefined).length >= 9 && inFlight(slow, from) >= 8, 90_000);
      await runFromPalette(page, 'LLM Profiler: Profile endpoint', PALETTE);
      await toasts(page, 'a run is already in progress').first().waitFor({ state: 'visible', timeout: 10_000 });
      assert.equal(await page.locator('.quick-input-widget .quick-input-title', { hasText: 'Profile endpoint' }).isVisible(), false, 'no endpoint pick');
      assert.equal(await page.locator('.quick-input-widget input[placeholder="Which endpoint?"]').isVisible(), false, 'no endpoint pick');
      await shot(page, 'host-86-busy-before-pickers');
      // Profile with this dataset (from the palette: its file dialog first) says it before the dialog too;
      // the first toast cleared (the run's progress notification stays: it cannot be cleared)
      const busyToasts = toasts(page, 'a run is already in progress');
      await runFromPalette(page, 'Notifications: Clear All Notifications', PALETTE);
      await waitFor('the first "already in progress" toast to go', async () => (await busyToasts.count()) === 0, 10_000);
      await runFromPalette(page, 'LLM Profiler: Profile with this dataset', PALETTE);
      await busyToasts.first().waitFor({ state: 'visible', timeout: 10_000 });
      await page.waitForTimeout(1000);
      assert.equal(await page.locator('.quick-input-widget .quick-input-title', { hasText: 'The dataset whose prompts to send' }).isVisible(), false, 'no file dialog');
      assert.equal(await page.locator('.monaco-dialog-box').isVisible(), false, 'no file dialog');
      assert.equal(await page.locator('.quick-input-widget input[placeholder="Which endpoint?"]').isVisible(), false, 'no endpoint pick');
      await shot(page, 'host-86b-busy-before-dataset-dialog');
      await runFromPalette(page, 'LLM Profiler: Cancel run', PALETTE);
      const r = await reportFrame(page);
      await r.locator('.run-header .flags', { hasText: 'cancelled' }).waitFor({ state: 'visible', timeout: 30_000 });
      await waitFor('the Cancel run command to leave the palette', async () => !(await paletteOffers(page, 'LLM Profiler: Cancel run')), 15_000);
    },
  },
  {
    name: 'the cancelled run: its requests in flight are counted as cancelled, apart from failures (header, error tile, sidebar badge)',
    fn: async ({ page }) => {
      const r = await reportFrame(page);
      const flags = r.locator('.run-header .flags', { hasText: 'cancelled' }).first();
      await flags.waitFor({ state: 'visible', timeout: 30_000 });
      const text = await flags.innerText();
      assert.match(text, /cancelled: partial results; \d+ requests? cancelled \(in flight when the run was cancelled; not failures\)/);
      const errors = r.locator('[data-figure="errors"]').first();
      assert.match(await errors.innerText(), /Errors\s+0 of [1-9]\d*\s+\d+ cancelled \(not failures\)/);
      assert.doesNotMatch(await errors.innerText(), /aborted/);
      assert.doesNotMatch((await errors.getAttribute('class')) ?? '', /\bbad\b/, 'the error tile is not red');
      await shot(page, 'host-87-cancelled-apart');
      const f = await showSidebar(page);
      const first = f.locator('#runs-list li.item').first();
      await first.locator('.badge', { hasText: 'cancelled' }).waitFor({ state: 'visible', timeout: 15_000 });
      assert.equal(await first.locator('.badge', { hasText: /failed/ }).count(), 0, `no failed badge: ${await first.innerText()}`);
      await first.scrollIntoViewIfNeeded();
      await shot(page, 'host-88-cancelled-sidebar');
    },
  },
  {
    name: 'every request fails (HTTP 404 under "/vl"): the path is blamed first at the URL\'s API step; the toast and the header say "All 5 requests failed: HTTP 404 …"; figures read "–"',
    fn: async ({ page }) => {
      const { notFound } = await up();
      await fresh(page);
      await runFromPalette(page, 'LLM Profiler: Profile endpoint', PALETTE);
      await pickQuickItem(page, 'Enter a URL…');
      const input = await quickInput(page, 'Profile endpoint');
      await input.fill(`${notFound.url}/vl`);
      await input.press('Enter');
      await waitFor('the path question', async () => /^Is the path \/vl right\? Nothing answers under it: every probe got 404/.test(await placeholder(page)), 20_000);
      const rows = await page.locator('.quick-input-list .monaco-list-row').allInnerTexts();
      assert.match(rows[0] ?? '', /Fix the URL/, `the path comes first: ${rows.join(' | ')}`);
      await shot(page, 'host-89-404-path-first');
      await pickQuickItem(page, 'openai-chat');
      await quickInput(page, 'Profile endpoint: workload');
      await pickQuickItem(page, 'Quick check');
      const said = 'All 5 requests failed: HTTP 404 Not Found: no route for POST /vl/v1/chat/completions';
      await toasts(page, said).first().waitFor({ state: 'visible', timeout: 60_000 });
      const r = await reportFrame(page);
      const header = r.locator('.run-header .all-failed');
      await header.waitFor({ state: 'visible', timeout: 30_000 });
      assert.match(await header.innerText(), new RegExp(`^${said.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}`));
      for (const id of ['ttft-p50', 'e2e-p50', 'output-tps']) {
        const tile = r.locator(`[data-figure="${id}"] .value`).first();
        if (await tile.count()) assert.equal((await tile.innerText()).trim(), '–', `${id} reads "–"`);
      }
      assert.equal((await r.locator('[data-figure="output-tps"] .value').first().innerText()).trim(), '–');
      await page.waitForTimeout(500);
      await shot(page, 'host-8a-all-failed-report');
    },
  },
  {
    name: 'Add endpoint: "host:port/vl" taken as http://; every probe got 404 under /vl: "Fix the URL" goes back to the URL step, filled in',
    fn: async ({ page }) => {
      const { notFound } = await up();
      await clearToasts(page, PALETTE);
      const hostPort = new URL(notFound.url).host;
      await runFromPalette(page, 'LLM Profiler: Add endpoint', PALETTE);
      const name = await quickInput(page, 'Add endpoint (1/4)');
      await name.fill('ui-vl');
      await name.press('Enter');
      const url = await quickInput(page, 'Add endpoint (2/4)');
      await url.fill(`${hostPort}/vl`);
      await url.press('Enter');
      await quickInput(page, 'Add endpoint (3/4)');
      await pickQuickItem(page, 'detect it now');
      await waitFor('the path question', async () => /^Is the path \/vl right\?/.test(await placeholder(page)), 20_000);
      await shot(page, 'host-8b-add-endpoint-404-path');
      await pickQuickItem(page, 'Fix the URL');
      const again = await quickInput(page, 'Add endpoint (2/4)');
      assert.equal(await again.inputValue(), `http://${hostPort}/vl`, 'back at the URL, as taken');
      await shot(page, 'host-8c-add-endpoint-fix-url');
      await page.keyboard.press('Escape');
    },
  },
  {
    name: 'the local server (a llama-server binary in the settings): a Load test that needs more slots says it restarts it and why; Stop local server mid-run asks first, and "Stop both" stops the run and the server',
    fn: async ({ page, codeServerPid }) => {
      assert.ok(codeServerPid, 'the code-server is known');
      const settings = userSettingsPath(codeServerPid);
      const dir = mkdtempSync(join(tmpdir(), 'llmp-flows-'));
      try {
        const bin = writeFakeLlamaServer(dir, { streamItlMs: 60 });
        // the settings a user's "Use a llama-server binary…" writes, read by a reloaded window (code-server
        // does not notice a settings file written behind its back; its open dialog was flaky here)
        editSettings(settings, (s) => { s[LOCAL_KEYS[0]] = 'llama-server'; s[LOCAL_KEYS[1]] = bin; });
        await fresh(page); // nothing unsaved: a reload would ask first
        await page.reload();
        await page.locator('.monaco-workbench').waitFor({ state: 'visible', timeout: 60_000 });
        const f = await showSidebar(page);
        await waitFor('the sidebar to offer the llama-server', async () => (await f.locator('#local-server-note').count()) === 0 && /stopped/.test(await f.locator('#local-server-state').innerText()), 60_000);
        await fresh(page);
        await runFromPalette(page, 'LLM Profiler: Start local server', PALETTE);
        await toasts(page, 'local server running at').first().waitFor({ state: 'visible', timeout: 120_000 });
        await clearToasts(page, PALETTE);
        await runFromPalette(page, 'LLM Profiler: Profile endpoint', PALETTE);
        await pickQuickItem(page, 'Local server');
        await pickQuickItem(page, 'Load test');
        const restart = toasts(page, /restarting the local server with (\d+) slots \(was 4\) for this run's concurrency \1: it now listens at http:\/\/127\.0\.0\.1:\d+ \(was http:\/\/127\.0\.0\.1:\d+\)/);
        await restart.first().waitFor({ state: 'visible', timeout: 120_000 });
        await shot(page, 'host-8d-local-server-restart-said');
        await page.locator('.tabs-container .tab', { hasText: '● ' }).first().waitFor({ state: 'visible', timeout: 60_000 });
        // the run under way: its live report open, a few seconds of requests
        await page.waitForTimeout(3000);
        await runFromPalette(page, 'LLM Profiler: Stop local server', PALETTE);
        const dialog = page.locator('.monaco-dialog-box');
        await dialog.waitFor({ state: 'visible', timeout: 15_000 });
        assert.match(await dialog.innerText(), /A run is using the local server\.[\s\S]*Stop both/);
        await shot(page, 'host-8e-local-server-stop-asks');
        await dialog.locator('.monaco-button', { hasText: 'Stop both' }).click();
        await dialog.waitFor({ state: 'hidden', timeout: 10_000 });
        const side = await showSidebar(page);
        await waitFor('the local server to stop', async () => /stopped/.test(await side.locator('#local-server-state').innerText()), 30_000);
        const r = await reportFrame(page);
        await r.locator('.run-header .flags', { hasText: 'cancelled' }).first().waitFor({ state: 'visible', timeout: 30_000 });
        assert.match(await r.locator('[data-figure="errors"]').first().innerText(), /Errors\s+0 of/, 'no request failed: the run was cancelled before the server went');
        await shot(page, 'host-8f-local-server-stopped-both');
      } finally {
        // last of the UI tests: the settings back as they were, as far as a file write goes
        editSettings(settings, (s) => { for (const k of LOCAL_KEYS) delete s[k]; });
        rmSync(dir, { recursive: true, force: true });
      }
    },
  },
  {
    name: 'the flows\' servers close',
    fn: async () => {
      const s = servers;
      servers = undefined;
      if (s) await Promise.all([s.slow.close(), s.notFound.close()]);
    },
  },
];
