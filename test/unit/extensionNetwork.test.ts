// The extension's side of proxies and TLS, in node: VS Code's http.* settings and llmProfiler.tls.*
// made into buildNetwork's inputs (and through it into the NetworkSpec a job runs with), the OS's CA
// store read on this machine, and the short texts that say "via proxy".
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { rootCertificates } from 'node:tls';
import { insecureWarning, networkRecord, proxyFor } from '../../src/engine/transport/connections';
import { parseSlo } from '../../src/engine/core/slo';
import type { RunFile } from '../../src/engine/core/types';
import { buildConfig, type TlsConfig } from '../../src/extension/configModel';
import { networkPlan, wantsSystemCa, type HttpSettings } from '../../src/extension/networkModel';
import { indexEntry } from '../../src/extension/runStore';
import { UsageError } from '../../src/jobs/errors';
import { buildNetwork } from '../../src/jobs/networkSpec';
import { beyondRoots, LINUX_CA_BUNDLES, MAC_KEYCHAINS, readSystemCa, systemCa, type SystemCaDeps } from '../../src/jobs/systemCa';
import { networkShort, proxyNotice } from '../../src/present/endpointText';
import { runLabel, summaryText } from '../../src/present/runText';

const NO_TLS: TlsConfig = { insecure: false };
const HTTPS = 'https://llm.corp.example:8443/v1';
/** VS Code's defaults for the http.* settings, as getConfiguration('http') returns them. */
const DEFAULTS: HttpSettings = { proxy: '', proxyStrictSSL: true, noProxy: [], proxyAuthorization: null, proxySupport: 'override', systemCertificates: true };

/** settings → NetworkSpec, as the extension does it (minus reading VS Code and the OS store). */
function specFor(url: string, http: HttpSettings, tls: TlsConfig = NO_TLS, env: Record<string, string> = {}, cwd = '/') {
  return buildNetwork(url, networkPlan(http, tls, '/home/me').inputs, env, cwd);
}

test('defaults: nothing asked, nothing set, the OS store wanted for https:// only', () => {
  const plan = networkPlan(DEFAULTS, NO_TLS);
  assert.deepEqual(plan.inputs, {});
  assert.deepEqual(plan.problems, []);
  assert.equal(plan.systemCertificates, true);
  assert.equal(wantsSystemCa(plan, HTTPS), true);
  assert.equal(wantsSystemCa(plan, 'http://127.0.0.1:8000'), false);
  assert.equal(wantsSystemCa(plan, undefined), false, 'the local server');
  assert.equal(wantsSystemCa(networkPlan({ ...DEFAULTS, systemCertificates: false }, NO_TLS), HTTPS), false, 'http.systemCertificates: false');
  assert.equal(specFor(HTTPS, DEFAULTS), undefined, 'no proxy, no CA, checked: a plain direct connection');
});

test('http.proxy, http.noProxy and http.proxyAuthorization map to the inputs, the setting named as the source', () => {
  const plan = networkPlan({ ...DEFAULTS, proxy: ' http://user:s3cret-pw@proxy.corp:3128 ', noProxy: ['internal.corp', ' .svc ', ''], proxyAuthorization: 'Basic dXNlcjpwdw==' }, NO_TLS);
  assert.deepEqual(plan.inputs, { proxy: 'http://user:s3cret-pw@proxy.corp:3128', proxySource: 'http.proxy', noProxy: ['internal.corp', '.svc'], proxyAuthorization: 'Basic dXNlcjpwdw==' });
  const spec = buildNetwork(HTTPS, plan.inputs, { NO_PROXY: 'localhost,.env.corp' }, '/');
  assert.equal(spec?.proxy, 'http://user:s3cret-pw@proxy.corp:3128');
  assert.equal(spec?.proxySource, 'http.proxy');
  assert.deepEqual(spec?.noProxy, ['internal.corp', '.svc', 'localhost', '.env.corp'], 'http.noProxy first, NO_PROXY beside it');
  assert.equal(spec?.proxyAuthorization, 'Basic dXNlcjpwdw==');
  assert.equal(spec?.proxyLoopback, undefined, 'http.proxy is for everything, as HTTPS_PROXY: loopback goes direct, as VS Code itself does');
  assert.equal(proxyFor(HTTPS, spec), 'http://user:s3cret-pw@proxy.corp:3128');
  assert.equal(proxyFor('https://api.internal.corp/v1', spec), undefined, 'http.noProxy honoured');
  assert.equal(proxyFor('https://x.env.corp/v1', spec), undefined, 'NO_PROXY honoured too');
  assert.equal(proxyFor('http://127.0.0.1:8000', spec), undefined, 'loopback direct');
  // the run file's view: no credentials
  const record = networkRecord(HTTPS, spec);
  assert.deepEqual(record, { proxy: 'http://proxy.corp:3128' });
  assert.ok(!JSON.stringify(record).includes('s3cret-pw'));
});

test('an empty http.proxy leaves the environment in charge (HTTPS_PROXY, then ALL_PROXY), as VS Code does', () => {
  const env = { HTTPS_PROXY: 'http://env-proxy:8080', NO_PROXY: '.corp.example' };
  const fromEnv = specFor('https://api.example.com', DEFAULTS, NO_TLS, env);
  assert.equal(fromEnv?.proxy, 'http://env-proxy:8080');
  assert.equal(fromEnv?.proxySource, 'HTTPS_PROXY');
  assert.equal(proxyFor(HTTPS, fromEnv), undefined, 'NO_PROXY from the environment');
  assert.equal(specFor('https://api.example.com', { ...DEFAULTS, proxy: '   ' }, NO_TLS, env)?.proxySource, 'HTTPS_PROXY', 'blank is empty');
  // the setting wins over the environment
  assert.equal(specFor('https://api.example.com', { ...DEFAULTS, proxy: 'http://set:3128' }, NO_TLS, env)?.proxy, 'http://set:3128');
  // http.proxySupport "off": no proxy for extensions, the environment's neither
  const off = networkPlan({ ...DEFAULTS, proxySupport: 'off', proxy: 'http://set:3128', noProxy: ['x'], proxyAuthorization: 'Basic x' }, NO_TLS);
  assert.deepEqual(off.inputs, { direct: true });
  assert.equal(buildNetwork('https://api.example.com', off.inputs, env, '/'), undefined);
});

test('llmProfiler.tls.caFile: read, named in the spec and the run file; ~ is the home folder, a relative path the workspace folder', () => {
  const dir = mkdtempSync(join(tmpdir(), 'llmp-extnet-'));
  try {
    const pem = rootCertificates[0]!;
    writeFileSync(join(dir, 'corp-ca.pem'), `# our CA\n${pem}\n`);
    const rel = specFor(HTTPS, DEFAULTS, { caFile: 'corp-ca.pem', insecure: false }, {}, dir);
    assert.deepEqual(rel?.ca, [pem]);
    assert.deepEqual(rel?.caSources, [join(dir, 'corp-ca.pem')]);
    assert.deepEqual(networkRecord(HTTPS, rel), { tls: { ca: [join(dir, 'corp-ca.pem')] } });
    assert.deepEqual(networkPlan(DEFAULTS, { caFile: '~/certs/ca.pem', insecure: false }, '/home/me').inputs, { caFiles: ['/home/me/certs/ca.pem'], caFlag: 'llmProfiler.tls.caFile' });
    // a bad file: a UsageError that names the setting and the file
    assert.throws(() => specFor(HTTPS, DEFAULTS, { caFile: 'missing.pem', insecure: false }, {}, dir), (e: Error) => {
      assert.ok(e instanceof UsageError);
      assert.match(e.message, /^llmProfiler\.tls\.caFile: cannot read .*missing\.pem \(no such file\)$/);
      return true;
    });
    writeFileSync(join(dir, 'not.pem'), 'hello');
    assert.throws(() => specFor(HTTPS, DEFAULTS, { caFile: 'not.pem', insecure: false }, {}, dir), /^UsageError: llmProfiler\.tls\.caFile: .*not\.pem holds no PEM certificate/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a bad http.proxy is a UsageError naming http.proxy, without the credentials', () => {
  for (const proxy of ['socks5://user:pw-secret-1@proxy:1080', 'proxy.corp:3128/path', 'http://user:pw-secret-1@proxy:3128/some/path', 'not a url @ all']) {
    assert.throws(() => specFor(HTTPS, { ...DEFAULTS, proxy }), (e: Error) => {
      assert.ok(e instanceof UsageError, String(e));
      assert.match(e.message, /^http\.proxy /, e.message);
      assert.ok(!e.message.includes('pw-secret-1'), e.message);
      return true;
    });
  }
});

test('certificates unchecked: llmProfiler.tls.insecure, or http.proxyStrictSSL false, each named in the warning', () => {
  const set = specFor(HTTPS, DEFAULTS, { insecure: true });
  assert.equal(set?.insecure, true);
  assert.match(insecureWarning(HTTPS, set)!, /^certificates are not checked \(llmProfiler\.tls\.insecure\): anyone between here and https:\/\/llm\.corp\.example:8443 could read/);
  const strict = specFor(HTTPS, { ...DEFAULTS, proxyStrictSSL: false });
  assert.equal(strict?.insecure, true);
  assert.match(insecureWarning(HTTPS, strict)!, /\(http\.proxyStrictSSL: false\)/);
  assert.deepEqual(networkRecord(HTTPS, strict), { tls: { insecure: true } }, 'the run file says so');
  assert.equal(specFor(HTTPS, { ...DEFAULTS, proxyStrictSSL: true }), undefined);
  assert.equal(specFor(HTTPS, { ...DEFAULTS, proxyStrictSSL: undefined }), undefined, 'unset: checked');
});

test('values of the wrong type are ignored and reported, a secret never repeated', () => {
  const plan = networkPlan({ proxy: { url: 'http://u:pw-in-object@p:1' }, noProxy: 'a,b', proxyAuthorization: 42, proxyStrictSSL: 'no', systemCertificates: 'yes' }, NO_TLS);
  assert.deepEqual(plan.inputs, {});
  assert.equal(plan.systemCertificates, true);
  const text = plan.problems.map((p) => `${p.setting}: ${p.message}`).join('\n');
  for (const want of [/^http\.proxy: must be a string; ignored$/m, /^http\.noProxy: must be an array/m, /^http\.proxyAuthorization: must be a string; ignored$/m, /^http\.proxyStrictSSL: must be true or false/m, /^http\.systemCertificates: must be true or false/m]) assert.match(text, want);
  assert.ok(!text.includes('pw-in-object'));
  const mixed = networkPlan({ ...DEFAULTS, noProxy: ['ok.corp', 7] }, NO_TLS);
  assert.deepEqual(mixed.inputs.noProxy, ['ok.corp']);
  assert.equal(mixed.problems.length, 1);
});

test('llmProfiler.tls.* in the settings snapshot: defaults, values, bad types reported', () => {
  assert.deepEqual(buildConfig({ values: {}, endpoints: {} }, parseSlo).config.tls, { insecure: false });
  assert.deepEqual(buildConfig({ values: { 'tls.caFile': ' /etc/corp/ca.pem ', 'tls.insecure': true }, endpoints: {} }, parseSlo).config.tls, { caFile: '/etc/corp/ca.pem', insecure: true });
  assert.deepEqual(buildConfig({ values: { 'tls.caFile': '' }, endpoints: {} }, parseSlo).config.tls, { insecure: false }, 'empty: none');
  const bad = buildConfig({ values: { 'tls.caFile': 3, 'tls.insecure': 'yes' }, endpoints: {} }, parseSlo);
  assert.deepEqual(bad.config.tls, { insecure: false });
  assert.deepEqual(bad.problems.map((p) => p.setting).sort(), ['llmProfiler.tls.caFile', 'llmProfiler.tls.insecure']);
});

test('systemCa on this machine: the distribution bundle is read, and only what Node lacks is kept', { skip: process.platform !== 'linux' && 'Linux only' }, async () => {
  const bundle = LINUX_CA_BUNDLES.find((f) => existsSync(f));
  const r = await readSystemCa();
  if (bundle === undefined) {
    assert.match(r.note ?? '', /no CA bundle found/);
    return;
  }
  assert.equal(r.from, bundle);
  assert.equal(r.note, undefined);
  const inFile = readFileSync(bundle, 'utf8').match(/-----BEGIN CERTIFICATE-----/g)!.length;
  assert.equal(r.total, inFile);
  assert.ok(r.total > 50, `${r.total} certificates in ${bundle}`);
  const roots = new Set(rootCertificates.map((p) => p.replace(/-----[A-Z ]+-----|\s/g, '')));
  assert.ok(r.ca.every((p) => p.startsWith('-----BEGIN CERTIFICATE-----') && !roots.has(p.replace(/-----[A-Z ]+-----|\s/g, ''))), 'none of Node\'s own roots again');
  assert.ok(r.ca.length < r.total);
  console.log(`# ${bundle}: ${r.total} certificates, ${r.ca.length} beyond Node's ${rootCertificates.length} roots`);
  assert.equal(await systemCa(), await systemCa(), 'read once per process');
  // what the extension then does with it: the certificates trusted, "system" in the run file
  const spec = buildNetwork(HTTPS, { extraCa: { ca: r.ca, source: 'system' } }, {}, '/');
  if (r.ca.length > 0) assert.deepEqual(networkRecord(HTTPS, spec), { tls: { ca: ['system'] } });
});

function fakeDeps(over: Partial<SystemCaDeps>): SystemCaDeps {
  return { platform: 'linux', readFile: async () => { throw new Error('ENOENT'); }, run: async () => { throw new Error('no'); }, roots: [], ...over };
}

test('systemCa elsewhere: the first bundle that exists, the macOS keychains, Windows said not read', async () => {
  const corp = '-----BEGIN CERTIFICATE-----\nQ09SUA==\n-----END CERTIFICATE-----';
  const node = '-----BEGIN CERTIFICATE-----\nTk9ERQ==\n-----END CERTIFICATE-----';
  const read: string[] = [];
  const fedora = await readSystemCa(fakeDeps({
    readFile: async (p) => { read.push(p); if (p === '/etc/pki/tls/certs/ca-bundle.crt') return `${node}\n${corp}\n${corp.replace(/\n/g, '\r\n')}\n`; throw new Error('ENOENT'); },
    roots: [node.replace('Tk9ERQ==', 'Tk9E\nRQ==')],
  }));
  assert.deepEqual(read, ['/etc/ssl/certs/ca-certificates.crt', '/etc/pki/tls/certs/ca-bundle.crt']);
  assert.deepEqual(fedora, { ca: [corp], total: 3, from: '/etc/pki/tls/certs/ca-bundle.crt' }, 'Node\'s root left out whatever its line breaks; the CRLF copy counted once');
  assert.match((await readSystemCa(fakeDeps({}))).note!, /^no CA bundle found \(looked for \/etc\/ssl\/certs\/ca-certificates\.crt, /);

  const calls: string[][] = [];
  const mac = await readSystemCa(fakeDeps({ platform: 'darwin', run: async (file, args) => { calls.push([file, ...args]); return args.length > 3 ? `${node}\n${corp}\n` : `${corp}\n`; }, roots: [node] }));
  assert.deepEqual(calls, [['/usr/bin/security', 'find-certificate', '-a', '-p', ...MAC_KEYCHAINS], ['/usr/bin/security', 'find-certificate', '-a', '-p']]);
  assert.deepEqual(mac, { ca: [corp], total: 3, from: 'keychain' });
  assert.match((await readSystemCa(fakeDeps({ platform: 'darwin' }))).note!, /keychains could not be read/);

  const win = await readSystemCa(fakeDeps({ platform: 'win32' }));
  assert.deepEqual(win.ca, []);
  assert.match(win.note!, /Windows certificate store is not read: .*llmProfiler\.tls\.caFile/);
  assert.deepEqual(beyondRoots([corp, corp], []), [corp]);
});

test('short texts say "via proxy" (never the credentials), and the run list too', () => {
  const endpoint = { url: HTTPS, api: 'openai-chat', name: 'corp', ...networkRecord(HTTPS, specFor(HTTPS, { ...DEFAULTS, proxy: 'http://u:pw-secret-2@proxy.corp:3128' })) } as RunFile['endpoint'];
  assert.deepEqual(networkShort(endpoint), ['via proxy http://proxy.corp:3128']);
  assert.deepEqual(networkShort({ ...endpoint, tls: { insecure: true, ca: ['system'] } }), ['via proxy http://proxy.corp:3128', 'certificates not checked']);
  assert.deepEqual(networkShort({ url: HTTPS, tls: { ca: ['system'] } }), [], 'a trusted CA changes nothing measured: left to the report');
  const summary = { completed: 5, failed: 0, ttftMs: { count: 0 }, tpotMs: { count: 0 }, outputTokensPerSecond: 12 } as unknown as RunFile['summary'];
  assert.match(summaryText({ endpoint, summary }), /^corp \(via proxy http:\/\/proxy\.corp:3128\): 5 completed, 0 failed/);
  assert.match(summaryText({ endpoint: { url: HTTPS, api: 'openai-chat', name: 'direct' } as RunFile['endpoint'], summary }), /^direct: 5 completed/);
  const entry = indexEntry({ id: 'r1', startedAt: '2025-01-01T00:00:00Z', endpoint, summary, requests: [] } as unknown as RunFile, '/runs/r1.json');
  assert.deepEqual(entry.network, ['via proxy http://proxy.corp:3128']);
  assert.match(runLabel(entry), /^run on corp, .* \(via proxy http:\/\/proxy\.corp:3128\)$/);
  assert.equal(indexEntry({ id: 'r2', startedAt: 'x', endpoint: { url: HTTPS, api: 'openai-chat' }, summary, requests: [] } as unknown as RunFile, '/r2.json').network, undefined);
  assert.equal(proxyNotice('http://proxy.corp:3128', 'http.proxy'), 'via proxy http://proxy.corp:3128 (from http.proxy): connecting and the tunnel are timed apart from TTFT, but every byte passes the proxy');
  assert.ok(![summaryText({ endpoint, summary }), runLabel(entry)].join().includes('pw-secret-2'));
});
