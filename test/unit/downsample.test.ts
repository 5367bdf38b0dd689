import { test } from 'node:test';
import assert from 'node:assert/strict';
import { largestGapPerBucket, lowerBound } from '../../webview/report/downsample';
import { rng } from '../support/fixtureRuns';

function randomTimes(seed: number, n: number): Float64Array {
  const r = rng(seed);
  const t = new Float64Array(n);
  let x = r() * 10;
  for (let i = 0; i < n; i++) {
    x += r() < 0.02 ? 50 + r() * 500 : r() * 5; // mostly small steps, now and then a big gap
    t[i] = x;
  }
  return t;
}

test('lowerBound finds the first index not below the value', () => {
  const t = [1, 2, 2, 5];
  assert.equal(lowerBound(t, 0), 0);
  assert.equal(lowerBound(t, 2), 1);
  assert.equal(lowerBound(t, 3), 3);
  assert.equal(lowerBound(t, 6), 4);
});

test('every gap at least one bucket wide survives, at its true position', () => {
  for (const seed of [1, 2, 3, 4, 5]) {
    const t = randomTimes(seed, 20_000);
    const viewStart = t[100]! - 3;
    const viewEnd = t[15_000]! + 7;
    const buckets = 800;
    const width = (viewEnd - viewStart) / buckets;
    const res = largestGapPerBucket(t, viewStart, viewEnd, buckets);
    const kept = new Map<number, number>();
    for (let b = 0; b < buckets; b++) if (res.gapLength[b]! > 0) kept.set(res.gapStart[b]!, res.gapLength[b]!);
    let checked = 0;
    for (let i = 1; i < t.length; i++) {
      const s = t[i - 1]!;
      const e = Math.min(t[i]!, viewEnd);
      if (s < viewStart || s >= viewEnd) continue;
      if (e - s >= width) {
        checked++;
        assert.equal(kept.get(s), e - s, `seed ${seed}: gap at ${s} of ${e - s} was hidden`);
      }
    }
    assert.ok(checked > 10, 'the test data has wide gaps to check');
  }
});

test('counts add up to the chunks inside the view', () => {
  const t = randomTimes(9, 5000);
  const res = largestGapPerBucket(t, t[10]!, t[4000]!, 123);
  const total = res.counts.reduce((a, b) => a + b, 0);
  assert.equal(total, 4000 - 10);
});

test('a gap that starts off-screen and ends inside is clipped to the left edge', () => {
  const t = [0, 10, 1000, 1010];
  const res = largestGapPerBucket(t, 500, 1500, 10);
  assert.equal(res.gapStart[0], 500);
  assert.equal(res.gapLength[0], 500);
});

test('a gap spanning the whole view fills it', () => {
  const res = largestGapPerBucket([0, 10_000], 100, 200, 4);
  assert.equal(res.gapStart[0], 100);
  assert.equal(res.gapLength[0], 100);
  assert.equal(res.counts.reduce((a, b) => a + b, 0), 0);
});

test('the largest gap in a bucket wins over smaller ones', () => {
  const res = largestGapPerBucket([0, 1, 4, 5, 6], 0, 10, 1);
  assert.equal(res.gapStart[0], 1);
  assert.equal(res.gapLength[0], 3);
  assert.equal(res.counts[0], 5);
});

test('empty input and empty views give empty buckets', () => {
  const a = largestGapPerBucket([], 0, 10, 5);
  assert.equal(a.counts.reduce((x, y) => x + y, 0), 0);
  const b = largestGapPerBucket([1, 2, 3], 5, 5, 5);
  assert.ok(b.gapLength.every((g) => g === 0));
});
