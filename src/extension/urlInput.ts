// What a typed endpoint URL means before anything is sent: what is wrong with it (src/jobs/urls.ts's
// check, which also takes "127.0.0.1:18181" as http://), why nothing answers there, and, when every
// probe of its API got 404, that its path is the likelier culprit. Pure: no `vscode` (tested in node);
// urlBox.ts asks with these words.
import { endpointUrlProblem } from '../jobs/urls';
import type { Reach } from '../engine/core/types';
import { reachText } from '../present/endpointText';

/**
 * What is wrong with a URL typed in a box (as withScheme, src/jobs/urls.ts, takes it), as a sentence:
 * the settings' rules (a typed URL is kept, as the last target or an endpoint), or undefined.
 */
export function urlProblem(url: string): string | undefined {
  const problem = endpointUrlProblem(url, 'settings');
  return problem === undefined ? undefined : `This ${problem}`;
}

/**
 * Why nothing answered at a URL, in the reachability check's words, which are a run's: "Not reachable:
 * cannot connect to http://127.0.0.1:18181 (connection refused, nothing listens on that port; ECONNREFUSED)".
 */
export function unreachableText(reach: Reach): string | undefined {
  if (reach.reachable) return undefined;
  const text = reachText(reach);
  return text.charAt(0).toUpperCase() + text.slice(1);
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
