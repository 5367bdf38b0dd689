import { test } from 'node:test';
import assert from 'node:assert/strict';
import { displayUrl, fromServer, isSecretHeaderName, printable, redactHeaders, Scrubber, secretsOf } from '../../src/engine/core/redact';
import { serializeRunFile } from '../../src/engine/files/runFile';
import { parseCommandLine } from '../../src/cli/parse';
import { UsageError } from '../../src/jobs/errors';
import { fixtureRun } from '../support/fixtureRuns';

test('header names that may carry a secret are recognised, others are not', () => {
  for (const name of ['Authorization', 'Proxy-Authorization', 'X-Api-Key', 'api-key', 'Ocp-Apim-Subscription-Key', 'X-Auth-Key', 'X-Auth-Token', 'Cookie', 'X-Session-Id', 'X-Amz-Signature', 'x-goog-api-key']) {
    assert.equal(isSecretHeaderName(name), true, name);
  }
  for (const name of ['X-Request-Id', 'Content-Type', 'OpenAI-Organization', 'X-Tenant']) assert.equal(isSecretHeaderName(name), false, name);
  assert.deepEqual(redactHeaders({ 'X-Auth-Key': 'sk-1', 'X-Tenant': 'a' }), { 'X-Auth-Key': '<redacted>', 'X-Tenant': 'a' });
});

test('credentials in a URL never reach a run file, and the CLI refuses them', () => {
  assert.equal(displayUrl('https://alice:s3cret@example.com/v1'), 'https://example.com/v1');
  assert.equal(displayUrl('http://127.0.0.1:8000'), 'http://127.0.0.1:8000');
  const run = fixtureRun({ seed: 1, requests: 2 });
  const text = serializeRunFile({ ...run, endpoint: { ...run.endpoint, url: 'https://alice:s3cret@example.com/v1', headers: { 'Ocp-Apim-Subscription-Key': 'k-123' } } });
  assert.ok(!text.includes('s3cret') && !text.includes('alice') && !text.includes('k-123'), 'no credential in the run file');
  assert.throws(() => parseCommandLine('run', ['--url', 'https://alice:s3cret@example.com/v1']), (e: unknown) => e instanceof UsageError && e.flag === '--url' && /credentials/.test(e.message));
});

test('secret-looking query values are redacted for display, the others kept as given', () => {
  assert.equal(displayUrl('https://gw.example/v1?api_key=k1&team=a%20b'), 'https://gw.example/v1?api_key=<redacted>&team=a+b');
  assert.equal(displayUrl('https://g.example/v1beta?key=AIza123'), 'https://g.example/v1beta?key=<redacted>');
  assert.equal(displayUrl('https://gw.example/v1?sig=abc&code=xyz&x-amz-signature=s'), 'https://gw.example/v1?sig=<redacted>&code=<redacted>&x-amz-signature=<redacted>');
  assert.equal(displayUrl('https://gw.example/v1?team=a'), 'https://gw.example/v1?team=a', 'nothing secret: the text as given');
  assert.equal(displayUrl('not a url'), 'not a url');
  assert.deepEqual(secretsOf({ url: 'https://u:p4ss@gw.example/v1?api_key=k-query&team=t', headers: { 'X-Api-Key': 'k-header', Authorization: 'Bearer sk-bearer', 'X-Team': 'perf' } }, 'sk-given').sort(),
    ['Bearer sk-bearer', 'k-header', 'k-query', 'p4ss', 'sk-bearer', 'sk-given', 'u'].sort());
});

test('the scrubber replaces a secret in every form it takes in text: as given, URL-encoded, JSON-escaped', () => {
  const key = 'sk-a+b/c"d\\e';
  const s = new Scrubber([key, 'abc', undefined, '']);
  assert.equal(s.scrub(`x ${key} y`), 'x <redacted> y');
  assert.equal(s.scrub(`?k=${encodeURIComponent(key)}`), '?k=<redacted>');
  assert.equal(s.scrub(JSON.stringify({ id: key })), '{"id":"<redacted>"}');
  assert.equal(s.scrub('abc'), 'abc', 'a secret under 4 characters would mangle text: not scrubbed');
  assert.equal(new Scrubber().empty, true);
  // Adding secrets again and again does not grow it (the encoded forms are not encoded again).
  let grown = s;
  for (let i = 0; i < 50; i++) grown = grown.with([key]);
  assert.equal(grown.scrub(`${key}${encodeURIComponent(encodeURIComponent(key))}`).startsWith('<redacted>'), true);
});

test('scrubValue walks a message: strings scrubbed at any depth, number arrays passed over, untouched parts shared', () => {
  const s = new Scrubber(['sk-echoed-123']);
  const times = [1, 2, 3];
  const msg = { type: 'run', run: { endpoint: { url: 'http://h?key=sk-echoed-123' }, requests: [{ responseId: 'chatcmpl-sk-echoed-123', chunkTimesMs: times }, { responseId: 'ok' }] }, other: { a: 1 } };
  const out = s.scrubValue(msg);
  assert.ok(!JSON.stringify(out).includes('sk-echoed-123'));
  assert.equal(out.run.requests[0]!.chunkTimesMs, times, 'number arrays are not copied');
  assert.equal(out.other, msg.other, 'unchanged parts are the same objects');
  assert.equal(msg.run.requests[0]!.responseId, 'chatcmpl-sk-echoed-123', 'the input is not modified');
  assert.equal(new Scrubber().scrubValue(msg), msg);
});

test('printable strips terminal controls and text-direction overrides; fromServer strips, scrubs, then caps', () => {
  const evil = 'a\u001b]0;title\u0007b\u001b[2J\u009b31mc\u202ed\u2066e\u007f\r\nf\tg\u001bc\u001b[?1049h\u001b]8;;http://x\u001b\\h';
  assert.equal(printable(evil), 'abcde\nf\tgh');
  assert.equal(printable(evil, true), 'abcde f gh');
  assert.equal(printable('lone \u001b at the end \u001b'), 'lone at the end ');
  // A secret cut in two by an escape is whole again, and found.
  const s = new Scrubber(['sk-split-secret']);
  assert.equal(fromServer('key sk-split\u001b[0m-secret!', s), 'key <redacted>!');
  const long = fromServer('x'.repeat(10_000), s, 100);
  assert.equal(long, `${'x'.repeat(100)}… (10000 characters)`);
});
