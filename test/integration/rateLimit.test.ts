// Rate limits against a real HTTP server on 127.0.0.1 (test/support/scriptedServer.ts) that answers
// 429, 503 or 529 with Retry-After and logs the time it received each request: counted apart and
// shown with the header's value; with --respect-retry-after, waited (as its log's timestamps show)
// and sent again, each retry recorded; bounded by the cap, the timeout and a cancel.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runWorkload } from '../../src/engine/run/runner';
import { parseRunFile, serializeRunFile } from '../../src/engine/files/runFile';
import { defaultWorkload } from '../../src/engine/core/workload';
import type { RunFile, WorkloadSpec } from '../../src/engine/core/types';
import { formatRunTable } from '../../src/present/runText';
import { startScriptedServer } from '../support/scriptedServer';
import type { ScriptedFault, ScriptedRequestInfo, ScriptedServer } from '../support/scriptedServer';

/** A fault for the first `times` receipts of each seed (each request's first attempts). */
function firstAttempts(times: number, fault: (info: ScriptedRequestInfo) => ScriptedFault): (info: ScriptedRequestInfo) => ScriptedFault | undefined {
  const seen = new Map<number, number>();
  return (info) => {
    const n = (seen.get(info.seed ?? -1) ?? 0) + 1;
    seen.set(info.seed ?? -1, n);
    return n <= times ? fault(info) : undefined;
  };
}

const limited = (status: number, headers: Record<string, string>): ScriptedFault => ({
  kind: 'http', status, headers, body: JSON.stringify({ error: { message: status === 529 ? 'Overloaded' : 'Rate limit reached', type: status === 529 ? 'overloaded_error' : 'rate_limit_error' } }),
});

async function run(server: ScriptedServer, over: Partial<WorkloadSpec>, signal?: AbortSignal): Promise<RunFile> {
  return runWorkload(
    { url: server.url, api: 'openai-chat', model: 'scripted-model' },
    defaultWorkload({ mode: { kind: 'closed', concurrency: 2 }, requests: 4, warmup: 0, maxTokens: 3, prefixCache: 'warm', ...over }),
    signal ? { signal } : {},
  );
}

/** The server's receipts of each seed, in order (epoch ms). */
function receipts(server: ScriptedServer): Map<number, number[]> {
  const out = new Map<number, number[]>();
  for (const e of server.log) if (e.path === '/v1/chat/completions' && e.seed !== undefined) out.set(e.seed, [...(out.get(e.seed) ?? []), e.receivedAt]);
  return out;
}

test('off by default: a 429, 503 or 529 is a failed request, counted by status, with the Retry-After kept and shown; nothing is sent again', async () => {
  const statuses = [429, 503, 529];
  const server = await startScriptedServer({ ttftMs: 5, itlMs: 2, fault: (info) => (info.seq <= 3 ? limited(statuses[info.seq - 1]!, { 'retry-after': String(info.seq * 10) }) : undefined) });
  try {
    const r = await run(server, { mode: { kind: 'closed', concurrency: 1 } });
    assert.equal(r.summary.failed, 3);
    assert.deepEqual(r.summary.errorsByKind, { http: 3 });
    assert.deepEqual(r.summary.errorsByStatus, { '429': 1, '503': 1, '529': 1 });
    assert.equal(r.summary.retries, undefined);
    assert.deepEqual(r.requests.map((x) => x.error?.retryAfterS), [10, 20, 30, undefined]);
    assert.deepEqual(r.requests.map((x) => x.httpStatus), [429, 503, 529, 200]);
    assert.equal(server.log.length, 4, 'each request received once');
    const text = formatRunTable(r);
    assert.match(text, /Errors: 3 of 4 \(http 3: 429 ×1, 503 ×1, 529 ×1\)/);
    assert.match(text, /first: request 0: HTTP 429 Too Many Requests: Rate limit reached \(retry-after 10 s\)/);
    assert.match(text, /Rate limited: 3 requests failed \(429 Too Many Requests ×1, 503 Service Unavailable ×1, 529 Overloaded ×1; retry-after 10 s, 20 s, 30 s\) \(--respect-retry-after would wait and send them again\)/);
    const back = parseRunFile(serializeRunFile(r));
    assert.deepEqual(back.summary.errorsByStatus, r.summary.errorsByStatus);
    assert.equal(back.requests[2]!.error?.retryAfterS, 30);
  } finally {
    await server.close();
  }
});

test('--respect-retry-after: each request waits what its 429 said, as the server\'s receipt times show, and is sent again; every retry recorded', async () => {
  const server = await startScriptedServer({ ttftMs: 5, itlMs: 2, fault: firstAttempts(1, () => limited(429, { 'retry-after': '1' })) });
  try {
    const r = await run(server, { respectRetryAfter: true });
    assert.equal(r.workload.respectRetryAfter, true);
    assert.equal(r.summary.failed, 0, JSON.stringify(r.requests.map((x) => x.error)));
    assert.deepEqual(r.summary.retries, { 'retry-after': 4 });
    for (const x of r.requests) {
      assert.equal(x.retries?.length, 1, `request ${x.index}`);
      const t = x.retries![0]!;
      assert.equal(t.reason, 'retry-after');
      assert.equal(t.waitMs, 1000);
      assert.equal(t.error.status, 429);
      assert.equal(t.error.retryAfterS, 1);
      assert.ok(x.sentAt - t.sentAt >= 1000, 'the kept attempt was sent after the wait');
    }
    const byseed = receipts(server);
    assert.equal(byseed.size, 4);
    for (const [seed, times] of byseed) {
      assert.equal(times.length, 2, `seed ${seed}: received twice`);
      const gap = times[1]! - times[0]!;
      assert.ok(gap >= 1000 && gap < 1400, `seed ${seed}: the server received it again ${gap.toFixed(1)} ms later (retry-after 1 s)`);
    }
    assert.match(formatRunTable(r), /Rate limited: 4 retries after waiting 4,000 ms in all \(retry-after 1 s\) \(--respect-retry-after\)/);
    assert.deepEqual(parseRunFile(serializeRunFile(r)).requests.map((x) => x.retries?.[0]?.waitMs), [1000, 1000, 1000, 1000]);
  } finally {
    await server.close();
  }
});

test('--respect-retry-after reads an HTTP date against the response\'s Date, and OpenAI\'s retry-after-ms; 503 and 529 too', async () => {
  const base = Math.floor(Date.now() / 1000) * 1000;
  const faults: Record<number, ScriptedFault> = {
    1: limited(529, { date: new Date(base).toUTCString(), 'retry-after': new Date(base + 2000).toUTCString() }),
    2: limited(503, { 'retry-after': '30', 'retry-after-ms': '300' }),
  };
  const server = await startScriptedServer({ ttftMs: 5, itlMs: 2, fault: (info) => faults[info.seq] });
  try {
    const r = await run(server, { respectRetryAfter: true, requests: 2 });
    assert.equal(r.summary.failed, 0);
    const waits = new Map(r.requests.map((x) => [x.retries![0]!.error.status, x.retries![0]!.waitMs]));
    assert.deepEqual(Object.fromEntries(waits), { 529: 2000, 503: 300 });
    const gaps = [...receipts(server).values()].map((t) => t[1]! - t[0]!).sort((a, b) => a - b);
    assert.ok(gaps[0]! >= 300 && gaps[0]! < 700, `retry-after-ms 300: received again ${gaps[0]!.toFixed(1)} ms later`);
    assert.ok(gaps[1]! >= 2000 && gaps[1]! < 2400, `an HTTP date 2 s after the Date: received again ${gaps[1]!.toFixed(1)} ms later`);
  } finally {
    await server.close();
  }
});

test('bounded: a Retry-After over the cap or past the request\'s timeout is not waited (the failure says why), and a cancel ends a wait at once', async () => {
  const server = await startScriptedServer({ ttftMs: 5, itlMs: 2, fault: (info) => limited(429, { 'retry-after': info.seed! % 2 === 0 ? '120' : '3' }) });
  try {
    const r = await run(server, { respectRetryAfter: true, requests: 2, seed: 0, timeoutMs: 2000 });
    const bySeed = new Map(r.requests.map((x) => [x.index % 2, x.error!.message]));
    assert.match(bySeed.get(0)!, /\(retry-after 120 s is over the 60 s cap: not retried\)$/);
    assert.match(bySeed.get(1)!, /\(retry-after 3 s would pass the request's 2 s timeout: not retried\)$/);
    assert.ok(r.requests.every((x) => x.retries === undefined && x.error?.retryAfterS !== undefined));
    assert.equal(server.log.length, 2, 'received once each');
  } finally {
    await server.close();
  }
  const slow = await startScriptedServer({ ttftMs: 5, itlMs: 2, fault: () => limited(429, { 'retry-after': '30' }) });
  try {
    const ctrl = new AbortController();
    const started = performance.now();
    setTimeout(() => ctrl.abort(), 300);
    const r = await run(slow, { respectRetryAfter: true, requests: 2 }, ctrl.signal);
    assert.ok(performance.now() - started < 2000, `returned ${(performance.now() - started).toFixed(0)} ms after the start, not after 30 s`);
    assert.equal(r.cancelled, true);
    for (const x of r.requests) {
      assert.equal(x.error?.kind, 'aborted');
      assert.match(x.error!.message, /cancelled while waiting 30 s as retry-after asked/);
      assert.equal(x.retries?.[0]?.error.status, 429, 'the 429 it was waiting out is kept');
    }
    assert.equal(slow.log.length, 2, 'nothing sent again after the cancel');
  } finally {
    await slow.close();
  }
});
