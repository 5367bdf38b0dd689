// Load shapes of issue 30 on a fake clock: the open loop's ramp (vLLM's ramp-up: rate from start to end
// by the share of the run), a trace's replay at its times (planned ahead, capped, stopped); how late
// requests went against their schedule (Summary.schedule, its verdict, its line in the run table);
// and SGLang's shared-prefix groups.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openLoop, rampGapsMs, rampRate, sleep, traceLoop, withinPhase } from '../../src/engine/run/scheduler';
import { createPlanner } from '../../src/engine/run/plan';
import { scheduleVerdict, SCHEDULE_LATE_MS, summarizeSchedule } from '../../src/engine/analysis/schedule';
import { summarize } from '../../src/engine/analysis/metrics';
import { defaultWorkload } from '../../src/engine/core/workload';
import type { RequestRecord, WorkloadMode } from '../../src/engine/core/types';
import { groupPrompt } from '../../src/engine/prompts/syntheticPrompts';
import { scheduleLines, scheduleText } from '../../src/present/scheduleText';
import { FakeClock } from '../support/fakeClock';
import { sharedWords, words } from '../support/words';

function tracker(clock: FakeClock, ms: number) {
  const sends: { k: number; due: number; at: number }[] = [];
  let inFlight = 0;
  let max = 0;
  const send = async (k: number, due: number) => {
    sends.push({ k, due, at: clock.now() });
    max = Math.max(max, ++inFlight);
    await sleep(ms, undefined, clock);
    inFlight--;
  };
  return { sends, send, max: () => max };
}

test('ramp: the rate at each share of the run, linear and exponential, as vLLM defines it', () => {
  assert.equal(rampRate({ kind: 'linear', start: 2 }, 10, 0), 2);
  assert.equal(rampRate({ kind: 'linear', start: 2 }, 10, 0.25), 4);
  assert.equal(rampRate({ kind: 'linear', start: 2 }, 10, 1), 10);
  assert.equal(rampRate({ kind: 'exponential', start: 1 }, 16, 0.5), 4);
  assert.equal(rampRate({ kind: 'exponential', start: 1 }, 16, 0.75), 8);
  assert.equal(rampRate({ kind: 'linear', start: 10 }, 2, 0.5), 6, 'a ramp may go down');
  assert.equal(rampRate({ kind: 'linear', start: 2 }, 10, 3), 10, 'held at the end past it');
});

for (const kind of ['linear', 'exponential'] as const) {
  test(`ramp (${kind}, by requests): arrival k+1 follows k by a seeded gap drawn at the rate of request k+1, k/(n−1) of the way`, async () => {
    const clock = new FakeClock();
    const start = clock.now();
    const n = 400;
    const { sends, send } = tracker(clock, 5);
    const done = openLoop({ rate: 40, burstiness: 1, seed: 3, ramp: { kind, start: 2, requests: n }, more: (k) => k < n, send, clock });
    await clock.run();
    await done;
    assert.equal(sends.length, n);
    const gap = rampGapsMs(3, 1);
    let due = start;
    for (const s of sends) {
      assert.equal(s.due, due, `arrival ${s.k}`);
      assert.ok(s.at - s.due < 0.5, `arrival ${s.k} sent on time`);
      due += gap(rampRate({ kind, start: 2 }, 40, (s.k + 1) / (n - 1)));
    }
    // the arrivals themselves: slow at first, at the end rate at last
    const rateOver = (from: number, to: number) => (to - from) / ((sends[to]!.at - sends[from]!.at) / 1000);
    const first = rateOver(0, 20);
    const last = rateOver(n - 81, n - 1);
    assert.ok(first < 8, `the first 20 arrivals came at ${first.toFixed(1)}/s`);
    assert.ok(last > 28 && last < 55, `the last 80 at ${last.toFixed(1)}/s`);
  });
}

test('ramp by duration: the rate follows the share of the time gone, none sent after the deadline', async () => {
  const clock = new FakeClock();
  const start = clock.now();
  const deadline = start + 20_000;
  const { sends, send } = tracker(clock, 5);
  const done = openLoop({ rate: 30, burstiness: 1, seed: 8, ramp: { kind: 'linear', start: 1, durationMs: 20_000 }, more: (k, due) => withinPhase(undefined, deadline, k, due), send, clock });
  await clock.run();
  await done;
  const gap = rampGapsMs(8, 1);
  let due = start;
  for (const s of sends) {
    assert.equal(s.due, due);
    due += gap(rampRate({ kind: 'linear', start: 1 }, 30, (due - start) / 20_000));
  }
  assert.ok(sends.every((s) => s.due < deadline));
  const inSecond = (from: number) => sends.filter((s) => s.due >= start + from && s.due < start + from + 4000).length / 4;
  assert.ok(inSecond(0) < 6, `first 4 s: ${inSecond(0)}/s`);
  assert.ok(inSecond(16_000) > 20, `last 4 s: ${inSecond(16_000)}/s`);
  // without a ramp the same seed gives the same arrivals as before: the gaps at a fixed rate
  const flat = new FakeClock();
  const f = tracker(flat, 5);
  const flatDone = openLoop({ rate: 30, burstiness: 1, seed: 8, more: (k) => k < 50, send: f.send, clock: flat });
  await flat.run();
  await flatDone;
  const g = rampGapsMs(8, 1);
  let d = f.sends[0]!.due;
  for (const s of f.sends) {
    assert.equal(s.due, d);
    d += g(30);
  }
});

test('trace loop: request k at its offset after the start, planned before its time, the first at once', async () => {
  const clock = new FakeClock();
  const start = clock.now();
  const offsets = [0, 0, 12.5, 40, 40, 41, 300];
  const events: string[] = [];
  const sent: { k: number; at: number; planned: string }[] = [];
  const done = traceLoop({
    offsetsMs: offsets,
    more: () => true,
    prepare: (k, due) => {
      events.push(`plan ${k} at ${clock.now() - start} for ${due - start}`);
      return `p${k}`;
    },
    send: async (planned, k) => {
      sent.push({ k, at: clock.now(), planned });
      await sleep(100, undefined, clock);
    },
    clock,
  });
  await clock.run();
  await done;
  assert.deepEqual(sent.map((s) => s.k), [0, 1, 2, 3, 4, 5, 6]);
  for (const s of sent) {
    assert.equal(s.planned, `p${s.k}`);
    assert.ok(s.at - start >= offsets[s.k]! && s.at - start - offsets[s.k]! < 0.5, `request ${s.k} sent at ${s.at - start}, due at ${offsets[s.k]}`);
  }
  // each is planned after the one before it was sent, before its own time comes
  assert.match(events[2]!, /^plan 2 at 0(\.\d+)? for 12\.5$/);
  assert.match(events[6]!, /^plan 6 at 41(\.\d+)? for 300$/);
});

test('trace loop: a cap holds requests back (they go late), more() and an abort stop it', async () => {
  const clock = new FakeClock();
  const start = clock.now();
  const { sends, send, max } = tracker(clock, 50);
  const done = traceLoop({ offsetsMs: [0, 1, 2, 3, 4, 5], maxConcurrency: 2, more: (k) => k < 5, prepare: (k) => k, send: (k) => send(k, start), clock });
  await clock.run();
  await done;
  assert.equal(sends.length, 5, 'more() stopped it at 5');
  assert.equal(max(), 2);
  assert.deepEqual(sends.map((s) => Math.round((s.at - start) * 1000) / 1000), [0, 1, 50, 51, 100], 'the third waits for the first to end');
  const ac = new AbortController();
  const second = tracker(clock, 10);
  const stopped = traceLoop({ offsetsMs: [0, 100, 200], more: () => true, prepare: (k) => k, send: (k) => second.send(k, 0), signal: ac.signal, clock });
  await clock.run(clock.now() + 50);
  ac.abort();
  await clock.run();
  await stopped;
  assert.equal(second.sends.length, 1);
});

const rec = (index: number, lag: number, extra: Partial<RequestRecord> = {}): RequestRecord => ({
  index, warmup: false, scheduledAt: 1_000 + index * 10, sentAt: 1_000 + index * 10 + lag, outputTokens: 4, tokenSource: 'usage', chunkTimesMs: [1, 2, 3, 4], ttftMs: 1, e2eMs: 4, ...extra,
});
const trace: WorkloadMode = { kind: 'trace', speed: 1 };

test('schedule: lag over the measured requests, the late ones, kept when p99 is within the bound', () => {
  const lags = Array.from({ length: 200 }, (_, i) => (i < 2 ? 30 : 0.5 + (i % 10) / 10));
  const s = summarizeSchedule(lags.map((l, i) => rec(i, l)), trace, [50, 90])!;
  assert.equal(s.lagMs.count, 200);
  assert.equal(s.late, 2);
  assert.equal(s.kept, true, 'two late of 200: p99 is still on time');
  assert.ok(s.lagMs.p50 !== undefined && s.lagMs.p99 !== undefined && s.lagMs.p90 !== undefined, 'p50 and p99 always, the run\'s own percentiles too');
  assert.equal(s.lagMs.max, 30);
  const late = summarizeSchedule(lags.map((l, i) => rec(i, i < 5 ? 12 : l)), trace, [50])!;
  assert.equal(late.late, 5);
  assert.equal(late.kept, false);
  assert.ok(late.lagMs.p99! > SCHEDULE_LATE_MS);
  // a closed loop has no schedule; a conversation's later turns go when the turn before ended
  assert.equal(summarizeSchedule([rec(0, 50)], { kind: 'closed', concurrency: 2 }, [50]), undefined);
  const open: WorkloadMode = { kind: 'open', rate: 5, burstiness: 1 };
  assert.equal(summarizeSchedule([rec(0, 1, { turn: 0 }), rec(1, 400, { turn: 1 })], open, [50])!.lagMs.count, 1);
  assert.equal(summarizeSchedule([], open, [50]), undefined);
});

test('schedule: the verdict when it was not kept, what it did to the load, first among the verdicts', () => {
  const records = Array.from({ length: 100 }, (_, i) => rec(i, i % 10 === 0 ? 20 : 1));
  const s = summarizeSchedule(records, trace, [50])!;
  assert.equal(scheduleVerdict(s, trace)!.message, 'the client sent 10 of 100 requests more than 5 ms late (p99 lag 20 ms): the load was lighter than the trace');
  assert.equal(scheduleVerdict(s, trace)!.kind, 'schedule');
  assert.match(scheduleVerdict(s, { kind: 'open', rate: 8, burstiness: 1 })!.message, /lighter than 8 requests\/s$/);
  assert.match(scheduleVerdict(s, { kind: 'open', rate: 8, burstiness: 1, ramp: { kind: 'linear', start: 1 } })!.message, /lighter than the ramp asked for$/);
  assert.match(scheduleVerdict(s, { kind: 'trace', speed: 2, maxConcurrency: 4 })!.message, /lighter than the trace; with at most 4 in flight \(max concurrency\), a request waits for a slot$/);
  assert.equal(scheduleVerdict(summarizeSchedule(records.map((r) => ({ ...r, sentAt: r.scheduledAt + 1 })), trace, [50]), trace), undefined, 'kept: no verdict');
  // through summarize: Summary.schedule, and the verdict first
  const w = defaultWorkload({ mode: trace, prompt: { kind: 'trace', path: 't.jsonl', format: 'mooncake' } });
  const summary = summarize(records, w);
  assert.equal(summary.schedule?.late, 10);
  assert.equal(summary.verdicts?.[0]?.kind, 'schedule');
  assert.equal(summarize(records, defaultWorkload({ mode: { kind: 'closed', concurrency: 1 }, requests: 100 })).schedule, undefined);
});

test('schedule: its line in the run table', () => {
  const kept = summarizeSchedule(Array.from({ length: 200 }, (_, i) => rec(i, i === 0 ? 9 : 1)), trace, [50])!;
  assert.equal(scheduleText(kept), 'kept: lag p50 1 ms, p99 1 ms, max 9 ms; 1 of 200 sent more than 5 ms late');
  const missed = summarizeSchedule(Array.from({ length: 10 }, (_, i) => rec(i, 10)), trace, [50])!;
  assert.equal(scheduleText(missed), 'NOT kept: 10 of 10 sent more than 5 ms late; lag p50 10 ms, p99 10 ms, max 10 ms: the load was lighter than asked');
  assert.deepEqual(scheduleLines({ summary: { schedule: missed } as never }), [`Schedule: ${scheduleText(missed)}`]);
  assert.deepEqual(scheduleLines({ summary: {} as never }), []);
});

test('shared-prefix groups: a group\'s prompts share exactly its prefix, groups part at the first word, SGLang\'s blank line between', () => {
  const a = groupPrompt(0, 1, 300, 200, 7).messages[0]!.content;
  const b = groupPrompt(8, 1, 300, 200, 7).messages[0]!.content;
  const c = groupPrompt(1, 2, 300, 200, 7).messages[0]!.content;
  assert.equal(words(a).length, 300);
  assert.equal(sharedWords(a, b), 200);
  assert.equal(sharedWords(a, c), 0);
  assert.match(a, /^(\S+ ){199}\S+\n\n\S/);
  assert.equal(groupPrompt(0, 1, 300, 200, 7).messages[0]!.content, a, 'seeded');
  assert.notEqual(groupPrompt(0, 1, 300, 200, 8).messages[0]!.content, a);
});

test('shared-prefix groups in a run: measured request k is of group k mod the count', async () => {
  const w = defaultWorkload({ requests: 12, warmup: 2, prompt: { kind: 'synthetic', tokens: 64, sharedPrefix: false, groups: { count: 3, prefixTokens: 40 } } });
  assert.equal(w.prefixCache, 'warm', 'groups are sent warm');
  const planner = await createPlanner(w, { url: 'http://127.0.0.1:1', api: 'openai-chat' });
  const texts = Array.from({ length: 12 }, (_, k) => planner.plan(w.warmup + k, false, k, 0).spec.prompt.messages[0]!.content);
  for (let i = 0; i < 12; i++) {
    for (let j = i + 1; j < 12; j++) assert.equal(sharedWords(texts[i]!, texts[j]!), i % 3 === j % 3 ? 40 : 0, `requests ${i} and ${j}`);
    assert.equal(words(texts[i]!).length, 64);
  }
  assert.equal(planner.plan(0, false, 0, 0).spec.nonce, undefined, 'no cache-busting nonce');
});
