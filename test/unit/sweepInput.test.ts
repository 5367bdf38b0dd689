// The extension's Sweep: what it offers on each axis and how a typed list of values is checked
// (src/jobs/presets.ts), against the same options table as the CLI's `sweep --rate`, `--prompt-tokens`.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildSweepJob } from '../../src/jobs/build';
import { parseSweepValues, SWEEP_PROMPT_LENGTHS, SWEEP_RATES, sweepConcurrencies } from '../../src/jobs/presets';
import { OptionValues } from '../../src/jobs/values';
import { defaultConcurrencies } from '../../src/engine/run/sweep';

test('the defaults on each axis', () => {
  assert.deepEqual(sweepConcurrencies(8), [1, 2, 4, 8]);
  assert.deepEqual(sweepConcurrencies(12), defaultConcurrencies(12), 'the engine\'s list');
  assert.deepEqual(SWEEP_RATES, [1, 2, 4, 8]);
  assert.deepEqual(SWEEP_PROMPT_LENGTHS, [128, 512, 2048]);
  for (const [axis, values] of [['rate', SWEEP_RATES], ['promptTokens', SWEEP_PROMPT_LENGTHS], ['concurrency', sweepConcurrencies(8)]] as const) {
    assert.deepEqual(parseSweepValues(axis, values.join(', ')), { values: [...values] }, `${axis}: the offered default is valid`);
  }
});

test('a typed list: commas or spaces; each value checked as its option; two or more, each once', () => {
  assert.deepEqual(parseSweepValues('rate', '0.5,1, 2  4'), { values: [0.5, 1, 2, 4] });
  assert.deepEqual(parseSweepValues('rate', '4'), { problem: 'Enter two or more values, separated by commas' });
  assert.deepEqual(parseSweepValues('rate', ''), { problem: 'Enter two or more values, separated by commas' });
  assert.deepEqual(parseSweepValues('rate', '1,0'), { problem: '0: Enter a number above 0' });
  assert.deepEqual(parseSweepValues('rate', '1,fast'), { problem: 'fast: Enter a number' });
  assert.deepEqual(parseSweepValues('promptTokens', '128,1.5'), { problem: '1.5: Enter a whole number' });
  assert.deepEqual(parseSweepValues('promptTokens', '128,2000000'), { problem: '2000000: Enter a number from 1 to 1048576' });
  assert.deepEqual(parseSweepValues('concurrency', '1,2,2'), { problem: 'Enter each value once' });
  assert.deepEqual(parseSweepValues('concurrency', '1,5000'), { problem: '5000: Enter a number from 1 to 4096' });
});

test('the values the extension passes build the sweep the CLI would (rate, prompt length)', async () => {
  const target = { kind: 'endpoint', url: 'http://127.0.0.1:9', api: 'openai-chat' } as const;
  const rate = await buildSweepJob(OptionValues.of({ rate: [1, 2, 4], requests: 4, promptTokens: 64 }, 'the workload:'), { target });
  assert.equal(rate.job.dimension, 'rate');
  assert.deepEqual(rate.job.values, [1, 2, 4]);
  const lengths = await buildSweepJob(OptionValues.of({ promptTokens: [128, 512], requests: 4 }, 'the workload:'), { target });
  assert.equal(lengths.job.dimension, 'promptTokens');
  assert.deepEqual(lengths.job.values, [128, 512]);
});
