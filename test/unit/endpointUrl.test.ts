// One way to take an endpoint's URL on every surface (src/jobs/urls.ts): "127.0.0.1:18181" and
// "localhost:8000" typed without a scheme are http:// (not the scheme "localhost:"), and one check of
// what cannot be used, read by the CLI's --url (through the real parser), the settings' endpoints, the
// extension's URL boxes and the environment's proxy variables, each saying the same.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseCommandLine } from '../../src/cli/parse';
import { validateEndpoint } from '../../src/extension/configModel';
import { urlProblem } from '../../src/extension/urlInput';
import { UsageError } from '../../src/jobs/errors';
import { proxyFromEnv } from '../../src/jobs/networkSpec';
import { endpointUrlProblem, withScheme } from '../../src/jobs/urls';
import { OptionValues } from '../../src/jobs/values';

test('withScheme: host:port (and localhost:port, with a path) is http://; a URL with its scheme as typed', () => {
  assert.equal(withScheme('127.0.0.1:18181'), 'http://127.0.0.1:18181');
  assert.equal(withScheme(' localhost:8000/v1 '), 'http://localhost:8000/v1');
  assert.equal(withScheme('localhost:8000'), 'http://localhost:8000');
  assert.equal(withScheme('gpu-box'), 'http://gpu-box');
  assert.equal(withScheme('[::1]:8000'), 'http://[::1]:8000');
  assert.equal(withScheme('user:pw@proxy.corp:3128'), 'http://user:pw@proxy.corp:3128');
  assert.equal(withScheme('https://api.example.com/v1'), 'https://api.example.com/v1');
  assert.equal(withScheme('HTTP://h:1'), 'HTTP://h:1');
  assert.equal(withScheme('ftp://h:1'), 'ftp://h:1');
  assert.equal(withScheme('http:/h:1'), 'http:/h:1', 'a slash short is the http URL meant, not the host "http"');
  assert.equal(withScheme('  '), '');
});

test('endpointUrlProblem: not a URL, not http(s), credentials; a secret in the query only where the URL is kept', () => {
  assert.equal(endpointUrlProblem(withScheme('127.0.0.1:18181'), 'command line'), undefined);
  assert.equal(endpointUrlProblem(withScheme('localhost:8000'), 'settings'), undefined);
  assert.match(endpointUrlProblem(withScheme('not a url'), 'command line')!, /^is not a valid URL: "http:\/\/not a url" \(type host:port, taken as http:\/\/, or a whole URL/);
  assert.equal(endpointUrlProblem('ftp://h:1', 'settings'), 'must be http:// or https://, got "ftp://h:1"');
  assert.equal(endpointUrlProblem('http://u:pw@h:1', 'command line'), 'must not carry credentials (user:password@): pass a key with --api-key-env VAR');
  assert.equal(endpointUrlProblem('http://u:pw@h:1', 'settings'), 'must not carry credentials (user:password@): use "LLM Profiler: Set API key"');
  const gateway = 'https://gw.example/v1?key=AIza-q1&team=x';
  assert.equal(endpointUrlProblem(gateway, 'command line'), undefined, 'the CLI sends it, and redacts it wherever the URL is written');
  assert.match(endpointUrlProblem(gateway, 'settings')!, /^must not carry a secret in its query \(key\): secrets do not belong in settings/);
  // a value that is not a URL is not quoted when a secret could be in it
  assert.doesNotMatch(endpointUrlProblem('http://h x?key=s3cr3t', 'command line')!, /s3cr3t/);
});

test('the CLI takes --url host:port as http:// through its real parser, for run, sweep and both sides of ab', () => {
  assert.equal(parseCommandLine('run', ['--url', '127.0.0.1:18181']).str('url'), 'http://127.0.0.1:18181');
  assert.equal(parseCommandLine('sweep', ['--url', 'localhost:8000/v1', '--concurrency', '1,2']).str('url'), 'http://localhost:8000/v1');
  assert.deepEqual(parseCommandLine('ab', ['--url', '127.0.0.1:1', '--url', 'https://b.example']).sides('url'), ['http://127.0.0.1:1', 'https://b.example']);
  // the same check, its words after the flag
  for (const v of ['not a url', 'ftp://h:1', 'u:pw@h:1']) {
    assert.throws(() => parseCommandLine('run', ['--url', v]), (e: unknown) => e instanceof UsageError && e.message === `--url ${endpointUrlProblem(withScheme(v), 'command line')!}`, v);
  }
  // values given as an object (the extension's arguments) are taken the same way
  assert.equal(OptionValues.of({ url: '127.0.0.1:18181' }).str('url'), 'http://127.0.0.1:18181');
});

test('the settings and the URL boxes: the same normaliser and the same check, a secret in the query refused', () => {
  const { entry, errors } = validateEndpoint({ name: 'local', url: 'localhost:8000' }, 'user');
  assert.deepEqual(errors, []);
  assert.equal(entry?.url, 'http://localhost:8000');
  for (const v of ['not a url', 'ftp://h:1', 'http://u:pw@h:1', 'https://gw.example/v1?api_key=x']) {
    const said = endpointUrlProblem(withScheme(v), 'settings');
    assert.ok(said, v);
    assert.deepEqual(validateEndpoint({ name: 'a', url: v }, 'user').errors, [`"url" ${said}`], v);
    assert.equal(urlProblem(withScheme(v)), `This ${said}`, v);
  }
  assert.equal(urlProblem(withScheme('127.0.0.1:18181')), undefined);
});

test('a proxy variable without a scheme is http:// by the same normaliser', () => {
  assert.deepEqual(proxyFromEnv({ HTTP_PROXY: 'user:pw@proxy.corp:3128' }, 'http://h:1'), { proxy: 'http://user:pw@proxy.corp:3128', source: 'HTTP_PROXY' });
});
