// The report's Errors figure with rate limits (status, Retry-After) and requests sent again, in
// headless Chromium with the real bundle. Needs `npm run build` (dist/webview/report.js).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { summarize } from '../../src/engine/analysis/metrics';
import type { RequestRecord, RunFile } from '../../src/engine/core/types';
import { fixtureRun } from '../support/fixtureRuns';
import { openReport, reportSession, rendered } from '../support/reportHarness';

const session = reportSession();


/** The fixture with request 10 rate limited (429, retry-after 30 s) and request 11 sent again after a closed connection. */
function runWithRetries(): RunFile {
  const base = fixtureRun({ seed: 31, requests: 20, errorRate: 0 });
  const requests: RequestRecord[] = base.requests.map((r) => {
    if (r.index === 10) {
      const { ttftMs: _t, ttfoMs: _o, tpotMs: _p, ...rest } = r;
      return { ...rest, outputTokens: 0, chunkTimesMs: [], httpStatus: 429, error: { kind: 'http', status: 429, message: 'HTTP 429 Too Many Requests: Rate limit reached', retryAfterS: 30 } };
    }
    if (r.index === 11) return { ...r, retries: [{ reason: 'connection-closed', sentAt: r.sentAt - 5, failedAfterMs: 1.2, waitMs: 0, error: { kind: 'reset', message: 'connection closed before the response (UND_ERR_SOCKET: other side closed)' } }] };
    return r;
  });
  return { ...base, requests, summary: summarize(requests, base.workload, { durationS: base.summary.durationS }) };
}

test('the Errors figure names the statuses, the Retry-After each was given and the requests sent again', async () => {
  const run = runWithRetries();
  assert.deepEqual(run.summary.errorsByStatus, { '429': 1 });
  const { context, page, problems } = await openReport(session.browser, session.server.page({ kind: 'run', run }));
  try {
    await rendered(page);
    const note = (await page.textContent('[data-figure="errors"] .note')) ?? '';
    assert.match(note, /http 1: 429 ×1/);
    assert.match(note, /Rate limited: 1 request failed \(429 Too Many Requests ×1; retry-after 30 s\)/);
    assert.match(note, /Sent again: 1 request \(1 time\) whose connection the server closed before any response byte/);
    assert.equal(await page.textContent('[data-figure="errors"] .value'), '1 of 20');
    assert.deepEqual(problems, []);
  } finally {
    await context.close();
  }
});
