// The SLO verdict the CodeLens shows above a prompt after a run (src/present/runText.ts).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { lensResult, lensVerdict } from '../../src/present/runText';

const run = { completed: 5, failed: 0, ttftP50Ms: 312, ttftP99Ms: 540, tpotP50Ms: 41, tpotP99Ms: 63, itlP99Ms: 70, e2eP99Ms: 3000 };

test('no SLO, or an empty one: no verdict', () => {
  assert.equal(lensVerdict(run, undefined), undefined);
  assert.equal(lensVerdict(run, {}), undefined);
  assert.equal(lensResult(run), 'TTFT p50 312 ms · p99 540 ms · TPOT 41 ms');
});

test('every p99 within its limit passes; a limit equal to the p99 passes (as the engine judges)', () => {
  assert.equal(lensVerdict(run, { ttftMs: 600, tpotMs: 63 })?.title, '✓ SLOs met');
  assert.deepEqual(lensVerdict(run, { ttftMs: 600, tpotMs: 70 }), { title: '✓ SLOs met', tooltip: 'SLO ttft=600,tpot=70 (ms, at p99): met by the last run' });
});

test('each missed SLO is named with its p99 and its limit', () => {
  assert.match(lensVerdict(run, { tpotMs: 50 })!.tooltip, /missed by the last run: TPOT p99 63 ms > 50 ms$/);
  assert.match(lensVerdict(run, { ttftMs: 500, tpotMs: 50, itlMs: 100, e2eMs: 20_000 })!.tooltip, /missed by the last run: TTFT p99 540 ms > 500 ms, TPOT p99 63 ms > 50 ms$/);
  assert.equal(lensVerdict(run, { tpotMs: 50 })?.title, '✗ TPOT p99 63 ms > 50 ms');
});

test('a metric without a sample is not held against the run; nothing completed is a fail', () => {
  assert.equal(lensVerdict({ completed: 3, ttftP99Ms: 100 }, { ttftMs: 200, itlMs: 10 })?.title, '✓ SLOs met');
  assert.match(lensVerdict({ completed: 0 }, { ttftMs: 200 })!.tooltip, /missed, no request of the last run completed/);
  assert.equal(lensVerdict({ completed: 0 }, { ttftMs: 200 })?.title, '✗ none completed');
  assert.equal(lensResult({ completed: 0, failed: 2 }), 'last run: 2 failed, none completed');
});

test('the verdict lens is short whatever the misses (a narrow editor cuts a line of lenses at its end); the tooltip has them all', () => {
  assert.equal(lensVerdict(run, undefined), undefined);
  assert.equal(lensVerdict(run, {}), undefined);
  const slow = { completed: 5, failed: 0, ttftP99Ms: 1234, tpotP99Ms: 63, itlP99Ms: 70, e2eP99Ms: 30_000 };
  const v = lensVerdict(slow, { ttftMs: 1000, tpotMs: 50, itlMs: 100, e2eMs: 20_000 })!;
  assert.equal(v.title, '✗ TTFT p99 1,234 ms > 1,000 ms +2');
  assert.equal(v.tooltip, 'SLO ttft=1000,tpot=50,itl=100,e2e=20000 (ms, at p99): missed by the last run: TTFT p99 1,234 ms > 1,000 ms, TPOT p99 63 ms > 50 ms, E2E p99 30 s > 20 s');
  assert.equal(lensVerdict({ completed: 3, ttftP99Ms: 12_000 }, { ttftMs: 10_000 })!.title, '✗ TTFT p99 12 s > 10 s');
  for (const t of [v.title, lensVerdict(run, { ttftMs: 600 })!.title]) assert.ok(t.length <= 36, `"${t}" is ${t.length} characters`);
  // the figures lens no longer carries the verdict
  assert.equal(lensResult({ ...run, failed: 1 }), 'TTFT p50 312 ms · p99 540 ms · TPOT 41 ms · 1 failed');
});
