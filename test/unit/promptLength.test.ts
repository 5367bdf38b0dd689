// Sizing synthetic prompts to the length asked (src/engine/run/promptLength.ts): the fit against a
// server's count, the correction from the warmup's usage, the run file's record, every request of a
// run counting alike (syntheticPrompts.ts, plan.ts's nonce), where the tokenizer may be asked
// (loopback.ts isPrivateHost), transport's bounded body read (readCapped.ts), and how the header says
// the length (src/present/workloadText.ts promptWords).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { correctFromUsage, fitWords, promptLengthRecord, unsized, withWords, type Counted, type Sizing } from '../../src/engine/run/promptLength';
import { defaultWorkload } from '../../src/engine/core/workload';
import { promptWords, sentTokens } from '../../src/present/workloadText';
import { groupPrompt, SHORT_WORDS, syntheticPrompt, WORDS } from '../../src/engine/prompts/syntheticPrompts';
import { createPlanner } from '../../src/engine/run/plan';
import { sentPrompt } from '../../src/engine/transport/adapters/cacheBust';
import { isPrivateHost, isPrivateUrl } from '../../src/engine/transport/loopback';
import { mayTokenize } from '../../src/engine/transport/tokenize';
import { readCapped } from '../../src/engine/transport/readCapped';
import { chatTokens } from '../support/tokenizingServer';
import type { PromptLength, RequestRecord, RunFile } from '../../src/engine/core/types';
import { indexEntry } from '../../src/extension/runStore';
import { fixtureRun } from '../support/fixtureRuns';

const record = (index: number, promptTokens: number | undefined, extra: Partial<RequestRecord> = {}): RequestRecord => ({
  index, warmup: false, scheduledAt: 0, sentAt: 0, outputTokens: 4, tokenSource: 'usage', chunkTimesMs: [1, 2, 3, 4],
  ...(promptTokens !== undefined ? { promptTokens } : {}), ...extra,
});

/** A server's count of `words` synthetic words with a nonce and ChatML, its words `lpt` letters a token (2: most of them two). */
const counter = (lpt: number, index = 1) => async (words: number) => chatTokens([{ role: 'user', content: `[482917-000042] ${syntheticPrompt(index, words).messages[0]!.content}` }], lpt);

test('fitWords: a count with a template, a nonce and words of more than one token lands on the length asked', async () => {
  for (const lpt of [4, 2]) {
    const count = counter(lpt);
    for (const asked of [32, 64, 256, 1000]) {
      const before = await count(asked);
      assert.ok(Math.abs(before - asked) > 0.02 * asked, `unsized, ${asked} words count ${before}: far from what was asked`);
      let calls = 0;
      const fit = await fitWords(asked, (w) => { calls++; return count(w); });
      assert.ok(fit);
      const got = await count(fit.words);
      assert.equal(got, fit.counted);
      // words of two tokens: the count moves by one or two a word, so the nearest may be one off
      assert.ok(Math.abs(got - asked) <= (lpt === 4 ? 0 : 1), `lpt ${lpt}: asked ${asked}, counted ${got} at ${fit.words} words`);
      assert.ok(calls <= 8, `${calls} counts`);
    }
  }
});

test('fitWords: the count made already is not asked again; undefined when the counter stops or does not follow the words', async () => {
  const calls: number[] = [];
  assert.deepEqual(await fitWords(256, async (w) => { calls.push(w); return w; }, [{ words: 256, count: 256 }]), { words: 256, counted: 256, tokensPerWord: 1 });
  assert.deepEqual(calls, [128], 'the sample\'s count reused: only the second length asked');
  assert.equal(await fitWords(256, async (w) => (w === 256 ? 300 : undefined)), undefined);
  assert.equal(await fitWords(256, async () => 12), undefined, 'a count that does not follow the words');
});

test('fitWords: a tokenizer that counts far too few cannot push the words past 4× asked; a template longer than asked keeps the fewest words, said so', async () => {
  const asked: number[] = [];
  const fit = await fitWords(256, async (w) => { asked.push(w); return Math.round(w / 20); });
  assert.ok(fit && fit.words <= 4 * 256, JSON.stringify(fit));
  assert.ok(asked.every((w) => w >= 1 && w <= 4 * 256), `asked at ${asked.join(', ')}`);
  // a template of 500 tokens: no words reach 64; the closest is one word, kept (not dropped for the words asked)
  const long = await fitWords(64, async (w) => 500 + w);
  assert.deepEqual(long, { words: 1, counted: 501, tokensPerWord: 1, shortest: true });
});

const at = (words: number, ...counts: number[]): Counted[] => counts.map((count) => ({ words, count }));

test('correctFromUsage: with the tokenizer\'s tokens a word, one length is enough (a text-only tokenizer\'s template)', () => {
  const sizing: Sizing = { words: 200, method: 'tokenize', tokenizer: 'llama.cpp-text', tokensPerWord: 1.25 };
  // 10 tokens over: 8 words fewer, no more warmup asked for
  assert.deepEqual(correctFromUsage(sizing, 256, at(200, 266), true), { sizing: { ...sizing, words: 192, usageCorrected: true } });
  assert.deepEqual(correctFromUsage(sizing, 256, at(200, 256), true), { sizing }, 'already right');
  assert.deepEqual(correctFromUsage(sizing, 256, [], true), { sizing }, 'no usage, no change');
  // the usage says what the tokenizer said (vLLM's counts the template too): its fit stands, even one off where no word count meets 64
  const vllm: Sizing = { words: 19, method: 'tokenize', tokenizer: 'vllm', tokensPerWord: 1.6, counted: 63 };
  assert.deepEqual(correctFromUsage(vllm, 64, at(19, 63), true), { sizing: vllm });
});

test('readCapped: a body read up to its bound, and whether that was all of it', async () => {
  async function* chunks(...parts: string[]) {
    for (const p of parts) yield Buffer.from(p);
  }
  assert.deepEqual(await readCapped(chunks('{"co', 'unt": 3}'), 64), { text: '{"count": 3}', whole: true });
  assert.deepEqual(await readCapped(chunks('abcd', 'efgh', 'ijkl'), 6), { text: 'abcdef', whole: false });
  let pulled = 0;
  async function* endless() {
    for (;;) {
      pulled++;
      yield Buffer.alloc(1024, 0x20);
    }
  }
  assert.equal((await readCapped(endless(), 4096)).whole, false);
  assert.ok(pulled <= 5, `reading stops at the bound: ${pulled} chunks pulled`);
});

test('correctFromUsage: without a tokenizer a second length, then the line through the nearest counts, until within 2 %', () => {
  const none: Sizing = { words: 256, method: 'estimate' };
  // a server counting 1.3 tokens a word and 25 of template: 358 at 256 words
  const count = (w: number) => Math.round(25 + 1.3 * w);
  const first = correctFromUsage(none, 256, at(256, count(256)), true);
  assert.equal(first.more, 256 - (count(256) - 256), 'the next at one token a word fewer');
  assert.equal(first.sizing.method, 'usage');
  const seen = [...at(256, count(256)), ...at(first.more!, count(first.more!))];
  const second = correctFromUsage(none, 256, seen, true);
  assert.equal(second.more, Math.round((256 - 25) / 1.3), 'then where the line says');
  const third = correctFromUsage(none, 256, [...seen, ...at(second.more!, count(second.more!))], true);
  assert.equal(third.more, undefined);
  assert.equal(third.sizing.words, second.more);
  assert.ok(Math.abs(count(third.sizing.words) - 256) <= 0.02 * 256);
  assert.equal(third.sizing.method, 'usage');
  assert.equal(third.sizing.usageCorrected, true);
  // none allowed: one token a word
  assert.deepEqual(correctFromUsage(none, 256, at(256, 265)), { sizing: { words: 247, method: 'usage', usageCorrected: true } });
});

test('correctFromUsage: a count that does not follow the prompt changes nothing; usage more than 2× off overrules the tokenizer', () => {
  const none: Sizing = { words: 256, method: 'estimate' };
  assert.deepEqual(correctFromUsage(none, 256, at(256, 8), true), { sizing: none }, 'a test server\'s fixed 8: no request added');
  // a long template at a short length is a count that follows: asked for a second length
  assert.equal(correctFromUsage({ words: 16, method: 'estimate' }, 16, at(16, 60), true).more, 1);
  // two lengths, the same count: not a count to size by
  assert.deepEqual(correctFromUsage(none, 256, [...at(256, 300), ...at(212, 300)], true), { sizing: none });
  const lying: Sizing = { words: 1024, method: 'tokenize', tokenizer: 'vllm', tokensPerWord: 0.25 };
  const over = correctFromUsage(lying, 256, at(1024, 1290), true);
  assert.equal(over.more, Math.round((1024 * 256) / 1290), 'the words cut in proportion, not by the lying slope');
  assert.equal(over.sizing.method, 'usage');
  const settled = correctFromUsage(lying, 256, [...at(1024, 1290), ...at(over.more!, 25 + 1.24 * over.more!)]);
  assert.equal(settled.sizing.method, 'usage');
  assert.equal(settled.sizing.tokenizer, 'vllm', 'the tokenizer the usage overruled is kept in the record');
  assert.ok(settled.sizing.words < 300, JSON.stringify(settled.sizing));
});

test('every request of a run counts alike: a tag of fixed width in four-letter words, the same words, a nonce of fixed width', async () => {
  const w = defaultWorkload({ requests: 5000, warmup: 1, prefixCache: 'cold', prompt: { kind: 'synthetic', tokens: 64, sharedPrefix: false } });
  const planner = await createPlanner(w, { url: 'http://127.0.0.1:1', api: 'openai-chat' });
  for (const lpt of [Infinity, 4, 3, 2]) {
    const counts = new Set<number>();
    for (const index of [0, 1, 7, 89, 90, 999, 4999, 8099, 8100, 999_999, 1_000_000 - 1]) counts.add(chatTokens(sentPrompt(planner.plan(index, false, index, 0).spec).messages, lpt));
    assert.equal(counts.size, 1, `letters a token ${lpt}: ${[...counts].join(', ')}`);
  }
  const nonces = [0, 5, 999_999].map((i) => planner.plan(i, false, i, 0).spec.nonce!);
  assert.ok(nonces.every((n) => /^\d{6}-\d{6}$/.test(n)), nonces.join(' '));
  // another planner (a sweep's next point, a worker thread): another run part, the same width
  const other = await createPlanner(w, { url: 'http://127.0.0.1:1', api: 'openai-chat' });
  assert.equal(chatTokens(sentPrompt(other.plan(3, false, 3, 0).spec).messages, 2), chatTokens(sentPrompt(planner.plan(3, false, 3, 0).spec).messages, 2));
  // the words are SHORT_WORDS, one token each in the common tokenizers
  assert.ok(SHORT_WORDS.every((x) => WORDS.includes(x) && x.length <= 4));
  // shared-prefix groups: every group and request alike too
  const groups = new Set([0, 1, 2, 40, 1234].map((i) => chatTokens(groupPrompt(i, i % 3, 64, 40).messages, 2)));
  assert.equal(groups.size, 1);
});

test('isPrivateHost: this machine and private networks, where sizing may ask the server\'s tokenizer; never a hosted service', () => {
  for (const h of ['localhost', '127.0.0.1', '::1', '10.1.2.3', '172.16.0.1', '172.31.255.255', '192.168.1.20', '169.254.1.1', '100.100.1.1', 'fd12::1', 'fe80::1', '::ffff:192.168.0.1', 'gpu-box', 'box.local', 'vllm.internal', 'nas.lan', 'x.home.arpa']) assert.equal(isPrivateHost(h), true, h);
  for (const h of ['api.openai.com', 'openrouter.ai', '8.8.8.8', '172.32.0.1', '100.128.0.1', '2001:db8::1', 'api.example.test', '']) assert.equal(isPrivateHost(h), false, h);
  assert.equal(isPrivateUrl('http://10.0.0.5:8000/v1'), true);
  assert.equal(isPrivateUrl('not a url'), false);
  assert.equal(mayTokenize({ url: 'https://api.groq.com/openai/v1', api: 'openai-chat' }), false);
  assert.equal(mayTokenize({ url: 'http://192.168.1.9:8000', api: 'openai-completions' }), true);
  assert.equal(mayTokenize({ url: 'https://llama.example.com', api: 'llamacpp' }), true, 'llama.cpp\'s own API: its server has /tokenize wherever it is');
  assert.equal(mayTokenize({ url: 'http://127.0.0.1:11434', api: 'ollama' }), false);
});

test('the record: method, words, what the server counted for the measured requests', () => {
  const sizing: Sizing = { words: 197, method: 'tokenize', tokenizer: 'vllm', tokensPerWord: 1.2 };
  const requests = [record(0, 300, { warmup: true }), record(1, 255), record(2, 257), record(3, 256), record(4, 999, { promptTokensEstimated: true })];
  assert.deepEqual(promptLengthRecord(sizing, 256, requests), { method: 'tokenize', asked: 256, words: 197, tokenizer: 'vllm', sent: { p50: 256, min: 255, max: 257, requests: 3 } });
  assert.deepEqual(promptLengthRecord({ words: 1, method: 'tokenize', tokenizer: 'vllm', shortest: true, addedWarmup: 2 }, 8, [record(1, 40)]), { method: 'tokenize', asked: 8, words: 1, tokenizer: 'vllm', addedWarmup: 2, shortest: true, sent: { p50: 40, min: 40, max: 40, requests: 1 } });
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
  const sized = (pl: Partial<PromptLength>, rs = [record(1, 256), record(2, 256)]) => ({ workload, requests: rs, promptLength: { method: 'tokenize', asked: 256, words: 197, sent: { p50: 256, min: 256, max: 256, requests: 2 }, ...pl } }) as unknown as RunFile;
  assert.equal(promptWords(sized({})), "256-token prompts as the server counted them (256 asked, sized with the server's tokenizer)");
  assert.equal(promptWords(sized({ tokenizer: 'llama.cpp-text', usageCorrected: true })), "256-token prompts as the server counted them (256 asked, sized with the server's tokenizer, then moved by the warmup's usage)");
  assert.equal(promptWords(sized({ method: 'usage', usageCorrected: true, addedWarmup: 2 })), "256-token prompts as the server counted them (256 asked, sized from the warmup's usage, 2 warmup requests added)");
  assert.equal(promptWords(sized({ method: 'usage', tokenizer: 'vllm', usageCorrected: true, addedWarmup: 1 })), "256-token prompts as the server counted them (256 asked, sized from the warmup's usage, 1 warmup request added; the server's tokenizer was off by more than 2×)");
  assert.equal(promptWords({ ...sized({ words: 1, shortest: true, sent: { p50: 40, min: 40, max: 40, requests: 2 } }), workload: { ...workload, prompt: { ...workload.prompt, tokens: 8 } } } as RunFile), "40-token prompts as the server counted them (8 asked; the shortest the server's chat template allows, 1 word, sized with the server's tokenizer)");
  // a live run before any reply: nothing said of the server's count yet; after replies without usage: said
  assert.equal(promptWords({ workload, requests: [] } as unknown as RunFile), '256-token prompts asked');
  assert.equal(promptWords({ workload, requests: [record(0, undefined, { warmup: true })] } as unknown as RunFile), '256-token prompts asked');
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
