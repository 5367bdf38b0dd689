// Rate limits and requests sent again, in words, for the CLI's result and the report: failed
// requests by HTTP status with the Retry-After each was given, and the retries a run made
// (src/engine/transport/retry.ts). Pure.
import type { RequestError, RequestRecord, RunFile, Summary } from '../engine/core/types';
import { formatInt, formatMs } from './units';

/** The statuses a rate limit comes as: rate limited, unavailable, and Anthropic's overloaded. */
const RATE_LIMITED: Readonly<Record<string, string>> = { '429': 'Too Many Requests', '503': 'Service Unavailable', '529': 'Overloaded' };

/** "30 s", "0.25 s": the header's value as it was, to the ms. */
function seconds(s: number): string {
  return `${Number(s.toFixed(3))} s`;
}

/** " (retry-after 30 s)" for an error that carried the header, else "". */
export function retryAfterNote(e: RequestError | undefined): string {
  return e?.retryAfterS !== undefined ? ` (retry-after ${seconds(e.retryAfterS)})` : '';
}

/** "429 ×3, 500 ×1": failed requests by HTTP status, most first; undefined when none failed on a status. */
export function statusCounts(s: Pick<Summary, 'errorsByStatus'>): string | undefined {
  const entries = Object.entries(s.errorsByStatus ?? {}).filter(([, n]) => n > 0);
  if (entries.length === 0) return undefined;
  entries.sort((a, b) => b[1] - a[1] || Number(a[0]) - Number(b[0]));
  return entries.map(([status, n]) => `${status} ×${formatInt(n)}`).join(', ');
}

/** The distinct Retry-After values, in order of first sight, at most four shown. */
function retryAfterValues(errors: readonly RequestError[]): string | undefined {
  const seen: number[] = [];
  for (const e of errors) if (e.retryAfterS !== undefined && !seen.includes(e.retryAfterS)) seen.push(e.retryAfterS);
  if (seen.length === 0) return undefined;
  const shown = seen.slice(0, 4).map(seconds).join(', ');
  return `retry-after ${shown}${seen.length > 4 ? ', …' : ''}`;
}

/**
 * One line on rate limits, or undefined when the run met none: "Rate limited: 3 requests failed
 * (429 ×3; retry-after 30 s); 5 retries after waiting 41 s in all (--respect-retry-after)". Over
 * measured requests.
 */
export function rateLimitLine(run: Pick<RunFile, 'requests' | 'workload'>): string | undefined {
  const measured = run.requests.filter((r) => !r.warmup);
  const failed = measured.filter((r) => r.error?.kind === 'http' && r.error.status !== undefined && RATE_LIMITED[String(r.error.status)] !== undefined);
  const waits = measured.flatMap((r) => (r.retries ?? []).filter((t) => t.reason === 'retry-after'));
  if (failed.length === 0 && waits.length === 0) return undefined;
  const parts: string[] = [];
  if (failed.length > 0) {
    const byStatus = new Map<number, number>();
    for (const r of failed) byStatus.set(r.error!.status!, (byStatus.get(r.error!.status!) ?? 0) + 1);
    const statuses = [...byStatus].map(([st, n]) => `${st} ${RATE_LIMITED[String(st)]} ×${formatInt(n)}`).join(', ');
    const after = retryAfterValues(failed.map((r) => r.error!));
    parts.push(`${formatInt(failed.length)} request${failed.length === 1 ? '' : 's'} failed (${statuses}${after ? `; ${after}` : ''})`);
  }
  if (waits.length > 0) {
    const waited = waits.reduce((a, t) => a + t.waitMs, 0);
    parts.push(`${formatInt(waits.length)} ${waits.length === 1 ? 'retry' : 'retries'} after waiting ${formatMs(waited)} in all (${retryAfterValues(waits.map((t) => t.error)) ?? 'retry-after'})`);
  }
  const hint = run.workload.respectRetryAfter ? ' (--respect-retry-after)' : failed.some((r) => r.error!.retryAfterS !== undefined) ? ' (--respect-retry-after would wait and send them again)' : '';
  return `Rate limited: ${parts.join('; ')}${hint}`;
}

/**
 * One line on requests sent again because their connection closed before any response byte, or
 * undefined when none was: the server closed a keep-alive connection as it was reused.
 */
export function connectionRetriesLine(run: Pick<RunFile, 'requests'>): string | undefined {
  let retries = 0;
  let requests = 0;
  for (const r of run.requests) {
    if (r.warmup) continue;
    const n = (r.retries ?? []).filter((t) => t.reason === 'connection-closed').length;
    retries += n;
    if (n > 0) requests++;
  }
  if (retries === 0) return undefined;
  return `Sent again: ${formatInt(requests)} request${requests === 1 ? '' : 's'} (${formatInt(retries)} ${retries === 1 ? 'time' : 'times'}) whose connection the server closed before any response byte (a reused keep-alive connection), each recorded in its retries`;
}

/** Each earlier attempt of a request, one short text each: "connection closed after 1.2 ms", "429 (retry-after 2 s), waited 2 s". */
export function retryTexts(r: Pick<RequestRecord, 'retries'>): string[] {
  return (r.retries ?? []).map((t) => {
    if (t.reason === 'connection-closed') return `connection closed before any response, after ${formatMs(t.failedAfterMs)}; sent again`;
    const status = t.error.status !== undefined ? `HTTP ${t.error.status}` : t.error.kind;
    return `${status}${retryAfterNote(t.error)}; waited ${formatMs(t.waitMs)} and sent again`;
  });
}
