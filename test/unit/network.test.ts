// The network a job runs with, from flags, settings and the environment (src/jobs/networkSpec.ts), and
// which URLs go through the proxy (src/engine/transport/connections.ts proxyFor): the rules curl, Go and VS Code
// users expect.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { networkRecord, proxyFor } from '../../src/engine/transport/connections';
import { buildNetwork, proxyFromEnv } from '../../src/jobs/networkSpec';
import { UsageError } from '../../src/jobs/errors';

const PEM = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';

test('the environment: https_proxy before HTTPS_PROXY for https, http_proxy for http, ALL_PROXY last, bare host:port taken as http://', () => {
  assert.deepEqual(proxyFromEnv({ https_proxy: 'http://a:1', HTTPS_PROXY: 'http://b:2' }, 'https://api.example.com'), { proxy: 'http://a:1', source: 'https_proxy' });
  assert.deepEqual(proxyFromEnv({ HTTPS_PROXY: 'http://b:2', HTTP_PROXY: 'http://c:3' }, 'http://api.example.com'), { proxy: 'http://c:3', source: 'HTTP_PROXY' });
  assert.deepEqual(proxyFromEnv({ ALL_PROXY: 'proxy.corp:3128' }, 'https://api.example.com'), { proxy: 'http://proxy.corp:3128', source: 'ALL_PROXY' });
  assert.equal(proxyFromEnv({ HTTP_PROXY: 'http://c:3' }, 'https://api.example.com'), undefined);
});

test('buildNetwork: environment proxy with NO_PROXY, loopback direct, an explicit --proxy for loopback too, --no-proxy', () => {
  const env = { HTTPS_PROXY: 'http://user:pw@proxy.corp:3128', NO_PROXY: 'internal.corp,.svc' };
  const n = buildNetwork('https://api.example.com', {}, env, '/')!;
  assert.equal(n.proxy, 'http://user:pw@proxy.corp:3128');
  assert.equal(n.proxySource, 'HTTPS_PROXY');
  assert.equal(proxyFor('https://api.example.com/v1', n), n.proxy);
  assert.equal(proxyFor('https://x.internal.corp', n), undefined);
  assert.equal(proxyFor('https://a.b.svc:8443', n), undefined);
  assert.equal(proxyFor('https://127.0.0.1:8443', n), undefined);
  // The run file keeps the proxy without its credentials.
  assert.deepEqual(networkRecord('https://api.example.com', n), { proxy: 'http://proxy.corp:3128' });
  const explicit = buildNetwork('http://127.0.0.1:8000', { proxy: 'http://p:1', proxySource: '--proxy' }, {}, '/')!;
  assert.equal(proxyFor('http://127.0.0.1:8000', explicit), 'http://p:1');
  // A proxy from VS Code's http.proxy does not capture loopback: only --proxy does.
  const setting = buildNetwork('http://127.0.0.1:8000', { proxy: 'http://p:1', proxySource: 'http.proxy' }, {}, '/')!;
  assert.equal(proxyFor('http://127.0.0.1:8000', setting), undefined);
  assert.equal(buildNetwork('https://api.example.com', { direct: true }, env, '/'), undefined);
  assert.throws(() => buildNetwork('https://api.example.com', {}, { HTTPS_PROXY: 'socks5://p:1' }, '/'), (e: Error) => e instanceof UsageError && /HTTPS_PROXY must be an http:\/\/ or https:\/\/ proxy/.test(e.message));
});

test('buildNetwork: CA files read and named; NODE_EXTRA_CA_CERTS kept when a CA replaces Node\'s list; --insecure recorded', () => {
  const dir = mkdtempSync(join(tmpdir(), 'llmp-ca-'));
  try {
    writeFileSync(join(dir, 'ca.pem'), `junk\n${PEM}${PEM}`);
    writeFileSync(join(dir, 'extra.pem'), PEM);
    writeFileSync(join(dir, 'empty.pem'), 'not a certificate');
    const n = buildNetwork('https://h', { caFiles: ['ca.pem'] }, { NODE_EXTRA_CA_CERTS: join(dir, 'extra.pem') }, dir)!;
    assert.equal(n.ca?.length, 3);
    assert.deepEqual(n.caSources, [join(dir, 'ca.pem'), join(dir, 'extra.pem')]);
    assert.throws(() => buildNetwork('https://h', { caFiles: ['empty.pem'] }, {}, dir), /--ca-file: .*empty\.pem holds no PEM certificate/);
    assert.throws(() => buildNetwork('https://h', { caFiles: ['gone.pem'], caFlag: 'llmProfiler.tls.caFile' }, {}, dir), /llmProfiler\.tls\.caFile: cannot read .*gone\.pem \(no such file\)/);
    const insecure = buildNetwork('https://h', { insecure: true }, {}, dir)!;
    assert.deepEqual(networkRecord('https://h', insecure), { tls: { insecure: true } });
    // Without a CA of its own, Node's list (with NODE_EXTRA_CA_CERTS) is used as it is.
    assert.equal(buildNetwork('https://h', {}, { NODE_EXTRA_CA_CERTS: join(dir, 'extra.pem') }, dir), undefined);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
