// Serves the sidebar webview the way VS Code would, from a tiny HTTP server on 127.0.0.1: the HTML
// from webviewHtml() (the same function and CSP the host uses), dist/webview/sidebar.js and
// media/sidebar.css; opened in headless Chromium with the report harness's stand-in for
// acquireVsCodeApi() and its themes. Every CSP violation the page trips is recorded.
import { after, before } from 'node:test';
import { createServer, type Server } from 'node:http';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import type { SidebarState } from '../../src/shared/protocol';
import { newNonce, webviewHtml } from '../../src/extension/webviewHtml';
import { launchChromium, THEMES, type ThemeName } from './reportHarness';

const root = join(__dirname, '..', '..');
export const sidebarBundle = join(root, 'dist', 'webview', 'sidebar.js');
const cssPath = join(root, 'media', 'sidebar.css');

export interface SidebarServer {
  readonly origin: string;
  page(state: SidebarState): string;
  close(): Promise<void>;
}

export async function startSidebarServer(): Promise<SidebarServer> {
  if (!existsSync(sidebarBundle)) throw new Error(`${sidebarBundle} is missing: run \`npm run build\` first`);
  const pages = new Map<string, string>();
  let n = 0;
  const server: Server = createServer((req, res) => {
    const url = req.url ?? '/';
    if (url === '/sidebar.js') res.writeHead(200, { 'content-type': 'text/javascript' }).end(readFileSync(sidebarBundle));
    else if (url === '/sidebar.css') res.writeHead(200, { 'content-type': 'text/css' }).end(readFileSync(cssPath));
    else if (url === '/favicon.ico') res.writeHead(204).end();
    else if (pages.has(url)) res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(pages.get(url));
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    page(state) {
      const path = `/sidebar/${++n}`;
      pages.set(path, webviewHtml({ cspSource: origin, nonce: newNonce(), scriptUri: `${origin}/sidebar.js`, styleUri: `${origin}/sidebar.css`, title: 'LLM Profiler', state }));
      return `${origin}${path}`;
    },
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}

/** The acquireVsCodeApi() stand-in (posts recorded in window.__posted), the theme, and a CSP violation recorder. */
function initScript(theme: ThemeName, saved: unknown): string {
  const t = THEMES[theme];
  return `(() => {
    const posted = [];
    let state = ${JSON.stringify(saved ?? null)} ?? undefined;
    window.__posted = posted;
    window.__csp = [];
    document.addEventListener('securitypolicyviolation', (e) => {
      window.__csp.push(e.violatedDirective + ' ' + (e.blockedURI || '') + ' ' + (e.sourceFile || '') + ':' + e.lineNumber + ' ' + (e.sample || ''));
    });
    window.acquireVsCodeApi = () => ({ postMessage: (m) => posted.push(JSON.parse(JSON.stringify(m))), getState: () => state, setState: (s) => { state = s; window.__savedState = s; } });
    const vars = ${JSON.stringify(t.vars)};
    let varsSet = false;
    const put = () => {
      if (!varsSet && document.documentElement) {
        for (const [k, v] of Object.entries(vars)) document.documentElement.style.setProperty(k, v);
        varsSet = true;
      }
      if (document.body) { document.body.classList.add(${JSON.stringify(t.bodyClass)}); return true; }
      return false;
    };
    if (!put()) { const mo = new MutationObserver(() => { if (put()) mo.disconnect(); }); mo.observe(document, { childList: true, subtree: true }); }
  })();`;
}

export interface OpenedSidebar {
  readonly context: BrowserContext;
  readonly page: Page;
  /** Console errors and page errors. */
  readonly problems: string[];
}

/** `saved`: what the view's getState() returns at first (a view restored after being hidden). */
export async function openSidebar(browser: Browser, url: string, options: { theme?: ThemeName; width?: number; saved?: unknown } = {}): Promise<OpenedSidebar> {
  const context = await browser.newContext({ viewport: { width: options.width ?? 320, height: 900 }, deviceScaleFactor: 1 });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('console', (m) => { if (m.type() === 'error') problems.push(`console: ${m.text()}`); });
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  await page.addInitScript(initScript(options.theme ?? 'dark', options.saved));
  await page.goto(url);
  await page.waitForSelector('#run-button');
  return { context, page, problems };
}

/** What the page posted so far. */
/** What the page last gave setState(). */
export function savedState(page: Page): Promise<unknown> {
  return page.evaluate(() => (window as unknown as { __savedState?: unknown }).__savedState);
}

export function posted(page: Page): Promise<{ type: string; [k: string]: unknown }[]> {
  return page.evaluate(() => (window as unknown as { __posted: { type: string }[] }).__posted);
}

/** The CSP violations the page reported so far. */
export function cspViolations(page: Page): Promise<string[]> {
  return page.evaluate(() => (window as unknown as { __csp: string[] }).__csp);
}

export function sidebarSession(): { readonly server: SidebarServer; readonly browser: Browser } {
  const session = {} as { server: SidebarServer; browser: Browser };
  before(async () => {
    session.server = await startSidebarServer();
    session.browser = await launchChromium();
  });
  after(async () => {
    await session.browser?.close();
    await session.server?.close();
  });
  return session;
}
