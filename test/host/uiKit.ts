// What the UI tests share: screenshots, waiting, the command palette, quick picks, and finding the
// report's and the sidebar's webview frames inside the workbench.
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Frame, FrameLocator, Locator, Page } from 'playwright-core';
import type { ScriptedServer } from '../support/scriptedServer';
import { ROOT } from './build';
import { recordDuration } from './durations';

export const ARTIFACTS = join(ROOT, 'test-artifacts');

export interface UiContext {
  readonly page: Page;
  /** The endpoint the user settings define for the UI tests. */
  readonly server: ScriptedServer;
  readonly endpointName: string;
  /** The code-server's process group (its extension host is found in it). */
  readonly codeServerPid?: number;
}

/** A UI test; `file` is where it is written, for its duration's record (default: runSteps's). */
export type Step<C = UiContext> = { name: string; fn: (c: C) => Promise<void>; file?: string };

/** Runs the steps in order, each on its own: a failure is printed with a screenshot and the next step runs. `file`: where they are written. */
export async function runSteps<C extends { readonly page: Page }>(steps: readonly Step<C>[], c: C, file = 'test/host/ui.ts'): Promise<{ passed: number; failed: number }> {
  let passed = 0;
  let failed = 0;
  for (const s of steps) {
    const started = Date.now();
    try {
      await s.fn(c);
      passed++;
      recordDuration(s.file ?? file, s.name, Date.now() - started, true);
      console.log(`  ok   [ui] ${s.name} (${Date.now() - started} ms)`);
    } catch (err) {
      failed++;
      recordDuration(s.file ?? file, s.name, Date.now() - started, false);
      console.log(`  FAIL [ui] ${s.name} (${Date.now() - started} ms)\n       ${String((err as Error).message).split('\n').join('\n       ')}`);
      await shot(c.page, `host-fail-${s.name.replace(/[^a-z0-9]+/gi, '-').slice(0, 60)}`).catch(() => undefined);
    }
  }
  console.log(`${passed} passed, ${failed} failed`);
  return { passed, failed };
}

/** The extension hosts of the code-server whose process group is `pgid`. */
export function extensionHosts(pgid: number): number[] {
  const out = execFileSync('ps', ['-eo', 'pid=,pgid=,args='], { encoding: 'utf8' });
  return out.split('\n').map((l) => l.trim().split(/\s+/)).filter((f) => Number(f[1]) === pgid && f.slice(2).join(' ').includes('--type=extensionHost')).map((f) => Number(f[0]));
}

export const posts = (s: ScriptedServer) => s.log.filter((l) => l.path === '/v1/chat/completions').length;

export async function shot(page: Page, name: string): Promise<void> {
  mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: join(ARTIFACTS, `${name}.png`) });
}

export async function waitFor(what: string, check: () => Promise<boolean> | boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** How runFromPalette opens the command palette where F1 does not. */
export interface PaletteOptions {
  /**
   * Where F1 does not open it within 3 s, Escape and the title bar's command center (openPalette);
   * by default F1 is given 10 s, then Escape, the focus put in the side bar's title, and F1 again.
   */
  readonly commandCenter?: boolean;
}

/**
 * Opens the command palette and returns its input: F1, or where F1 does not reach (just after other
 * steps, the focus in a place that keeps it), the title bar's command center, then ">".
 */
export async function openPalette(page: Page): Promise<Locator> {
  const input = page.locator('.quick-input-widget input');
  await page.keyboard.press('F1');
  if (await input.waitFor({ state: 'visible', timeout: 3000 }).then(() => true, () => false)) return input;
  await page.keyboard.press('Escape');
  await page.locator('.part.titlebar .command-center-center').first().click();
  await input.waitFor({ state: 'visible', timeout: 10_000 });
  return input;
}

/** Runs a palette command; retries while the remote extension host is still starting (5–9 s after load). */
export async function runFromPalette(page: Page, label: string, options: PaletteOptions = {}): Promise<void> {
  const deadline = Date.now() + 90_000;
  for (;;) {
    let input: Locator;
    if (options.commandCenter) input = await openPalette(page);
    else {
      await page.keyboard.press('F1');
      input = page.locator('.quick-input-widget input');
      try {
        await input.waitFor({ state: 'visible', timeout: 10_000 });
      } catch (e) {
        // F1 went where the workbench does not hear it (a webview's frame still loading, a menu left
        // open): close what may be open, put the focus in the workbench's own document, and press again
        if (Date.now() > deadline) throw e;
        await page.keyboard.press('Escape');
        const title = page.locator('.part.sidebar .composite.title').first();
        if (await title.isVisible()) await title.click();
        continue;
      }
    }
    await input.fill(`>${label}`);
    const row = page.locator('.quick-input-list .monaco-list-row', { hasText: label }).first();
    try {
      await row.waitFor({ state: 'visible', timeout: 3000 });
      await row.click();
      return;
    } catch {
      await page.keyboard.press('Escape');
      if (Date.now() > deadline) throw new Error(`"${label}" never appeared in the command palette`);
      await page.waitForTimeout(1000);
    }
  }
}

/**
 * A step starts clean: no context menu left open by a step before (while one is open, F1 opens no
 * command palette), no toasts. `options`: how the palette is opened (runFromPalette's).
 */
export async function clearToasts(page: Page, options: PaletteOptions = {}): Promise<void> {
  const menu = page.locator('.context-view .monaco-menu').first();
  await waitFor('the context menu a step before left open to close', async () => {
    if (!(await menu.isVisible())) return true;
    await page.keyboard.press('Escape');
    return false;
  }, 10_000);
  await runFromPalette(page, 'Notifications: Clear All Notifications', options);
  await waitFor('the old toasts to go', async () => (await page.locator('.notifications-toasts .notification-toast').count()) === 0, 10_000);
}

/** The quick input's text box, once its title reads `title`. */
export async function quickInput(page: Page, title: string | RegExp): Promise<Locator> {
  const widget = page.locator('.quick-input-widget');
  await widget.locator('.quick-input-title', { hasText: title }).waitFor({ state: 'visible', timeout: 20_000 });
  return widget.locator('.quick-input-box input').first();
}

export async function pickQuickItem(page: Page, text: string): Promise<void> {
  const row = page.locator('.quick-input-list .monaco-list-row', { hasText: text }).first();
  await row.waitFor({ state: 'visible', timeout: 15_000 });
  await row.click();
}

/**
 * The first of the workbench's webviews whose page holds `selector`, held by its webview's own id
 * (in its iframe's src), not by its place among the webviews: a report opened or closed later (its
 * iframe added or removed) must not turn the locator into another page's.
 */
async function webviewWith(page: Page, selector: string, what: string, timeoutMs: number): Promise<FrameLocator> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const outer = page.locator('iframe.webview.ready');
    const n = await outer.count();
    for (let i = 0; i < n; i++) {
      const f = page.frameLocator('iframe.webview.ready').nth(i).frameLocator('iframe#active-frame');
      if (!(await f.locator(selector).count())) continue;
      const id = /[?&]id=([^&]+)/.exec((await outer.nth(i).getAttribute('src').catch(() => null)) ?? '')?.[1];
      return id ? page.frameLocator(`iframe.webview.ready[src*="?id=${id}&"], iframe.webview.ready[src*="&id=${id}&"]`).frameLocator('iframe#active-frame') : f;
    }
    if (Date.now() > deadline) throw new Error(`no ${what} webview among ${n} webviews`);
    await page.waitForTimeout(300);
  }
}

/** The report panel's webview: the one with the percentile table. */
export function reportFrame(page: Page): Promise<FrameLocator> {
  return webviewWith(page, 'table.percentiles', 'report', 30_000);
}

/** The sidebar's webview: among the workbench's webviews (the report panel is one too), the one with the Run button. */
export function sidebarFrame(page: Page, timeoutMs = 30_000): Promise<FrameLocator> {
  return webviewWith(page, '#run-button', 'sidebar', timeoutMs);
}

/** Opens the LLM Profiler view (if it is not showing) and hands back the sidebar's frame. */
export async function showSidebar(page: Page): Promise<FrameLocator> {
  const icon = page.locator('.part.activitybar .action-item a[aria-label^="LLM Profiler"]').first();
  await icon.waitFor({ state: 'visible', timeout: 60_000 });
  for (let i = 0; i < 3; i++) {
    const f = await sidebarFrame(page, i === 0 ? 0 : 5000).catch(() => undefined);
    if (f && await f.locator('#run-button').isVisible().catch(() => false)) return f;
    await icon.click();
    await page.waitForTimeout(1000);
  }
  return sidebarFrame(page);
}

/**
 * The webview's inner Frame (not a FrameLocator) whose document holds `selector`: what axe and
 * frame.evaluate need. The workbench nests each webview as iframe.webview > iframe#active-frame.
 */
export async function webviewFrameWith(page: Page, selector: string, timeoutMs = 30_000): Promise<Frame> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    for (const f of page.frames()) {
      if (f === page.mainFrame()) continue;
      try {
        if (await f.locator(selector).count()) return f;
      } catch {
        // a frame that went away while looking
      }
    }
    if (Date.now() > deadline) throw new Error(`no webview frame holds ${selector}`);
    await page.waitForTimeout(300);
  }
}
