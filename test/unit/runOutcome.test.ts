// How a run ended, on every surface: requests the user's Cancel stopped are their own kind (not
// failures: the summary, the CLI's table, the report's error tile); a run whose every request failed
// says so with the first error's words, and its figures read "–", never 0. And the words of a typed
// URL: host:port taken as http://, nothing answering said, a 404 under the URL's path blamed first.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { summarize } from '../../src/engine/analysis/metrics';
import { defaultWorkload } from '../../src/engine/core/workload';
import type { RequestRecord, RunFile } from '../../src/engine/core/types';
import { RunTally } from '../../src/engine/run/runTally';
import { allFailedLine, cancelledLine } from '../../src/present/outcomeText';
import { formatErrors, formatRunTable, summaryText } from '../../src/present/runText';
import { headlineFigures, percentileRows } from '../../webview/report/figures';
import { notFoundQuestion, unreachableText } from '../../src/extension/urlInput';

function run(requests: RequestRecord[], extra: Partial<RunFile> = {}): RunFile {
  const workload = defaultWorkload({ percentiles: [50, 90, 99] });
  return {
    format: 'llm-profiler.run', version: 1, id: 'x', startedAt: '2026-01-01T00:00:00Z', tool: { name: 'llm-profiler', version: '0.0.0' },
    endpoint: { name: 'vl', url: 'http://127.0.0.1:8000/vl', api: 'openai-chat', model: 'm' }, workload, requests, summary: summarize(requests, workload, { durationS: 1 }),
    ...extra,
  };
}

const ok = (index: number, times: number[]): RequestRecord => ({ index, warmup: false, scheduledAt: 0, sentAt: 0, ttftMs: times[0], e2eMs: times[times.length - 1], outputTokens: times.length, tokenSource: 'usage', chunkTimesMs: times });
const aborted = (index: number, times: number[]): RequestRecord => ({ ...ok(index, times), ttftMs: undefined, e2eMs: undefined, error: { kind: 'aborted', message: 'cancelled' } });
const notFound = (index: number): RequestRecord => ({
  index, warmup: false, scheduledAt: 0, sentAt: 0, outputTokens: 0, tokenSource: 'chunks', chunkTimesMs: [],
  error: { kind: 'http', status: 404, message: 'HTTP 404 Not Found: no route for POST /vl/v1/chat/completions', body: 'no route for POST /vl/v1/chat/completions' },
});

test('a cancelled request is neither completed nor failed: summary.cancelled, not in errorsByKind', () => {
  const r = run([ok(0, [100, 110, 120]), ok(1, [90, 100]), aborted(2, [95, 105]), aborted(3, [])]);
  const s = r.summary;
  assert.equal(s.completed, 2);
  assert.equal(s.failed, 0, 'the user\'s Cancel is no failure');
  assert.equal(s.cancelled, 2);
  assert.equal(s.errorsByKind.aborted, undefined);
  assert.equal(formatErrors(s), 'Errors: none');
  assert.equal(cancelledLine(r), '2 requests cancelled (in flight when the run was cancelled; not failures)');
  const t = formatRunTable({ ...r, cancelled: true });
  assert.match(t, /^Cancelled: 2 requests cancelled \(in flight when the run was cancelled; not failures\)$/m);
  assert.doesNotMatch(t, /aborted/);
  assert.match(summaryText(r), /2 completed, 0 failed, 2 cancelled/);
  // the report's error tile: none failed, so not red
  const errors = headlineFigures(r).find((f) => f.id === 'errors')!;
  assert.equal(errors.value, '0 of 2');
  assert.equal(errors.bad, false);
  assert.equal(errors.note, '2 cancelled (not failures)');
  // a failure beside them is still one
  const mixed = run([ok(0, [100, 110]), aborted(1, []), notFound(2)]).summary;
  assert.deepEqual([mixed.completed, mixed.failed, mixed.cancelled, mixed.errorsByKind], [1, 1, 1, { http: 1 }]);
  assert.equal(run([ok(0, [100, 110])]).summary.cancelled, undefined, 'absent when none');
});

test('live progress counts a cancelled request apart from the failed ones', () => {
  const tally = new RunTally('r', 4);
  tally.record(ok(0, [100, 110]));
  tally.record(aborted(1, [90]));
  tally.record(notFound(2));
  const p = tally.progress();
  assert.deepEqual([p.succeeded, p.failed, p.cancelled, p.finished], [1, 1, 1, 2]);
});

test('every request failed: the first error\'s words on top, "–" for every figure over completed requests (CLI and report)', () => {
  const r = run([0, 1, 2, 3, 4].map(notFound));
  assert.equal(allFailedLine(r), 'All 5 requests failed: HTTP 404 Not Found: no route for POST /vl/v1/chat/completions. Every request got 404: is the URL\'s path right?');
  const t = formatRunTable(r);
  assert.match(t, /^All 5 requests failed: HTTP 404 Not Found: no route for POST \/vl\/v1\/chat\/completions/m);
  assert.match(t, /^Output token throughput \(tok\/s\):\s+–$/m);
  assert.match(t, /^Request throughput \(req\/s\):\s+–$/m);
  assert.match(t, /^TTFT\s+–\s+–\s+–\s+–\s+0$/m);
  assert.doesNotMatch(t, /0\.00/);
  const tiles = headlineFigures(r);
  for (const id of ['ttft-p50', 'ttft-p99', 'tpot-p50', 'e2e-p50', 'output-tps', 'rps']) {
    const tile = tiles.find((f) => f.id === id);
    if (tile) assert.equal(tile.value, '–', `${id}: ${tile.value}`);
  }
  assert.ok(tiles.some((f) => f.id === 'output-tps'), 'the throughput tile is shown, as "–"');
  assert.equal(tiles.find((f) => f.id === 'errors')!.value, '5 of 5');
  for (const row of percentileRows(r)) assert.equal(row.stats, undefined, `${row.metric.label}: no figures`);
  assert.doesNotMatch(summaryText(r), /tok\/s/);
  // mixed kinds: counted, then the first one's words
  const mixed = run([notFound(0), { ...notFound(1), error: { kind: 'connect', message: 'cannot connect to http://127.0.0.1:8000 (ECONNREFUSED)' } }]);
  assert.equal(allFailedLine(mixed), 'All 2 requests failed (http 1, connect 1); the first: HTTP 404 Not Found: no route for POST /vl/v1/chat/completions');
  // one completed: no such line, figures as they are
  assert.equal(allFailedLine(run([ok(0, [100, 110]), notFound(1)])), undefined);
  // all cancelled (none failed): not "all failed"
  assert.equal(allFailedLine(run([aborted(0, []), aborted(1, [])])), undefined);
});

test('every request that finished failed, others cancelled: "all failed" counts only those, and says the cancelled apart', () => {
  const r = run([notFound(0), notFound(1), aborted(2, []), notFound(3), aborted(4, [90]), notFound(5), notFound(6), aborted(7, [])]);
  assert.deepEqual([r.summary.failed, r.summary.cancelled], [5, 3]);
  assert.equal(allFailedLine(r),
    'All 5 requests that finished failed; 3 were cancelled. The first failure: HTTP 404 Not Found: no route for POST /vl/v1/chat/completions. Every request that finished got 404: is the URL\'s path right?');
  assert.equal(allFailedLine(run([notFound(0), aborted(1, [])])), 'The only request that finished failed; 1 was cancelled. The first failure: HTTP 404 Not Found: no route for POST /vl/v1/chat/completions');
  // an imported run: the tool stopped them, not the user
  const guide = run([notFound(0), notFound(1), aborted(2, [])], { importedFrom: { tool: 'guidellm', file: 'benchmarks.json', startTimes: 'absolute' } });
  assert.match(allFailedLine(guide)!, /^All 2 requests that finished failed; 1 was stopped when GuideLLM's benchmark ended\. The first failure: /);
});

test('cancelled requests said by who stopped them: the user\'s Cancel, or the imported tool (GuideLLM\'s incomplete requests, AIPerf\'s 499s)', () => {
  // as the importers record them: kind "aborted" (guidellm.ts errorOf, aiperf.ts)
  const incomplete = (index: number): RequestRecord => ({ ...aborted(index, [90]), error: { kind: 'aborted', message: 'incomplete: GuideLLM cancelled the request when the benchmark stopped' } });
  const requests = [ok(0, [100, 110]), ok(1, [90, 100]), incomplete(2), incomplete(3), incomplete(4)];
  const guide = run(requests, { importedFrom: { tool: 'guidellm', file: 'benchmarks.json', startTimes: 'absolute' } });
  assert.deepEqual([guide.summary.completed, guide.summary.failed, guide.summary.cancelled], [2, 0, 3]);
  assert.equal(cancelledLine(guide), '3 requests stopped when GuideLLM\'s benchmark ended (its incomplete requests; not failures)');
  const table = formatRunTable(guide);
  assert.match(table, /^Cancelled: 3 requests stopped when GuideLLM's benchmark ended/m);
  assert.doesNotMatch(table, /in flight when the run was cancelled/, 'nobody cancelled this run: GuideLLM stopped them');
  assert.match(summaryText(guide), /2 completed, 0 failed, 3 stopped when GuideLLM's benchmark ended/);
  assert.equal(headlineFigures(guide).find((f) => f.id === 'errors')!.note, '3 stopped when GuideLLM\'s benchmark ended (not failures)');
  const aiperf = run(requests, { importedFrom: { tool: 'aiperf', file: 'profile_export.jsonl', startTimes: 'absolute' } });
  assert.equal(cancelledLine(aiperf), '3 requests cancelled by AIPerf on purpose (its --request-cancellation-rate, HTTP 499; not failures)');
  const vllm = run(requests, { importedFrom: { tool: 'vllm', file: 'result.json', startTimes: 'relative' } });
  assert.equal(cancelledLine(vllm), '3 requests stopped by vLLM before they ended (not failures)');
  // a run of ours: the user's Cancel, as before
  assert.equal(cancelledLine(run(requests)), '3 requests cancelled (in flight when the run was cancelled; not failures)');
});

test('a typed URL where nothing answers: the words of the reachability check (host:port and URL problems: test/unit/endpointUrl.test.ts)', () => {
  const refused = 'cannot connect to http://127.0.0.1:18181 (connection refused, nothing listens on that port; ECONNREFUSED)';
  assert.equal(unreachableText({ reachable: false, code: 'ECONNREFUSED', message: refused }), `Not reachable: ${refused}`);
  assert.equal(unreachableText({ reachable: true, ms: 3 }), undefined);
});

test('every probe got 404 under the URL\'s path: the path is asked about first; at the root, the API pick as before', () => {
  const seen = '/api/tags → 404, /props → 404, /v1/models → 404';
  assert.equal(notFoundQuestion('http://127.0.0.1:8000/vl', { undetected: seen, notFound: true }),
    `Is the path /vl right? Nothing answers under it: every probe got 404 (GET ${seen}). Fix the URL, or pick its API to keep it`);
  assert.equal(notFoundQuestion('http://127.0.0.1:8000/', { undetected: seen, notFound: true }), undefined, 'no path to blame');
  assert.equal(notFoundQuestion('http://127.0.0.1:8000/vl', { undetected: '/vl/v1/models → 200' }), undefined, 'a probe got an answer');
});

test('detection against a real server answering 404 to everything: under a path, the message blames the path; notFound is set for the extension', async () => {
  const { createServer } = await import('node:http');
  const { listenOnLoopback, closerOf } = await import('../support/listen');
  const { detectApi } = await import('../../src/engine/transport/detect');
  const server = createServer((_req, res) => { res.writeHead(404, { 'content-type': 'text/plain' }).end('no route'); });
  const { url, sockets } = await listenOnLoopback(server);
  try {
    const under = await detectApi(`${url}/vl`).then(() => undefined, (e: Error & { notFound?: boolean }) => e);
    assert.ok(under, 'undetected');
    assert.equal(under.notFound, true);
    assert.match(under.message, /\/vl speaks \(GET \/api\/tags → 404, .*\); every probe got 404 under its path: check the URL's path, or pass --api /);
    const root = await detectApi(url).then(() => undefined, (e: Error & { notFound?: boolean }) => e);
    assert.equal(root?.notFound, true);
    assert.doesNotMatch(root!.message, /check the URL's path/);
  } finally {
    await closerOf(server, sockets)();
  }
});
