// Prefix caching against real servers: `llm-profiler cache-check` tells a caching server from one
// without (the cost-model server, whose truth log says what it served from its cache, and the
// bundled llama.cpp server), and a default `run` of a repeated prompt is never served warm.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { JobCommandName } from '../../src/cli/jobCommand';
import { runJobCommand } from '../support/cli';
import type { CliResult } from '../support/cli';
import { runCacheCheck } from '../../src/engine/run/cacheCheck';
import { summarizePrefixCache } from '../../src/engine/analysis/prefixCache';
import { readRunFile } from '../../src/engine/files/runFile';
import { runWorkload } from '../../src/engine/run/runner';
import type { RequestRecord, RunFile } from '../../src/engine/core/types';
import { defaultWorkload } from '../../src/engine/core/workload';
import { startCostModelServer } from '../support/costModelServer';
import type { CostModelOptions, CostModelServer, TruthRequest } from '../support/costModelServer';

const dir = mkdtempSync(join(tmpdir(), 'llmp-cache-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** The command as the CLI runs it (parse, build, execute, print, --out), in this process. */
function cli(command: JobCommandName, argv: string[]): Promise<CliResult> {
  return runJobCommand(command, argv, { env: process.env, cwd: dir });
}

async function withCostModel(options: Partial<CostModelOptions>, fn: (s: CostModelServer) => Promise<void>): Promise<void> {
  const s = await startCostModelServer({ baseMs: 4, kMs: 1, prefillMsPerToken: 0.1, ...options });
  try {
    await fn(s);
  } finally {
    await s.close();
  }
}

/** What the server did for a client record (its response id is the server's request id). */
function truthOf(s: CostModelServer, r: RequestRecord): TruthRequest {
  const t = s.truth.requests.get(r.responseId ?? '');
  assert.ok(t, `the server knows request ${r.index} (${r.responseId})`);
  return t;
}

const measured = (run: RunFile) => run.requests.filter((r) => !r.warmup).sort((a, b) => a.index - b.index);

test('cache-check tells a caching server from one without, and the server\'s own truth agrees', async () => {
  for (const timings of ['vllm', 'llamacpp', 'none'] as const) {
    for (const prefixCache of [true, false]) {
      await withCostModel({ prefixCache, timings }, async (s) => {
        const out = join(dir, `check-${timings}-${prefixCache}.json`);
        const r = await cli('cache-check', ['--url', s.url, '--api', 'openai-chat', '--prompt-tokens', '300', '--out', out]);
        const what = `timings ${timings}, prefix cache ${prefixCache}`;
        assert.equal(r.code, 0, `${what}: ${r.stderr}`);
        const run = await readRunFile(out);
        const check = run.prefixCache;
        assert.ok(check, `${what}: the run file holds the verdict`);
        assert.equal(check.hit, prefixCache, `${what}: ${check.message}`);
        assert.equal(check.rounds, 3);
        assert.match(r.stdout, /Cold TTFT:/);
        assert.match(r.stdout, prefixCache ? /Verdict:\s+the server caches prompts/ : /Verdict:\s+no prefix cache seen/);
        assert.match(check.message, prefixCache ? /^prefix cache: warm TTFT .* the server caches prompts/ : /^no prefix cache seen/);
        // cached tokens: reported exactly when the server reports them, and they are the server's truth
        const rounds = measured(run);
        assert.equal(rounds.length, 9);
        const again = rounds.filter((_, i) => i % 3 === 1);
        const cold = rounds.filter((_, i) => i % 3 === 0);
        const variant = rounds.filter((_, i) => i % 3 === 2);
        for (const x of cold) assert.equal(truthOf(s, x).cachedTokens, 0, `${what}: a cold request shares no prefix with anything sent before`);
        for (const x of again) {
          const t = truthOf(s, x);
          if (prefixCache) assert.equal(t.cachedTokens, t.promptTokens - 1, `${what}: the server served all but one token from its cache`);
          else assert.equal(t.cachedTokens, 0);
          assert.equal(x.repeatOf, x.index - 1, 'the warm request repeats the cold one');
        }
        for (const x of variant) {
          const t = truthOf(s, x);
          if (prefixCache) assert.ok(t.cachedTokens > 0.9 * t.promptTokens && t.cachedTokens < t.promptTokens - 1, `${what}: the variant shares all but its last words (${t.cachedTokens}/${t.promptTokens})`);
          assert.equal(x.repeatOf, undefined);
        }
        if (timings === 'none') assert.equal(check.cachedTokens, undefined, `${what}: nothing reported, nothing claimed`);
        else assert.equal(check.cachedTokens, prefixCache ? truthOf(s, again[0]!).cachedTokens : 0, what);
        if (prefixCache) {
          assert.ok(check.warmTtftMs < 0.7 * check.coldTtftMs, `${what}: warm ${check.warmTtftMs} vs cold ${check.coldTtftMs}`);
          assert.ok(check.variantTtftMs !== undefined && check.variantTtftMs < 0.7 * check.coldTtftMs);
        }
      });
    }
  }
});

test('cache-check on a prompt file and on llama.cpp\'s native API; --json prints the verdict', async () => {
  const file = join(dir, 'ask.prompt.md');
  writeFileSync(file, `${Array.from({ length: 200 }, (_, i) => `word${i % 37}`).join(' ')}\n`);
  await withCostModel({ prefixCache: true, timings: 'llamacpp' }, async (s) => {
    const r = await cli('cache-check', ['--url', s.url, '--api', 'llamacpp', '--prompt-file', 'ask.prompt.md', '--json']);
    assert.equal(r.code, 0, r.stderr);
    const check = JSON.parse(r.stdout) as { hit: boolean; cachedTokens?: number; rounds: number };
    assert.equal(check.hit, true);
    assert.ok(check.cachedTokens! >= 190, `cached ${check.cachedTokens}`);
    const routes = [...s.truth.requests.values()].map((t) => t.route);
    assert.ok(routes.length === 10 && routes.every((x) => x === 'llamacpp'), 'every request went to /completion');
    assert.ok([...s.truth.requests.values()].every((t) => t.cachePrompt), 'the check lets the cache work: no cache_prompt false');
  });
  assert.equal((await cli('cache-check', ['--url', 'http://127.0.0.1:9', '--concurrency', '2'])).code, 2, 'no load flags: the check sets its own');
});

test('a default run repeating one prompt is never served warm; with --prefix-cache warm requests 2..5 are, and the summary splits them', async () => {
  const file = join(dir, 'repeat.prompt.md');
  writeFileSync(file, `${Array.from({ length: 300 }, (_, i) => `w${i % 50}`).join(' ')}\n`);
  for (const api of ['openai-chat', 'llamacpp'] as const) {
    await withCostModel({ prefixCache: true, timings: 'vllm' }, async (s) => {
      const coldOut = join(dir, `cold-${api}.json`);
      const cold = await cli('run', ['--url', s.url, '--api', api, '--prompt-file', 'repeat.prompt.md', '--requests', '5', '--warmup', '0', '--max-tokens', '4', '--out', coldOut]);
      assert.equal(cold.code, 0, cold.stderr);
      const coldRun = await readRunFile(coldOut);
      assert.equal(coldRun.workload.prefixCache, 'cold', 'new runs are cold by default, and the file says so');
      const cm = measured(coldRun);
      assert.equal(cm.length, 5);
      for (const r of cm) {
        assert.equal(truthOf(s, r).cachedTokens, 0, `${api}: request ${r.index} was not served from the cache`);
        assert.equal(r.cacheBust, api === 'llamacpp' ? 'cache_prompt' : 'nonce');
        assert.equal(truthOf(s, r).cachePrompt, api !== 'llamacpp', `${api}: cache_prompt false only on the native API`);
      }
      assert.deepEqual(cm.map((r) => r.repeatOf), [undefined, 0, 0, 0, 0], 'the repeats are named even when kept cold');
      const coldSplit = coldRun.summary.prefixCache ?? summarizePrefixCache(cm, 'cold');
      assert.ok(coldSplit);
      assert.deepEqual([coldSplit.mode, coldSplit.coldRequests, coldSplit.warmRequests], ['cold', 5, 0]);
    });
    // a fresh server: cache_prompt false keeps a request from reusing the cache, not the server from
    // keeping its prompt (llama.cpp keeps a slot's last prompt), so after the cold run it could start warm
    await withCostModel({ prefixCache: true, timings: 'vllm' }, async (s) => {
      const warmOut = join(dir, `warm-${api}.json`);
      const warm = await cli('run', ['--url', s.url, '--api', api, '--prompt-file', 'repeat.prompt.md', '--requests', '5', '--warmup', '0', '--max-tokens', '4', '--prefix-cache', 'warm', '--out', warmOut]);
      assert.equal(warm.code, 0, warm.stderr);
      const warmRun = await readRunFile(warmOut);
      assert.equal(warmRun.workload.prefixCache, 'warm');
      const wm = measured(warmRun);
      assert.equal(truthOf(s, wm[0]!).cachedTokens, 0, `${api}: the first request is cold`);
      for (const r of wm.slice(1)) {
        assert.ok(truthOf(s, r).cachedTokens > 0, `${api}: request ${r.index} was served from the cache`);
        assert.equal(r.cacheBust, undefined);
      }
      const split = warmRun.summary.prefixCache ?? summarizePrefixCache(wm, 'warm', warmRun.workload.percentiles);
      assert.ok(split);
      assert.deepEqual([split.mode, split.coldRequests, split.warmRequests], ['warm', 1, 4]);
      assert.ok(split.warmTtftMs!.p50 < split.coldTtftMs!.p50, `warm TTFT ${split.warmTtftMs!.p50} < cold ${split.coldTtftMs!.p50}`);
      if (warmRun.summary.prefixCache) assert.match(warm.stdout, /Prefix cache: 4 of 5 requests served warm/);
    });
  }
});

test('the bundled llama.cpp server: the check sees its prefix cache, and cache_prompt false keeps a repeated prompt cold', async () => {
  const { startLocalServer } = await import('../../src/localServer/launcher');
  const { ensureSyntheticModel, PRESETS } = await import('../../src/localServer/synthetic');
  const modelDir = mkdtempSync(join(tmpdir(), 'llmp-cache-model-'));
  const h = await startLocalServer({ model: { kind: 'file', path: await ensureSyntheticModel(PRESETS.tiny, modelDir) }, parallel: 1, ctxSize: 2048 });
  try {
    const endpoint = { url: h.url, api: 'openai-chat' as const, model: h.model };
    const run = await runCacheCheck(endpoint, { workload: defaultWorkload({ maxTokens: 4, prompt: { kind: 'synthetic', tokens: 512, sharedPrefix: false } }) });
    const check = run.prefixCache;
    assert.ok(check, `a verdict (${JSON.stringify(run.summary.errorsByKind)})`);
    assert.equal(check.hit, true, check.message);
    assert.ok(check.cachedTokens !== undefined && check.cachedTokens > 400, `llama.cpp reports cache_n: ${check.cachedTokens}`);
    const again = measured(run).filter((_, i) => i % 3 === 1);
    const cold = measured(run).filter((_, i) => i % 3 === 0);
    for (const r of cold) assert.ok((r.serverTimings?.cachedTokens ?? 0) < 0.1 * r.promptTokens!, `cold: ${r.serverTimings?.cachedTokens} of ${r.promptTokens} cached`);
    for (const r of again) assert.ok(r.serverTimings!.cachedTokens! >= r.promptTokens! - 2, `again: ${r.serverTimings?.cachedTokens} of ${r.promptTokens} cached`);

    // a run of one prompt five times over llama.cpp's native API, cold by default: cache_prompt false, nothing reused
    const prompt = { messages: [{ role: 'user' as const, content: Array.from({ length: 200 }, (_, i) => `word${i % 30}`).join(' ') }] };
    const native = { ...endpoint, api: 'llamacpp' as const };
    const coldRun = await runWorkload(native, defaultWorkload({ requests: 5, warmup: 0, maxTokens: 4 }), { prompts: [prompt] });
    assert.equal(coldRun.summary.completed, 5);
    for (const r of measured(coldRun)) {
      assert.equal(r.cacheBust, 'cache_prompt');
      assert.equal(r.serverTimings?.cachedTokens, 0, `request ${r.index}: cache_n ${r.serverTimings?.cachedTokens}`);
    }
    const warmRun = await runWorkload(native, defaultWorkload({ requests: 5, warmup: 0, maxTokens: 4, prefixCache: 'warm' }), { prompts: [prompt] });
    const wm = measured(warmRun);
    for (const r of wm.slice(1)) assert.ok(r.serverTimings!.cachedTokens! > 0.9 * r.promptTokens!, `warm request ${r.index}: cache_n ${r.serverTimings?.cachedTokens} of ${r.promptTokens}`);
    const split = warmRun.summary.prefixCache ?? summarizePrefixCache(wm, 'warm');
    assert.ok(split && split.warmRequests >= 4, JSON.stringify(split));
  } finally {
    await h.stop();
    rmSync(modelDir, { recursive: true, force: true });
  }
});
