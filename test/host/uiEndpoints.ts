// The endpoint flows through the real workbench (code-server in Chromium, the VSIX installed): nothing
// offers the local server first where it is not bundled; Add endpoint from the sidebar through every
// input step, with the API pick on a server whose API no probe can tell, the form switching to it and
// its dot checked at once; Set API key through the small "Add key" link; "Enter a URL…" asking for the
// API in the UI's words and running; ▶ Profile on a prompt using the endpoint used last; Edit (the same
// steps, filled in) and Remove (confirmed); a run opened from the sidebar taking focus; axe on the
// sidebar's frame. Runs after test/host/ui.ts's steps; screenshots to test-artifacts/host-1*.png.
import assert from 'node:assert/strict';
import { createServer, request, type Server } from 'node:http';
import type { FrameLocator, Page } from 'playwright-core';
import { axeViolations, describeViolations } from '../support/axe';
import { closerOf, listenOnLoopback } from '../support/listen';
import type { ScriptedServer } from '../support/scriptedServer';
import { clearToasts, pickQuickItem, quickInput, runFromPalette, shot, showSidebar, waitFor, webviewFrameWith, type Step } from './uiKit';

/**
 * A server whose API no probe can tell: every GET answers 404 (no /v1/models, /api/tags or /props);
 * POSTs go on to the UI tests' scripted server, so a run against it streams.
 */
interface PlainServer {
  readonly url: string;
  /** POSTs relayed so far. */
  readonly posts: number;
  close(): Promise<void>;
}

async function startPlainServer(upstream: ScriptedServer): Promise<PlainServer> {
  const state = { posts: 0 };
  const server: Server = createServer((req, res) => {
    if (req.method !== 'POST') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not here');
      return;
    }
    state.posts++;
    const up = request(new URL(req.url ?? '/', upstream.url), { method: 'POST', headers: { ...req.headers, host: new URL(upstream.url).host } }, (r) => {
      res.writeHead(r.statusCode ?? 502, r.headers);
      r.pipe(res);
    });
    up.on('error', () => res.destroy());
    req.pipe(up);
  });
  const { url, sockets } = await listenOnLoopback(server);
  const close = closerOf(server, sockets);
  return { url, get posts() { return state.posts; }, close };
}

let plain: PlainServer | undefined;
const NAME = 'ui-plain';
const RENAMED = 'ui-plain-2';

/** Types into the input box titled `title` and presses Enter; returns what it held first. */
async function answer(page: Page, title: string | RegExp, text: string | undefined, shotName?: string): Promise<string> {
  const input = await quickInput(page, title);
  const was = await input.inputValue();
  if (text !== undefined) await input.fill(text);
  if (shotName) await shot(page, shotName);
  await input.press('Enter');
  return was;
}

/** The quick pick's placeholder (what it asks). */
async function placeholder(page: Page): Promise<string> {
  return (await page.locator('.quick-input-widget .quick-input-box input').first().getAttribute('placeholder')) ?? '';
}

async function item(f: FrameLocator, name: string): Promise<ReturnType<FrameLocator['locator']>> {
  const li = f.locator(`li.item[data-key="cfg:${name}"]`);
  await li.waitFor({ state: 'visible', timeout: 15_000 });
  return li;
}

async function selected(f: FrameLocator): Promise<string> {
  return f.locator('#endpoint-select').inputValue();
}

export const endpointSteps: Step[] = [
  {
    name: 'where the bundled server is missing, neither the sidebar\'s form nor the Profile endpoint pick offers the local server first; both say why',
    fn: async ({ page, endpointName }) => {
      await clearToasts(page);
      const f = await showSidebar(page);
      assert.equal(await selected(f), `cfg:${endpointName}`, 'the form starts from a configured endpoint');
      const local = f.locator('#endpoint-select option[value="local"]');
      assert.equal(await local.evaluate((o: HTMLOptionElement) => o.disabled), true, 'the local server cannot be picked');
      assert.match(await local.innerText(), /not bundled on this platform/);
      await f.locator('#local-server-note', { hasText: 'llama-server binary' }).waitFor({ state: 'visible', timeout: 10_000 });
      await f.locator('[data-focus="use-llama-server"]').waitFor({ state: 'visible', timeout: 10_000 });
      await runFromPalette(page, 'LLM Profiler: Profile endpoint');
      const rows = page.locator('.quick-input-list .monaco-list-row');
      await rows.first().waitFor({ state: 'visible', timeout: 15_000 });
      const texts = (await rows.allInnerTexts()).map((t) => t.replace(/\s+/g, ' '));
      assert.match(texts[0]!, new RegExp(`${endpointName}.*last used`), `the last endpoint used comes first: ${texts.join(' | ')}`);
      const localRow = texts.findIndex((t) => /Local server/.test(t));
      assert.ok(localRow > 0, 'the local server is listed, not first');
      assert.match(texts[localRow]!, /not bundled on this platform/);
      assert.equal(localRow, texts.length - 1, `after "Enter a URL…" and "Add endpoint…": ${texts.join(' | ')}`);
      await shot(page, 'host-10-pick-without-local-server');
      await page.keyboard.press('Escape');
    },
  },
  {
    name: 'Add endpoint from the sidebar: every input step; "auto" probes at once and asks for the API where none can be told; the form switches to it and its dot turns reachable unasked',
    fn: async ({ page, server }) => {
      plain = await startPlainServer(server);
      const f = await showSidebar(page);
      await f.locator('[data-focus="add-endpoint"]').click();
      await answer(page, 'Add endpoint (1/4)', NAME, 'host-11-add-endpoint-name');
      await answer(page, 'Add endpoint (2/4)', plain.url, 'host-12-add-endpoint-url');
      await quickInput(page, 'Add endpoint (3/4)');
      await shot(page, 'host-13-add-endpoint-api');
      await pickQuickItem(page, 'detect it now');
      // the probe finds no API: the same step asks which, in the UI's words
      await waitFor('the API pick', async () => /No probe could tell/.test(await placeholder(page)), 20_000);
      const asked = await placeholder(page);
      assert.match(asked, new RegExp(`^Which API does ${plain.url.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} speak\\? No probe could tell \\(it answered GET .*404.*\\)$`));
      assert.doesNotMatch(asked, /--api/);
      await shot(page, 'host-14-add-endpoint-api-undetected');
      await pickQuickItem(page, 'openai-chat');
      await answer(page, 'Add endpoint (4/4)', '', 'host-15-add-endpoint-model');
      // a server on this machine: "Profile it" is the first action offered, the key second
      const toast = page.locator('.notifications-toasts .notification-toast', { hasText: `added "${NAME}"` });
      await toast.waitFor({ state: 'visible', timeout: 15_000 });
      assert.deepEqual((await toast.locator('.monaco-button').allInnerTexts()).map((t) => t.trim()).filter(Boolean).slice(0, 2), ['Profile it', 'Set API key']);
      await waitFor('the form to switch to the new endpoint', async () => (await selected(f)) === `cfg:${NAME}`, 15_000);
      const li = await item(f, NAME);
      await waitFor('its dot to turn reachable', async () => (await li.locator('.dot').getAttribute('aria-label')) === 'reachable', 15_000);
      await shot(page, 'host-16-endpoint-added');
    },
  },
  {
    name: 'Set API key on it: a small "Add key" link (a server on this machine), a masked input, then "key set"',
    fn: async ({ page }) => {
      await clearToasts(page);
      const f = await showSidebar(page);
      const li = await item(f, NAME);
      const link = li.getByRole('button', { name: `Add key: ${NAME}` });
      assert.equal(await link.getAttribute('class'), 'btn link', 'a link-like action, not the main button');
      await link.click();
      const input = await quickInput(page, `API key for ${NAME}`);
      assert.equal(await input.getAttribute('type'), 'password');
      await answer(page, `API key for ${NAME}`, 'sk-ui-plain-key', 'host-17-set-key');
      await li.locator('.badge', { hasText: 'key set' }).waitFor({ state: 'visible', timeout: 15_000 });
      assert.equal(await li.getByRole('button', { name: `Change key: ${NAME}` }).count(), 1);
    },
  },
  {
    name: '"Enter a URL…" on a server whose API cannot be detected: an API pick in the UI\'s words (no "--api"), then the run',
    fn: async ({ page }) => {
      assert.ok(plain, 'the plain server is up');
      const before = plain.posts;
      await runFromPalette(page, 'LLM Profiler: Profile endpoint');
      await pickQuickItem(page, 'Enter a URL…');
      await page.locator('.quick-input-widget .quick-input-message', { hasText: 'Base URL of an OpenAI-compatible' }).waitFor({ state: 'visible', timeout: 15_000 });
      await answer(page, 'Profile endpoint', plain.url);
      await waitFor('the API pick', async () => /No probe could tell/.test(await placeholder(page)), 20_000);
      assert.doesNotMatch(await placeholder(page), /--api/);
      await shot(page, 'host-18-enter-url-api-pick');
      await pickQuickItem(page, 'openai-chat');
      await pickQuickItem(page, 'Quick check');
      await waitFor('6 requests at the plain server', () => plain!.posts >= before + 6, 60_000);
      await page.locator('.tabs-container .tab', { hasText: new URL(plain.url).host }).first().waitFor({ state: 'visible', timeout: 30_000 })
        .catch(() => page.locator('.tabs-container .tab', { hasText: 'Report' }).first().waitFor({ state: 'visible', timeout: 5000 }));
      await shot(page, 'host-19-enter-url-run');
    },
  },
  {
    name: '▶ Profile on a prompt runs against the endpoint used last (here the typed URL, with the API picked for it): no endpoint pick',
    fn: async ({ page }) => {
      assert.ok(plain, 'the plain server is up');
      await clearToasts(page);
      const before = plain.posts;
      await page.keyboard.press('F1');
      const input = page.locator('.quick-input-widget input');
      await input.waitFor({ state: 'visible', timeout: 10_000 });
      await input.fill('greet.prompt.md');
      await pickQuickItem(page, 'greet.prompt.md');
      const lens = page.locator('.codelens-decoration a', { hasText: '▶ Profile' }).first();
      await lens.waitFor({ state: 'visible', timeout: 30_000 });
      await lens.click();
      await waitFor('the quick check at the endpoint used last', () => plain!.posts >= before + 6, 60_000);
      assert.equal(await page.locator('.quick-input-widget .quick-input-title', { hasText: 'Profile endpoint' }).isVisible(), false, 'no endpoint was asked for');
      await shot(page, 'host-20-profile-lens-last-endpoint');
    },
  },
  {
    name: 'Edit endpoint from the sidebar: the same steps, filled in; a new name keeps the key; the form follows it',
    fn: async ({ page }) => {
      await clearToasts(page);
      const f = await showSidebar(page);
      const li = await item(f, NAME);
      await li.getByRole('button', { name: `Edit ${NAME}` }).click();
      assert.equal(await answer(page, 'Edit endpoint (1/4)', RENAMED, 'host-21-edit-name'), NAME);
      assert.equal(await answer(page, 'Edit endpoint (2/4)', undefined), plain!.url);
      await quickInput(page, 'Edit endpoint (3/4)');
      const first = (await page.locator('.quick-input-list .monaco-list-row').first().innerText()).trim();
      assert.match(first, /^openai-chat/, 'the API it has comes first');
      await pickQuickItem(page, 'openai-chat');
      await answer(page, 'Edit endpoint (4/4)', 'ui-model');
      const renamed = await item(f, RENAMED);
      await renamed.locator('.meta', { hasText: 'ui-model' }).waitFor({ state: 'visible', timeout: 15_000 });
      await renamed.locator('.badge', { hasText: 'key set' }).waitFor({ state: 'visible', timeout: 15_000 });
      assert.equal(await f.locator(`li.item[data-key="cfg:${NAME}"]`).count(), 0);
      await waitFor('the form to follow the edit', async () => (await selected(f)) === `cfg:${RENAMED}`, 15_000);
      await shot(page, 'host-22-endpoint-edited');
    },
  },
  {
    name: 'Remove endpoint from the sidebar: asks first, then it is gone from the settings, the list and the form',
    fn: async ({ page, endpointName }) => {
      const f = await showSidebar(page);
      const li = await item(f, RENAMED);
      await li.getByRole('button', { name: `Remove ${RENAMED}` }).click();
      const dialog = page.locator('.monaco-dialog-box');
      await dialog.waitFor({ state: 'visible', timeout: 15_000 });
      assert.match(await dialog.innerText(), new RegExp(`Remove the endpoint "${RENAMED}"[\\s\\S]*API key is deleted too`));
      await shot(page, 'host-23-remove-confirm');
      await dialog.locator('.monaco-button', { hasText: 'Remove' }).first().click();
      await dialog.waitFor({ state: 'hidden', timeout: 10_000 });
      await waitFor('the endpoint to leave the list', async () => (await f.locator(`li.item[data-key="cfg:${RENAMED}"]`).count()) === 0, 15_000);
      assert.equal(await selected(f), `cfg:${endpointName}`, 'the form went back to a configured endpoint, not the local server');
      await shot(page, 'host-24-endpoint-removed');
    },
  },
  {
    name: 'opening a run from the sidebar moves the focus to its report',
    fn: async ({ page }) => {
      const f = await showSidebar(page);
      const open = f.locator('[data-focus^="open:"]').first();
      await open.waitFor({ state: 'visible', timeout: 15_000 });
      await open.focus();
      await page.keyboard.press('Enter');
      await webviewFrameWith(page, 'table.percentiles');
      const reportFocused = async () => {
        for (const fr of page.frames()) {
          const yes = await fr.evaluate(() => document.hasFocus() && document.querySelector('table.percentiles') !== null).catch(() => false);
          if (yes) return true;
        }
        return false;
      };
      await waitFor('a report to hold the focus', reportFocused, 10_000);
      await shot(page, 'host-25-open-run-focus');
    },
  },
  {
    name: 'axe: the sidebar\'s frame in code-server has no serious or critical violation',
    fn: async ({ page }) => {
      await showSidebar(page);
      const frame = await webviewFrameWith(page, '#run-button');
      const vs = await axeViolations(frame);
      await shot(page, 'host-26-sidebar-axe');
      assert.equal(vs.length, 0, `axe in the sidebar:\n  ${describeViolations(vs)}`);
    },
  },
  {
    name: 'the endpoint flows\' own server is closed',
    fn: async () => {
      await plain?.close();
      plain = undefined;
    },
  },
];
