// Tools and structured output through the real engine and the CLI: a tool call streamed by the
// OpenAI chat, Anthropic and Gemini fakes (test/support/providerFakes.ts, whose tool-call fixtures
// stream the arguments in pieces on a known clock and log when each piece was written) is timed
// against that write log; --tools and --response-format reach the server as each API takes them
// (the fakes log the bodies); and `ab --response-format F --response-format none` against a server
// whose schema costs a known TTFT reports that cost, measured against the server's own truth log.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { ServerResponse } from 'node:http';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runWorkload } from '../../src/engine/run/runner';
import { defaultWorkload } from '../../src/engine/core/workload';
import { abCommand } from '../../src/cli/abCommand';
import type { RequestRecord, RunFile, ToolDefinition } from '../../src/engine/core/types';
import { captureCli, runJobCommand } from '../support/cli';
import { closerOf, listenOnLoopback, Timers } from '../support/listen';
import { readBody } from '../support/requestBody';
import { OPENAI_MODEL, startProviderFake } from '../support/providerFakes';
import type { FakeLogEntry, Provider, ProviderFake } from '../support/providerFakes';

const KEY = 'sk-test-tools-5e8c1a7d3b9f2046';

const WEATHER: ToolDefinition = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'The weather in a city now',
    parameters: { type: 'object', properties: { city: { type: 'string' }, unit: { type: 'string', enum: ['celsius', 'fahrenheit'] } }, required: ['city', 'unit'], additionalProperties: false },
  },
};

async function withFake<T>(provider: Provider, pacing: { ttftMs: number; itlMs: number }, fn: (fake: ProviderFake) => Promise<T>): Promise<T> {
  const fake = await startProviderFake({ provider, key: KEY, replies: [{ kind: 'stream', fixture: 'tool-call' }], ...pacing });
  try {
    return await fn(fake);
  } finally {
    await fake.close();
  }
}

const byIndex = (run: RunFile): RequestRecord[] => [...run.requests].sort((a, b) => a.index - b.index);

/** The fake's pieces per call, in the order the calls began: when each was written, and what it carried. Gemini's whole calls are numbered by order. */
function callsWritten(post: FakeLogEntry): { name?: string; writes: { at: number; args: string }[] }[] {
  const calls = new Map<number, { name?: string; writes: { at: number; args: string }[] }>();
  let order = 0;
  for (const w of post.toolWrites) {
    for (const p of w.pieces) {
      const key = p.call >= 0 ? p.call : 1000 + order++;
      const call = calls.get(key) ?? { writes: [] };
      if (p.name !== undefined) call.name ??= p.name;
      call.writes.push({ at: w.at, args: p.args });
      calls.set(key, call);
    }
  }
  return [...calls.values()];
}

/**
 * Each call of the record against the fake's writes: its name, its first piece stamped after (and
 * soon after) the fake wrote it, its argument pieces and characters as the fake sent them.
 */
function assertCalls(r: RequestRecord, post: FakeLogEntry, label: string): void {
  assert.equal(r.error, undefined, `${label}: ${JSON.stringify(r.error)}`);
  const written = callsWritten(post);
  const timed = r.toolCalls ?? [];
  assert.equal(timed.length, written.length, `${label}: one timing per call the fake streamed`);
  const sent = r.sentAt - performance.timeOrigin;
  for (const [i, w] of written.entries()) {
    const t = timed[i]!;
    const argWrites = w.writes.filter((x) => x.args !== '');
    assert.equal(t.name, w.name, `${label} call ${i}`);
    assert.equal(t.argDeltas, argWrites.length, `${label} call ${i}: argument pieces`);
    assert.equal(t.argChars, argWrites.reduce((n, x) => n + x.args.length, 0), `${label} call ${i}: argument characters`);
    const lagFirst = sent + t.firstDeltaMs - w.writes[0]!.at;
    const lagLast = sent + t.lastDeltaMs - argWrites[argWrites.length - 1]!.at;
    assert.ok(lagFirst >= -0.01 && lagFirst < 150, `${label} call ${i}: first piece stamped ${lagFirst.toFixed(2)} ms after the fake wrote it`);
    assert.ok(lagLast >= -0.01 && lagLast < 150, `${label} call ${i}: last piece stamped ${lagLast.toFixed(2)} ms after the fake wrote it`);
    console.log(`# ${label} call ${i}: first piece ${t.firstDeltaMs.toFixed(1)} ms after the send (read ${lagFirst.toFixed(2)} ms after written), ${t.argDeltas} pieces, ${t.argChars} characters, ${t.argTokens} tokens`);
  }
  // every piece is an output chunk: the chunks are the fake's token events, text and tool alike
  assert.equal(r.chunkTimesMs.length, post.tokenWrites.length, `${label}: one chunk per token event`);
  assert.equal(r.ttftMs, r.chunkTimesMs[0]);
}

const workloadWith = (tools: readonly ToolDefinition[]) =>
  defaultWorkload({ requests: 2, warmup: 0, maxTokens: 64, prompt: { kind: 'synthetic', tokens: 16, sharedPrefix: false }, ignoreEos: false, tools, explicit: ['tools'], idleTimeoutMs: 5000, timeoutMs: 10_000 });

test('OpenAI chat: a tool call\'s argument pieces are timed against the fake\'s writes; a tool-only reply is not empty, and has no first content token', async () => {
  const pacing = { ttftMs: 60, itlMs: 15 };
  await withFake('openai-chat', pacing, async (fake) => {
    const run = await runWorkload({ url: fake.endpointUrl, api: 'openai-chat', model: fake.model }, workloadWith([WEATHER]), { apiKey: KEY });
    assert.equal(run.summary.completed, 2, JSON.stringify(run.summary.errorsByKind));
    for (const [i, r] of byIndex(run).entries()) {
      const post = fake.posts()[i]!;
      const body = JSON.parse(post.body) as Record<string, unknown>;
      assert.deepEqual(body.tools, [WEATHER], 'the tools as given');
      assertCalls(r, post, `openai-chat #${i}`);
      const call = r.toolCalls![0]!;
      assert.equal(call.argDeltas, 12);
      assert.equal(call.argChars, '{"city":"Paris, France","unit":"celsius"}'.length);
      assert.equal(call.argTokens, 17, 'usage (17) less the text (none): one call');
      assert.equal(call.firstDeltaMs, r.ttftMs, 'the name piece is the first output');
      assert.equal(r.ttfoMs, undefined, 'no content at all');
      assert.equal(r.outputTokens, 17);
    }
    const t = run.summary.toolCalls!;
    assert.equal(t.requests, 2);
    assert.equal(t.calls, 2);
    assert.equal(t.argTokensPerS!.count, 2);
  });
});

test('Anthropic: text, then a tool_use block whose input streams in input_json_delta pieces; TTFO is the text\'s, the call timed apart', async () => {
  await withFake('anthropic', { ttftMs: 60, itlMs: 15 }, async (fake) => {
    const run = await runWorkload({ url: fake.endpointUrl, api: 'anthropic', model: fake.model }, workloadWith([WEATHER]), { apiKey: KEY });
    assert.equal(run.summary.completed, 2, JSON.stringify(run.summary.errorsByKind));
    for (const [i, r] of byIndex(run).entries()) {
      const post = fake.posts()[i]!;
      const body = JSON.parse(post.body) as Record<string, unknown>;
      assert.deepEqual(body.tools, [{ name: 'get_weather', description: 'The weather in a city now', input_schema: WEATHER.function.parameters }]);
      assertCalls(r, post, `anthropic #${i}`);
      const call = r.toolCalls![0]!;
      assert.equal(call.argDeltas, 5, 'the empty first input_json_delta is no piece');
      assert.equal(call.argTokens, 58 - 3, 'output_tokens less the three text deltas');
      assert.equal(r.ttfoMs, r.ttftMs, 'the text came first');
      assert.equal(call.firstDeltaMs, r.chunkTimesMs[3], 'the tool_use block began after the three text deltas');
    }
  });
});

test('Gemini: two whole functionCall parts in two chunks, each a call of its own, timed at its chunk', async () => {
  await withFake('gemini', { ttftMs: 60, itlMs: 25 }, async (fake) => {
    const run = await runWorkload({ url: fake.endpointUrl, api: 'gemini', model: fake.model }, workloadWith([WEATHER]), { apiKey: KEY });
    assert.equal(run.summary.completed, 2, JSON.stringify(run.summary.errorsByKind));
    for (const [i, r] of byIndex(run).entries()) {
      const post = fake.posts()[i]!;
      const body = JSON.parse(post.body) as Record<string, unknown>;
      assert.deepEqual(body.tools, [{ functionDeclarations: [{ name: 'get_weather', description: 'The weather in a city now', parametersJsonSchema: WEATHER.function.parameters }] }]);
      assertCalls(r, post, `gemini #${i}`);
      assert.deepEqual(r.toolCalls!.map((c) => [c.firstDeltaMs, c.argDeltas, c.argTokens]), [[r.chunkTimesMs[1], 1, 1], [r.chunkTimesMs[2], 1, 1]], 'two calls: a token a piece');
      assert.ok(r.toolCalls![1]!.firstDeltaMs - r.toolCalls![0]!.firstDeltaMs >= 25 - 2, 'the second call a chunk later');
    }
    // one piece a call: no argument rate to give
    assert.equal(run.summary.toolCalls!.argTokensPerS, undefined);
    assert.equal(run.summary.toolCalls!.calls, 4);
  });
});

test('CLI: `run --tools F --response-format S` sends both on every request, times the calls and writes them to the run file', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tools-cli-'));
  try {
    writeFileSync(join(dir, 'tools.json'), JSON.stringify([WEATHER.function]));
    writeFileSync(join(dir, 'schema.json'), JSON.stringify({ name: 'weather', schema: { type: 'object', properties: { city: { type: 'string' } } }, strict: true }));
    await withFake('openai-chat', { ttftMs: 30, itlMs: 5 }, async (fake) => {
      const args = ['--url', fake.url, '--api', 'openai-chat', '--model', OPENAI_MODEL, '--api-key-env', 'TOOLS_TEST_KEY', '--no-ignore-eos', '--requests', '3', '--warmup', '0', '--max-tokens', '64', '--tools', 'tools.json', '--response-format', 'schema.json', '--out', 'run.json'];
      const r = await runJobCommand('run', args, { env: { ...process.env, TOOLS_TEST_KEY: KEY }, cwd: dir });
      assert.equal(r.code, 0, r.stderr);
      // the CLI sizes its prompts first, asking a server of one's own for its tokenizer (POST /tokenize): not these
      const posts = fake.posts().filter((p) => p.pathname === '/v1/chat/completions');
      assert.equal(posts.length, 3);
      for (const post of posts) {
        const body = JSON.parse(post.body) as Record<string, unknown>;
        assert.deepEqual(body.tools, [WEATHER], 'a bare definition is sent in OpenAI\'s form');
        assert.deepEqual(body.response_format, { type: 'json_schema', json_schema: { name: 'weather', schema: { type: 'object', properties: { city: { type: 'string' } } }, strict: true } });
      }
      assert.match(r.stdout, /Sent with: .*JSON schema "weather" output \(set by you\)|Sent with: .*JSON schema "weather" output/);
      assert.match(r.stdout, /tools get_weather/);
      assert.match(r.stdout, /Tool calls: 3 in 3 of 3 requests · first piece p50 [\d.]+ ms, p99 [\d.]+ ms · arguments p50 [\d.,]+ tok\/s/);
      const run = JSON.parse(readFileSync(join(dir, 'run.json'), 'utf8')) as RunFile;
      assert.deepEqual(run.workload.tools, [WEATHER]);
      assert.equal(run.requests.filter((x) => !x.warmup && x.toolCalls?.[0]?.name === 'get_weather').length, 3);
      assert.equal(run.summary.toolCalls?.calls, 3);
      assert.ok(!JSON.stringify(run).includes(KEY), 'the key is nowhere in the run file');
    });
    // `none` beats a prompt file's own tools: nothing sent
    await withFake('openai-chat', { ttftMs: 5, itlMs: 1 }, async (fake) => {
      writeFileSync(join(dir, 'ask.prompt.yml'), `name: ask\nmessages:\n  - role: user\n    content: The weather in Paris?\ntools:\n  - type: function\n    function:\n      name: get_weather\n      parameters: { type: object }\n`);
      const base = ['--url', fake.url, '--api', 'openai-chat', '--model', OPENAI_MODEL, '--api-key-env', 'TOOLS_TEST_KEY', '--no-ignore-eos', '--requests', '1', '--warmup', '0', '--prompt-file', 'ask.prompt.yml'];
      const own = await runJobCommand('run', base, { env: { ...process.env, TOOLS_TEST_KEY: KEY }, cwd: dir });
      assert.equal(own.code, 0, own.stderr);
      const none = await runJobCommand('run', [...base, '--tools', 'none'], { env: { ...process.env, TOOLS_TEST_KEY: KEY }, cwd: dir });
      assert.equal(none.code, 0, none.stderr);
      const [withFile, without] = fake.posts().map((p) => JSON.parse(p.body) as Record<string, unknown>);
      assert.deepEqual(withFile!.tools, [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object' } } }], 'the prompt file\'s own tools');
      assert.equal('tools' in without!, false, '--tools none: without, the file\'s too');
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

// ---- the schema A/B ----

/** What the schema server did with one request: whether it carried a schema, and when the request arrived and the first token left. */
interface SchemaTruth {
  readonly schema: boolean;
  readonly receivedAt: number;
  firstWriteAt?: number;
}

/**
 * An OpenAI chat server whose constrained decoding costs `costMs` before the first token: a request
 * with a json_schema response format waits `baseMs + costMs`, one without `baseMs`, then streams
 * `tokens` chunks `itlMs` apart. Its truth log says what each request waited.
 */
async function startSchemaServer(o: { baseMs: number; costMs: number; itlMs: number; tokens: number }) {
  const truth: SchemaTruth[] = [];
  const timers = new Timers();
  const chunk = (res: ServerResponse, obj: unknown): boolean => res.write(`data: ${JSON.stringify(obj)}\n\n`);
  const server = createServer((req, res) => {
    void readBody(req).then((raw) => {
      if (req.method === 'GET') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ object: 'list', data: [{ id: 'schema-model', object: 'model' }] }));
        return;
      }
      const body = JSON.parse(raw.toString('utf8')) as { response_format?: { type?: string } };
      const entry: SchemaTruth = { schema: body.response_format?.type === 'json_schema', receivedAt: performance.now() };
      truth.push(entry);
      res.socket?.setNoDelay(true);
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.flushHeaders();
      const start = entry.receivedAt + o.baseMs + (entry.schema ? o.costMs : 0);
      const write = (k: number): void => {
        if (res.destroyed) return;
        if (k === 0) entry.firstWriteAt = performance.now();
        chunk(res, { id: 'c', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content: k === 0 ? '{"a":' : ' "x"' }, finish_reason: null }] });
        if (k + 1 < o.tokens) timers.later(start + (k + 1) * o.itlMs - performance.now(), () => write(k + 1));
        else {
          chunk(res, { id: 'c', object: 'chat.completion.chunk', choices: [], usage: { prompt_tokens: 20, completion_tokens: o.tokens } });
          res.end('data: [DONE]\n\n');
        }
      };
      timers.later(start - performance.now(), () => write(0));
    });
  });
  const { url, sockets } = await listenOnLoopback(server);
  return { url, truth, close: closerOf(server, sockets, timers) };
}

test('ab --response-format F --response-format none: both in alternating blocks on one endpoint, the schema\'s cost said as slower TTFT, as the server\'s truth has it', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'schema-ab-'));
  const server = await startSchemaServer({ baseMs: 15, costMs: 60, itlMs: 4, tokens: 8 });
  try {
    writeFileSync(join(dir, 'answer.json'), JSON.stringify({ name: 'answer', schema: { type: 'object', properties: { a: { type: 'string' } } } }));
    const args = ['--url', server.url, '--api', 'openai-chat', '--model', 'schema-model', '--response-format', 'answer.json', '--response-format', 'none', '--requests', '20', '--blocks', '4', '--warmup', '1', '--concurrency', '2', '--max-tokens', '16', '--no-ignore-eos'];
    const r = await captureCli((io) => abCommand(args, io), { env: process.env, cwd: dir });
    assert.equal(r.code, 0, `${r.stdout}\n${r.stderr}`);
    // what the server saw: A's requests with the schema, B's without, in equal numbers (warmups included)
    const withSchema = server.truth.filter((t) => t.schema);
    const without = server.truth.filter((t) => !t.schema);
    assert.equal(withSchema.length, 21);
    assert.equal(without.length, 21);
    assert.match(r.stderr, /A sends every request with response format JSON schema "answer"; B with no response format, no tools/);
    assert.match(r.stdout, /A \([^)]*; response format JSON schema "answer"\)/);
    assert.match(r.stdout, /B \([^)]*; no response format, no tools\)/);
    assert.match(r.stdout, /Note: what every request is sent with differs: BASE the JSON schema "answer", no tools, NEW no response format, no tools: the difference is what that costs/);
    // the cost, against the server's own: what it waited before the first token, with minus without
    const wait = (ts: readonly SchemaTruth[]): number => median(ts.map((t) => t.firstWriteAt! - t.receivedAt));
    const truthMs = wait(withSchema) - wait(without);
    const m = /What the response format costs \(A sends it, B does not\): TTFT p50 \+([\d.]+) ms \(\+[\d.,]+%\), 95% CI \+([\d.]+) ms to \+([\d.]+) ms: slower with it; TPOT p50 [^:]+: (.+)$/m.exec(r.stdout);
    assert.ok(m, `the cost line:\n${r.stdout}`);
    const measured = Number(m[1]);
    console.log(`# schema A/B: TTFT cost ${measured} ms measured (95% CI ${m[2]} to ${m[3]} ms), ${truthMs.toFixed(1)} ms by the server's log (${server.truth.length} requests); TPOT: ${m[4]}`);
    assert.ok(Math.abs(measured - truthMs) <= 15, `measured ${measured} ms, the server waited ${truthMs.toFixed(1)} ms more with the schema`);
    assert.ok(Number(m[2]) > 0, 'the interval excludes no cost');
  } finally {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('ab refuses two sides that differ in nothing, also when --response-format is given twice the same', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'schema-ab-same-'));
  try {
    writeFileSync(join(dir, 'answer.json'), JSON.stringify({ type: 'object' }));
    const r = await captureCli((io) => abCommand(['--url', 'http://127.0.0.1:9', '--api', 'openai-chat', '--response-format', 'answer.json', '--response-format', './answer.json', '--requests', '20'], io), { env: process.env, cwd: dir });
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /the two sides are the same: .*--response-format or --tools twice/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}
