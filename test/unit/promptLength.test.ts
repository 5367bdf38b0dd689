// Sizing synthetic prompts to the length asked (src/engine/run/promptLength.ts): the fit against a
// server's count, the correction from the warmup's usage, the run file's record, and how the header
// says the length (src/present/workloadText.ts promptWords).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { correctFromUsage, fitWords, promptLengthRecord, unsized, withWords, type Sizing } from '../../src/engine/run/promptLength';
import { defaultWorkload } from '../../src/engine/core/workload';
import { promptWords, sentTokens } from '../../src/present/workloadText';
import { syntheticPrompt } from '../../src/engine/prompts/syntheticPrompts';
import { chatTokens } from '../support/tokenizingServer';
import type { RequestRecord, RunFile } from '../../src/engine/core/types';
import { indexEntry } from '../../src/extension/runStore';
import { fixtureRun } from '../support/fixtureRuns';

const record = (index: number, promptTokens: number | undefined, extra: Partial<RequestRecord> = {}): RequestRecord => ({
  index, warmup: false, scheduledAt: 0, sentAt: 0, outputTokens: 4, tokenSource: 'usage', chunkTimesMs: [1, 2, 3, 4],
  ...(promptTokens !== undefined ? { promptTokens } : {}), ...extra,
});

test('fitWords: a count with a template, a nonce and words of more than one token lands on the length asked', async () => {
  // the test server's tokenizer over the very prompts a run sends, with a nonce and ChatML
  const count = async (words: number) => chatTokens([{ role: 'user', content: `[k3f9q2-1c] ${syntheticPrompt(1, words).messages[0]!.content}` }]);
  for (const asked of [32, 256, 1000]) {
    const before = await count(asked);
    assert.ok(Math.abs(before - asked) > 0.02 * asked, `unsized, ${asked} words count ${before}: far from what was asked`);
    let calls = 0;
    const fit = await fitWords(asked, (w) => { calls++; return count(w); });
    assert.ok(fit);
    const got = await count(fit.words);
    assert.ok(Math.abs(got - asked) <= Math.max(1, 0.02 * asked), `asked ${asked}, counted ${got} at ${fit.words} words`);
    assert.ok(calls <= 8, `${calls} counts`);
    assert.ok(fit.tokensPerWord > 1, 'some words are more than one token here');
  }
});

test('fitWords: exact at once when a word is a token; undefined when the counter stops answering', async () => {
  const calls: number[] = [];
  assert.deepEqual(await fitWords(256, async (w) => { calls.push(w); return w; }), { words: 256, tokensPerWord: 1 });
  assert.deepEqual(calls, [256]);
  assert.equal(await fitWords(256, async (w) => (w === 256 ? 300 : undefined)), undefined);
  assert.equal(await fitWords(256, async () => 12), undefined, 'a count that does not follow the words');
  assert.equal(await fitWords(64, async (w) => 500 + w), undefined, 'a template longer than the length asked');
});

test('correctFromUsage: the warmup\'s median count moves the words; no usage, no change', () => {
  const sizing: Sizing = { words: 200, method: 'tokenize', tokenizer: 'llama.cpp-text', tokensPerWord: 1.25 };
  const warm = [record(0, 266, { warmup: true })];
  // 10 tokens over: 8 words fewer
  assert.deepEqual(correctFromUsage(sizing, 256, warm), { ...sizing, words: 192, usageCorrected: true });
  assert.deepEqual(correctFromUsage(sizing, 256, [record(0, 256, { warmup: true })]), sizing, 'already right');
  assert.deepEqual(correctFromUsage(sizing, 256, [record(0, 999, { warmup: true, promptTokensEstimated: true })]), sizing, 'an estimate is not a count');
  assert.deepEqual(correctFromUsage(sizing, 256, [record(0, 999, { warmup: true, error: { kind: 'http', message: 'x' } })]), sizing);
  const none: Sizing = { words: 256, method: 'estimate', tokensPerWord: 1 };
  assert.deepEqual(correctFromUsage(none, 256, [record(0, 265, { warmup: true })]), { words: 247, method: 'usage', tokensPerWord: 1, usageCorrected: true });
  // a count that does not follow the prompt (a test server's fixed 8, a template far longer than it) is not sized by
  assert.deepEqual(correctFromUsage(none, 256, [record(0, 8, { warmup: true })]), none);
  assert.deepEqual(correctFromUsage(none, 256, [record(0, 1200, { warmup: true })]), none);
});

test('the record: method, words, what the server counted for the measured requests', () => {
  const sizing: Sizing = { words: 197, method: 'tokenize', tokenizer: 'vllm', tokensPerWord: 1.2 };
  const requests = [record(0, 300, { warmup: true }), record(1, 255), record(2, 257), record(3, 256), record(4, 999, { promptTokensEstimated: true })];
  assert.deepEqual(promptLengthRecord(sizing, 256, requests), { method: 'tokenize', asked: 256, words: 197, tokenizer: 'vllm', sent: { p50: 256, min: 255, max: 257, requests: 3 } });
  const w = withWords({ ...defaultWorkload(), prompt: { kind: 'synthetic', tokens: 256, sharedPrefix: false, sizing: 'server' } }, 197);
  assert.deepEqual(w.prompt, { kind: 'synthetic', tokens: 256, sharedPrefix: false, sizing: 'server', words: 197 });
  assert.deepEqual(unsized(w).prompt, { kind: 'synthetic', tokens: 256, sharedPrefix: false });
});

test('the header says the tokens the server counted, beside the length asked, and how it was sized', () => {
  const workload = { ...defaultWorkload(), prompt: { kind: 'synthetic' as const, tokens: 256, sharedPrefix: false } };
  const requests = [record(0, 350, { warmup: true }), record(1, 345), record(2, 351), record(3, 349)];
  const old = { workload, requests } as unknown as RunFile;
  // a run from before sizing: what the server counted, not what was asked
  assert.equal(promptWords(old), '349-token prompts as the server counted them (345–351; 256 asked)');
  assert.equal(promptWords(old, true), '349-token prompts (256 asked)');
  const sized = { workload, requests: [record(1, 256), record(2, 256)], promptLength: { method: 'tokenize', asked: 256, words: 197, sent: { p50: 256, min: 256, max: 256, requests: 2 } } } as unknown as RunFile;
  assert.equal(promptWords(sized), "256-token prompts as the server counted them (256 asked, sized with the server's tokenizer)");
  assert.equal(promptWords({ workload, requests: [record(1, undefined)] } as unknown as RunFile), '256-token prompts asked (the server reported no count)');
  assert.equal(sentTokens({ requests: [record(1, 10), record(2, 20)] } as unknown as RunFile)?.p50, 15);
  assert.equal(promptWords({ workload: { ...workload, prompt: { kind: 'dataset', path: 'd.jsonl' } }, requests } as unknown as RunFile), 'prompts from d.jsonl');
});


test('the run list carries the short form for a synthetic run, nothing for a prompt file', () => {
  const base = fixtureRun({ seed: 2, requests: 4, errorRate: 0 });
  const run = { ...base, workload: { ...base.workload, prompt: { kind: 'synthetic' as const, tokens: 256, sharedPrefix: false } }, requests: base.requests.map((r) => ({ ...r, promptTokens: 349 })) };
  assert.equal(indexEntry(run, '/r.json').prompt, '349-token prompts (256 asked)');
  assert.equal(indexEntry({ ...run, workload: { ...run.workload, prompt: { kind: 'file', path: '/w/a.prompt.md' } } }, '/r.json').prompt, undefined);
});
