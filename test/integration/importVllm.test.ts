// vLLM's own benchmark client (vendored in test/fixtures/vllm-bench/, run with Debian's python)
// against a real streaming server on 127.0.0.1, its result imported through the CLI
// (`node dist/cli.js import`), and our figures held against the table the client printed.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { readRunFile } from '../../src/engine/files/runFile';
import type { Stats } from '../../src/engine/core/types';
import { buildCli, ROOT, runCliProcess } from '../support/cli';
import { startCostModelServer } from '../support/costModelServer';
import type { CostModelServer } from '../support/costModelServer';

const PYTHON = '/usr/bin/python3';
const CLIENT = join(ROOT, 'test/fixtures/vllm-bench/bench_serve.py');

/** Runs the client to its end (asynchronously: the server answers in this process). */
function runClient(args: readonly string[], cwd: string): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(PYTHON, [CLIENT, ...args], { cwd, env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (b: Buffer) => (out += b.toString()));
    child.stderr.on('data', (b: Buffer) => (out += b.toString()));
    child.on('error', reject);
    const timer = setTimeout(() => child.kill('SIGKILL'), 40_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, out });
    });
  });
}

/** "Mean TTFT (ms):   12.34" from the client's table. */
function printed(out: string, word: string, metric: string): string {
  const m = new RegExp(`^${word} ${metric} \\(ms\\):\\s+([\\d.]+)`, 'm').exec(out);
  assert.ok(m, `the client printed "${word} ${metric} (ms)":\n${out}`);
  return m[1]!;
}

describe('vLLM bench serve, live, imported through the CLI', () => {
  let server: CostModelServer;
  let dir: string;

  before(async () => {
    const deps = spawnSync(PYTHON, ['-c', 'import aiohttp, numpy, tqdm'], { encoding: 'utf8' });
    if (deps.status !== 0) {
      throw new Error(
        `${PYTHON} cannot import aiohttp, numpy and tqdm, which vLLM's benchmark client needs: run .ci/setup-system ` +
          `(it installs python3-aiohttp python3-numpy python3-tqdm). ${(deps.stderr || deps.error?.message || '').trim().split('\n').pop() ?? ''}`,
      );
    }
    buildCli();
    dir = mkdtempSync(join(tmpdir(), 'import-vllm-'));
    server = await startCostModelServer({ baseMs: 8, kMs: 2, prefillMsPerToken: 0.5, parallel: 4, model: 'cost-model' });
  });
  after(async () => {
    await server?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('12 requests at --max-concurrency 3: our TTFT, TPOT, ITL and E2E equal the mean, median, p90 and p99 vLLM printed', async () => {
    const client = await runClient(
      [
        '--base-url', server.url, '--model', 'cost-model', '--dataset-name', 'random', '--random-input-len', '16', '--random-output-len', '12',
        '--num-prompts', '12', '--max-concurrency', '3', '--seed', '7', '--temperature', '0', '--percentile-metrics', 'ttft,tpot,itl,e2el',
        '--metric-percentiles', '50,90,99', '--disable-tqdm', '--save-result', '--save-detailed', '--result-filename', 'result.json',
      ],
      dir,
    );
    assert.equal(client.code, 0, client.out);
    assert.match(client.out, /^Successful requests: +12 *$/m);
    assert.equal(server.requests, 12, 'the 12 (this client skips its initial test request unless --ready-check-timeout-sec is set)');

    const r = await runCliProcess(['import', join(dir, 'result.json'), '--out', join(dir, 'run.json'), '--percentiles', '50,90,99']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^Imported from vLLM: .*result\.json$/m);
    assert.match(r.stdout, /Workload: +closed loop, concurrency 3/);
    assert.match(r.stdout, /Successful requests: +12$/m);

    const run = await readRunFile(join(dir, 'run.json'));
    assert.equal(run.requests.length, 12);
    assert.equal(run.importedFrom?.startTimes, 'relative');
    const metrics: readonly [string, Stats][] = [['TTFT', run.summary.ttftMs], ['TPOT', run.summary.tpotMs], ['ITL', run.summary.itlMs], ['E2EL', run.summary.e2eMs]];
    for (const [name, st] of metrics) {
      assert.equal(st.mean.toFixed(2), printed(client.out, 'Mean', name), `mean ${name}`);
      assert.equal(st.p50!.toFixed(2), printed(client.out, 'Median', name), `median ${name}`);
      assert.equal(st.p90!.toFixed(2), printed(client.out, 'P90', name), `p90 ${name}`);
      assert.equal(st.p99!.toFixed(2), printed(client.out, 'P99', name), `p99 ${name}`);
    }
    // vLLM's gaps, every one: it counts each chunk with choices, the finish chunk (empty text) too,
    // so a request of 12 tokens from this server has 13 chunks and 12 gaps
    const saved = JSON.parse(readFileSync(join(dir, 'result.json'), 'utf8')) as { itls: number[][] };
    assert.equal(run.summary.itlMs.count, saved.itls.flat().length);
    assert.equal(run.summary.itlMs.count, 12 * 12);
    // the cost model's steps are ≥ baseMs + kMs: no gap is shorter than one step, give or take the timer
    assert.ok(run.summary.itlMs.p50! >= 8, `ITL p50 ${run.summary.itlMs.p50}`);
  });
});
