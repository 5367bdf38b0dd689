// Multi-turn datasets and synthetic chats (src/engine/prompts/conversations.ts): both conversation
// forms, the limits, refusals naming the line, and sessions that share no text.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chatConversation, loadConversations, MAX_THINK_TIME_MS, MAX_TURNS, parseConversations, plannedTurns, sessionSource, turnPrompt, wholeConversation } from '../../src/engine/prompts/conversations';
import { DatasetError, parseDataset } from '../../src/engine/prompts/dataset';
import { readPrompts } from '../../src/engine/prompts/promptSource';
import { defaultWorkload } from '../../src/engine/core/workload';

test('the session/turns form: user and system turns, per-turn max tokens and think time, assistant turns not sent', () => {
  const line = {
    session_id: 'a1',
    think_time_ms: 50,
    turns: [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'First question', max_tokens: 12 },
      { role: 'assistant', content: 'an answer the server will not be shown' },
      { role: 'user', content: 'Second', think_time_ms: 250 },
      { role: 'system', content: 'Now in French.' },
      { role: 'user', content: 'Third', max_tokens: 3 },
    ],
  };
  const [c] = parseConversations(JSON.stringify(line), 'd.jsonl');
  assert.equal(c!.id, 'a1');
  assert.equal(c!.source, 'd.jsonl:1');
  assert.equal(c!.turns.length, 3);
  assert.deepEqual(c!.turns[0]!.messages, [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'First question' }]);
  assert.equal(c!.turns[0]!.maxTokens, 12);
  assert.equal(c!.turns[0]!.thinkTimeMs, 50, 'the line think time applies to a turn without its own');
  // the dataset's reply is never sent: its length sets the output of a turn that gives none (as ShareGPT's does)
  assert.deepEqual(c!.turns[1]!.messages, [{ role: 'user', content: 'Second' }]);
  assert.equal(c!.turns[1]!.maxTokens, undefined);
  assert.equal(c!.turns[1]!.thinkTimeMs, 250);
  assert.deepEqual(c!.turns[2]!.messages, [{ role: 'system', content: 'Now in French.' }, { role: 'user', content: 'Third' }]);
  assert.ok(c!.turns.every((t) => t.messages.every((m) => m.role !== 'assistant')));
});

test('ShareGPT with several human turns: each is a turn, each gpt reply sets the length of the turn before it', () => {
  const text = [
    JSON.stringify({ id: 'x', conversations: [{ from: 'system', value: 'sys' }, { from: 'human', value: 'one' }, { from: 'gpt', value: 'a b c d e' }, { from: 'human', value: 'two' }, { from: 'gpt', value: 'f g' }, { from: 'human', value: 'three' }] }),
    '',
    JSON.stringify({ conversations: [{ from: 'human', value: 'only' }], max_tokens: 7 }),
    JSON.stringify({ messages: [{ role: 'user', content: 'm1' }, { role: 'assistant', content: 'r' }, { role: 'user', content: 'm2' }] }),
    JSON.stringify({ prompt: 'single' }),
  ].join('\r\n');
  const cs = parseConversations(text, 's.jsonl');
  assert.deepEqual(cs.map((c) => c.turns.length), [3, 1, 2, 1]);
  assert.deepEqual(cs.map((c) => c.source), ['s.jsonl:1', 's.jsonl:3', 's.jsonl:4', 's.jsonl:5']);
  assert.deepEqual(cs[0]!.turns.map((t) => t.messages.map((m) => m.content)), [['sys', 'one'], ['two'], ['three']]);
  assert.deepEqual(cs[0]!.turns.map((t) => t.maxTokens), [5, 2, undefined]);
  assert.equal(cs[1]!.turns[0]!.maxTokens, 7, "the line's max_tokens");
  // without multi-turn, the same ShareGPT line stays one prompt (its first human turn), as before
  const single = parseDataset(text, 's.jsonl');
  assert.equal(single.length, 4);
  assert.deepEqual(single[0]!.messages.map((m) => m.content), ['sys', 'one']);
});

test('refusals name the line, and the limits hold', () => {
  const cases: [string, RegExp, number][] = [
    ['{"turns": []}\n', /d\.jsonl:1: no user turn/, 1],
    ['{"prompt":"ok"}\n{"turns": [{"role": "user"}]}', /d\.jsonl:2: turns\[0\]\.content must be a string/, 2],
    ['{"turns": [{"role": "robot", "content": "x"}]}', /turns\[0\]: role must be system, user or assistant/, 1],
    ['{"turns": [{"role": "user", "content": "x", "max_tokens": 0}]}', /turns\[0\]\.max_tokens" must be a whole number/, 1],
    ['{"turns": [{"role": "user", "content": "x", "think_time_ms": -1}]}', /think_time_ms" must be a number of ms from 0 to 3600000/, 1],
    [`{"turns": [{"role": "user", "content": "x", "think_time_ms": ${MAX_THINK_TIME_MS + 1}}]}`, /think_time_ms/, 1],
    ['{"turns": [{"role": "user", "content": "x"}, {"role": "system", "content": "late"}]}', /a system message after the last user turn would never be sent/, 1],
    ['{"session_id": {"a": 1}, "turns": [{"role": "user", "content": "x"}]}', /"session_id" must be a string/, 1],
    ['{"conversations": [{"from": "alien", "value": "x"}]}', /conversations\[0\]\.from: unknown speaker/, 1],
    ['{"text": "x"}', /expected a conversation/, 1],
    ['{"prompt": "a"}\n\n[1]', /d\.jsonl:3: expected a JSON object/, 3],
    ['{"turns": [', /d\.jsonl:1: not valid JSON/, 1],
  ];
  for (const [text, re, line] of cases) {
    assert.throws(() => parseConversations(text, 'd.jsonl'), (e: unknown) => e instanceof DatasetError && re.test(e.message) && e.line === line, `${re.source}: ${text}`);
  }
  assert.throws(() => parseConversations('\n', 'd.jsonl'), /d\.jsonl: no conversations in the dataset/);
  const many = JSON.stringify({ turns: Array.from({ length: MAX_TURNS + 1 }, (_, i) => ({ role: 'user', content: `t${i}` })) });
  assert.throws(() => parseConversations(many, 'd.jsonl'), new RegExp(`turns\\[${MAX_TURNS}\\]: more than ${MAX_TURNS} user turns`));
  assert.equal(parseConversations(JSON.stringify({ turns: Array.from({ length: MAX_TURNS }, () => ({ role: 'user', content: 'x' })) }), 'd.jsonl')[0]!.turns.length, MAX_TURNS);
  // a turns line read without multi-turn is refused with the way to read it
  assert.throws(() => parseDataset('{"turns": [{"role": "user", "content": "x"}]}', 'd.jsonl'), /d\.jsonl:1: a conversation \("turns"\) is read only as a session: read the dataset with multiTurn \(--multi-turn\)/);
});

test('a multi-turn dataset goes through the untrusted read: a folder, a missing file and an oversized one are refused', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'llmp-conv-'));
  const file = join(dir, 'chats.jsonl');
  writeFileSync(file, `${JSON.stringify({ turns: [{ role: 'user', content: 'hello there' }, { role: 'user', content: 'and again' }] })}\n`);
  assert.equal((await loadConversations(file))[0]!.turns.length, 2);
  await assert.rejects(loadConversations(dir), /cannot read dataset/);
  await assert.rejects(loadConversations(join(dir, 'none.jsonl')), /cannot read dataset/);
  await assert.rejects(loadConversations(file, 10), /cannot read dataset .*split it into smaller files/);
  // the job layer's read: each conversation as one prompt (its turns' messages), which sizes a local server
  const read = await readPrompts({ kind: 'dataset', path: file, multiTurn: true });
  assert.deepEqual(read.prompts.map((p) => p.messages.map((m) => m.content)), [['hello there', 'and again']]);
  await assert.rejects(readPrompts({ kind: 'dataset', path: file }), /read the dataset with multiTurn/);
  // the sessions' source: session k cycles through the conversations; the warmup shares no session's text
  const source = await sessionSource(defaultWorkload({ prompt: { kind: 'dataset', path: file, multiTurn: true } }));
  assert.equal(source.conversations, 1);
  assert.equal(source.conversation(3).source, `${file}:1`);
  assert.equal(plannedTurns(source, 3), 6);
  assert.ok(!source.warmupPrompt(0).messages[0]!.content.startsWith('hello'));
});

test('synthetic chats: turns of the asked length, distinct sessions, the warmup apart from all of them', async () => {
  const chat = { turns: 4, userTokens: 40 };
  const a = chatConversation(0, chat, 7);
  const b = chatConversation(1, chat, 7);
  assert.equal(a.turns.length, 4);
  for (const t of a.turns) assert.equal(t.messages[0]!.content.split(' ').length, 40);
  assert.notEqual(a.turns[0]!.messages[0]!.content.split(' ')[0], b.turns[0]!.messages[0]!.content.split(' ')[0], 'two sessions differ from their first word');
  assert.deepEqual(chatConversation(0, chat, 7), a, 'the same seed, the same sessions');
  assert.notDeepEqual(chatConversation(0, chat, 8), a);
  // a later turn is its own text too
  assert.notEqual(a.turns[1]!.messages[0]!.content, a.turns[2]!.messages[0]!.content);
  const source = await sessionSource(defaultWorkload({ prompt: { kind: 'chat', turns: 4, userTokens: 40, replyTokens: 8 }, sessions: 2 }));
  assert.equal(source.conversations, undefined);
  assert.equal(plannedTurns(source, 5), 20);
  const firstWords = new Set(Array.from({ length: 50 }, (_, k) => source.conversation(k).turns[0]!.messages[0]!.content.split(' ')[0]));
  assert.equal(firstWords.size, 50);
  assert.ok(!firstWords.has(source.warmupPrompt(0).messages[0]!.content.split(' ')[0]));
  // a turn's prompt: the history, then the turn
  const p = turnPrompt([{ role: 'user', content: 'u0' }, { role: 'assistant', content: 'r0' }], { messages: [{ role: 'user', content: 'u1' }], maxTokens: 9 }, 'x');
  assert.deepEqual(p.messages.map((m) => m.content), ['u0', 'r0', 'u1']);
  assert.equal(p.maxTokens, 9);
  assert.deepEqual(wholeConversation(a).messages.length, 4);
});
