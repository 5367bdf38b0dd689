// --otlp-endpoint, --trace-out and --chunks-csv on a real run: node dist/cli.js against a scripted
// server, the metrics sent to an OTLP/HTTP receiver on 127.0.0.1 that decodes each request with the
// OpenTelemetry protocol's own .proto files (test/fixtures/otlp-proto, via protobufjs) as a collector
// would. No OpenTelemetry Collector binary can be installed on this project's machines. A server that
// echoes the key as its model name and response id (test/support/hostileServer.ts) checks that every
// export, the OTLP payload's raw bytes included, is made from the scrubbed run.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, existsSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { IncomingHttpHeaders, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import protobuf from 'protobufjs';
import { parseRunFile } from '../../src/engine/files/runFile';
import { TOOL_VERSION } from '../../src/engine/core/runFormat';
import { GENAI_METRICS } from '../../src/engine/files/otlp';
import type { RunFile } from '../../src/engine/core/types';
import { buildCli, runCliProcess } from '../support/cli';
import { closedPort } from '../support/listen';
import { answerGet, answerStream, startTruthServer } from '../support/hostileServer';
import { readBody } from '../support/requestBody';
import { withServer } from '../support/withServer';

const PROTO_ROOT = join(__dirname, '../fixtures/otlp-proto');
const protoRoot = new protobuf.Root();
protoRoot.resolvePath = (_origin, target) => join(PROTO_ROOT, target);
protoRoot.loadSync('opentelemetry/proto/collector/metrics/v1/metrics_service.proto');
protoRoot.resolveAll();
const ExportRequest = protoRoot.lookupType('opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest');
const ExportResponse = protoRoot.lookupType('opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceResponse');

interface AnyValue { stringValue?: string; intValue?: number; doubleValue?: number; boolValue?: boolean }
interface KeyValue { key: string; value: AnyValue }
interface HistogramPoint {
  attributes?: KeyValue[];
  startTimeUnixNano: number;
  timeUnixNano: number;
  count: number;
  sum?: number;
  bucketCounts?: number[];
  explicitBounds?: number[];
  min?: number;
  max?: number;
}
interface Metric { name: string; unit?: string; description?: string; histogram?: { dataPoints: HistogramPoint[]; aggregationTemporality?: number } }
interface ExportMetrics { resourceMetrics: { resource: { attributes: KeyValue[] }; scopeMetrics: { scope: { name: string; version?: string }; metrics: Metric[] }[] }[] }
interface Received { path: string; headers: IncomingHttpHeaders; body: ExportMetrics; raw: Buffer }

/** An OTLP/HTTP receiver: decodes each POST with the official protos, answers as a collector does (or with `status`). */
async function startReceiver(status = 200): Promise<{ url: string; received: Received[]; close(): Promise<void> }> {
  const received: Received[] = [];
  const server: Server = createServer((req, res) => {
    void readBody(req).then((raw) => {
      const message = ExportRequest.decode(raw);
      const body = ExportRequest.toObject(message, { longs: Number, enums: Number, defaults: false, arrays: true }) as ExportMetrics;
      received.push({ path: req.url ?? '', headers: req.headers, body, raw });
      if (status !== 200) {
        res.writeHead(status, { 'content-type': 'text/plain' }).end('bad request: the test said so');
        return;
      }
      res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end(Buffer.from(ExportResponse.encode(ExportResponse.create({})).finish()));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, received, close: () => new Promise<void>((r) => server.close(() => r())) };
}

/** A port nothing listens on: bound, then closed. */
const attrsOf = (kvs: KeyValue[] | undefined): Record<string, string | number | boolean | undefined> =>
  Object.fromEntries((kvs ?? []).map((kv) => [kv.key, kv.value.stringValue ?? kv.value.intValue ?? kv.value.doubleValue ?? kv.value.boolValue]));

const dir = mkdtempSync(join(tmpdir(), 'otlp-'));
before(buildCli);
after(() => rmSync(dir, { recursive: true, force: true }));

const close = (a: number, b: number, what: string) => assert.ok(Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(b)), `${what}: ${a} vs ${b}`);

test('a run sends its metrics under the GenAI names, units, bounds and attributes; counts and sums are the run file\'s', async () => {
  const receiver = await startReceiver();
  try {
    const out = join(dir, 'run.json');
    const trace = join(dir, 'run.trace.json');
    const csv = join(dir, 'chunks.csv');
    const { r, port } = await withServer({ ttftMs: 15, itlMs: 3, tokens: 8 }, async ({ url, port }) => ({
      port,
      r: await runCliProcess(
        ['run', '--url', url, '--api', 'openai-chat', '--requests', '6', '--warmup', '1', '--concurrency', '2', '--max-tokens', '8', '--out', out, '--trace-out', trace, '--chunks-csv', csv, '--otlp-endpoint', receiver.url],
        { env: { OTEL_EXPORTER_OTLP_HEADERS: 'authorization=Bearer%20otlp-secret-token-42,x-tenant=perf' } },
      ),
    }));
    assert.equal(r.code, 0, r.stderr);
    const run: RunFile = parseRunFile(readFileSync(out, 'utf8'));
    assert.match(r.stderr, new RegExp(`OTLP: 6 requests sent to ${receiver.url}/v1/metrics`));
    assert.match(r.stderr, new RegExp(`trace written to ${trace.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
    assert.match(r.stderr, /chunks CSV written to /);
    assert.ok(!`${r.stdout}${r.stderr}${readFileSync(out, 'utf8')}`.includes('otlp-secret-token-42'), 'the OTLP header is never printed nor stored');

    assert.equal(receiver.received.length, 1, 'one export for the run');
    const got = receiver.received[0]!;
    assert.equal(got.path, '/v1/metrics');
    assert.equal(got.headers['content-type'], 'application/x-protobuf');
    assert.equal(got.headers.authorization, 'Bearer otlp-secret-token-42', 'headers from OTEL_EXPORTER_OTLP_HEADERS, percent-decoded');
    assert.equal(got.headers['x-tenant'], 'perf');
    const rm = got.body.resourceMetrics;
    assert.equal(rm.length, 1);
    assert.deepEqual(
      { name: attrsOf(rm[0]!.resource.attributes)['service.name'], version: attrsOf(rm[0]!.resource.attributes)['service.version'], instance: attrsOf(rm[0]!.resource.attributes)['service.instance.id'] },
      { name: 'llm-profiler', version: TOOL_VERSION, instance: run.id },
    );
    const metrics = rm[0]!.scopeMetrics.flatMap((s) => s.metrics);
    const byName = new Map(metrics.map((m) => [m.name, m]));
    for (const spec of Object.values(GENAI_METRICS)) {
      const m = byName.get(spec.name);
      assert.ok(m?.histogram, `${spec.name} is a histogram`);
      assert.equal(m.unit, spec.unit, `${spec.name} unit`);
      for (const p of m.histogram.dataPoints) {
        assert.deepEqual(p.explicitBounds, [...spec.buckets], `${spec.name} bucket boundaries`);
        assert.equal(p.bucketCounts!.reduce((a, b) => a + b, 0), p.count, `${spec.name}: buckets add up to the count`);
        assert.ok(p.timeUnixNano > 0 && p.startTimeUnixNano > 0 && p.startTimeUnixNano <= p.timeUnixNano, `${spec.name} timestamps`);
        const a = attrsOf(p.attributes);
        assert.equal(a['gen_ai.operation.name'], 'chat');
        assert.equal(a['gen_ai.provider.name'], 'openai');
        assert.equal(a['gen_ai.request.model'], 'scripted-model');
        assert.equal(a['server.address'], '127.0.0.1');
        assert.equal(a['server.port'], port);
        assert.equal(a['error.type'], undefined, 'no failures in this run');
      }
    }
    assert.deepEqual([...byName.keys()].sort(), Object.values(GENAI_METRICS).map((m) => m.name).sort(), 'these four metrics and no others');
    const measured = run.requests.filter((q) => !q.warmup);
    assert.equal(measured.length, 6);
    const one = (name: string, type?: string) => {
      const points = byName.get(name)!.histogram!.dataPoints.filter((p) => attrsOf(p.attributes)['gen_ai.token.type'] === type);
      assert.equal(points.length, 1, `${name} ${type ?? ''}: one data point`);
      return points[0]!;
    };
    const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
    const duration = one(GENAI_METRICS.operationDuration.name);
    assert.equal(duration.count, 6, 'a record per measured request (warm-up left out)');
    close(duration.sum!, sum(measured.map((q) => q.e2eMs! / 1000)), 'operation duration sum = Σ e2e');
    close(duration.max!, Math.max(...measured.map((q) => q.e2eMs!)) / 1000, 'operation duration max');
    const ttft = one(GENAI_METRICS.timeToFirstToken.name);
    assert.equal(ttft.count, 6);
    close(ttft.sum!, sum(measured.map((q) => q.ttftMs! / 1000)), 'TTFT sum');
    close(ttft.min!, Math.min(...measured.map((q) => q.ttftMs!)) / 1000, 'TTFT min');
    const tpot = one(GENAI_METRICS.timePerOutputToken.name);
    assert.equal(tpot.count, measured.filter((q) => q.tpotMs !== undefined).length);
    close(tpot.sum!, sum(measured.filter((q) => q.tpotMs !== undefined).map((q) => q.tpotMs! / 1000)), 'TPOT sum');
    const output = one(GENAI_METRICS.tokenUsage.name, 'output');
    assert.equal(output.count, 6);
    assert.equal(output.sum, sum(measured.map((q) => q.outputTokens)));
    const input = one(GENAI_METRICS.tokenUsage.name, 'input');
    assert.equal(input.count, measured.filter((q) => q.promptTokens !== undefined && !q.promptTokensEstimated).length);
    assert.equal(input.sum, sum(measured.filter((q) => !q.promptTokensEstimated).map((q) => q.promptTokens ?? 0)));
    assert.ok(input.count > 0, 'the server reported usage');

    // the trace and the chunk CSV beside the run file
    const traceFile = JSON.parse(readFileSync(trace, 'utf8')) as { traceEvents: { name: string; ph: string }[]; displayTimeUnit: string };
    assert.equal(traceFile.displayTimeUnit, 'ms');
    assert.equal(traceFile.traceEvents.filter((e) => e.name === 'thread_name').length, run.requests.length);
    assert.equal(traceFile.traceEvents.filter((e) => e.ph === 'i' && e.name === 'chunk').length, sum(run.requests.map((q) => q.chunkTimesMs.length)));
    const rows = readFileSync(csv, 'utf8').split('\r\n').filter(Boolean);
    assert.equal(rows[0], 'requestIndex,warmup,chunk,atMs,epochMs,gapMs,stallCause');
    assert.equal(rows.length - 1, sum(run.requests.map((q) => q.chunkTimesMs.length)));
  } finally {
    await receiver.close();
  }
});

test('failed requests carry error.type on the operation duration, and no TTFT or usage', async () => {
  const receiver = await startReceiver();
  try {
    const out = join(dir, 'failing.json');
    const r = await withServer({ ttftMs: 5, itlMs: 1, tokens: 4, model: 'm1', fault: (info) => (info.seq % 3 === 1 ? { kind: 'http', status: 503, body: 'busy' } : undefined) }, ({ url }) =>
      runCliProcess(['run', '--url', url, '--api', 'openai-chat', '--model', 'm1', '--requests', '9', '--warmup', '0', '--concurrency', '1', '--max-tokens', '4', '--out', out, '--otlp-endpoint', `${receiver.url}/v1/metrics`]),
    );
    assert.equal(r.code, 1, 'some requests failed: exit 1, as without OTLP');
    const run = parseRunFile(readFileSync(out, 'utf8'));
    const failed = run.requests.filter((q) => q.error);
    assert.ok(failed.length >= 2 && failed.length < run.requests.length, `${failed.length} failed`);
    assert.match(r.stderr, /OTLP: 9 requests sent to/);
    assert.equal(receiver.received[0]!.path, '/v1/metrics', 'a URL already ending in /v1/metrics is used as it is');
    const metrics = receiver.received[0]!.body.resourceMetrics[0]!.scopeMetrics.flatMap((s) => s.metrics);
    const duration = metrics.find((m) => m.name === GENAI_METRICS.operationDuration.name)!.histogram!.dataPoints;
    const withError = duration.filter((p) => attrsOf(p.attributes)['error.type'] !== undefined);
    assert.equal(withError.length, 1);
    assert.equal(attrsOf(withError[0]!.attributes)['error.type'], '503');
    assert.equal(withError[0]!.count, failed.length);
    assert.equal(duration.find((p) => attrsOf(p.attributes)['error.type'] === undefined)!.count, run.requests.length - failed.length);
    const ttft = metrics.find((m) => m.name === GENAI_METRICS.timeToFirstToken.name)!.histogram!.dataPoints;
    assert.equal(ttft.reduce((n, p) => n + p.count, 0), run.requests.length - failed.length, 'TTFT of successful responses only');
    assert.equal(attrsOf(ttft[0]!.attributes)['gen_ai.request.model'], 'm1');
  } finally {
    await receiver.close();
  }
});

test('an OTLP endpoint that is down or refuses: the run is still printed and written, the reason said, exit 1', async () => {
  const port = await closedPort();
  const out = join(dir, 'down.json');
  const down = await withServer({ ttftMs: 5, itlMs: 1, tokens: 4 }, ({ url }) =>
    runCliProcess(['run', '--url', url, '--requests', '3', '--max-tokens', '4', '--out', out, '--otlp-endpoint', `http://127.0.0.1:${port}`], { env: { OTEL_EXPORTER_OTLP_TIMEOUT: '1500' } }),
  );
  assert.equal(down.code, 1, down.stderr);
  assert.match(down.stdout, /Successful requests:\s+3/, 'the run is printed');
  assert.equal(parseRunFile(readFileSync(out, 'utf8')).summary.completed, 3, 'and written');
  assert.match(down.stderr, new RegExp(`OTLP: could not send the run to http://127.0.0.1:${port}/v1/metrics: .*ECONNREFUSED`));
  assert.ok(down.ms < 8_000, `it gives up within OTEL_EXPORTER_OTLP_TIMEOUT (${Math.round(down.ms)} ms in all)`);

  const refusing = await startReceiver(400);
  try {
    const out2 = join(dir, 'refused.json');
    const r = await withServer({ ttftMs: 5, itlMs: 1, tokens: 4 }, ({ url }) =>
      runCliProcess(['run', '--url', url, '--requests', '2', '--max-tokens', '4', '--out', out2, '--otlp-endpoint', refusing.url]),
    );
    assert.equal(r.code, 1, r.stderr);
    assert.ok(existsSync(out2));
    assert.match(r.stderr, /OTLP: could not send the run to .*400/);
    assert.equal(refusing.received.length, 1, 'a 400 is not retried');
  } finally {
    await refusing.close();
  }
});

test('a bad --otlp-endpoint or --trace-out is named before anything is measured', async () => {
  const bad = await runCliProcess(['run', '--url', 'http://127.0.0.1:9', '--otlp-endpoint', 'ftp://collector:4318']);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /--otlp-endpoint must be http:\/\/ or https:\/\//);
  const creds = await runCliProcess(['run', '--url', 'http://127.0.0.1:9', '--otlp-endpoint', 'http://user:pw@collector:4318']);
  assert.equal(creds.code, 2);
  assert.match(creds.stderr, /--otlp-endpoint must not carry credentials .*OTEL_EXPORTER_OTLP_HEADERS/);
  assert.ok(!creds.stderr.includes('pw@'));
  const folder = await runCliProcess(['run', '--url', 'http://127.0.0.1:9', '--trace-out', join(dir, 'no-such-folder', 't.json')]);
  assert.equal(folder.code, 2);
  assert.match(folder.stderr, /--trace-out: the folder .*no-such-folder does not exist/);
});

test('import takes the same exports: another tool\'s result sent over OTLP and written as a trace and a chunk CSV', async () => {
  const receiver = await startReceiver();
  try {
    const fixtures = join(__dirname, '../fixtures');
    const out = join(dir, 'imported.run.json');
    const trace = join(dir, 'imported.trace.json');
    const csv = join(dir, 'imported.chunks.csv');
    const r = await runCliProcess(['import', join(fixtures, 'vllm/concurrency2.json'), '--out', out, '--trace-out', trace, '--chunks-csv', csv, '--otlp-endpoint', receiver.url],
      { env: { OTEL_EXPORTER_OTLP_HEADERS: 'authorization=Bearer%20otlp-secret-token-42' } });
    assert.equal(r.code, 0, r.stderr);
    const run: RunFile = parseRunFile(readFileSync(out, 'utf8'));
    assert.equal(run.importedFrom?.tool, 'vllm');
    const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
    assert.match(r.stderr, new RegExp(`OTLP: ${run.requests.length} requests sent to ${receiver.url}/v1/metrics`));
    assert.equal(receiver.received.length, 1);
    const metrics = receiver.received[0]!.body.resourceMetrics.flatMap((m) => m.scopeMetrics.flatMap((s) => s.metrics));
    const ttft = metrics.find((m) => m.name === GENAI_METRICS.timeToFirstToken.name)!.histogram!.dataPoints;
    assert.equal(sum(ttft.map((p) => p.count)), run.requests.filter((q) => q.ttftMs !== undefined).length);
    close(sum(ttft.map((p) => p.sum!)), sum(run.requests.filter((q) => q.ttftMs !== undefined).map((q) => q.ttftMs! / 1000)), 'TTFT sum = the imported TTFTs');
    const traceFile = JSON.parse(readFileSync(trace, 'utf8')) as { traceEvents: { name: string; ph: string }[] };
    assert.equal(traceFile.traceEvents.filter((e) => e.name === 'thread_name').length, run.requests.length, 'a track per imported request');
    const chunks = sum(run.requests.map((q) => q.chunkTimesMs.length));
    assert.ok(chunks > run.requests.length, 'vLLM keeps the ITLs: chunk times');
    assert.equal(readFileSync(csv, 'utf8').split('\r\n').filter(Boolean).length - 1, chunks, 'a CSV row per chunk');
    assert.ok(!`${r.stdout}${r.stderr}`.includes('otlp-secret-token-42'));

    // GuideLLM keeps no chunk times: said, and the CSV holds its header only
    const g = await runCliProcess(['import', join(fixtures, 'guidellm/sweep-v1.json'), '--chunks-csv', csv]);
    assert.equal(g.code, 0, g.stderr);
    assert.match(g.stderr, /--chunks-csv: GuideLLM keeps no chunk times in .*sweep-v1\.json: the CSV has its header only/);
    assert.deepEqual(readFileSync(csv, 'utf8').split('\r\n').filter(Boolean), ['requestIndex,warmup,chunk,atMs,epochMs,gapMs,stallCause']);

    // one trace per run: several files are refused before anything is read
    const two = await runCliProcess(['import', join(fixtures, 'vllm/burst.json'), join(fixtures, 'vllm/rate4.json'), '--trace-out', trace]);
    assert.equal(two.code, 2);
    assert.match(two.stderr, /--trace-out takes one file's run; 2 files were given/);
  } finally {
    await receiver.close();
  }
});

/** Every string attribute of every data point and of the resource, as the receiver decoded them. */
function sentAttributes(got: Received): (string | number | boolean | undefined)[] {
  return got.body.resourceMetrics.flatMap((rm) => [
    ...Object.values(attrsOf(rm.resource.attributes)),
    ...rm.scopeMetrics.flatMap((s) => s.metrics.flatMap((m) => (m.histogram?.dataPoints ?? []).flatMap((p) => Object.values(attrsOf(p.attributes))))),
  ]);
}

test('a server that echoes a secret as its model name and response id: the secret reaches no export (OTLP, trace, chunk CSV, run file, stdout, --json)', async () => {
  const KEY = 'sk-echoed-7c1e2f9a4b3d5e6f';
  const HEADER_SECRET = 'gw-echoed-0a9b8c7d6e5f';
  const receiver = await startReceiver();
  // the model list names the secret the request carried; each stream's id and x-request-id are that secret too
  const echo = (secretOf: (h: IncomingHttpHeaders) => string) => startTruthServer((req, res) => {
    const secret = secretOf(req.headers);
    if (req.method === 'GET') return answerGet('openai-chat', (req.url ?? '').split('?')[0]!, res, secret);
    answerStream('openai-chat', res, 3, { id: secret, headers: { 'x-request-id': secret } });
  });
  const cases = [
    { name: 'the API key', secret: KEY, args: ['--api-key-env', 'LLMP_TEST_KEY'], server: await echo((h) => String(h.authorization ?? '').replace(/^Bearer /, '')) },
    { name: 'the key in its own header', secret: HEADER_SECRET, args: ['--api-key-env', 'LLMP_GATEWAY_KEY', '--api-key-header', 'X-Gateway-Token'], server: await echo((h) => String(h['x-gateway-token'] ?? '')) },
  ];
  try {
    for (const c of cases) {
      for (const json of [false, true]) {
        const what = `${c.name}${json ? ', --json' : ''}`;
        const [out, trace, csv] = ['run.json', 'trace.json', 'chunks.csv'].map((f) => join(dir, `echo-${json}-${f}`)) as [string, string, string];
        const r = await runCliProcess(
          ['run', '--url', c.server.url, '--api', 'openai-chat', ...c.args, '--requests', '3', '--warmup', '0', '--max-tokens', '3',
            '--out', out, '--trace-out', trace, '--chunks-csv', csv, '--otlp-endpoint', receiver.url, ...(json ? ['--json'] : [])],
          { env: { LLMP_TEST_KEY: KEY, LLMP_GATEWAY_KEY: HEADER_SECRET } },
        );
        assert.equal(r.code, 0, `${what}: ${r.stderr}`);
        assert.ok(c.server.seen.some((s) => s.method === 'POST' && s.body.includes(`"model":"${c.secret}"`)), `${what}: the echoed name was the model the requests asked for`);
        const got = receiver.received.at(-1)!;
        assert.ok(!got.raw.toString('latin1').includes(c.secret), `${what}: the OTLP payload carries the secret`);
        assert.ok(sentAttributes(got).includes('<redacted>'), `${what}: gen_ai.request.model is sent, redacted`);
        for (const [file, text] of [['the run file', readFileSync(out, 'utf8')], ['the trace', readFileSync(trace, 'utf8')], ['the chunk CSV', readFileSync(csv, 'utf8')], ['stdout', r.stdout], ['stderr', r.stderr]]) {
          assert.ok(!text!.includes(c.secret), `${what}: ${file} carries the secret:\n${text!.slice(0, 2000)}`);
        }
      }
    }
  } finally {
    await Promise.all([receiver.close(), ...cases.map((c) => c.server.close())]);
  }
});

test('import exports through the same scrubber: an imported file naming the OTLP header\'s secret does not send it back', async () => {
  const SECRET = 'otlp-secret-token-42';
  const receiver = await startReceiver();
  try {
    const doc = JSON.parse(readFileSync(join(__dirname, '../fixtures/vllm/burst.json'), 'utf8')) as Record<string, unknown>;
    const file = join(dir, 'echoing.vllm.json');
    writeFileSync(file, JSON.stringify({ ...doc, model_id: SECRET }));
    const r = await runCliProcess(['import', file, '--otlp-endpoint', receiver.url], { env: { OTEL_EXPORTER_OTLP_HEADERS: `authorization=${SECRET}` } });
    assert.equal(r.code, 0, r.stderr);
    const got = receiver.received.at(-1)!;
    assert.equal(got.headers.authorization, SECRET, 'the header is sent as given');
    assert.ok(!got.raw.toString('latin1').includes(SECRET), 'the OTLP payload carries the secret');
    assert.ok(!`${r.stdout}${r.stderr}`.includes(SECRET));
  } finally {
    await receiver.close();
  }
});
