// The worker threads' shared parts: the split of streams over threads, the thread count a workload
// gets, the shared claim counter and the ordered --max-concurrency semaphore (real Atomics on a
// SharedArrayBuffer, across real worker threads), and one time base on every thread.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { realClock } from '../../src/engine/core/clock';
import { defaultWorkload, WorkloadError } from '../../src/engine/core/workload';
import { AUTO_WORKERS_CAP, AUTO_WORKERS_MIN_STREAMS, mergeConnections, streamsOf, threadsFor, withWorkers } from '../../src/engine/run/workers/coordinator';
import { CELL, claim, SharedSlots, sharedCells, splitEvenly } from '../../src/engine/run/workers/sharedCells';

const SRC = join(__dirname, '../../src/engine');

/** A worker thread running `body` (CommonJS, with `shared` and `clock` required from the source through tsx), given `data`. */
function thread(body: string, data: unknown): Worker {
  const code = `require('tsx/cjs');
const { parentPort, workerData } = require('node:worker_threads');
const shared = require(${JSON.stringify(join(SRC, 'run/workers/sharedCells.ts'))});
const { realClock } = require(${JSON.stringify(join(SRC, 'core/clock.ts'))});
${body}`;
  return new Worker(code, { eval: true, workerData: data });
}

function result<T>(w: Worker): Promise<T> {
  return new Promise((resolve, reject) => {
    w.once('message', (m: T) => resolve(m));
    w.once('error', reject);
  });
}

test('splitEvenly: as even as can be, the larger shares first, every stream counted once', () => {
  assert.deepEqual(splitEvenly(5, 2), [3, 2]);
  assert.deepEqual(splitEvenly(4096, 8), new Array(8).fill(512));
  assert.deepEqual(splitEvenly(3, 4), [1, 1, 1, 0]);
  assert.deepEqual(splitEvenly(1025, 4), [257, 256, 256, 256]);
  assert.deepEqual(splitEvenly(7, 1), [7]);
  for (const [total, n] of [[0, 3], [13, 5], [1000, 7]] as const) {
    const s = splitEvenly(total, n);
    assert.equal(s.reduce((a, b) => a + b, 0), total);
    assert.ok(Math.max(...s) - Math.min(...s) <= 1);
  }
});

test('threadsFor: one loop below the stream threshold, the cores (capped) above, --workers as asked within the concurrency', () => {
  const closed = (concurrency: number, workers?: number) => defaultWorkload({ mode: { kind: 'closed', concurrency }, ...(workers !== undefined ? { workers } : {}) });
  assert.equal(threadsFor(closed(16), 16), 1);
  assert.equal(threadsFor(closed(AUTO_WORKERS_MIN_STREAMS - 1), 16), 1);
  assert.equal(threadsFor(closed(AUTO_WORKERS_MIN_STREAMS), 2), 2);
  assert.equal(threadsFor(closed(4096), 64), AUTO_WORKERS_CAP);
  assert.equal(threadsFor(closed(4096), 1), 1);
  assert.equal(threadsFor(closed(1024, 1), 16), 1, '--workers 1 forces one loop');
  assert.equal(threadsFor(closed(8, 4), 2), 4, 'asked for: that many, whatever the cores');
  assert.equal(threadsFor(closed(2, 4), 16), 2, 'never more threads than streams in a closed loop');
  // an open loop: rate × maxTokens × 10 ms in flight (Little's law at 100 tokens/s), within its cap
  const open = (rate: number, maxTokens: number, maxConcurrency?: number) => defaultWorkload({ mode: { kind: 'open', rate, burstiness: 1, ...(maxConcurrency !== undefined ? { maxConcurrency } : {}) }, maxTokens });
  assert.equal(streamsOf(open(100, 128)), 128);
  assert.equal(threadsFor(open(100, 128), 8), 1, 'an open loop of 128 streams: one loop');
  assert.equal(threadsFor(open(400, 128), 8), 8, 'an open loop of 512 streams');
  assert.equal(threadsFor(open(100, 2), 8), 1, 'a high rate of short requests: few streams');
  assert.equal(threadsFor(open(1000, 128, 64), 8), 1, 'capped below the threshold');
  assert.equal(threadsFor(open(1000, 128, 1024), 4), 4);
  assert.throws(() => threadsFor(closed(8, 0)), (e: unknown) => e instanceof WorkloadError && /workers must be a whole number ≥ 1, got 0/.test(e.message));
  assert.throws(() => threadsFor(closed(8, 1.5)), WorkloadError);
});

test('withWorkers: the run file records the threads that ran, nothing for one loop', () => {
  const w = defaultWorkload({ workers: 3 });
  assert.equal(withWorkers(w, 2).workers, 2);
  assert.equal('workers' in withWorkers(w, 1), false);
});

test('mergeConnections: counts added, set-up times in thread order', () => {
  const merged = mergeConnections([
    { connections: 2, connectMs: [1, 2], handshakes: [{ totalMs: 1 }, { totalMs: 2 }] },
    undefined,
    { connections: 1, connectMs: [3], reopened: [{ totalMs: 4 }] },
  ]);
  assert.deepEqual(merged, { connections: 3, connectMs: [1, 2, 3], handshakes: [{ totalMs: 1 }, { totalMs: 2 }], reopened: [{ totalMs: 4 }] });
  assert.equal(mergeConnections([undefined]), undefined);
});

test('claim: three threads and this one take every k exactly once, and the busier take more', async () => {
  const cells = sharedCells();
  const total = 20_000;
  const body = `const got = []; for (;;) { const k = shared.claim(workerData.cells, shared.CELL.measuredNext); if (k >= workerData.total) break; got.push(k); } parentPort.postMessage(got);`;
  const workers = [0, 1, 2].map(() => thread(body, { cells, total }));
  const mine: number[] = [];
  // this thread claims too, a little at a time, while the others run
  while (mine.length < 50) {
    const k = claim(cells, CELL.measuredNext);
    if (k >= total) break;
    mine.push(k);
    await new Promise((r) => setImmediate(r));
  }
  const theirs = await Promise.all(workers.map((w) => result<number[]>(w)));
  await Promise.all(workers.map((w) => w.terminate()));
  const all = [...mine, ...theirs.flat()].sort((a, b) => a - b);
  assert.equal(all.length, total);
  assert.deepEqual(all, Array.from({ length: total }, (_, i) => i));
  for (const list of [mine, ...theirs]) for (let i = 1; i < list.length; i++) assert.ok(list[i]! > list[i - 1]!, 'each thread gets increasing k');
});

test('SharedSlots: at most max taken, in arrival order (a later arrival never overtakes), an abort gives up the wait', async () => {
  const cells = sharedCells();
  // two "threads" (two views of the same cells, as each worker has its own)
  const a = new SharedSlots(cells, 2);
  const b = new SharedSlots(cells, 2);
  assert.equal(await a.acquire(0, undefined), true);
  assert.equal(await b.acquire(1, undefined), true);
  assert.equal(a.used, 2);
  const order: number[] = [];
  const third = b.acquire(3, undefined).then((ok) => order.push(3) && ok);
  const second = a.acquire(2, undefined).then((ok) => order.push(2) && ok);
  await new Promise((r) => setTimeout(r, 30));
  assert.deepEqual(order, [], 'both wait while 2 are taken');
  a.release();
  assert.equal(await second, true);
  await new Promise((r) => setTimeout(r, 30));
  assert.deepEqual(order, [2], 'arrival 3 waits for a slot, after 2 took the freed one');
  b.release();
  assert.equal(await third, true);
  assert.deepEqual(order, [2, 3]);
  assert.equal(b.used, 2);
  const ctrl = new AbortController();
  const waiting = a.acquire(4, ctrl.signal);
  setTimeout(() => ctrl.abort(), 20);
  assert.equal(await waiting, false);
  assert.equal(a.used, 2, 'an aborted wait takes nothing');
});

test('SharedSlots across threads: four threads, 400 arrivals, never more than 3 held, each taken in k order', async () => {
  const cells = sharedCells();
  const held = new Int32Array(new SharedArrayBuffer(8));
  const n = 4;
  const arrivals = 400;
  const body = `
const slots = new shared.SharedSlots(workerData.cells, 3);
const order = [];
let maxSeen = 0;
(async () => {
  const mine = [];
  for (let k = workerData.id; k < workerData.arrivals; k += workerData.n) mine.push(k);
  await Promise.all(mine.map(async (k) => {
    await slots.acquire(k, undefined);
    order.push(k);
    const now = Atomics.add(workerData.held, 0, 1) + 1;
    maxSeen = Math.max(maxSeen, now);
    await new Promise((r) => setTimeout(r, (k * 7) % 3));
    Atomics.sub(workerData.held, 0, 1);
    slots.release();
  }));
  parentPort.postMessage({ order, maxSeen });
})();`;
  const workers = Array.from({ length: n }, (_, id) => thread(body, { cells, held, id, n, arrivals }));
  const out = await Promise.all(workers.map((w) => result<{ order: number[]; maxSeen: number }>(w)));
  await Promise.all(workers.map((w) => w.terminate()));
  assert.ok(Math.max(...out.map((o) => o.maxSeen)) <= 3, `held at once: ${out.map((o) => o.maxSeen).join(', ')}`);
  for (const o of out) assert.deepEqual(o.order, [...o.order].sort((x, y) => x - y), 'each thread took its slots in k order');
  assert.equal(out.reduce((s, o) => s + o.order.length, 0), arrivals);
  assert.equal(Atomics.load(cells, CELL.used), 0);
  assert.equal(Atomics.load(cells, CELL.ticket), arrivals);
});

test('one time base: a worker thread and this one read the same instant to < 0.1 ms (epoch = timeOrigin + now())', async () => {
  // ping-pong on shared cells, both sides spinning: main reads t1 and signals; the worker reads tw
  // when it sees it and answers; main reads t2 when it sees that. Agreeing clocks put tw in [t1, t2].
  const flags = new Int32Array(new SharedArrayBuffer(8));
  const times = new Float64Array(new SharedArrayBuffer(8 * 200));
  const rounds = 200;
  const body = `
const { flags, times, rounds } = workerData;
parentPort.postMessage('ready');
for (let i = 0; i < rounds; i++) {
  while (Atomics.load(flags, 0) !== i + 1) {}
  times[i] = realClock.origin + realClock.now();
  Atomics.store(flags, 1, i + 1);
}`;
  const w = thread(body, { flags, times, rounds });
  await result<string>(w);
  const pairs: [number, number][] = [];
  for (let i = 0; i < rounds; i++) {
    const t1 = realClock.origin + realClock.now();
    Atomics.store(flags, 0, i + 1);
    while (Atomics.load(flags, 1) !== i + 1) {
      // spin: the worker answers within microseconds when it runs
    }
    const t2 = realClock.origin + realClock.now();
    pairs.push([t1, t2]);
  }
  await w.terminate();
  let best = Infinity;
  for (let i = 0; i < rounds; i++) {
    const [t1, t2] = pairs[i]!;
    const tw = times[i]!;
    assert.ok(tw >= t1 - 0.1 && tw <= t2 + 0.1, `round ${i}: the worker read ${tw - t1} ms after this thread signalled, which saw its answer ${t2 - t1} ms after`);
    best = Math.min(best, t2 - t1);
  }
  assert.ok(best < 0.1, `the fastest round trip (${best} ms) is short enough to tell 0.1 ms apart`);
});
