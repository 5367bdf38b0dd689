// Multi-turn sessions end to end, held against what the server received: the cost-model server logs
// every chat request's messages (role, length, content hash) and the reply it streamed, and knows the
// prompt tokens it served from its prefix cache. Each turn must carry exactly the history before it
// (the earlier user turns and the replies as the server streamed them); with the prefix cache on,
// the history is served from it and TTFT stays flat by turn; off, TTFT grows with the history and the
// verdict says so. The load counts sessions (a closed loop's concurrency is the sessions in flight).
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runWorkload } from '../../src/engine/run/runner';
import { defaultWorkload } from '../../src/engine/core/workload';
import { arrivalGapsMs } from '../../src/engine/run/scheduler';
import { formatRunTable } from '../../src/present/runText';
import { contentHash, startCostModelServer } from '../support/costModelServer';
import type { CostModelOptions, CostModelServer, TruthRequest } from '../support/costModelServer';
import { withServer } from '../support/withServer';
import { buildCli, runCliProcess } from '../support/cli';
import type { RequestRecord, RunFile, WorkloadSpec } from '../../src/engine/core/types';

before(buildCli);

/**
 * The cost model: a prompt token costs 0.3 ms of prefill (a cached one nothing), a decode step 1 ms.
 * User turns of 300 words and replies of 8 tokens: with the cache on, every turn prefills about 300
 * tokens (~90 ms); off, turn 5 prefills 1,532 (~460 ms). Large against this machine's noise.
 */
const MODEL: CostModelOptions = { baseMs: 1, kMs: 0, prefillMsPerToken: 0.3, timings: 'vllm', distinctReplies: true };
const CHAT = { kind: 'chat', turns: 5, userTokens: 300, replyTokens: 8 } as const;

const costModel = (prefixCache: boolean, extra: Partial<CostModelOptions> = {}) => (): Promise<CostModelServer> => startCostModelServer({ ...MODEL, prefixCache, ...extra });

function chatWorkload(over: Partial<WorkloadSpec> = {}): WorkloadSpec {
  return defaultWorkload({ mode: { kind: 'closed', concurrency: 1 }, warmup: 1, maxTokens: 8, prompt: CHAT, sessions: 3, ...over });
}

const measured = (run: RunFile): RequestRecord[] => run.requests.filter((r) => !r.warmup);

/** Each session's records in turn order. */
function bySession(run: RunFile): Map<number, RequestRecord[]> {
  const out = new Map<number, RequestRecord[]>();
  for (const r of measured(run)) {
    assert.ok(r.session !== undefined && r.turn !== undefined, `request ${r.index} has its session and turn`);
    out.set(r.session, [...(out.get(r.session) ?? []), r]);
  }
  for (const list of out.values()) list.sort((a, b) => a.turn! - b.turn!);
  return out;
}

/**
 * Checks every session against the server's truth: turn 0 carries its own messages only; turn t
 * carries turn t−1's messages exactly, then the reply the server streamed to turn t−1 (as an
 * assistant message), then one new user message. Returns the truth of each turn, by session.
 */
function assertHistoriesGrow(run: RunFile, server: CostModelServer, turns: number): Map<number, TruthRequest[]> {
  const out = new Map<number, TruthRequest[]>();
  for (const [session, records] of bySession(run)) {
    assert.deepEqual(records.map((r) => r.turn), Array.from({ length: turns }, (_, t) => t), `session ${session} sent every turn in order`);
    const truth = records.map((r) => server.truth.requests.get(r.responseId!)!);
    assert.equal(truth[0]!.messages!.length, 1, `session ${session}'s first turn carries no history`);
    for (let t = 1; t < truth.length; t++) {
      const prev = truth[t - 1]!;
      const cur = truth[t]!;
      const where = `session ${session} turn ${t + 1}`;
      assert.equal(cur.messages!.length, prev.messages!.length + 2, `${where}: the previous reply and one new user turn added`);
      assert.deepEqual(cur.messages!.slice(0, prev.messages!.length), prev.messages, `${where}: the previous request's messages, unchanged`);
      assert.deepEqual(cur.messages![prev.messages!.length], { role: 'assistant', chars: prev.reply!.chars, hash: prev.reply!.hash }, `${where}: the reply as the server streamed it`);
      assert.equal(cur.messages![cur.messages!.length - 1]!.role, 'user');
      // the history the record says it carried: the server's count of the previous turn
      assert.equal(records[t]!.historyTokens, records[t - 1]!.promptTokens! + records[t - 1]!.outputTokens, `${where}: history tokens`);
    }
    out.set(session, truth);
  }
  return out;
}

test('3 sessions × 5 turns with the prefix cache on: 15 requests, each carrying the history as streamed; cached tokens on every later turn; TTFT flat by turn', async () => {
  await withServer(costModel(true), async (server, { endpoint }) => {
    const totals: (number | undefined)[] = [];
    const run = await runWorkload({ ...endpoint, model: server.model }, chatWorkload(), { onProgress: (p) => totals.push(p.total) });
    assert.equal(measured(run).length, 15);
    assert.equal(run.summary.completed, 15);
    assert.equal(totals[totals.length - 1], 15, "the progress's total is sessions × turns");
    const truth = assertHistoriesGrow(run, server, 5);
    // the server's log: every turn after the first served its history from the cache; the first none of it
    for (const list of truth.values()) {
      assert.equal(list[0]!.cachedTokens, 0, "a session's first turn shares nothing with another session or the warmup");
      for (const t of list.slice(1)) assert.ok(t.cachedTokens > 0, `${t.id}: cached tokens`);
    }
    // ...and what the client recorded from the server's report, by turn
    const byTurn = run.summary.byTurn!;
    assert.deepEqual(byTurn.map((t) => [t.turn, t.requests]), [[0, 3], [1, 3], [2, 3], [3, 3], [4, 3]]);
    for (const t of byTurn.slice(1)) assert.ok(t.cachedTokens! > 0, `turn ${t.turn + 1}: cached tokens reported`);
    const p50s = byTurn.map((t) => t.ttftMs.p50!);
    assert.ok(Math.max(...p50s) <= 1.2 * Math.min(...p50s), `TTFT p50 by turn flat within 20%: ${p50s.map((x) => x.toFixed(1)).join(', ')} ms`);
    assert.ok(!run.summary.verdicts?.some((v) => v.kind === 'history'), 'no history verdict while the cache serves the history');
    // the reply's text is the history's, never the run file's
    assert.ok(!JSON.stringify(run).includes('"reply"'));
    assert.match(formatRunTable(run), /By turn \(3 sessions, at most 1 session in flight;/);
  });
});

test('3 sessions × 5 turns with the prefix cache off: TTFT grows with the history and the verdict says so', async () => {
  await withServer(costModel(false), async (server, { endpoint }) => {
    const run = await runWorkload({ ...endpoint, model: server.model }, chatWorkload());
    assert.equal(measured(run).length, 15);
    assertHistoriesGrow(run, server, 5);
    assert.ok([...server.truth.requests.values()].every((t) => t.cachedTokens === 0));
    const byTurn = run.summary.byTurn!;
    const p50s = byTurn.map((t) => t.ttftMs.p50!);
    for (let t = 1; t < p50s.length; t++) assert.ok(p50s[t]! > p50s[t - 1]!, `TTFT grows turn by turn: ${p50s.map((x) => x.toFixed(1)).join(', ')} ms`);
    assert.ok(p50s[4]! >= 3 * p50s[0]!, 'five times the prefill at turn 5 (the model: 1,532 tokens against 300)');
    const verdict = run.summary.verdicts?.find((v) => v.kind === 'history');
    assert.ok(verdict, 'the history verdict');
    assert.match(verdict.message, /^TTFT grows with the history: p50 [\d.]+ ms at turn 1 \(0 history tokens\) to [\d.]+ ms at turn 5 \(1,232 history tokens\), [\d.]+ ms per 1,000 history tokens, and the server reports no cached prompt tokens: the history is prefilled again each turn: enable the prefix cache$/);
    assert.ok(formatRunTable(run).includes(verdict.message));
  });
});

test('concurrency counts sessions in flight: 6 sessions at concurrency 2, each turn its think time after the last reply', async () => {
  await withServer(costModel(true, { prefillMsPerToken: 0.02 }), async (server, { endpoint }) => {
    const think = 40;
    const w = chatWorkload({ mode: { kind: 'closed', concurrency: 2 }, sessions: 6, thinkTimeMs: think, prompt: { kind: 'chat', turns: 3, userTokens: 50, replyTokens: 4 }, maxTokens: 4 });
    const run = await runWorkload({ ...endpoint, model: server.model }, w);
    assert.equal(measured(run).length, 18);
    assertHistoriesGrow(run, server, 3);
    const sessions = [...bySession(run).values()];
    const span = (rs: RequestRecord[]) => [rs[0]!.sentAt, rs[rs.length - 1]!.sentAt + rs[rs.length - 1]!.e2eMs!] as const;
    // at each session's start, the sessions under way (itself included): never more than 2, and 2 at some point
    const inFlight = sessions.map((rs) => sessions.filter((o) => span(o)[0] <= span(rs)[0] && span(rs)[0] < span(o)[1]).length);
    assert.ok(Math.max(...inFlight) === 2, `sessions in flight at each start: ${inFlight.join(', ')}`);
    // sessions numbered in the order they started
    assert.deepEqual([...bySession(run).entries()].sort((a, b) => a[1][0]!.sentAt - b[1][0]!.sentAt).map(([k]) => k), [0, 1, 2, 3, 4, 5]);
    for (const rs of sessions) {
      for (let t = 1; t < rs.length; t++) {
        const prevEnd = rs[t - 1]!.sentAt + rs[t - 1]!.e2eMs!;
        assert.ok(rs[t]!.scheduledAt >= prevEnd + think - 0.5, `turn ${t + 1} due its think time after the reply ended (${(rs[t]!.scheduledAt - prevEnd).toFixed(1)} ms)`);
        assert.ok(rs[t]!.sentAt >= rs[t]!.scheduledAt - 0.01);
      }
    }
  });
});

test('an open loop: sessions arrive at the rate (the seeded schedule), each sending all its turns', async () => {
  await withServer(costModel(true, { prefillMsPerToken: 0.01 }), async (server, { endpoint }) => {
    const w = chatWorkload({ mode: { kind: 'open', rate: 10, burstiness: 1 }, sessions: 4, prompt: { kind: 'chat', turns: 2, userTokens: 20, replyTokens: 3 }, maxTokens: 3 });
    const run = await runWorkload({ ...endpoint, model: server.model }, w);
    assert.equal(measured(run).length, 8);
    const firsts = [...bySession(run).entries()].sort((a, b) => a[0] - b[0]).map(([, rs]) => rs[0]!.scheduledAt);
    const gap = arrivalGapsMs(w.seed, 10, 1);
    let due = 0;
    for (let k = 1; k < firsts.length; k++) {
      due += gap();
      assert.ok(Math.abs(firsts[k]! - firsts[0]! - due) < 0.01, `session ${k} arrives at its scheduled time`);
    }
  });
});

test('a duration stops the starting of sessions, not the sessions under way', async () => {
  await withServer(costModel(true, { prefillMsPerToken: 0.05 }), async (server, { endpoint }) => {
    const { sessions: _drop, ...w } = chatWorkload({ mode: { kind: 'closed', concurrency: 2 }, durationS: 0.4, prompt: { kind: 'chat', turns: 3, userTokens: 100, replyTokens: 6 }, maxTokens: 6 });
    const run = await runWorkload({ ...endpoint, model: server.model }, w as WorkloadSpec);
    const sessions = [...bySession(run).values()];
    assert.ok(sessions.length >= 2);
    for (const rs of sessions) assert.equal(rs.length, 3, 'every session started sent all its turns');
    const phaseStart = Math.min(...sessions.map((rs) => rs[0]!.sentAt));
    for (const rs of sessions) assert.ok(rs[0]!.sentAt - phaseStart < 400 + 20, 'no session started after the duration');
    assert.ok(Math.max(...sessions.map((rs) => rs[2]!.sentAt)) - phaseStart > 0, 'its later turns went on');
  });
});

test('a failed turn ends its session: the later turns are not sent, the progress drops them, the table counts them', async () => {
  // the scripted server fails session 1's second turn: the request of three messages whose first is session 1's ("Of session …")
  const secondOfSession1 = (body: Record<string, unknown>): boolean => {
    const messages = body.messages as { content: string }[];
    return messages.length === 3 && messages[0]!.content.startsWith('Of session ');
  };
  await withServer({ ttftMs: 2, itlMs: 1, tokens: 3, fault: (info) => (secondOfSession1(info.body) ? { kind: 'http', status: 500, body: 'boom' } : undefined) }, async (_server, { endpoint }) => {
    const totals: (number | undefined)[] = [];
    const w = chatWorkload({ prompt: { kind: 'chat', turns: 5, userTokens: 10, replyTokens: 3 }, maxTokens: 3 });
    const run = await runWorkload(endpoint, w, { onProgress: (p) => totals.push(p.total) });
    const sessions = bySession(run);
    assert.deepEqual([...sessions.entries()].map(([k, rs]) => [k, rs.length]), [[0, 5], [1, 2], [2, 5]]);
    assert.equal(sessions.get(1)![1]!.error?.kind, 'http');
    assert.equal(totals[totals.length - 1], 12, '15 planned, 3 never sent');
    assert.match(formatRunTable(run), /Sessions: 3 started; 1 ended at a failed turn: their 3 later turns were not sent\./);
  });
});

test('the CLI: --chat and a --multi-turn dataset, the By turn block and the run file', async () => {
  await withServer(costModel(true, { prefillMsPerToken: 0.02 }), async (server, { dir }) => {
    const out = join(dir, 'chat.json');
    const chat = await runCliProcess(['run', '--url', server.url, '--chat', 'turns=3,user=40,reply=4', '--sessions', '2', '--concurrency', '2', '--out', out]);
    assert.equal(chat.code, 0, chat.stderr);
    assert.match(chat.stdout, /By turn \(2 sessions, at most 2 sessions in flight;/);
    assert.match(chat.stdout, /^3\s+2\s+/m, 'a row for turn 3');
    const run = JSON.parse(readFileSync(out, 'utf8')) as RunFile;
    assert.equal(measured(run).length, 6);
    assert.equal(run.summary.byTurn?.length, 3);
    assert.ok(measured(run).every((r) => r.session !== undefined && r.turn !== undefined && r.historyTokens !== undefined));
    assert.ok(!readFileSync(out, 'utf8').includes('"reply"'));
    assertHistoriesGrow(run, server, 3);

    // a dataset of two conversations, in both forms, one with a think time per turn
    const data = join(dir, 'chats.jsonl');
    writeFileSync(data, [
      JSON.stringify({ session_id: 'a', turns: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'first question here', max_tokens: 3 }, { role: 'assistant', content: 'never sent' }, { role: 'user', content: 'second one', think_time_ms: 30, max_tokens: 2 }] }),
      JSON.stringify({ conversations: [{ from: 'human', value: 'hello there' }, { from: 'gpt', value: 'a b c d' }, { from: 'human', value: 'and more' }, { from: 'gpt', value: 'e f' }, { from: 'human', value: 'last' }] }),
    ].join('\n'));
    const out2 = join(dir, 'dataset.json');
    const ds = await runCliProcess(['run', '--url', server.url, '--dataset', data, '--multi-turn', '--concurrency', '2', '--out', out2]);
    assert.equal(ds.code, 0, ds.stderr);
    assert.match(ds.stdout, /By turn \(every conversation, at most 2 sessions in flight;/);
    const run2 = JSON.parse(readFileSync(out2, 'utf8')) as RunFile;
    assert.equal(measured(run2).length, 5, 'every turn of every conversation, once');
    const sessions = [...bySession(run2).values()].sort((a, b) => a.length - b.length);
    const a = sessions[0]!.map((r) => server.truth.requests.get(r.responseId!)!);
    assert.deepEqual(a[0]!.messages!.map((m) => m.role), ['system', 'user']);
    assert.deepEqual(a[0]!.messages!.map((m) => m.hash), [contentHash('Be brief.'), contentHash('first question here')]);
    assert.deepEqual(a[1]!.messages!.map((m) => m.hash), [contentHash('Be brief.'), contentHash('first question here'), a[0]!.reply!.hash, contentHash('second one')], 'the dataset reply is not sent; the streamed one is');
    assert.deepEqual(a.map((t) => t.maxTokens), [3, 2]);
    const b = sessions[1]!.map((r) => server.truth.requests.get(r.responseId!)!);
    assert.deepEqual(b.map((t) => t.maxTokens), [4, 2, 128], "ShareGPT's replies set the output lengths; the last turn takes the workload's");
    assert.ok(sessions[0]![1]!.scheduledAt - (sessions[0]![0]!.sentAt + sessions[0]![0]!.e2eMs!) >= 29.5, "the turn's own think time");

    // a bad line is refused before anything is sent, naming the line and the flag
    const bad = join(dir, 'bad.jsonl');
    writeFileSync(bad, `${JSON.stringify({ turns: [{ role: 'user', content: 'ok' }] })}\n{"turns": [{"role": "user", "content": 3}]}\n`);
    const refused = await runCliProcess(['run', '--url', server.url, '--dataset', bad, '--multi-turn']);
    assert.equal(refused.code, 2, refused.stderr);
    assert.match(refused.stderr, /--dataset: .*bad\.jsonl:2: turns\[0\]\.content must be a string/);
  });
});
