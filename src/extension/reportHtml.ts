// The report panel's HTML, as a pure function (no `vscode` import): the host fills it in with real
// webview URIs, the browser tests with URLs on a local test server. A strict CSP: nothing loads
// unless listed, the one script runs by nonce, styles come only from media/.
import type { RunFile } from '../engine/types';

/** What the panel shows first, before any message arrives. Also what a restored panel starts from. */
export type ReportInitialState =
  | { readonly kind: 'empty' }
  | { readonly kind: 'loading'; readonly runId?: string }
  | { readonly kind: 'run'; readonly run: RunFile; readonly compareWith?: RunFile }
  | { readonly kind: 'error'; readonly message: string; readonly path?: string };

export interface ReportHtmlOptions {
  /** The webview's `cspSource` (or the test server's origin). */
  readonly cspSource: string;
  /** From crypto.randomBytes: at least 128 bits, base64. */
  readonly nonce: string;
  /** URL of dist/webview/report.js as the webview may load it. */
  readonly scriptUri: string;
  /** URL of media/report.css. */
  readonly styleUri: string;
  readonly initialState: ReportInitialState;
  readonly title?: string;
}

/** Escapes text for an HTML attribute value or text node. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => (c === '&' ? '&amp;' : c === '<' ? '&lt;' : c === '>' ? '&gt;' : c === '"' ? '&quot;' : '&#39;'));
}

export function reportHtml(o: ReportHtmlOptions): string {
  if (!/^[A-Za-z0-9+/=_-]{16,}$/.test(o.nonce)) throw new Error('reportHtml: the nonce must be at least 16 base64 characters');
  const csp = [
    "default-src 'none'",
    `script-src 'nonce-${o.nonce}'`,
    `style-src ${o.cspSource}`,
    `img-src ${o.cspSource} data:`,
    `font-src ${o.cspSource}`,
  ].join('; ');
  const state = escapeHtml(JSON.stringify(o.initialState));
  const title = escapeHtml(o.title ?? 'LLM Profiler report');
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${escapeHtml(csp)}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${escapeHtml(o.styleUri)}">
<title>${title}</title>
</head>
<body data-state="${state}">
<main id="app" aria-live="polite"><p class="placeholder">Loading the report…</p></main>
<script nonce="${o.nonce}" src="${escapeHtml(o.scriptUri)}"></script>
</body>
</html>
`;
}
