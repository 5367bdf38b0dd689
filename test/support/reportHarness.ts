// Serves the report webview the way VS Code would, but from a tiny HTTP server on 127.0.0.1: the
// HTML from reportHtml() (the same function the host uses, with the same CSP), dist/webview/report.js
// and media/report.css; and opens it in headless Chromium with a stand-in for acquireVsCodeApi()
// that records what the page posts. Themes are emulated as VS Code does it: CSS variables on <html>
// and a class on <body>. serveWebview / openWebview / browserSession serve the sidebar's page too
// (test/support/sidebarHarness.ts).
import { after, before } from 'node:test';
import { createServer, type Server } from 'node:http';
import { randomBytes } from 'node:crypto';
import { readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { reportHtml, type ReportInitialState } from '../../src/extension/webviewHtml';
import { clockOf } from '../../src/present/timeText';
import type { SurfaceClock } from '../../src/shared/protocol';

const root = join(__dirname, '..', '..');
export const bundlePath = join(root, 'dist', 'webview', 'report.js');
export const cssPath = join(root, 'media', 'report.css');
/** The report's comparison thread, fetched by the page from beside report.js (webview/report/compareRunner.ts). */

export const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync'];

export type ThemeName = 'light' | 'dark' | 'high-contrast';

const common = {
  '--vscode-font-family': 'system-ui, "Segoe UI", Ubuntu, sans-serif',
  '--vscode-font-size': '13px',
  '--vscode-editor-font-family': 'monospace',
};
export const THEMES: Record<ThemeName, { bodyClass: string; vars: Record<string, string> }> = {
  dark: {
    bodyClass: 'vscode-dark',
    vars: {
      ...common,
      '--vscode-editor-background': '#1e1e1e', '--vscode-foreground': '#cccccc', '--vscode-editor-foreground': '#d4d4d4',
      '--vscode-descriptionForeground': '#a9a9a9', '--vscode-charts-foreground': '#cccccc', '--vscode-charts-lines': '#6b6b6b',
      '--vscode-charts-red': '#f14c4c', '--vscode-charts-blue': '#3794ff', '--vscode-charts-yellow': '#cca700',
      '--vscode-charts-orange': '#d18616', '--vscode-charts-green': '#89d185', '--vscode-charts-purple': '#b180d7',
      '--vscode-focusBorder': '#007fd4', '--vscode-editorWidget-background': '#252526', '--vscode-widget-border': '#303031',
      '--vscode-button-background': '#0e639c', '--vscode-button-foreground': '#ffffff', '--vscode-button-hoverBackground': '#1177bb',
      '--vscode-button-secondaryBackground': '#3a3d41', '--vscode-button-secondaryForeground': '#ffffff', '--vscode-button-secondaryHoverBackground': '#45494e',
      '--vscode-errorForeground': '#f48771', '--vscode-list-hoverBackground': '#2a2d2e', '--vscode-inputValidation-errorBackground': '#5a1d1d',
      '--vscode-inputValidation-errorBorder': '#be1100', '--vscode-editorHoverWidget-background': '#252526', '--vscode-editorHoverWidget-border': '#454545',
      '--vscode-panel-border': '#80808059', '--vscode-badge-background': '#4d4d4d', '--vscode-badge-foreground': '#ffffff',
      '--vscode-widget-shadow': '#0000005c', '--vscode-editorWarning-foreground': '#cca700', '--vscode-progressBar-background': '#0e70c0',
    },
  },
  light: {
    bodyClass: 'vscode-light',
    vars: {
      ...common,
      '--vscode-editor-background': '#ffffff', '--vscode-foreground': '#616161', '--vscode-editor-foreground': '#000000',
      '--vscode-descriptionForeground': '#717171', '--vscode-charts-foreground': '#616161', '--vscode-charts-lines': '#b0b0b0',
      '--vscode-charts-red': '#e51400', '--vscode-charts-blue': '#1a85ff', '--vscode-charts-yellow': '#bf8803',
      '--vscode-charts-orange': '#d18616', '--vscode-charts-green': '#388a34', '--vscode-charts-purple': '#652d90',
      '--vscode-focusBorder': '#0090f1', '--vscode-editorWidget-background': '#f3f3f3', '--vscode-widget-border': '#d4d4d4',
      '--vscode-button-background': '#007acc', '--vscode-button-foreground': '#ffffff', '--vscode-button-hoverBackground': '#0062a3',
      '--vscode-button-secondaryBackground': '#5f6a79', '--vscode-button-secondaryForeground': '#ffffff', '--vscode-button-secondaryHoverBackground': '#4c5561',
      '--vscode-errorForeground': '#a1260d', '--vscode-list-hoverBackground': '#e8e8e8', '--vscode-inputValidation-errorBackground': '#f2dede',
      '--vscode-inputValidation-errorBorder': '#be1100', '--vscode-editorHoverWidget-background': '#f3f3f3', '--vscode-editorHoverWidget-border': '#c8c8c8',
      '--vscode-panel-border': '#80808059', '--vscode-badge-background': '#c4c4c4', '--vscode-badge-foreground': '#333333',
      '--vscode-widget-shadow': '#00000029', '--vscode-editorWarning-foreground': '#bf8803', '--vscode-progressBar-background': '#0e70c0',
    },
  },
  'high-contrast': {
    bodyClass: 'vscode-high-contrast',
    vars: {
      ...common,
      '--vscode-editor-background': '#000000', '--vscode-foreground': '#ffffff', '--vscode-editor-foreground': '#ffffff',
      '--vscode-descriptionForeground': '#ffffff', '--vscode-charts-foreground': '#ffffff', '--vscode-charts-lines': '#a0a0a0',
      '--vscode-charts-red': '#f14c4c', '--vscode-charts-blue': '#3794ff', '--vscode-charts-yellow': '#ffd700',
      '--vscode-charts-orange': '#ff9d3b', '--vscode-charts-green': '#89d185', '--vscode-charts-purple': '#c792ea',
      '--vscode-focusBorder': '#f38518', '--vscode-contrastBorder': '#6fc3df', '--vscode-editorWidget-background': '#0c141f',
      '--vscode-widget-border': '#6fc3df', '--vscode-button-background': '#000000', '--vscode-button-foreground': '#ffffff',
      '--vscode-button-border': '#6fc3df', '--vscode-button-secondaryBackground': '#000000', '--vscode-button-secondaryForeground': '#ffffff',
      '--vscode-errorForeground': '#f48771', '--vscode-list-hoverBackground': '#0c141f', '--vscode-inputValidation-errorBackground': '#000000',
      '--vscode-inputValidation-errorBorder': '#f14c4c', '--vscode-editorHoverWidget-background': '#0c141f', '--vscode-editorHoverWidget-border': '#6fc3df',
      '--vscode-panel-border': '#6fc3df', '--vscode-badge-background': '#000000', '--vscode-badge-foreground': '#ffffff',
      '--vscode-widget-shadow': '#00000000', '--vscode-editorWarning-foreground': '#ffd700', '--vscode-progressBar-background': '#6fc3df',
    },
  },
};

export interface ReportServer {
  readonly origin: string;
  /** Registers a page with this initial state; returns its URL. */
  page(state: ReportInitialState): string;
  close(): Promise<void>;
}

/**
 * A webview's page served from 127.0.0.1: its assets (URL path → file, read at each request, so a
 * rebuild shows) and the pages registered with `page(state)`, each the HTML `render` makes for it.
 */
export async function serveWebview<S>(assets: Readonly<Record<string, string>>, render: (origin: string, state: S) => string, prefix: string):
  Promise<{ readonly origin: string; page(state: S): string; close(): Promise<void> }> {
  for (const file of Object.values(assets)) if (!existsSync(file)) throw new Error(`${file} is missing: run \`npm run build\` first`);
  const types: Record<string, string> = { '.js': 'text/javascript', '.css': 'text/css' };
  const pages = new Map<string, string>();
  let n = 0;
  const server: Server = createServer((req, res) => {
    const url = req.url ?? '/';
    try {
      const asset = assets[url];
      if (asset) res.writeHead(200, { 'content-type': types[url.slice(url.lastIndexOf('.'))] ?? 'application/octet-stream' }).end(readFileSync(asset));
      else if (url === '/favicon.ico') res.writeHead(204).end();
      else if (pages.has(url)) res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(pages.get(url));
      else res.writeHead(404).end();
    } catch (e) {
      res.writeHead(500).end(String(e));
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    page(state) {
      const path = `/${prefix}/${++n}`;
      pages.set(path, render(origin, state));
      return `${origin}${path}`;
    },
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}

/** `clock`: the host's locale and zone the pages get (src/extension/clock.ts); by default this process's own. */
export function startReportServer(clock: SurfaceClock = clockOf()): Promise<ReportServer> {
  return serveWebview<ReportInitialState>({ '/report.js': bundlePath, '/report.css': cssPath}, (origin, state) => reportHtml({
    cspSource: origin,
    nonce: randomBytes(16).toString('base64'),
    scriptUri: `${origin}/report.js`,
    styleUri: `${origin}/report.css`,
    initialState: state,
    clock,
  }), 'page');
}

export async function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_ARGS, headless: true });
}

/**
 * Installed before a webview's own script runs: the acquireVsCodeApi() stand-in (what the page posts
 * in window.__posted, its setState() in window.__state, `saved` what getState() gives at first), the
 * theme, and a recorder of the CSP violations the page trips (window.__csp).
 */
function initScript(theme: ThemeName, saved?: unknown): string {
  const t = THEMES[theme];
  return `(() => {
    const posted = [];
    let state = ${JSON.stringify(saved ?? null)} ?? undefined;
    let acquired = false;
    window.__posted = posted;
    window.__csp = [];
    document.addEventListener('securitypolicyviolation', (e) => {
      window.__csp.push(e.violatedDirective + ' ' + (e.blockedURI || '') + ' ' + (e.sourceFile || '') + ':' + e.lineNumber + ' ' + (e.sample || ''));
    });
    window.acquireVsCodeApi = () => {
      if (acquired) throw new Error('acquireVsCodeApi called twice');
      acquired = true;
      return { postMessage: (m) => posted.push(JSON.parse(JSON.stringify(m))), getState: () => state, setState: (s) => { state = s; window.__state = s; } };
    };
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
    if (!put()) {
      const mo = new MutationObserver(() => { if (put()) mo.disconnect(); });
      mo.observe(document, { childList: true, subtree: true });
    }
  })();`;
}

export interface OpenedReport {
  readonly context: BrowserContext;
  readonly page: Page;
  /** Console errors, page errors and CSP violations seen so far. */
  readonly problems: string[];
}

/** Waits until the report has drawn a run (app.ts sets `data-rendered` on the body). */
export async function rendered(page: Page): Promise<void> {
  await page.waitForSelector('body[data-rendered]', { timeout: 30_000 });
}

/** A webview page in a fresh browser context, themed, with the stand-ins installed; console and page errors collected. */
export async function openWebview(browser: Browser, url: string, options: { theme?: ThemeName; width?: number; height?: number; saved?: unknown; locale?: string; timezoneId?: string } = {}): Promise<OpenedReport> {
  const context = await browser.newContext({ viewport: { width: options.width ?? 1100, height: options.height ?? 900 }, deviceScaleFactor: 1, ...(options.locale ? { locale: options.locale } : {}),
    ...(options.timezoneId ? { timezoneId: options.timezoneId } : {}) });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('console', (m) => { if (m.type() === 'error') problems.push(`console: ${m.text()}`); });
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  await page.addInitScript(initScript(options.theme ?? 'dark', options.saved));
  await page.goto(url);
  return { context, page, problems };
}

export function openReport(browser: Browser, url: string, options: { theme?: ThemeName; width?: number; height?: number; locale?: string; timezoneId?: string } = {}): Promise<OpenedReport> {
  return openWebview(browser, url, options);
}

/** Switches the emulated theme of an open page, as VS Code does when the user changes theme. */
export async function switchTheme(page: Page, theme: ThemeName): Promise<void> {
  const t = THEMES[theme];
  await page.evaluate(({ vars, cls }) => {
    for (const [k, v] of Object.entries(vars)) document.documentElement.style.setProperty(k, v);
    document.body.classList.remove('vscode-light', 'vscode-dark', 'vscode-high-contrast');
    document.body.classList.add(cls);
  }, { vars: t.vars, cls: t.bodyClass });
}

/** Delivers a host message the way VS Code does: a `message` event on window. */
export async function sendToPage(page: Page, message: unknown): Promise<void> {
  await page.evaluate((m) => { window.dispatchEvent(new MessageEvent('message', { data: m })); }, message);
}

/** A webview server and a Chromium for one test file: started before its tests, closed after them. */
export function browserSession<S extends { close(): Promise<void> }>(start: () => Promise<S>): { readonly server: S; readonly browser: Browser } {
  const session = {} as { server: S; browser: Browser };
  before(async () => {
    session.server = await start();
    session.browser = await launchChromium();
  });
  after(async () => {
    await session.browser?.close();
    await session.server?.close();
  });
  return session;
}

/** A report server and a Chromium for one test file. */
export function reportSession(clock?: SurfaceClock): { readonly server: ReportServer; readonly browser: Browser } {
  return browserSession(() => startReportServer(clock));
}
