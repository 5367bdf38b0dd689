// `llm-profiler run` as a real process (node dist/cli.js) against a real scripted server.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, existsSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseRunFile } from '../../src/engine/files/runFile';
import { buildCli, runCliProcess } from '../support/cli';
import { withServer } from '../support/withServer';

const root = join(__dirname, '../..');
const cli = join(root, 'dist/cli.js');

before(buildCli);

const runCli = runCliProcess;

test('a run prints the table, writes --out, detects the API and the model, exit 0; no progress line when not a TTY', async () => {
  await withServer({ ttftMs: 10, itlMs: 2 }, async (s, { dir }) => {
    const out = join(dir, 'run.json');
    const r = await runCli(['run', '--url', s.url, '--requests', '5', '--concurrency', '2', '--max-tokens', '8', '--out', out]);
    assert.equal(r.code, 0, r.stderr);
    for (const re of [/Successful requests:\s+5/, /Metric \(ms\)\s+mean\s+p50\s+p90\s+p95\s+p99/, /^TTFT\s/m, /^TPOT\s/m, /^ITL\s/m, /^E2E\s/m, /Output token throughput/, /^Stalls: /m, /Errors: none/]) {
      assert.match(r.stdout, re);
    }
    // (a stall line may appear: a loaded machine does pause streams)
    assert.ok(!r.stderr.includes('\r') && !r.stderr.includes('done ·'), 'no live progress when stderr is not a terminal');
    const run = parseRunFile(readFileSync(out, 'utf8'));
    assert.equal(run.summary.completed, 5);
    assert.equal(run.endpoint.detectedApi, true);
    assert.equal(run.endpoint.model, 'scripted-model', '--model defaults to the first listed model');
    const withModel = s.log.filter((l) => l.body.model !== undefined);
    assert.ok(withModel.length >= 5, `the generation requests named a model (${withModel.length})`);
    assert.ok(withModel.every((l) => l.body.model === 'scripted-model'));
  });
});

test('--json prints the summary as JSON; without --out nothing is written', async () => {
  await withServer({ ttftMs: 5, itlMs: 1 }, async (s, { dir }) => {
    const r = await runCli(['run', '--url', s.url, '--api', 'openai-completions', '--requests', '3', '--max-tokens', '4', '--percentiles', '50,99', '--json'], { env: { TMPDIR: dir } });
    assert.equal(r.code, 0, r.stderr);
    const summary = JSON.parse(r.stdout);
    assert.equal(summary.completed, 3);
    assert.deepEqual(Object.keys(summary.ttftMs).sort(), ['count', 'max', 'mean', 'min', 'p50', 'p99', 'std']);
    assert.ok(s.log.some((l) => l.path === '/v1/completions'));
  });
});

test('--slo with --fail-on-slo exits 3 when missed and 0 when met', async () => {
  await withServer({ ttftMs: 40, itlMs: 2 }, async (s) => {
    const missed = await runCli(['run', '--url', s.url, '--requests', '3', '--max-tokens', '4', '--slo', 'ttft=5,tpot=100', '--fail-on-slo']);
    assert.equal(missed.code, 3, missed.stderr);
    assert.match(missed.stdout, /SLO: MISSED at p99: ttft/);
    assert.match(missed.stdout, /Request goodput \(req\/s\):\s+0\.00/);
    const notFailing = await runCli(['run', '--url', s.url, '--requests', '3', '--max-tokens', '4', '--slo', 'ttft=5']);
    assert.equal(notFailing.code, 0, 'without --fail-on-slo a missed SLO is reported, not an exit code');
    const met = await runCli(['run', '--url', s.url, '--requests', '3', '--max-tokens', '4', '--slo', 'ttft=5000,e2e=20000', '--fail-on-slo']);
    assert.equal(met.code, 0, met.stderr);
  });
});

test('an SLO in the prompt file counts for --fail-on-slo', async () => {
  await withServer({ ttftMs: 40, itlMs: 2 }, async (s, { dir }) => {
    const f = join(dir, 'ask.prompt.md');
    writeFileSync(f, '---\ndescription: ask\nllmProfiler:\n  slo: { ttft: 5 }\n---\nWhat is TTFT?\n');
    const r = await runCli(['run', '--url', s.url, '--requests', '2', '--max-tokens', '4', '--prompt-file', f, '--fail-on-slo']);
    assert.equal(r.code, 3, r.stderr + r.stdout);
    assert.ok(s.log.some((l) => JSON.stringify(l.body).includes('What is TTFT?')));
    const bad = join(dir, 'bad.prompt.yml');
    writeFileSync(bad, 'name: x\nmodel: y\n');
    const rb = await runCli(['run', '--url', s.url, '--prompt-file', bad]);
    assert.equal(rb.code, 2);
    assert.match(rb.stderr, /--prompt-file: .*bad\.prompt\.yml:1: the file has no messages/);
  });
});

test('failed requests: exit 1 and an errors line by kind', async () => {
  await withServer({ ttftMs: 5, itlMs: 1, faultsBySeed: { '1': { kind: 'http', status: 500 }, '3': { kind: 'reset', afterTokens: 1 } } }, async (s) => {
    const r = await runCli(['run', '--url', s.url, '--api', 'openai-chat', '--requests', '4', '--warmup', '0', '--max-tokens', '4']);
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stdout, /Errors: 2 of 4 \((http 1: 500 ×1, reset 1|reset 1, http 1: 500 ×1)\)/);
  });
});

test('bad flags exit 2 naming the flag', async () => {
  const cases: [string[], RegExp][] = [
    [['run', '--url', 'http://127.0.0.1:9', '--concurency', '4'], /unknown flag --concurency/],
    [['run', '--url', 'http://127.0.0.1:9', '--requests', 'many'], /--requests must be a whole number/],
    [['run', '--url', 'http://127.0.0.1:9', '--concurrency', '2', '--rate', '1'], /--concurrency and --rate cannot be used together/],
    [['run', '--url', 'http://127.0.0.1:9', '--api-key-env', 'NOPE_NOT_SET_123'], /--api-key-env: the environment variable NOPE_NOT_SET_123 is not set/],
    [['run', '--preset', 'huge'], /--preset must be tiny, small, medium or shape/],
    [['run', '--preset', 'shape:layers=2,width=100'], /--preset: bad model shape: head size 25 must be even/],
    [['run', '--url', 'http://127.0.0.1:9', '--preset', 'tiny'], /--preset chooses the bundled local server's model: it cannot be used with --url/],
    [['frobnicate'], /unknown command "frobnicate"/],
  ];
  for (const [args, re] of cases) {
    const r = await runCli(args);
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, re);
  }
  const help = await runCli(['run', '--help']);
  assert.equal(help.code, 0);
  for (const flag of ['--url', '--preset', '--model-file', '--api', '--model', '--concurrency', '--rate', '--burstiness', '--requests', '--duration', '--prompt-tokens', '--shared-prefix', '--prompt-file', '--dataset', '--max-tokens', '--warmup', '--seed', '--no-ignore-eos', '--timeout', '--idle-timeout', '--slo', '--fail-on-slo', '--percentiles', '--out', '--json', '--api-key-env', '--api-key-header', '--header']) {
    assert.ok(help.stdout.includes(flag), `help lists ${flag}`);
  }
  const version = await runCli(['--version']);
  assert.equal(version.code, 0);
  assert.match(version.stdout, /^\d+\.\d+\.\d+/);
});

test('a down endpoint: one line and exit 1, within about a second', async () => {
  const port = await new Promise<number>((resolve) => {
    const srv = createServer().listen(0, '127.0.0.1', () => {
      const p = (srv.address() as { port: number }).port;
      srv.close(() => resolve(p));
    });
  });
  for (const api of ['auto', 'openai-chat']) {
    const r = await runCli(['run', '--url', `http://127.0.0.1:${port}`, '--api', api]);
    assert.equal(r.code, 1);
    const lines = r.stderr.trim().split('\n');
    assert.equal(lines.length, 1, r.stderr);
    assert.match(lines[0]!, /^llm-profiler: .*127\.0\.0\.1/);
    console.log(`# down endpoint (--api ${api}): exit after ${r.ms.toFixed(0)} ms, node start-up included`);
    assert.ok(r.ms < 5000, `took ${r.ms} ms (node start-up included)`);
  }
});

test('the key from --api-key-env is sent but never printed nor written', async () => {
  const key = 'sk-cli-secret-5a4b3c2d1e';
  await withServer({ apiKey: key, ttftMs: 2, itlMs: 1 }, async (s, { dir }) => {
    const out = join(dir, 'run.json');
    const r = await runCli(['run', '--url', s.url, '--requests', '2', '--max-tokens', '3', '--api-key-env', 'TEST_LLM_KEY', '--out', out], { env: { TEST_LLM_KEY: key } });
    assert.equal(r.code, 0, r.stderr);
    const posts = s.log; // every streaming request (auto-detection may pick any of the four APIs)
    assert.ok(posts.length >= 2 && posts.every((l) => l.authorization === `Bearer ${key}`));
    assert.ok(!r.stdout.includes(key) && !r.stderr.includes(key));
    assert.ok(!readFileSync(out, 'utf8').includes(key));
    const denied = await runCli(['run', '--url', s.url, '--api', 'openai-chat', '--requests', '1'], {});
    assert.equal(denied.code, 1);
    assert.ok(!denied.stderr.includes(key));
  });
});

test('Ctrl+C stops the run quickly, prints what finished and writes the run file', async () => {
  // concurrency 2 over [short, long, short…]: one worker streams the long one, the other finishes short ones.
  await withServer({ ttftMs: 5, itlMs: 20 }, async (s, { dir }) => {
    const data = join(dir, 'mix.jsonl');
    const short = '{"prompt": "short", "max_tokens": 2}\n';
    writeFileSync(data, short + '{"prompt": "long", "max_tokens": 2000}\n' + short.repeat(30));
    const out = join(dir, 'run.json');
    let kill: ((sig: NodeJS.Signals) => void) | undefined;
    const running = runCli(['run', '--url', s.url, '--api', 'openai-chat', '--concurrency', '2', '--requests', '100', '--warmup', '0', '--dataset', data, '--out', out], { onSpawn: (k) => (kill = k) });
    const t0 = performance.now();
    while (s.log.filter((l) => l.endedAt !== undefined && !l.clientClosed).length < 3) {
      assert.ok(performance.now() - t0 < 20_000, 'requests finish');
      await new Promise((r) => setTimeout(r, 20));
    }
    const sentAt = performance.now();
    kill!('SIGINT');
    const r = await running;
    const ms = performance.now() - sentAt;
    console.log(`# SIGINT to process exit: ${ms.toFixed(0)} ms`);
    assert.equal(r.code, 130, r.stderr);
    assert.ok(ms < 2000, `exit took ${ms} ms`);
    assert.match(r.stderr, /interrupted/);
    assert.match(r.stdout, /Cancelled: the figures cover what finished/);
    const run = parseRunFile(readFileSync(out, 'utf8'));
    assert.equal(run.cancelled, true);
    assert.ok(run.requests.filter((x) => !x.error).length >= 3);
    assert.ok(run.requests.some((x) => x.error?.kind === 'aborted'));
  });
});

test('on a terminal, a live progress line on stderr, cleared before the table', { skip: !existsSync('/usr/bin/script') && 'needs script(1) for a pseudo-terminal' }, async () => {
  await withServer({ ttftMs: 10, itlMs: 10 }, async (s) => {
    // script(1) gives the CLI a pseudo-terminal; its stdout goes to /dev/null so only stderr comes back.
    const cmd = `${process.execPath} ${cli} run --url ${s.url} --api openai-chat --requests 4 --max-tokens 30 --warmup 0 2>&1 >/dev/null`;
    // (spawned asynchronously: the scripted server runs in this process and must keep answering)
    const r = await new Promise<{ status: number | null; stdout: string }>((resolve, reject) => {
      const child = spawn('/usr/bin/script', ['-qec', cmd, '/dev/null'], { stdio: ['ignore', 'pipe', 'inherit'] });
      let stdout = '';
      child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
      const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
      child.on('error', reject);
      child.on('close', (status) => {
        clearTimeout(timer);
        resolve({ status, stdout });
      });
    });
    assert.equal(r.status, 0, r.stdout);
    const frames = r.stdout.split('\r').filter((f) => f.includes('done'));
    assert.ok(frames.length >= 3, `progress frames: ${frames.length}`);
    assert.ok(frames.some((f) => /\d\/4 done · \d in flight · TTFT p50 [\d.,]+ ms · [\d.]+ tok\/s/.test(f)), frames.join(' | '));
    assert.ok(r.stdout.includes('\x1b[2K'), 'the line is rewritten in place');
  });
});

test('run without --url profiles the bundled llama.cpp server and stops it', async () => {
  const out = join(mkdtempSync(join(tmpdir(), 'cli-local-')), 'run.json');
  try {
    const r = await runCli(['run', '--requests', '3', '--warmup', '1', '--max-tokens', '16', '--prompt-tokens', '32', '--out', out]);
    assert.equal(r.code, 0, r.stderr);
    const url = /local server (http:\/\/127\.0\.0\.1:\d+)/.exec(r.stderr)?.[1];
    assert.ok(url, r.stderr);
    assert.match(r.stdout, /TTFT/);
    const run = parseRunFile(readFileSync(out, 'utf8'));
    assert.equal(run.summary.completed, 3);
    assert.equal(run.summary.failed, 0);
    for (const req of run.requests) assert.equal(req.outputTokens, 16, 'ignore_eos: exactly max_tokens');
    assert.equal(run.summary.tokenSource, 'usage');
    // the server it started is gone
    await assert.rejects(fetch(`${url}/health`, { signal: AbortSignal.timeout(2000) }));
  } finally {
    rmSync(join(out, '..'), { recursive: true, force: true });
  }
});

test('run without --url on a synthetic model of a custom shape (Q8_0)', async () => {
  const r = await runCli(['run', '--preset', 'shape:layers=2,width=128,heads=2,kv-heads=1,ffn=256,vocab=2048,type=q8_0', '--requests', '2', '--warmup', '0', '--max-tokens', '8', '--prompt-tokens', '16', '--json']);
  assert.equal(r.code, 0, r.stderr);
  const summary = JSON.parse(r.stdout) as { completed: number; totalOutputTokens: number };
  assert.equal(summary.completed, 2);
  assert.equal(summary.totalOutputTokens, 16);
  assert.match(r.stderr, /model synthetic-llama-L2-E128-H2-KV1-F256-V2048-C4096-q8_0/);
});

test('--api-key-header sends the key in the header the endpoint wants (Azure api-key style), never printed nor written', async () => {
  const key = 'azure-secret-9f8e7d6c';
  await withServer({ apiKey: key, apiKeyHeader: 'api-key', ttftMs: 2, itlMs: 1 }, async (s, { dir }) => {
    const out = join(dir, 'run.json');
    const r = await runCli(['run', '--url', s.url, '--api', 'openai-chat', '--requests', '2', '--max-tokens', '3', '--api-key-env', 'AZ_KEY', '--api-key-header', 'api-key', '--out', out], { env: { AZ_KEY: key } });
    assert.equal(r.code, 0, r.stderr);
    const run = parseRunFile(readFileSync(out, 'utf8'));
    assert.equal(run.summary.completed, 2);
    assert.equal(run.endpoint.apiKeyHeader, 'api-key');
    assert.ok(!readFileSync(out, 'utf8').includes(key) && !r.stdout.includes(key) && !r.stderr.includes(key));
    // as a bearer token the same key is refused: the header is what the server checks
    const bearer = await runCli(['run', '--url', s.url, '--api', 'openai-chat', '--requests', '1', '--api-key-env', 'AZ_KEY'], { env: { AZ_KEY: key } });
    assert.equal(bearer.code, 1);
  });
  const bad = await runCli(['run', '--url', 'http://127.0.0.1:9', '--api-key-header', 'api-key']);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /--api-key-header needs --api-key-env/);
});
