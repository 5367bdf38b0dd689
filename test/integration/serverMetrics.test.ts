// Scraping a server's /metrics around a run, against real servers on 127.0.0.1: a streaming server
// that keeps vLLM's histograms of what it really served, servers whose /metrics is HTML, 50 MB,
// slow, hanging or absent, and the bundled llama.cpp server (real llama.cpp, a tiny synthetic model).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { MetricsSampler, snapshotOf } from '../../src/engine/transport/serverMetrics';
import { defaultWorkload } from '../../src/engine/core/workload';
import { executeJob } from '../../src/jobs/execute';
import type { RunJob } from '../../src/jobs/job';
import type { EndpointSpec } from '../../src/engine/core/types';
import { startCostModelServer } from '../support/costModelServer';
import { readJsonBody } from '../support/requestBody';

const ROOT = join(__dirname, '..', '..');
const TTFT_BUCKETS = [0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0];
const E2E_BUCKETS = [0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0];

/** What the test server observed, as vLLM would count it. */
interface Observed {
  ttft: number[];
  e2e: number[];
  promptTokens: number;
  generationTokens: number;
  running: number;
}

function histogramText(name: string, bounds: readonly number[], observed: readonly number[]): string {
  const lines = [`# HELP ${name} A histogram.`, `# TYPE ${name} histogram`];
  for (const le of [...bounds, Number.POSITIVE_INFINITY]) lines.push(`${name}_bucket{engine="0",le="${le === Number.POSITIVE_INFINITY ? '+Inf' : le}",model_name="m"} ${observed.filter((o) => o <= le).length}`);
  lines.push(`${name}_count{engine="0",model_name="m"} ${observed.length}`, `${name}_sum{engine="0",model_name="m"} ${observed.reduce((a, b) => a + b, 0)}`);
  return lines.join('\n');
}

function vllmText(o: Observed): string {
  return [
    '# HELP vllm:num_requests_running Number of requests in model execution batches.',
    '# TYPE vllm:num_requests_running gauge',
    `vllm:num_requests_running{engine="0",model_name="m"} ${o.running}`,
    '# TYPE vllm:num_requests_waiting gauge',
    'vllm:num_requests_waiting{engine="0",model_name="m"} 0',
    '# TYPE vllm:kv_cache_usage_perc gauge',
    `vllm:kv_cache_usage_perc{engine="0",model_name="m"} ${o.running * 0.1}`,
    '# TYPE vllm:prompt_tokens_total counter',
    `vllm:prompt_tokens_total{engine="0",model_name="m"} ${o.promptTokens}`,
    '# TYPE vllm:generation_tokens_total counter',
    `vllm:generation_tokens_total{engine="0",model_name="m"} ${o.generationTokens}`,
    histogramText('vllm:time_to_first_token_seconds', TTFT_BUCKETS, o.ttft),
    histogramText('vllm:e2e_request_latency_seconds', E2E_BUCKETS, o.e2e),
    '',
  ].join('\n');
}

interface MiniServer {
  readonly url: string;
  readonly observed: Observed;
  /** Every GET /metrics: its path with query and headers. */
  readonly scrapes: { path: string; headers: IncomingMessage['headers'] }[];
  /** The most GET /metrics answered at once. */
  maxScrapesInFlight: number;
  close(): Promise<void>;
}

/**
 * A small OpenAI chat server that streams `tokens` tokens (first after ttftMs, then every itlMs) and
 * keeps vLLM's counts of what it served; GET /metrics is answered by `metrics` (default: vLLM's text).
 */
async function startMiniServer(opts: { ttftMs?: number; itlMs?: number; metrics?: (req: IncomingMessage, res: ServerResponse, o: Observed) => void } = {}): Promise<MiniServer> {
  const ttftMs = opts.ttftMs ?? 30;
  const itlMs = opts.itlMs ?? 10;
  const observed: Observed = { ttft: [], e2e: [], promptTokens: 0, generationTokens: 0, running: 0 };
  const sockets = new Set<Socket>();
  let inFlight = 0;
  const self: MiniServer = {
    url: '',
    observed,
    scrapes: [],
    maxScrapesInFlight: 0,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method === 'GET' && path === '/metrics') {
      self.scrapes.push({ path: req.url ?? '', headers: req.headers });
      self.maxScrapesInFlight = Math.max(self.maxScrapesInFlight, ++inFlight);
      res.on('close', () => inFlight--);
      if (opts.metrics) return opts.metrics(req, res, observed);
      const text = vllmText(observed);
      return void res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' }).end(text);
    }
    if (req.method === 'GET' && path === '/v1/models') {
      return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ object: 'list', data: [{ id: 'm', object: 'model' }] }));
    }
    if (req.method !== 'POST' || path !== '/v1/chat/completions') return void res.writeHead(404).end();
    void readJsonBody(req).then((json) => {
      if (!json) return void res.writeHead(400).end();
      const body = json as { messages: { content: string }[]; max_tokens?: number; stream_options?: { include_usage?: boolean } };
      const promptTokens = body.messages.map((m) => m.content).join(' ').split(/\s+/).filter(Boolean).length;
      const tokens = body.max_tokens ?? 8;
      const t0 = performance.now();
      observed.running++;
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      const chunk = (delta: object, finish: string | null = null) => res.write(`data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`);
      let sent = 0;
      const next = () => {
        if (res.destroyed) return void observed.running--;
        if (sent === 0) observed.ttft.push((performance.now() - t0) / 1000);
        chunk({ content: `t${sent} ` });
        if (++sent < tokens) return void setTimeout(next, itlMs);
        chunk({}, 'length');
        if (body.stream_options?.include_usage) res.write(`data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', choices: [], usage: { prompt_tokens: promptTokens, completion_tokens: tokens } })}\n\n`);
        res.end('data: [DONE]\n\n');
        observed.running--;
        observed.promptTokens += promptTokens;
        observed.generationTokens += tokens;
        observed.e2e.push((performance.now() - t0) / 1000);
      };
      setTimeout(next, ttftMs);
    });
  });
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return Object.assign(self, { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` });
}

const job = (url: string, requests: number, extra: Partial<RunJob['target']> = {}): RunJob => ({
  kind: 'run',
  failOnSlo: false,
  target: { kind: 'endpoint', url, api: 'openai-chat', model: 'm', ...extra } as RunJob['target'],
  workload: defaultWorkload({ mode: { kind: 'closed', concurrency: 2 }, requests, warmup: 1, maxTokens: 20, prompt: { kind: 'synthetic', tokens: 16, sharedPrefix: false } }),
});

/** The bound of the bucket holding the q-quantile, computed from the observations themselves. */
function expectedBound(observed: readonly number[], bounds: readonly number[], q: number): number | undefined {
  const sorted = [...observed].sort((a, b) => a - b);
  const v = sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)]!;
  const le = bounds.find((b) => v <= b);
  return le === undefined ? undefined : Math.round(le * 1e6) / 1000;
}

const max = (xs: readonly (number | null)[]) => Math.max(...xs.filter((x): x is number => x !== null));

test('a run against a vLLM-style /metrics: the deltas are exactly what the server observed, the gauges are sampled during the run, headers and key go with each scrape, the URL is written without secrets', async () => {
  const s = await startMiniServer({ ttftMs: 40, itlMs: 12 });
  try {
    // 9 requests of ~270 ms, 2 at a time: a run of ~1.5 s, more with the scrapes.
    const secret = 'q-secret-metrics-0042';
    const run = await executeJob(job(`${s.url}/v1?api_key=${secret}&team=perf`, 8, { headers: { 'X-Team': 'perf' } }), { apiKey: 'sk-metrics-key-77' });
    assert.equal(run.summary.completed, 8);
    const m = run.serverMetrics;
    assert.ok(m, 'serverMetrics present');
    assert.equal(m.family, 'vllm');
    assert.equal(m.url, `${s.url}/metrics?api_key=<redacted>&team=perf`);
    assert.ok(!JSON.stringify(m).includes(secret) && !JSON.stringify(m).includes('sk-metrics-key-77'));
    assert.deepEqual(m.notes, []);

    // The server saw warmup + measured requests, all between the two scrapes.
    const o = s.observed;
    assert.equal(o.ttft.length, 9);
    const ttft = m.histograms.ttft!;
    assert.equal(ttft.metric, 'vllm:time_to_first_token_seconds');
    assert.equal(ttft.count, 9);
    assert.equal(ttft.sumMs, Math.round(o.ttft.reduce((a, b) => a + b, 0) * 1e6) / 1000);
    assert.equal(ttft.meanMs, Math.round((o.ttft.reduce((a, b) => a + b, 0) / 9) * 1e6) / 1000);
    assert.equal(ttft.p50Ms, expectedBound(o.ttft, TTFT_BUCKETS, 0.5));
    assert.equal(ttft.p99Ms, expectedBound(o.ttft, TTFT_BUCKETS, 0.99));
    assert.equal(m.histograms.e2e?.count, 9);
    assert.equal(m.histograms.e2e?.p99Ms, expectedBound(o.e2e, E2E_BUCKETS, 0.99));
    assert.deepEqual(m.counters, { 'vllm:prompt_tokens_total': o.promptTokens, 'vllm:generation_tokens_total': 9 * 20 });

    // Gauges: the first scrape at 0, samples about every second, the last scrape after the run.
    const at = m.samples.atMs;
    assert.equal(at[0], 0);
    assert.ok(at.every((t, i) => i === 0 || t > at[i - 1]!), `increasing: ${at.join(', ')}`);
    assert.ok(m.samples.running.length === at.length && m.samples.waiting.length === at.length && m.samples.kvCacheUsage.length === at.length);
    assert.equal(m.samples.running.at(-1), 0, 'nothing running after the run');

    // Every scrape carried the endpoint's headers, key and query.
    assert.ok(s.scrapes.length >= 2);
    for (const sc of s.scrapes) {
      assert.equal(sc.path, `/metrics?api_key=${secret}&team=perf`);
      assert.equal(sc.headers.authorization, 'Bearer sk-metrics-key-77');
      assert.equal(sc.headers['x-team'], 'perf');
      assert.match(String(sc.headers.accept), /^text\/plain/);
    }
  } finally {
    await s.close();
  }
});

test('gauges are sampled about once a second during a run (at least twice in ~2.5 s), and a sample never overlaps the next', async () => {
  const s = await startMiniServer();
  try {
    const endpoint: EndpointSpec = { url: s.url, api: 'openai-chat', model: 'm' };
    const sampler = await MetricsSampler.start(endpoint);
    assert.equal(sampler.sampling, true);
    s.observed.running = 5;
    await new Promise((r) => setTimeout(r, 2500));
    s.observed.running = 0;
    s.observed.ttft.push(0.05, 0.07);
    const m = (await sampler.stop())!;
    const during = m.samples.atMs.slice(1, -1);
    assert.ok(during.length >= 2, `samples during the run at ${m.samples.atMs.join(', ')} ms`);
    for (let i = 1; i < m.samples.atMs.length - 1; i++) assert.equal(m.samples.running[i], 5);
    assert.ok(Math.abs(m.samples.kvCacheUsage[1]! - 0.5) < 1e-9);
    assert.equal(m.samples.running[0], 0);
    assert.equal(m.samples.running.at(-1), 0);
    assert.deepEqual({ count: m.histograms.ttft?.count, sumMs: m.histograms.ttft?.sumMs, p99Ms: m.histograms.ttft?.p99Ms }, { count: 2, sumMs: 120, p99Ms: 80 });
    assert.equal(await sampler.stop(), m, 'stop is idempotent');
  } finally {
    await s.close();
  }
  // A slow /metrics (300 ms) with a 20 ms interval: one scrape at a time, never two.
  const slow = await startMiniServer({ metrics: (_req, res, o) => setTimeout(() => res.writeHead(200, { 'content-type': 'text/plain' }).end(vllmText(o)), 300) });
  try {
    const sampler = await MetricsSampler.start({ url: slow.url, api: 'openai-chat' }, undefined, { intervalMs: 20 });
    await new Promise((r) => setTimeout(r, 1000));
    await sampler.stop();
    assert.ok(slow.scrapes.length >= 4, `${slow.scrapes.length} scrapes`);
    assert.equal(slow.maxScrapesInFlight, 1);
  } finally {
    await slow.close();
  }
});

test('memory stays bounded: past maxSamples every other sample goes, with a note', async () => {
  const s = await startMiniServer();
  try {
    const sampler = await MetricsSampler.start({ url: s.url, api: 'openai-chat' }, undefined, { intervalMs: 10, maxSamples: 8 });
    await new Promise((r) => setTimeout(r, 600));
    const m = (await sampler.stop())!;
    assert.ok(m.samples.atMs.length <= 9, `${m.samples.atMs.length} samples`);
    assert.ok(m.samples.atMs.every((t, i) => i === 0 || t > m.samples.atMs[i - 1]!));
    assert.match(m.notes.join('\n'), /gauge samples thinned to one every \d+ ms to stay within 8 points/);
  } finally {
    await s.close();
  }
});

test('a /metrics that answers HTML: one note, no further scrape, and the run completes', async () => {
  const s = await startMiniServer({ metrics: (_req, res) => res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<!doctype html><html><body><h1>Login</h1></body></html>') });
  try {
    const run = await executeJob(job(s.url, 4), {});
    assert.equal(run.summary.completed, 4);
    assert.equal(run.summary.failed, 0);
    assert.deepEqual(run.serverMetrics, {
      url: `${s.url}/metrics`,
      histograms: {},
      counters: {},
      samples: { atMs: [], running: [], waiting: [], kvCacheUsage: [] },
      notes: ['/metrics answered an HTML page, not Prometheus text: not used'],
    });
    assert.equal(s.scrapes.length, 1, 'no scrape after the unusable one');
  } finally {
    await s.close();
  }
  // HTML sent as text/plain is still HTML; JSON is not Prometheus text; llama-server started without
  // --metrics says so (tools/server: 501 with an error object), and the note passes it on.
  const llamaNoMetrics = JSON.stringify({ error: { code: 501, message: 'This server does not support metrics endpoint. Start it with `--metrics`', type: 'not_supported_error' } });
  for (const [status, type, body, note] of [
    [200, 'text/plain', '\n  <html><body>vllm:num_requests_running 1</body></html>', /HTML page/],
    [200, 'application/json', '{"steps":1}', /^\/metrics answered application\/json, not Prometheus text: not used$/],
    [501, 'application/json; charset=utf-8', llamaNoMetrics, /^\/metrics answered HTTP 501 \(This server does not support metrics endpoint\. Start it with `--metrics`\): not used$/],
  ] as const) {
    const t = await startMiniServer({ metrics: (_req, res) => res.writeHead(status, { 'content-type': type }).end(body) });
    try {
      const sampler = await MetricsSampler.start({ url: t.url, api: 'openai-chat' });
      assert.equal(sampler.sampling, false);
      const m = await sampler.stop();
      assert.equal(m?.notes.length, 1);
      assert.match(m!.notes[0]!, note);
    } finally {
      await t.close();
    }
  }
});

test('a 50 MB /metrics: read up to 8 MB only, a note, in bounded time, and the run completes', async () => {
  const line = Buffer.from(`vllm:num_requests_running{engine="0",model_name="${'x'.repeat(60)}"} 1\n`);
  const block = Buffer.concat(Array.from({ length: Math.ceil(65536 / line.length) }, () => line));
  const serve50MB = (withLength: boolean) => (_req: IncomingMessage, res: ServerResponse) => {
    const total = 50 * 1024 * 1024;
    res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4', ...(withLength ? { 'content-length': String(total) } : {}) });
    let sent = 0;
    const pump = () => {
      while (sent < total && !res.destroyed) {
        const n = Math.min(block.length, total - sent);
        sent += n;
        if (!res.write(n === block.length ? block : block.subarray(0, n))) return void res.once('drain', pump);
      }
      if (!res.destroyed) res.end();
    };
    res.on('error', () => undefined);
    pump();
  };
  for (const withLength of [false, true]) {
    const s = await startMiniServer({ metrics: serve50MB(withLength) });
    try {
      const t0 = performance.now();
      const run = await executeJob(job(s.url, 2), {});
      assert.equal(run.summary.completed, 2);
      assert.deepEqual(run.serverMetrics?.notes, ['/metrics is larger than 8 MB: not used']);
      assert.equal(s.scrapes.length, 1);
      assert.ok(performance.now() - t0 < 10_000, `bounded: ${Math.round(performance.now() - t0)} ms`);
    } finally {
      await s.close();
    }
  }
});

test('a /metrics that hangs during the run: samples fail, the last scrape gives up after its timeout, the run file says so', async () => {
  let answered = 0;
  const s = await startMiniServer({
    metrics: (_req, res, o) => {
      if (answered++ === 0) res.writeHead(200, { 'content-type': 'text/plain' }).end(vllmText(o));
      // else: never answered
    },
  });
  try {
    const sampler = await MetricsSampler.start({ url: s.url, api: 'openai-chat' }, undefined, { timeoutMs: 300, intervalMs: 100 });
    await new Promise((r) => setTimeout(r, 800));
    const t0 = performance.now();
    const m = (await sampler.stop())!;
    assert.ok(performance.now() - t0 < 1500, `stop took ${Math.round(performance.now() - t0)} ms`);
    assert.deepEqual(m.histograms, {});
    assert.match(m.notes.join('\n'), /the scrape after the run failed \(\/metrics did not answer within 300 ms\): no deltas/);
    assert.match(m.notes.join('\n'), /\d+ of \d+ gauge samples failed \(last: \/metrics did not answer within 300 ms\)/);
    assert.deepEqual(m.samples.atMs, [0]);
  } finally {
    await s.close();
  }
});

test('no /metrics (404, nothing listening): no serverMetrics in the run file', async () => {
  const s = await startCostModelServer({ baseMs: 2, kMs: 0.1 });
  try {
    const run = await executeJob(job(s.url, 2, { model: s.model }), {});
    assert.equal(run.summary.completed, 2);
    assert.ok(!('serverMetrics' in run), 'no field at all');
  } finally {
    await s.close();
  }
  // Nothing listening at all: start() is quick and stop() gives nothing.
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const port = (probe.address() as AddressInfo).port;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  const sampler = await MetricsSampler.start({ url: `http://127.0.0.1:${port}`, api: 'openai-chat' });
  assert.equal(sampler.sampling, false);
  assert.equal(await sampler.stop(), undefined);
});

// ---- The bundled local server -------------------------------------------------------------------

let dir: string | undefined;
after(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Builds dist/localServer.mjs alone (esbuild.mjs's own options) when a source is newer. */
async function ensureServerBuilt(): Promise<void> {
  const bundle = join(ROOT, 'dist', 'localServer.mjs');
  const srcs = ['src/localServer', 'src/engine'].flatMap((d) => readdirSync(join(ROOT, d), { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts')).map((f) => join(ROOT, d, f)));
  const newest = Math.max(...srcs.map((f) => statSync(f).mtimeMs));
  if (existsSync(bundle) && statSync(bundle).mtimeMs >= newest) return;
  const { targets, optionsFor } = await import('../../esbuild.mjs');
  const target = targets.find((t) => t.outfile === 'dist/localServer.mjs')!;
  await build({ ...optionsFor(target), absWorkingDir: ROOT, logLevel: 'silent' });
}

test("the bundled local server's /metrics is llama.cpp's Prometheus text, and llamacpp:prompt_tokens_total grows by a request's prompt tokens", async () => {
  await ensureServerBuilt();
  const { startLocalServer } = await import('../../src/localServer/launcher');
  const { ensureSyntheticModel, PRESETS } = await import('../../src/localServer/synthetic');
  dir = mkdtempSync(join(tmpdir(), 'llmp-metrics-'));
  const modelPath = await ensureSyntheticModel(PRESETS.tiny, dir);
  const h = await startLocalServer({ model: { kind: 'file', path: modelPath }, parallel: 2, ctxSize: 2048 });
  try {
    const scrape = async () => {
      const res = await fetch(`${h.url}/metrics`);
      assert.equal(res.status, 200);
      assert.match(res.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
      const text = await res.text();
      for (const name of ['prompt_tokens_total', 'prompt_seconds_total', 'tokens_predicted_total', 'tokens_predicted_seconds_total', 'n_decode_total', 'n_busy_slots_per_decode', 'requests_processing', 'requests_deferred', 'kv_cache_usage_ratio']) {
        assert.match(text, new RegExp(`^# TYPE llamacpp:${name} (counter|gauge)$`, 'm'), name);
      }
      const r = snapshotOf(text);
      assert.ok('snapshot' in r, 'note' in r ? r.note : '');
      assert.equal(r.snapshot.family, 'llamacpp');
      assert.deepEqual(r.snapshot.notes, []);
      return r.snapshot;
    };
    const before = await scrape();
    // /stats stays JSON.
    assert.equal(typeof ((await (await fetch(`${h.url}/stats`)).json()) as { steps: number }).steps, 'number');

    const sampler = await MetricsSampler.start({ url: h.url, api: 'openai-chat', model: h.model });
    assert.equal(sampler.sampling, true);
    const reply = (await (
      await fetch(`${h.url}/v1/chat/completions`, { method: 'POST', body: JSON.stringify({ messages: [{ role: 'user', content: 'Count the waves on the shore tonight.' }], max_tokens: 12, ignore_eos: true, cache_prompt: false }) })
    ).json()) as { usage: { prompt_tokens: number; completion_tokens: number }; timings: { prompt_n: number } };
    const after = await scrape();
    const m = (await sampler.stop())!;

    assert.equal(reply.timings.prompt_n, reply.usage.prompt_tokens, 'no cached prefix: every prompt token evaluated');
    assert.equal(after.counters.promptTokens!.value - before.counters.promptTokens!.value, reply.usage.prompt_tokens);
    assert.equal(after.counters.generationTokens!.value - before.counters.generationTokens!.value, 12);
    assert.ok(after.counters.decodeCalls!.value >= before.counters.decodeCalls!.value + 12);
    assert.equal(m.family, 'llamacpp');
    assert.equal(m.counters['llamacpp:prompt_tokens_total'], reply.usage.prompt_tokens);
    assert.equal(m.counters['llamacpp:tokens_predicted_total'], 12);
    assert.ok(m.counters['llamacpp:prompt_seconds_total']! > 0 && m.counters['llamacpp:tokens_predicted_seconds_total']! > 0);
    assert.ok(m.counters['llamacpp:n_busy_slots_per_decode']! >= 1, `busy slots per decode ${m.counters['llamacpp:n_busy_slots_per_decode']}`);
    assert.ok(max(m.samples.running) <= 2);
    assert.equal(m.samples.waiting.at(-1), 0);
    assert.deepEqual(m.notes, []);
  } finally {
    await h.stop();
  }
});
