// The runner's schedulers, on a fake clock: the open loop's seeded arrivals, its deadline and its
// max-concurrency cap; the closed loop's N workers and its stop.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { arrivalGapsMs, closedLoop, openLoop, sleep, Slots, withinPhase } from '../../src/engine/run/scheduler';
import { FakeClock, settle } from '../support/fakeClock';

/** A send that takes `ms` of fake time and tracks how many are in flight. */
function tracker(clock: FakeClock, ms: (k: number) => number) {
  const t = { inFlight: 0, max: 0, sends: [] as { k: number; due?: number; at: number }[] };
  const send = async (k: number, due?: number) => {
    t.sends.push({ k, ...(due !== undefined ? { due } : {}), at: clock.now() });
    t.inFlight++;
    t.max = Math.max(t.max, t.inFlight);
    await sleep(ms(k), undefined, clock);
    t.inFlight--;
  };
  return { t, send };
}

test('open loop: arrival k is due at the sum of the first k seeded gaps, the first at once, each sent on time', async () => {
  const clock = new FakeClock();
  const start = clock.now();
  const { t, send } = tracker(clock, () => 25);
  const done = openLoop({ rate: 40, burstiness: 0.5, seed: 7, more: (k) => k < 60, send, clock });
  await clock.run();
  await done;
  const gap = arrivalGapsMs(7, 40, 0.5);
  let due = start;
  assert.equal(t.sends.length, 60);
  for (const [k, s] of t.sends.entries()) {
    assert.equal(s.k, k);
    assert.equal(s.due, due, `arrival ${k}`);
    assert.ok(s.at >= due && s.at - due < 0.5, `arrival ${k} sent ${s.at - due} ms after it was due`);
    due += gap();
  }
  assert.ok(t.max > 1, 'an open loop does not wait for replies');
});

test('open loop: the gaps are seeded gamma with mean 1/rate and shape burstiness', () => {
  const sample = (seed: number, burstiness: number) => Array.from({ length: 20_000 }, arrivalGapsMs(seed, 10, burstiness));
  const cv = (xs: number[]) => {
    const mean = xs.reduce((a, x) => a + x, 0) / xs.length;
    return { mean, cv: Math.sqrt(xs.reduce((a, x) => a + (x - mean) ** 2, 0) / xs.length) / mean };
  };
  assert.deepEqual(sample(3, 1).slice(0, 50), sample(3, 1).slice(0, 50), 'the same seed, the same schedule');
  assert.notDeepEqual(sample(3, 1).slice(0, 50), sample(4, 1).slice(0, 50));
  const poisson = cv(sample(3, 1));
  assert.ok(Math.abs(poisson.mean - 100) < 3, `mean gap ${poisson.mean} ms at 10/s`);
  assert.ok(Math.abs(poisson.cv - 1) < 0.05, `Poisson: CV ${poisson.cv}`);
  assert.ok(Math.abs(cv(sample(3, 4)).cv - 0.5) < 0.03, 'gamma shape 4: CV 1/√4');
});

test('open loop with --duration: arrivals due before the deadline are sent, none after; those in flight finish', async () => {
  const clock = new FakeClock();
  const deadline = clock.now() + 1000;
  const { t, send } = tracker(clock, () => 300);
  const done = openLoop({ rate: 20, burstiness: 1, seed: 11, more: (k, due) => withinPhase(undefined, deadline, k, due), send, clock });
  await clock.run();
  await done;
  const gap = arrivalGapsMs(11, 20, 1);
  let due = deadline - 1000;
  let expected = 0;
  while (due < deadline) {
    expected++;
    due += gap();
  }
  assert.equal(t.sends.length, expected);
  assert.ok(t.sends.every((s) => s.due! < deadline));
  assert.equal(t.inFlight, 0, 'the loop ends when the last request has');
  assert.ok(clock.now() >= t.sends[t.sends.length - 1]!.at + 300);
});

test('open loop with max concurrency: never more in flight than the cap, later arrivals held back, all sent', async () => {
  const clock = new FakeClock();
  const { t, send } = tracker(clock, (k) => 30 + (k % 4) * 10);
  const done = openLoop({ rate: 200, burstiness: 1, seed: 5, maxConcurrency: 3, more: (k, due) => withinPhase(25, undefined, k, due), send, clock });
  await clock.run();
  await done;
  assert.equal(t.sends.length, 25);
  assert.equal(t.max, 3);
  assert.ok(t.sends.some((s) => s.at - s.due! > 5), 'some arrivals waited for a slot');
  for (const s of t.sends) assert.ok(s.at >= s.due!);
});

test('open loop: an abort stops the arrivals and releases a waiter for a slot', async () => {
  const clock = new FakeClock();
  const ac = new AbortController();
  const { t, send } = tracker(clock, () => 1000);
  const done = openLoop({ rate: 100, burstiness: 1, seed: 1, maxConcurrency: 2, more: () => true, send, signal: ac.signal, clock });
  await clock.run(clock.now() + 200);
  assert.equal(t.sends.length, 2, 'two in flight, the third waiting for a slot');
  ac.abort();
  await clock.run();
  await done;
  assert.equal(t.sends.length, 2);
});

test('closed loop: N workers, never more than N in flight, each sends its next when its last ends, stops when more(k) says so', async () => {
  const clock = new FakeClock();
  const { t, send } = tracker(clock, (k) => 10 + (k % 3) * 15);
  const asked: number[] = [];
  const done = closedLoop({ workers: 4, more: (k) => (asked.push(k), k < 10), send });
  await clock.run();
  await done;
  assert.deepEqual(t.sends.map((s) => s.k), [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  assert.equal(t.max, 4);
  assert.ok(asked.filter((k) => k >= 10).length <= 4, 'each worker stops at its first no');
  // a worker's next request starts when its previous one ended: k=4 starts at the first end (10 ms)
  assert.equal(t.sends[4]!.at - t.sends[0]!.at, 10);
});

test('closed loop on a deadline: requests are started until the time is up; an abort stops the workers', async () => {
  const clock = new FakeClock();
  const deadline = clock.now() + 100;
  const { t, send } = tracker(clock, () => 30);
  const done = closedLoop({ workers: 2, more: (k) => withinPhase(undefined, deadline, k, clock.now()), send });
  await clock.run();
  await done;
  assert.deepEqual(t.sends.map((s) => s.at - (deadline - 100)), [0, 0, 30, 30, 60, 60, 90, 90]);

  const ac = new AbortController();
  const second = tracker(clock, () => 30);
  const stopped = closedLoop({ workers: 3, more: () => true, send: second.send, signal: ac.signal });
  await clock.run(clock.now() + 45);
  ac.abort();
  await clock.run();
  await stopped;
  assert.equal(second.t.sends.length, 6, 'the round in flight finished, no new one started');
});

test('slots: acquire takes a free slot or waits for a release, in order; an aborted wait gives up its place', async () => {
  const slots = new Slots(1);
  assert.equal(await slots.acquire(undefined), true);
  const order: string[] = [];
  const ac = new AbortController();
  void slots.acquire(undefined).then((ok) => order.push(`a:${ok}`));
  void slots.acquire(ac.signal).then((ok) => order.push(`b:${ok}`));
  void slots.acquire(undefined).then((ok) => order.push(`c:${ok}`));
  ac.abort();
  await settle();
  slots.release();
  await settle();
  slots.release();
  await settle();
  assert.deepEqual(order, ['b:false', 'a:true', 'c:true']);
});
