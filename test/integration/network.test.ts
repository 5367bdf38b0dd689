// Remote endpoints as they are: an https:// endpoint with a private CA, reached through a real
// forward proxy (CONNECT) or directly; plain http:// through the proxy (absolute-form); NO_PROXY and
// loopback rules; a proxy that wants credentials (407) or is down; certificates that are untrusted,
// expired or for another host. The proxy logs what it carried and the server what it answered, and
// the tests assert against those logs, through the CLI's own code (jobCommand) and the engine.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runWorkload } from '../../src/engine/run/runner';
import { proxyFor } from '../../src/engine/transport/connections';
import type { NetworkSpec, RunFile } from '../../src/engine/core/types';
import { defaultWorkload } from '../../src/engine/core/workload';
import { runJobCommand } from '../support/cli';
import type { CliResult } from '../support/cli';
import { startForwardProxy } from '../support/forwardProxy';
import type { ForwardProxy } from '../support/forwardProxy';
import { startScriptedServer } from '../support/scriptedServer';
import type { ScriptedServer } from '../support/scriptedServer';
import { makeTestCerts } from '../support/tlsCerts';
import type { TestCerts } from '../support/tlsCerts';

let certs: TestCerts;
let dir: string;
let proxy: ForwardProxy;
let authProxy: ForwardProxy;
let https: ScriptedServer;
let http: ScriptedServer;

const PASSWORD = 's3cret-proxy-pw';

before(async () => {
  certs = makeTestCerts();
  dir = mkdtempSync(join(tmpdir(), 'llmp-net-'));
  proxy = await startForwardProxy();
  authProxy = await startForwardProxy({ user: 'alice', password: PASSWORD });
  https = await startScriptedServer({ tls: certs.server, ttftMs: 40, itlMs: 5, tokens: 8 });
  http = await startScriptedServer({ ttftMs: 40, itlMs: 5, tokens: 8 });
});

after(async () => {
  await Promise.all([proxy.close(), authProxy.close(), https.close(), http.close()]);
  certs.remove();
  rmSync(dir, { recursive: true, force: true });
});

/** The CLI's `run`, in this process, with its own environment (no proxy variable of the machine leaks in). */
function cli(args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  return runJobCommand('run', [...args, '--requests', '4', '--concurrency', '2', '--max-tokens', '8'], { env: { PATH: process.env.PATH ?? '', ...env }, cwd: dir });
}

function runFile(name: string): RunFile {
  return JSON.parse(readFileSync(join(dir, name), 'utf8')) as RunFile;
}

const hostPort = (url: string): string => new URL(url).host;

test('an https endpoint with a private CA, through a real forward proxy (CONNECT), from the CLI', async () => {
  const before = proxy.log.length;
  const r = await cli(['--url', https.url, '--api', 'openai-chat', '--proxy', proxy.url, '--ca-file', certs.caFile, '--out', 'via-proxy.json']);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, new RegExp(`via proxy ${proxy.url.replace(/[./]/g, '\\$&')}`));
  const carried = proxy.log.slice(before);
  assert.ok(carried.length > 0, 'the proxy carried nothing');
  assert.ok(carried.every((e) => e.method === 'CONNECT' && e.target === hostPort(https.url)), JSON.stringify(carried));
  const run = runFile('via-proxy.json');
  assert.equal(run.summary.completed, 4);
  assert.equal(run.endpoint.proxy, proxy.url);
  assert.deepEqual(run.endpoint.tls?.ca, [certs.caFile]);
  // Set-up is recorded apart: a tunnel and a TLS handshake per warmed connection, none of it in TTFT.
  const hs = run.connection?.handshakes ?? [];
  assert.equal(hs.length, 2);
  for (const h of hs) {
    assert.ok(h.tunnelMs !== undefined && h.tunnelMs > 0, JSON.stringify(h));
    assert.ok(h.tlsMs !== undefined && h.tlsMs > 0, JSON.stringify(h));
    assert.ok(Math.abs(h.totalMs - h.tunnelMs - h.tlsMs) < 1, JSON.stringify(h));
  }
  // The server waited 40 ms from the request's arrival: TTFT is that plus the proxy's relay, not the handshakes.
  for (const q of run.requests.filter((x) => !x.warmup)) assert.ok(q.ttftMs! >= 39 && q.ttftMs! < 40 + 150, `ttft ${q.ttftMs}`);
  assert.match(r.stdout, /Connections:\s+2 warmed: .*proxy tunnel .*TLS/);
  assert.match(r.stdout, /via proxy/);
});

test('the same endpoint directly: TCP and TLS timed apart, no proxy in the run file', async () => {
  const before = proxy.log.length;
  const r = await cli(['--url', https.url, '--api', 'openai-chat', '--ca-file', certs.caFile, '--out', 'direct.json'], { HTTPS_PROXY: proxy.url });
  assert.equal(r.code, 0, r.stderr);
  // Loopback goes direct although HTTPS_PROXY is set (as Go and Chrome do): the proxy saw nothing.
  assert.equal(proxy.log.length, before);
  const run = runFile('direct.json');
  assert.equal(run.endpoint.proxy, undefined);
  for (const h of run.connection?.handshakes ?? []) {
    assert.ok(h.tcpMs !== undefined && h.tlsMs !== undefined && h.tunnelMs === undefined, JSON.stringify(h));
  }
});

test('NO_PROXY is honoured, and --no-proxy ignores the environment', async () => {
  const before = proxy.log.length;
  const r = await cli(['--url', http.url, '--api', 'openai-chat', '--proxy', proxy.url], { NO_PROXY: 'example.com, 127.0.0.0/8' });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(proxy.log.length, before, 'NO_PROXY 127.0.0.0/8 should have sent it direct');
  // Name, suffix, port and CIDR rules, as curl and Go read them.
  const net: NetworkSpec = { proxy: 'http://p:3128', noProxy: ['.corp.example', 'api.test:8443', '10.0.0.0/8'] };
  assert.equal(proxyFor('https://x.corp.example/v1', net), undefined);
  assert.equal(proxyFor('https://corp.example', net), undefined);
  assert.equal(proxyFor('https://api.test:8443', net), undefined);
  assert.equal(proxyFor('https://api.test', net), 'http://p:3128');
  assert.equal(proxyFor('http://10.2.3.4:8000', net), undefined);
  assert.equal(proxyFor('http://11.2.3.4:8000', net), 'http://p:3128');
  assert.equal(proxyFor('http://localhost:8000', net), undefined);
  assert.equal(proxyFor('http://[::1]:8000', net), undefined);
  assert.equal(proxyFor('http://localhost:8000', { ...net, proxyLoopback: true }), 'http://p:3128');
  const direct = await cli(['--url', https.url, '--api', 'openai-chat', '--no-proxy', '--ca-file', certs.caFile], { HTTPS_PROXY: 'http://127.0.0.1:9' });
  assert.equal(direct.code, 0, direct.stderr);
});

test('a plain http endpoint through the proxy goes as absolute-form requests', async () => {
  const before = proxy.log.length;
  const w = defaultWorkload({ mode: { kind: 'closed', concurrency: 2 }, requests: 4, warmup: 0, maxTokens: 8 });
  const run = await runWorkload({ url: http.url, api: 'openai-chat', model: 'scripted-model' }, w, { network: { proxy: proxy.url, proxyLoopback: true } });
  assert.equal(run.summary.completed, 4, JSON.stringify(run.requests.map((q) => q.error)));
  const carried = proxy.log.slice(before);
  assert.ok(carried.some((e) => e.method === 'POST' && e.target === `${http.url}/v1/chat/completions`), JSON.stringify(carried));
  assert.ok(carried.every((e) => e.method !== 'CONNECT'));
  assert.equal(run.endpoint.proxy, proxy.url);
});

test('a proxy that wants credentials: 407 names the proxy; with them the run works and the password is nowhere', async () => {
  const refused = await cli(['--url', https.url, '--api', 'openai-chat', '--proxy', authProxy.url, '--ca-file', certs.caFile]);
  assert.equal(refused.code, 1);
  assert.match(refused.stderr, new RegExp(`the proxy ${authProxy.url.replace(/[./]/g, '\\$&')} requires authentication \\(HTTP 407`));
  assert.doesNotMatch(refused.stderr, new RegExp(`cannot connect to ${https.url.replace(/[./]/g, '\\$&')}`));
  const ok = await cli(['--url', https.url, '--api', 'openai-chat', '--proxy', authProxy.authUrl, '--ca-file', certs.caFile, '--out', 'auth.json']);
  assert.equal(ok.code, 0, ok.stderr);
  assert.ok(authProxy.log.some((e) => e.method === 'CONNECT' && e.authorized));
  const text = readFileSync(join(dir, 'auth.json'), 'utf8');
  assert.ok(!text.includes(PASSWORD) && !ok.stderr.includes(PASSWORD) && !ok.stdout.includes(PASSWORD));
  assert.equal(runFile('auth.json').endpoint.proxy, authProxy.url);
});

test('a proxy that is down: the error names the proxy, not the endpoint', async () => {
  const down = 'http://127.0.0.1:9';
  const r = await cli(['--url', https.url, '--api', 'openai-chat', '--proxy', down, '--ca-file', certs.caFile]);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /cannot connect to the proxy http:\/\/127\.0\.0\.1:9 \(connection refused, nothing listens on that port; ECONNREFUSED\): is it running\?/);
  // Detection goes through the proxy too, and says the same.
  const auto = await cli(['--url', https.url, '--proxy', down, '--ca-file', certs.caFile]);
  assert.equal(auto.code, 1);
  assert.match(auto.stderr, /cannot connect to the proxy http:\/\/127\.0\.0\.1:9/);
});

test('certificates: untrusted, expired, another host; --insecure only by opt-in, with a warning in the output and the run file', async () => {
  const untrusted = await cli(['--url', https.url, '--api', 'openai-chat']);
  assert.equal(untrusted.code, 1);
  assert.match(untrusted.stderr, /signed by a CA this machine does not trust .*--ca-file/);
  const expired = await startScriptedServer({ tls: certs.expired });
  const wrong = await startScriptedServer({ tls: certs.wrongHost });
  try {
    const e = await cli(['--url', expired.url, '--api', 'openai-chat', '--ca-file', certs.caFile]);
    assert.equal(e.code, 1);
    assert.match(e.stderr, /the certificate of https:\/\/127\.0\.0\.1:\d+ has expired \(CERT_HAS_EXPIRED\)/);
    const w = await cli(['--url', wrong.url, '--api', 'openai-chat', '--ca-file', certs.caFile]);
    assert.equal(w.code, 1);
    assert.match(w.stderr, /is not for the host "127\.0\.0\.1" \(it names DNS:other\.test\)/);
    // Through the proxy, the same words (the tunnel's TLS error is unwrapped).
    const wp = await cli(['--url', wrong.url, '--api', 'openai-chat', '--ca-file', certs.caFile, '--proxy', proxy.url]);
    assert.equal(wp.code, 1);
    assert.match(wp.stderr, /is not for the host "127\.0\.0\.1".*through the proxy/);
    const insecure = await cli(['--url', expired.url, '--api', 'openai-chat', '--insecure', '--out', 'insecure.json']);
    assert.equal(insecure.code, 0, insecure.stderr);
    assert.match(insecure.stderr, /warning: certificates are not checked \(--insecure\)/);
    assert.equal(runFile('insecure.json').endpoint.tls?.insecure, true);
    assert.match(insecure.stdout, /certificates not checked/);
  } finally {
    await Promise.all([expired.close(), wrong.close()]);
  }
  // A CA file that is not one: the flag and the file are named.
  const bad = await cli(['--url', https.url, '--api', 'openai-chat', '--ca-file', join(dir, 'nope.pem')]);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /--ca-file: cannot read .*nope\.pem \(no such file\)/);
});

test('HTTP_PROXY and HTTPS_PROXY set: every spelling of loopback goes direct, the key never passes the proxy', async () => {
  const port = http.port;
  // Spellings that reach the server here, and ones that name this machine but do not resolve or
  // connect in every container (localhost. and *.localhost need a resolver that knows them; [::] a
  // listener on ::1): those must still not go to the proxy.
  const reaching = ['localhost', 'LOCALHOST', '127.1', '0.0.0.0', '[::ffff:127.0.0.1]', '[::ffff:7f00:1]', '[0:0:0:0:0:ffff:7f00:1]', '[::ffff:0.0.0.0]'];
  const others = ['localhost.', 'LocalHost.', 'ollama.localhost', '[::]'];
  const env = { HTTP_PROXY: proxy.url, HTTPS_PROXY: proxy.url, ALL_PROXY: proxy.url, KEY: 'sk-loopback-secret' };
  for (const host of [...reaching, ...others]) {
    const before = proxy.log.length;
    const served = http.log.length;
    const r = await runJobCommand('run', ['--url', `http://${host}:${port}`, '--api', 'openai-chat', '--api-key-env', 'KEY', '--requests', '1', '--max-tokens', '4'], { env: { PATH: process.env.PATH ?? '', ...env }, cwd: dir });
    assert.deepEqual(proxy.log.slice(before), [], `${host}: the proxy carried a request`);
    assert.doesNotMatch(r.stderr, /via proxy/, host);
    if (reaching.includes(host)) {
      assert.equal(r.code, 0, `${host}: ${r.stderr}`);
      assert.ok(http.log.length > served, `${host}: the server saw nothing`);
    }
  }
});

test('usage errors for each flag and variable that takes a URL never show its password', async () => {
  const pw = 'Secr3t-pw-77';
  const cases: { args: string[]; env?: Record<string, string>; flag: RegExp }[] = [
    { args: ['--url', `user:${pw}@host:8000`], flag: /--url /ms },
    { args: ['--url', http.url, '--proxy', `user:${pw}@host:3128`], flag: /--proxy /ms },
    { args: ['--url', http.url, '--proxy', `socks5://user:${pw}@host:1080`], flag: /--proxy /ms },
    { args: ['--url', http.url, '--proxy', `http://user:${pw}@host:3128/path`], flag: /--proxy /ms },
    { args: ['--url', http.url, '--otlp-endpoint', `user:${pw}@host:4318`], flag: /--otlp-endpoint /ms },
    { args: ['--url', http.url, '--otlp-endpoint', `grpc://user:${pw}@host:4317`], flag: /--otlp-endpoint /ms },
    { args: ['--url', 'https://api.example.com:1'], env: { HTTPS_PROXY: `socks5://user:${pw}@host:1080` }, flag: /HTTPS_PROXY /ms },
    { args: [`http://user:${pw}@host:8000`], flag: /unexpected argument/ms },
  ];
  for (const c of cases) {
    const r = await runJobCommand('run', c.args, { env: { PATH: process.env.PATH ?? '', ...c.env }, cwd: dir });
    assert.equal(r.code, 2, `${c.args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, c.flag);
    assert.ok(!r.stderr.includes(pw) && !r.stdout.includes(pw), r.stderr);
  }
});
