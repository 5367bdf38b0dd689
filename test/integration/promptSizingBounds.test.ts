// Sizing a run's synthetic prompts is bounded (src/engine/run/sizing.ts, transport/tokenize.ts): a
// tokenizer that never answers, or answers slowly, holds the run's start for at most the sizing's
// 10 s deadline in all, and a line says that the sizing is going on; a body far too large is read up
// to a bound; Cancel stops the sizing (no tokenizer request reaches the server after the run
// returned); a hosted service's URL is never sent a tokenizer POST (a private name through the same
// proxy is); a sweep sizes once per endpoint and length, and does not wait on a dead tokenizer twice.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runWorkload } from '../../src/engine/run/runner';
import { runSweep } from '../../src/engine/run/sweep';
import { SIZING_DEADLINE_MS } from '../../src/engine/run/sizing';
import { defaultWorkload } from '../../src/engine/core/workload';
import type { WorkloadSpec } from '../../src/engine/core/types';
import { startTokenizingServer, type TokenizingServer } from '../support/tokenizingServer';
import { startForwardProxy } from '../support/forwardProxy';
import { buildRunJob } from '../../src/jobs/build';
import { OptionValues } from '../../src/jobs/values';
import { executeJob } from '../../src/jobs/execute';

const ASKED = 256;
/** The shared machine's slack on top of the deadline. */
const SLACK_MS = 2500;

function workload(over: Partial<WorkloadSpec> = {}): WorkloadSpec {
  return defaultWorkload({ requests: 3, warmup: 1, maxTokens: 1, prefixCache: 'cold', prompt: { kind: 'synthetic', tokens: ASKED, sharedPrefix: false, sizing: 'server' }, ...over });
}

const endpoint = (s: TokenizingServer) => ({ url: s.url, api: 'openai-chat' as const, model: 'tok-model' });

/** When the run's first chat request reached the server, from `t0` (ms); the server logs its counts in arrival order, so it is polled. */
function firstChatAt(s: TokenizingServer, t0: number): Promise<number> {
  return new Promise((resolve) => {
    const tick = setInterval(() => {
      if (s.promptTokens.length > 0) {
        clearInterval(tick);
        resolve(performance.now() - t0);
      }
    }, 5);
  });
}

// 4 s a count: the fit's counts (two lengths, then steps) would take 12 s and more
for (const [what, fault] of [['never answers', { hang: true }], ['answers each count after 4 s', { delayMs: 4000 }]] as const) {
  test(`a tokenizer that ${what}: the run starts within the sizing's deadline, and says it is sizing`, { timeout: 60_000 }, async () => {
    const server = await startTokenizingServer('vllm', { lettersPerToken: 2, fault });
    try {
      const said: string[] = [];
      const t0 = performance.now();
      const started = firstChatAt(server, t0);
      const run = await runWorkload(endpoint(server), workload(), { onStatus: (m) => said.push(m) });
      const startMs = await started;
      assert.ok(startMs <= SIZING_DEADLINE_MS + SLACK_MS, `the run's first request came ${Math.round(startMs)} ms after it started`);
      assert.deepEqual(said.slice(0, 1), [`sizing ${ASKED}-token prompts with the server's tokenizer (at most ${SIZING_DEADLINE_MS / 1000} s)…`]);
      const lastPost = Math.max(...server.tokenizerLog.map((l) => l.at)) - t0;
      assert.ok(lastPost <= startMs, `no tokenizer request once the run started (the last at ${Math.round(lastPost)} ms)`);
      assert.equal(run.summary.completed, 3);
      assert.ok(run.promptLength, 'sized all the same: from what the tokenizer answered in time, or the warmup\'s usage');
    } finally {
      await server.close();
    }
  });
}

test('a tokenizer whose answer is far too large (64 MiB): read up to its bound, and the sizing goes on from the usage', { timeout: 30_000 }, async () => {
  const server = await startTokenizingServer('vllm', { lettersPerToken: 2, fault: { hugeBytes: 64 * 1024 * 1024 } });
  try {
    const t0 = performance.now();
    const run = await runWorkload(endpoint(server), workload());
    assert.ok(performance.now() - t0 < 5000, `${Math.round(performance.now() - t0)} ms`);
    assert.equal(run.promptLength?.method, 'usage');
    const counts = run.requests.filter((r) => !r.warmup).map((r) => r.promptTokens!);
    assert.ok(counts.every((x) => Math.abs(x - ASKED) <= 0.02 * ASKED), counts.join(', '));
  } finally {
    await server.close();
  }
});

test('Cancel during sizing: the run returns at once, and no tokenizer request reaches the server after it', { timeout: 30_000 }, async () => {
  const server = await startTokenizingServer('vllm', { fault: { delayMs: 1500 } });
  try {
    const ac = new AbortController();
    let abortedAt = 0;
    setTimeout(() => {
      abortedAt = performance.now();
      ac.abort();
    }, 2000);
    const run = await runWorkload(endpoint(server), workload(), { signal: ac.signal });
    const returned = performance.now();
    assert.equal(run.cancelled, true);
    assert.ok(returned - abortedAt < 500, `returned ${Math.round(returned - abortedAt)} ms after Cancel`);
    assert.equal(server.promptTokens.length, 0, 'nothing sent to the model');
    const before = server.tokenizerLog.length;
    assert.ok(before >= 1, 'the sizing had begun');
    // more than the time a sizing would have gone on for (each answer 1.5 s, several to the fit)
    await new Promise((r) => setTimeout(r, 6000));
    assert.deepEqual(server.tokenizerLog.filter((l) => l.at > returned), [], 'no tokenizer request after the run returned');
    assert.equal(server.tokenizerLog.length, before);
  } finally {
    await server.close();
  }
});

test('a hosted service\'s URL gets no tokenizer request; a private name through the same proxy does', { timeout: 30_000 }, async () => {
  const server = await startTokenizingServer('vllm', { lettersPerToken: 2 });
  const port = new URL(server.url).port;
  const proxy = await startForwardProxy({ hosts: { 'api.example.test': '127.0.0.1', 'gpu-box': '127.0.0.1' } });
  try {
    const network = { proxy: proxy.url, proxySource: '--proxy' };
    const hosted = await runWorkload({ url: `http://api.example.test:${port}/v1`, api: 'openai-chat', model: 'tok-model' }, workload(), { network });
    assert.ok(proxy.log.some((l) => l.target.startsWith(`http://api.example.test:${port}/v1/chat/completions`)), 'the run went through the proxy by that name');
    assert.equal(server.hits['POST /tokenize'], undefined, 'no POST /tokenize');
    assert.equal(server.hits['POST /apply-template'], undefined, 'no POST /apply-template');
    assert.equal(hosted.promptLength?.method, 'usage', 'sized from the usage instead');
    assert.ok(hosted.requests.filter((r) => !r.warmup).every((r) => Math.abs(r.promptTokens! - ASKED) <= 0.02 * ASKED));

    const own = await runWorkload({ url: `http://gpu-box:${port}/v1`, api: 'openai-chat', model: 'tok-model' }, workload(), { network });
    assert.ok((server.hits['POST /tokenize'] ?? 0) > 0, 'a server of one\'s own is asked');
    assert.equal(own.promptLength?.method, 'tokenize');
  } finally {
    await proxy.close();
    await server.close();
  }
});

test('a sweep sizes once per endpoint and length: its later points ask the tokenizer nothing', { timeout: 30_000 }, async () => {
  const server = await startTokenizingServer('vllm', { lettersPerToken: 2 });
  try {
    const said: string[] = [];
    const run = await runSweep(endpoint(server), { dimension: 'concurrency', values: [1, 2, 3], workload: workload({ requests: 3 }), stopOnSaturation: false }, { onStatus: (m) => said.push(m) });
    assert.equal(run.sweep!.points.length, 3);
    const single = await startTokenizingServer('vllm', { lettersPerToken: 2 });
    try {
      await runWorkload(endpoint(single), workload());
      assert.equal(server.tokenizerLog.length, single.tokenizerLog.length, 'as many tokenizer requests as one run\'s');
    } finally {
      await single.close();
    }
    assert.equal(said.length, 1, said.join(' | '));
    const counts = run.requests.filter((r) => !r.warmup).map((r) => r.promptTokens!);
    assert.ok(counts.every((x) => Math.abs(x - ASKED) <= 0.02 * ASKED), counts.join(', '));
  } finally {
    await server.close();
  }
});

test('a job (the CLI\'s run, the extension\'s) passes the sizing\'s line to its status hook: the live line, the progress notification', { timeout: 30_000 }, async () => {
  const server = await startTokenizingServer('vllm', { lettersPerToken: 2 });
  try {
    const { job } = await buildRunJob(OptionValues.of({ url: server.url, api: 'openai-chat', model: 'tok-model', requests: 2, maxTokens: 1 }));
    const said: string[] = [];
    const run = await executeJob(job, { onStatus: (m) => said.push(m) });
    assert.equal(run.promptLength?.method, 'tokenize');
    assert.deepEqual(said, [`sizing ${ASKED}-token prompts with the server's tokenizer (at most ${SIZING_DEADLINE_MS / 1000} s)…`]);
  } finally {
    await server.close();
  }
});

test('a sweep whose tokenizer never answers waits on it once, at its first point', { timeout: 60_000 }, async () => {
  const server = await startTokenizingServer('vllm', { fault: { hang: true } });
  try {
    const t0 = performance.now();
    const run = await runSweep(endpoint(server), { dimension: 'concurrency', values: [1, 2], workload: workload({ requests: 2 }), stopOnSaturation: false });
    const ms = performance.now() - t0;
    assert.equal(run.sweep!.points.length, 2);
    assert.ok(ms <= SIZING_DEADLINE_MS + SLACK_MS, `${Math.round(ms)} ms for two points`);
  } finally {
    await server.close();
  }
});
