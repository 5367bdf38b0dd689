// The one loopback rule (src/engine/transport/loopback.ts), in every spelling a URL can give a host on this
// machine, and the places that use it: the engine's proxy choice and the extension's "no key needed".
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isLoopbackHost, isLoopbackUrl } from '../../src/engine/transport/loopback';
import { proxyFor } from '../../src/engine/transport/connections';
import { buildNetwork } from '../../src/jobs/networkSpec';

/** Hosts that reach this machine, as a user may write them in a URL. */
const LOOPBACK_URLS = [
  'http://localhost:8000',
  'http://LOCALHOST:8000',
  'http://localhost.:8000',
  'http://LocalHost.:8000/v1',
  'http://ollama.localhost:8000',
  'http://ollama.localhost.:8000',
  'http://127.0.0.1:8000',
  'http://127.0.0.1.:8000',
  'http://127.1:8000',
  'http://127.254.3.9:8000',
  'http://0x7f.1:8000',
  'http://2130706433:8000',
  'http://0.0.0.0:8000',
  'http://0:8000',
  'http://[::1]:8000',
  'http://[0:0:0:0:0:0:0:1]:8000',
  'http://[::]:8000',
  'http://[::ffff:127.0.0.1]:8000',
  'http://[::ffff:7f00:1]:8000',
  'http://[0:0:0:0:0:ffff:127.0.0.1]:8000',
  'http://[::FFFF:7F01:203]:8000',
  'http://[::ffff:0.0.0.0]:8000',
  'https://local%68ost:8443',
];

const ELSEWHERE = [
  'https://api.openai.com',
  'http://10.0.0.2:8000',
  'http://128.0.0.1:8000',
  'http://0.0.0.1:8000',
  'http://127.0.0.1.evil.example',
  'http://localhost.example.com',
  'http://notlocalhost:8000',
  'http://[::2]:8000',
  'http://[::ffff:a00:2]:8000',
  'http://[::7f00:1]:8000',
  'http://[64:ff9b::7f00:1]:8000',
  'http://[fe80::1]:8000',
  'not a url',
];

test('isLoopbackUrl: every spelling of this machine, and nothing else', () => {
  for (const u of LOOPBACK_URLS) assert.equal(isLoopbackUrl(u), true, u);
  for (const u of ELSEWHERE) assert.equal(isLoopbackUrl(u), false, u);
});

test('isLoopbackHost: bare names and addresses, bracketed or not', () => {
  for (const h of ['localhost', 'localhost.', 'a.b.localhost', '127.0.0.1', '::1', '[::1]', '::', '::ffff:127.0.0.1', '[::ffff:7f00:1]', '0.0.0.0', 'LOCALHOST']) assert.equal(isLoopbackHost(h), true, h);
  for (const h of ['', 'example.com', '10.1.2.3', '::2', 'user@localhost', 'localhost/x', 'evil.com#.localhost']) assert.equal(isLoopbackHost(h), false, h);
});

test('the proxy from the environment is never used for a loopback spelling; an explicit --proxy still is', () => {
  for (const u of LOOPBACK_URLS) {
    const fromEnv = buildNetwork(u, {}, { HTTP_PROXY: 'http://proxy.corp:3128', HTTPS_PROXY: 'http://proxy.corp:3128' }, '/');
    assert.equal(proxyFor(u, fromEnv), undefined, u);
    const explicit = buildNetwork(u, { proxy: 'http://p:1', proxySource: '--proxy' }, {}, '/');
    assert.equal(proxyFor(u, explicit), 'http://p:1', u);
  }
  const remote = buildNetwork('http://10.0.0.2:8000', {}, { HTTP_PROXY: 'http://proxy.corp:3128' }, '/');
  assert.equal(proxyFor('http://10.0.0.2:8000', remote), 'http://proxy.corp:3128');
});

test('NO_PROXY names match a host written with the root\'s trailing dot', () => {
  const n = { proxy: 'http://p:1', noProxy: ['internal.corp'] };
  assert.equal(proxyFor('https://api.internal.corp./v1', n), undefined);
  assert.equal(proxyFor('https://internal.corp.', n), undefined);
  assert.equal(proxyFor('https://internal.corp.example', n), 'http://p:1');
});
