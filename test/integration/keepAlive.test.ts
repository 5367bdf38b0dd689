// Connection reuse against a server that closes keep-alive connections as llama.cpp's llama-server
// does (test/support/closingServer.ts): a request written on a connection the server is closing is
// sent again, recorded, and answered once; a request that got any byte of a response never is.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createEndpointClient } from '../../src/engine/transport/client';
import { MAX_CONNECTION_RETRIES } from '../../src/engine/transport/retry';
import { runWorkload } from '../../src/engine/run/runner';
import { parseRunFile, serializeRunFile } from '../../src/engine/files/runFile';
import { defaultWorkload } from '../../src/engine/core/workload';
import type { RequestRecord, RequestSpec } from '../../src/engine/core/types';
import type { ApiKind } from '../../src/engine/core/apis';
import { formatRunTable } from '../../src/present/runText';
import { startClosingServer } from '../support/closingServer';
import type { ClosingServer } from '../support/closingServer';
import { startScriptedServer } from '../support/scriptedServer';
import { assertNoUnhandledRejections } from '../support/unhandled';

assertNoUnhandledRejections();

/** Each record answered exactly once by the server, and every retry matched by a request the server threw away. */
function assertAnsweredOnce(server: ClosingServer, records: readonly RequestRecord[]): void {
  const posts = server.log.filter((e) => e.method === 'POST');
  for (const r of records) {
    const answered = posts.filter((e) => e.outcome === 'answered' && e.responseId === r.responseId);
    assert.equal(answered.length, 1, `request ${r.index} (${r.responseId}) answered once by the server`);
    const bySeed = posts.filter((e) => e.seed === answered[0]!.seed);
    assert.equal(bySeed.length, 1 + (r.retries?.length ?? 0), `request ${r.index}: the server received it once per attempt`);
    assert.deepEqual(bySeed.filter((e) => e.outcome === 'discarded').length, r.retries?.length ?? 0, `request ${r.index}: each retry follows an attempt the server threw away`);
  }
  const retries = records.reduce((n, r) => n + (r.retries?.length ?? 0), 0);
  assert.equal(posts.filter((e) => e.outcome === 'discarded').length, retries, 'every request the server threw away was sent again');
}

for (const api of ['openai-chat', 'llamacpp'] as const satisfies readonly ApiKind[]) {
  test(`${api}: no request is lost to a keep-alive connection the server closes after each stream; each retry is recorded`, async () => {
    const server = await startClosingServer({ itlMs: 2 });
    try {
      const run = await runWorkload(
        { url: server.url, api, model: 'closing-model' },
        defaultWorkload({ mode: { kind: 'closed', concurrency: 2 }, requests: 12, warmup: 1, maxTokens: 6, prefixCache: 'warm' }),
      );
      assert.equal(run.summary.failed, 0, JSON.stringify(run.requests.filter((r) => r.error).map((r) => r.error)));
      assert.equal(run.summary.completed, 12);
      const retried = run.requests.filter((r) => r.retries !== undefined);
      // The next request of a slot follows its last at once, inside the 20 ms before the server's FIN:
      // without the retry, each of these would have failed with "other side closed".
      assert.ok(retried.length >= 6, `requests sent again: ${retried.length} of ${run.requests.length}`);
      for (const r of retried) {
        assert.equal(r.error, undefined);
        assert.equal(r.outputTokens, 6);
        for (const t of r.retries!) {
          assert.equal(t.reason, 'connection-closed');
          assert.equal(t.error.kind, 'reset');
          assert.match(t.error.message, /before the response/);
          assert.equal(t.waitMs, 0);
          assert.ok(t.failedAfterMs >= 0 && t.failedAfterMs < 200, `failed after ${t.failedAfterMs} ms (the FIN, 20 ms after the last chunk)`);
          assert.ok(t.sentAt <= r.sentAt, 'the record keeps the last attempt');
        }
        assert.ok(r.retries!.length <= MAX_CONNECTION_RETRIES);
      }
      assertAnsweredOnce(server, run.requests);
      assert.equal(server.closedAfterStream, 13, 'the server closed the connection after every stream');
      assert.equal(run.summary.retries?.['connection-closed'], run.requests.filter((r) => !r.warmup).reduce((n, r) => n + (r.retries?.length ?? 0), 0));
      // kept in the run file and shown
      const back = parseRunFile(serializeRunFile(run));
      assert.deepEqual(back.requests.map((r) => r.retries?.length ?? 0), run.requests.map((r) => r.retries?.length ?? 0));
      assert.match(formatRunTable(run), /Sent again: \d+ requests? \(\d+ times?\) whose connection the server closed before any response byte/);
    } finally {
      await server.close();
    }
  });
}

function spec(seed: number): RequestSpec {
  return { index: 0, warmup: false, prompt: { messages: [{ role: 'user', content: 'hi' }] }, maxTokens: 4, seed, ignoreEos: true, scheduledAt: performance.timeOrigin + performance.now() };
}

test('a request the server closes on every time is sent at most twice more, then fails saying so', async () => {
  const server = await startClosingServer({ discard: () => true });
  const client = createEndpointClient({ url: server.url, api: 'openai-chat', model: 'closing-model' }, { connections: 1, timeoutMs: 5000, idleTimeoutMs: 2000 });
  try {
    const r = await client.send(spec(7), new AbortController().signal);
    assert.equal(r.error?.kind, 'reset');
    assert.match(r.error!.message, new RegExp(`sent ${MAX_CONNECTION_RETRIES + 1} times, each connection closed before a response`));
    assert.equal(r.retries?.length, MAX_CONNECTION_RETRIES);
    const received = server.log.filter((e) => e.seed === 7);
    assert.equal(received.length, MAX_CONNECTION_RETRIES + 1, 'the server saw each attempt');
    assert.ok(received.every((e) => e.outcome === 'discarded'));
    assert.equal(new Set(received.map((e) => e.conn)).size, MAX_CONNECTION_RETRIES + 1, 'each attempt on a connection of its own');
  } finally {
    await client.close();
    await server.close();
  }
});

test('never sent again after a byte of the response: a reset after the headers, or mid-stream, is the server\'s failure', async () => {
  for (const afterTokens of [0, 2]) {
    const server = await startScriptedServer({ ttftMs: 5, itlMs: 2, fault: { kind: 'reset', afterTokens } });
    const client = createEndpointClient({ url: server.url, api: 'openai-chat', model: 'scripted-model' }, { connections: 1, timeoutMs: 5000, idleTimeoutMs: 2000 });
    try {
      const r = await client.send(spec(11 + afterTokens), new AbortController().signal);
      assert.equal(r.error?.kind, 'reset', `after ${afterTokens} tokens`);
      assert.equal(r.httpStatus, 200);
      assert.equal(r.retries, undefined, `after ${afterTokens} tokens: not sent again`);
      assert.equal(server.log.filter((e) => e.path === '/v1/chat/completions').length, 1, 'the server received it once');
    } finally {
      await client.close();
      await server.close();
    }
  }
});

test('a cancelled run does not send a request again', async () => {
  const server = await startClosingServer({ discard: () => true, closeAfterMs: 0 });
  const client = createEndpointClient({ url: server.url, api: 'openai-chat', model: 'closing-model' }, { connections: 1, timeoutMs: 5000, idleTimeoutMs: 2000 });
  try {
    const ctrl = new AbortController();
    const sending = client.send(spec(21), ctrl.signal);
    ctrl.abort();
    const r = await sending;
    assert.equal(r.error?.kind, 'aborted');
    assert.equal(r.retries, undefined);
    assert.ok(server.log.filter((e) => e.seed === 21).length <= 1);
  } finally {
    await client.close();
    await server.close();
  }
});
