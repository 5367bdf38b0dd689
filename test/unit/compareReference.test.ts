// The comparison's statistics against a reference computed independently with numpy and scipy
// (test/fixtures/compare/make_reference.py writes reference.json): the weighted percentile walk must
// equal numpy's percentile of the expanded sample exactly; the bootstrap intervals must agree with
// scipy.stats.bootstrap (and numpy cluster and two-stage bootstraps) within Monte Carlo error.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { clusterValues, weightedMean, weightedPercentiles } from '../../src/engine/analysis/resample';
import { compareSides } from '../../src/engine/analysis/compare';
import type { CompareRow, RowKey, Side } from '../../src/engine/analysis/compare';
import type { RequestRecord } from '../../src/engine/core/types';

interface Interval { readonly diff: number; readonly ci: [number, number] }
interface Reference {
  readonly weighted: { values: number[]; weights: number[]; ps: number[]; percentiles: number[]; mean: number }[];
  readonly requests: { base: number[]; next: number[]; rows: Record<'p50' | 'p90' | 'mean', Interval & { se: number }> };
  readonly itl: { base: number[][]; next: number[][]; rows: Record<'p50' | 'p90', Interval> };
  readonly repeats: { base: number[][]; next: number[][]; p50: Interval };
}

const REF = JSON.parse(readFileSync(join(import.meta.dirname, '../fixtures/compare/reference.json'), 'utf8')) as Reference;

function request(index: number, fields: Partial<RequestRecord>): RequestRecord {
  return { index, warmup: false, scheduledAt: 0, sentAt: 0, outputTokens: 1, tokenSource: 'usage', chunkTimesMs: [], ...fields };
}

/** A side whose requests carry one TTFT each, in groups (repetitions) of the given sizes. */
function ttftSide(groups: readonly (readonly number[])[]): Side {
  const requests: RequestRecord[] = [];
  const indexes = groups.map((g, r) => g.map((v) => {
    requests.push(request(requests.length, { ttftMs: v, e2eMs: v, repeat: r }));
    return requests.length - 1;
  }));
  return { runId: 'x', startedAt: '', requests, groups: indexes, timeShare: requests.map(() => 1) };
}

/** A side whose requests stream chunks with the given gaps. */
function gapSide(lists: readonly (readonly number[])[]): Side {
  const requests = lists.map((gaps, i) => {
    let t = 5;
    const times = [t, ...gaps.map((g) => (t += g))];
    return request(i, { ttftMs: 5, e2eMs: t, outputTokens: times.length, chunkTimesMs: times });
  });
  return { runId: 'x', startedAt: '', requests, groups: [requests.map((_, i) => i)], timeShare: requests.map(() => 1) };
}

function row(rows: readonly CompareRow[], key: RowKey): CompareRow {
  return rows.find((r) => r.key === key)!;
}

/** Within Monte Carlo error of the reference: each end within 5% of the reference interval's width. */
function assertInterval(got: readonly [number, number] | undefined, want: readonly [number, number], what: string): void {
  assert.ok(got, `${what}: no interval`);
  const tol = 0.05 * (want[1] - want[0]);
  assert.ok(Math.abs(got[0] - want[0]) <= tol && Math.abs(got[1] - want[1]) <= tol, `${what}: got [${got.join(', ')}], reference [${want.join(', ')}] ± ${tol.toFixed(4)}`);
}

test('the weighted percentile walk equals numpy.percentile of the expanded sample, exactly', () => {
  for (const c of REF.weighted) {
    const values = clusterValues(c.values.map((v) => [v]));
    // weights are per request: clusterValues keeps each value's request, so index by the original order
    assert.deepEqual(weightedPercentiles(values, c.weights, c.ps), c.percentiles, `n=${c.values.length}`);
    assert.ok(Math.abs(weightedMean(values, c.weights) - c.mean) < 1e-9 * Math.abs(c.mean));
  }
});

test('request bootstrap: differences exact, intervals as scipy.stats.bootstrap (percentile method)', () => {
  const c = compareSides(ttftSide([REF.requests.base]), ttftSide([REF.requests.next]), { resamples: 10_000, seed: 3 });
  for (const [stat, want] of Object.entries(REF.requests.rows)) {
    const r = row(c.rows, `ttft.${stat}` as RowKey);
    assert.ok(Math.abs(r.diff! - want.diff) < 1e-9, `ttft.${stat} diff ${r.diff} vs ${want.diff}`);
    assertInterval(r.ci, want.ci, `ttft.${stat}`);
  }
  assert.equal(c.method.resampling, 'requests');
});

test('ITL is resampled by request (its gaps whole), as a numpy cluster bootstrap', () => {
  const c = compareSides(gapSide(REF.itl.base), gapSide(REF.itl.next), { resamples: 10_000, seed: 5 });
  for (const [stat, want] of Object.entries(REF.itl.rows)) {
    const r = row(c.rows, `itl.${stat}` as RowKey);
    assert.ok(Math.abs(r.diff! - want.diff) < 1e-9, `itl.${stat} diff ${r.diff} vs ${want.diff}`);
    assertInterval(r.ci, want.ci, `itl.${stat}`);
  }
});

test('repetitions are resampled first, then requests within them, as a numpy two-stage bootstrap', () => {
  const c = compareSides(ttftSide(REF.repeats.base), ttftSide(REF.repeats.next), { resamples: 10_000, seed: 9 });
  const r = row(c.rows, 'ttft.p50');
  assert.equal(c.method.resampling, 'repetitions, then requests');
  assert.ok(Math.abs(r.diff! - REF.repeats.p50.diff) < 1e-9);
  assertInterval(r.ci, REF.repeats.p50.ci, 'ttft.p50 by repetition');
  // the same requests pooled as one run: drift between repetitions is no longer in the interval, which narrows
  const pooled = compareSides(ttftSide([REF.repeats.base.flat()]), ttftSide([REF.repeats.next.flat()]), { resamples: 10_000, seed: 9 });
  const narrow = row(pooled.rows, 'ttft.p50').ci!;
  assert.ok(narrow[1] - narrow[0] < 0.8 * (r.ci![1] - r.ci![0]), `pooled [${narrow.join(', ')}] vs by repetition [${r.ci!.join(', ')}]`);
});
