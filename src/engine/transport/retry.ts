// Sending a request again, never silently: each earlier attempt stays in the record's `retries`.
//
// 'connection-closed': the connection closed before a single byte of the response came back. A
// server may close a keep-alive connection just as the client reuses it. llama.cpp's llama-server
// does it after every stream: its chunked_content_provider (tools/server/server-http.cpp) calls
// sink.done() and then returns false, which cpp-httplib's write_content_chunked takes for
// "cancelled", so process_request fails and the connection is shut (drain_and_close_socket) 0.2 to
// 8 ms after the last chunk, although the headers said `Keep-Alive: timeout=5, max=100`. uvicorn
// (vLLM) closes a connection idle for 5 s without a Keep-Alive header to say so. undici yields one
// turn of the event loop before it reuses an idle socket, which catches a FIN already there, not
// one still on its way: a request written in that window is read and thrown away, and undici says
// "other side closed". The server never answered it, so it is sent again. Never after any byte of
// a response (undici's onResponseStarted fires at the first byte of the status line): whatever
// came is the server's answer, and a failure after it is the server's failure.
//
// 'retry-after': with --respect-retry-after, a 429, 503 or 529 carrying Retry-After (or OpenAI's
// retry-after-ms) is sent again after the wait it asked for: a wait over MAX_RETRY_AFTER_S, or one
// that would take the request past its --timeout, is not waited (the request fails, saying why), and
// cancelling the run ends a wait at once.
import type { RequestError, RequestRecord, RequestRetry, RetryReason } from '../core/types';

/** Times a request is sent again because its connection closed before any response byte. */
export const MAX_CONNECTION_RETRIES = 2;
/** The longest Retry-After waited, seconds: a longer one fails the request with the header's value. */
export const MAX_RETRY_AFTER_S = 60;
/** Times a request is sent again on Retry-After (a server that says "0" each time is not hammered forever). */
export const MAX_RETRY_AFTER_RETRIES = 8;
/** The statuses whose Retry-After is respected: rate limited, unavailable, and Anthropic's overloaded. */
const RATE_LIMIT_STATUSES: ReadonlySet<number> = new Set([429, 503, 529]);

/** One attempt, as the client made it. */
export interface Attempt {
  readonly record: RequestRecord;
  /** A byte of the response arrived: the request is never sent again. */
  readonly responseStarted: boolean;
}

export interface RetryPolicy {
  readonly respectRetryAfter: boolean;
  /** The request's --timeout, ms, over all its attempts and waits (0 or less: none). */
  readonly timeoutMs: number;
}

/** The Retry-After headers of a response, as received (any may be absent). */
export interface RetryAfterHeaders {
  readonly retryAfter?: string;
  readonly retryAfterMs?: string;
  /** The response's Date, against which an HTTP-date Retry-After is read. */
  readonly date?: string;
}

const DELAY_SECONDS = /^\d{1,10}$/;
const DECIMAL = /^\d{1,12}(\.\d{1,6})?$/;
/** Every HTTP-date form (IMF-fixdate, RFC 850, asctime) starts with the day's name. */
const HTTP_DATE_START = /^[A-Za-z]{3}/;

/**
 * Seconds to wait, from Retry-After (RFC 9110 §10.2.3: delay-seconds or an HTTP date) or OpenAI's
 * retry-after-ms, which is finer and wins. An HTTP date is read against the response's Date when
 * it has one (the server's clock against itself), else against `nowMs`; a date in the past is 0.
 * Undefined when there is none or it cannot be read.
 */
export function retryAfterSeconds(h: RetryAfterHeaders, nowMs: number): number | undefined {
  const ms = h.retryAfterMs?.trim();
  if (ms !== undefined && DECIMAL.test(ms)) return Number(ms) / 1000;
  const v = h.retryAfter?.trim();
  if (v === undefined || v === '') return undefined;
  if (DELAY_SECONDS.test(v)) return Number(v);
  if (!HTTP_DATE_START.test(v)) return undefined; // "1.5", "-3", "10s": not the header's syntax (Date.parse would take "-3")
  const at = Date.parse(v);
  if (!Number.isFinite(at)) return undefined;
  const date = h.date !== undefined ? Date.parse(h.date) : Number.NaN;
  const base = Number.isFinite(date) ? date : nowMs;
  return Math.max(0, Math.round(at - base) / 1000);
}

/** What follows an attempt: send again after `waitMs`, or keep its record (its error told why not, when it was a candidate). */
export type Step =
  | { readonly kind: 'retry'; readonly reason: RetryReason; readonly waitMs: number }
  | { readonly kind: 'keep'; readonly note?: string };

function count(retries: readonly RequestRetry[], reason: RetryReason): number {
  let n = 0;
  for (const r of retries) if (r.reason === reason) n++;
  return n;
}

/**
 * The decision after one attempt, pure: `retries` are the attempts before it, `elapsedMs` the
 * request's time so far (from its first dispatch to now).
 */
export function nextStep(a: Attempt, retries: readonly RequestRetry[], policy: RetryPolicy, elapsedMs: number): Step {
  const e = a.record.error;
  if (e === undefined) return { kind: 'keep' };
  const left = policy.timeoutMs > 0 ? policy.timeoutMs - elapsedMs : Number.POSITIVE_INFINITY;
  if (e.kind === 'reset' && !a.responseStarted) {
    if (count(retries, 'connection-closed') >= MAX_CONNECTION_RETRIES) return { kind: 'keep', note: `sent ${MAX_CONNECTION_RETRIES + 1} times, each connection closed before a response` };
    if (left <= 0) return { kind: 'keep' };
    return { kind: 'retry', reason: 'connection-closed', waitMs: 0 };
  }
  if (!policy.respectRetryAfter || e.kind !== 'http' || e.status === undefined || !RATE_LIMIT_STATUSES.has(e.status) || e.retryAfterS === undefined) return { kind: 'keep' };
  const s = e.retryAfterS;
  if (s > MAX_RETRY_AFTER_S) return { kind: 'keep', note: `retry-after ${s} s is over the ${MAX_RETRY_AFTER_S} s cap: not retried` };
  if (count(retries, 'retry-after') >= MAX_RETRY_AFTER_RETRIES) return { kind: 'keep', note: `still refused after ${MAX_RETRY_AFTER_RETRIES} retries` };
  const waitMs = s * 1000;
  if (waitMs >= left) return { kind: 'keep', note: `retry-after ${s} s would pass the request's ${policy.timeoutMs / 1000} s timeout: not retried` };
  return { kind: 'retry', reason: 'retry-after', waitMs };
}

/**
 * Resolves true after `ms`, or false as soon as `signal` aborts. Not scheduler.ts's sleep: this
 * module stays free of the clock's node timers (jobs/options.ts, which the webview imports, reads
 * MAX_RETRY_AFTER_S from here).
 */
function wait(ms: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false);
  if (ms <= 0) return Promise.resolve(true);
  return new Promise<boolean>((resolve) => {
    const onAbort = (): void => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve(true);
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

const round3 = (ms: number): number => Math.round(ms * 1000) / 1000;

function withRetries(record: RequestRecord, retries: readonly RequestRetry[], error?: RequestError): RequestRecord {
  if (retries.length === 0 && error === undefined) return record;
  return { ...record, ...(retries.length > 0 ? { retries: [...retries] } : {}), ...(error !== undefined ? { error } : {}) };
}

/**
 * Sends a request through `attempt` (given the time left of its --timeout, ms; 0: none) until an
 * attempt is kept, and returns that attempt's record with the earlier ones in `retries`. Never
 * rejects when `attempt` does not.
 */
export async function sendWithRetries(attempt: (timeoutMs: number) => Promise<Attempt>, signal: AbortSignal, policy: RetryPolicy, now: () => number = () => performance.now()): Promise<RequestRecord> {
  const start = now();
  const retries: RequestRetry[] = [];
  let timeoutMs = policy.timeoutMs;
  for (;;) {
    const a = await attempt(timeoutMs);
    const step = signal.aborted ? ({ kind: 'keep' } as const) : nextStep(a, retries, policy, now() - start);
    const e = a.record.error;
    if (step.kind === 'keep') {
      return withRetries(a.record, retries, e !== undefined && step.note !== undefined ? { ...e, message: `${e.message} (${step.note})` } : undefined);
    }
    retries.push({ reason: step.reason, sentAt: a.record.sentAt, failedAfterMs: a.record.e2eMs ?? 0, waitMs: round3(step.waitMs), error: e! });
    if (!(await wait(step.waitMs, signal))) {
      const why = step.reason === 'retry-after' ? `cancelled while waiting ${round3(step.waitMs / 1000)} s as retry-after asked` : 'cancelled before it was sent again';
      return withRetries(a.record, retries, { kind: 'aborted', message: why });
    }
    if (policy.timeoutMs > 0) timeoutMs = Math.max(1, policy.timeoutMs - (now() - start));
  }
}
