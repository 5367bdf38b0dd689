// A large real-sized vLLM result (issue 27, item 6): 300 000 requests, as `vllm bench serve
// --save-result --save-detailed` writes them, imported through `llm-profiler import --out` (in
// process) and the run file read back. Math.min(...start_times) overflowed the stack at about
// 130 000 requests, so such a result could not be imported at all. Time and memory are printed as
// diagnostics (never asserted beyond a generous bound: the machine is shared).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { after, before, it } from 'node:test';
import { importCommand } from '../../src/cli/importCommand';
import { readRunFile } from '../../src/engine/files/runFile';

const REQUESTS = 300_000;
/** Output tokens per request: 15 inter-token gaps each, 4.5 million in all. */
const TOKENS = 16;

let dir: string;
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'import-large-'));
});
after(() => rmSync(dir, { recursive: true, force: true }));

/** A `vllm bench serve` result of n requests (its keys and layout, values from a fixed generator). */
function vllmResult(n: number): string {
  let seed = 1;
  const rnd = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  const ttfts: number[] = [];
  const itls: number[][] = [];
  const latencies: number[] = [];
  const startTimes: number[] = [];
  for (let i = 0; i < n; i++) {
    const ttft = 0.05 + rnd() * 0.1;
    const gaps = Array.from({ length: TOKENS - 1 }, () => 0.01 + rnd() * 0.005);
    ttfts.push(ttft);
    itls.push(gaps);
    latencies.push(gaps.reduce((a, b) => a + b, ttft));
    startTimes.push(5000 + i * 0.004);
  }
  return JSON.stringify({
    date: '20251204-161321', endpoint_type: 'openai-chat', backend: 'openai-chat', label: null, model_id: 'synthetic', tokenizer_id: 'synthetic',
    num_prompts: n, request_rate: 'inf', burstiness: 1.0, max_concurrency: 256, duration: n * 0.004 + 0.3, completed: n, failed: 0,
    input_lens: Array(n).fill(8), output_lens: Array(n).fill(TOKENS), ttfts, itls, latencies, start_times: startTimes, errors: Array(n).fill(''),
    generated_texts: Array(n).fill(' word'.repeat(TOKENS)),
  });
}

it(`imports a vLLM result of ${REQUESTS} requests, and its run file reads back`, { timeout: 120_000 }, async (t) => {
  const file = join(dir, 'large.json');
  writeFileSync(file, vllmResult(REQUESTS));
  const out = new PassThrough();
  const err = new PassThrough();
  let stderr = '';
  out.resume();
  err.on('data', (b: Buffer) => (stderr += b.toString()));
  global.gc?.();
  const rss0 = process.memoryUsage().rss;
  let peak = rss0;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 25);
  const t0 = performance.now();
  const code = await importCommand(['large.json', '--out', 'large.run.json'], { stdout: out, stderr: err, env: {}, cwd: dir });
  const t1 = performance.now();
  const run = await readRunFile(join(dir, 'large.run.json'));
  const t2 = performance.now();
  clearInterval(sampler);
  assert.equal(code, 0, stderr);
  assert.equal(run.requests.length, REQUESTS);
  assert.equal(run.importedFrom?.startTimes, 'relative');
  assert.equal(run.summary.completed, REQUESTS);
  assert.equal(run.summary.itlMs.count, REQUESTS * (TOKENS - 1));
  const mb = (b: number) => Math.round(b / 2 ** 20);
  t.diagnostic(
    `${REQUESTS} requests, result ${mb(statSync(file).size)} MB: import, print and write the run (${mb(statSync(join(dir, 'large.run.json')).size)} MB) ` +
      `${((t1 - t0) / 1000).toFixed(1)} s, read it back ${((t2 - t1) / 1000).toFixed(1)} s; RSS ${mb(rss0)} MB before, ${mb(peak)} MB at the most`,
  );
  assert.ok(t1 - t0 < 90_000, `imported in ${Math.round((t1 - t0) / 1000)} s`);
});
