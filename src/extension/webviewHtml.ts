// The HTML shell of both webviews (the report panel and the sidebar), as a pure function (no
// `vscode` import): the host fills it in with real webview URIs, the browser tests with URLs on a
// local test server. A strict CSP: nothing loads unless listed, the one script runs by nonce,
// styles come only from media/; the report may start its comparison worker from a blob:. The initial state travels escaped in `<body data-state>`,
// the host's locale and zone for times in `<body data-clock>`.
import { randomBytes } from 'node:crypto';
import type { RunFile } from '../engine/core/types';
import type { SurfaceClock } from '../shared/protocol';

/** A fresh nonce for one page: 144 random bits, base64. */
export function newNonce(): string {
  return randomBytes(18).toString('base64');
}

export interface WebviewHtmlOptions {
  /** The webview's `cspSource` (or the test server's origin). */
  readonly cspSource: string;
  /** From crypto.randomBytes: at least 128 bits, base64. */
  readonly nonce: string;
  /** URL of the page's script (dist/webview/*.js) as the webview may load it. */
  readonly scriptUri: string;
  /** URL of its stylesheet (media/*.css). */
  readonly styleUri: string;
  readonly title: string;
  /** JSON-serializable state the page starts from. */
  readonly state: unknown;
  /** The locale and zone the page says times in: the host's (src/extension/clock.ts), never the browser's own. */
  readonly clock: SurfaceClock;
  /** Shown until the script draws. */
  readonly placeholder?: string;
  /**
   * The page starts a worker: VS Code lets a webview start one only from a blob: URL, made here from
   * source bundled into the page's script (the report's comparison thread). No connect-src: nothing is fetched.
   */
  readonly workers?: boolean;
}

/** Escapes text for an HTML attribute value or text node. */
function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => (c === '&' ? '&amp;' : c === '<' ? '&lt;' : c === '>' ? '&gt;' : c === '"' ? '&quot;' : '&#39;'));
}

export function webviewHtml(o: WebviewHtmlOptions): string {
  if (!/^[A-Za-z0-9+/=_-]{16,}$/.test(o.nonce)) throw new Error('webviewHtml: the nonce must be at least 16 base64 characters');
  const csp = [
    "default-src 'none'",
    `script-src 'nonce-${o.nonce}'`,
    `style-src ${o.cspSource}`,
    `img-src ${o.cspSource} data:`,
    `font-src ${o.cspSource}`,
    ...(o.workers ? ['worker-src blob:'] : []),
  ].join('; ');
  // no aria-live around the whole page (every redraw would be read out): the placeholder and the
  // pages' own small status regions say what changes
  const placeholder = o.placeholder ? `<p class="placeholder" role="status">${escapeHtml(o.placeholder)}</p>` : '';
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${escapeHtml(csp)}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${escapeHtml(o.styleUri)}">
<title>${escapeHtml(o.title)}</title>
</head>
<body data-state="${escapeHtml(JSON.stringify(o.state))}" data-clock="${escapeHtml(JSON.stringify({ locale: o.clock.locale, timeZone: o.clock.timeZone }))}">
<main id="app">${placeholder}</main>
<script nonce="${o.nonce}" src="${escapeHtml(o.scriptUri)}"></script>
</body>
</html>
`;
}

/** What the report panel shows first, before any message arrives. Also what a restored panel starts from. */
export type ReportInitialState =
  | { readonly kind: 'empty' }
  | { readonly kind: 'loading'; readonly runId?: string }
  | { readonly kind: 'run'; readonly run: RunFile; readonly compareWith?: RunFile }
  | { readonly kind: 'error'; readonly message: string; readonly path?: string };

export interface ReportHtmlOptions extends Omit<WebviewHtmlOptions, 'state' | 'title' | 'placeholder'> {
  readonly initialState: ReportInitialState;
  readonly title?: string;
}

/** The report panel's page. */
export function reportHtml(o: ReportHtmlOptions): string {
  const { initialState, title, ...rest } = o;
  return webviewHtml({ ...rest, title: title ?? 'LLM Profiler report', state: initialState, placeholder: 'Loading the report…', workers: true });
}
