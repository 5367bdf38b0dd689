// Serves the sidebar webview the way VS Code would, from a tiny HTTP server on 127.0.0.1: the HTML
// from webviewHtml() (the same function and CSP the host uses), dist/webview/sidebar.js and
// media/sidebar.css; opened in headless Chromium with the report harness's stand-in for
// acquireVsCodeApi(), its themes and its recorder of the CSP violations the page trips.
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import type { SidebarState, SurfaceClock } from '../../src/shared/protocol';
import { newNonce, webviewHtml } from '../../src/extension/webviewHtml';
import { browserSession, openWebview, serveWebview, type OpenedReport, type ThemeName } from './reportHarness';
import { clockOf } from '../../src/present/timeText';

const root = join(__dirname, '..', '..');
export const sidebarBundle = join(root, 'dist', 'webview', 'sidebar.js');
const cssPath = join(root, 'media', 'sidebar.css');

export interface SidebarServer {
  readonly origin: string;
  page(state: SidebarState): string;
  close(): Promise<void>;
}

/** `clock`: the host's locale and zone the pages get (src/extension/clock.ts); by default this process's own. */
export function startSidebarServer(clock: SurfaceClock = clockOf()): Promise<SidebarServer> {
  return serveWebview<SidebarState>({ '/sidebar.js': sidebarBundle, '/sidebar.css': cssPath }, (origin, state) =>
    webviewHtml({ cspSource: origin, nonce: newNonce(), scriptUri: `${origin}/sidebar.js`, styleUri: `${origin}/sidebar.css`, title: 'LLM Profiler', state, clock }), 'sidebar');
}

export type OpenedSidebar = OpenedReport;

/** `saved`: what the view's getState() returns at first (a view restored after being hidden). */
export async function openSidebar(browser: Browser, url: string, options: { theme?: ThemeName; width?: number; saved?: unknown; locale?: string; timezoneId?: string } = {}): Promise<OpenedSidebar> {
  const opened = await openWebview(browser, url, { ...options, width: options.width ?? 320 });
  await opened.page.waitForSelector('#run-button');
  return opened;
}

/** What the page last gave setState(). */
export function savedState(page: Page): Promise<unknown> {
  return page.evaluate(() => (window as unknown as { __state?: unknown }).__state);
}

/** What the page posted so far. */
export function posted(page: Page): Promise<{ type: string; [k: string]: unknown }[]> {
  return page.evaluate(() => (window as unknown as { __posted: { type: string }[] }).__posted);
}

/** The CSP violations the page reported so far. */
export function cspViolations(page: Page): Promise<string[]> {
  return page.evaluate(() => (window as unknown as { __csp: string[] }).__csp);
}

export function sidebarSession(): { readonly server: SidebarServer; readonly browser: Browser } {
  return browserSession(startSidebarServer);
}
