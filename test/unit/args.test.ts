import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseCommandLine } from '../../src/cli/parse';
import { buildAbJob } from '../../src/jobs/ab';
import { buildDialJob, buildRunJob, buildSweepJob } from '../../src/jobs/build';
import { OptionValues } from '../../src/jobs/values';
import { UsageError } from '../../src/jobs/errors';
import type { RunJob } from '../../src/jobs/job';

const parseRunArgs = (argv: string[]) => parseCommandLine('run', argv);
const runJob = async (argv: string[]): Promise<RunJob> => (await buildRunJob(parseRunArgs(argv))).job;

test('every flag parses, with --flag value and --flag=value', async () => {
  const argv = [
    '--url', 'http://127.0.0.1:8000/v1', '--api=ollama', '--model', 'llama3', '--rate', '2.5', '--burstiness', '0.5', '--max-concurrency', '8',
    '--duration', '30', '--prompt-tokens', '512', '--shared-prefix', '--max-tokens', '64', '--warmup', '0', '--seed', '-3',
    '--no-ignore-eos', '--timeout', '60', '--idle-timeout', '5', '--slo', 'ttft=500,tpot=50', '--fail-on-slo',
    '--percentiles', '99,50,90', '--out', 'run.json', '--json', '--api-key-env', 'MY_KEY', '--header', 'X-A: 1', '--header', 'X-B:two words',
    '--temperature', '0', '--api-key-header', 'api-key',
  ];
  const a = parseRunArgs(argv);
  assert.equal(a.str('out'), 'run.json');
  assert.equal(a.flag('json'), true);
  assert.equal(a.str('apiKeyEnv'), 'MY_KEY');
  assert.equal(a.num('seed'), -3);
  const job = await runJob(argv);
  assert.deepEqual(job.target, { kind: 'endpoint', url: 'http://127.0.0.1:8000/v1', api: 'ollama', model: 'llama3', headers: { 'X-A': '1', 'X-B': 'two words' }, apiKeyHeader: 'api-key' });
  const w = job.workload;
  assert.deepEqual(w.mode, { kind: 'open', rate: 2.5, burstiness: 0.5, maxConcurrency: 8 });
  assert.equal(w.durationS, 30);
  assert.equal(w.requests, undefined);
  assert.deepEqual(w.prompt, { kind: 'synthetic', tokens: 512, sharedPrefix: true, sizing: 'server' });
  assert.equal(w.maxTokens, 64);
  assert.equal(w.warmup, 0);
  assert.equal(w.seed, -3);
  assert.equal(w.ignoreEos, false);
  assert.equal(w.timeoutMs, 60_000);
  assert.equal(w.idleTimeoutMs, 5_000);
  assert.deepEqual(w.slo, { ttftMs: 500, tpotMs: 50 });
  assert.equal(job.failOnSlo, true);
  assert.deepEqual(w.percentiles, [50, 90, 99]);
  assert.equal(w.temperature, 0);
});

test('defaults: auto API, closed loop of 1, synthetic prompts, ignore EOS', async () => {
  const job = await runJob(['--url', 'http://localhost:1234']);
  assert.deepEqual(job.target, { kind: 'endpoint', url: 'http://localhost:1234', api: 'auto' });
  const w = job.workload;
  assert.deepEqual(w.mode, { kind: 'closed', concurrency: 1 });
  assert.equal(w.requests, 10);
  assert.deepEqual(w.prompt, { kind: 'synthetic', tokens: 256, sharedPrefix: false, sizing: 'server' });
  assert.equal(w.ignoreEos, true);
  assert.equal(parseRunArgs(['--url', 'http://localhost:1234']).flag('json'), false);
  assert.equal(parseRunArgs(['--prompt-file', 'a.prompty']).str('promptFile'), 'a.prompty');
  assert.equal(parseRunArgs(['--dataset', 'd.jsonl']).str('dataset'), 'd.jsonl');
  assert.equal(parseRunArgs(['-h']).flag('help'), true);
  assert.equal(parseRunArgs(['--version']).flag('version'), true);
  // without --url: the bundled server, a slot per request in flight
  const local = await runJob(['--concurrency', '3']);
  assert.deepEqual(local.target, { kind: 'local', server: { model: { kind: 'preset', preset: 'tiny' }, backend: 'bundled', parallel: 3 } });
});

test('usage errors name the flag', () => {
  const cases: [string[], string, RegExp][] = [
    [['--concurency', '2'], '--concurency', /unknown flag --concurency \(did you mean --concurrency\?\)/],
    [['--requests', 'ten'], '--requests', /--requests must be a whole number, got "ten"/],
    [['--requests', '2.5'], '--requests', /whole number/],
    [['--requests', '0'], '--requests', /--requests must be a whole number ≥ 1/],
    [['--rate', 'fast'], '--rate', /--rate must be a number/],
    [['--concurency', '2'], '--concurency', /did you mean --concurrency/],
    [['--batch-sizes', '2,3'], '--batch-sizes', /--batch-sizes is an option of prefill-dial/],
    [['--api', 'openai-chat'], '--api', /--api needs --url/],
    [['--url', 'http://h:1', '--parallel', '4'], '--parallel', /--parallel sets up the bundled local server: it cannot be used with --url/],
    [['--url', 'http://alice:pw@h:1'], '--url', /credentials/],
    [['--rate', '0'], '--rate', /--rate must be a positive number/],
    [['--concurrency', '2', '--rate', '3'], '--rate', /--concurrency and --rate cannot be used together/],
    [['--requests', '2', '--duration', '3'], '--duration', /cannot be used together/],
    [['--prompt-file', 'a', '--dataset', 'b'], '--dataset', /cannot be used together/],
    [['--prompt-tokens', '5', '--prompt-file', 'a'], '--prompt-file', /cannot be used together/],
    [['--burstiness', '2'], '--burstiness', /--burstiness needs --rate/],
    [['--url'], '--url', /--url needs a value/],
    [['--url', '--json'], '--url', /--url needs a value/],
    [['--url', 'ftp://localhost:8000'], '--url', /--url must be http/],
    [['--url', 'not a url'], '--url', /--url is not a valid URL/],
    [['--url', 'http://h:1', '--api', 'grpc'], '--api', /--api must be auto, openai-chat/],
    [['--slo', 'ttft=fast'], '--slo', /--slo: bad SLO value in "ttft=fast"/],
    [['--percentiles', '50,101'], '--percentiles', /within 0..100/],
    [['--url', 'http://h:1', '--header', 'NoColon'], '--header', /--header must be "Name: value"/],
    [['--url', 'http://h:1', '--header', 'Authorization: Bearer x'], '--header', /--api-key-env/],
    [['--url', 'http://h:1', '--api-key-env', 'sk-abc123'], '--api-key-env', /NAME of an environment variable/],
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
  assert.equal(parseRunArgs(['--seed', '-1']).num('seed'), -1);
});

test('sweep and prefill-dial share the parser: lists, the local-server flags, the endpoint flags', async () => {
  const sweep = parseCommandLine('sweep', ['--url', 'http://h:1', '--concurrency', '1,2,4', '--header', 'X-A: 1', '--api-key-env', 'K', '--api-key-header', 'api-key']);
  assert.deepEqual(sweep.nums('concurrency'), [1, 2, 4]);
  const job = (await buildSweepJob(sweep)).job;
  assert.equal(job.dimension, 'concurrency');
  assert.deepEqual(job.values, [1, 2, 4]);
  assert.deepEqual(job.target, { kind: 'endpoint', url: 'http://h:1', api: 'auto', headers: { 'X-A': '1' }, apiKeyHeader: 'api-key' });
  // the same custom shapes as run, and credentials in the URL refused as run refuses them
  const shaped = (await buildSweepJob(parseCommandLine('sweep', ['--preset', 'shape:layers=2,width=128', '--concurrency', '1,2']))).job;
  assert.equal(shaped.target.kind === 'local' && shaped.target.server.model.kind, 'shape');
  assert.equal(shaped.target.kind === 'local' && shaped.target.server.parallel, 2);
  assert.throws(() => parseCommandLine('sweep', ['--url', 'http://a:b@h:1']), (e: unknown) => e instanceof UsageError && /credentials/.test(e.message));
  assert.throws(() => parseCommandLine('sweep', ['--concurrency', '1,x']), (e: unknown) => e instanceof UsageError && e.flag === '--concurrency');
  const dial = buildDialJob(parseCommandLine('prefill-dial', ['--batch-sizes', '16,64', '--parallel', '3'])).job;
  assert.deepEqual(dial.dial.batchSizes, [16, 64]);
  assert.equal(dial.dial.decodeStreams, 2);
  assert.equal(dial.server.ctxSize, 3 * (2 * 1024 + 4 + 256));
  assert.throws(() => buildDialJob(parseCommandLine('prefill-dial', ['--batch-sizes', '16'])), /at least two sizes/);
});

test('ab takes --url, --model and --api-key-env once for both sides or twice (A then B); other commands and flags once', async () => {
  const two = parseCommandLine('ab', ['--url', 'http://a:1', '--url=http://b:2', '--model', 'm', '--api-key-env', 'KA', '--api-key-env', 'KB']);
  assert.deepEqual(two.sides('url'), ['http://a:1', 'http://b:2']);
  assert.deepEqual(two.sides('model'), ['m']);
  assert.deepEqual(two.sides('apiKeyEnv'), ['KA', 'KB']);
  assert.deepEqual(two.sides('header'), []);
  // what reads one value gets side A's
  assert.equal(two.str('url'), 'http://a:1');
  const job = (await buildAbJob(two)).job;
  assert.deepEqual(job.targets, [{ kind: 'endpoint', url: 'http://a:1', api: 'auto', model: 'm' }, { kind: 'endpoint', url: 'http://b:2', api: 'auto', model: 'm' }]);
  assert.equal(job.blocks, 10);
  assert.equal(job.workload.requests, 100);
  // one endpoint, two models
  const models = (await buildAbJob(parseCommandLine('ab', ['--url', 'http://a:1', '--model', 'm1', '--model', 'm2', '-n', '40', '--blocks', '4']))).job;
  assert.deepEqual(models.targets.map((t) => t.kind === 'endpoint' && [t.url, t.model]), [['http://a:1', 'm1'], ['http://a:1', 'm2']]);
  assert.equal(models.blocks, 4);
  // one endpoint, two keys: the sides differ in the key alone
  await buildAbJob(parseCommandLine('ab', ['--url', 'http://a:1', '--api-key-env', 'KA', '--api-key-env', 'KB']));
  assert.equal(parseCommandLine('ab', ['--help']).flag('help'), true);

  const errors: [string[], string, RegExp][] = [
    [['--url', 'http://a:1', '--url', 'http://b:2', '--url', 'http://c:3'], '--url', /--url given more than twice \(once for both sides, or twice: A then B\)/],
    [['--url', 'http://a:1', '--model', 'x', '--model', 'y', '--model', 'z'], '--model', /--model given more than twice/],
    [['--model', 'x', '--model', 'y'], '--url', /needs --url/],
    [['--url', 'http://a:1', '--url', 'http://b:pw@h:2'], '--url', /credentials/],
    [['--url', 'http://a:1', '--blocks', '1'], '--blocks', /--blocks must be a whole number ≥ 2/],
    [['--url', 'http://a:1', '--requests', '5', '--requests', '6'], '--requests', /given more than once/],
  ];
  for (const [argv, flag, re] of errors) {
    assert.throws(() => parseCommandLine('ab', argv), (e: unknown) => e instanceof UsageError && re.test(e.message) && e.flag === flag, `${argv.join(' ')} → ${re.source}`);
  }
  // elsewhere a per-side flag is still given once
  assert.throws(() => parseRunArgs(['--url', 'http://a:1', '--url', 'http://b:2']), (e: unknown) => e instanceof UsageError && /--url given more than once/.test(e.message));
  assert.equal(parseRunArgs(['--url', 'http://a:1']).str('url'), 'http://a:1');
  // the two sides must differ; the requests split evenly into the blocks
  await assert.rejects(buildAbJob(parseCommandLine('ab', ['--url', 'http://a:1', '--url', 'http://a:1/'])), /the two sides are the same/);
  await assert.rejects(buildAbJob(parseCommandLine('ab', ['--url', 'http://a:1', '--url', 'http://b:2', '-n', '25', '--blocks', '10'])), /give a multiple of 10 \(20 or 30\)/);
  // the extension's values: a side's list checked value by value
  assert.deepEqual(OptionValues.of({ url: ['http://a:1', 'http://b:2'] }).sides('url'), ['http://a:1', 'http://b:2']);
  assert.throws(() => OptionValues.of({ url: ['http://a:1', 'ftp://b'] }), /url must be http/);
});

test('run --repeat: the count on the job; one loop only', async () => {
  assert.equal((await runJob(['--url', 'http://h:1', '--repeat', '3'])).repeat, 3);
  assert.equal((await runJob(['--url', 'http://h:1'])).repeat, undefined);
  assert.throws(() => parseRunArgs(['--repeat', '0']), /--repeat must be a whole number ≥ 1/);
  await assert.rejects(runJob(['--url', 'http://h:1', '--repeat', '2', '--workers', '2', '-c', '4']), (e: unknown) => e instanceof UsageError && e.flag === '--workers' && /--repeat sends from one event loop/.test(e.message));
  assert.equal((await runJob(['--url', 'http://h:1', '--workers', '2', '-c', '4'])).repeat, undefined);
});
