// How a run ended, in the words every surface uses: a run whose requests all failed (the report's
// header, the CLI's table, the extension's toast), and the requests stopped before their end, which
// are counted apart from failures (Summary.cancelled): the user's Cancel in a run of ours, the tool's
// own stop in an imported one (GuideLLM's incomplete requests, AIPerf's deliberate cancellations). Pure.
import type { ImportTool, RequestError, RunFile, Summary } from '../engine/core/types';
import { cancelledByUser } from '../engine/analysis/metrics';
import { importToolLabel } from './toolLabels';

/** Whether a figure over successful requests has anything behind it: none completed, none failed-over-to-zero. */
export function noneCompleted(s: Pick<Summary, 'completed'>): boolean {
  return s.completed === 0;
}

/** The first measured request's error that is a failure (not the user's Cancel), with its request index. */
export function firstFailure(run: Pick<RunFile, 'requests'>): { readonly index: number; readonly error: RequestError } | undefined {
  const r = run.requests.find((x) => !x.warmup && x.error !== undefined && !cancelledByUser(x));
  return r?.error ? { index: r.index, error: r.error } : undefined;
}

/**
 * "All 5 requests failed: HTTP 404 Not Found: no route for POST /vl/v1/chat/completions": the first
 * failure's own words, and its kinds when they differ ("(http 3, connect 2); the first: …"); with
 * requests cancelled besides, "All 5 requests that finished failed; 3 were cancelled. The first
 * failure: …". Undefined unless no measured request completed and at least one failed.
 */
export function allFailedLine(run: Pick<RunFile, 'summary' | 'requests'> & Partial<Pick<RunFile, 'importedFrom'>>): string | undefined {
  const s = run.summary;
  if (!noneCompleted(s) || s.failed === 0) return undefined;
  const first = firstFailure(run);
  const kinds = Object.entries(s.errorsByKind).filter(([, n]) => (n ?? 0) > 0);
  const kindsPart = kinds.length > 1 ? ` (${kinds.map(([k, n]) => `${k} ${n}`).join(', ')})` : '';
  // requests stopped before their end are not among those that failed: "All 5 requests that finished failed; 3 were cancelled"
  const stopped = s.cancelled ?? 0;
  const finished = stopped > 0 ? ' that finished' : '';
  const what = `${s.failed === 1 ? `The only request${finished}` : `All ${s.failed} requests${finished}`} failed${kindsPart}`;
  // every request got 404: the URL's path is the likelier mistake (a "/vl" for "/v1")
  const path = s.failed > 1 && s.errorsByStatus?.['404'] === s.failed ? `. Every request${finished} got 404: is the URL's path right?` : '';
  if (stopped > 0) {
    const those = `${what}; ${stopped} ${stopped === 1 ? 'was' : 'were'} ${stoppedWords(run).count}`;
    return first ? `${those}. The first failure: ${first.error.message}${path}` : `${those}.`;
  }
  if (!first) return `${what}.`;
  return kinds.length <= 1 ? `${what}: ${first.error.message}${path}` : `${what}; the first: ${first.error.message}`;
}

/** Who stopped the requests an imported run counts as cancelled, by tool: its own words for them, short and long. */
const STOPPED_BY_TOOL: Readonly<Partial<Record<ImportTool, { readonly count: string; readonly line: string }>>> = {
  guidellm: { count: 'stopped when GuideLLM\'s benchmark ended', line: 'stopped when GuideLLM\'s benchmark ended (its incomplete requests; not failures)' },
  aiperf: { count: 'cancelled by AIPerf', line: 'cancelled by AIPerf on purpose (its --request-cancellation-rate, HTTP 499; not failures)' },
};

/**
 * How the cancelled requests (Summary.cancelled) came to be stopped: by the user's Cancel in a run of
 * ours, by the tool in an imported run ("stopped when GuideLLM's benchmark ended").
 */
function stoppedWords(run: Partial<Pick<RunFile, 'importedFrom'>>): { readonly count: string; readonly line: string } {
  const tool = run.importedFrom?.tool;
  if (tool === undefined) return { count: 'cancelled', line: 'cancelled (in flight when the run was cancelled; not failures)' };
  const label = importToolLabel(tool);
  return STOPPED_BY_TOOL[tool] ?? { count: `stopped by ${label}`, line: `stopped by ${label} before they ended (not failures)` };
}

/**
 * "2 requests cancelled (in flight when the run was cancelled; not failures)"; in an imported run, as
 * the tool stopped them ("3 requests stopped when GuideLLM's benchmark ended (…)"); undefined when none were.
 */
export function cancelledLine(run: Pick<RunFile, 'summary'> & Partial<Pick<RunFile, 'importedFrom'>>): string | undefined {
  const n = run.summary.cancelled ?? 0;
  if (n === 0) return undefined;
  return `${n} ${n === 1 ? 'request' : 'requests'} ${stoppedWords(run).line}`;
}

/** "2 cancelled" ("3 stopped when GuideLLM's benchmark ended"), for a count among others (a run list, a summary line); undefined when none were. */
export function cancelledCount(run: Pick<RunFile, 'summary'> & Partial<Pick<RunFile, 'importedFrom'>>): string | undefined {
  const n = run.summary.cancelled ?? 0;
  return n > 0 ? `${n} ${stoppedWords(run).count}` : undefined;
}
