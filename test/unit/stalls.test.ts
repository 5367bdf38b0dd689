import { test } from 'node:test';
import assert from 'node:assert/strict';
import { findStalls, summarizeStalls } from '../../src/engine/analysis/stalls';
import { DEFAULT_STALL_FACTOR, DEFAULT_STALL_FLOOR_MS, defaultWorkload } from '../../src/engine/core/workload';
import type { RequestRecord } from '../../src/engine/core/types';

function stream(index: number, gaps: number[], sentAt = 1_000): RequestRecord {
  const times = [200];
  for (const g of gaps) times.push(times[times.length - 1]! + g);
  return { index, warmup: false, scheduledAt: sentAt, sentAt, outputTokens: times.length, tokenSource: 'chunks', chunkTimesMs: times, ttftMs: 200, e2eMs: times[times.length - 1] };
}

test('defaults are factor 3 and floor 50 ms, and the workload carries them', () => {
  assert.equal(DEFAULT_STALL_FACTOR, 3);
  assert.equal(DEFAULT_STALL_FLOOR_MS, 50);
  const w = defaultWorkload();
  assert.equal(w.stallFactor, 3);
  assert.equal(w.stallFloorMs, 50);
});

test('a gap over factor × the stream median and over the floor is a stall, with its start and median', () => {
  const r = stream(7, [20, 20, 20, 200, 20, 20], 5_000);
  const s = findStalls(r, 3, 50);
  assert.equal(s.length, 1);
  assert.deepEqual(s[0], { requestIndex: 7, startMs: 260, startAt: 5_260, gapMs: 200, medianItlMs: 20, atChunk: 4 });
});

test('the floor keeps fast-stream jitter out; the factor keeps slow streams out', () => {
  // median 5 ms: a 40 ms gap is 8× the median but under the 50 ms floor
  assert.equal(findStalls(stream(0, [5, 5, 5, 40, 5]), 3, 50).length, 0);
  // median 100 ms: a 250 ms gap is over the floor but under 3×
  assert.equal(findStalls(stream(0, [100, 100, 250, 100]), 3, 50).length, 0);
  // exactly at the threshold is not a stall (strictly longer)
  assert.equal(findStalls(stream(0, [20, 20, 60, 20]), 3, 50).length, 0);
  assert.equal(findStalls(stream(0, [20, 20, 60.5, 20]), 3, 50).length, 1);
  // a stream with one token has no gaps
  assert.equal(findStalls(stream(0, []), 3, 50).length, 0);
});

test('summary: count, total, share of decode time and the worst first', () => {
  const a = stream(0, [10, 10, 10, 100, 10]); // decode 140, stall 100
  const b = stream(1, [10, 300, 10, 10, 80]); // decode 410, stalls 300 and 80
  const c = stream(2, [10, 10, 10]); // decode 30, none
  const s = summarizeStalls([a, b, c], 3, 50, { worstCount: 2 });
  assert.equal(s.count, 3);
  assert.equal(s.totalMs, 480);
  assert.ok(Math.abs(s.shareOfDecode - 480 / 580) < 1e-12);
  assert.deepEqual(s.worst.map((x) => [x.requestIndex, x.gapMs]), [[1, 300], [0, 100]]);
  assert.equal(s.factor, 3);
  assert.equal(s.floorMs, 50);
  const none = summarizeStalls([], 3, 50);
  assert.deepEqual({ ...none, worst: [...none.worst] }, { count: 0, totalMs: 0, shareOfDecode: 0, worst: [], factor: 3, floorMs: 50 });
});
