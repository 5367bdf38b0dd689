// src/engine/transport/retry.ts: reading Retry-After, and the decision after each attempt.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseCommandLine } from '../../src/cli/parse';
import { parseSlo } from '../../src/engine/core/slo';
import { buildConfig } from '../../src/extension/configModel';
import { buildRunJob, buildSweepJob } from '../../src/jobs/build';
import { MAX_CONNECTION_RETRIES, MAX_RETRY_AFTER_RETRIES, MAX_RETRY_AFTER_S, nextStep, retryAfterSeconds, sendWithRetries } from '../../src/engine/transport/retry';
import type { Attempt, RetryPolicy } from '../../src/engine/transport/retry';
import { summarize } from '../../src/engine/analysis/metrics';
import { defaultWorkload } from '../../src/engine/core/workload';
import type { RequestError, RequestRecord, RequestRetry } from '../../src/engine/core/types';
import { formatErrors } from '../../src/present/runText';
import { rateLimitLine, retryTexts, statusCounts } from '../../src/present/retryText';

test('Retry-After: delay-seconds, an HTTP date against the response\'s Date (else the clock), retry-after-ms first; nonsense is undefined', () => {
  const now = Date.parse('Wed, 21 Oct 2015 07:28:00 GMT');
  assert.equal(retryAfterSeconds({ retryAfter: '120' }, now), 120);
  assert.equal(retryAfterSeconds({ retryAfter: ' 0 ' }, now), 0);
  assert.equal(retryAfterSeconds({ retryAfter: 'Wed, 21 Oct 2015 07:28:30 GMT' }, now), 30);
  // the server's Date, not the client's clock (which may be off by minutes)
  assert.equal(retryAfterSeconds({ retryAfter: 'Wed, 21 Oct 2015 07:28:30 GMT', date: 'Wed, 21 Oct 2015 07:28:25 GMT' }, now + 600_000), 5);
  assert.equal(retryAfterSeconds({ retryAfter: 'Wed, 21 Oct 2015 07:27:00 GMT' }, now), 0, 'a date in the past: at once');
  assert.equal(retryAfterSeconds({ retryAfter: '5', retryAfterMs: '250' }, now), 0.25, "OpenAI's retry-after-ms is finer and wins");
  assert.equal(retryAfterSeconds({ retryAfterMs: '1500.5' }, now), 1.5005);
  for (const bad of ['', '-3', '1.5', '10s', 'soon', 'Wed, 99 Foo']) assert.equal(retryAfterSeconds({ retryAfter: bad }, now), undefined, JSON.stringify(bad));
  assert.equal(retryAfterSeconds({}, now), undefined);
});

function record(error?: RequestError, over: Partial<RequestRecord> = {}): RequestRecord {
  return { index: 0, warmup: false, scheduledAt: 1000, sentAt: 1000, outputTokens: 0, tokenSource: 'chunks', chunkTimesMs: [], e2eMs: 3, ...(error ? { error } : {}), ...over };
}

const reset: RequestError = { kind: 'reset', message: 'connection closed before the response (UND_ERR_SOCKET: other side closed)' };
const limited = (retryAfterS?: number, status = 429): RequestError => ({ kind: 'http', status, message: `HTTP ${status}`, ...(retryAfterS !== undefined ? { retryAfterS } : {}) });
const policy = (over: Partial<RetryPolicy> = {}): RetryPolicy => ({ respectRetryAfter: false, timeoutMs: 120_000, ...over });
const earlier = (reason: RequestRetry['reason'], n: number): RequestRetry[] => Array.from({ length: n }, () => ({ reason, sentAt: 0, failedAfterMs: 1, waitMs: 0, error: reset }));

test('a closed connection is sent again only before any response byte, at most MAX_CONNECTION_RETRIES times, within the timeout', () => {
  assert.deepEqual(nextStep({ record: record(reset), responseStarted: false }, [], policy(), 5), { kind: 'retry', reason: 'connection-closed', waitMs: 0 });
  assert.deepEqual(nextStep({ record: record(reset), responseStarted: true }, [], policy(), 5), { kind: 'keep' }, 'a byte of the response came: never again');
  assert.equal(nextStep({ record: record(reset), responseStarted: false }, earlier('connection-closed', MAX_CONNECTION_RETRIES - 1), policy(), 5).kind, 'retry');
  const last = nextStep({ record: record(reset), responseStarted: false }, earlier('connection-closed', MAX_CONNECTION_RETRIES), policy(), 5);
  assert.equal(last.kind, 'keep');
  assert.match((last as { note?: string }).note ?? '', /sent 3 times, each connection closed before a response/);
  assert.equal(nextStep({ record: record(reset), responseStarted: false }, [], policy({ timeoutMs: 100 }), 100).kind, 'keep', 'no time left');
  for (const kind of ['connect', 'timeout', 'idle-timeout', 'aborted', 'other', 'empty'] as const) {
    assert.equal(nextStep({ record: record({ kind, message: kind }), responseStarted: false }, [], policy({ respectRetryAfter: true }), 5).kind, 'keep', kind);
  }
  assert.deepEqual(nextStep({ record: record(), responseStarted: true }, [], policy(), 5), { kind: 'keep' });
});

test('Retry-After is waited only when respected, on 429/503/529, under the cap, within the timeout, a bounded number of times', () => {
  const on = policy({ respectRetryAfter: true });
  assert.deepEqual(nextStep({ record: record(limited(2)), responseStarted: true }, [], policy(), 5), { kind: 'keep' }, 'off by default: the failure as the endpoint gave it');
  for (const status of [429, 503, 529]) assert.deepEqual(nextStep({ record: record(limited(2, status)), responseStarted: true }, [], on, 5), { kind: 'retry', reason: 'retry-after', waitMs: 2000 }, String(status));
  assert.equal(nextStep({ record: record(limited(2, 500)), responseStarted: true }, [], on, 5).kind, 'keep', 'a 500 is not a rate limit');
  assert.equal(nextStep({ record: record(limited(undefined)), responseStarted: true }, [], on, 5).kind, 'keep', 'no header: nothing to respect');
  const capped = nextStep({ record: record(limited(MAX_RETRY_AFTER_S + 1)), responseStarted: true }, [], on, 5);
  assert.deepEqual(capped, { kind: 'keep', note: `retry-after ${MAX_RETRY_AFTER_S + 1} s is over the ${MAX_RETRY_AFTER_S} s cap: not retried` });
  assert.equal(nextStep({ record: record(limited(MAX_RETRY_AFTER_S)), responseStarted: true }, [], on, 5).kind, 'retry');
  const late = nextStep({ record: record(limited(2)), responseStarted: true }, [], policy({ respectRetryAfter: true, timeoutMs: 3000 }), 1500);
  assert.deepEqual(late, { kind: 'keep', note: "retry-after 2 s would pass the request's 3 s timeout: not retried" });
  const many = nextStep({ record: record(limited(0)), responseStarted: true }, earlier('retry-after', MAX_RETRY_AFTER_RETRIES), on, 5);
  assert.equal(many.kind, 'keep');
});

test('sendWithRetries keeps the last attempt and the earlier ones in order; a note on why not is added to the error', async () => {
  const attempts: Attempt[] = [
    { record: record(reset, { sentAt: 1 }), responseStarted: false },
    { record: record(limited(0), { sentAt: 2, httpStatus: 429 }), responseStarted: true },
    { record: record(undefined, { sentAt: 3, outputTokens: 4, chunkTimesMs: [1, 2, 3, 4] }), responseStarted: true },
  ];
  const timeouts: number[] = [];
  const r = await sendWithRetries(async (t) => {
    timeouts.push(t);
    return attempts.shift()!;
  }, new AbortController().signal, policy({ respectRetryAfter: true }));
  assert.equal(r.error, undefined);
  assert.equal(r.sentAt, 3);
  assert.deepEqual(r.retries?.map((t) => [t.reason, t.sentAt, t.waitMs]), [['connection-closed', 1, 0], ['retry-after', 2, 0]]);
  assert.equal(timeouts.length, 3);
  assert.ok(timeouts.every((t) => t > 0 && t <= 120_000), 'each attempt gets what is left of the timeout');
  const capped = await sendWithRetries(async () => ({ record: record(limited(600)), responseStarted: true }), new AbortController().signal, policy({ respectRetryAfter: true }));
  assert.match(capped.error!.message, /^HTTP 429 \(retry-after 600 s is over the 60 s cap: not retried\)$/);
  assert.equal(capped.retries, undefined);
});

test('a cancel during a Retry-After wait ends it at once, as an aborted request that keeps its retries', async () => {
  const ctrl = new AbortController();
  const started = performance.now();
  setTimeout(() => ctrl.abort(), 50);
  const r = await sendWithRetries(async () => ({ record: record(limited(30)), responseStarted: true }), ctrl.signal, policy({ respectRetryAfter: true }));
  assert.ok(performance.now() - started < 1000, 'not the 30 s');
  assert.equal(r.error?.kind, 'aborted');
  assert.match(r.error!.message, /cancelled while waiting 30 s as retry-after asked/);
  assert.equal(r.retries?.length, 1);
  assert.equal(r.retries![0]!.error.retryAfterS, 30);
});

test('the summary counts failures by status and retries by reason; the texts show the header values', () => {
  const w = defaultWorkload({ requests: 4 });
  const requests: RequestRecord[] = [
    record(limited(30)),
    record(limited(undefined, 503), { index: 1 }),
    record(limited(5, 529), { index: 2 }),
    record(undefined, { index: 3, outputTokens: 2, chunkTimesMs: [1, 2], ttftMs: 1, retries: [{ reason: 'retry-after', sentAt: 0, failedAfterMs: 2, waitMs: 1000, error: limited(1) }, ...earlier('connection-closed', 1)] }),
  ];
  const s = summarize(requests, w, { durationS: 1 });
  assert.deepEqual(s.errorsByStatus, { '429': 1, '503': 1, '529': 1 });
  assert.deepEqual(s.retries, { 'retry-after': 1, 'connection-closed': 1 });
  assert.equal(statusCounts(s), '429 ×1, 503 ×1, 529 ×1');
  assert.equal(formatErrors(s), 'Errors: 3 of 4 (http 3: 429 ×1, 503 ×1, 529 ×1)');
  assert.equal(
    rateLimitLine({ requests, workload: w }),
    'Rate limited: 3 requests failed (429 Too Many Requests ×1, 503 Service Unavailable ×1, 529 Overloaded ×1; retry-after 30 s, 5 s); 1 retry after waiting 1,000 ms in all (retry-after 1 s) (--respect-retry-after would wait and send them again)',
  );
  assert.deepEqual(retryTexts(requests[3]!), ['HTTP 429 (retry-after 1 s); waited 1,000 ms and sent again', 'connection closed before any response, after 1 ms; sent again']);
  const clean = summarize([record(undefined, { outputTokens: 2, chunkTimesMs: [1, 2], ttftMs: 1 })], w, { durationS: 1 });
  assert.equal(clean.errorsByStatus, undefined);
  assert.equal(clean.retries, undefined);
  assert.equal(rateLimitLine({ requests: [], workload: w }), undefined);
});

test('--respect-retry-after: off by default, on with the flag, for run and sweep; the setting likewise', async () => {
  assert.equal((await buildRunJob(parseCommandLine('run', ['--url', 'http://h']))).job.workload.respectRetryAfter, undefined);
  assert.equal((await buildRunJob(parseCommandLine('run', ['--url', 'http://h', '--respect-retry-after']))).job.workload.respectRetryAfter, true);
  assert.equal((await buildSweepJob(parseCommandLine('sweep', ['--url', 'http://h', '--respect-retry-after']))).job.workload.respectRetryAfter, true);
  assert.equal(buildConfig({ values: {}, endpoints: {} }, parseSlo).config.respectRetryAfter, false);
  assert.equal(buildConfig({ values: { 'workload.respectRetryAfter': true }, endpoints: {} }, parseSlo).config.respectRetryAfter, true);
  const bad = buildConfig({ values: { 'workload.respectRetryAfter': 'yes' }, endpoints: {} }, parseSlo);
  assert.equal(bad.config.respectRetryAfter, false);
  assert.deepEqual(bad.problems, [{ setting: 'llmProfiler.workload.respectRetryAfter', message: 'must be true or false; using false' }]);
});
