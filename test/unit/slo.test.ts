import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseSlo, formatSlo, sloFromObject, SloParseError } from '../../src/engine/core/slo';

test('parseSlo reads every key in ms', () => {
  assert.deepEqual(parseSlo('ttft=500,tpot=50,itl=100,e2e=20000'), { ttftMs: 500, tpotMs: 50, itlMs: 100, e2eMs: 20000 });
  assert.deepEqual(parseSlo(' TTFT = 250ms , e2el=1000 '), { ttftMs: 250, e2eMs: 1000 });
  assert.deepEqual(parseSlo('tpot:12.5'), { tpotMs: 12.5 });
});

test('parseSlo names the bad part', () => {
  const bad: [string, RegExp][] = [
    ['', /empty SLO/],
    ['ttft', /bad SLO part "ttft"/],
    ['ttft=abc', /bad SLO value in "ttft=abc"/],
    ['ttft=-5', /bad SLO value in "ttft=-5"/],
    ['ttft=0', /bad SLO value in "ttft=0"/],
    ['ttft=500,,tpot=5', /empty part/],
    ['latency=5', /unknown SLO "latency"/],
    ['ttft=5,ttft=6', /"ttft" given twice/],
  ];
  for (const [text, re] of bad) {
    assert.throws(() => parseSlo(text), (e: unknown) => e instanceof SloParseError && re.test((e as Error).message), text);
  }
});

test('formatSlo round-trips', () => {
  const s = { ttftMs: 500, tpotMs: 50, itlMs: 100, e2eMs: 20000 };
  assert.equal(formatSlo(s), 'ttft=500,tpot=50,itl=100,e2e=20000');
  assert.deepEqual(parseSlo(formatSlo(s)), s);
});

test('sloFromObject (prompt-file blocks) reports bad entries and keeps good ones', () => {
  assert.deepEqual(sloFromObject({ ttft: 500, tpot: '50ms' }), { slo: { ttftMs: 500, tpotMs: 50 }, problems: [] });
  const r = sloFromObject({ ttft: -1, speed: 3, e2e: 100 });
  assert.deepEqual(r.slo, { e2eMs: 100 });
  assert.equal(r.problems.length, 2);
  assert.deepEqual(sloFromObject('fast').problems.length, 1);
});
