// A usage error repeats what was wrong, never a password: every flag and setting that takes a URL
// (--url, --proxy, --otlp-endpoint, the proxy variables, http.proxy, an endpoint's "url"), however the
// credentials were typed (user:pass@host:port without a scheme is read by a URL parser as the scheme
// "user:", so its "password" is no URL credential at all), and values typed in the wrong place.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { displayUrl } from '../../src/engine/core/redact';
import { parseCommandLine } from '../../src/cli/parse';
import { validateEndpoint } from '../../src/extension/configModel';
import { networkPlan } from '../../src/extension/networkModel';
import { UsageError } from '../../src/jobs/errors';
import { buildNetwork, networkSecrets } from '../../src/jobs/networkSpec';
import { OPTIONS } from '../../src/jobs/options';
import { OptionValues } from '../../src/jobs/values';

const PW = 'Pa55word-Xyz';

/** Values with credentials that are wrong for a URL flag, each in a way that makes the check explain. */
const BAD_VALUES = [
  `user:${PW}@proxy.corp:3128`,
  `user:${PW}@proxy.corp`,
  `socks5://user:${PW}@proxy.corp:1080`,
  `ftp://user:${PW}@host/`,
  `http://user:${PW}@host:1/some/path?x=1`,
  `http://user:${PW}@host x`,
  `user:${PW}/with/slash@host:1`,
  `http://user:${PW}#frag@host:1`,
  `user@${PW}@host:1`,
];

function messageOf(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    assert.ok(e instanceof UsageError, String(e));
    return e.message;
  }
  return '';
}

test('displayUrl drops user:password@ from values that are not URLs or that a URL parser misreads', () => {
  assert.equal(displayUrl(`user:${PW}@proxy.corp:3128`), 'proxy.corp:3128');
  assert.equal(displayUrl(`socks5://user:${PW}@h:1`), 'socks5://h:1');
  assert.equal(displayUrl(`http://user:${PW}@host x`), 'http://host x');
  assert.equal(displayUrl('localhost:8000'), 'localhost:8000');
  assert.equal(displayUrl('http://h/a@b'), 'http://h/a@b');
  for (const v of BAD_VALUES) assert.ok(!displayUrl(v).includes(PW), `${v} → ${displayUrl(v)}`);
});

test('every CLI flag that takes a URL: a usage error, and no password in it', () => {
  const urlFlags = OPTIONS.filter((o) => o.value === 'URL');
  assert.deepEqual(urlFlags.map((o) => o.flag).sort(), ['--otlp-endpoint', '--proxy', '--url']);
  let errors = 0;
  for (const o of urlFlags) {
    const command = o.commands[0]!;
    for (const v of BAD_VALUES) {
      const args = o.flag === '--url' ? [o.flag, v] : ['--url', 'http://127.0.0.1:8000', o.flag, v];
      const m = messageOf(() => parseCommandLine(command, args));
      if (m === '') continue; // a value the flag accepts (a proxy's scheme-less form is not one of them)
      errors++;
      assert.ok(m.startsWith(o.flag), m);
      assert.ok(!m.includes(PW), `${o.flag} ${v}: ${m}`);
    }
  }
  assert.ok(errors >= urlFlags.length * (BAD_VALUES.length - 1), `only ${errors} errors`);
  // The forms the issue named, exactly.
  assert.doesNotMatch(messageOf(() => parseCommandLine('run', ['--url', 'http://h:1', '--proxy', `user:${PW}@host:3128`])), new RegExp(PW));
  assert.doesNotMatch(messageOf(() => parseCommandLine('run', ['--otlp-endpoint', `user:${PW}@host:4318`])), new RegExp(PW));
});

test('a URL typed where it does not belong is not repeated with its password either', () => {
  const wrongPlace = [
    ['run', `http://user:${PW}@host:1`],
    ['run', '--rate', `user:${PW}@host:1`],
    ['run', '--api', `user:${PW}@host:1`],
    ['sweep', '--concurrency', `user:${PW}@h:1`],
    ['run', '--preset', `user:${PW}@h:1`],
    ['run', '--url', 'http://h:1', '--api-key-header', `http://user:${PW}@h:1`],
    ['run', '--var', `http://user:${PW}@h:1`],
  ];
  for (const args of wrongPlace) {
    const m = messageOf(() => parseCommandLine(args[0] as 'run', args.slice(1)));
    assert.notEqual(m, '', args.join(' '));
    assert.ok(!m.includes(PW), m);
  }
  const fromSettings = messageOf(() => OptionValues.of({ api: `user:${PW}@host:1` }, 'setting'));
  assert.ok(fromSettings !== '' && !fromSettings.includes(PW), fromSettings);
  const presetSetting = messageOf(() => OptionValues.of({ preset: `user:${PW}@host:1` }, 'setting'));
  assert.ok(presetSetting !== '' && !presetSetting.includes(PW), presetSetting);
  const otlpSetting = messageOf(() => OptionValues.of({ otlpEndpoint: `user:${PW}@host:4318` }, 'setting'));
  assert.ok(otlpSetting !== '' && !otlpSetting.includes(PW), otlpSetting);
});

test('proxies from the environment and from VS Code settings: the error names the source, not the password', () => {
  for (const v of [`socks5://user:${PW}@proxy.corp:1080`, `http://user:${PW}@proxy.corp:1/path`]) {
    const m = messageOf(() => buildNetwork('https://api.example.com', {}, { HTTPS_PROXY: v }, '/'));
    assert.match(m, /^HTTPS_PROXY /);
    assert.ok(!m.includes(PW), m);
  }
  const plan = networkPlan({ proxy: `user:${PW}@proxy.corp:3128` }, { insecure: false });
  const m = messageOf(() => buildNetwork('https://api.example.com', plan.inputs, {}, '/'));
  assert.match(m, /^http\.proxy /);
  assert.ok(!m.includes(PW), m);
  const endpoint = validateEndpoint({ name: 'x', url: `http://user:${PW}@host x` }, 'user');
  assert.ok(endpoint.errors.length > 0 && endpoint.errors.every((e) => !e.includes(PW)), endpoint.errors.join('; '));
});

test('a proxy variable written without a scheme still has its password known to the scrubber', () => {
  assert.ok(networkSecrets(undefined, { HTTPS_PROXY: `user:${PW}@proxy.corp:3128` }).includes(PW));
  assert.ok(networkSecrets(undefined, { http_proxy: ` alice:${PW}@proxy.corp ` }).includes(PW));
});
