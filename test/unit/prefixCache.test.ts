// Prefix caching measured on purpose: cold requests' bodies per API, which requests repeat an earlier
// prompt, the cold/warm split of a run, and the cache check's prompts and verdict.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cacheBustFor, nonceLead, sentPrompt } from '../../src/engine/transport/adapters/cacheBust';
import { adapterFor } from '../../src/engine/transport/adapters/registry';
import { cacheCheckPlan, judgeCacheCheck, variantOf } from '../../src/engine/run/cacheCheck';
import { servedWarm, summarizePrefixCache } from '../../src/engine/analysis/prefixCache';
import { createPlanner } from '../../src/engine/run/plan';
import type { Planned } from '../../src/engine/run/plan';
import { API_KINDS } from '../../src/engine/core/apis';
import type { Prompt, RequestRecord, RequestSpec, WorkloadSpec } from '../../src/engine/core/types';
import type { ApiKind } from '../../src/engine/core/apis';
import { defaultWorkload, workloadProblems } from '../../src/engine/core/workload';
import { buildCacheCheckJob, buildRunJob, buildSweepJob } from '../../src/jobs/build';
import { parseCommandLine } from '../../src/cli/parse';
import { formatCacheCheck, prefixCacheSplitLine } from '../../src/present/cacheCheckText';

const userPrompt = (text: string, system?: string): Prompt => ({
  messages: [...(system ? [{ role: 'system' as const, content: system }] : []), { role: 'user' as const, content: text }],
});

const spec = (over: Partial<RequestSpec> = {}): RequestSpec => ({
  index: 3,
  warmup: false,
  prompt: userPrompt('Hello there, how are you?', 'Be brief.'),
  maxTokens: 8,
  ignoreEos: true,
  scheduledAt: 0,
  ...over,
});

/** The text the server sees first: the first message's content, or the completion prompt. */
function firstText(api: ApiKind, body: Record<string, unknown>): string {
  if (api === 'openai-chat' || api === 'ollama' || api === 'azure-openai') return (body.messages as { content: string }[])[0]!.content;
  // The APIs that take the system prompt apart: it is what they read first.
  if (api === 'anthropic') return String(body.system);
  if (api === 'gemini') return (body.systemInstruction as { parts: { text: string }[] }).parts[0]!.text;
  return String(body.prompt);
}

test('cold bodies: llama.cpp /completion gets cache_prompt false, the others a leading nonce; warm bodies are unchanged', () => {
  for (const api of API_KINDS) {
    const endpoint = { url: 'http://127.0.0.1:8000', api, model: 'm' };
    const adapter = adapterFor(api);
    const warm = JSON.parse(adapter.buildRequest(spec(), endpoint).body) as Record<string, unknown>;
    assert.equal(warm.cache_prompt, undefined, `${api}: warm sends no cache_prompt`);
    assert.ok(firstText(api, warm).startsWith('Be brief.'), `${api}: warm sends the prompt as given`);

    const bust = cacheBustFor(api);
    const cold = JSON.parse(adapter.buildRequest(spec({ cacheBust: bust, nonce: 'k3f9q2-3' }), endpoint).body) as Record<string, unknown>;
    if (api === 'llamacpp') {
      assert.equal(bust, 'cache_prompt');
      assert.equal(cold.cache_prompt, false, 'llama.cpp: cache_prompt false');
      assert.equal(cold.prompt, warm.prompt, 'llama.cpp: the prompt itself is untouched');
    } else {
      assert.equal(bust, 'nonce');
      assert.equal(cold.cache_prompt, undefined, `${api}: no unknown body field (hosted APIs refuse them)`);
      assert.equal(firstText(api, cold), `${nonceLead('k3f9q2-3')}${firstText(api, warm)}`, `${api}: the nonce leads the prompt`);
      // nothing else of the body changes
      const { messages: _m1, prompt: _p1, system: _s1, systemInstruction: _i1, ...restCold } = cold;
      const { messages: _m2, prompt: _p2, system: _s2, systemInstruction: _i2, ...restWarm } = warm;
      assert.deepEqual(restCold, restWarm, api);
    }
  }
  // the chat APIs keep every message; only the first is led by the nonce
  const chat = JSON.parse(adapterFor('openai-chat').buildRequest(spec({ cacheBust: 'nonce', nonce: 'abc-1' }), { url: 'http://h', api: 'openai-chat' }).body) as { messages: { role: string; content: string }[] };
  assert.deepEqual(chat.messages, [{ role: 'system', content: '[abc-1] Be brief.' }, { role: 'user', content: 'Hello there, how are you?' }]);
  // a nonce without cacheBust "nonce" (or the other way round) changes nothing
  assert.deepEqual(sentPrompt(spec({ nonce: 'x' })).messages, spec().prompt.messages);
  assert.deepEqual(sentPrompt(spec({ cacheBust: 'nonce' })).messages, spec().prompt.messages);
});

async function plan(w: WorkloadSpec, api: ApiKind, prompts?: readonly Prompt[], warmupPrompts?: readonly Prompt[]): Promise<Planned[]> {
  const planner = await createPlanner(w, { url: 'http://127.0.0.1:8000', api }, prompts, warmupPrompts);
  const out: Planned[] = [];
  for (let k = 0; k < w.warmup; k++) out.push(planner.plan(k, true, k, 0));
  for (let k = 0; k < (w.requests ?? 0); k++) out.push(planner.plan(w.warmup + k, false, k, 0));
  return out;
}

test('cold runs: every request gets the API\'s way and a unique nonce; warm runs send as given; repeats name the first request', async () => {
  const file = [userPrompt('Summarize the tale of the river.')];
  const cold = await plan(defaultWorkload({ requests: 5, warmup: 1 }), 'openai-chat', file);
  assert.equal(defaultWorkload().prefixCache, 'cold', 'new runs are cold by default');
  assert.ok(cold.every((p) => p.spec.cacheBust === 'nonce'));
  const nonces = cold.map((p) => p.spec.nonce!);
  assert.equal(new Set(nonces).size, 6, `unique per request: ${nonces.join(', ')}`);
  assert.ok(nonces.every((n) => /^\d{6}-\d{6}$/.test(n)), 'short, digits of fixed width (every request counts alike)');
  // the prompt repeats: the warmup sent it first (index 0), every later request repeats it
  assert.deepEqual(cold.map((p) => p.repeatOf), [undefined, 0, 0, 0, 0, 0]);
  // another run of the same prompts gets other nonces (nothing cached by an earlier run can match)
  const again = await plan(defaultWorkload({ requests: 5, warmup: 1 }), 'openai-chat', file);
  assert.notEqual(again[1]!.spec.nonce, cold[1]!.spec.nonce);

  const llama = await plan(defaultWorkload({ requests: 2, warmup: 0 }), 'llamacpp', file);
  assert.ok(llama.every((p) => p.spec.cacheBust === 'cache_prompt' && p.spec.nonce === undefined));

  const warm = await plan(defaultWorkload({ requests: 4, warmup: 0, prefixCache: 'warm' }), 'openai-chat', [userPrompt('a'), userPrompt('b'), userPrompt('a')]);
  assert.ok(warm.every((p) => p.spec.cacheBust === undefined && p.spec.nonce === undefined));
  // a, b, a (same text as 0), a again
  assert.deepEqual(warm.map((p) => p.repeatOf), [undefined, undefined, 0, 0]);

  // an older workload without the field: warm, as runs were before it
  const { prefixCache: _drop, ...old } = defaultWorkload({ requests: 2, warmup: 0 });
  assert.ok((await plan(old, 'openai-chat', file)).every((p) => p.spec.cacheBust === undefined));

  // synthetic prompts never repeat (each is unique from its first word), so nothing is kept for them
  const synthetic = await plan(defaultWorkload({ requests: 20, warmup: 2 }), 'openai-chat');
  assert.ok(synthetic.every((p) => p.repeatOf === undefined));

  // warmup prompts given apart are keyed with the measured ones
  const sep = await plan(defaultWorkload({ requests: 2, warmup: 1, prefixCache: 'warm' }), 'openai-chat', [userPrompt('m')], [userPrompt('w')]);
  assert.deepEqual(sep.map((p) => p.spec.prompt.messages[0]!.content), ['w', 'm', 'm']);
  assert.deepEqual(sep.map((p) => p.repeatOf), [undefined, undefined, 1]);
});

test('shared-prefix prompts: warm by default; cold with them is refused, naming both flags', async () => {
  const shared = defaultWorkload({ prompt: { kind: 'synthetic', tokens: 64, sharedPrefix: true } });
  assert.equal(shared.prefixCache, 'warm');
  assert.match(workloadProblems({ ...shared, prefixCache: 'cold' }).join(' '), /shared-prefix/);
  assert.equal((await buildRunJob(parseCommandLine('run', ['--url', 'http://h', '--shared-prefix']))).job.workload.prefixCache, 'warm');
  await assert.rejects(buildRunJob(parseCommandLine('run', ['--url', 'http://h', '--shared-prefix', '--prefix-cache', 'cold'])), /--prefix-cache cold cannot be used with --shared-prefix/);
  assert.equal((await buildRunJob(parseCommandLine('run', ['--url', 'http://h']))).job.workload.prefixCache, 'cold');
  assert.equal((await buildRunJob(parseCommandLine('run', ['--url', 'http://h', '--prefix-cache', 'warm']))).job.workload.prefixCache, 'warm');
  assert.equal((await buildSweepJob(parseCommandLine('sweep', ['--url', 'http://h', '--prefix-cache', 'warm']))).job.workload.prefixCache, 'warm');
  assert.throws(() => parseCommandLine('run', ['--prefix-cache', 'hot']), /--prefix-cache must be cold or warm, got "hot"/);
  assert.throws(() => parseCommandLine('cache-check', ['--prefix-cache', 'warm']), /unknown flag --prefix-cache/);
});

const rec = (index: number, over: Partial<RequestRecord> = {}): RequestRecord => ({
  index, warmup: false, scheduledAt: 0, sentAt: 0, outputTokens: 4, tokenSource: 'usage', chunkTimesMs: [], ttftMs: 40, promptTokens: 100, ...over,
});

test('summarizePrefixCache: warm = a repeat in a warm run, or most of the prompt cached by the server\'s count', () => {
  // nothing repeats, nothing cached: no split
  assert.equal(summarizePrefixCache([rec(0), rec(1)], 'cold'), undefined);
  // a chat template's few cached tokens on a cold request do not make it warm
  assert.equal(summarizePrefixCache([rec(0, { serverTimings: { cachedTokens: 4 } })], 'cold'), undefined);

  // warm run, repeats, no server count: the repeats are warm
  const warm = summarizePrefixCache([rec(0), rec(1, { repeatOf: 0, ttftMs: 3 }), rec(2, { repeatOf: 0, ttftMs: 5 })], 'warm')!;
  assert.equal(warm.mode, 'warm');
  assert.equal(warm.coldRequests, 1);
  assert.equal(warm.warmRequests, 2);
  assert.equal(warm.coldTtftMs!.p50, 40);
  assert.equal(warm.warmTtftMs!.p50, 4);
  assert.equal(warm.cachedTokens, 0);

  // cold run, repeats kept cold: all cold, the split says so
  const cold = summarizePrefixCache([rec(0), rec(1, { repeatOf: 0 }), rec(2, { repeatOf: 0 })], 'cold')!;
  assert.deepEqual([cold.mode, cold.coldRequests, cold.warmRequests, cold.warmTtftMs], ['cold', 3, 0, undefined]);

  // the server's count wins: a repeat it did not serve from cache is cold, a cached one is warm even when not a repeat
  const counted = summarizePrefixCache([
    rec(0, { serverTimings: { cachedTokens: 0 } }),
    rec(1, { repeatOf: 0, serverTimings: { cachedTokens: 0 } }),
    rec(2, { serverTimings: { cachedTokens: 99 }, ttftMs: 2 }),
  ], 'warm')!;
  assert.deepEqual([counted.coldRequests, counted.warmRequests, counted.cachedTokens], [2, 1, 99]);
  assert.equal(servedWarm(rec(3, { serverTimings: { cachedTokens: 60 } }), 'cold'), true);
  assert.equal(servedWarm(rec(3, { serverTimings: { cachedTokens: 40 } }), 'cold'), false);
  // percentiles follow the workload's
  assert.ok('p75' in summarizePrefixCache([rec(0), rec(1, { repeatOf: 0 })], 'warm', [75])!.coldTtftMs!);
  assert.match(prefixCacheSplitLine(warm)!, /2 of 3 requests served warm .*TTFT p50 4 ms warm vs 40 ms cold/);
  assert.match(prefixCacheSplitLine(cold)!, /every request kept cold/);
});

test('cache check prompts: a unique lead per round, the same text again, a variant differing only in its last words', () => {
  const base = userPrompt('one two three four five six seven eight nine ten', 'You answer.');
  const p = cacheCheckPlan([base], 3, 'tag123');
  assert.equal(p.prompts.length, 9);
  const leads = new Set<string>();
  for (let r = 0; r < 3; r++) {
    const [cold, again, variant] = p.prompts.slice(3 * r, 3 * r + 3) as [Prompt, Prompt, Prompt];
    assert.deepEqual(again, cold);
    assert.ok(cold.messages[0]!.content.startsWith(`[tag123-${r + 1}] You answer.`));
    leads.add(cold.messages[0]!.content);
    assert.equal(variant.messages[0]!.content, cold.messages[0]!.content, 'the system message is shared whole');
    const a = cold.messages[1]!.content.split(' ');
    const b = variant.messages[1]!.content.split(' ');
    assert.equal(b.length, a.length);
    assert.deepEqual(b.slice(0, -1), a.slice(0, -1), 'all but the last words');
    assert.notEqual(b.at(-1), a.at(-1));
  }
  assert.equal(leads.size, 3);
  assert.ok(p.warmup.messages[0]!.content.startsWith('[tag123-w] '), 'the warmup shares no lead with a round');
  // a long prompt changes a few words (at most 8), keeping line breaks
  const long = userPrompt(Array.from({ length: 400 }, (_, i) => `w${i}`).join(' ') + '\nend');
  const v = variantOf(long, 0).messages[0]!.content;
  const changed = v.split(/\s+/).filter((w, i) => w !== long.messages[0]!.content.split(/\s+/)[i]).length;
  assert.ok(changed >= 1 && changed <= 8, `${changed} words changed`);
  assert.ok(v.includes('\n'));
});

test('cache check verdict: a clear TTFT drop or most of the prompt reported cached is a hit; neither is not', () => {
  const round = (start: number, cold: number, warm: number, variant: number, cached?: number) => [
    rec(start, { ttftMs: cold, ...(cached !== undefined ? { serverTimings: { cachedTokens: 2 } } : {}) }),
    rec(start + 1, { ttftMs: warm, repeatOf: start, ...(cached !== undefined ? { serverTimings: { cachedTokens: cached } } : {}) }),
    rec(start + 2, { ttftMs: variant }),
  ];
  const caching = judgeCacheCheck([...round(1, 44, 7, 8, 99), ...round(4, 45, 6, 9, 99), ...round(7, 300, 7, 8, 99)])!;
  assert.equal(caching.hit, true);
  assert.equal(caching.coldTtftMs, 45, 'median: an outlier round does not move it');
  assert.equal(caching.warmTtftMs, 7);
  assert.equal(caching.variantTtftMs, 8);
  assert.equal(caching.cachedTokens, 99);
  assert.equal(caching.rounds, 3);
  assert.match(caching.message, /^prefix cache: warm TTFT 7 ms vs 45 ms cold \(−84%\), 99 cached tokens reported.*the server caches prompts/);

  const none = judgeCacheCheck([...round(1, 44, 43, 45), ...round(4, 44, 44, 44), ...round(7, 43, 45, 44)])!;
  assert.equal(none.hit, false);
  assert.equal(none.cachedTokens, undefined);
  assert.match(none.message, /^no prefix cache seen: warm TTFT 44 ms vs 44 ms cold, no cached tokens reported/);

  // reported cached tokens alone (TTFT hidden by the network) still say it caches; a template's few do not
  assert.equal(judgeCacheCheck([...round(1, 44, 42, 43, 90)])!.hit, true);
  assert.equal(judgeCacheCheck([...round(1, 44, 42, 43, 3)])!.hit, false);
  // a failed round is left out; none finished: no verdict
  const failed = rec(4, { error: { kind: 'http', message: 'HTTP 500', status: 500 }, ttftMs: undefined });
  assert.equal(judgeCacheCheck([...round(1, 44, 7, 8), failed, rec(5, { ttftMs: 6 }), rec(6, { ttftMs: 6 })])!.rounds, 1);
  assert.equal(judgeCacheCheck([failed]), undefined);
  assert.equal(judgeCacheCheck([]), undefined);
});

test('cache-check job: one request at a time, a warmup apart, texts sent as built; the result block', async () => {
  const { job } = await buildCacheCheckJob(parseCommandLine('cache-check', ['--url', 'http://h', '--prompt-tokens', '300']));
  assert.equal(job.kind, 'cache-check');
  assert.deepEqual(job.workload.mode, { kind: 'closed', concurrency: 1 });
  assert.equal(job.workload.requests, 9);
  assert.equal(job.workload.warmup, 1);
  assert.equal(job.workload.prefixCache, 'warm');
  assert.equal(job.workload.maxTokens, 8);
  assert.deepEqual(job.workload.prompt, { kind: 'synthetic', tokens: 300, sharedPrefix: false });
  const local = (await buildCacheCheckJob(parseCommandLine('cache-check', []))).job;
  assert.equal(local.target.kind, 'local');
  assert.throws(() => parseCommandLine('cache-check', ['--concurrency', '4']), /unknown flag --concurrency/);

  const w = job.workload;
  const run = {
    format: 'llm-profiler.run', version: 1, id: 'x', startedAt: '', tool: { name: 'llm-profiler', version: '0' },
    endpoint: { url: 'http://h', api: 'openai-chat', model: 'm' }, workload: w, requests: [],
    summary: {} as never,
    prefixCache: { coldTtftMs: 44, warmTtftMs: 7, variantTtftMs: 8, cachedTokens: 290, hit: true, rounds: 3, message: 'prefix cache: …' },
  } as const;
  const text = formatCacheCheck(run as never);
  assert.match(text, /Cold TTFT:\s+44 ms/);
  assert.match(text, /Warm TTFT:\s+7 ms \(−84% of cold\)/);
  assert.match(text, /Cached tokens:\s+290/);
  assert.match(text, /Verdict:\s+the server caches prompts/);
  assert.match(formatCacheCheck({ ...run, prefixCache: undefined } as never), /No round finished/);
});
