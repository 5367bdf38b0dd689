// A URL as every surface takes it: "127.0.0.1:18181" or "localhost:8000/v1" typed without a scheme is
// http:// (a URL parser would read "localhost:" as a scheme), and one check of an endpoint's URL for
// the CLI's --url, the settings' endpoints and the extension's URL boxes. Pure: no node or `vscode`
// import (options.ts, read by the webview too, imports it).
import { displayUrl, isSecretHeaderName } from '../engine/core/redact';

/**
 * The URL with its scheme: "127.0.0.1:18181" → "http://127.0.0.1:18181", "user:pw@proxy:3128" →
 * "http://user:pw@proxy:3128" (as curl reads both); a URL with its scheme ("https://…"), or an http(s)
 * one missing a slash ("http:/h"), as typed. Trimmed; empty stays empty.
 */
export function withScheme(text: string): string {
  const t = text.trim();
  if (t === '' || /^[a-z][a-z0-9+.-]*:\/\//i.test(t) || /^https?:/i.test(t)) return t;
  return `http://${t}`;
}

/**
 * Where an endpoint's URL is given: on the command line (a secret in its query, a gateway's ?key=, is
 * sent and redacted wherever the URL is written), or where it is kept (the settings, the extension's
 * URL boxes), where no secret belongs.
 */
export type UrlSurface = 'command line' | 'settings';

/**
 * What is wrong with an endpoint's URL (as withScheme gives it), said after its subject ("--url",
 * "\"url\""), or undefined when it can be used: http:// or https://, no user:password@, and where it
 * is kept no secret in its query. A value that is not a URL is quoted only when it holds no "?" or "@"
 * (a secret could follow either).
 */
export function endpointUrlProblem(url: string, surface: UrlSurface): string | undefined {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return `is not a valid URL${/[?@]/.test(url) ? '' : `: "${url}"`} (type host:port, taken as http://, or a whole URL such as http://127.0.0.1:8000)`;
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return `must be http:// or https://, got "${displayUrl(url)}"`;
  if (u.username || u.password) {
    return `must not carry credentials (user:password@): ${surface === 'command line' ? 'pass a key with --api-key-env VAR' : 'use "LLM Profiler: Set API key"'}`;
  }
  if (surface === 'settings') {
    const secrets = [...u.searchParams.keys()].filter((k) => isSecretHeaderName(k));
    if (secrets.length > 0) {
      return `must not carry a secret in its query (${secrets.join(', ')}): secrets do not belong in settings; use "LLM Profiler: Set API key", or the CLI with the URL in an environment variable`;
    }
  }
  return undefined;
}
