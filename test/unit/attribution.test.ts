// Stall attribution, buffering verdicts, phases and verdicts over hand-made records: the rules at
// their edges. The same claims are checked against a server that logs the truth in
// test/integration/whereTime.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { analyzeTiming, annotateRequests } from '../../src/engine/analysis/attribution';
import { judgeBuffering, streamReads } from '../../src/engine/analysis/buffering';
import { phaseBands, phasesOf, summarizeServer } from '../../src/engine/analysis/phases';
import { summarize } from '../../src/engine/analysis/metrics';
import { defaultWorkload } from '../../src/engine/core/workload';
import { stallPhrase, whereTimeLines } from '../../src/present/whereText';
import type { RequestRecord } from '../../src/engine/core/types';

const W = defaultWorkload({ requests: 4 });

function rec(index: number, sentAt: number, chunkTimesMs: number[], extra: Partial<RequestRecord> = {}): RequestRecord {
  return {
    index,
    warmup: false,
    scheduledAt: sentAt,
    sentAt,
    outputTokens: chunkTimesMs.length,
    tokenSource: 'chunks',
    chunkTimesMs,
    ...(chunkTimesMs.length > 0 ? { ttftMs: chunkTimesMs[0]!, e2eMs: chunkTimesMs[chunkTimesMs.length - 1]! } : {}),
    headersMs: 1,
    ...extra,
  };
}

/** A stream with a token every `itl` ms from `ttft`, and one gap of `gapMs` ending at chunk `at`. */
function streamWithGap(ttft: number, itl: number, n: number, at: number, gapMs: number): number[] {
  const t: number[] = [];
  let now = ttft;
  for (let i = 0; i < n; i++) {
    if (i > 0) now += i === at ? gapMs : itl;
    t.push(now);
  }
  return t;
}

test('a gap is blamed on the request whose first token came with the chunk that ended it', () => {
  const victim = rec(0, 1000, streamWithGap(20, 10, 30, 12, 300));
  // chunk 12 of the victim arrives at 1000 + 20 + 11·10 + 300 = 1430
  const culprit = rec(1, 1100, [330.4, 340, 350], { promptTokens: 2048 }); // first token at 1430.4
  const early = rec(2, 1100, [30, 40]); // first token at 1130: long before the gap
  const late = rec(3, 1430, [12, 20]); // first token at 1442: the next step, an ITL later
  const a = analyzeTiming([victim, culprit, early, late], W);
  const stalls = a.stalls.get(0)!;
  assert.equal(stalls.length, 1);
  assert.deepEqual(stalls[0], { atChunk: 12, gapMs: 300, cause: 'prefill', culprits: [1] });
  const s = summarize([victim, culprit, early, late], W, { analysis: a });
  assert.deepEqual(s.stalls.byCause, { prefill: 1, buffering: 0, unknown: 0 });
  assert.deepEqual(s.stalls.worst[0]!.culprits, [{ index: 1, promptTokens: 2048 }]);
  assert.equal(stallPhrase(s.stalls.worst[0]!), "stalled 300 ms by #1's 2,048-token prefill");
  assert.match(s.verdicts!.map((v) => v.message).join('\n'), /1 decode stall, 300 ms summed over the streams, all from prefills of prompts ≥ 2,048 tokens: chunked prefill would bound them/);
});

test('a gap with no prefill in it is "unknown"; a reported prefill covering it is blamed', () => {
  const victim = rec(0, 0, streamWithGap(20, 10, 30, 12, 300));
  // gap from 130 to 430
  const noOne = analyzeTiming([victim, rec(1, 0, [600, 610])], W);
  assert.deepEqual(noOne.stalls.get(0)![0], { atChunk: 12, gapMs: 300, cause: 'unknown', culprits: [] });
  // its first token comes 40 ms after the gap (a later step), but the server says its prefill took 320 ms: 150..470 covers the gap
  const chunked = rec(1, 0, [470, 480], { serverTimings: { source: 'llamacpp', promptMs: 320, serverTtftMs: 320 } });
  assert.deepEqual(analyzeTiming([victim, chunked], W).stalls.get(0)![0]!.culprits, [1]);
  // two reported prefills cover the gap: the one that finishes first is in progress (first come, first served)
  const waiting = rec(2, 0, [900, 910], { serverTimings: { source: 'llamacpp', promptMs: 800, serverTtftMs: 800 } });
  assert.deepEqual(analyzeTiming([victim, chunked, waiting], W).stalls.get(0)![0]!.culprits, [1]);
  // a server claiming a prefill far longer than the request existed: only the part after it was sent counts
  const absurd = rec(3, 420, [50, 60], { serverTimings: { source: 'llamacpp', promptMs: 80_000_000, serverTtftMs: 80_000_000 } });
  assert.equal(analyzeTiming([victim, absurd], W).stalls.get(0)![0]!.cause, 'unknown');
  // a short reported prefill that covers a sliver of the gap is not blamed
  const sliver = rec(1, 0, [470, 480], { serverTimings: { source: 'llamacpp', promptMs: 60, serverTtftMs: 60 } });
  assert.equal(analyzeTiming([victim, sliver], W).stalls.get(0)![0]!.cause, 'unknown');
});

/** A stream as a buffer delivers it: `perFlush` events in one read every `flushMs`. */
function bunched(index: number, n: number, perFlush: number, flushMs: number, sentAt = 0): RequestRecord {
  const t: number[] = [];
  for (let i = 0; i < n; i++) t.push(flushMs * (1 + Math.floor(i / perFlush)));
  return rec(index, sentAt, t);
}

test('buffered streams: bunched reads on a period are detected, their gaps are buffering and never prefill', () => {
  const streams = [0, 1, 2, 3].map((i) => bunched(i, 64, 16, 200, i * 5));
  const r = streamReads(streams[0]!);
  assert.equal(r.events, 64);
  assert.equal(r.reads, 4);
  assert.equal(r.burstEvents, 64);
  assert.equal(r.firstReadEvents, 16);
  const a = analyzeTiming(streams, W);
  const b = a.buffering.verdict;
  assert.equal(b.detected, true);
  assert.equal(b.bufferedStreams, 4);
  assert.equal(b.periodMs, 200);
  // 16 events per 200 ms: true ITL 12.5 ms, so the first of the first burst waited ~15 · 12.5 ms
  assert.ok(Math.abs(b.inflationMs! - 187.5) < 1e-9, String(b.inflationMs));
  for (const [, list] of a.stalls) for (const st of list) assert.equal(st.cause, 'buffering');
  // in a run judged buffered, a stream that happens not to be bunched is not blamed on a prefill either
  const plain = rec(9, 0, streamWithGap(20, 10, 30, 12, 300));
  const firstAtGapEnd = rec(10, 0, [430, 440]);
  const mixed = analyzeTiming([...streams, plain, firstAtGapEnd], W);
  assert.equal(mixed.buffering.verdict.detected, true);
  assert.deepEqual(mixed.stalls.get(9)![0], { atChunk: 12, gapMs: 300, cause: 'buffering', culprits: [] });
  const s = summarize(streams, W, { analysis: a });
  assert.equal(s.stalls.byCause!.prefill, 0);
  assert.ok(s.stalls.byCause!.buffering > 0);
  assert.equal(s.verdicts![0]!.kind, 'buffering');
  assert.match(s.verdicts![0]!.message, /TTFT inflated by about 188 ms/);
});

test('not buffered: one event per read with an occasional pair, a via header alone, short streams', () => {
  const t: number[] = [];
  for (let i = 0; i < 50; i++) t.push(20 + i * 10);
  t[10] = t[9]!; // one pair coalesced by a busy client
  const plain = rec(0, 0, t, { intermediaries: { via: '1.1 test-proxy' } });
  const v = judgeBuffering([plain, rec(1, 0, [5, 5, 5])]).verdict;
  assert.equal(v.detected, false);
  assert.equal(v.streams, 1, 'a 3-event stream is too short to judge');
  assert.match(v.evidence.join('\n'), /via: 1\.1 test-proxy/);
  // a compressed event stream that is bunched at all is buffered
  const gz = bunched(0, 20, 5, 100);
  const many = [1, 2, 3].map((i) => rec(i, 0, Array.from({ length: 20 }, (_, k) => 10 + 10 * k)));
  const compressed = judgeBuffering([{ ...gz, intermediaries: { 'content-encoding': 'gzip' } }, ...many]).verdict;
  assert.equal(compressed.detected, true);
  assert.match(compressed.evidence.join('\n'), /content-encoding: gzip/);
  assert.equal(judgeBuffering([gz, ...many]).verdict.detected, false, 'one bunched stream of four, uncompressed: not the run');
});

test('phases: server timings with a queue, without one (llama.cpp), and the client clock alone', () => {
  const vllm = rec(0, 0, [100, 110, 120], { serverTimings: { source: 'vllm', queueMs: 30, serverTtftMs: 90 } });
  const p = phasesOf(vllm)!;
  assert.equal(p.evidence, 'server');
  assert.deepEqual(p.segments.map((s) => [s.kind, s.ms]), [['queue', 30], ['prefill', 60], ['transport', 10], ['decode', 20]]);
  const llama = phasesOf(rec(1, 0, [100, 150], { serverTimings: { source: 'llamacpp', promptMs: 70, serverTtftMs: 70 } }))!;
  assert.deepEqual(llama.segments.map((s) => [s.kind, s.ms]), [['prefill', 70], ['wait', 30], ['decode', 50]]);
  const client = phasesOf(rec(2, 0, [100, 150], { headersMs: 4 }))!;
  assert.equal(client.evidence, 'client');
  assert.deepEqual(client.segments.map((s) => [s.kind, s.ms]), [['headers', 4], ['queuePrefill', 96], ['decode', 50]]);
  assert.equal(phasesOf(rec(3, 0, [])), undefined);
  const sum = (ph: NonNullable<ReturnType<typeof phasesOf>>) => ph.segments.reduce((a, s) => a + s.ms, 0);
  assert.equal(sum(p), p.e2eMs);
  const bands = phaseBands(Array.from({ length: 200 }, (_, i) => rec(i, 0, [i + 1, i + 11])));
  assert.deepEqual(bands.map((b) => [b.label, b.count]), [['p0–p50', 100], ['p50–p90', 80], ['p90–p99', 18], ['p99–p100', 2]]);
});

test('client vs server: transport per request, stats, cached tokens; annotate writes transportMs', () => {
  const a = rec(0, 0, [100, 110], { serverTimings: { source: 'vllm', queueMs: 10, serverTtftMs: 80, cachedTokens: 64 } });
  const b = rec(1, 0, [50, 60], { serverTimings: { source: 'vllm', queueMs: 0, serverTtftMs: 45 } });
  const s = summarizeServer([a, b], [50, 99])!;
  assert.deepEqual(s.sources, ['vllm']);
  assert.equal(s.transportMs!.max, 20);
  assert.equal(s.transportMs!.min, 5);
  assert.equal(s.cachedTokens, 64);
  assert.equal(s.cachedRequests, 1);
  const annotated = annotateRequests([a, b, rec(2, 0, [5, 6])], analyzeTiming([a, b], W));
  assert.deepEqual(annotated.map((r) => r.transportMs), [20, 5, undefined]);
  const run = { requests: annotated, summary: summarize(annotated, W) };
  const text = whereTimeLines(run).join('\n');
  assert.match(text, /TTFT \(server\)/);
  assert.match(text, /transport \(client − server\)/);
  assert.match(text, /cached prompt tokens: 64 over 1 requests/);
});
