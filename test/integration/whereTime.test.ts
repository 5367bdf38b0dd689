// "Where the time went", asserted against servers that log the truth: the cost-model server knows
// which request's prefill ran in which engine step, each request's queue and prefill, and what it
// reported; the buffering proxy knows every flush. The profiler's claims (this stall came from that
// prefill, this stream is buffered, these timings are the server's) are checked against those logs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runWorkload } from '../../src/engine/run/runner';
import { defaultWorkload } from '../../src/engine/core/workload';
import { median } from '../../src/engine/core/stats';
import { formatRunTable } from '../../src/present/runText';
import { startCostModelServer, truthCulprits } from '../support/costModelServer';
import type { CostModelOptions, CostModelServer } from '../support/costModelServer';
import { startBufferingProxy } from '../support/bufferingProxy';
import type { BufferingProxyOptions } from '../support/bufferingProxy';
import { withServer } from '../support/withServer';
import type { Prompt, RequestRecord, RunFile, WorkloadSpec } from '../../src/engine/core/types';

const words = (n: number, tag: string): string => Array.from({ length: n }, (_, i) => `${tag}${i}`).join(' ');
const prompt = (n: number, tag: string, maxTokens: number): Prompt => ({ messages: [{ role: 'user', content: words(n, tag) }], maxTokens });

/** Short decodes, and every `every`-th request a long prompt whose whole prefill lands in one engine step. */
function mixedPrompts(longWords: number, every: number): Prompt[] {
  const out: Prompt[] = [];
  // different lengths, so that the streams drift apart and a long prompt lands mid-decode
  for (let i = 0; i < every - 1; i++) out.push(prompt(8, `s${i}x`, 40 + 9 * i));
  out.push(prompt(longWords, 'long', 3));
  return out;
}

/** The cost-model server, for withServer. */
const costModel = (options: CostModelOptions) => (): Promise<CostModelServer> => startCostModelServer(options);

async function withProxy<T>(options: BufferingProxyOptions, fn: (url: string) => Promise<T>): Promise<T> {
  const proxy = await startBufferingProxy(options);
  try {
    return await fn(proxy.url);
  } finally {
    await proxy.close();
  }
}

function workload(overrides: Partial<WorkloadSpec>): WorkloadSpec {
  return defaultWorkload({ warmup: 0, maxTokens: 60, prompt: { kind: 'synthetic', tokens: 8, sharedPrefix: false }, ...overrides });
}

const byResponse = (run: RunFile): Map<string, RequestRecord> => new Map(run.requests.filter((r) => r.responseId).map((r) => [r.responseId!, r]));

interface Score {
  /** Truth prefill stalls (gaps over the stall rule in the server's own schedule whose step held another request's prefill). */
  truthStalls: number;
  found: number;
  reportedPrefill: number;
  wrong: number;
  details: string[];
}

/**
 * Recall and precision of the attribution against the server's log. A truth prefill stall is a
 * step in a stream's schedule whose cost the stall rule flags and which prefilled another request; it is found when the run has a stall at that chunk with cause "prefill" and exactly the
 * step's prefilling requests as culprits. A reported prefill stall is wrong when its culprits are not
 * exactly the requests the server prefilled in that step.
 */
function score(run: RunFile, server: CostModelServer): Score {
  const records = byResponse(run);
  const indexOf = (id: string): number => records.get(id)!.index;
  const steps = server.truth.steps;
  const s: Score = { truthStalls: 0, found: 0, reportedPrefill: 0, wrong: 0, details: [] };
  const { stallFactor: factor, stallFloorMs: floor } = run.workload;
  for (const r of run.requests) {
    if (r.warmup || r.error || !r.responseId) continue;
    const truth = server.truth.requests.get(r.responseId)!;
    // A gap as the cost model makes it: the cost of the step that produced the chunk. (The step's end
    // on the server's clock also carries its timers' lateness on a loaded machine, which is noise, not a prefill.)
    const gaps = truth.tokenSteps.slice(1).map((k) => steps[k]!.costMs);
    if (gaps.length === 0) continue;
    const threshold = Math.max(factor * median(gaps), floor);
    const reported = new Map((r.stalls ?? []).map((st) => [st.atChunk, st]));
    for (let i = 1; i < truth.tokenSteps.length; i++) {
      const culprits = truthCulprits(server, r.responseId, i).map(indexOf).sort((a, b) => a - b);
      if (!(gaps[i - 1]! > threshold && culprits.length > 0)) continue;
      s.truthStalls++;
      const st = reported.get(i);
      if (st?.cause === 'prefill' && JSON.stringify(st.culprits) === JSON.stringify(culprits)) s.found++;
      else s.details.push(`missed #${r.index} chunk ${i}: truth ${JSON.stringify(culprits)} gap ${gaps[i - 1]!.toFixed(1)}, reported ${JSON.stringify(st)}`);
    }
    for (const st of r.stalls ?? []) {
      if (st.cause !== 'prefill') continue;
      s.reportedPrefill++;
      const truth = truthCulprits(server, r.responseId, st.atChunk).map(indexOf).sort((a, b) => a - b);
      if (JSON.stringify(st.culprits) !== JSON.stringify(truth)) {
        s.wrong++;
        s.details.push(`wrong #${r.index} chunk ${st.atChunk}: reported ${JSON.stringify(st.culprits)}, truth ${JSON.stringify(truth)}`);
      }
    }
  }
  return s;
}

const MODEL: CostModelOptions = { baseMs: 12, kMs: 0.5, prefillMsPerToken: 0.5 };

test('prefill stalls: ≥ 95% found with the right culprit, ≤ 5% of reported ones wrong (server truth)', { timeout: 120_000 }, async () => {
  await withServer(costModel(MODEL), async (server) => {
    const run = await runWorkload(
      { url: server.url, api: 'openai-chat', model: server.model },
      workload({ requests: 60, mode: { kind: 'closed', concurrency: 6 } }),
      { prompts: mixedPrompts(500, 6) },
    );
    assert.equal(run.summary.failed, 0);
    const s = score(run, server);
    assert.ok(s.truthStalls >= 20, `enough stalls to judge: ${s.truthStalls}`);
    assert.ok(s.found / s.truthStalls >= 0.95, `found ${s.found} of ${s.truthStalls}\n${s.details.join('\n')}`);
    assert.ok(s.wrong / Math.max(1, s.reportedPrefill) <= 0.05, `wrong ${s.wrong} of ${s.reportedPrefill}\n${s.details.join('\n')}`);
    assert.equal(run.summary.buffering?.detected, false);
    // the long prompts are the culprits the summary names, with their prompt length
    const worst = run.summary.stalls.worst[0]!;
    assert.equal(worst.cause, 'prefill');
    assert.ok(worst.culprits!.some((c) => (c.promptTokens ?? 0) >= 500), JSON.stringify(worst));
    const text = formatRunTable(run);
    assert.match(text, /stalled \d[\d,.]* ms by #\d+'s \d{3}-token prefill/);
    assert.match(text, /decode stalls?, .* all from prefills of prompts ≥ \d{3} tokens: chunked prefill would bound them/);
    console.log(`attribution: ${s.found}/${s.truthStalls} truth prefill stalls found, ${s.wrong}/${s.reportedPrefill} reported wrong`);
  });
});

test("chunked prefill with llama.cpp timings: stalls inside a long prompt's prefill are blamed on it (server truth)", { timeout: 120_000 }, async () => {
  // 100-token chunks: a 500-word prompt spreads over five steps of ~62 ms, each a stall of every decoding
  // stream; only the last carries its first token, so the earlier ones need its reported prefill time.
  await withServer(costModel({ ...MODEL, prefillChunk: 100, timings: 'llamacpp' }), async (server) => {
    const run = await runWorkload(
      { url: server.url, api: 'openai-chat', model: server.model },
      workload({ requests: 36, mode: { kind: 'closed', concurrency: 6 } }),
      { prompts: mixedPrompts(500, 6) },
    );
    const s = score(run, server);
    assert.ok(s.truthStalls >= 50, `enough stalls to judge: ${s.truthStalls}`);
    assert.ok(s.found / s.truthStalls >= 0.95, `found ${s.found} of ${s.truthStalls}\n${s.details.join('\n')}`);
    assert.ok(s.wrong / Math.max(1, s.reportedPrefill) <= 0.05, `wrong ${s.wrong} of ${s.reportedPrefill}\n${s.details.join('\n')}`);
    console.log(`chunked attribution: ${s.found}/${s.truthStalls} found, ${s.wrong}/${s.reportedPrefill} wrong`);
  });
});

test('server timings are kept to the millisecond the server gave (vLLM metrics, llama.cpp timings), transport is client − server', { timeout: 60_000 }, async () => {
  for (const timings of ['vllm', 'llamacpp'] as const) {
    await withServer(costModel({ ...MODEL, timings, parallel: 2, prefixCache: true }), async (server) => {
      const run = await runWorkload(
        { url: server.url, api: 'openai-chat', model: server.model },
        workload({ requests: 12, mode: { kind: 'closed', concurrency: 4 }, prefixCache: 'warm' }),
        { prompts: [prompt(120, 'shared', 8)] },
      );
      assert.equal(run.summary.failed, 0);
      let queued = 0;
      const trips: number[] = [];
      for (const r of run.requests) {
        const t = server.truth.requests.get(r.responseId!)!;
        const st = r.serverTimings!;
        assert.equal(st.source, timings);
        if (timings === 'vllm') {
          assert.equal(st.queueMs, t.queueMs);
          assert.equal(st.promptMs, t.firstTokenAt! - t.admittedAt!);
          assert.equal(st.serverTtftMs, t.queueMs! + (t.firstTokenAt! - t.admittedAt!));
          if (t.queueMs! > 0) queued++;
        } else {
          assert.equal(st.promptMs, t.prefillMs);
          assert.equal(st.serverTtftMs, t.prefillMs);
        }
        assert.equal(st.cachedTokens, t.cachedTokens);
        assert.equal(r.transportMs, Math.round((r.ttftMs! - st.serverTtftMs!) * 1000) / 1000);
        // llama.cpp reports no queue, so there its wait is in transportMs too
        trips.push(timings === 'vllm' ? r.transportMs! : r.transportMs! - t.queueMs!);
      }
      // on loopback the trip adds little (a late timer on a loaded machine can add tens of ms to one request)
      assert.ok(median(trips) > -2 && median(trips) < 10, `${timings}: trips ${trips.join(', ')}`);
      const sv = run.summary.server!;
      assert.equal(sv.requests, 12);
      assert.deepEqual(sv.sources, [timings]);
      assert.ok(sv.cachedTokens > 0, 'the repeated prompt was served from the cache, as the server says');
      if (timings === 'vllm') {
        // 2 slots, 4 in flight: half wait in the queue, and the verdict says where TTFT went
        assert.ok(queued >= 4, `queued ${queued}`);
        assert.ok(sv.queueMs!.max > 0);
        assert.match(formatRunTable(run), /queue \(server\)/);
      }
    });
  }
});

test('a proxy that flushes every 200 ms is detected, yields no prefill stalls, and its TTFT inflation is told', { timeout: 60_000 }, async () => {
  await withServer(costModel({ baseMs: 4, kMs: 0.2, timings: 'vllm' }), async (server) => {
    await withProxy({ mode: 'time', flushMs: 200, target: server.url, headers: { via: '1.1 nginx' } }, async (url) => {
      const run = await runWorkload({ url, api: 'openai-chat', model: server.model }, workload({ requests: 8, maxTokens: 96, mode: { kind: 'closed', concurrency: 4 } }));
      const s = run.summary;
      assert.equal(s.failed, 0);
      assert.equal(s.buffering!.detected, true, JSON.stringify(s.buffering));
      assert.equal(s.stalls.byCause!.prefill, 0);
      for (const r of run.requests) for (const st of r.stalls ?? []) assert.equal(st.cause, 'buffering');
      assert.ok(Math.abs(s.buffering!.periodMs! - 200) < 30, `period ${s.buffering!.periodMs}`);
      // the server's own TTFT is a few ms; the proxy holds the first token until its next flush
      const serverTtft = median(run.requests.map((r) => r.serverTimings!.serverTtftMs!));
      assert.ok(serverTtft < 30, `server TTFT ${serverTtft}`);
      assert.ok(s.buffering!.inflationMs! > 40 && s.buffering!.inflationMs! < 220, `inflation ${s.buffering!.inflationMs}`);
      assert.equal(s.verdicts![0]!.kind, 'buffering');
      const text = formatRunTable(run);
      assert.match(text, /The stream is buffered between the server and you/);
      assert.match(text, /ITL \*/);
      assert.match(text, /via: 1\.1 nginx/);
    });
  });
});

test('a proxy that flushes every 8 events is detected from the clock alone (no server timings)', { timeout: 60_000 }, async () => {
  await withServer(costModel({ baseMs: 6, kMs: 0.2 }), async (server) => {
    await withProxy({ mode: 'count', events: 8, target: server.url }, async (url) => {
      const run = await runWorkload({ url, api: 'openai-chat', model: server.model }, workload({ requests: 6, maxTokens: 64, mode: { kind: 'closed', concurrency: 3 } }));
      const b = run.summary.buffering!;
      assert.equal(b.detected, true, JSON.stringify(b));
      assert.equal(run.summary.stalls.byCause!.prefill, 0);
      // 8 events per flush at ~7 ms per token: the first token waited about 7 × 7 ms
      assert.ok(b.inflationMs! > 25 && b.inflationMs! < 90, `inflation ${b.inflationMs}`);
    });
  });
});

test('a pass-through proxy is never flagged, and prefill stalls are still attributed through it', { timeout: 60_000 }, async () => {
  await withServer(costModel(MODEL), async (server) => {
    await withProxy({ mode: 'pass', target: server.url }, async (url) => {
      const run = await runWorkload({ url, api: 'openai-chat', model: server.model }, workload({ requests: 24, mode: { kind: 'closed', concurrency: 6 } }), { prompts: mixedPrompts(500, 6) });
      const b = run.summary.buffering!;
      assert.equal(b.detected, false, JSON.stringify(b));
      assert.match(b.evidence.join('\n'), /via: 1\.1 test-proxy/);
      assert.ok(run.requests.some((r) => r.intermediaries?.via === '1.1 test-proxy'));
      const s = score(run, server);
      assert.ok(s.truthStalls > 0);
      assert.ok(s.found / s.truthStalls >= 0.9, `found ${s.found} of ${s.truthStalls}\n${s.details.join('\n')}`);
      assert.match(formatRunTable(run), /Not buffered: the stream passes through/);
    });
  });
});
