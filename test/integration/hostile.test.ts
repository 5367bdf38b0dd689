// Hostile endpoints: `llm-profiler` as a real process (node dist/cli.js) against servers that
// redirect keys elsewhere, hang, stream without end, echo the key, send terminal escapes and answer
// HTML or gzip, on every API. Each server logs what it received (test/support/hostileServer.ts): what
// reached it is asserted against that log. Whatever the server does, nothing finished is lost and a
// key given to the tool appears in no output (stdout, stderr, the run file).
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, lstatSync, readFileSync, readlinkSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { parseRunFile } from '../../src/engine/files/runFile';
import type { RunFile } from '../../src/engine/core/types';
import type { ApiKind } from '../../src/engine/core/apis';
import { buildCli, runCliProcess } from '../support/cli';
import type { CliProcessResult } from '../support/cli';
import { ALL_APIS, answerGet, answerStream, endEvents, errorEvent, ROUTES, sendJson, startStream, startTruthServer, tokenEvent } from '../support/hostileServer';
import type { Handler, TruthServer } from '../support/hostileServer';
import { withServer } from '../support/withServer';

const KEY = 'sk-hostile-5f0c9e1d2b7a4c3e';

before(buildCli);

/** Runs the CLI with the key in LLMP_TEST_KEY; killed after `killMs` (a hang shows as code null). */
function runCli(args: readonly string[], killMs = 60_000): Promise<CliProcessResult> {
  return runCliProcess(args, { env: { LLMP_TEST_KEY: KEY }, killMs });
}

/** A truth server per handler, in order, and a temporary folder: each one withServer's, undone after `fn`. */
function withTruthServers(fn: (dir: string, ...servers: TruthServer[]) => Promise<void>, ...handlers: Handler[]): Promise<void> {
  const next = (servers: TruthServer[], dir: () => string): Promise<void> => {
    const h = handlers[servers.length];
    if (!h) return fn(dir(), ...servers);
    return withServer(() => startTruthServer(h), (s, scope) => next([...servers, s], servers.length ? dir : () => scope.dir));
  };
  return next([], () => '');
}

const pathOf = (url: string) => url.split('?')[0]!;
/** Prompt sizing's requests to a server of one's own (src/engine/transport/tokenize.ts), sent before the run's: not those counted here. */
const tokenizerRoute = (req: { url?: string }) => ['/tokenize', '/apply-template'].includes(pathOf(req.url ?? ''));
/** The key as the server received it, in whichever header it came. */
const keyOf = (headers: Record<string, unknown>) => String(headers['x-api-key'] ?? headers.authorization ?? '').replace(/^Bearer /, '');

/** The key appears nowhere the tool wrote: stdout, stderr, the run file when there is one. */
function assertNoKey(r: CliProcessResult, secret: string, runFile?: string): void {
  assert.ok(!r.stdout.includes(secret), `stdout carries the secret:\n${r.stdout}`);
  assert.ok(!r.stderr.includes(secret), `stderr carries the secret:\n${r.stderr}`);
  if (runFile && existsSync(runFile)) assert.ok(!readFileSync(runFile, 'utf8').includes(secret), 'the run file carries the secret');
}

const base = (api: ApiKind, requests = 1) => ['run', '--api', api, '--requests', String(requests), '--max-tokens', '4', '--warmup', '0'];

test('1. a redirect to another origin is never followed: the key and headers stay with the endpoint, the error names the Location', async () => {
  for (const api of ALL_APIS) {
    // The model lookup (no --model), the preflight, then the measured request: every step redirects.
    let elsewhereUrl = '';
    await withTruthServers(async (_dir, endpoint, elsewhere) => {
      elsewhereUrl = elsewhere.url;
      const r = await runCli([...base(api), '--url', endpoint.url, '--api-key-env', 'LLMP_TEST_KEY', '--api-key-header', 'x-api-key', '--header', 'X-Team: perf']);
      assert.equal(r.code, 1, `${api}: ${r.stderr}`);
      assert.deepEqual(elsewhere.seen, [], `${api}: nothing reached the other origin`);
      assert.ok(endpoint.seen.length > 0 && endpoint.seen.every((s) => s.headers['x-api-key'] === KEY), `${api}: the endpoint itself got the key`);
      assert.match(r.stderr, new RegExp(`redirects GET \\S+ to ${elsewhere.url}\\S*.*not followed`), api);
      assertNoKey(r, KEY);
    }, (req, res) => {
      res.writeHead(302, { location: `${elsewhereUrl}${req.url}` }).end();
    }, (req, res) => answerGet(api, pathOf(req.url!), res, 'evil-model'));
  }
});

test('1b. a measured request redirected to another origin fails as such, naming where; nothing goes there', async () => {
  for (const api of ALL_APIS) {
    let elsewhereUrl = '';
    await withTruthServers(async (dir, elsewhere, endpoint) => {
      elsewhereUrl = elsewhere.url;
      const out = join(dir, 'run.json');
      const r = await runCli([...base(api), '--url', endpoint.url, '--model', 'm', '--api-key-env', 'LLMP_TEST_KEY', '--api-key-header', 'x-api-key', '--out', out]);
      assert.equal(r.code, 1, `${api}: ${r.stderr}`);
      assert.deepEqual(elsewhere.seen, [], `${api}: nothing reached the other origin`);
      const run = parseRunFile(readFileSync(out, 'utf8'));
      const failed = run.requests.find((q) => q.error);
      assert.match(failed?.error?.message ?? '', new RegExp(`redirect to ${elsewhere.url}/\\S*, not followed`), api);
      assertNoKey(r, KEY, out);
    }, (_req, res) => sendJson(res, 200, {}), (req, res) => {
      if (req.method === 'GET') return answerGet(api, pathOf(req.url!), res);
      res.writeHead(307, { location: `${elsewhereUrl}${req.url}` }).end();
    });
  }
});

test('2. a server that never answers the connection-warming request: the run ends within --timeout, exit 1, saying so', async () => {
  for (const api of ALL_APIS) {
    let probes = 0;
    await withTruthServers(async (_dir, endpoint) => {
      const r = await runCli([...base(api), '--url', endpoint.url, '--model', 'm', '--timeout', '2'], 30_000);
      assert.equal(r.code, 1, `${api}: exit ${r.code} after ${r.ms.toFixed(0)} ms: ${r.stderr}`);
      assert.match(r.stderr, /no answer from .* to the connection-warming request \(GET \S+\) within 2000 ms/, api);
      assert.ok(r.ms < 15_000, `${api}: ended after ${r.ms.toFixed(0)} ms`);
      assert.ok(probes >= 2, `${api}: the warming GET did reach the server (${probes} probes)`);
    }, (req, res) => {
      if (req.method === 'GET' && pathOf(req.url!) === ROUTES[api].probe && ++probes > 1) return; // answered once (the preflight), then never
      if (req.method === 'GET') return answerGet(api, pathOf(req.url!), res);
      answerStream(api, res);
    });
  }
});

/** A stream that never ends and ignores max_tokens; it stops when the client goes away. */
const endless = (api: ApiKind, closed: { n: number }): Handler => (req, res) => {
  if (req.method === 'GET') return answerGet(api, pathOf(req.url!), res);
  startStream(api, res);
  const batch = tokenEvent(api, 'x', 'id-1').repeat(200);
  const pump = () => {
    if (res.destroyed || res.writableEnded) return;
    if (res.write(batch)) setImmediate(pump);
    else res.once('drain', pump);
  };
  if (!tokenizerRoute(req)) res.on('close', () => closed.n++);
  pump();
};

test('3. a server that ignores max_tokens and streams without end: reading stops, the request is flagged, the run file is written', async () => {
  for (const api of ALL_APIS) {
    const closed = { n: 0 };
    await withTruthServers(async (dir, endpoint) => {
      const out = join(dir, 'run.json');
      const r = await runCli([...base(api, 2), '--url', endpoint.url, '--model', 'm', '--out', out]);
      assert.equal(r.code, 1, `${api}: ${r.stderr}`);
      const run = parseRunFile(readFileSync(out, 'utf8'));
      assert.equal(run.requests.length, 2, api);
      for (const q of run.requests) {
        assert.equal(q.error?.kind, 'overlong', `${api}: ${q.error?.message}`);
        assert.ok(q.chunkTimesMs.length <= 4 * 4 + 1024 + 1, `${api}: ${q.chunkTimesMs.length} chunk times kept`);
      }
      assert.match(r.stdout, /overlong 2/, api);
      assert.equal(closed.n, 2, `${api}: the client closed both streams`);
    }, endless(api, closed));
  }
});

test('3b. a reply far longer than --max-tokens that does end counts, flagged, and the result says so', async () => {
  for (const api of ALL_APIS) {
    await withTruthServers(async (dir, endpoint) => {
      const out = join(dir, 'run.json');
      const r = await runCli([...base(api), '--url', endpoint.url, '--model', 'm', '--out', out]);
      assert.equal(r.code, 0, `${api}: ${r.stderr}`);
      const run = parseRunFile(readFileSync(out, 'utf8'));
      assert.equal(run.requests[0]!.exceedsMaxTokens, true, api);
      assert.match(r.stdout, /Warning: 1 reply ran far past max_tokens/, api);
    }, (req, res) => {
      if (req.method === 'GET') return answerGet(api, pathOf(req.url!), res);
      answerStream(api, res, 200);
    });
  }
});

test('4. a key in the URL query is sent with every request, and redacted wherever the URL is written', async () => {
  const secret = 'q-secret-7e1f00aa55';
  for (const api of ALL_APIS) {
    await withTruthServers(async (dir, endpoint) => {
      const out = join(dir, 'run.json');
      const url = `${endpoint.url}${api.startsWith('openai') ? '/v1' : ''}?api_key=${secret}&team=perf`;
      const r = await runCli([...base(api), '--url', url, '--out', out]);
      assert.equal(r.code, 0, `${api}: ${r.stderr}`);
      assert.ok(endpoint.seen.length >= 3, api);
      for (const s of endpoint.seen) assert.ok(s.url.endsWith(`?api_key=${secret}&team=perf`), `${api}: ${s.method} ${s.url} lost the query`);
      assertNoKey(r, secret, out);
      const run = parseRunFile(readFileSync(out, 'utf8'));
      assert.match(run.endpoint.url, /api_key=(%3C|<)redacted(%3E|>)&team=perf/, api);
      assert.match(r.stdout, /api_key=(%3C|<)redacted(%3E|>)/, api);
    }, (req, res) => {
      if (req.method === 'GET') return answerGet(api, pathOf(req.url!), res);
      answerStream(api, res);
    });
  }
});

test('5. a server that echoes the key (response id, x-request-id, an error message, a failing preflight) gets it scrubbed from every output', async () => {
  for (const api of ALL_APIS) {
    let posts = 0;
    await withTruthServers(async (dir, endpoint) => {
      const out = join(dir, 'run.json');
      const r = await runCli([...base(api, 2), '--url', endpoint.url, '--api-key-env', 'LLMP_TEST_KEY', '--out', out]);
      assert.equal(r.code, 1, `${api}: ${r.stderr}`);
      assert.ok(endpoint.seen.every((s) => s.headers.authorization === `Bearer ${KEY}`), api);
      assertNoKey(r, KEY, out);
      const run = parseRunFile(readFileSync(out, 'utf8'));
      assert.equal(run.summary.completed, 1, `${api}: the good request is kept`);
      const text = readFileSync(out, 'utf8');
      assert.ok(text.includes('<redacted>'), `${api}: the echoes were there, and replaced`);
      assert.match(r.stdout, /first: request \d+: .*<redacted>/, api);
    }, (req, res, seen) => {
      const key = keyOf(seen.headers);
      if (req.method === 'GET') return answerGet(api, pathOf(req.url!), res, 'm');
      if (tokenizerRoute(req)) return sendJson(res, 404, {});
      if (++posts === 1) return answerStream(api, res, 3, { id: `chatcmpl-${key}`, headers: { 'x-request-id': key } });
      startStream(api, res, { 'x-request-id': `req-${key}` });
      res.end(tokenEvent(api, 'a') + errorEvent(api, `invalid api key ${key} for this model`));
    });
    // A preflight that fails with the key in its body.
    await withTruthServers(async (_dir, endpoint) => {
      const r = await runCli([...base(api), '--url', endpoint.url, '--model', 'm', '--api-key-env', 'LLMP_TEST_KEY']);
      assert.equal(r.code, 1, api);
      assert.match(r.stderr, /HTTP 500/, api);
      assert.match(r.stderr, /<redacted>/, api);
      assertNoKey(r, KEY);
    }, (_req, res, seen) => sendJson(res, 500, { error: { message: `backend rejected key ${keyOf(seen.headers)}` } }));
  }
});

test('6. secret-looking --header names are refused (pointing to --api-key-env), CR/LF is a usage error; nothing is sent and no value printed', async () => {
  await withTruthServers(async (_dir, endpoint) => {
    for (const header of ['X-Api-Key: hv-7788aa', 'Api-Key: hv-7788aa', 'x-auth-token: hv-7788aa', 'Cookie: session=hv-7788aa', 'Proxy-Authorization: Basic hv-7788aa']) {
      const r = await runCli([...base('openai-chat'), '--url', endpoint.url, '--header', header]);
      assert.equal(r.code, 2, `${header}: ${r.stderr}`);
      assert.match(r.stderr, /--api-key-env/, header);
      assertNoKey(r, 'hv-7788aa');
    }
    for (const header of ['X-Team: a\r\nX-Injected: 1', 'X-Team: a\nb', 'X Team: a', 'X-Team: a\u001b[2J']) {
      const r = await runCli([...base('openai-chat'), '--url', endpoint.url, '--header', header]);
      assert.equal(r.code, 2, `${JSON.stringify(header)}: ${r.stderr}`);
      assert.match(r.stderr, /--header/, header);
      assert.ok(!r.stderr.includes('\u001b') && !r.stderr.includes('X-Injected'), JSON.stringify(r.stderr));
    }
    assert.deepEqual(endpoint.seen, [], 'no request was made');
  }, (_req, res) => sendJson(res, 200, {}));
});

// eslint-disable-next-line no-control-regex -- the controls are what is looked for
const ESCAPES = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

test('7. terminal escapes from a server (model name, ids, error messages) never reach the terminal', async () => {
  const evil = 'evil\u001b]0;pwned\u0007\u001b[2J\u009b31m\u202emodel';
  for (const api of ALL_APIS) {
    let posts = 0;
    await withTruthServers(async (dir, endpoint) => {
      const out = join(dir, 'run.json');
      const r = await runCli([...base(api, 2), '--url', endpoint.url, '--out', out]);
      assert.equal(r.code, 1, `${api}: ${r.stderr}`);
      assert.ok(!ESCAPES.test(r.stdout.replace(/\r?\n/g, '')), `${api}: stdout ${JSON.stringify(r.stdout)}`);
      assert.ok(!ESCAPES.test(r.stderr.replace(/\r?\n/g, '')), `${api}: stderr ${JSON.stringify(r.stderr)}`);
      assert.match(r.stdout, /evil.*model/, `${api}: the model name is shown, cleaned`);
      const run = parseRunFile(readFileSync(out, 'utf8'));
      assert.equal(run.summary.completed, 1, api);
    }, (req, res) => {
      if (req.method === 'GET') return answerGet(api, pathOf(req.url!), res, evil);
      if (tokenizerRoute(req)) return sendJson(res, 404, {});
      if (++posts === 1) return answerStream(api, res, 3, { id: `id\u001b[2J${evil}` });
      startStream(api, res);
      res.end(tokenEvent(api, 'a') + errorEvent(api, `boom \u001b[31m${evil}\u001b[0m\r\u001bc`));
    });
  }
});

test('8. a 5 MB error message is capped in the output and the run file', async () => {
  for (const api of ALL_APIS) {
    await withTruthServers(async (dir, endpoint) => {
      const out = join(dir, 'run.json');
      const r = await runCli([...base(api), '--url', endpoint.url, '--model', 'm', '--out', out]);
      assert.equal(r.code, 1, `${api}: ${r.stderr}`);
      assert.ok(r.stdout.length + r.stderr.length < 20_000, `${api}: ${r.stdout.length + r.stderr.length} characters printed`);
      const run: RunFile = parseRunFile(readFileSync(out, 'utf8'));
      const message = run.requests[0]!.error?.message ?? '';
      assert.equal(run.requests[0]!.error?.kind, 'server', api);
      assert.ok(message.length <= 600, `${api}: ${message.length} characters stored`);
      assert.match(message, /… \(50000\d\d characters\)$/, api);
    }, (req, res) => {
      if (req.method === 'GET') return answerGet(api, pathOf(req.url!), res);
      startStream(api, res);
      res.end(tokenEvent(api, 'a') + errorEvent(api, 'E'.repeat(5_000_000)));
    });
  }
});

test('8. an HTML page or a gzip-compressed reply is named as such, not only "malformed"', async () => {
  for (const api of ALL_APIS) {
    let mode: 'html' | 'gzip' = 'html';
    await withTruthServers(async (_dir, endpoint) => {
      const html = await runCli([...base(api), '--url', endpoint.url, '--model', 'm']);
      assert.equal(html.code, 1, api);
      assert.match(html.stdout, /HTML page \(content-type: text\/html\)/, `${api}: ${html.stdout}`);
      mode = 'gzip';
      const gz = await runCli([...base(api), '--url', endpoint.url, '--model', 'm']);
      assert.equal(gz.code, 1, api);
      assert.match(gz.stdout, /compressed \(content-encoding: gzip\)/, `${api}: ${gz.stdout}`);
    }, (req, res) => {
      if (req.method === 'GET') return answerGet(api, pathOf(req.url!), res);
      if (mode === 'html') {
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        return res.end('<!doctype html><html><body><h1>Sign in</h1></body></html>');
      }
      const body = gzipSync(tokenEvent(api, 'a').repeat(3) + endEvents(api));
      res.writeHead(200, { 'content-type': api === 'ollama' ? 'application/x-ndjson' : 'text/event-stream', 'content-encoding': 'gzip' });
      res.end(body);
    });
  }
});

test('8. --out is checked before the run: a missing folder or a symlink is refused (exit 2) and nothing is sent', async () => {
  await withTruthServers(async (dir, endpoint) => {
    const missing = await runCli([...base('openai-chat'), '--url', endpoint.url, '--out', join(dir, 'no-such-folder', 'run.json')]);
    assert.equal(missing.code, 2, missing.stderr);
    assert.match(missing.stderr, /--out: the folder .*no-such-folder does not exist/);
    const link = join(dir, 'run.json');
    symlinkSync(join(dir, 'target.json'), link);
    const linked = await runCli([...base('openai-chat'), '--url', endpoint.url, '--out', link]);
    assert.equal(linked.code, 2, linked.stderr);
    assert.match(linked.stderr, /symbolic link/);
    assert.ok(lstatSync(link).isSymbolicLink() && readlinkSync(link) === join(dir, 'target.json'), 'the link is left as it was');
    assert.ok(!existsSync(join(dir, 'target.json')), 'nothing written through it');
    assert.deepEqual(endpoint.seen, [], 'no request was made');
  }, (_req, res) => sendJson(res, 200, {}));
});

test('8. sweep refuses a user:password@ URL as run does, without printing the password', async () => {
  for (const command of ['run', 'sweep']) {
    const r = await runCli([command, '--url', 'http://user:pw-55aa66bb@127.0.0.1:9/v1', '--api', 'openai-chat']);
    assert.equal(r.code, 2, `${command}: ${r.stderr}`);
    assert.match(r.stderr, /must not carry credentials/, command);
    assertNoKey(r, 'pw-55aa66bb');
  }
});
