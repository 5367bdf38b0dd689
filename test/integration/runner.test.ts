// The workload runner against a real scripted streaming server on 127.0.0.1.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runWorkload } from '../../src/engine/run/runner';
import { PreflightError } from '../../src/engine/transport/detect';
import { defaultWorkload } from '../../src/engine/core/workload';
import { serializeRunFile } from '../../src/engine/files/runFile';
import type { Progress, Prompt, RequestRecord } from '../../src/engine/core/types';
import { withServer } from '../support/withServer';

/** The most requests the server had open at once, from its own record. */
function maxOverlap(intervals: { start: number; end: number }[]): number {
  const events = intervals.flatMap((i) => [[i.start, 1] as const, [i.end, -1] as const]).sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let cur = 0;
  let max = 0;
  for (const [, d] of events) max = Math.max(max, (cur += d));
  return max;
}

const prompt = (maxTokens: number, text = 'hello'): Prompt => ({ messages: [{ role: 'user', content: text }], maxTokens, source: 'test' });

test('closed loop: the server never sees more than N at once, and does see N', async () => {
  await withServer({ ttftMs: 10, itlMs: 3 }, async (s, { endpoint }) => {
    const run = await runWorkload(endpoint, defaultWorkload({ mode: { kind: 'closed', concurrency: 3 }, requests: 12, warmup: 0, maxTokens: 10 }));
    assert.equal(run.summary.completed, 12);
    assert.equal(run.connection?.connections, 3);
    const posts = s.log.filter((l) => l.path === '/v1/chat/completions');
    assert.equal(posts.length, 12);
    const overlap = maxOverlap(posts.map((l) => ({ start: l.receivedAt, end: l.endedAt ?? l.receivedAt })));
    assert.equal(overlap, 3, `max in flight seen by the server: ${overlap}`);
    assert.ok(s.connections <= 3 + 2, `connections opened: ${s.connections} (3 pooled, plus preflight)`);
  });
});

test('warmup requests go first, are marked, and are excluded from the statistics; seeds are seed + index', async () => {
  await withServer({ ttftMs: 5, itlMs: 2 }, async (s, { endpoint }) => {
    const seen: RequestRecord[] = [];
    const run = await runWorkload(endpoint, defaultWorkload({ requests: 3, warmup: 2, maxTokens: 4, seed: 100 }), { onRecord: (r) => seen.push(r) });
    assert.deepEqual(run.requests.map((r) => [r.index, r.warmup]), [[0, true], [1, true], [2, false], [3, false], [4, false]]);
    assert.equal(seen.length, 5, 'onRecord for every finished request, warmup included');
    assert.equal(run.summary.completed, 3);
    assert.equal(run.summary.ttftMs.count, 3);
    const posts = s.log.filter((l) => l.path === '/v1/chat/completions');
    assert.deepEqual(posts.map((l) => l.seed), [100, 101, 102, 103, 104]);
    // the warmup finished before the first measured request was sent
    const lastWarmEnd = Math.max(...run.requests.filter((r) => r.warmup).map((r) => r.sentAt + r.e2eMs!));
    const firstMeasured = Math.min(...run.requests.filter((r) => !r.warmup).map((r) => r.sentAt));
    assert.ok(firstMeasured >= lastWarmEnd - 1, 'measured phase starts after warmup');
    // synthetic prompts: each request's text differs from its first words (no prefix cache can hide prefill)
    const firstWords = posts.map((l) => String((l.body.messages as { content: string }[])[0]!.content).split(' ').slice(0, 2).join(' '));
    assert.equal(new Set(firstWords).size, 5);
  });
});

test('open loop: seeded gamma arrivals with mean 1/rate, burstiness sets the spread, sends follow the schedule', async () => {
  await withServer({ ttftMs: 5, itlMs: 1 }, async (_s, { endpoint }) => {
    const gapsOf = (rs: readonly RequestRecord[]) => {
      const m = rs.filter((r) => !r.warmup).sort((a, b) => a.index - b.index);
      return m.slice(1).map((r, i) => r.scheduledAt - m[i]!.scheduledAt);
    };
    const cv = (xs: number[]) => {
      const mean = xs.reduce((a, x) => a + x, 0) / xs.length;
      return { mean, cv: Math.sqrt(xs.reduce((a, x) => a + (x - mean) ** 2, 0) / xs.length) / mean };
    };
    const poisson = await runWorkload(endpoint, defaultWorkload({ mode: { kind: 'open', rate: 100, burstiness: 1 }, requests: 150, warmup: 0, maxTokens: 2, seed: 3 }));
    assert.equal(poisson.summary.completed, 150);
    const p = cv(gapsOf(poisson.requests));
    assert.ok(Math.abs(p.mean - 10) < 2, `mean gap ${p.mean} ms for 100 req/s`);
    assert.ok(p.cv > 0.75 && p.cv < 1.25, `Poisson gaps have CV ≈ 1, got ${p.cv}`);
    const lag = poisson.requests.map((r) => r.sentAt - r.scheduledAt).sort((a, b) => a - b);
    const medianLag = lag[Math.floor(lag.length / 2)]!;
    console.log(`# open loop send lag behind schedule: p50 ${medianLag.toFixed(2)} ms, max ${lag[lag.length - 1]!.toFixed(2)} ms`);
    // Generous: client and server share one process here, on a shared machine.
    assert.ok(medianLag < 250, `median send lag ${medianLag} ms`);
    assert.ok(lag[0]! > -0.01, `never sent before its time (${lag[0]} ms)`);

    const steady = await runWorkload(endpoint, defaultWorkload({ mode: { kind: 'open', rate: 100, burstiness: 16 }, requests: 100, warmup: 0, maxTokens: 2, seed: 3 }));
    const st = cv(gapsOf(steady.requests));
    assert.ok(st.cv < 0.4, `burstiness 16 gives CV ≈ 0.25, got ${st.cv}`);

    // reproducible: the same seed gives the same schedule
    const again = await runWorkload(endpoint, defaultWorkload({ mode: { kind: 'open', rate: 100, burstiness: 1 }, requests: 20, warmup: 0, maxTokens: 2, seed: 3 }));
    const g1 = gapsOf(poisson.requests).slice(0, 19);
    const g2 = gapsOf(again.requests);
    // (epoch ms near 1.8e12 carry about 0.0002 ms of float resolution)
    g1.forEach((g, i) => assert.ok(Math.abs(g - g2[i]!) < 0.01, `gap ${i}: ${g} vs ${g2[i]}`));
  });
});

test('open loop with maxConcurrency holds later arrivals back', async () => {
  await withServer({ ttftMs: 30, itlMs: 5 }, async (s, { endpoint }) => {
    const run = await runWorkload(endpoint, defaultWorkload({ mode: { kind: 'open', rate: 200, burstiness: 1, maxConcurrency: 2 }, requests: 8, warmup: 0, maxTokens: 4 }));
    assert.equal(run.summary.completed, 8);
    const posts = s.log.filter((l) => l.path === '/v1/chat/completions');
    assert.ok(maxOverlap(posts.map((l) => ({ start: l.receivedAt, end: l.endedAt! }))) <= 2);
  });
});

test('duration: requests are started until the time is up', async () => {
  await withServer({ ttftMs: 5, itlMs: 5 }, async (_s, { endpoint }) => {
    const t0 = performance.now();
    const run = await runWorkload(endpoint, defaultWorkload({ durationS: 0.6, warmup: 0, maxTokens: 4 }));
    const took = performance.now() - t0;
    assert.equal(run.workload.requests, undefined);
    assert.ok(run.summary.completed >= 3, `completed ${run.summary.completed}`);
    assert.ok(run.summary.durationS >= 0.55 && run.summary.durationS < 5, `measured phase ${run.summary.durationS} s`);
    assert.ok(took < 10_000);
  });
});

test('given prompts are cycled, with their own max tokens', async () => {
  await withServer({ ttftMs: 2, itlMs: 1 }, async (s, { endpoint }) => {
    const run = await runWorkload(endpoint, defaultWorkload({ requests: 5, warmup: 0, prefixCache: 'warm' }), { prompts: [prompt(3, 'alpha'), prompt(5, 'beta')] });
    assert.deepEqual(run.requests.map((r) => r.outputTokens), [3, 5, 3, 5, 3]);
    const texts = s.log.filter((l) => l.path === '/v1/chat/completions').map((l) => (l.body.messages as { content: string }[])[0]!.content);
    assert.deepEqual(texts, ['alpha', 'beta', 'alpha', 'beta', 'alpha']);
    // each record names the earlier request that sent the same prompt; warm: nothing kept them cold
    assert.deepEqual(run.requests.map((r) => [r.repeatOf, r.cacheBust]), [[undefined, undefined], [undefined, undefined], [0, undefined], [1, undefined], [0, undefined]]);
    // cold (the default): a unique nonce leads each text, and each record says so
    const cold = await runWorkload(endpoint, defaultWorkload({ requests: 3, warmup: 0 }), { prompts: [prompt(3, 'alpha')] });
    const coldTexts = s.log.filter((l) => l.path === '/v1/chat/completions').slice(5).map((l) => (l.body.messages as { content: string }[])[0]!.content);
    assert.equal(coldTexts.length, 3);
    assert.ok(coldTexts.every((t) => /^\[[0-9a-z]+-[0-9a-z]+\] alpha$/.test(t)), coldTexts.join(' | '));
    assert.equal(new Set(coldTexts).size, 3);
    assert.deepEqual(cold.requests.map((r) => [r.repeatOf, r.cacheBust]), [[undefined, 'nonce'], [0, 'nonce'], [0, 'nonce']]);
  });
});

test('500s, 429s and resets are counted by kind; a reset keeps the tokens that arrived', async () => {
  const faultsBySeed = {
    '1': { kind: 'http', status: 500, body: 'internal boom' },
    '2': { kind: 'reset', afterTokens: 3 },
    '4': { kind: 'http', status: 429, body: 'slow down' },
  } as const;
  await withServer({ ttftMs: 5, itlMs: 2, faultsBySeed }, async (_s, { endpoint }) => {
    const run = await runWorkload(endpoint, defaultWorkload({ requests: 6, warmup: 0, maxTokens: 8 }));
    assert.equal(run.summary.completed, 3);
    assert.equal(run.summary.failed, 3);
    assert.deepEqual(run.summary.errorsByKind, { http: 2, reset: 1 });
    const r1 = run.requests[1]!;
    assert.equal(r1.error?.status, 500);
    assert.match(r1.error?.body ?? '', /internal boom/);
    const r2 = run.requests[2]!;
    assert.equal(r2.error?.kind, 'reset');
    assert.equal(r2.chunkTimesMs.length, 3, 'the tokens before the reset are kept');
    assert.equal(run.requests[4]!.error?.status, 429);
  });
});

test('cancellation: stops within 100 ms (generous bound here), keeps every finished request, marks the rest aborted', async () => {
  await withServer({ ttftMs: 5, itlMs: 20 }, async (s, { endpoint }) => {
    const ac = new AbortController();
    const seen: RequestRecord[] = [];
    const running = runWorkload(endpoint, defaultWorkload({ mode: { kind: 'closed', concurrency: 2 }, requests: 50, warmup: 0 }), {
      signal: ac.signal,
      // worker B gets the long one (1000 tokens × 20 ms), worker A the short ones after it
      prompts: [prompt(2, 'short'), prompt(1000, 'long'), ...Array.from({ length: 30 }, () => prompt(2, 'short'))],
      onRecord: (r) => seen.push(r),
    });
    while (seen.filter((r) => !r.error).length < 3) await new Promise((r) => setTimeout(r, 10));
    const t0 = performance.now();
    ac.abort();
    const run = await running;
    const took = performance.now() - t0;
    console.log(`# cancellation returned in ${took.toFixed(1)} ms`);
    assert.ok(took < 400, `cancel took ${took} ms`);
    assert.equal(run.cancelled, true);
    const ok = run.requests.filter((r) => !r.error);
    assert.ok(ok.length >= 3, 'finished requests are kept');
    const aborted = run.requests.filter((r) => r.error?.kind === 'aborted');
    assert.ok(aborted.length >= 1, 'the in-flight request is recorded as aborted');
    const long = aborted.find((r) => r.index === 1);
    assert.ok(long && long.chunkTimesMs.length > 0, 'an aborted request keeps the chunks it had');
    // the user's Cancel is its own kind: not a failure
    assert.equal(run.summary.cancelled, aborted.length);
    assert.equal(run.summary.errorsByKind.aborted, undefined);
    assert.ok(run.requests.length < 50);
    // the server saw the client go away
    await new Promise((r) => setTimeout(r, 100));
    assert.ok(s.log.some((l) => l.clientClosed), 'the in-flight stream was closed on the server');
  });
});

test('a signal already aborted returns an empty cancelled run without sending', async () => {
  await withServer({}, async (s, { endpoint }) => {
    const run = await runWorkload(endpoint, defaultWorkload(), { signal: AbortSignal.abort() });
    assert.equal(run.cancelled, true);
    assert.equal(run.requests.length, 0);
    assert.equal(s.log.filter((l) => l.path === '/v1/chat/completions').length, 0);
  });
});

test('a down endpoint fails the preflight within about a second, with a PreflightError', async () => {
  const port = await new Promise<number>((resolve) => {
    const srv = createServer().listen(0, '127.0.0.1', () => {
      const p = (srv.address() as { port: number }).port;
      srv.close(() => resolve(p));
    });
  });
  const t0 = performance.now();
  await assert.rejects(runWorkload({ url: `http://127.0.0.1:${port}`, api: 'openai-chat' }, defaultWorkload()), (e: unknown) => {
    assert.ok(e instanceof PreflightError, String(e));
    assert.ok(!(e as Error).message.includes('\n'), 'one line');
    return true;
  });
  assert.ok(performance.now() - t0 < 2500);
});

test('progress: the first at once, then at most every 100 ms, the last one complete', async () => {
  await withServer({ ttftMs: 20, itlMs: 10 }, async (_s, { endpoint }) => {
    const calls: { at: number; p: Progress }[] = [];
    const t0 = performance.now();
    const run = await runWorkload(endpoint, defaultWorkload({ requests: 6, warmup: 1, maxTokens: 8, mode: { kind: 'closed', concurrency: 2 } }), {
      runId: 'progress-run',
      onProgress: (p) => calls.push({ at: performance.now(), p }),
    });
    assert.ok(calls.length >= 3);
    assert.ok(calls[0]!.at - t0 < 20, 'the first progress comes at once');
    assert.equal(calls[0]!.p.finished, 0);
    const gaps = calls.slice(1, -1).map((c, i) => c.at - calls[i]!.at);
    assert.ok(gaps.every((g) => g >= 90), `interval ≥ ~100 ms: ${gaps.map((g) => g.toFixed(0)).join(',')}`);
    const last = calls[calls.length - 1]!.p;
    assert.equal(last.runId, 'progress-run');
    assert.equal(run.id, 'progress-run');
    assert.deepEqual([last.succeeded, last.finished, last.total, last.failed, last.inFlight], [6, 6, 6, 0, 0]);
    assert.ok(last.ttftP50Ms! > 15 && last.ttftP50Ms! < 2000, `ttft p50 ${last.ttftP50Ms}`);
    assert.ok(last.outputTokensPerSecond! > 0);
  });
});

test('an API key is sent but never written, even when the server echoes it', async () => {
  const key = 'sk-test-9f8e7d6c5b4a';
  await withServer({ apiKey: key, ttftMs: 2, itlMs: 1, faultsBySeed: { '1': { kind: 'http', status: 400, body: `bad request for key ${key}` } } }, async (s, { endpoint }) => {
    const run = await runWorkload({ ...endpoint, headers: { 'X-Trace': 'yes', 'X-Api-Key': key } }, defaultWorkload({ requests: 3, warmup: 0, maxTokens: 3 }), { apiKey: key });
    assert.equal(run.summary.completed, 2);
    assert.ok(s.log.filter((l) => l.path === '/v1/chat/completions').every((l) => l.authorization === `Bearer ${key}`));
    const text = serializeRunFile(run);
    assert.ok(!text.includes(key), 'the key is nowhere in the run file');
    assert.ok(!JSON.stringify(run).includes(key), 'nor in the returned run');
    assert.match(run.requests[1]!.error!.body!, /<redacted>/);
    assert.equal(run.endpoint.headers?.['X-Trace'], 'yes');
  });
});

test('the runner reads a prompt file or a dataset named by the workload itself, and refuses a broken one before sending', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'runner-'));
  try {
    const yml = join(dir, 'q.prompt.yml');
    writeFileSync(yml, 'messages:\n  - role: user\n    content: "Q: {{q}}"\ntestData:\n  - q: one\n  - q: two\n');
    const jsonl = join(dir, 'd.jsonl');
    writeFileSync(jsonl, '{"prompt": "from the dataset", "max_tokens": 2}\n');
    await withServer({ ttftMs: 2, itlMs: 1 }, async (s, { endpoint }) => {
      await runWorkload(endpoint, defaultWorkload({ requests: 3, warmup: 0, maxTokens: 2, prompt: { kind: 'file', path: yml }, prefixCache: 'warm' }));
      await runWorkload(endpoint, defaultWorkload({ requests: 1, warmup: 0, prompt: { kind: 'dataset', path: jsonl }, prefixCache: 'warm' }));
      const texts = s.log.map((l) => (l.body.messages as { content: string }[] | undefined)?.[0]?.content ?? String(l.body.prompt));
      assert.deepEqual(texts, ['Q: one', 'Q: two', 'Q: one', 'from the dataset']);
      const bad = join(dir, 'bad.prompty');
      writeFileSync(bad, '---\nname: x\nmodel: [\n---\nuser:\nHi\n');
      await assert.rejects(runWorkload(endpoint, defaultWorkload({ prompt: { kind: 'file', path: bad } })), /bad\.prompty:\d+: the front matter is not valid YAML/);
      await assert.rejects(runWorkload(endpoint, defaultWorkload({ prompt: { kind: 'dataset', path: join(dir, 'missing.jsonl') } })), /cannot read dataset/);
      assert.equal(s.log.length, 4, 'nothing sent for the broken ones');
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('input tokens: the server usage when it reports it, else the prompt estimate, marked as such', async () => {
  const workload = defaultWorkload({ requests: 2, warmup: 0, maxTokens: 4, prompt: { kind: 'synthetic', tokens: 40, sharedPrefix: false } });
  await withServer({ ttftMs: 2, itlMs: 1 }, async (_s, { endpoint }) => {
    const run = await runWorkload(endpoint, workload);
    for (const r of run.requests) {
      assert.equal(r.promptTokens, 8, 'the scripted server reports 8 prompt tokens in its usage chunk');
      assert.equal(r.promptTokensEstimated, undefined);
    }
    assert.equal(run.summary.totalInputTokens, 16);
  });
  await withServer({ ttftMs: 2, itlMs: 1, usage: false }, async (_s, { endpoint }) => {
    const run = await runWorkload(endpoint, workload);
    for (const r of run.requests) {
      assert.equal(r.promptTokensEstimated, true);
      assert.ok(r.promptTokens! >= 35 && r.promptTokens! <= 45, `estimate ${r.promptTokens} for a 40-token synthetic prompt`);
    }
    assert.equal(run.summary.totalInputTokens, run.requests.reduce((a, r) => a + r.promptTokens!, 0));
    assert.ok(run.summary.totalTokensPerSecond > run.summary.outputTokensPerSecond);
  });
});
