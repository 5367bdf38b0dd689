// Sweeps and the prefill dial against costModelServer: a real streaming server whose every step
// costs exactly base + k·B ms, so the fitted base and k can be checked against the truth.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseRunFile } from '../../src/engine/files/runFile';
import { runPrefillDial, runSweep } from '../../src/engine/run/sweep';
import { dialFigures } from '../../src/engine/analysis/fit';
import { defaultWorkload } from '../../src/engine/core/workload';
import { startCostModelServer } from '../support/costModelServer';
import type { CostModelServer } from '../support/costModelServer';
import type { Progress } from '../../src/engine/core/types';

const root = join(__dirname, '../..');

test('a concurrency sweep recovers base and k within 5% and names the operating point', { timeout: 120_000 }, async () => {
  // base large against the jitter of a loaded machine (a few tenths of a ms on a request's TPOT)
  const server = await startCostModelServer({ baseMs: 20, kMs: 3 });
  const progress: Progress[] = [];
  const live: number[] = [];
  const pointsSeen: string[] = [];
  try {
    const run = await runSweep(
      { url: server.url, api: 'openai-chat', model: server.model },
      {
        dimension: 'concurrency',
        values: [1, 2, 4, 8],
        workload: defaultWorkload({ requests: 8, warmup: 0, maxTokens: 48, prompt: { kind: 'synthetic', tokens: 16, sharedPrefix: false }, slo: { tpotMs: 38 } }),
      },
      {
        onProgress: (p) => progress.push(p),
        onRecord: (r) => live.push(r.index),
        onPoint: (p, i) => pointsSeen.push(`${i}:${p.label}`),
      },
    );
    // live progress counts over the whole sweep; live records carry their index in the final file
    assert.deepEqual(pointsSeen, ['0:c=1', '1:c=2', '2:c=4', '3:c=8']);
    assert.deepEqual([...live].sort((a, b) => a - b), [...Array(32).keys()]);
    assert.ok(progress.every((p) => p.runId === run.id && p.total === 32));
    assert.equal(progress.at(-1)!.finished, 32);
    assert.ok(progress.every((p, i) => i === 0 || p.finished >= progress[i - 1]!.finished), 'finished never goes back');
    const sw = run.sweep!;
    assert.equal(sw.dimension, 'concurrency');
    assert.deepEqual(sw.points.map((p) => p.label), ['c=1', 'c=2', 'c=4', 'c=8']);
    assert.equal(run.requests.length, 32);
    assert.deepEqual(run.requests.map((r) => r.index), [...Array(32).keys()]);
    assert.deepEqual(sw.points[2]!.requestIndexes, [...Array(8).keys()].map((i) => 16 + i));
    for (const p of sw.points) assert.equal(p.summary.failed, 0);
    assert.equal(sw.fitX, 'meanBatch');
    const fit = sw.fit!;
    assert.ok(Math.abs(fit.baseMs - 20) / 20 < 0.05, `base ${fit.baseMs}`);
    assert.ok(Math.abs(fit.kMs - 3) / 3 < 0.05, `k ${fit.kMs}`);
    assert.ok(Math.abs(fit.ceilingTokensPerSecond - 1000 / 3) / (1000 / 3) < 0.06);
    assert.ok(fit.r2 > 0.98, `R² ${fit.r2}`);
    // the measured batch is close to, and never above, the concurrency
    for (const p of sw.points) assert.ok(p.meanBatch! <= p.concurrency! + 0.01 && p.meanBatch! > p.concurrency! * 0.7, `${p.label}: B ${p.meanBatch}`);
    // TPOT p99 at c=4 is ≈ 32 ms, at c=8 ≈ 44 ms: the 38 ms SLO puts the operating point at c=4
    assert.equal(sw.operatingPoint?.label, 'c=4');
    assert.equal(sw.maxThroughputPoint?.label, 'c=8');
    assert.ok(sw.sloBatch! > 5.4 && sw.sloBatch! < 6.6, `sloBatch ${sw.sloBatch}`);
    assert.ok(sw.residuals!.length === 4);
    // the server's own step log agrees with the model
    assert.ok(server.steps.every((s) => Math.abs(s.costMs - (20 + 3 * s.batch)) < 1e-9));
  } finally {
    await server.close();
  }
});

test('a sweep stops early when the endpoint saturates (throughput flat, latency climbing)', { timeout: 120_000 }, async () => {
  // two slots: beyond concurrency 2 requests only queue
  const server = await startCostModelServer({ baseMs: 8, kMs: 1, parallel: 2 });
  try {
    const run = await runSweep(
      { url: server.url, api: 'openai-chat' },
      { dimension: 'concurrency', values: [1, 2, 4, 8, 16], workload: defaultWorkload({ requests: 8, warmup: 0, maxTokens: 16, prompt: { kind: 'synthetic', tokens: 8, sharedPrefix: false } }) },
    );
    const sw = run.sweep!;
    assert.ok(sw.stoppedEarly, 'stopped early');
    // c=4 is the first point past the two slots; when the gaps between requests at c=2 cost more than
    // 5% of its throughput, c=4 still shows a small gain and the stop comes one point later
    assert.ok(['c=4', 'c=8'].includes(sw.stoppedEarly.afterLabel), sw.stoppedEarly.afterLabel);
    assert.match(sw.stoppedEarly.reason, /throughput .* while e2e p50 rose/);
    assert.ok(sw.points.length === 3 || sw.points.length === 4);
    assert.equal(sw.points.at(-1)!.label, sw.stoppedEarly.afterLabel);
    // the measured batch never exceeds the server's two slots
    assert.ok(sw.points.every((p) => p.meanBatch! <= 2.01));
  } finally {
    await server.close();
  }
});

test('a rate sweep runs open loop, one point per rate, with the fit over the measured batch', { timeout: 120_000 }, async () => {
  const server = await startCostModelServer({ baseMs: 10, kMs: 2 });
  try {
    const run = await runSweep(
      { url: server.url, api: 'openai-chat' },
      { dimension: 'rate', values: [4, 16, 64], workload: defaultWorkload({ requests: 8, warmup: 0, maxTokens: 12, prompt: { kind: 'synthetic', tokens: 8, sharedPrefix: false } }), stopOnSaturation: false },
    );
    const sw = run.sweep!;
    assert.deepEqual(sw.points.map((p) => [p.label, p.rate, p.concurrency]), [['4/s', 4, undefined], ['16/s', 16, undefined], ['64/s', 64, undefined]]);
    assert.deepEqual(sw.points.map((p) => p.summary.completed), [8, 8, 8]);
    // more arrivals per second, more streams sharing each step
    assert.ok(sw.points[2]!.meanBatch! > sw.points[0]!.meanBatch!, sw.points.map((p) => p.meanBatch).join());
    assert.equal(sw.fitX, 'meanBatch');
    assert.deepEqual(run.workload.mode, { kind: 'open', rate: 4, burstiness: 1 }, "the file's workload is the first point's");
  } finally {
    await server.close();
  }
});

test('a prompt-length sweep gives the prefill rate', { timeout: 120_000 }, async () => {
  // 0.05 ms per prompt token: 20000 tokens/s of prefill
  const server = await startCostModelServer({ baseMs: 5, kMs: 1, prefillMsPerToken: 0.05 });
  try {
    const run = await runSweep(
      { url: server.url, api: 'openai-chat' },
      { dimension: 'promptTokens', values: [200, 1000, 3000], workload: defaultWorkload({ requests: 4, warmup: 0, maxTokens: 4 }) },
    );
    const pf = run.sweep!.prefillFit!;
    // the server counts words: each prompt's N, and the nonce that keeps a cold run's prompt out of the prefix cache
    assert.deepEqual(run.sweep!.points.map((p) => p.measuredPromptTokens), [201, 1001, 3001]);
    assert.ok(Math.abs(pf.bMsPerToken - 0.05) / 0.05 < 0.1, `b ${pf.bMsPerToken}`);
    assert.ok(Math.abs(pf.prefillTokensPerSecond! - 20000) / 20000 < 0.1);
  } finally {
    await server.close();
  }
});

test('the prefill dial: chunked prefill removes the stalls and delays the long prompts', { timeout: 120_000 }, async () => {
  const servers: CostModelServer[] = [];
  try {
    const run = await runPrefillDial(
      {
        batchSizes: [32, 8192],
        decodeStreams: 3,
        shortPromptTokens: 8,
        shortMaxTokens: 40,
        longPromptTokens: 1500,
        longMaxTokens: 2,
        longRate: 1,
        durationS: 3,
        workload: defaultWorkload({ warmup: 0 }),
      },
      {
        startServer: async (batchSize) => {
          // 0.1 ms per prompt token: a 1500-token prompt is a 150 ms step unchunked, 47 steps of ~16 ms chunked
          const s = await startCostModelServer({ baseMs: 10, kMs: 1, prefillMsPerToken: 0.1, prefillChunk: batchSize });
          servers.push(s);
          return { endpoint: { url: s.url, api: 'openai-chat' }, stop: () => s.close() };
        },
      },
    );
    const dial = run.prefillDial!;
    assert.equal(run.sweep, undefined);
    assert.deepEqual(dial.configs.map((c) => c.batchSize), [32, 8192]);
    const [chunked, whole] = dial.configs.map(dialFigures);
    assert.ok(chunked!.longCount >= 1 && whole!.longCount >= 1);
    // every request of every configuration is in the file, indexed in order
    assert.equal(run.requests.length, dial.configs.reduce((a, c) => a + c.decode.requestIndexes.length + c.long.requestIndexes.length, 0));
    assert.ok(whole!.stallCount >= 1, 'an unchunked long prefill stalls the decodes');
    assert.ok(chunked!.stallTotalMs < whole!.stallTotalMs, `stall time ${chunked!.stallTotalMs} vs ${whole!.stallTotalMs}`);
    assert.ok(chunked!.tpotP99Ms < whole!.tpotP99Ms, `TPOT p99 ${chunked!.tpotP99Ms} vs ${whole!.tpotP99Ms}`);
    assert.ok(chunked!.longTtftP50Ms > whole!.longTtftP50Ms * 1.5, `long TTFT ${chunked!.longTtftP50Ms} vs ${whole!.longTtftP50Ms}`);
  } finally {
    for (const s of servers) await s.close();
  }
});

function cli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    // the built CLI as a user runs it (`npm test` builds first); from source when it is not built
    const entry = existsSync(join(root, 'dist/cli.js')) ? [join(root, 'dist/cli.js')] : ['--import', 'tsx', join(root, 'src/cli/main.ts')];
    const child = spawn(process.execPath, [...entry, ...args], { cwd: root });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

test('the sweep command writes one run file with sweep.fit named as the issue gives it, and exit codes', { timeout: 120_000 }, async () => {
  const server = await startCostModelServer({ baseMs: 8, kMs: 2 });
  const dir = mkdtempSync(join(tmpdir(), 'sweep-cli-'));
  try {
    const out = join(dir, 'sweep.json');
    const r = await cli(['sweep', '--url', server.url, '--api', 'openai-chat', '--concurrency', '1,2,4', '--requests-per-point', '6', '--max-tokens', '16', '--prompt-tokens', '8', '--slo', 'tpot=14', '--out', out]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /Fit: TPOT\(B\) ≈ .* ms \+ .* ms × B/);
    // TPOT ≈ 10, 12, 16 ms at c = 1, 2, 4: the 14 ms SLO puts the operating point at c=2
    assert.match(r.stdout, /Operating point \(interactive\): c=2/);
    const run = JSON.parse(readFileSync(out, 'utf8'));
    parseRunFile(readFileSync(out, 'utf8'), out); // a valid run file for every reader
    assert.equal(run.format, 'llm-profiler.run');
    assert.equal(run.sweep.dimension, 'concurrency');
    assert.deepEqual(Object.keys(run.sweep.fit).sort(), ['baseMs', 'ceilingTokensPerSecond', 'kMs', 'r2']);
    assert.equal(run.sweep.points.length, 3);
    // one warmup per point by default, and one more at the first point: sizing the 8-token prompts (this server counts the nonce as a token)
    assert.equal(run.requests.length, 3 * 7 + 1, 'one warmup per point by default, one added to size the prompts');

    // --fail-on-slo: an SLO no point can meet → 3
    const missed = await cli(['sweep', '--url', server.url, '--api', 'openai-chat', '--concurrency', '1,2', '--requests-per-point', '2', '--max-tokens', '8', '--prompt-tokens', '8', '--warmup', '0', '--slo', 'tpot=1', '--fail-on-slo']);
    assert.equal(missed.code, 3, missed.stderr);
    assert.match(missed.stderr, /SLO missed/);
    // SLOs where the prompts live: a prompt file's front matter feeds goodput and --fail-on-slo
    const promptFile = join(dir, 'ask.prompt.md');
    writeFileSync(promptFile, '---\nllmProfiler:\n  slo: { tpot: 1 }\n---\nSay hello to the world in five words\n');
    const fmOut = join(dir, 'fm.json');
    const fm = await cli(['sweep', '--url', server.url, '--api', 'openai-chat', '--concurrency', '1,2', '--requests-per-point', '2', '--max-tokens', '8', '--warmup', '0', '--prompt-file', promptFile, '--fail-on-slo', '--out', fmOut]);
    assert.equal(fm.code, 3, fm.stderr);
    const fmRun = parseRunFile(readFileSync(fmOut, 'utf8'), fmOut);
    assert.deepEqual(fmRun.sweep!.slo, { tpotMs: 1 });
    assert.deepEqual(fmRun.sweep!.points[0]!.summary.sloMissed, ['tpotMs']);
    assert.equal(fmRun.sweep!.points[0]!.summary.goodput, 0);
    // --slo on the command line wins over the front matter
    const over = await cli(['sweep', '--url', server.url, '--api', 'openai-chat', '--concurrency', '1,2', '--requests-per-point', '2', '--max-tokens', '8', '--warmup', '0', '--prompt-file', promptFile, '--slo', 'tpot=1000', '--fail-on-slo']);
    assert.equal(over.code, 0, over.stderr);
    // a bad flag: 2, naming it
    const bad = await cli(['sweep', '--url', server.url, '--concurrency', '1,x']);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--concurrency/);
    const unknown = await cli(['sweep', '--url', server.url, '--bogus', '3']);
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /--bogus/);
    const two = await cli(['sweep', '--url', server.url, '--concurrency', '1,2', '--prompt-tokens', '128,512']);
    assert.equal(two.code, 2);
    assert.match(two.stderr, /one dimension at a time/);
  } finally {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('sweep progress counts each request once, failures included, and never passes the total', { timeout: 60_000 }, async () => {
  const { startScriptedServer } = await import('../support/scriptedServer');
  // every third request fails with a 500: the first point's failures must not be counted again later
  const server = await startScriptedServer({ tokens: 4, ttftMs: 2, itlMs: 1, fault: (info) => (info.seq % 3 === 2 ? { kind: 'http', status: 500 } : undefined) });
  const progress: Progress[] = [];
  try {
    const run = await runSweep(
      { url: server.url, api: 'openai-chat', model: 'scripted-model' },
      { dimension: 'concurrency', values: [1, 2, 4], workload: defaultWorkload({ requests: 6, warmup: 0, maxTokens: 4 }), stopOnSaturation: false },
      { onProgress: (p) => progress.push(p) },
    );
    const failed = run.sweep!.points.reduce((n, p) => n + p.summary.failed, 0);
    assert.ok(failed >= 3, `some requests failed (${failed})`);
    const last = progress.at(-1)!;
    assert.deepEqual([last.finished, last.succeeded, last.failed, last.total], [18, 18 - failed, failed, 18]);
    for (const p of progress) {
      assert.equal(p.finished, p.succeeded + p.failed);
      assert.ok(p.finished <= p.total!, `finished ${p.finished} ≤ total ${p.total}`);
    }
    assert.ok(progress.every((p, i) => i === 0 || p.finished >= progress[i - 1]!.finished), 'finished never goes back');
  } finally {
    await server.close();
  }
});
