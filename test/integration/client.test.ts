import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer as createHttpServer } from 'node:http';
import type { ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createEndpointClient } from '../../src/engine/transport/client';
import { PreflightError } from '../../src/engine/transport/detect';
import type { RequestRecord, RequestSpec } from '../../src/engine/core/types';
import type { ApiKind } from '../../src/engine/core/apis';
import { closedPort } from '../support/listen';
import { withServer } from '../support/withServer';
import { assertNoUnhandledRejections } from '../support/unhandled';
import type { ScriptedRequestLog } from '../support/scriptedServer';

assertNoUnhandledRejections();

const APIS: readonly ApiKind[] = ['openai-chat', 'openai-completions', 'ollama', 'llamacpp'];

let seedCounter = 1000;
function spec(over: Partial<RequestSpec> = {}): RequestSpec {
  return {
    index: 0,
    warmup: false,
    prompt: { messages: [{ role: 'user', content: 'Say something.' }] },
    maxTokens: 8,
    seed: seedCounter++,
    ignoreEos: true,
    scheduledAt: performance.timeOrigin + performance.now(),
    ...over,
  };
}

const signal = () => new AbortController().signal;

/** Client arrival (ms after sentAt) minus the server's write time (ms after sentAt), per token chunk. */
function arrivalErrors(record: RequestRecord, log: ScriptedRequestLog): number[] {
  const writes = log.writes.filter((w) => w.tokens > 0);
  assert.equal(record.chunkTimesMs.length, writes.length, 'one client chunk per server token write');
  return writes.map((w, i) => record.chunkTimesMs[i]! - (w.at - record.sentAt));
}

function median(values: readonly number[]): number {
  const s = [...values].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
}

for (const api of APIS) {
  test(`${api}: end to end, timings agree with the server's write log`, async () => {
    await withServer({ ttftMs: 40, itlMs: 8 }, { api }, async (server, { client }) => {
      await client.warm();
      const sent = spec({ maxTokens: 12 });
      const r = await client.send(sent, signal());
      assert.equal(r.error, undefined, JSON.stringify(r.error));
      assert.equal(r.httpStatus, 200);
      assert.equal(r.outputTokens, 12);
      assert.equal(r.tokenSource, 'usage', 'every API reports usage here (OpenAI through stream_options.include_usage)');
      assert.equal(r.promptTokens, 8);
      assert.equal(r.chunkTimesMs.length, 12);
      const log = server.find(r.responseId!);
      assert.ok(log, `the response id ${r.responseId} finds the request in the server log`);
      assert.equal(log.seed, sent.seed, 'the per-request seed reached the server');
      if (api === 'openai-chat') assert.match(r.responseId!, /^chatcmpl-/);
      if (api === 'ollama' || api === 'llamacpp') assert.match(r.responseId!, /^req-/, 'x-request-id when the stream has no id');
      // TTFT: the first token write, as seen by the client.
      const errors = arrivalErrors(r, log);
      for (const e of errors) assert.ok(e > -0.05, `arrival before the write? ${e}`);
      assert.ok(median(errors) < 3, `median arrival error ${median(errors)} ms`);
      assert.ok(Math.max(...errors) < 25, `max arrival error ${Math.max(...errors)} ms`);
      assert.ok(Math.abs(errors[0]!) < 25, `TTFT error ${errors[0]} ms`);
      // ITL: every gap, against the server's gaps.
      const writes = log.writes.filter((w) => w.tokens > 0).map((w) => w.at);
      const itlErrors = r.chunkTimesMs.slice(1).map((t, i) => t - r.chunkTimesMs[i]! - (writes[i + 1]! - writes[i]!));
      assert.ok(median(itlErrors.map(Math.abs)) < 3, `median ITL error ${median(itlErrors.map(Math.abs))}`);
      assert.ok(r.ttftMs! >= 35, `ttft ${r.ttftMs}`);
      assert.equal(r.ttfoMs, r.ttftMs);
      assert.ok(r.tpotMs! > 6 && r.tpotMs! < 40, `tpot ${r.tpotMs}`);
      assert.ok(r.e2eMs! >= r.chunkTimesMs[11]!);
      assert.ok(r.headersMs! <= r.firstChunkMs!);
      if (api === 'ollama' || api === 'llamacpp') {
        assert.equal(r.serverTimings?.predictedTokens, 12);
        assert.ok(r.serverTimings!.promptMs! > 30, JSON.stringify(r.serverTimings));
      }
      if (api === 'ollama') assert.equal(r.serverTimings?.loadMs, 0.5);
      assert.ok(Math.abs(r.sentAt - log.receivedAt) < 25, 'sentAt is when the request was written');
    });
  });
}

test('E2E ends at the last token chunk, not at a late usage chunk or [DONE]: the last byte is kept apart, TPOT uses E2E', async () => {
  for (const api of APIS) {
    await withServer({ ttftMs: 20, itlMs: 10, tailDelayMs: 120 }, { api }, async (server, { client }) => {
      await client.warm();
      const r = await client.send(spec({ maxTokens: 6 }), signal());
      assert.equal(r.error, undefined, `${api}: ${JSON.stringify(r.error)}`);
      assert.equal(r.outputTokens, 6);
      const log = server.find(r.responseId!)!;
      const tokenWrites = log.writes.filter((w) => w.tokens > 0).map((w) => w.at - r.sentAt);
      const lastTokenWrite = tokenWrites[tokenWrites.length - 1]!;
      const endWrite = log.endedAt! - r.sentAt;
      assert.ok(endWrite - lastTokenWrite >= 115, `${api}: the server held the tail back ${endWrite - lastTokenWrite} ms`);
      // E2E is the last token chunk as the client stamped it: the server's last token write plus the usual arrival error.
      assert.equal(r.e2eMs, r.chunkTimesMs[r.chunkTimesMs.length - 1]);
      const e2eError = r.e2eMs! - lastTokenWrite;
      assert.ok(e2eError > -0.05 && e2eError < 25, `${api}: e2e ${r.e2eMs} vs last token write ${lastTokenWrite.toFixed(3)}`);
      // The last byte is the end of the response, after the tail.
      const lastByteError = r.lastByteMs! - endWrite;
      assert.ok(lastByteError > -0.05 && lastByteError < 25, `${api}: last byte ${r.lastByteMs} vs end ${endWrite.toFixed(3)}`);
      assert.ok(r.lastByteMs! - r.e2eMs! >= 100, `${api}: the tail is not in E2E`);
      // TPOT = (E2E − TTFT) / (n − 1), and so the server's own token gaps within the client error.
      assert.ok(Math.abs(r.tpotMs! - (r.e2eMs! - r.ttftMs!) / (r.outputTokens - 1)) < 0.001, `${api}: tpot ${r.tpotMs}`);
      const serverTpot = (lastTokenWrite - tokenWrites[0]!) / (tokenWrites.length - 1);
      assert.ok(Math.abs(r.tpotMs! - serverTpot) < 5, `${api}: tpot ${r.tpotMs} vs the server's ${serverTpot.toFixed(3)} (the tail would add ${(120 / 5).toFixed(0)} ms)`);
    });
  }
});

test('a failed request ends when it failed; its last byte is the last body piece that came', async () => {
  await withServer({ ttftMs: 5, itlMs: 10, fault: { kind: 'reset', afterTokens: 3 } }, async (_server, { client }) => {
    const r = await client.send(spec({ maxTokens: 10 }), signal());
    assert.equal(r.error?.kind, 'reset');
    const lastChunk = r.chunkTimesMs[r.chunkTimesMs.length - 1]!;
    assert.ok(r.lastByteMs! >= lastChunk && r.lastByteMs! <= r.e2eMs!, `last chunk ${lastChunk} ≤ last byte ${r.lastByteMs} ≤ failed at ${r.e2eMs}`);
    assert.equal(r.tpotMs, undefined);
  });
  const port = await closedPort();
  const down = createEndpointClient({ url: `http://127.0.0.1:${port}`, api: 'openai-chat' }, { connections: 1, timeoutMs: 2000, idleTimeoutMs: 1000 });
  try {
    const r = await down.send(spec(), signal());
    assert.equal(r.error?.kind, 'connect');
    assert.equal(r.lastByteMs, undefined, 'no byte came');
    assert.ok(r.e2eMs !== undefined, 'the moment it failed');
  } finally {
    await down.close();
  }
});

test('a role-only first chunk counts as the first chunk, not as the first token', async () => {
  await withServer({ ttftMs: 60, itlMs: 5, roleChunk: true }, async (_server, { client }) => {
    const r = await client.send(spec({ maxTokens: 3 }), signal());
    assert.equal(r.error, undefined);
    assert.ok(r.firstChunkMs! < 30, `first chunk ${r.firstChunkMs}`);
    assert.ok(r.ttftMs! >= 55, `ttft ${r.ttftMs}`);
    assert.equal(r.chunkTimesMs.length, 3);
  });
});

test('reasoning chunks: TTFT at the first reasoning text, TTFO at the first answer text', async () => {
  for (const api of ['openai-chat', 'ollama'] as const) {
    await withServer({ ttftMs: 20, itlMs: 15, reasoningTokens: 3, reasoningField: 'reasoning' }, { api }, async (_server, { client }) => {
      const r = await client.send(spec({ maxTokens: 6 }), signal());
      assert.equal(r.error, undefined);
      assert.equal(r.chunkTimesMs.length, 6, 'reasoning chunks are timed too');
      assert.equal(r.ttftMs, r.chunkTimesMs[0]);
      assert.equal(r.ttfoMs, r.chunkTimesMs[3]);
      assert.ok(r.ttfoMs! - r.ttftMs! > 35, `${api}: ttfo ${r.ttfoMs} vs ttft ${r.ttftMs}`);
    });
  }
});

test('token counts: chunks when the server gives no usage; several tokens per chunk are recorded', async () => {
  await withServer({ ttftMs: 5, itlMs: 2, usage: false }, async (_server, { client }) => {
    const r = await client.send(spec({ maxTokens: 7 }), signal());
    assert.equal(r.tokenSource, 'chunks');
    assert.equal(r.outputTokens, 7);
    assert.equal(r.promptTokens, undefined);
  });
  await withServer({ ttftMs: 5, itlMs: 2, tokensPerChunk: 3 }, { api: 'llamacpp' }, async (_server, { client }) => {
    const r = await client.send(spec({ maxTokens: 10 }), signal());
    assert.equal(r.error, undefined);
    assert.equal(r.outputTokens, 10);
    assert.equal(r.tokenSource, 'usage');
    assert.deepEqual(r.chunkTimesMs.length, 4); // 3 + 3 + 3 + 1
    assert.equal(r.multiTokenChunks, 3);
  });
});

test('multibyte text split across network chunks is decoded whole', async () => {
  await withServer({ ttftMs: 5, itlMs: 1, tokenText: (i) => (i % 2 ? '🙂' : 'é日') }, { api: 'ollama' }, async (_server, { client }) => {
    const r = await client.send(spec({ maxTokens: 20 }), signal());
    assert.equal(r.error, undefined);
    assert.equal(r.malformedEvents, undefined);
    assert.equal(r.chunkTimesMs.length, 20);
  });
});

test('a slow observer does not delay the arrival stamps of other streams (parsing is outside the data callback)', async () => {
  const streams = 8;
  await withServer({ ttftMs: 30, itlMs: 30 }, { client: { connections: streams } }, async (server, { client }) => {
    await client.warm();
    const busy = (ms: number) => {
      const end = performance.now() + ms;
      while (performance.now() < end);
    };
    const records = await Promise.all(
      Array.from({ length: streams }, (_, i) => client.send(spec({ index: i, maxTokens: 4 }), signal(), { onChunk: () => busy(3) })),
    );
    const errors: number[] = [];
    for (const r of records) {
      assert.equal(r.error, undefined);
      errors.push(...arrivalErrors(r, server.find(r.responseId!)!));
    }
    // Were every chunk stamped after the previous streams' observers ran, the median error would be
    // ~3 ms × streams / 2 = 12 ms.
    assert.ok(median(errors) < 5, `median arrival error ${median(errors).toFixed(3)} ms with a 3 ms observer per chunk`);
  });
});

test('a burst that comes in over several polls is stamped whole before any of it is parsed', async () => {
  // An engine's step: one chunk for each stream, back to back. Here the server (in this process) writes
  // them one per event-loop turn, so every chunk comes in a poll of its own: parsing the first ones
  // as they came would run the observer before the last ones were stamped.
  const streams = 8;
  const open: ServerResponse[] = [];
  let burst: (() => void) | undefined;
  const server = createHttpServer((req, res) => {
    req.resume();
    if (req.method === 'GET') {
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"object":"list","data":[]}');
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.flushHeaders();
    if (open.push(res) === streams) burst!();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const client = createEndpointClient({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, api: 'openai-chat' }, { connections: streams, timeoutMs: 10_000, idleTimeoutMs: 5000 });
  try {
    await client.warm();
    const calls: number[] = [];
    const done = new Promise<void>((resolve) => {
      burst = () => {
        const writeNext = (k: number) => {
          if (k === streams) {
            setTimeout(() => {
              for (const res of open) res.end('data: [DONE]\n\n');
              resolve();
            }, 20);
            return;
          }
          open[k]!.write(`data: {"id":"b${k}","choices":[{"index":0,"delta":{"content":"x"}}]}\n\n`);
          setImmediate(() => writeNext(k + 1));
        };
        // Once every stream's headers are in and parsed.
        setTimeout(() => writeNext(0), 20);
      };
    });
    const records = await Promise.all(Array.from({ length: streams }, (_, i) => client.send(spec({ index: i, maxTokens: 1 }), signal(), { onChunk: () => calls.push(performance.now()) })));
    await done;
    const stamps = records.map((r) => {
      assert.equal(r.error, undefined);
      assert.equal(r.chunkTimesMs.length, 1);
      return r.sentAt - performance.timeOrigin + r.chunkTimesMs[0]!;
    });
    assert.equal(new Set(stamps).size, streams, 'each chunk in a poll of its own');
    // Nothing is parsed before the last chunk is stamped, unless the client stopped waiting for the
    // rest of the burst: 4 ms after the first chunk (a stall of a busy machine).
    const first = Math.min(...stamps);
    const last = Math.max(...stamps);
    for (const c of calls) assert.ok(c >= last || c - first >= 4, `a chunk parsed ${(c - first).toFixed(3)} ms after the first was stamped, before the last (${(last - first).toFixed(3)} ms)`);
  } finally {
    await client.close();
    for (const res of open) res.destroy();
    await new Promise<void>((r) => server.close(() => r()));
  }
});

test('warm() opens one connection per slot; requests then reuse them (connect time never in TTFT)', async () => {
  await withServer({ ttftMs: 10, itlMs: 2 }, { client: { connections: 6 } }, async (server, { client }) => {
    const info = await client.warm();
    assert.equal(info.connections, 6);
    assert.equal(info.connectMs.length, 6);
    for (const ms of info.connectMs) assert.ok(ms >= 0 && ms < 2000, `connect ${ms}`);
    assert.equal(server.connections, 6, 'six sockets after warming');
    assert.equal(server.hits['GET /v1/models'], 6);
    const records = await Promise.all(Array.from({ length: 6 }, (_, i) => client.send(spec({ index: i, maxTokens: 3 }), signal())));
    for (const r of records) assert.equal(r.error, undefined);
    assert.equal(server.connections, 6, 'no new socket during the measured requests');
    await Promise.all(Array.from({ length: 6 }, (_, i) => client.send(spec({ index: i, maxTokens: 3 }), signal())));
    assert.equal(server.connections, 6, 'keep-alive across requests');
  });
});

test('warm() on a down endpoint throws a PreflightError', async () => {
  const port = await closedPort();
  const client = createEndpointClient({ url: `http://127.0.0.1:${port}`, api: 'openai-chat' }, { connections: 2, timeoutMs: 2000, idleTimeoutMs: 1000 });
  try {
    await assert.rejects(client.warm(), (err: unknown) => err instanceof PreflightError && /cannot connect to http:\/\/127\.0\.0\.1:\d+ \(connection refused, nothing listens on that port; ECONNREFUSED\)/.test((err as Error).message));
  } finally {
    await client.close();
  }
});

test('fault: connection refused is a connect error', async () => {
  const port = await closedPort();
  const client = createEndpointClient({ url: `http://127.0.0.1:${port}`, api: 'openai-chat' }, { connections: 1, timeoutMs: 2000, idleTimeoutMs: 1000 });
  try {
    const r = await client.send(spec(), signal());
    assert.equal(r.error?.kind, 'connect');
    assert.match(r.error!.message, /ECONNREFUSED/);
    assert.equal(r.outputTokens, 0);
  } finally {
    await client.close();
  }
});

test('fault: HTTP 500 and 429 are recorded with status and the start of the body; the connection is kept', async () => {
  const longBody = JSON.stringify({ error: { message: 'rate limited, slow down', code: 429 }, pad: 'x'.repeat(2000) });
  await withServer({ fault: (i) => (i.seq === 1 ? { kind: 'http', status: 500, body: 'engine exploded\nstack...' } : i.seq === 2 ? { kind: 'http', status: 429, body: longBody } : undefined) }, async (server, { client }) => {
    await client.warm();
    const a = await client.send(spec(), signal());
    assert.equal(a.error?.kind, 'http');
    assert.equal(a.error?.status, 500);
    assert.equal(a.httpStatus, 500);
    assert.equal(a.error?.body, 'engine exploded\nstack...');
    assert.match(a.error!.message, /HTTP 500 Internal Server Error: engine exploded/);
    const b = await client.send(spec(), signal());
    assert.equal(b.error?.status, 429);
    assert.equal(b.error?.body?.length, 500, 'the first 500 bytes');
    assert.match(b.error!.message, /429 Too Many Requests/);
    const c = await client.send(spec({ maxTokens: 2 }), signal());
    assert.equal(c.error, undefined);
    assert.equal(server.connections, 1, 'one keep-alive socket throughout');
  });
});

test('fault: a reset mid-stream is an error and the tokens so far are kept', async () => {
  for (const api of APIS) {
    await withServer({ ttftMs: 5, itlMs: 3, fault: { kind: 'reset', afterTokens: 3 } }, { api }, async (_server, { client }) => {
      const r = await client.send(spec({ maxTokens: 10 }), signal());
      assert.equal(r.error?.kind, 'reset', `${api}: ${JSON.stringify(r.error)}`);
      assert.equal(r.chunkTimesMs.length, 3);
      assert.equal(r.outputTokens, 3);
      assert.equal(r.tokenSource, 'chunks');
      assert.equal(r.tpotMs, undefined, 'no TPOT for a failed request');
      assert.ok(r.ttftMs !== undefined);
    });
  }
});

test('fault: malformed JSON and malformed SSE events are counted, the stream goes on', async () => {
  for (const api of APIS) {
    await withServer({ ttftMs: 5, itlMs: 2, fault: { kind: 'malformed-json', atToken: 2 } }, { api }, async (_server, { client }) => {
      const r = await client.send(spec({ maxTokens: 5 }), signal());
      assert.equal(r.error, undefined, `${api}: ${JSON.stringify(r.error)}`);
      assert.equal(r.malformedEvents, 1);
      assert.equal(r.chunkTimesMs.length, 5);
    });
  }
  await withServer({ ttftMs: 5, itlMs: 2, fault: { kind: 'malformed-sse', atToken: 1 } }, async (_server, { client }) => {
    const r = await client.send(spec({ maxTokens: 4 }), signal());
    assert.equal(r.error, undefined);
    assert.equal(r.malformedEvents, 1);
    assert.equal(r.outputTokens, 4);
  });
});

test('fault: an error object inside the stream is a server error; tokens so far kept', async () => {
  for (const api of APIS) {
    await withServer({ ttftMs: 5, itlMs: 2, fault: { kind: 'stream-error', afterTokens: 2, message: 'CUDA out of memory' } }, { api }, async (server, { client }) => {
      const r = await client.send(spec({ maxTokens: 6 }), signal());
      assert.equal(r.error?.kind, 'server', api);
      assert.match(r.error!.message, /CUDA out of memory/);
      assert.equal(r.chunkTimesMs.length, 2);
      const r2 = await client.send(spec({ maxTokens: 2 }), signal());
      assert.equal(r2.error?.kind, 'server', 'the same fault on every request');
      assert.equal(server.connections, 1, 'the connection survives an in-stream error');
    });
  }
});

test('fault: a stall longer than the idle timeout is an idle-timeout; a shorter one is a visible gap', async () => {
  await withServer({ ttftMs: 5, itlMs: 5, fault: { kind: 'stall', afterTokens: 2, ms: 600 } }, { client: { idleTimeoutMs: 200 } }, async (_server, { client }) => {
    const t0 = performance.now();
    const r = await client.send(spec({ maxTokens: 6 }), signal());
    const took = performance.now() - t0;
    assert.equal(r.error?.kind, 'idle-timeout');
    assert.equal(r.chunkTimesMs.length, 2);
    assert.ok(took >= 190 && took < 550, `gave up after ${took} ms`);
  });
  await withServer({ ttftMs: 5, itlMs: 5, fault: { kind: 'stall', afterTokens: 2, ms: 150 } }, { api: 'ollama', client: { idleTimeoutMs: 1000 } }, async (_server, { client }) => {
    const r = await client.send(spec({ maxTokens: 5 }), signal());
    assert.equal(r.error, undefined);
    const gap = r.chunkTimesMs[2]! - r.chunkTimesMs[1]!;
    assert.ok(gap >= 150, `gap ${gap}`);
  });
});

test('fault: the whole-request timeout', async () => {
  await withServer({ ttftMs: 5, itlMs: 50 }, { api: 'llamacpp', client: { timeoutMs: 300, idleTimeoutMs: 5000 } }, async (_server, { client }) => {
    const t0 = performance.now();
    const r = await client.send(spec({ maxTokens: 100 }), signal());
    const took = performance.now() - t0;
    assert.equal(r.error?.kind, 'timeout');
    assert.ok(r.chunkTimesMs.length >= 2 && r.chunkTimesMs.length <= 8, `${r.chunkTimesMs.length} chunks kept`);
    assert.ok(took >= 290 && took < 800, `timed out after ${took} ms`);
  });
});

test('abort: stops within a few ms, keeps what arrived; an already-aborted signal never sends', async () => {
  await withServer({ ttftMs: 5, itlMs: 20 }, async (server, { client }) => {
    const ac = new AbortController();
    let abortedAt = 0;
    const p = client.send(spec({ maxTokens: 100 }), ac.signal, {
      onChunk: (_i, _at) => {
        if (abortedAt === 0 && ++chunks === 3) {
          abortedAt = performance.now();
          ac.abort();
        }
      },
    });
    let chunks = 0;
    const r = await p;
    const stopMs = performance.now() - abortedAt;
    assert.equal(r.error?.kind, 'aborted');
    assert.equal(r.chunkTimesMs.length, 3);
    assert.ok(stopMs < 30, `resolved ${stopMs} ms after abort`);
    await new Promise((res) => setTimeout(res, 50));
    assert.equal(server.log[0]!.clientClosed, true, 'the server saw the client go away');
    const before = server.log.length;
    const pre = new AbortController();
    pre.abort();
    const r2 = await client.send(spec(), pre.signal);
    assert.equal(r2.error?.kind, 'aborted');
    assert.equal(server.log.length, before, 'nothing sent');
    // The client still works after an abort (a new connection is opened).
    const r3 = await client.send(spec({ maxTokens: 2 }), signal());
    assert.equal(r3.error, undefined);
  });
});

test('the API key travels as a bearer token and is never in the record', async () => {
  const key = 'sk-test-secret-123';
  await withServer({ apiKey: key, ttftMs: 2, itlMs: 1 }, { client: { apiKey: key } }, async (server, { client }) => {
    await client.warm();
    const r = await client.send(spec({ maxTokens: 2 }), signal());
    assert.equal(r.error, undefined);
    assert.equal(server.log[0]!.authorization, `Bearer ${key}`);
    assert.ok(!JSON.stringify(r).includes(key));
  });
  await withServer({ apiKey: key, ttftMs: 2, itlMs: 1 }, { client: { apiKey: 'sk-bad-key-987' } }, async (_server, { client }) => {
    const r = await client.send(spec({ maxTokens: 2 }), signal());
    assert.equal(r.error?.kind, 'http');
    assert.equal(r.error?.status, 401);
    assert.ok(!JSON.stringify(r).includes('sk-bad-key-987'));
  });
});

test('many concurrent streams: every record complete, in-order chunk times', async () => {
  await withServer({ ttftMs: 20, itlMs: 4 }, { client: { connections: 32 } }, async (server, { client }) => {
    await client.warm();
    const records = await Promise.all(Array.from({ length: 32 }, (_, i) => client.send(spec({ index: i, maxTokens: 16 }), signal())));
    for (const r of records) {
      assert.equal(r.error, undefined);
      assert.equal(r.chunkTimesMs.length, 16);
      for (let i = 1; i < r.chunkTimesMs.length; i++) assert.ok(r.chunkTimesMs[i]! >= r.chunkTimesMs[i - 1]!);
    }
    assert.equal(new Set(records.map((r) => r.responseId)).size, 32);
    assert.equal(server.connections, 32);
  });
});

test('sentAt is when the request was written, after waiting for a free connection', async () => {
  await withServer({ ttftMs: 5, itlMs: 20 }, { client: { connections: 1 } }, async (_server, { client }) => {
    await client.warm();
    const [a, b] = await Promise.all([client.send(spec({ index: 0, maxTokens: 5 }), signal()), client.send(spec({ index: 1, maxTokens: 5 }), signal())]);
    assert.equal(a.error, undefined);
    assert.equal(b.error, undefined);
    assert.ok(b.sentAt >= a.sentAt + a.e2eMs! - 1, `second sent at +${(b.sentAt - a.sentAt).toFixed(1)} ms, first ended at +${a.e2eMs} ms`);
    assert.ok(b.sentAt - b.scheduledAt > 50, 'the wait for the connection is not in TTFT');
    assert.ok(b.ttftMs! < 40, `ttft ${b.ttftMs}`);
  });
});

test('an observer that throws does not break the measurement', async () => {
  await withServer({ ttftMs: 5, itlMs: 2 }, async (_server, { client }) => {
    const r = await client.send(spec({ maxTokens: 4 }), signal(), {
      onFirstToken: () => {
        throw new Error('observer bug');
      },
      onChunk: () => {
        throw new Error('observer bug');
      },
    });
    assert.equal(r.error, undefined);
    assert.equal(r.chunkTimesMs.length, 4);
  });
});

test('one signal shared by many streams: no listener warning, and aborting it stops them all', async () => {
  const warnings: string[] = [];
  const onWarning = (w: Error) => warnings.push(`${w.name}: ${w.message}`);
  process.on('warning', onWarning);
  try {
    await withServer({ ttftMs: 5, itlMs: 10 }, { client: { connections: 24 } }, async (_server, { client }) => {
      await client.warm();
      const ac = new AbortController();
      const t = setTimeout(() => ac.abort(), 120);
      const t0 = performance.now();
      const records = await Promise.all(Array.from({ length: 24 }, (_, i) => client.send(spec({ index: i, maxTokens: 200 }), ac.signal)));
      clearTimeout(t);
      const took = performance.now() - t0;
      for (const r of records) {
        assert.equal(r.error?.kind, 'aborted');
        assert.ok(r.chunkTimesMs.length > 0, 'tokens so far kept');
      }
      assert.ok(took < 400, `all stopped after ${took} ms`);
      // The same signal, done with: later sends on a fresh one still work.
      const r = await client.send(spec({ maxTokens: 2 }), signal());
      assert.equal(r.error, undefined);
    });
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(warnings.filter((w) => /MaxListeners/.test(w)), []);
  } finally {
    process.off('warning', onWarning);
  }
});

test('a 2xx reply without a single token is a failed request (kind "empty"), as vLLM counts it', async () => {
  const { createServer: createHttpServer } = await import('node:http');
  const server = createHttpServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: {"id":"x","choices":[{"index":0,"delta":{"role":"assistant"}}]}\n\n');
      res.write('data: {"id":"x","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n');
      res.end('data: [DONE]\n\n');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const client = createEndpointClient({ url, api: 'openai-chat', model: 'm' }, { connections: 1, timeoutMs: 5000, idleTimeoutMs: 5000 });
  try {
    const r = await client.send(spec(), signal());
    assert.equal(r.error?.kind, 'empty', JSON.stringify(r));
    assert.equal(r.ttftMs, undefined);
    assert.equal(r.httpStatus, 200);
  } finally {
    await client.close();
    await new Promise<void>((r) => server.close(() => r()));
  }
});

test('the idle timeout does not run while a request waits for a free connection', async () => {
  // One connection, two requests: the second waits ~300 ms for the first, longer than the idle timeout.
  await withServer({ ttftMs: 5, itlMs: 30 }, { client: { connections: 1, idleTimeoutMs: 200 } }, async (server, { client }) => {
    await client.warm();
    const [a, b] = await Promise.all([client.send(spec({ maxTokens: 10 }), signal()), client.send(spec({ maxTokens: 10 }), signal())]);
    assert.equal(a.error, undefined, JSON.stringify(a.error));
    assert.equal(b.error, undefined, JSON.stringify(b.error));
    assert.ok(b.sentAt - b.scheduledAt > 200, `the second waited ${(b.sentAt - b.scheduledAt).toFixed(0)} ms for the connection`);
    assert.equal(server.log.filter((l) => l.path === '/v1/chat/completions').length, 2);
  });
});

test('maxConnections null: requests beyond the warmed connections open new ones instead of queueing', async () => {
  await withServer({ ttftMs: 5, itlMs: 30 }, { client: { connections: 1, maxConnections: null } }, async (_server, { client }) => {
    const info = await client.warm();
    assert.equal(info.connections, 1);
    const rs = await Promise.all([0, 1, 2].map((i) => client.send(spec({ index: i, maxTokens: 5 }), signal())));
    for (const r of rs) {
      assert.equal(r.error, undefined, JSON.stringify(r.error));
      assert.ok(r.sentAt - r.scheduledAt < 100, `sent ${(r.sentAt - r.scheduledAt).toFixed(0)} ms after it was scheduled: no wait for a connection`);
    }
  });
});
