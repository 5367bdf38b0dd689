// A synthetic prompt of the length asked, as the server counts it (src/engine/run/promptLength.ts),
// against a server whose words are not one token each, that wraps every chat in a template and is
// sent a cold-cache nonce (test/support/tokenizingServer.ts): sized with its tokenizer in vLLM's
// shape, llama.cpp's (with its /apply-template, or on the text alone and the rest from the warmup's
// usage), or without one (the warmup's usage alone). Every measured request's prompt_tokens, as the
// server counted it, is within 2 % of what was asked; the run file says which way was used, and the
// CLI's head says the tokens sent beside the tokens asked.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { tmpdir } from 'node:os';
import { runWorkload } from '../../src/engine/run/runner';
import { defaultWorkload } from '../../src/engine/core/workload';
import type { EndpointSpec, RunFile, WorkloadSpec } from '../../src/engine/core/types';
import { startTokenizingServer, type TokenizeShape } from '../support/tokenizingServer';
import { runJobCommand } from '../support/cli';

const ASKED = 256;

function workload(over: Partial<WorkloadSpec> = {}, sizing = true): WorkloadSpec {
  return defaultWorkload({
    requests: 6, warmup: 1, maxTokens: 4, prefixCache: 'cold',
    prompt: { kind: 'synthetic', tokens: ASKED, sharedPrefix: false, ...(sizing ? { sizing: 'server' as const } : {}) },
    ...over,
  });
}

/** The measured requests' prompt tokens as the server counted them (it logs each; the warmup's come first). */
function measuredCounts(run: RunFile, logged: readonly number[], warmup: number): number[] {
  const fromRecords = run.requests.filter((r) => !r.warmup).map((r) => r.promptTokens!);
  assert.deepEqual([...fromRecords].sort(), [...logged.slice(warmup)].sort(), 'the records carry the server\'s own counts');
  return fromRecords;
}

const within = (xs: readonly number[], asked: number) => xs.every((x) => Math.abs(x - asked) <= 0.02 * asked);

test('unsized, the same words count far more than asked on this server: the template, the nonce and long words', async () => {
  const server = await startTokenizingServer('vllm');
  try {
    const endpoint: EndpointSpec = { url: server.url, api: 'openai-chat', model: 'tok-model' };
    const run = await runWorkload(endpoint, workload({}, false));
    const counts = measuredCounts(run, server.promptTokens, 1);
    assert.ok(counts.every((x) => x > ASKED * 1.1), `counted ${counts.join(', ')} for ${ASKED} asked`);
    assert.equal(run.promptLength, undefined);
    assert.equal(server.hits['POST /tokenize'], undefined, 'no sizing asked, no tokenizer asked');
  } finally {
    await server.close();
  }
});

// without a tokenizer, one reply's count can only move the words at one token a word: what the
// synthetic words are to the common tokenizers, so that server counts them so (the template and the nonce still add)
const CASES: readonly { shape: TokenizeShape; method: string; tokenizer?: string; corrected?: boolean; lettersPerToken?: number }[] = [
  { shape: 'vllm', method: 'tokenize', tokenizer: 'vllm' },
  { shape: 'llama.cpp', method: 'tokenize', tokenizer: 'llama.cpp' },
  { shape: 'llama.cpp-text', method: 'tokenize', tokenizer: 'llama.cpp-text', corrected: true },
  { shape: 'none', method: 'usage', corrected: true, lettersPerToken: Infinity },
];

for (const c of CASES) {
  test(`sized to ${ASKED} tokens within 2 % as the server counts them: tokenizer ${c.shape}`, async () => {
    const server = await startTokenizingServer(c.shape, c.lettersPerToken !== undefined ? { lettersPerToken: c.lettersPerToken } : {});
    try {
      const endpoint: EndpointSpec = { url: server.url, api: 'openai-chat', model: 'tok-model' };
      const run = await runWorkload(endpoint, workload());
      const counts = measuredCounts(run, server.promptTokens, 1);
      assert.ok(within(counts, ASKED), `counted ${counts.join(', ')} for ${ASKED} asked (${JSON.stringify(run.promptLength)})`);
      const pl = run.promptLength!;
      assert.equal(pl.method, c.method);
      assert.equal(pl.tokenizer, c.tokenizer);
      assert.equal(pl.usageCorrected, c.corrected);
      assert.equal(pl.asked, ASKED);
      assert.ok(pl.words < ASKED, `fewer words than tokens asked: the template and the nonce count too (${pl.words})`);
      assert.equal(run.workload.prompt.kind === 'synthetic' && run.workload.prompt.words, pl.words, 'the words sent are recorded with the workload');
      assert.deepEqual(pl.sent, { p50: pl.sent!.p50, min: Math.min(...counts), max: Math.max(...counts), requests: counts.length });
      // every request is still its own: cold, led by its own nonce
      assert.ok(run.requests.every((r) => r.cacheBust === 'nonce'));
    } finally {
      await server.close();
    }
  });
}

test('the completions API, sized with llama.cpp\'s tokenizer (add_special, as its completion counts)', async () => {
  const server = await startTokenizingServer('llama.cpp');
  try {
    const run = await runWorkload({ url: server.url, api: 'openai-completions', model: 'tok-model' }, workload());
    const counts = measuredCounts(run, server.promptTokens, 1);
    assert.ok(within(counts, ASKED), counts.join(', '));
    assert.equal(run.promptLength?.method, 'tokenize');
    assert.equal(run.promptLength?.usageCorrected, undefined, 'the tokenizer counted it all');
  } finally {
    await server.close();
  }
});

test('without a tokenizer or a warmup, nothing is counted before the run: said so (estimate)', async () => {
  const server = await startTokenizingServer('none');
  try {
    const run = await runWorkload({ url: server.url, api: 'openai-chat', model: 'tok-model' }, workload({ warmup: 0 }));
    assert.equal(run.promptLength?.method, 'estimate');
    assert.equal(run.promptLength?.words, ASKED);
    assert.ok(run.promptLength?.sent && run.promptLength.sent.p50 > ASKED * 1.02, 'and the record says what the server counted');
  } finally {
    await server.close();
  }
});

test('the CLI sizes a run\'s prompts and its head says the tokens the server counted beside the tokens asked', async () => {
  const server = await startTokenizingServer('vllm');
  try {
    const r = await runJobCommand('run', ['--url', server.url, '--api', 'openai-chat', '--model', 'tok-model', '--requests', '3', '--max-tokens', '4'], { env: {}, cwd: tmpdir() });
    assert.equal(r.code, 0, r.stderr);
    const line = r.stdout.split('\n').find((l) => l.startsWith('Prompts:'));
    assert.ok(line, r.stdout);
    const m = /^Prompts:\s+([\d,]+)-token prompts as the server counted them \((?:[\d,]+–[\d,]+; )?256 asked, sized with the server's tokenizer\)$/.exec(line);
    assert.ok(m, line);
    assert.ok(Math.abs(Number(m[1]!.replace(/,/g, '')) - ASKED) <= 0.02 * ASKED, line);
    assert.ok(within(server.promptTokens.slice(1), ASKED), server.promptTokens.join(', '));
  } finally {
    await server.close();
  }
});
