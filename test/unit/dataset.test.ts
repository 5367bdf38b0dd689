import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseDataset, DatasetError } from '../../src/engine/prompts/dataset';

test('the three line shapes and output lengths', () => {
  const text = [
    '{"prompt": "Hello there", "max_tokens": 32}',
    '',
    '{"messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Why?"}], "output_len": 8}',
    '{"conversations": [{"from": "system", "value": "sys"}, {"from": "human", "value": "Tell me"}, {"from": "gpt", "value": "one two three four five"}, {"from": "human", "value": "more"}]}',
    '{"conversations": [{"from": "human", "value": "Just asking"}], "max_tokens": 5}',
  ].join('\r\n');
  const ps = parseDataset(text, 'd.jsonl');
  assert.equal(ps.length, 4);
  assert.deepEqual(ps[0]!.messages, [{ role: 'user', content: 'Hello there' }]);
  assert.equal(ps[0]!.maxTokens, 32);
  assert.equal(ps[0]!.source, 'd.jsonl:1');
  assert.deepEqual(ps[1]!.messages.map((m) => m.role), ['system', 'user']);
  assert.equal(ps[1]!.maxTokens, 8);
  assert.equal(ps[1]!.source, 'd.jsonl:3');
  // ShareGPT: turns up to the first human one; the reply's length sets max tokens
  assert.deepEqual(ps[2]!.messages, [{ role: 'system', content: 'sys' }, { role: 'user', content: 'Tell me' }]);
  assert.equal(ps[2]!.maxTokens, 5);
  assert.equal(ps[3]!.maxTokens, 5);
  assert.ok(ps.every((p) => (p.estimatedTokens ?? 0) > 0));
});

test('a bad line is named by its number (1-based, as an editor shows it)', () => {
  const cases: [string, RegExp, number][] = [
    ['{"prompt": "ok"}\n{"prompt": "cut', /d\.jsonl:2: not valid JSON/, 2],
    ['{"prompt": "ok"}\n\n[1,2]', /d\.jsonl:3: expected a JSON object/, 3],
    ['{"text": "x"}', /d\.jsonl:1: expected "prompt"/, 1],
    ['{"prompt": "x", "max_tokens": -1}', /"max_tokens" must be a whole number/, 1],
    ['{"messages": [{"role": "robot", "content": "x"}]}', /messages\[0\]: role must be/, 1],
    ['{"messages": [{"role": "system", "content": "x"}]}', /no user message/, 1],
    ['{"conversations": [{"from": "alien", "value": "x"}]}', /unknown speaker/, 1],
  ];
  for (const [text, re, line] of cases) {
    assert.throws(() => parseDataset(text, 'd.jsonl'), (e: unknown) => e instanceof DatasetError && re.test((e as Error).message) && (e as DatasetError).line === line, re.source);
  }
  assert.throws(() => parseDataset('\n\n', 'd.jsonl'), /no prompts/);
});

test('a ShareGPT dump as one JSON array is accepted too', () => {
  const ps = parseDataset(JSON.stringify([{ id: 'a', conversations: [{ from: 'human', value: 'Hi there' }, { from: 'gpt', value: 'Hello to you' }] }, { prompt: 'x' }]), 's.json');
  assert.equal(ps.length, 2);
  assert.equal(ps[0]!.maxTokens, 3);
  assert.equal(ps[1]!.source, 's.json[1]');
  assert.throws(() => parseDataset('[{"conversations": 3}]', 's.json'), /s\.json: entry 0: expected "prompt"/);
  assert.throws(() => parseDataset('[1, 2', 's.json'), /not valid JSON/);
});
