import { test } from 'node:test';
import assert from 'node:assert/strict';
import { defaultWorkload, validateWorkload, workloadProblems, connectionsFor, WorkloadError } from '../../src/engine/core/workload';

test('defaults: a quick, honest check', () => {
  const w = defaultWorkload();
  assert.deepEqual(w.mode, { kind: 'closed', concurrency: 1 });
  assert.equal(w.requests, 10);
  assert.equal(w.warmup, 1);
  assert.equal(w.maxTokens, 128);
  assert.deepEqual(w.prompt, { kind: 'synthetic', tokens: 256, sharedPrefix: false });
  assert.equal(w.ignoreEos, true);
  assert.equal(w.seed, 0);
  assert.equal(w.timeoutMs, 120_000);
  assert.equal(w.idleTimeoutMs, 30_000);
  assert.deepEqual(w.percentiles, [50, 90, 95, 99]);
  assert.deepEqual(workloadProblems(w), []);
});

test('a duration replaces the request count', () => {
  const w = defaultWorkload({ durationS: 5 });
  assert.equal(w.requests, undefined);
  assert.equal(w.durationS, 5);
  assert.deepEqual(workloadProblems(w), []);
});

test('validation names each bad field', () => {
  const bad = defaultWorkload({ mode: { kind: 'open', rate: 0, burstiness: -1 }, requests: 0, warmup: -1, maxTokens: 1.5, percentiles: [50, 120], slo: { ttftMs: -3 } });
  const p = workloadProblems(bad).join('\n');
  for (const re of [/rate must be/, /burstiness must be/, /requests must be/, /warmup must be/, /maxTokens must be/, /percentile 120/, /slo ttftMs/]) assert.match(p, re);
  assert.throws(() => validateWorkload(bad), WorkloadError);
  assert.match(workloadProblems(defaultWorkload({ requests: 5, durationS: 3 })).join(), /not both/);
  assert.match(workloadProblems(defaultWorkload({ mode: { kind: 'closed', concurrency: 0 } })).join(), /concurrency must be/);
});

test('connections: the concurrency, or a capped guess for an open loop', () => {
  assert.equal(connectionsFor(defaultWorkload({ mode: { kind: 'closed', concurrency: 8 } })), 8);
  assert.equal(connectionsFor(defaultWorkload({ mode: { kind: 'open', rate: 2, burstiness: 1 } })), 20);
  assert.equal(connectionsFor(defaultWorkload({ mode: { kind: 'open', rate: 0.1, burstiness: 1 } })), 4);
  assert.equal(connectionsFor(defaultWorkload({ mode: { kind: 'open', rate: 1000, burstiness: 1 } })), 256);
  assert.equal(connectionsFor(defaultWorkload({ mode: { kind: 'open', rate: 1000, burstiness: 1, maxConcurrency: 3 } })), 3);
});
