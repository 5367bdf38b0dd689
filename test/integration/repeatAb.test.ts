// `run --repeat N` and `llm-profiler ab` against real step servers on 127.0.0.1 (a fixed cost per
// engine step, so the truth is known): repetitions kept with their own summaries and the same
// requests each time; an A/B whose blocks take turns, AB BA AB …, each side sent the same workload,
// the slower side called slower and the gate failing; the usage errors of two sides.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { abCommand } from '../../src/cli/abCommand';
import { defaultWorkload } from '../../src/engine/core/workload';
import type { RunFile } from '../../src/engine/core/types';
import { runRepeated } from '../../src/engine/run/segments';
import { formatRunTable } from '../../src/present/runText';
import { captureCli, runJobCommand } from '../support/cli';
import type { CliResult } from '../support/cli';
import { startStepServer } from '../support/stepServer';
import type { StepServer } from '../support/stepServer';

async function withStepServers<T>(options: readonly Parameters<typeof startStepServer>[0][], fn: (servers: StepServer[]) => Promise<T>): Promise<T> {
  const servers: StepServer[] = [];
  try {
    for (const o of options) servers.push(await startStepServer(o));
    return await fn(servers);
  } finally {
    await Promise.all(servers.map((s) => s.close()));
  }
}

/** `llm-profiler ab …argv` in this process. */
function runAb(argv: readonly string[], cwd: string, env: NodeJS.ProcessEnv = {}): Promise<CliResult> {
  return captureCli((io) => abCommand(argv, io), { env, cwd });
}

const readRun = (path: string): RunFile => JSON.parse(readFileSync(path, 'utf8')) as RunFile;

/** The seeds the server was sent, per measured request, in the order it received them. */
const seedsOf = (server: StepServer): number[] => server.log.map((l) => l.seed!).filter((s) => s !== undefined);

test('run --repeat 3: every repetition kept, its own summary, the same requests each time, the pooled summary over their summed time', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'llmp-repeat-'));
  try {
    await withStepServers([{ stepMs: 5, ttftMs: 10 }], async ([server]) => {
      const r = await runJobCommand('run', ['--url', server!.url, '--repeat', '3', '-n', '12', '-c', '2', '--max-tokens', '6', '--seed', '7', '--out', 'run.json'], { env: {}, cwd: dir });
      assert.equal(r.code, 0, r.stderr);
      const run = readRun(join(dir, 'run.json'));
      const reps = run.repeats!;
      assert.deepEqual(reps.map((x) => x.index), [0, 1, 2]);
      // each repetition's requests: 12, pointed at by requestIndexes, tagged with their repetition
      for (const rep of reps) {
        assert.equal(rep.requestIndexes.length, 12);
        assert.equal(rep.summary.completed, 12);
        for (const i of rep.requestIndexes) assert.equal(run.requests[i]!.repeat, rep.index);
        assert.ok(rep.durationS > 0);
      }
      assert.equal(reps.reduce((s, x) => s + x.summary.completed, 0), run.summary.completed);
      assert.equal(run.summary.completed, 36);
      // the warmup is sent once, before the first repetition, and belongs to none
      const warmups = run.requests.filter((q) => q.warmup);
      assert.equal(warmups.length, 1);
      assert.equal(warmups[0]!.repeat, undefined);
      // pooled: the duration is the repetitions' summed wall time, so throughput is tokens over it
      const summed = reps.reduce((s, x) => s + x.durationS, 0);
      assert.ok(Math.abs(run.summary.durationS - summed) < 1e-9, `${run.summary.durationS} vs ${summed}`);
      assert.ok(Math.abs(run.summary.outputTokensPerSecond - run.summary.totalOutputTokens / summed) < 1e-6);
      // the same workload each time: repetition r sends the seeds repetition 0 sent (as a rerun with --seed 7 would)
      const seeds = seedsOf(server!).slice(1);
      assert.equal(seeds.length, 36);
      const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
      const first = sorted(seeds.slice(0, 12));
      assert.deepEqual(first, Array.from({ length: 12 }, (_, k) => 7 + 1 + k));
      assert.deepEqual(sorted(seeds.slice(12, 24)), first);
      assert.deepEqual(sorted(seeds.slice(24, 36)), first);
      // a later repetition's request repeats the first repetition's, and is known to
      const later = run.requests[reps[2]!.requestIndexes[0]!]!;
      assert.equal(later.repeatOf, run.requests[reps[0]!.requestIndexes[0]!]!.index);
      // the table: the spread between repetitions beside the pooled percentiles
      assert.match(r.stdout, /Workload: +closed loop, concurrency 2; 3 repetitions of 12 requests, pooled below/);
      assert.match(r.stdout, /Between repetitions: 3 repetitions of 12 requests, lowest–highest of each repetition's own figure/);
      const spread = r.stdout.slice(r.stdout.indexOf('Between repetitions'));
      assert.match(spread, /Metric \(ms\) +p50 +p99/);
      const ttft = reps.map((x) => x.summary.ttftMs.p50!);
      const lo = Math.min(...ttft).toFixed(2);
      const hi = Math.max(...ttft).toFixed(2);
      assert.match(spread, new RegExp(`TTFT +${lo === hi ? lo : `${lo}–${hi}`} `));
      assert.match(spread, /TPOT +[\d.]+(–[\d.]+)? +[\d.]+(–[\d.]+)?\n/);
      assert.match(spread, /Output token throughput \(tok\/s\): +[\d.]+(–[\d.]+)?\n/);

      // --json: the summary, and each repetition's beside it
      const j = await runJobCommand('run', ['--url', server!.url, '--repeat', '2', '-n', '4', '--max-tokens', '4', '--json'], { env: {}, cwd: dir });
      assert.equal(j.code, 0, j.stderr);
      const json = JSON.parse(j.stdout) as { completed: number; repeats: { index: number; summary: { completed: number } }[] };
      assert.equal(json.completed, 8);
      assert.deepEqual(json.repeats.map((x) => [x.index, x.summary.completed]), [[0, 4], [1, 4]]);
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('run --repeat cancelled in its third repetition: the first two kept whole, the run marked cancelled, the spread over the whole ones', async () => {
  await withStepServers([{ stepMs: 5, ttftMs: 10 }], async ([server]) => {
    const ac = new AbortController();
    const run = await runRepeated(
      { url: server!.url, api: 'openai-chat', model: 'scripted-model' },
      defaultWorkload({ mode: { kind: 'closed', concurrency: 2 }, requests: 6, warmup: 0, maxTokens: 40 }),
      4,
      { signal: ac.signal, onRepetition: (r) => r === 2 && setTimeout(() => ac.abort(), 50) },
    );
    assert.equal(run.cancelled, true);
    assert.deepEqual(run.repeats!.map((x) => x.index), [0, 1, 2]);
    assert.deepEqual(run.repeats!.map((x) => x.summary.completed).slice(0, 2), [6, 6]);
    const third = run.requests.filter((q) => q.repeat === 2);
    assert.ok(third.length > 0 && third.some((q) => q.error?.kind === 'aborted'), 'the third repetition was cut short');
    assert.equal(run.requests.filter((q) => q.repeat === 3).length, 0);
    assert.match(formatRunTable(run), /Between repetitions: 2 repetitions of 6 requests, lowest–highest of each repetition's own figure \(the last, cut short, left out\)/);
  });
});

test('ab between steps of 10 and 15 ms: the blocks take turns, both sides send the same requests, B is slower on TPOT and the gate fails', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'llmp-ab-'));
  try {
    await withStepServers([{ stepMs: 10, ttftMs: 10 }, { stepMs: 15, ttftMs: 10 }], async ([fast, slow]) => {
      const r = await runAb(['--url', fast!.url, '--url', slow!.url, '-n', '60', '--blocks', '6', '-c', '3', '--max-tokens', '8', '--fail-on-regression', '5%', '--out-dir', '.'], dir);
      assert.equal(r.code, 1, r.stderr + r.stdout);
      assert.match(r.stdout, /TPOT p50 [\d.]+% slower, 95% CI/);
      assert.match(r.stdout, /FAILED/);
      assert.match(r.stderr, /A and B take turns: 6 blocks of 10 requests a side/);
      const a = readRun(join(dir, 'a.run.json'));
      const b = readRun(join(dir, 'b.run.json'));
      assert.equal(a.ab!.pairId, b.ab!.pairId);
      assert.deepEqual([a.ab!.side, a.ab!.otherId, b.ab!.side, b.ab!.otherId], ['A', b.id, 'B', a.id]);
      assert.deepEqual([a.ab!.blocks, a.ab!.blockRequests], [6, 10]);
      for (const run of [a, b]) {
        assert.deepEqual(run.repeats!.map((x) => [x.index, x.summary.completed]), [0, 1, 2, 3, 4, 5].map((i) => [i, 10]));
        for (const rep of run.repeats!) for (const i of rep.requestIndexes) assert.equal(run.requests[i]!.repeat, rep.index);
        assert.equal(run.summary.completed, 60);
      }
      // block by block, one side's requests all end before the other's begin, who goes first alternating
      const span = (run: RunFile, block: number) => {
        const rs = run.repeats![block]!.requestIndexes.map((i) => run.requests[i]!);
        return { from: Math.min(...rs.map((q) => q.sentAt)), to: Math.max(...rs.map((q) => q.sentAt + (q.e2eMs ?? 0))) };
      };
      const order: string[] = [];
      for (let block = 0; block < 6; block++) {
        const [sa, sb] = [span(a, block), span(b, block)];
        assert.ok(sa.to <= sb.from || sb.to <= sa.from, `block ${block}: A ${JSON.stringify(sa)} and B ${JSON.stringify(sb)} overlap`);
        order.push(sa.from < sb.from ? 'AB' : 'BA');
        if (block > 0) assert.ok(sa.from > span(b, block - 1).from && sb.from > span(a, block - 1).from, `block ${block} starts after block ${block - 1} of the other side`);
      }
      assert.deepEqual(order, ['AB', 'BA', 'AB', 'BA', 'AB', 'BA']);
      // the same workload on both sides: the same seeds (warmup included), each server only its side's
      assert.equal(seedsOf(fast!).length, 61);
      assert.deepEqual([...seedsOf(fast!)].sort((x, y) => x - y), [...seedsOf(slow!)].sort((x, y) => x - y));
      assert.equal(seedsOf(slow!).length, 61);
      // the truth: B's TPOT is 15 ms a token against A's 10
      const tpot = (run: RunFile) => run.summary.tpotMs.p50!;
      assert.ok(tpot(b) / tpot(a) > 1.3, `TPOT p50 A ${tpot(a)} B ${tpot(b)}`);
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('ab with one URL and two models: each side sends its own model', async () => {
  await withStepServers([{ stepMs: 5, ttftMs: 5, model: 'small-model', models: ['small-model', 'large-model'] }], async ([server]) => {
    const r = await runAb(['--url', server!.url, '--model', 'small-model', '--model', 'large-model', '-n', '8', '--blocks', '2', '--max-tokens', '4', '--warmup', '1'], tmpdir());
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /A \(http:\/\/127\.0\.0\.1:\d+, small-model\)/);
    assert.match(r.stdout, /B \(http:\/\/127\.0\.0\.1:\d+, large-model\)/);
    assert.match(r.stderr, /A: http:\/\/127\.0\.0\.1:\d+ \(openai-chat, detected, small-model\)\n.*B: http:\/\/127\.0\.0\.1:\d+ \(openai-chat, detected, large-model\)/);
    // in the order the server got them: A's warmup, B's warmup, block 0 A then B, block 1 B then A
    const models = server!.log.map((l) => l.body.model as string);
    const runs: string[] = [];
    for (const m of models) if (runs[runs.length - 1]?.split(' ')[0] !== m) runs.push(`${m} 1`);
    else runs[runs.length - 1] = `${m} ${Number(runs[runs.length - 1]!.split(' ')[1]) + 1}`;
    assert.deepEqual(runs, ['small-model 1', 'large-model 1', 'small-model 4', 'large-model 8', 'small-model 4']);
  });
});

test('ab usage errors: no --url, three URLs, two sides the same, requests that do not split into the blocks', async () => {
  const cwd = tmpdir();
  const cases: [string[], RegExp][] = [
    [['--model', 'a', '--model', 'b'], /ab: needs --url/],
    [['--url', 'http://127.0.0.1:9', '--url', 'http://127.0.0.1:10', '--url', 'http://127.0.0.1:11'], /--url given more than twice/],
    [['--url', 'http://127.0.0.1:9'], /the two sides are the same/],
    [['--url', 'http://127.0.0.1:9', '--url', 'http://127.0.0.1:9/', '--model', 'm'], /the two sides are the same/],
    [['--url', 'http://127.0.0.1:9', '--model', 'm1', '--model', 'm2', '-n', '105'], /--requests 105 \(per side\) does not split evenly into 10 blocks: give a multiple of 10 \(100 or 110\)/],
    [['--url', 'http://127.0.0.1:9', '--model', 'm1', '--model', 'm2', '-n', '20', '--blocks', '5', '-c', '8'], /5 blocks of 4 requests are fewer than --concurrency 8/],
    [['--url', 'http://127.0.0.1:9', '--url', 'http://127.0.0.1:10', '--fail-on-regression', 'ttft.p42=5%'], /fail-on-regression/],
  ];
  for (const [argv, re] of cases) {
    const r = await runAb(argv, cwd);
    assert.equal(r.code, 2, `${argv.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, re, argv.join(' '));
    assert.equal(r.stdout, '');
  }
});
