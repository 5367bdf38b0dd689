// The settings snapshot: validation, clamping, secrets refused, workspace origin kept.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseSlo } from '../../src/engine/core/slo';
import { buildConfig, keyOrigin, validateEndpoint } from '../../src/extension/configModel';
import { inputProblem } from '../../src/jobs/options';
import { presetWorkload } from '../../src/jobs/presets';
import { lensResult, progressLine } from '../../src/present/runText';
import { formatMs } from '../../src/present/units';
import { parserFileName, isBuiltInPromptFile } from '../../src/extension/promptFileKinds';


/** The workload settings as the snapshot reads them when none is set: the manifest's defaults. */
const DEFAULT_WORKLOAD = buildConfig({ values: {}, endpoints: { workspace: [], user: [] } }, parseSlo).config.workload;

test('a good endpoint is accepted with its origin, and api defaults to auto', () => {
  const r = validateEndpoint({ name: ' vllm ', url: 'http://127.0.0.1:8000/v1', model: 'm', headers: { 'X-Team': 'a' } }, 'workspace');
  assert.deepEqual(r.errors, []);
  assert.deepEqual(r.entry, { name: 'vllm', url: 'http://127.0.0.1:8000/v1', api: 'auto', model: 'm', headers: { 'X-Team': 'a' }, apiKeyEnv: undefined, origin: 'workspace' });
});

test('bad endpoints get one clear message per problem', () => {
  assert.match(validateEndpoint('x', 'user').errors[0]!, /must be an object/);
  const r = validateEndpoint({ url: 'ftp://h', api: 'grpc', apiKeyEnv: 'not a name' }, 'user');
  assert.equal(r.entry, undefined);
  assert.ok(r.errors.some((e) => /"name" is missing/.test(e)));
  assert.ok(r.errors.some((e) => /http:\/\/ or https:\/\//.test(e)));
  assert.ok(r.errors.some((e) => /"api" must be one of/.test(e)));
  assert.ok(r.errors.some((e) => /"apiKeyEnv" must be an environment variable name/.test(e)));
  assert.match(validateEndpoint({ name: 'a', url: 'not a url' }, 'user').errors[0]!, /not a valid URL/);
  assert.match(validateEndpoint({ name: 'a', url: 'https://u:p@h' }, 'user').errors[0]!, /credentials/);
  // A key in the query is a secret in settings too: refused, naming the parameter, never the value.
  const q = validateEndpoint({ name: 'a', url: 'https://gw.example/v1?key=AIza-q1&team=x' }, 'user');
  assert.equal(q.entry, undefined);
  assert.match(q.errors[0]!, /must not carry a secret in its query \(key\)/);
  assert.ok(!q.errors[0]!.includes('AIza-q1'));
  assert.ok(validateEndpoint({ name: 'a', url: 'https://gw.example/v1?team=x' }, 'user').entry, 'other query parameters are fine');
});

test('secrets in settings are refused: auth headers and key-like fields are dropped with a warning', () => {
  const r = validateEndpoint({ name: 'a', url: 'https://h', headers: { Authorization: 'Bearer sk-1', 'x-api-key': 'k', 'X-Ok': '1' }, apiKey: 'sk-2' }, 'user');
  assert.deepEqual(r.entry?.headers, { 'X-Ok': '1' });
  assert.equal(r.warnings.length, 3);
  assert.ok(r.warnings.every((w) => /Set API key/.test(w)));
  assert.ok(!JSON.stringify(r.entry).includes('sk-'));
});

test('buildConfig: workspace entries first, duplicates reported, bad values clamped and reported', () => {
  const { config, problems } = buildConfig({
    values: { 'workload.concurrency': 5000, 'workload.requests': 'ten', 'localServer.preset': 'huge', slo: 'ttft=500,tpot=x', 'codeLens.extraGlobs': ['**/*.p.md', 3] },
    endpoints: {
      workspace: [{ name: 'a', url: 'http://w' }, { name: 'a', url: 'http://w2' }],
      user: [{ name: 'a', url: 'http://u' }, { name: 'b', url: 'http://u' }, { url: 'x' }],
    },
  }, parseSlo);
  assert.deepEqual(config.endpoints.map((e) => [e.name, e.url, e.origin]), [['a', 'http://w', 'workspace'], ['b', 'http://u', 'user']]);
  assert.equal(config.workload.concurrency, 4096);
  assert.equal(config.workload.requests, DEFAULT_WORKLOAD.requests);
  assert.equal(config.localServer.preset, 'tiny');
  assert.equal(config.slo, undefined);
  assert.deepEqual(config.codeLens.extraGlobs, ['**/*.p.md']);
  const text = problems.map((p) => `${p.setting}: ${p.message}`).join('\n');
  for (const want of [/workload\.concurrency: must be between 1 and 4096 \(got 5000\); using 4096/, /workload\.requests: must be a number/, /localServer\.preset: must be one of/,
    /llmProfiler\.slo: .*tpot/, /used twice/, /endpoint #3 \(user settings\) skipped/, /extraGlobs: ignored/]) {
    assert.match(text, want);
  }
});

test('buildConfig: defaults with nothing set, and a good SLO parsed', () => {
  const { config, problems } = buildConfig({ values: { slo: 'ttft=500,e2e=2000' }, endpoints: {} }, parseSlo);
  assert.deepEqual(problems, []);
  assert.deepEqual(config.slo, { ttftMs: 500, e2eMs: 2000 });
  assert.equal(config.codeLens.enabled, true);
  assert.deepEqual(config.endpoints, []);
  assert.equal(config.localServer.port, 0);
});

test('keyOrigin: a key set for one origin does not match another', () => {
  assert.equal(keyOrigin('https://api.example.com/v1'), 'https://api.example.com');
  assert.notEqual(keyOrigin('https://api.example.com/v1'), keyOrigin('https://evil.example.com/v1'));
  assert.notEqual(keyOrigin('http://127.0.0.1:8000'), keyOrigin('http://127.0.0.1:8001'));
});

test('presets and input validation', () => {
  assert.deepEqual(presetWorkload('quick', DEFAULT_WORKLOAD), { concurrency: 1, requests: 5, warmup: 1, maxTokens: 64, promptTokens: 128, timeoutMs: 120000 });
  assert.equal(presetWorkload('load', DEFAULT_WORKLOAD).concurrency, 8);
  assert.deepEqual(presetWorkload('custom', DEFAULT_WORKLOAD, { concurrency: 3, requests: 7 }).requests, 7);
  assert.equal(inputProblem('concurrency', '12'), undefined);
  assert.match(inputProblem('concurrency', '1.5')!, /whole number/);
  assert.match(inputProblem('concurrency', '0')!, /from 1 to 4096/);
});

test('texts: progress, lens result, durations', () => {
  assert.equal(progressLine({ finished: 12, failed: 0, total: 40, ttftP50Ms: 312.4 }), '12/40 · TTFT p50 312 ms');
  assert.equal(progressLine({ finished: 4, failed: 1, total: undefined, ttftP50Ms: undefined }), '4 done (1 failed)');
  assert.equal(lensResult({ ttftP50Ms: 312, ttftP99Ms: 540, tpotP50Ms: 41, completed: 5, failed: 0 }), 'TTFT p50 312 ms · p99 540 ms · TPOT 41 ms');
  assert.equal(lensResult({ completed: 0, failed: 2 }), 'last run: 2 failed, none completed');
  assert.equal(formatMs(12345), '12.3 s');
  assert.equal(formatMs(5.25), '5.25 ms');
});

test('prompt file names: built-in kinds kept, extra-glob files mapped by extension', () => {
  for (const n of ['a.prompt.md', 'b.prompty', 'c.prompt.yml', 'd.prompt.yaml']) { assert.ok(isBuiltInPromptFile(n)); assert.equal(parserFileName(n), n); }
  assert.equal(parserFileName('/x/p.yaml'), '/x/p.yaml.prompt.yml');
  assert.equal(parserFileName('/x/p.md'), '/x/p.md.prompt.md');
  assert.equal(parserFileName('/x/p.txt'), '/x/p.txt');
});

test('apiKeyHeader: a header name is kept (and not mistaken for a secret), anything else is an error', () => {
  const ok = validateEndpoint({ name: 'azure', url: 'https://example.openai.azure.com', api: 'openai-chat', apiKeyHeader: 'api-key' }, 'user');
  assert.deepEqual(ok.errors, []);
  assert.deepEqual(ok.warnings, []);
  assert.equal(ok.entry?.apiKeyHeader, 'api-key');
  const bad = validateEndpoint({ name: 'x', url: 'http://127.0.0.1:1', apiKeyHeader: 'api-key: sk-123' }, 'user');
  assert.ok(bad.errors.some((e) => /"apiKeyHeader" must be a header name/.test(e)), bad.errors.join('; '));
});

test('workload.prefixCache: cold by default, warm when set, a bad value reported and cold kept', () => {
  assert.equal(buildConfig({ values: {}, endpoints: {} }, parseSlo).config.prefixCache, 'cold');
  assert.equal(buildConfig({ values: { 'workload.prefixCache': 'warm' }, endpoints: {} }, parseSlo).config.prefixCache, 'warm');
  const bad = buildConfig({ values: { 'workload.prefixCache': 'lukewarm' }, endpoints: {} }, parseSlo);
  assert.equal(bad.config.prefixCache, 'cold');
  assert.ok(bad.problems.some((p) => p.setting === 'llmProfiler.workload.prefixCache'), JSON.stringify(bad.problems));
});
