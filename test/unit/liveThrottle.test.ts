import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LiveThrottle, type ThrottleClock } from '../../src/extension/liveThrottle';

class FakeClock implements ThrottleClock {
  t = 1000;
  timers: { at: number; fn: () => void; id: number }[] = [];
  #id = 0;
  now(): number { return this.t; }
  setTimeout(fn: () => void, ms: number): unknown { const id = ++this.#id; this.timers.push({ at: this.t + ms, fn, id }); return id; }
  clearTimeout(h: unknown): void { this.timers = this.timers.filter((x) => x.id !== h); }
  advance(ms: number): void {
    const end = this.t + ms;
    for (;;) {
      this.timers.sort((a, b) => a.at - b.at);
      const next = this.timers[0];
      if (!next || next.at > end) break;
      this.timers.shift();
      this.t = next.at;
      next.fn();
    }
    this.t = end;
  }
}

test('the first update goes out at once, later ones at most every 100 ms with all records', () => {
  const clock = new FakeClock();
  const sent: { p: number; r: number[]; at: number }[] = [];
  const th = new LiveThrottle<number, number>((p, r) => sent.push({ p, r, at: clock.t }), 100, clock);
  th.update(1, [1]);
  assert.deepEqual(sent, [{ p: 1, r: [1], at: 1000 }]);
  clock.advance(10); th.update(2, [2]);
  clock.advance(10); th.update(3, [3, 4]);
  assert.equal(sent.length, 1, 'batched, not sent yet');
  clock.advance(80);
  assert.deepEqual(sent[1], { p: 3, r: [2, 3, 4], at: 1100 });
  clock.advance(500); // quiet: nothing to send
  assert.equal(sent.length, 2);
  th.update(4, [5]); // long after the last flush: at once again
  assert.deepEqual(sent[2], { p: 4, r: [5], at: 1600 });
});

test('the gaps between flushes are never under the interval', () => {
  const clock = new FakeClock();
  const at: number[] = [];
  const th = new LiveThrottle<number, number>(() => at.push(clock.t), 100, clock);
  for (let i = 0; i < 1000; i++) { th.update(i, [i]); clock.advance(3); }
  th.close();
  for (let i = 1; i < at.length - 1; i++) assert.ok(at[i]! - at[i - 1]! >= 100, `flush ${i} came ${at[i]! - at[i - 1]!} ms after the last`);
  assert.ok(at.length >= 29 && at.length <= 32, `about one flush per 100 ms (${at.length})`);
});

test('close flushes what is pending, cancels the timer and ignores later updates', () => {
  const clock = new FakeClock();
  const sent: number[][] = [];
  const th = new LiveThrottle<number, number>((_p, r) => sent.push(r), 100, clock);
  th.update(1, [1]);
  th.update(2, [2]);
  th.close();
  assert.deepEqual(sent, [[1], [2]]);
  assert.equal(clock.timers.length, 0);
  th.update(3, [3]);
  clock.advance(1000);
  assert.deepEqual(sent, [[1], [2]]);
  const th2 = new LiveThrottle<number, number>((_p, r) => sent.push(r), 100, clock);
  th2.update(1, [9]); th2.update(1, [10]); th2.close(false);
  assert.deepEqual(sent.at(-1), [9], 'close(false) drops the pending batch');
});
