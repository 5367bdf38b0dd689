// What a typed endpoint URL means before anything is sent: "127.0.0.1:18181" taken as http://, what
// is wrong with it, why nothing answers there, and, when every probe of its API got 404, that its
// path is the likelier culprit. Pure: no `vscode` (tested in node); urlBox.ts asks with these words.
import { reachText, type ReachAnswer } from '../present/endpointText';

/** A URL typed without its scheme ("127.0.0.1:18181", "localhost:8000/v1") is taken as http://. */
export function withScheme(text: string): string {
  const t = text.trim();
  if (t === '' || /^[a-z][a-z0-9+.-]*:\/\//i.test(t)) return t;
  return `http://${t}`;
}

/** What is wrong with a URL an endpoint is reached at (after withScheme); undefined when nothing is. */
export function urlProblem(url: string): string | undefined {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return 'Not a URL: type host:port (http:// is assumed) or a whole URL, e.g. http://127.0.0.1:8000';
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return `Use http:// or https:// (not ${u.protocol}//)`;
  if (u.username || u.password) return 'No credentials in the URL: use "LLM Profiler: Set API key" for a configured endpoint';
  return undefined;
}

/** Why nothing answered at a URL, in the reachability check's words: "http://127.0.0.1:18181 is not reachable: connection refused (nothing listens on that port)". */
export function unreachableText(url: string, reach: ReachAnswer): string | undefined {
  if (reach.reachable) return undefined;
  return `${url} is ${reachText(reach)}`;
}

/** The URL's own path ("/vl"), or undefined for a URL at the server's root. */
export function urlPath(url: string): string | undefined {
  try {
    const p = new URL(url).pathname.replace(/\/+$/, '');
    return p === '' ? undefined : p;
  } catch {
    return undefined;
  }
}

/**
 * When every probe of a URL with a path got 404, the path is the likelier mistake than an API no
 * probe knows ("/vl" for "/v1"): the question that says so first. Undefined otherwise (a URL at the
 * server's root, or a probe that got something else), where the API pick asks as it always did.
 */
export function notFoundQuestion(url: string, found: { readonly undetected: string; readonly notFound?: boolean }): string | undefined {
  const path = urlPath(url);
  if (!found.notFound || path === undefined) return undefined;
  // the question first: a long placeholder is cut at the box's end
  return `Is the path ${path} right? Nothing answers under it: every probe got 404 (GET ${found.undetected}). Fix the URL, or pick its API to keep it`;
}
