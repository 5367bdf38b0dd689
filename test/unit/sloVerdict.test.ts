// The SLO verdict the CodeLens shows above a prompt after a run (src/present/runText.ts).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { lensResult, sloVerdict } from '../../src/present/runText';

const run = { completed: 5, failed: 0, ttftP50Ms: 312, ttftP99Ms: 540, tpotP50Ms: 41, tpotP99Ms: 63, itlP99Ms: 70, e2eP99Ms: 3000 };

test('no SLO, or an empty one: no verdict', () => {
  assert.equal(sloVerdict(run, undefined), undefined);
  assert.equal(sloVerdict(run, {}), undefined);
  assert.equal(lensResult(run), 'TTFT p50 312 ms · p99 540 ms · TPOT 41 ms');
});

test('every p99 within its limit passes; a limit equal to the p99 passes (as the engine judges)', () => {
  assert.equal(sloVerdict(run, { ttftMs: 600, tpotMs: 63 }), 'SLO ✓');
  assert.equal(lensResult(run, { ttftMs: 600, tpotMs: 70 }), 'TTFT p50 312 ms · p99 540 ms · TPOT 41 ms · SLO ✓');
});

test('each missed SLO is named with its p99 and its limit', () => {
  assert.equal(sloVerdict(run, { tpotMs: 50 }), 'SLO ✗ tpot p99 63 ms > 50 ms');
  assert.equal(sloVerdict(run, { ttftMs: 500, tpotMs: 50, itlMs: 100, e2eMs: 20_000 }), 'SLO ✗ ttft p99 540 ms > 500 ms, tpot p99 63 ms > 50 ms');
  assert.equal(lensResult(run, { tpotMs: 50 }), 'TTFT p50 312 ms · p99 540 ms · TPOT 41 ms · SLO ✗ tpot p99 63 ms > 50 ms');
});

test('a metric without a sample is not held against the run; nothing completed is a fail', () => {
  assert.equal(sloVerdict({ completed: 3, ttftP99Ms: 100 }, { ttftMs: 200, itlMs: 10 }), 'SLO ✓');
  assert.equal(sloVerdict({ completed: 0 }, { ttftMs: 200 }), 'SLO ✗ none completed');
  assert.equal(lensResult({ completed: 0, failed: 2 }, { ttftMs: 200 }), 'last run: 2 failed, none completed · SLO ✗ none completed');
  assert.equal(lensResult({ completed: 0, failed: 2 }), 'last run: 2 failed, none completed');
});
