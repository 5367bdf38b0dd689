// How a run ended, in the words every surface uses: a run whose requests all failed (the report's
// header, the CLI's table, the extension's toast), and the requests the user's Cancel stopped, which
// are counted apart from failures (Summary.cancelled). Pure.
import type { RequestError, RunFile, Summary } from '../engine/core/types';

/** Whether a figure over successful requests has anything behind it: none completed, none failed-over-to-zero. */
export function noneCompleted(s: Pick<Summary, 'completed'>): boolean {
  return s.completed === 0;
}

/** The first measured request's error that is a failure (not the user's Cancel), with its request index. */
export function firstFailure(run: Pick<RunFile, 'requests'>): { readonly index: number; readonly error: RequestError } | undefined {
  const r = run.requests.find((x) => !x.warmup && x.error !== undefined && x.error.kind !== 'aborted');
  return r?.error ? { index: r.index, error: r.error } : undefined;
}

/**
 * "All 5 requests failed: HTTP 404 Not Found: no route for POST /vl/v1/chat/completions": the first
 * failure's own words, and its kinds when they differ ("(http 3, connect 2; the first: …)"). Undefined
 * unless no measured request completed and at least one failed.
 */
export function allFailedLine(run: Pick<RunFile, 'summary' | 'requests'>): string | undefined {
  const s = run.summary;
  if (!noneCompleted(s) || s.failed === 0) return undefined;
  const first = firstFailure(run);
  const kinds = Object.entries(s.errorsByKind).filter(([, n]) => (n ?? 0) > 0);
  const what = s.failed === 1 ? 'The only request failed' : `All ${s.failed} requests failed`;
  if (!first) return `${what}.`;
  // every request got 404: the URL's path is the likelier mistake (a "/vl" for "/v1")
  const path = s.failed > 1 && s.errorsByStatus?.['404'] === s.failed ? '. Every request got 404: is the URL\'s path right?' : '';
  if (kinds.length <= 1) return `${what}: ${first.error.message}${path}`;
  return `${what} (${kinds.map(([k, n]) => `${k} ${n}`).join(', ')}); the first: ${first.error.message}`;
}

/** "2 requests cancelled (in flight when the run was cancelled; not failures)", or undefined when none were. */
export function cancelledLine(s: Pick<Summary, 'cancelled'>): string | undefined {
  const n = s.cancelled ?? 0;
  if (n === 0) return undefined;
  return `${n} ${n === 1 ? 'request' : 'requests'} cancelled (in flight when the run was cancelled; not failures)`;
}

/** "2 cancelled", for a count among others (a run list, a summary line); undefined when none were. */
export function cancelledCount(s: Pick<Summary, 'cancelled'>): string | undefined {
  const n = s.cancelled ?? 0;
  return n > 0 ? `${n} cancelled` : undefined;
}
