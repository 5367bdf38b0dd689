import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseRunArgs, UsageError } from '../../src/cli/args';
import { workloadFromArgs } from '../../src/cli/run';

test('every flag parses, with --flag value and --flag=value', () => {
  const a = parseRunArgs([
    '--url', 'http://127.0.0.1:8000/v1', '--api=ollama', '--model', 'llama3', '--rate', '2.5', '--burstiness', '0.5', '--max-concurrency', '8',
    '--duration', '30', '--prompt-tokens', '512', '--shared-prefix', '--max-tokens', '64', '--warmup', '0', '--seed', '-3',
    '--no-ignore-eos', '--timeout', '60', '--idle-timeout', '5', '--slo', 'ttft=500,tpot=50', '--fail-on-slo',
    '--percentiles', '99,50,90', '--out', 'run.json', '--json', '--api-key-env', 'MY_KEY', '--header', 'X-A: 1', '--header', 'X-B:two words',
    '--temperature', '0',
  ]);
  assert.equal(a.url, 'http://127.0.0.1:8000/v1');
  assert.equal(a.api, 'ollama');
  assert.equal(a.model, 'llama3');
  assert.deepEqual(a.mode, { kind: 'open', rate: 2.5, burstiness: 0.5, maxConcurrency: 8 });
  assert.equal(a.durationS, 30);
  assert.deepEqual(a.prompt, { kind: 'synthetic', tokens: 512, sharedPrefix: true });
  assert.equal(a.maxTokens, 64);
  assert.equal(a.warmup, 0);
  assert.equal(a.seed, -3);
  assert.equal(a.ignoreEos, false);
  assert.equal(a.timeoutS, 60);
  assert.equal(a.idleTimeoutS, 5);
  assert.deepEqual(a.slo, { ttftMs: 500, tpotMs: 50 });
  assert.equal(a.failOnSlo, true);
  assert.deepEqual(a.percentiles, [50, 90, 99]);
  assert.equal(a.out, 'run.json');
  assert.equal(a.json, true);
  assert.equal(a.apiKeyEnv, 'MY_KEY');
  assert.deepEqual(a.headers, { 'X-A': '1', 'X-B': 'two words' });
  assert.equal(a.temperature, 0);
  const w = workloadFromArgs(a, a.slo);
  assert.deepEqual(w.mode, { kind: 'open', rate: 2.5, burstiness: 0.5, maxConcurrency: 8 });
  assert.equal(w.requests, undefined);
  assert.equal(w.timeoutMs, 60_000);
  assert.equal(w.idleTimeoutMs, 5_000);
  assert.equal(w.ignoreEos, false);
});

test('defaults: auto API, closed loop of 1, synthetic prompts, ignore EOS', () => {
  const a = parseRunArgs(['--url', 'http://localhost:1234']);
  assert.equal(a.api, 'auto');
  assert.deepEqual(a.mode, { kind: 'closed' });
  assert.deepEqual(a.prompt, { kind: 'synthetic', sharedPrefix: false });
  assert.equal(a.ignoreEos, true);
  assert.equal(a.json, false);
  const w = workloadFromArgs(a, undefined);
  assert.deepEqual(w.mode, { kind: 'closed', concurrency: 1 });
  assert.equal(w.requests, 10);
  assert.deepEqual(w.prompt, { kind: 'synthetic', tokens: 256, sharedPrefix: false });
  assert.equal(parseRunArgs(['--prompt-file', 'a.prompty']).prompt.kind, 'file');
  assert.equal(parseRunArgs(['--dataset', 'd.jsonl']).prompt.kind, 'dataset');
  assert.equal(parseRunArgs(['-h']).help, true);
  assert.equal(parseRunArgs(['--version']).version, true);
});

test('usage errors name the flag', () => {
  const cases: [string[], string, RegExp][] = [
    [['--concurency', '2'], '--concurency', /unknown flag --concurency \(did you mean --concurrency\?\)/],
    [['--requests', 'ten'], '--requests', /--requests must be a whole number, got "ten"/],
    [['--requests', '2.5'], '--requests', /whole number/],
    [['--requests', '0'], '--requests', /--requests must be a whole number ≥ 1/],
    [['--rate', 'fast'], '--rate', /--rate must be a number/],
    [['--rate', '0'], '--rate', /--rate must be a positive number/],
    [['--concurrency', '2', '--rate', '3'], '--rate', /--concurrency and --rate cannot be used together/],
    [['--requests', '2', '--duration', '3'], '--duration', /cannot be used together/],
    [['--prompt-file', 'a', '--dataset', 'b'], '--dataset', /cannot be used together/],
    [['--prompt-tokens', '5', '--prompt-file', 'a'], '--prompt-file', /cannot be used together/],
    [['--burstiness', '2'], '--burstiness', /--burstiness needs --rate/],
    [['--url'], '--url', /--url needs a value/],
    [['--url', '--json'], '--url', /--url needs a value/],
    [['--url', 'localhost:8000'], '--url', /--url must be http/],
    [['--url', 'not a url'], '--url', /--url is not a valid URL/],
    [['--api', 'grpc'], '--api', /--api must be auto, openai-chat/],
    [['--slo', 'ttft=fast'], '--slo', /--slo: bad SLO value in "ttft=fast"/],
    [['--percentiles', '50,101'], '--percentiles', /within 0..100/],
    [['--header', 'NoColon'], '--header', /--header must be "Name: value"/],
    [['--header', 'Authorization: Bearer x'], '--header', /--api-key-env/],
    [['--api-key-env', 'sk-abc123'], '--api-key-env', /NAME of an environment variable/],
    [['--json=yes'], '--json', /--json takes no value/],
    [['--requests', '3', '--requests', '4'], '--requests', /given more than once/],
    [['--timeout', '-1'], '--timeout', /--timeout must be a positive number/],
    [['stray'], '', /unexpected argument "stray"/],
  ];
  for (const [argv, flag, re] of cases) {
    assert.throws(
      () => parseRunArgs(argv),
      (e: unknown) => e instanceof UsageError && re.test(e.message) && (flag === '' || e.flag === flag),
      `${argv.join(' ')} → ${re.source}`,
    );
  }
});

test('a negative number is a value, not a flag', () => {
  assert.equal(parseRunArgs(['--seed', '-1']).seed, -1);
});
