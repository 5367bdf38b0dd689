import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createEndpointClient } from '../../src/engine/transport/client';
import { startScriptedServerProcess } from '../support/scriptedServer';

test('the scripted server runs as its own process, reports its write log over HTTP and exits on close', async () => {
  const server = await startScriptedServerProcess({ ttftMs: 15, itlMs: 5, faultsBySeed: { '7': { kind: 'http', status: 503, body: 'busy' } } });
  let alive = true;
  try {
    assert.notEqual(server.pid, process.pid);
    const client = createEndpointClient({ url: server.url, api: 'openai-chat' }, { connections: 2, timeoutMs: 5000, idleTimeoutMs: 2000 });
    try {
      const base = { index: 0, warmup: false, prompt: { messages: [{ role: 'user' as const, content: 'hi' }] }, maxTokens: 4, ignoreEos: true, scheduledAt: 0 };
      const ok = await client.send({ ...base, seed: 1 }, new AbortController().signal);
      const failed = await client.send({ ...base, seed: 7 }, new AbortController().signal);
      assert.equal(ok.error, undefined);
      assert.equal(failed.error?.status, 503, 'faults picked by seed');
      const log = await server.fetchLog();
      assert.equal(log.length, 2);
      const entry = log.find((e) => e.seed === 1)!;
      assert.equal(entry.streamId, ok.responseId);
      const writes = entry.writes.filter((w) => w.tokens > 0);
      assert.equal(writes.length, 4);
      // Across processes, the same epoch clock: arrivals are after the writes, and close to them.
      ok.chunkTimesMs.forEach((t, i) => {
        const err = ok.sentAt + t - writes[i]!.at;
        assert.ok(err > -0.5 && err < 50, `chunk ${i}: ${err} ms`);
      });
      await server.clearLog();
      assert.equal((await server.fetchLog()).length, 0);
    } finally {
      await client.close();
    }
    await server.close();
    alive = false;
    assert.throws(() => process.kill(server.pid, 0), /ESRCH/, 'the process is gone');
  } finally {
    if (alive) await server.close();
  }
});
