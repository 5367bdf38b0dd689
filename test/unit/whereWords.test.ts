// One definition per word in "where the time went" (src/engine/analysis/phases.ts PHASE_WORDS): the
// verdicts' shares of TTFT p99 are of the same requests, so they add up; each part is named with its
// one meaning by the verdicts, the CLI's block and the client-vs-server table.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { summarize } from '../../src/engine/analysis/metrics';
import { PHASE_WORDS, phasesOf, ttftTail } from '../../src/engine/analysis/phases';
import { defaultWorkload } from '../../src/engine/core/workload';
import { stallPhrase, stallTotalText, timingTable, whereTimeLines } from '../../src/present/whereText';
import { UNKNOWN_STALL_CAUSE, UNKNOWN_STALL_SHORT, UNKNOWN_STALL_WHY } from '../../src/engine/analysis/stalls';
import { runFileProblem } from '../../src/engine/core/runSchema';
import { fixtureRun } from '../support/fixtureRuns';
import type { RequestRecord } from '../../src/engine/core/types';

/** A llama.cpp-style record: the server reports its prompt time (and TTFT = it), not its queue. */
function llama(index: number, ttftMs: number, promptMs: number): RequestRecord {
  const chunkTimesMs = [ttftMs, ttftMs + 20, ttftMs + 40];
  return {
    index, warmup: false, scheduledAt: index * 1000, sentAt: index * 1000, headersMs: 1, ttftMs, e2eMs: ttftMs + 40, outputTokens: 3, tokenSource: 'usage', chunkTimesMs,
    serverTimings: { source: 'llamacpp', promptMs, serverTtftMs: promptMs }, transportMs: ttftMs - promptMs,
  };
}

// the slowest request is almost all prefill; the second slowest mostly waited: the p99 of each part
// is of another request, and "p99 prefill / p99 TTFT" + "p99 wait / p99 TTFT" came to more than 100 %
const requests = [llama(0, 1000, 910), llama(1, 900, 400), ...Array.from({ length: 8 }, (_, i) => llama(i + 2, 100, 80))];

test('the shares of TTFT p99 in the verdicts are of the same requests: they add up to at most 100 %', () => {
  const s = summarize(requests, defaultWorkload({ mode: { kind: 'closed', concurrency: 4 }, requests: 10 }));
  const shares = (s.verdicts ?? []).flatMap((v) => [...v.message.matchAll(/(\d+)% of TTFT is (\w+)/g)].map((m) => ({ kind: v.kind, pct: Number(m[1]), word: m[2]! })));
  assert.ok(shares.length >= 1, JSON.stringify(s.verdicts));
  const total = shares.reduce((a, x) => a + x.pct, 0);
  assert.ok(total <= 101, `shares of TTFT p99: ${JSON.stringify(shares)}`);
  // the figures behind them: the tail's parts over its TTFT
  const tail = ttftTail(requests, s.ttftMs.p99)!;
  const sum = Object.values(tail.byKind).reduce((a, x) => a + (x ?? 0), 0);
  assert.ok(Math.abs(sum - tail.ttftMs) < 1e-6, 'the parts of the tail add up to its TTFT');
  for (const x of shares) {
    const kind = x.word === PHASE_WORDS.wait.short ? 'wait' : x.word === PHASE_WORDS.prefill.short ? 'prefill' : 'queue';
    assert.equal(x.pct, Math.round((100 * (tail.byKind[kind] ?? 0)) / tail.ttftMs), `${x.word}: ${x.pct}%`);
  }
  // each word says what it means, the same words as the legend's
  const prefill = s.verdicts!.find((v) => v.kind === 'prefill');
  assert.ok(prefill, 'the slowest request is 91 % prefill');
  assert.ok(prefill.message.includes(`prefill (${PHASE_WORDS.prefill.means})`), prefill.message);
  // the p99 (interpolated, 991 ms) and the slowest request's own TTFT, which the shares are of
  assert.match(prefill.message, /^At TTFT p99 \(991 ms; the slowest request, 1,000 ms\), 91% of TTFT is prefill/);
  // when the two are the same, once
  const flat = [llama(0, 1000, 910), ...Array.from({ length: 3 }, (_, i) => llama(i + 1, 1000, 100))];
  const same = summarize(flat, defaultWorkload({ requests: 4 })).verdicts!.find((v) => v.message.startsWith('At TTFT p99'))!;
  assert.match(same.message, /^At TTFT p99 \(1,000 ms; the 4 slowest requests, their TTFT together\)/);
});

test('a gap of unknown cause is its own verdict, after every verdict with a cause: never the headline', () => {
  // one stream's chunks every 20 ms, then a 440 ms gap while no other request of the run was in flight
  const stalled = { ...llama(5, 100, 80), chunkTimesMs: [100, 120, 140, 160, 180, 620, 640], e2eMs: 640, outputTokens: 7 };
  const rs = requests.map((r) => (r.index === 5 ? stalled : r));
  const s = summarize(rs, defaultWorkload({ mode: { kind: 'closed', concurrency: 1 }, requests: 10 }));
  assert.equal(s.stalls.byCause?.unknown, 1, JSON.stringify(s.stalls.byCause));
  const kinds = s.verdicts!.map((v) => v.kind);
  assert.equal(kinds.at(-1), 'stalls-unknown', kinds.join(', '));
  assert.ok(kinds.includes('prefill') && !kinds.includes('stalls'), kinds.join(', '));
  assert.match(s.verdicts!.at(-1)!.message, new RegExp(`^1 stall, 440 ms summed over the streams, ${UNKNOWN_STALL_CAUSE.replace(/[()]/g, '\\$&')}$`));
  // the run file's schema takes the kind (a run file that carries it is read back)
  const file = fixtureRun({ seed: 4 });
  assert.equal(runFileProblem({ ...file, summary: { ...file.summary, verdicts: s.verdicts } }), undefined);
});

test('the stalls\' share is of every stream\'s decode time, not only the stalled ones\'', () => {
  const text = stallTotalText({ count: 3, totalMs: 1200, shareOfDecode: 0.123 }, 2, 10);
  assert.equal(text, "1,200 ms summed over 2 streams, 12.3 % of all streams' decode time");
});

test('one source per word: transport in the verdicts, queue and prefill in the table, the unknown cause in a stall\'s line', () => {
  // vLLM-style: the server's queue and prefill reported; 60 ms of each TTFT is the way to the client
  const vllm = (index: number): RequestRecord => ({
    index, warmup: false, scheduledAt: index * 1000, sentAt: index * 1000, headersMs: 1, ttftMs: 200, e2eMs: 240, outputTokens: 3, tokenSource: 'usage', chunkTimesMs: [200, 220, 240],
    serverTimings: { source: 'vllm', queueMs: 10, promptMs: 130, serverTtftMs: 140 }, transportMs: 60,
  });
  const s = summarize(Array.from({ length: 10 }, (_, i) => vllm(i)), defaultWorkload({ requests: 10 }));
  const transport = s.verdicts!.find((v) => v.kind === 'transport')!;
  assert.equal(transport.message, `at the median, 60 ms of TTFT (30%) is ${PHASE_WORDS.transport.short} (${PHASE_WORDS.transport.means}): the server's own TTFT p50 is 140 ms`);
  assert.deepEqual(timingTable(s)!.rows.map((r) => r[0]), ['TTFT (client)', 'TTFT (server)', PHASE_WORDS.queue.label, PHASE_WORDS.prefill.label, `${PHASE_WORDS.transport.short} (client − server)`]);
  const phrase = stallPhrase({ requestIndex: 1, startMs: 0, startAt: 0, gapMs: 300, medianItlMs: 20, cause: 'unknown' });
  assert.equal(phrase, `stalled 300 ms: ${UNKNOWN_STALL_SHORT} (${UNKNOWN_STALL_WHY})`);
  assert.ok(UNKNOWN_STALL_CAUSE.startsWith(`${UNKNOWN_STALL_SHORT}: ${UNKNOWN_STALL_WHY};`), 'the long form begins with the short one and its why');
});

test('one name, one meaning: wait is queue, network and client; queue + prefill is what the client alone cannot tell apart', () => {
  assert.deepEqual(phasesOf(requests[0]!)!.segments.map((x) => [x.kind, x.label]), [['prefill', PHASE_WORDS.prefill.label], ['wait', PHASE_WORDS.wait.label], ['decode', 'decode']]);
  const clientOnly: RequestRecord = { ...requests[0]!, serverTimings: undefined, transportMs: undefined, headersMs: 4 };
  assert.deepEqual(phasesOf(clientOnly)!.segments.map((x) => x.kind), ['headers', 'queuePrefill', 'decode']);
  const labels = Object.values(PHASE_WORDS).map((w) => w.label);
  assert.equal(new Set(labels).size, labels.length, 'no two parts share a label');
  const shorts = Object.values(PHASE_WORDS).map((w) => w.short);
  assert.equal(new Set(shorts).size, shorts.length, 'no two parts share a name');
  // the CLI's block and the client-vs-server table say "wait" for what the server does not tell apart, and define it once
  const s = summarize(requests, defaultWorkload({ requests: 10 }));
  const lines = whereTimeLines({ requests, summary: s });
  assert.ok(lines.some((l) => l.includes('→ wait ')), lines.join('\n'));
  assert.equal(lines.filter((l) => l.trim() === `wait: ${PHASE_WORDS.wait.means}`).length, 1, lines.join('\n'));
  assert.ok(!lines.join('\n').includes('queue+transport') && !lines.join('\n').includes('queue + transport'), 'no second name for wait');
  assert.equal(timingTable(s)!.rows.at(-1)![0], 'wait (client − server)');
});
