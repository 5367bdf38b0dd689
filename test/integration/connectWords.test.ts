// A connection that fails is said in the same words by the run (the CLI, in this process), by detection
// and by the reachability check the sidebar and the URL boxes show (src/engine/transport/connections.ts
// cannotConnect, src/present/endpointText.ts reachText), against real sockets on 127.0.0.1: a port
// nothing listens on (given as host:port, which the CLI takes as http://), a proxy nothing listens on
// (named as the proxy, never blamed on the endpoint's port), and a real HTTP proxy that refuses the tunnel.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { checkReach } from '../../src/engine/transport/detect';
import { reachText } from '../../src/present/endpointText';
import { runJobCommand } from '../support/cli';
import { closedPort, closerOf, listenOnLoopback } from '../support/listen';
import { startScriptedServer, type ScriptedServer } from '../support/scriptedServer';

let dir: string;
let endpoint: ScriptedServer;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'llmp-connect-words-'));
  endpoint = await startScriptedServer({ ttftMs: 5, itlMs: 1, model: 'words-model', apis: ['openai-chat'] });
});

after(async () => {
  await endpoint.close();
  rmSync(dir, { recursive: true, force: true });
});

/** `llm-profiler run` in this process, no proxy variable from this machine's environment. */
function run(args: readonly string[]) {
  return runJobCommand('run', [...args, '--requests', '1', '--max-tokens', '4'], { env: { PATH: process.env.PATH ?? '' }, cwd: dir });
}

/** The sentence after "not reachable: ". */
function sentenceOf(reach: Awaited<ReturnType<typeof checkReach>>): string {
  const text = reachText(reach);
  assert.match(text, /^not reachable: /);
  return text.slice('not reachable: '.length);
}

test('a port nothing listens on: the reachability check and the run (--url host:port, taken as http://) say the same words', async () => {
  const port = await closedPort();
  const url = `http://127.0.0.1:${port}`;
  const said = `cannot connect to ${url} (connection refused, nothing listens on that port; ECONNREFUSED)`;
  const reach = await checkReach(url, 3000);
  assert.equal(reachText(reach), `not reachable: ${said}`);
  // the CLI takes host:port (no scheme) as http:// and fails to connect, in the same words, with the API given and detected
  for (const api of [['--api', 'openai-chat'], []]) {
    const r = await run(['--url', `127.0.0.1:${port}`, ...api]);
    assert.equal(r.code, 1, r.stderr);
    assert.doesNotMatch(r.stderr, /--url/, 'not a usage error');
    assert.ok(r.stderr.includes(said), `${api.join(' ') || 'detected'}: ${r.stderr}`);
  }
});

test('host:port of a live server: the run goes, and its header says the URL as taken (http://)', async () => {
  const r = await run(['--url', `127.0.0.1:${endpoint.port}`]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, new RegExp(`^Endpoint: +http://127\\.0\\.0\\.1:${endpoint.port} \\(openai-chat, detected`, 'm'));
});

test('a proxy nothing listens on: the check names the proxy (not the endpoint\'s port), in the run\'s words', async () => {
  const proxy = `http://127.0.0.1:${await closedPort()}`;
  const reach = await checkReach(endpoint.url, 3000, { proxy, proxyLoopback: true });
  assert.equal(reach.reachable, false);
  const said = sentenceOf(reach);
  assert.equal(said, `cannot connect to the proxy ${proxy} (connection refused, nothing listens on that port; ECONNREFUSED): is it running? (the endpoint was not tried)`);
  assert.ok(!said.includes(endpoint.url), 'the endpoint is not blamed');
  const r = await run(['--url', endpoint.url, '--api', 'openai-chat', '--proxy', proxy]);
  assert.equal(r.code, 1, r.stderr);
  assert.ok(r.stderr.includes(said), r.stderr);
});

test('a real HTTP proxy that refuses the tunnel (403 to CONNECT): the check and the run both name the proxy and its answer', async () => {
  const refusing: Server = createServer((req, res) => { req.resume(); res.writeHead(403).end(); });
  refusing.on('connect', (_req, socket) => { socket.end('HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\n\r\n'); });
  const { url: proxy, sockets } = await listenOnLoopback(refusing);
  try {
    // an https endpoint goes through a CONNECT tunnel; nothing needs to listen there, the proxy refuses first
    const target = `https://127.0.0.1:${await closedPort()}`;
    const reach = await checkReach(target, 3000, { proxy, proxyLoopback: true });
    const said = sentenceOf(reach);
    assert.equal(said, `the proxy ${proxy} refused a tunnel to ${new URL(target).host} (HTTP 403 to CONNECT)`);
    const r = await run(['--url', target, '--api', 'openai-chat', '--proxy', proxy]);
    assert.equal(r.code, 1, r.stderr);
    assert.ok(r.stderr.includes(said), r.stderr);
  } finally {
    await closerOf(refusing, sockets)();
  }
});
