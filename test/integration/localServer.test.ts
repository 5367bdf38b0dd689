// The bundled llama.cpp server for real: a tiny synthetic model, served by dist/localServer.mjs
// through the launcher, spoken to over HTTP with node's fetch and profiled with the engine.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import type { IncomingHttpHeaders } from 'node:http';
import { connect, createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startLocalServer, LocalServerError } from '../../src/localServer/launcher';
import { ensureSyntheticModel, PRESETS } from '../../src/localServer/synthetic';
import type { LocalServerHandle, LocalServerOptions } from '../../src/localServer/types';
import { serveCommand } from '../../src/cli/serve';
import { decodeFirstStrategy } from '../../src/localServer/inference';
import { processesMentioning } from '../support/processes';
import { ensureServerBundle } from '../support/serverBundle';

const ROOT = join(__dirname, '..', '..');
let dir: string;
let modelPath: string;
const started: LocalServerHandle[] = [];

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}


async function waitFor(cond: () => boolean | Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    if (await cond()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.fail(`timed out waiting for ${what}`);
}

async function start(options: Partial<LocalServerOptions> = {}): Promise<LocalServerHandle> {
  const h = await startLocalServer({ model: { kind: 'file', path: modelPath }, parallel: 4, ctxSize: 4 * 1024, ...options });
  started.push(h);
  return h;
}

async function stop(h: LocalServerHandle): Promise<void> {
  await h.stop();
  assert.equal(pidAlive(h.pid), false, `server ${h.pid} is gone after stop()`);
}

interface SseResult {
  events: Record<string, unknown>[];
  done: boolean;
  chunkTimes: number[];
}

async function streamSse(url: string, body: unknown, signal?: AbortSignal, onEvent?: (e: Record<string, unknown>) => void): Promise<SseResult> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), signal });
  assert.equal(res.status, 200, `status 200 from ${url}`);
  assert.match(res.headers.get('content-type') ?? '', /text\/event-stream/);
  const out: SseResult = { events: [], done: false, chunkTimes: [] };
  const decoder = new TextDecoder();
  let buf = '';
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    buf += decoder.decode(chunk, { stream: true });
    let i: number;
    while ((i = buf.indexOf('\n\n')) >= 0) {
      const ev = buf.slice(0, i);
      buf = buf.slice(i + 2);
      const data = ev.replace(/^data: /, '');
      if (data === '[DONE]') {
        out.done = true;
        continue;
      }
      const obj = JSON.parse(data) as Record<string, unknown>;
      out.events.push(obj);
      out.chunkTimes.push(performance.now());
      onEvent?.(obj);
    }
  }
  return out;
}

type ChatChunk = { id: string; choices: { delta: { content?: string; role?: string }; finish_reason: string | null }[]; usage?: { prompt_tokens: number; completion_tokens: number }; timings?: Record<string, number> };

const chat = (content: string, extra: Record<string, unknown> = {}) => ({ model: 'x', messages: [{ role: 'user', content }], ...extra });

before(async () => {
  ensureServerBundle();
  dir = mkdtempSync(join(tmpdir(), 'llmp-local-'));
  modelPath = await ensureSyntheticModel(PRESETS.tiny, dir);
});

after(async () => {
  for (const h of started) await h.stop().catch(() => undefined);
  // No process of ours is left: every server, supervisor and llama-server mentioned our temp model.
  await waitFor(() => processesMentioning(dir).length === 0, 5000, 'no process left');
  rmSync(dir, { recursive: true, force: true });
});

test('bundled server: OpenAI chat/completions, llama.cpp /completion, exact token counts, timings, ids, models, health', async () => {
  const h = await start();
  try {
    assert.match(h.url, /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.equal(h.backend, 'bundled');
    assert.equal((await fetch(`${h.url}/health`)).status, 200);
    const models = (await (await fetch(`${h.url}/v1/models`)).json()) as { data: { id: string }[] };
    assert.deepEqual(models.data.map((m) => m.id), [h.model]);

    // Streaming chat, usage chunk, ignore_eos: exactly max_tokens content chunks.
    const s = await streamSse(`${h.url}/v1/chat/completions`, chat('Tell me a story about the sea.', { stream: true, stream_options: { include_usage: true }, max_tokens: 24, ignore_eos: true }));
    const chunks = s.events as unknown as ChatChunk[];
    assert.ok(s.done, 'ends with [DONE]');
    const content = chunks.filter((c) => c.choices[0]?.delta.content);
    assert.equal(content.length, 24, 'one content chunk per token');
    assert.equal(chunks[0]!.choices[0]!.delta.role, 'assistant');
    assert.equal(new Set(chunks.map((c) => c.id)).size, 1, 'one id per response');
    assert.match(chunks[0]!.id, /^chatcmpl-/);
    const final = chunks.find((c) => c.choices[0]?.finish_reason)!;
    assert.equal(final.choices[0]!.finish_reason, 'length');
    assert.equal(final.timings!.predicted_n, 24);
    const usage = chunks.at(-1)!;
    assert.deepEqual(usage.choices, []);
    assert.equal(usage.usage!.completion_tokens, 24);
    assert.ok(usage.usage!.prompt_tokens > 8);
    assert.equal(usage.timings!.prompt_n + usage.timings!.cache_n!, usage.usage!.prompt_tokens);
    assert.ok(usage.timings!.prompt_ms > 0 && usage.timings!.predicted_ms > 0);
    const text = content.map((c) => c.choices[0]!.delta.content).join('');
    assert.doesNotMatch(text, /\uFFFD|<0x|<\|im_|<s>|<\/s>/, 'readable: no byte or control tokens');
    assert.match(text, /^[\x20-\x7e]+$/);

    // Non-streamed completions: exact count, a cmpl- id, usage and timings in the body.
    const r = (await (await fetch(`${h.url}/v1/completions`, { method: 'POST', body: JSON.stringify({ prompt: 'The model', max_tokens: 17, ignore_eos: true }) })).json()) as {
      id: string;
      choices: { text: string; finish_reason: string }[];
      usage: { completion_tokens: number; prompt_tokens: number };
      timings: { predicted_n: number };
    };
    assert.match(r.id, /^cmpl-/);
    assert.equal(r.usage.completion_tokens, 17);
    assert.equal(r.timings.predicted_n, 17);
    assert.equal(r.choices[0]!.finish_reason, 'length');
    assert.ok(r.choices[0]!.text.length > 0);

    // Streamed completions.
    const sc = await streamSse(`${h.url}/v1/completions`, { prompt: 'Hello', max_tokens: 9, ignore_eos: true, stream: true, stream_options: { include_usage: true } });
    const cc = sc.events as { choices: { text?: string }[]; usage?: { completion_tokens: number } }[];
    assert.equal(cc.filter((c) => c.choices[0]?.text).length, 9);
    assert.equal(cc.at(-1)!.usage!.completion_tokens, 9);

    // llama.cpp's own /completion.
    const lc = await streamSse(`${h.url}/completion`, { prompt: 'Hello', n_predict: 7, ignore_eos: true, stream: true });
    const last = lc.events.at(-1) as { stop: boolean; tokens_predicted: number; timings: { predicted_n: number } };
    assert.equal(last.stop, true);
    assert.equal(last.tokens_predicted, 7);
    assert.equal(lc.events.filter((e) => e.content).length, 7);

    // Per-request seed: same seed, same text. Without cache_prompt every run evaluates the same batches
    // (a cached prefix changes the float sums slightly, and random weights make near-ties common).
    const seeded = async (seed: number) => ((await (await fetch(`${h.url}/v1/chat/completions`, { method: 'POST', body: JSON.stringify(chat('Seeded', { max_tokens: 12, ignore_eos: true, seed, temperature: 1, cache_prompt: false })) })).json()) as { choices: { message: { content: string } }[] }).choices[0]!.message.content;
    const a = await seeded(42);
    assert.equal(await seeded(42), a);
    const others = [await seeded(43), await seeded(44)];
    assert.ok(others.some((o) => o !== a), 'another seed gives other text');

    // Bad requests are 400s with a message; the server keeps serving.
    const bad = await fetch(`${h.url}/v1/chat/completions`, { method: 'POST', body: '{not json' });
    assert.equal(bad.status, 400);
    assert.match(((await bad.json()) as { error: { message: string } }).error.message, /not valid JSON/);
    const long = await fetch(`${h.url}/v1/completions`, { method: 'POST', body: JSON.stringify({ prompt: 'word '.repeat(1500), max_tokens: 1 }) });
    assert.equal(long.status, 400);
    assert.match(((await long.json()) as { error: { message: string } }).error.message, /more than a slot holds: 1024 tokens \(this server's --ctx-size 4096 over --parallel 4\); start it with --ctx-size \d+/);
    assert.equal((await fetch(`${h.url}/v1/nothing`, { method: 'POST', body: '{}' })).status, 404);
    assert.equal((await fetch(`${h.url}/health`)).status, 200);
  } finally {
    await stop(h);
  }
});

test('continuous batching: full batches over the busy slots, a queue beyond them, TPOT rises with parallel sequences', async () => {
  const h = await start({ parallel: 4 });
  try {
    const run = async (n: number, maxTokens: number) => {
      const results = await Promise.all(
        Array.from({ length: n }, (_, i) =>
          streamSse(`${h.url}/v1/chat/completions`, chat(`Request number ${i}`, { stream: true, stream_options: { include_usage: true }, max_tokens: maxTokens, ignore_eos: true, seed: i })),
        ),
      );
      return results.map((r) => {
        const usage = (r.events.at(-1) as ChatChunk).usage!;
        assert.equal(usage.completion_tokens, maxTokens, 'exact token count');
        const contentTimes = r.chunkTimes.slice(0, maxTokens);
        return (contentTimes.at(-1)! - contentTimes[0]!) / (maxTokens - 1);
      });
    };
    await run(1, 8); // warm
    // Load from other processes only ever adds time, so the least of two rounds is compared.
    const tpot1 = Math.min((await run(1, 48))[0]!, (await run(1, 48))[0]!);
    await fetch(`${h.url}/stats?reset`);
    const means4: number[] = [];
    for (let round = 0; round < 2; round++) {
      const t4 = await run(4, 48);
      means4.push(t4.reduce((a, b) => a + b, 0) / t4.length);
    }
    const stats = (await (await fetch(`${h.url}/stats`)).json()) as { steps: number; fullSteps: number; sequencesPerStep: Record<string, number>; fullBatchesEnabled: boolean };
    assert.equal(stats.fullBatchesEnabled, true);
    // Every step's batch holds every slot that had work; many steps hold all four.
    assert.ok(stats.fullSteps / stats.steps >= 0.95, `full batches: ${JSON.stringify(stats)}`);
    assert.ok((stats.sequencesPerStep['4'] ?? 0) >= 40, `steps with 4 sequences: ${JSON.stringify(stats.sequencesPerStep)}`);
    const mean4 = Math.min(...means4);
    assert.ok(mean4 > tpot1, `TPOT at 4 sequences (${mean4.toFixed(2)} ms) is above TPOT alone (${tpot1.toFixed(2)} ms)`);

    // Six requests on four slots: two wait in the queue, all finish exactly.
    await fetch(`${h.url}/stats?reset`);
    const six = await run(6, 16);
    assert.equal(six.length, 6);
    const st = (await (await fetch(`${h.url}/stats`)).json()) as { steps: number; fullSteps: number };
    assert.ok(st.fullSteps / st.steps >= 0.9, `full batches with a queue: ${JSON.stringify(st)}`);
  } finally {
    await stop(h);
  }
});

test('--batch-size is the prefill chunk: a long prompt goes in chunks, between the other stream\'s decode steps', async () => {
  const h = await start({ parallel: 2, batchSize: 64 });
  try {
    const ac = new AbortController();
    let decoding = 0;
    const background = streamSse(`${h.url}/v1/completions`, { prompt: 'background', max_tokens: 1500, ignore_eos: true, stream: true }, ac.signal, () => {
      decoding++;
    }).catch((e: Error) => e);
    await waitFor(() => decoding > 2, 20_000, 'the background stream to decode');
    await fetch(`${h.url}/stats?reset`);
    const long = (await (await fetch(`${h.url}/v1/completions`, { method: 'POST', body: JSON.stringify({ prompt: 'word '.repeat(600), max_tokens: 2, ignore_eos: true }) })).json()) as { usage: { prompt_tokens: number } };
    const stats = (await (await fetch(`${h.url}/stats`)).json()) as { recent: { tokens: number; sequences: number; busySlots: number }[] };
    ac.abort();
    await background;
    const promptTokens = long.usage.prompt_tokens;
    assert.ok(promptTokens > 500);
    assert.ok(stats.recent.every((s) => s.tokens <= 64), `no step over 64 tokens: ${JSON.stringify(stats.recent.map((s) => s.tokens))}`);
    // The prefill steps: full 64-token batches holding the prompt chunk and the other stream's token.
    const prefill = stats.recent.filter((s) => s.tokens > 2);
    assert.ok(prefill.length >= Math.floor(promptTokens / 64), `${prefill.length} prefill chunks for ${promptTokens} tokens`);
    assert.ok(prefill.every((s) => s.sequences === 2), `every chunk shares its step with the decoding stream: ${JSON.stringify(stats.recent)}`);
  } finally {
    await stop(h);
  }
});

test('decodeFirstStrategy: one token per busy sequence first, prompts FIFO in the rest, emitted in sequence-id order', () => {
  const item = (n: number, seq: number) => ({ tokens: new Array<number>(n).fill(1), seq });
  const [p3, d0, p1, d2] = [item(600, 3), item(1, 0), item(100, 1), item(1, 2)];
  const out = decodeFirstStrategy({ items: [p3, d0, p1, d2], size: 64 }, (i) => i.seq);
  assert.deepEqual(out.map((r) => [r.item.seq, r.processAmount]), [[0, 1], [1, 1], [2, 1], [3, 61]], 'the first prompt in the queue takes the rest');
  const small = decodeFirstStrategy({ items: [item(10, 5), item(1, 4), item(20, 6)], size: 64 }, (i) => i.seq);
  assert.deepEqual(small.map((r) => [r.item.seq, r.processAmount]), [[4, 1], [5, 10], [6, 20]]);
  // More sequences than the budget: the rest wait, none is given 0 (node-llama-cpp would read 0 as 1).
  const tight = decodeFirstStrategy({ items: [item(1, 2), item(1, 1), item(1, 0)], size: 2 }, (i) => i.seq);
  assert.deepEqual(tight.map((r) => [r.item.seq, r.processAmount]), [[1, 1], [2, 1]]);
});

test('without the yield, node-llama-cpp 3.21.1 splits the batches (what the fix is for)', async () => {
  const h = await start({ parallel: 2, fullBatches: false });
  try {
    await Promise.all([0, 1].map((i) => streamSse(`${h.url}/v1/completions`, { prompt: `split ${i}`, max_tokens: 40, ignore_eos: true, stream: true })));
    const stats = (await (await fetch(`${h.url}/stats`)).json()) as { steps: number; fullSteps: number; fullBatchesEnabled: boolean };
    assert.equal(stats.fullBatchesEnabled, false);
    assert.ok(stats.fullSteps / stats.steps < 0.6, `split batches upstream: ${JSON.stringify(stats)}`);
  } finally {
    await stop(h);
  }
});

test('a client that disconnects frees its slot at once; a queued request then starts', async () => {
  const h = await start({ parallel: 2 });
  try {
    const slots = async () => (await (await fetch(`${h.url}/slots`)).json()) as { id: number; phase: string }[];
    const acs = [new AbortController(), new AbortController()];
    let firstChunks = 0;
    const long = acs.map((ac, i) =>
      streamSse(`${h.url}/v1/chat/completions`, chat(`long ${i}`, { stream: true, max_tokens: 1500, ignore_eos: true }), ac.signal, () => {
        firstChunks++;
      }).catch((e: Error) => e),
    );
    await waitFor(() => firstChunks >= 2, 20_000, 'both long streams to start');
    assert.deepEqual((await slots()).map((s) => s.phase), ['decode', 'decode']);
    // A third request waits: both slots are busy.
    let thirdFirstAt = 0;
    const third = streamSse(`${h.url}/v1/chat/completions`, chat('third', { stream: true, max_tokens: 5, ignore_eos: true }), undefined, () => {
      thirdFirstAt ||= performance.now();
    });
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(thirdFirstAt, 0, 'the third request is queued');
    const t0 = performance.now();
    acs[0]!.abort();
    const r3 = await third;
    assert.ok(thirdFirstAt - t0 < 5000, `the queued request started ${Math.round(thirdFirstAt - t0)} ms after the disconnect`);
    assert.equal(r3.events.filter((e) => (e as ChatChunk).choices[0]?.delta.content).length, 5);
    assert.equal((await slots()).filter((s) => s.phase === 'decode').length, 1, 'the other long stream still runs');
    acs[1]!.abort();
    await Promise.all(long);
    await waitFor(async () => (await slots()).every((s) => s.phase === 'idle'), 5000, 'all slots idle after both disconnects');
  } finally {
    await stop(h);
  }
});

test('profiled with the engine: exact token counts from usage, server timings recorded', async () => {
  const { runWorkload } = await import('../../src/engine/run/runner');
  const { defaultWorkload } = await import('../../src/engine/core/workload');
  const h = await start({ parallel: 2 });
  try {
    const run = await runWorkload(
      { url: h.url, api: 'openai-chat', model: h.model },
      defaultWorkload({ mode: { kind: 'closed', concurrency: 2 }, requests: 6, warmup: 1, maxTokens: 20, prompt: { kind: 'synthetic', tokens: 64, sharedPrefix: false } }),
    );
    assert.equal(run.summary.completed, 6, JSON.stringify(run.summary.errorsByKind));
    assert.equal(run.summary.failed, 0);
    const measured = run.requests.filter((r) => !r.warmup);
    for (const r of measured) {
      assert.equal(r.outputTokens, 20);
      assert.equal(r.tokenSource, 'usage');
      assert.equal(r.chunkTimesMs.length, 20);
      assert.ok(r.ttftMs! > 0 && r.tpotMs! > 0);
      assert.match(r.responseId ?? '', /^chatcmpl-/);
    }
    assert.equal(run.summary.totalOutputTokens, 120);
  } finally {
    await stop(h);
  }
});

test('bad model files: a clear error naming the file, nothing started', async () => {
  const missing = join(dir, 'missing.gguf');
  const notGguf = join(dir, 'notes.gguf');
  writeFileSync(notGguf, 'hello, I am text');
  const truncated = join(dir, 'truncated.gguf');
  writeFileSync(truncated, readFileSync(modelPath).subarray(0, 3_000_000));
  for (const [path, pattern] of [
    [missing, /model file not found/],
    [notGguf, /not a GGUF file/],
    [truncated, /truncated: the tensor data needs \d+ bytes but the file has 3000000/],
  ] as const) {
    await assert.rejects(startLocalServer({ model: { kind: 'file', path } }), (e: Error) => {
      assert.ok(e.message.includes(path), `names the file: ${e.message}`);
      assert.match(e.message, pattern);
      return true;
    });
    assert.deepEqual(processesMentioning(path), [], 'nothing started');
  }
});

test('a port in use is a clear error; a readiness timeout carries the log tail; nothing is left running', async () => {
  const blocker = createServer();
  await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', () => r()));
  const port = (blocker.address() as AddressInfo).port;
  try {
    await assert.rejects(start({ port }), (e: Error) => e instanceof LocalServerError && new RegExp(`port ${port} on 127.0.0.1 is already in use`).test(e.message));
  } finally {
    blocker.close();
  }
  // A stand-in llama-server that logs and never answers /health, and one that dies at start-up.
  const hang = join(dir, 'hang-llama-server');
  writeFileSync(hang, '#!/bin/sh\necho "fake llama-server: loading forever"\nexec sleep 30\n', { mode: 0o755 });
  await assert.rejects(start({ backend: 'llama-server', llamaServerPath: hang, readyTimeoutMs: 1500 }), (e: Error) => {
    assert.ok(e instanceof LocalServerError);
    assert.match(e.message, /the llama-server server was not ready within 2 s/);
    assert.match(e.message, /--- last server log lines ---\n(.*\n)*fake llama-server: loading forever/);
    return true;
  });
  const die = join(dir, 'die-llama-server');
  writeFileSync(die, '#!/bin/sh\necho "fake llama-server: cannot load the model" >&2\nexit 3\n', { mode: 0o755 });
  await assert.rejects(start({ backend: 'llama-server', llamaServerPath: die }), (e: Error) => {
    assert.ok(e instanceof LocalServerError);
    assert.equal(e.exitCode, 3);
    assert.match(e.message, /exited during start-up \(exit code 3\)[^]*cannot load the model/);
    return true;
  });
  await waitFor(() => processesMentioning(modelPath).length === 0 && processesMentioning(hang).length === 0, 5000, 'nothing left running');
});

test('a server that dies mid-run: exited reports the code, the log tail says so, the stream breaks', async () => {
  const lines: string[] = [];
  const h = await start({ parallel: 1, onLog: (l) => lines.push(l) });
  let got = 0;
  const stream = streamSse(`${h.url}/v1/chat/completions`, chat('crash', { stream: true, max_tokens: 1000, ignore_eos: true }), undefined, () => {
    got++;
  }).then(
    () => 'completed',
    (e: Error) => `failed: ${e.message}`,
  );
  await waitFor(() => got > 3, 20_000, 'tokens to flow');
  process.kill(h.pid, 'SIGKILL');
  assert.equal(await h.exited, null, 'killed by a signal: no exit code');
  assert.match(await stream, /^failed/);
  await waitFor(() => lines.some((l) => /exited unexpectedly/.test(l)), 2000, 'the launcher to report the exit');
  assert.ok(h.logTail!().some((l) => /listening on/.test(l)), 'the log tail is kept');
});

test('the server exits when its parent is SIGKILLed: no orphan', async () => {
  const script = join(dir, 'parent.mts');
  writeFileSync(
    script,
    `import { startLocalServer } from ${JSON.stringify(join(ROOT, 'src', 'localServer', 'launcher.ts'))};\n` +
      `const h = await startLocalServer({ model: { kind: 'file', path: ${JSON.stringify(modelPath)} }, parallel: 1 });\n` +
      `process.stdout.write(JSON.stringify({ pid: h.pid, url: h.url }) + '\\n');\n` +
      `setInterval(() => {}, 1000);\n`,
  );
  const parent = spawn(process.execPath, ['--import', 'tsx', script], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    const info = await new Promise<{ pid: number; url: string }>((resolve, reject) => {
      let buf = '';
      parent.stdout!.on('data', (c: Buffer) => {
        buf += c.toString();
        const i = buf.indexOf('\n');
        if (i >= 0) resolve(JSON.parse(buf.slice(0, i)) as { pid: number; url: string });
      });
      parent.once('exit', (code) => reject(new Error(`parent exited early (${code})`)));
    });
    assert.equal((await fetch(`${info.url}/health`)).status, 200);
    parent.kill('SIGKILL');
    await waitFor(() => !pidAlive(info.pid), 5000, `server ${info.pid} to exit after its parent was killed`);
  } finally {
    parent.kill('SIGKILL');
  }
});

test('llm-profiler serve: prints the URL, serves until SIGINT, stops cleanly; a bad flag exits 2 naming it', async () => {
  const origWrite = process.stderr.write.bind(process.stderr);
  let err = '';
  process.stderr.write = ((s: string | Uint8Array) => {
    err += String(s);
    return true;
  }) as typeof process.stderr.write;
  try {
    assert.equal(await serveCommand(['--parallel', 'many']), 2);
    assert.match(err, /--parallel must be a whole number/);
    assert.equal(await serveCommand(['--bogus']), 2);
    assert.match(err, /unknown flag --bogus/);
    assert.equal(await serveCommand(['--model', join(dir, 'nope.gguf'), '--quiet']), 1);
    assert.match(err, /nope\.gguf: model file not found/);
  } finally {
    process.stderr.write = origWrite;
  }

  const script = join(dir, 'serve.mts');
  writeFileSync(script, `import { serveCommand } from ${JSON.stringify(join(ROOT, 'src', 'cli', 'serve.ts'))};\nprocess.exitCode = await serveCommand(process.argv.slice(2));\n`);
  const child = spawn(process.execPath, ['--import', 'tsx', script, '--model', modelPath, '--parallel', '1', '--quiet'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    let buf = '';
    child.stdout!.on('data', (c: Buffer) => {
      buf += c.toString();
      const m = /^(http:\/\/127\.0\.0\.1:\d+)\n/m.exec(buf);
      if (m) resolve(m[1]!);
    });
    child.once('exit', (code) => reject(new Error(`serve exited early (${code}): ${stderr}`)));
  });
  assert.equal((await fetch(`${url}/health`)).status, 200);
  const exited = new Promise<number | string | null>((r) => child.once("exit", (c, sig) => r(c ?? sig)));
  child.kill('SIGINT');
  assert.equal(await exited, 0, stderr);
  assert.match(stderr, /Stopped\./);
  await assert.rejects(fetch(`${url}/health`), 'the server is gone');
});

// --- What may talk to the server: no web page (DNS rebinding, cross-origin requests); and an oversize
// body is answered, not reset. Raw node:http, so that Host, Origin and the body are exactly ours.

interface RawReply {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/**
 * One request on its own connection with exactly these headers (no Host unless given). A string body
 * is sent with its length; `{ bytes }` sends that many spaces in 1 MiB writes, minding backpressure,
 * with a content-length or chunked. A socket error rejects.
 */
function rawRequest(url: string, method: string, path: string, headers: Record<string, string | number>, body?: string | { bytes: number; chunked?: boolean }): Promise<RawReply> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ hostname: u.hostname, port: Number(u.port), method, path, headers, setHost: false, agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: text }));
      res.on('error', reject);
    });
    req.on('error', reject);
    if (body === undefined) return void req.end();
    if (typeof body === 'string') {
      req.setHeader('content-length', Buffer.byteLength(body));
      return void req.end(body);
    }
    if (!body.chunked) req.setHeader('content-length', body.bytes);
    const chunk = Buffer.alloc(1 << 20, 0x20);
    let left = body.bytes;
    const pump = () => {
      while (left > 0) {
        const n = Math.min(left, chunk.length);
        left -= n;
        if (!req.write(n === chunk.length ? chunk : chunk.subarray(0, n))) return void req.once('drain', pump);
      }
      req.end();
    };
    pump();
  });
}

const portOf = (h: LocalServerHandle) => new URL(h.url).port;
const errorOf = (r: RawReply) => {
  assert.match(String(r.headers['content-type']), /^application\/json/, `a JSON error: ${r.body}`);
  return (JSON.parse(r.body) as { error: { message: string; type: string; code: number } }).error;
};
const noCors = (r: RawReply) => assert.deepEqual(Object.keys(r.headers).filter((k) => k.startsWith('access-control-')), [], 'no CORS headers');
type Refused = { host: number; origin: number; tooLarge: number };
const statsOf = async (h: LocalServerHandle) => (await (await fetch(`${h.url}/stats`)).json()) as { steps: number; tokens: number; refused?: Refused };
const shortChat = JSON.stringify(chat('guarded', { max_tokens: 4, ignore_eos: true }));

test('DNS rebinding: a request naming another Host is refused (421, JSON) before the model; localhost and 127.0.0.1 are served', async () => {
  const lines: string[] = [];
  const h = await start({ parallel: 1, onLog: (l) => lines.push(l) });
  try {
    const port = portOf(h);
    await fetch(`${h.url}/stats?reset`);
    const refused: [string, Record<string, string>, string?][] = [
      ['another host, our port', { host: `evil.example:${port}` }],
      ['another host, no port', { host: 'evil.example' }],
      ['our address, another port', { host: '127.0.0.1:1' }],
      ['a name that starts like ours', { host: `localhost.evil.example:${port}` }],
      ['no Host at all (HTTP/1.1)', {}],
      ['an absolute-form target naming another host', { host: `127.0.0.1:${port}` }, `http://evil.example:${port}/v1/chat/completions`],
    ];
    for (const [what, headers, path] of refused) {
      const r = await rawRequest(h.url, 'POST', path ?? '/v1/chat/completions', { 'content-type': 'application/json', ...headers }, shortChat);
      assert.equal(r.status, 421, `${what}: 421 Misdirected Request, got ${r.status} ${r.body}`);
      const e = errorOf(r);
      assert.equal(e.code, 421);
      assert.equal(e.type, 'invalid_request_error');
      assert.match(e.message, /is not this server|no Host header/);
      assert.match(e.message, new RegExp(`this server answers only to 127\\.0\\.0\\.1:${port}, localhost:${port}$`));
      noCors(r);
    }
    // A GET is refused the same way: a rebound page reads nothing.
    const models = await rawRequest(h.url, 'GET', '/v1/models', { host: `evil.example:${port}` });
    assert.equal(models.status, 421);
    assert.ok(!models.body.includes(h.model), 'the model name is not given away');

    // It never reached the model: no engine step, no token; the server counted it and logged it.
    const st = await statsOf(h);
    assert.equal(st.steps, 0, 'no engine step for a refused request');
    assert.equal(st.tokens, 0);
    assert.equal(st.refused?.host, refused.length + 1);
    const logged = new RegExp(`refused POST "/v1/chat/completions" \\(421\\): Host "evil\\.example:${port}" is not this server`);
    await waitFor(() => lines.some((l) => logged.test(l)), 2000, 'the refusal in the server log');

    // Its own names, in any case, are served; so is an HTTP/1.0 request without Host (no browser sends one).
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `LocalHost:${port}`]) {
      const r = await rawRequest(h.url, 'POST', '/v1/chat/completions', { host, 'content-type': 'application/json' }, shortChat);
      assert.equal(r.status, 200, `Host ${host}: ${r.body}`);
      assert.equal((JSON.parse(r.body) as { usage: { completion_tokens: number } }).usage.completion_tokens, 4);
    }
    const http10 = await new Promise<string>((resolve, reject) => {
      let text = '';
      const s = connect(Number(port), '127.0.0.1', () => s.end('GET /health HTTP/1.0\r\n\r\n'));
      s.setEncoding('utf8');
      s.on('data', (c: string) => (text += c));
      s.on('end', () => resolve(text));
      s.on('error', reject);
    });
    assert.match(http10, /^HTTP\/1\.1 200 /);
    assert.equal((await statsOf(h)).refused?.host, refused.length + 1, 'nothing more refused');
  } finally {
    await stop(h);
  }
});

test('requests from web pages are refused (403, JSON, no CORS headers): a text/plain POST with Origin, a preflight, Sec-Fetch-Site', async () => {
  const h = await start({ parallel: 1 });
  try {
    const host = `127.0.0.1:${portOf(h)}`;
    await fetch(`${h.url}/stats?reset`);
    const cases: [string, string, Record<string, string>, string?][] = [
      // A "simple" cross-origin request: the browser sends it without a preflight.
      ['a text/plain POST from a page', 'POST', { host, origin: 'http://evil.example', 'content-type': 'text/plain' }, shortChat],
      ['a JSON POST from a page', 'POST', { host, origin: 'http://evil.example', 'content-type': 'application/json' }, shortChat],
      ['a POST from a sandboxed page or file://', 'POST', { host, origin: 'null', 'content-type': 'text/plain' }, shortChat],
      ['a CORS preflight', 'OPTIONS', { host, origin: 'http://evil.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' }],
      ['a cross-site GET without Origin (an image, a link)', 'GET', { host, 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'no-cors' }],
    ];
    for (const [what, method, headers, body] of cases) {
      const r = await rawRequest(h.url, method, '/v1/chat/completions', headers, body);
      assert.equal(r.status, 403, `${what}: 403, got ${r.status} ${r.body}`);
      const e = errorOf(r);
      assert.equal(e.code, 403);
      assert.equal(e.type, 'permission_error');
      assert.match(e.message, /^requests from web pages are refused/);
      noCors(r);
    }
    const st = await statsOf(h);
    assert.equal(st.steps, 0, 'no engine step for a refused request');
    assert.equal(st.refused?.origin, cases.length);
    // Our own clients send no Origin (undici adds only sec-fetch-mode); a page typed into the address bar says `none`.
    assert.equal((await fetch(`${h.url}/v1/chat/completions`, { method: 'POST', body: shortChat })).status, 200);
    assert.equal((await rawRequest(h.url, 'GET', '/health', { host, 'sec-fetch-site': 'none' })).status, 200);
  } finally {
    await stop(h);
  }
});

test('an oversize body is answered 413 with a JSON error and connection: close, not reset; the server keeps serving', async () => {
  const h = await start({ parallel: 1 });
  try {
    const host = `127.0.0.1:${portOf(h)}`;
    const limit = 16 * 1024 * 1024;
    const check = (what: string, r: RawReply) => {
      assert.equal(r.status, 413, `${what}: ${r.status} ${r.body}`);
      assert.equal(r.headers.connection, 'close', `${what}: connection: close`);
      const e = errorOf(r);
      assert.equal(e.code, 413);
      assert.match(e.message, new RegExp(`the request body is larger than ${limit} bytes`));
    };
    for (const chunked of [false, true]) {
      const what = chunked ? 'chunked' : 'with content-length';
      const r = await rawRequest(h.url, 'POST', '/v1/completions', { host, 'content-type': 'application/json' }, { bytes: limit + (1 << 20), chunked }).catch((e: Error) => e);
      assert.ok(!(r instanceof Error), `${what}: the client reads a 413, not ${String(r)}`);
      check(what, r);
    }
    // undici, as the profiler's own client.
    const viaFetch = await fetch(`${h.url}/v1/completions`, { method: 'POST', body: Buffer.alloc(limit + 1, 0x20) }).catch((e: Error) => e);
    assert.ok(!(viaFetch instanceof Error), `fetch reads a 413, not ${String(viaFetch)}`);
    assert.equal(viaFetch.status, 413);
    assert.match(((await viaFetch.json()) as { error: { message: string } }).error.message, /larger than/);
    // A declared length far past the limit is answered at once, before any of the body is sent.
    const huge = await new Promise<RawReply>((resolve, reject) => {
      const req = httpRequest({ hostname: '127.0.0.1', port: Number(portOf(h)), method: 'POST', path: '/v1/completions', agent: false, headers: { 'content-length': 1 << 30 } }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: text }));
      });
      req.on('error', reject);
      req.flushHeaders();
      setTimeout(() => reject(new Error('no answer within 5 s')), 5000).unref();
    });
    check('a declared 1 GiB', huge);
    assert.equal((await fetch(`${h.url}/health`)).status, 200, 'still serving');
    assert.equal((await statsOf(h)).refused?.tooLarge, 4);
  } finally {
    await stop(h);
  }
});
