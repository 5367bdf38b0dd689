import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isSecretHeaderName, redactHeaders, urlWithoutCredentials } from '../../src/engine/redact';
import { serializeRunFile } from '../../src/engine/runFile';
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
  assert.equal(urlWithoutCredentials('https://alice:s3cret@example.com/v1'), 'https://example.com/v1');
  assert.equal(urlWithoutCredentials('http://127.0.0.1:8000'), 'http://127.0.0.1:8000');
  const run = fixtureRun({ seed: 1, requests: 2 });
  const text = serializeRunFile({ ...run, endpoint: { ...run.endpoint, url: 'https://alice:s3cret@example.com/v1', headers: { 'Ocp-Apim-Subscription-Key': 'k-123' } } });
  assert.ok(!text.includes('s3cret') && !text.includes('alice') && !text.includes('k-123'), 'no credential in the run file');
  assert.throws(() => parseCommandLine('run', ['--url', 'https://alice:s3cret@example.com/v1']), (e: unknown) => e instanceof UsageError && e.flag === '--url' && /credentials/.test(e.message));
});
