// Run files of conversations, trace replays and ramps in the extension host: saved and listed by the
// real run store (the run-file reader's schema, the index entry every list and picker reads), each
// named by what ran (src/present/runText.ts runWhat) so that two such runs are told apart, and read
// back whole (the new fields kept).
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { RunStore } from '../../src/extension/runStore';
import { Scrubber, scrubRun } from '../../src/engine/core/redact';
import type { RunFile } from '../../src/engine/core/types';
import { runName, runWhat } from '../../src/present/runText';
import { fixtureRun, fixtureSessionRun, fixtureTraceRun } from '../support/fixtureRuns';

const safe = (run: RunFile) => scrubRun(run, new Scrubber());

function withWorkload(run: RunFile, over: Partial<RunFile['workload']>): RunFile {
  return { ...run, workload: { ...run.workload, ...over } as RunFile['workload'] };
}

test('each kind of traffic is named by what ran', () => {
  const chat = fixtureSessionRun({ sessions: 6, turns: 5, concurrency: 3 });
  assert.equal(runWhat(chat), '5-turn chats · c=3 · 6 sessions');
  // one session at a time still says how many sessions
  assert.equal(runWhat(withWorkload(chat, { mode: { kind: 'closed', concurrency: 1 } })), '5-turn chats · c=1 · 6 sessions');
  const dataset = withWorkload(chat, { prompt: { kind: 'dataset', path: '/w/data/sharegpt.jsonl', multiTurn: true }, sessions: undefined });
  assert.equal(runWhat(dataset), 'sharegpt.jsonl · c=3');
  assert.equal(runWhat(fixtureTraceRun({ speed: 2 })), 'mooncake_trace.jsonl · trace ×2');
  const ramp = withWorkload(fixtureRun({ seed: 3 }), { mode: { kind: 'open', rate: 8, burstiness: 1, ramp: { kind: 'linear', start: 1 } }, requests: 64 });
  assert.equal(runWhat(ramp), 'ramp 1→8/s · 64 req');
  const groups = withWorkload(fixtureRun({ seed: 3 }), { prompt: { kind: 'synthetic', tokens: 1024, sharedPrefix: false, groups: { count: 8, prefixTokens: 512 } } });
  assert.equal(runWhat(groups), 'c=4 · 40 req');
  assert.notEqual(runName({ what: runWhat(chat), endpointName: 'vllm', startedAt: chat.startedAt }), runName({ what: runWhat(dataset), endpointName: 'vllm', startedAt: chat.startedAt }));
});

test('the run store saves, lists and reads back conversation and trace runs whole', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'llmp-traffic-runs-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const store = new RunStore(join(dir, 'runs'));
  const chat = { ...fixtureSessionRun({ cache: 'off' }), id: 'chat-run' };
  const trace = { ...fixtureTraceRun({ tools: true, lateShare: 0.1 }), id: 'trace-run' };
  await store.save(safe(chat));
  await store.save(safe(trace));
  const { runs, problems } = await store.list();
  assert.deepEqual(problems, []);
  const byId = new Map(runs.map((r) => [r.id, r]));
  assert.equal(byId.get('chat-run')?.what, runWhat(chat));
  assert.equal(byId.get('trace-run')?.what, runWhat(trace));
  assert.equal(byId.get('chat-run')?.completed, chat.summary.completed);
  const back = await store.load('chat-run');
  assert.deepEqual(back.summary.byTurn, chat.summary.byTurn);
  assert.deepEqual(back.requests.filter((r) => r.session !== undefined).map((r) => [r.session, r.turn, r.historyTokens]), chat.requests.filter((r) => r.session !== undefined).map((r) => [r.session, r.turn, r.historyTokens]));
  assert.deepEqual(back.summary.verdicts?.map((v) => v.kind), ['history']);
  const tb = await store.load('trace-run');
  assert.deepEqual(tb.summary.schedule, trace.summary.schedule);
  assert.deepEqual(tb.requests.map((r) => r.traceLine), trace.requests.map((r) => r.traceLine));
  assert.deepEqual(tb.requests.flatMap((r) => r.toolCalls ?? []), trace.requests.flatMap((r) => r.toolCalls ?? []));
  assert.deepEqual(tb.workload.mode, { kind: 'trace', speed: 1 });
});
