import { test } from 'node:test';
import assert from 'node:assert/strict';
import { syntheticPrompt, estimateTokens, WORDS } from '../../src/engine/prompts/syntheticPrompts';
import { Rng, interArrivalS } from '../../src/engine/core/random';

const text = (i: number, n: number, o?: { seed?: number; sharedPrefix?: boolean }) => syntheticPrompt(i, n, o).messages[0]!.content;

test('a synthetic prompt has exactly the asked number of words and says so', () => {
  for (const n of [1, 2, 3, 17, 256, 4096]) {
    const p = syntheticPrompt(5, n);
    assert.equal(p.messages.length, 1);
    assert.equal(p.messages[0]!.role, 'user');
    assert.equal(p.messages[0]!.content.split(' ').length, n);
    assert.equal(p.estimatedTokens, n);
  }
  assert.ok(WORDS.length >= 200);
  assert.equal(new Set(WORDS).size, WORDS.length);
});

test('each request differs from its first word, so a prefix cache cannot hide prefill', () => {
  const firsts = new Set<string>();
  for (let i = 0; i < 2000; i++) firsts.add(text(i, 64).split(' ').slice(0, 2).join(' '));
  assert.equal(firsts.size, 2000);
});

test('seeded: the same seed and index give the same text, another seed another', () => {
  assert.equal(text(3, 100, { seed: 1 }), text(3, 100, { seed: 1 }));
  assert.notEqual(text(3, 100, { seed: 1 }), text(3, 100, { seed: 2 }));
});

test('shared prefix: the requests share all but their last words', () => {
  const a = text(1, 100, { sharedPrefix: true }).split(' ');
  const b = text(2, 100, { sharedPrefix: true }).split(' ');
  assert.equal(a.length, 100);
  assert.deepEqual(a.slice(0, 98), b.slice(0, 98));
  assert.notDeepEqual(a, b);
});

test('token estimate: about one per short word, more for long words, digits and punctuation', () => {
  assert.equal(estimateTokens(''), 0);
  assert.equal(estimateTokens('the cat sat on the mat'), 6);
  assert.equal(estimateTokens('Hello, world!'), 4);
  assert.equal(estimateTokens('internationalization'), 5);
  assert.equal(estimateTokens('2026'), 4);
  assert.equal(estimateTokens(text(0, 300)), 300, 'the synthetic words are one token each by this estimate too');
});

test('gamma gaps: mean 1/rate, and the shape sets the spread (CV = 1/sqrt(burstiness))', () => {
  for (const [rate, b] of [[10, 1], [4, 0.5], [20, 4]] as const) {
    const rng = new Rng(42);
    const xs = Array.from({ length: 40_000 }, () => interArrivalS(rng, rate, b));
    const mean = xs.reduce((a, x) => a + x, 0) / xs.length;
    const sd = Math.sqrt(xs.reduce((a, x) => a + (x - mean) ** 2, 0) / xs.length);
    assert.ok(Math.abs(mean * rate - 1) < 0.03, `mean ${mean} for rate ${rate}`);
    assert.ok(Math.abs(sd / mean - 1 / Math.sqrt(b)) < 0.05, `cv ${sd / mean} for burstiness ${b}`);
    assert.ok(xs.every((x) => x > 0));
  }
  const a = new Rng(7);
  const b = new Rng(7);
  for (let i = 0; i < 10; i++) assert.equal(a.next(), b.next());
});
