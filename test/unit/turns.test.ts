// A multi-turn run by turn (src/engine/analysis/turns.ts): the figures by hand, the history verdict's
// rule (grows, the cache does not serve the history) and its absence when the cache serves it; the
// CLI's "By turn" block (src/present/turnText.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { historyVerdict, summarizeTurns } from '../../src/engine/analysis/turns';
import { summarize } from '../../src/engine/analysis/metrics';
import { defaultWorkload } from '../../src/engine/core/workload';
import { formatRunTable } from '../../src/present/runText';
import { sessionsLine, turnLines } from '../../src/present/turnText';
import type { RequestRecord, RunFile, WorkloadSpec } from '../../src/engine/core/types';

/** A finished turn: TTFT, history and prompt tokens, and the cached tokens the server reported (none: no figure). */
function turnRecord(index: number, session: number, turn: number, ttftMs: number, historyTokens: number, cached?: number, error = false): RequestRecord {
  const promptTokens = historyTokens + 100;
  return {
    index,
    warmup: false,
    scheduledAt: 1000 + index * 500,
    sentAt: 1000 + index * 500,
    session,
    turn,
    historyTokens,
    promptTokens,
    outputTokens: error ? 0 : 8,
    tokenSource: 'usage',
    chunkTimesMs: error ? [] : [ttftMs, ttftMs + 2, ttftMs + 4],
    ...(error ? { error: { kind: 'http', message: 'HTTP 500', status: 500 } as const } : { ttftMs, e2eMs: ttftMs + 16, firstChunkMs: ttftMs }),
    ...(cached !== undefined ? { serverTimings: { source: 'vllm', cachedTokens: cached, promptTokens } } : {}),
  } as RequestRecord;
}

/** Sessions × turns, TTFT = base + perToken × (history − cached). */
function sessions(n: number, turns: number, o: { perToken: number; cache: 'on' | 'off' | 'unreported' | 'partial' }): RequestRecord[] {
  const out: RequestRecord[] = [];
  let index = 0;
  for (let s = 0; s < n; s++) {
    for (let t = 0; t < turns; t++) {
      const history = t * 108;
      const cached = o.cache === 'on' ? history : o.cache === 'partial' ? Math.round(history * 0.2) : o.cache === 'off' ? 0 : undefined;
      out.push(turnRecord(index++, s, t, 40 + o.perToken * (history + 100 - (cached ?? 0)) + s, history, cached));
    }
  }
  return out;
}

test('summarizeTurns: TTFT, history, prompt and cached tokens by turn, by hand', () => {
  const rs = [
    turnRecord(0, 0, 0, 10, 0, 0),
    turnRecord(1, 0, 1, 20, 108, 100),
    turnRecord(2, 1, 0, 30, 0), // no cache figure
    turnRecord(3, 1, 1, 40, 116, 50),
    { ...turnRecord(4, 2, 0, 5, 0), ttftMs: undefined } as RequestRecord, // no first token: not a turn's TTFT
    { ...turnRecord(5, 0, 2, 99, 300), turn: undefined } as RequestRecord, // not a session's
  ];
  const byTurn = summarizeTurns(rs, [50, 99])!;
  assert.deepEqual(byTurn.map((t) => [t.turn, t.requests]), [[0, 2], [1, 2]]);
  assert.equal(byTurn[0]!.ttftMs.p50, 20);
  assert.equal(byTurn[0]!.ttftMs.p90, 28, 'p90 always there for the tables');
  assert.equal(byTurn[0]!.ttftMs.p99, 29.8);
  assert.equal(byTurn[0]!.cachedTokens, 0, 'the mean over the requests that reported a figure');
  assert.equal(byTurn[1]!.historyTokens, 112);
  assert.equal(byTurn[1]!.promptTokens, 212);
  assert.equal(byTurn[1]!.cachedTokens, 75);
  assert.equal(summarizeTurns([{ ...turnRecord(0, 0, 0, 1, 0), turn: undefined } as RequestRecord], [50]), undefined);
  // no cache figure at all on a turn: cachedTokens absent, not 0
  assert.equal(summarizeTurns([turnRecord(0, 0, 0, 10, 0)], [50])![0]!.cachedTokens, undefined);
});

test('the history verdict: TTFT grows with the history and no cache hit is reported', () => {
  const off = historyVerdict(summarizeTurns(sessions(3, 5, { perToken: 0.5, cache: 'off' }), [50])!);
  assert.ok(off);
  assert.equal(off.kind, 'history');
  assert.match(off.message, /^TTFT grows with the history: p50 91 ms at turn 1 \(0 history tokens\) to 307 ms at turn 5 \(432 history tokens\), 500 ms per 1,000 history tokens, and the server reports no cached prompt tokens: the history is prefilled again each turn: enable the prefix cache$/);
  assert.equal(Math.round(off.value), 216);
  // no cache figure at all: TTFT alone tells it, and the message says so
  const unreported = historyVerdict(summarizeTurns(sessions(3, 5, { perToken: 0.5, cache: 'unreported' }), [50])!);
  assert.match(unreported!.message, /the server reports no cached-token figure \(so TTFT alone tells it\)/);
  // a cache that serves a fifth of the history does not serve it
  const partial = historyVerdict(summarizeTurns(sessions(3, 5, { perToken: 0.5, cache: 'partial' }), [50])!);
  assert.match(partial!.message, /the server reports only \d+ of 270 history tokens cached per request/);
});

test('no history verdict when the cache serves the history, when TTFT stays flat, or with one turn', () => {
  assert.equal(historyVerdict(summarizeTurns(sessions(3, 5, { perToken: 0.5, cache: 'on' }), [50])!), undefined, 'cache hits');
  // TTFT grows (for some other cause) while the server reports the history cached: not the history's
  const grows = sessions(3, 5, { perToken: 0.5, cache: 'off' }).map((r) => ({ ...r, serverTimings: { source: 'vllm', cachedTokens: r.historyTokens!, promptTokens: r.promptTokens! } }) as RequestRecord);
  assert.ok(summarizeTurns(grows, [50])![4]!.ttftMs.p50! > 3 * summarizeTurns(grows, [50])![0]!.ttftMs.p50!);
  assert.equal(historyVerdict(summarizeTurns(grows, [50])!), undefined, 'cache hits, TTFT grows');
  // flat: under 1.2× from the first turn to the last
  assert.equal(historyVerdict(summarizeTurns(sessions(3, 5, { perToken: 0.01, cache: 'off' }), [50])!), undefined);
  assert.equal(historyVerdict(summarizeTurns(sessions(3, 1, { perToken: 0.5, cache: 'off' }), [50])!), undefined);
  // the last turn slower but TTFT falling with the history in between: the slope says no
  const odd = [turnRecord(0, 0, 0, 100, 0, 0), turnRecord(1, 0, 1, 100, 100, 0), turnRecord(2, 0, 2, 5, 200, 0), turnRecord(3, 0, 3, 5, 300, 0), turnRecord(4, 0, 4, 121, 400, 0)];
  assert.equal(historyVerdict(summarizeTurns(odd, [50])!), undefined);
});

const chatWorkload = (over: Partial<WorkloadSpec> = {}): WorkloadSpec =>
  defaultWorkload({ mode: { kind: 'closed', concurrency: 3 }, prompt: { kind: 'chat', turns: 5, userTokens: 100, replyTokens: 8 }, sessions: 3, ...over });

test('summarize carries byTurn and the history verdict; a single-turn run has neither', () => {
  const w = chatWorkload();
  const s = summarize(sessions(3, 5, { perToken: 0.5, cache: 'off' }), w);
  assert.equal(s.byTurn?.length, 5);
  assert.ok(s.verdicts?.some((v) => v.kind === 'history'));
  const on = summarize(sessions(3, 5, { perToken: 0.5, cache: 'on' }), w);
  assert.ok(!on.verdicts?.some((v) => v.kind === 'history'));
  const single = summarize(sessions(3, 5, { perToken: 0.5, cache: 'off' }).map(({ turn: _t, session: _s, historyTokens: _h, ...r }) => r as RequestRecord), defaultWorkload({ requests: 15 }));
  assert.equal(single.byTurn, undefined);
  assert.ok(!single.verdicts?.some((v) => v.kind === 'history'));
});

function runOf(requests: RequestRecord[], w: WorkloadSpec): RunFile {
  return {
    version: 1, id: 'r', startedAt: '2026-01-01T00:00:00Z', endedAt: '2026-01-01T00:00:10Z', cancelled: false,
    endpoint: { url: 'http://127.0.0.1:1', api: 'openai-chat' }, workload: w, requests, summary: summarize(requests, w),
  } as unknown as RunFile;
}

test('the By turn block: a row per turn, the load in sessions, the sessions a failed turn ended and the turns it left unsent', () => {
  const rs = sessions(3, 5, { perToken: 0.5, cache: 'on' });
  const run = runOf(rs, chatWorkload({ thinkTimeMs: 250 }));
  const lines = turnLines(run);
  assert.equal(lines[0], 'By turn (3 sessions, at most 3 sessions in flight, 250 ms think time; tokens are means per request, cached as the server reported them):');
  assert.match(lines[1]!, /^turn\s+requests\s+TTFT p50 \(ms\)\s+TTFT p90 \(ms\)\s+history tok\s+prompt tok\s+cached tok$/);
  assert.match(lines[2]!, /^1\s+3\s+91\.00\s+91\.80\s+0\s+100\s+0$/);
  assert.match(lines[6]!, /^5\s+3\s+91\.00\s+91\.80\s+432\s+532\s+432$/);
  assert.equal(lines[7], 'Sessions: 3 started; none ended at a failed turn.');
  assert.ok(formatRunTable(run).includes(lines.join('\n')), 'in the run table');
  // session 1 fails at its second turn: 3 turns never sent
  const failed = rs.filter((r) => !(r.session === 1 && r.turn! > 1)).map((r) => (r.session === 1 && r.turn === 1 ? turnRecord(r.index, 1, 1, 0, r.historyTokens!, undefined, true) : r));
  assert.equal(sessionsLine(runOf(failed, chatWorkload())), 'Sessions: 3 started; 1 ended at a failed turn: their 3 later turns were not sent.');
  // a dataset's conversations are not in the run file: the sessions are counted, not the turns
  const dataset = chatWorkload({ prompt: { kind: 'dataset', path: '/d.jsonl', multiTurn: true } });
  assert.equal(sessionsLine(runOf(failed, dataset)), 'Sessions: 3 started; 1 ended at a failed turn: their later turns (if any) were not sent.');
  // open loop: sessions arrive at the rate
  assert.match(turnLines(runOf(rs, chatWorkload({ mode: { kind: 'open', rate: 2, burstiness: 1 } })))[0]!, /sessions arriving at 2\/s/);
  assert.deepEqual(turnLines(runOf(rs.map(({ turn: _t, ...r }) => r as RequestRecord), defaultWorkload({ requests: 15 }))), []);
});
