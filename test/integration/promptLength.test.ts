// A synthetic prompt of the length asked, as the server counts it (src/engine/run/promptLength.ts,
// sizing.ts), against a server whose words are not one token each, that wraps every chat in a
// template and is sent a cold-cache nonce (test/support/tokenizingServer.ts): sized with its tokenizer
// in vLLM's shape, llama.cpp's (with its /apply-template, or on the text alone and the rest from the
// warmup's usage), or without one (the warmup's usage, warmup requests added at other lengths). Every
// measured request's prompt_tokens, as the server counted it, is within 2 % of what was asked, however
// many requests and whatever their index, on one loop and on worker threads; the run file says which
// way was used, and the CLI's head says the tokens sent beside the tokens asked.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { tmpdir } from 'node:os';
import { runWorkload } from '../../src/engine/run/runner';
import { defaultWorkload } from '../../src/engine/core/workload';
import type { EndpointSpec, RunFile, WorkloadSpec } from '../../src/engine/core/types';
import { startTokenizingServer, type TokenizeShape } from '../support/tokenizingServer';
import { runJobCommand } from '../support/cli';
import { promptWords } from '../../src/present/workloadText';

const ASKED = 256;

function workload(over: Partial<WorkloadSpec> = {}, sizing = true, tokens = ASKED): WorkloadSpec {
  return defaultWorkload({
    requests: 6, warmup: 1, maxTokens: 4, prefixCache: 'cold',
    prompt: { kind: 'synthetic', tokens, sharedPrefix: false, ...(sizing ? { sizing: 'server' as const } : {}) },
    ...over,
  });
}

/** The measured requests' prompt tokens as the server counted them (it logs each; the warmup's, added ones included, come first). */
function measuredCounts(run: RunFile, logged: readonly number[]): number[] {
  const fromRecords = run.requests.filter((r) => !r.warmup).map((r) => r.promptTokens!);
  assert.equal(run.requests.filter((r) => r.warmup).length, run.workload.warmup, 'the warmup as recorded: the workload\'s and any added');
  assert.deepEqual([...fromRecords].sort(), [...logged.slice(run.workload.warmup)].sort(), 'the records carry the server\'s own counts');
  return fromRecords;
}

const outside = (xs: readonly number[], asked: number) => xs.filter((x) => Math.abs(x - asked) > 0.02 * asked);

test('unsized, the same words count far more than asked on this server: the template, the nonce and long words', async () => {
  const server = await startTokenizingServer('vllm', { lettersPerToken: 2 });
  try {
    const endpoint: EndpointSpec = { url: server.url, api: 'openai-chat', model: 'tok-model' };
    const run = await runWorkload(endpoint, workload({}, false));
    const counts = measuredCounts(run, server.promptTokens);
    assert.ok(counts.every((x) => x > ASKED * 1.1), `counted ${counts.join(', ')} for ${ASKED} asked`);
    assert.equal(run.promptLength, undefined);
    assert.equal(server.hits['POST /tokenize'], undefined, 'no sizing asked, no tokenizer asked');
  } finally {
    await server.close();
  }
});

// lettersPerToken 2: most words two tokens, some one (the words are 1 to 4 letters); 4: every word one,
// only the template and the nonce add; Infinity: the same, as the common tokenizers count the words
const CASES: readonly { shape: TokenizeShape; lettersPerToken: number; method: string; tokenizer?: string; corrected?: boolean; added?: boolean }[] = [
  { shape: 'vllm', lettersPerToken: 2, method: 'tokenize', tokenizer: 'vllm' },
  { shape: 'llama.cpp', lettersPerToken: 2, method: 'tokenize', tokenizer: 'llama.cpp' },
  { shape: 'llama.cpp-text', lettersPerToken: 2, method: 'tokenize', tokenizer: 'llama.cpp-text', corrected: true },
  { shape: 'none', lettersPerToken: 2, method: 'usage', corrected: true, added: true },
  { shape: 'none', lettersPerToken: 4, method: 'usage', corrected: true, added: true },
  { shape: 'none', lettersPerToken: Infinity, method: 'usage', corrected: true, added: true },
];

for (const c of CASES) {
  for (const asked of [64, 256, 1024]) {
    test(`sized to ${asked} tokens within 2 % as the server counts them: tokenizer ${c.shape}, ${c.lettersPerToken} letters a token`, async () => {
      const server = await startTokenizingServer(c.shape, { lettersPerToken: c.lettersPerToken });
      try {
        const endpoint: EndpointSpec = { url: server.url, api: 'openai-chat', model: 'tok-model' };
        const run = await runWorkload(endpoint, workload({}, true, asked));
        const counts = measuredCounts(run, server.promptTokens);
        const pl = run.promptLength!;
        assert.deepEqual(outside(counts, asked), [], `counted ${counts.join(', ')} for ${asked} asked (${JSON.stringify(pl)})`);
        assert.equal(pl.method, c.method);
        assert.equal(pl.tokenizer, c.tokenizer);
        assert.equal(pl.usageCorrected, c.corrected);
        assert.equal(pl.addedWarmup !== undefined, c.added === true, 'warmup requests added only without a tokenizer');
        assert.equal(run.workload.warmup, 1 + (pl.addedWarmup ?? 0));
        assert.equal(pl.asked, asked);
        assert.ok(pl.words < asked, `fewer words than tokens asked: the template and the nonce count too (${pl.words})`);
        assert.equal(run.workload.prompt.kind === 'synthetic' && run.workload.prompt.words, pl.words, 'the words sent are recorded with the workload');
        assert.deepEqual(pl.sent, { p50: pl.sent!.p50, min: Math.min(...counts), max: Math.max(...counts), requests: counts.length });
        // every request is still its own: cold, led by its own nonce
        assert.ok(run.requests.every((r) => r.cacheBust === 'nonce'));
      } finally {
        await server.close();
      }
    });
  }
}

// every request counts alike (a nonce and a tag of fixed width), so a length sized on one holds for all
for (const [shape, asked, lpt] of [['vllm', 64, 4], ['vllm', 32, 4], ['vllm', 64, 2], ['none', 64, 4]] as const) {
  test(`200 requests at ${asked} tokens, 16 at a time (${shape}, ${lpt} letters a token): every one within 2 %, whatever its index`, async () => {
    const server = await startTokenizingServer(shape, { lettersPerToken: lpt });
    try {
      const w = workload({ requests: 200, maxTokens: 1, mode: { kind: 'closed', concurrency: 16 } }, true, asked);
      const run = await runWorkload({ url: server.url, api: 'openai-chat', model: 'tok-model' }, w);
      const counts = measuredCounts(run, server.promptTokens);
      assert.equal(counts.length, 200);
      assert.deepEqual(outside(counts, asked), [], `${outside(counts, asked).length} of 200 outside 2 % of ${asked}: ${JSON.stringify(run.promptLength)}`);
      assert.ok(run.promptLength!.sent!.max - run.promptLength!.sent!.min <= 1, `spread ${JSON.stringify(run.promptLength!.sent)}`);
    } finally {
      await server.close();
    }
  });
}

// worker threads (--workers, and the automatic ones at high concurrency) size as one loop does: the
// tokenizer before them, the warmup's usage between their warmup and their measured phase
for (const [shape, mode] of [['none', 'closed'], ['none', 'open'], ['llama.cpp-text', 'closed']] as const) {
  test(`on 2 worker threads (${mode} loop): sized within 2 %, tokenizer ${shape}`, async () => {
    const server = await startTokenizingServer(shape, { lettersPerToken: 2 });
    try {
      const m = mode === 'closed' ? { kind: 'closed' as const, concurrency: 4 } : { kind: 'open' as const, rate: 40, burstiness: 1 };
      const w = workload({ requests: 24, warmup: 2, maxTokens: 1, workers: 2, mode: m });
      const run = await runWorkload({ url: server.url, api: 'openai-chat', model: 'tok-model' }, w);
      assert.equal(run.workload.workers, 2);
      const counts = measuredCounts(run, server.promptTokens);
      assert.equal(counts.length, 24);
      assert.deepEqual(outside(counts, ASKED), [], `${counts.join(', ')} (${JSON.stringify(run.promptLength)})`);
      assert.equal(run.promptLength!.usageCorrected, true, 'the warmup\'s usage moved the words on the threads too');
      // the measured requests' indexes follow the warmup as sent, added requests included
      assert.deepEqual(run.requests.map((r) => r.index).sort((a, b) => a - b), Array.from({ length: run.requests.length }, (_, i) => i));
      assert.ok(run.requests.every((r) => r.warmup === r.index < run.workload.warmup));
    } finally {
      await server.close();
    }
  });
}

test('the completions API, sized with llama.cpp\'s tokenizer (add_special, as its completion counts)', async () => {
  const server = await startTokenizingServer('llama.cpp', { lettersPerToken: 2 });
  try {
    const run = await runWorkload({ url: server.url, api: 'openai-completions', model: 'tok-model' }, workload());
    const counts = measuredCounts(run, server.promptTokens);
    assert.deepEqual(outside(counts, ASKED), [], counts.join(', '));
    assert.equal(run.promptLength?.method, 'tokenize');
    assert.equal(run.promptLength?.usageCorrected, undefined, 'the tokenizer counted it all');
  } finally {
    await server.close();
  }
});

test('a tokenizer that counts ten times too few: the words stay under 4× asked, and the usage overrules it', async () => {
  const server = await startTokenizingServer('vllm', { lettersPerToken: 2, fault: { scale: 0.1 } });
  try {
    const run = await runWorkload({ url: server.url, api: 'openai-chat', model: 'tok-model' }, workload());
    const counts = measuredCounts(run, server.promptTokens);
    const pl = run.promptLength!;
    // words of 1.5 tokens here: 4 × 256 words count about 1,560 (the tokenizer would have had about 1,700 words)
    assert.ok(server.promptTokens[0]! < 2 * 4 * ASKED, `the warmup's count ${server.promptTokens[0]}: at most 4× the words asked`);
    assert.equal(pl.method, 'usage');
    assert.equal(pl.tokenizer, 'vllm', 'the tokenizer overruled, named');
    assert.deepEqual(outside(counts, ASKED), [], `${counts.join(', ')} (${JSON.stringify(pl)})`);
  } finally {
    await server.close();
  }
});

test('a chat template longer than the length asked: the fewest words kept, and the header says so', async () => {
  const server = await startTokenizingServer('vllm');
  try {
    // the template and the nonce are about 25 tokens here: 8 asked cannot be met
    const run = await runWorkload({ url: server.url, api: 'openai-chat', model: 'tok-model' }, workload({}, true, 8));
    const pl = run.promptLength!;
    assert.equal(pl.method, 'tokenize');
    assert.equal(pl.words, 1);
    assert.equal(pl.shortest, true);
    assert.match(promptWords(run), new RegExp(`^${pl.sent!.p50}-token prompts as the server counted them \\(8 asked; the shortest the server's chat template allows, 1 word, sized with the server's tokenizer\\)$`));
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
  const server = await startTokenizingServer('vllm', { lettersPerToken: 2 });
  try {
    const r = await runJobCommand('run', ['--url', server.url, '--api', 'openai-chat', '--model', 'tok-model', '--requests', '3', '--max-tokens', '4'], { env: {}, cwd: tmpdir() });
    assert.equal(r.code, 0, r.stderr);
    const line = r.stdout.split('\n').find((l) => l.startsWith('Prompts:'));
    assert.ok(line, r.stdout);
    const m = /^Prompts:\s+([\d,]+)-token prompts as the server counted them \((?:[\d,]+–[\d,]+; )?256 asked, sized with the server's tokenizer\)$/.exec(line);
    assert.ok(m, line);
    assert.ok(Math.abs(Number(m[1]!.replace(/,/g, '')) - ASKED) <= 0.02 * ASKED, line);
    assert.deepEqual(outside(server.promptTokens.slice(1), ASKED), [], server.promptTokens.join(', '));
  } finally {
    await server.close();
  }
});
