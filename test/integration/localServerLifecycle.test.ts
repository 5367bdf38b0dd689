// The bundled llama.cpp server's start, failures and stop, and what may talk to it: a tiny synthetic
// model, served by dist/localServer.mjs through the launcher; bad model files, a port in use, a
// server that dies or whose parent dies, `llm-profiler serve`, and no web page (DNS rebinding,
// cross-origin requests) nor an oversize body let through. Nothing here is timed tightly: it shares
// the machine with other test files (localServer.test.ts, which times the server, runs alone).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import type { IncomingHttpHeaders } from 'node:http';
import { connect, createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { startLocalServer, LocalServerError } from '../../src/localServer/launcher';
import type { LocalServerHandle } from '../../src/localServer/types';
import { serveCommand } from '../../src/cli/serve';
import { processesMentioning } from '../support/processes';
import { chat, localServerKit, pidAlive, streamSse, waitFor } from '../support/localServerKit';

const ROOT = join(__dirname, '..', '..');
const kit = localServerKit('llmp-local-life-');
const { start, stop } = kit;

test('bad model files: a clear error naming the file, nothing started', async () => {
  const missing = join(kit.dir, 'missing.gguf');
  const notGguf = join(kit.dir, 'notes.gguf');
  writeFileSync(notGguf, 'hello, I am text');
  const truncated = join(kit.dir, 'truncated.gguf');
  writeFileSync(truncated, readFileSync(kit.modelPath).subarray(0, 3_000_000));
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
  const hang = join(kit.dir, 'hang-llama-server');
  writeFileSync(hang, '#!/bin/sh\necho "fake llama-server: loading forever"\nexec sleep 30\n', { mode: 0o755 });
  await assert.rejects(start({ backend: 'llama-server', llamaServerPath: hang, readyTimeoutMs: 1500 }), (e: Error) => {
    assert.ok(e instanceof LocalServerError);
    assert.match(e.message, /the llama-server server was not ready within 2 s/);
    assert.match(e.message, /--- last server log lines ---\n(.*\n)*fake llama-server: loading forever/);
    return true;
  });
  const die = join(kit.dir, 'die-llama-server');
  writeFileSync(die, '#!/bin/sh\necho "fake llama-server: cannot load the model" >&2\nexit 3\n', { mode: 0o755 });
  await assert.rejects(start({ backend: 'llama-server', llamaServerPath: die }), (e: Error) => {
    assert.ok(e instanceof LocalServerError);
    assert.equal(e.exitCode, 3);
    assert.match(e.message, /exited during start-up \(exit code 3\)[^]*cannot load the model/);
    return true;
  });
  await waitFor(() => processesMentioning(kit.modelPath).length === 0 && processesMentioning(hang).length === 0, 5000, 'nothing left running');
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
  const script = join(kit.dir, 'parent.mts');
  writeFileSync(
    script,
    `import { startLocalServer } from ${JSON.stringify(join(ROOT, 'src', 'localServer', 'launcher.ts'))};\n` +
      `const h = await startLocalServer({ model: { kind: 'file', path: ${JSON.stringify(kit.modelPath)} }, parallel: 1 });\n` +
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
    assert.equal(await serveCommand(['--model', join(kit.dir, 'nope.gguf'), '--quiet']), 1);
    assert.match(err, /nope\.gguf: model file not found/);
  } finally {
    process.stderr.write = origWrite;
  }

  const script = join(kit.dir, 'serve.mts');
  writeFileSync(script, `import { serveCommand } from ${JSON.stringify(join(ROOT, 'src', 'cli', 'serve.ts'))};\nprocess.exitCode = await serveCommand(process.argv.slice(2));\n`);
  const child = spawn(process.execPath, ['--import', 'tsx', script, '--model', kit.modelPath, '--parallel', '1', '--quiet'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
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
