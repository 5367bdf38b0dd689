// vLLM results (test/fixtures/vllm/, written by vLLM's own client: see its README) as runs: our
// statistics, recomputed from the per-request lists by the engine, against the figures vLLM saved
// and printed for the same requests; the mapping of each field; the shapes and failures.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ImportError } from '../../src/engine/files/importers/common';
import { fromVllm, isVllm } from '../../src/engine/files/importers/vllm';
import type { RunFile, Stats, SweepPoint } from '../../src/engine/core/types';

const DIR = join(__dirname, '../fixtures/vllm');
const FIXTURES = ['burst', 'concurrency2', 'rate4'] as const;
type Doc = Record<string, unknown> & { ttfts: number[]; itls: number[][]; output_lens: number[]; input_lens: number[]; errors: string[] };
const load = (name: string): Doc => JSON.parse(readFileSync(join(DIR, `${name}.json`), 'utf8')) as Doc;
const metricsOf = (run: RunFile): readonly [string, string, Stats][] => [
  ['ttft', 'TTFT', run.summary.ttftMs],
  ['tpot', 'TPOT', run.summary.tpotMs],
  ['itl', 'ITL', run.summary.itlMs],
  ['e2el', 'E2EL', run.summary.e2eMs],
];

/** Equal to within `rel` of the larger (float sums in another order differ in the last bits). */
function close(actual: number, expected: number, what: string, rel = 1e-9): void {
  assert.ok(Math.abs(actual - expected) <= rel * Math.max(1, Math.abs(expected)), `${what}: ${actual} ≠ ${expected}`);
}

describe('vLLM results: our statistics equal vLLM\'s', () => {
  for (const name of FIXTURES) {
    it(`${name}.json: mean, median, p90, p95, p99 and std of TTFT, TPOT, ITL and E2E as vLLM saved them`, () => {
      const doc = load(name);
      const run = fromVllm(doc, `${name}.json`);
      for (const [key, , st] of metricsOf(run)) {
        close(st.mean, doc[`mean_${key}_ms`] as number, `${name} mean ${key}`);
        close(st.std, doc[`std_${key}_ms`] as number, `${name} std ${key}`);
        close(st.p50!, doc[`median_${key}_ms`] as number, `${name} median ${key}`);
        for (const p of [50, 90, 95, 99]) close(st[`p${p}`]!, doc[`p${p}_${key}_ms`] as number, `${name} p${p} ${key}`);
      }
      assert.equal(run.summary.completed, doc.completed);
      assert.equal(run.summary.failed, doc.failed);
      assert.equal(run.summary.totalInputTokens, doc.total_input_tokens);
      assert.equal(run.summary.totalOutputTokens, doc.total_output_tokens);
      close(run.summary.durationS, doc.duration as number, 'duration');
      close(run.summary.outputTokensPerSecond, doc.output_throughput as number, 'output throughput');
      close(run.summary.requestsPerSecond, doc.request_throughput as number, 'request throughput');
      assert.equal(run.importedFrom?.reported?.mean_ttft_ms, doc.mean_ttft_ms, "vLLM's figures are kept under its names");
    });

    it(`${name}.json: the table vLLM printed (2 decimals) is ours rounded`, () => {
      const printed = readFileSync(join(DIR, `${name}.stdout.txt`), 'utf8');
      const run = fromVllm(load(name), `${name}.json`);
      let seen = 0;
      for (const [, label, st] of metricsOf(run)) {
        for (const [word, value] of [['Mean', st.mean], ['Median', st.p50!], ['P90', st.p90!], ['P99', st.p99!]] as const) {
          const m = new RegExp(`^${word} ${label} \\(ms\\):\\s+([\\d.]+)`, 'm').exec(printed);
          assert.ok(m, `${word} ${label} printed`);
          assert.equal(value.toFixed(2), m[1], `${name}: ${word} ${label}`);
          seen++;
        }
      }
      assert.equal(seen, 16);
    });
  }
});

describe('vLLM results: the mapping', () => {
  it('each request: TTFT, chunk times as TTFT + the running sum of vLLM\'s ITLs, E2E from latencies, tokens, send times from start_times', () => {
    const doc = load('concurrency2') as Doc & { latencies: number[]; start_times: number[]; queue_times: number[] };
    const run = fromVllm(doc, 'concurrency2.json');
    assert.equal(run.requests.length, doc.num_prompts);
    const first = Math.min(...doc.start_times);
    const t0 = run.requests[0]!.sentAt - (doc.start_times[0]! - first) * 1000;
    run.requests.forEach((r, i) => {
      close(r.ttftMs!, doc.ttfts[i]! * 1000, `ttft ${i}`);
      assert.equal(r.chunkTimesMs.length, doc.itls[i]!.length + 1);
      doc.itls[i]!.forEach((g, k) => close(r.chunkTimesMs[k + 1]! - r.chunkTimesMs[k]!, g * 1000, `gap ${i}.${k}`, 1e-6));
      close(r.e2eMs!, doc.latencies[i]! * 1000, `e2e ${i}`);
      close(r.e2eMs!, r.chunkTimesMs.at(-1)!, `vLLM's latency is its last token chunk (${i})`, 1e-6);
      assert.equal(r.outputTokens, doc.output_lens[i]);
      assert.equal(r.promptTokens, doc.input_lens[i]);
      close(r.sentAt - t0, (doc.start_times[i]! - first) * 1000, `sent ${i}`, 1e-3); // epoch ms hold ~0.2 µs
      close(r.sentAt - r.scheduledAt, doc.queue_times[i]! * 1000, `queued ${i}`, 1e-3);
      assert.equal(r.error, undefined);
    });
    assert.deepEqual(run.workload.mode, { kind: 'closed', concurrency: 2 });
    assert.equal(run.importedFrom?.startTimes, 'relative');
    assert.equal(run.endpoint.model, 'synthetic-small');
    assert.equal(run.endpoint.api, 'openai-completions');
    // --max-concurrency 2 queues the rest in the client: most requests waited
    assert.ok(run.requests.filter((r) => r.sentAt - r.scheduledAt > 50).length > 12);
  });

  it('the workload: all at once is a closed loop of every request; --request-rate an open loop with vLLM\'s burstiness', () => {
    assert.deepEqual(fromVllm(load('burst'), 'b').workload.mode, { kind: 'closed', concurrency: 24 });
    assert.deepEqual(fromVllm(load('rate4'), 'r').workload.mode, { kind: 'open', rate: 4, burstiness: 1 });
  });

  it('the run starts at vLLM\'s date (written after the run) less its duration; the date has no zone and is read as UTC', () => {
    const doc = load('burst');
    const run = fromVllm(doc, 'b');
    const m = /^(\d{4})(\d{2})(\d{2})-(\d{2})(\d{2})(\d{2})$/.exec(doc.date as string)!;
    const saved = Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!);
    assert.equal(Date.parse(run.startedAt), Math.floor(saved - (doc.duration as number) * 1000));
    assert.ok(run.importedFrom?.missing?.some((x) => x.includes('time zone')));
  });

  it('failed requests (an error text, no first token) become records with an error; the rest keep vLLM\'s figures', () => {
    const doc = load('burst');
    // as endpoint_request_func.py leaves them: ttft 0, no gaps, and the traceback or the HTTP reason; output_lens 0 (calculate_metrics)
    for (const [i, error] of [
      [3, 'Traceback (most recent call last):\n  File "x.py", line 1\naiohttp.client_exceptions.ServerDisconnectedError: Server disconnected\n'],
      [7, 'Internal Server Error'],
    ] as const) {
      doc.ttfts[i] = 0;
      doc.itls[i] = [];
      doc.output_lens[i] = 0;
      doc.errors[i] = error;
    }
    const run = fromVllm(doc, 'b');
    assert.equal(run.summary.failed, 2);
    assert.equal(run.summary.completed, 22);
    assert.deepEqual(run.requests[3]!.error, { kind: 'reset', message: 'aiohttp.client_exceptions.ServerDisconnectedError: Server disconnected' });
    assert.deepEqual(run.requests[7]!.error, { kind: 'http', message: 'Internal Server Error' });
    assert.equal(run.requests[3]!.ttftMs, undefined);
    assert.equal(run.summary.ttftMs.count, 22);
  });

  it("benchmark_serving.py's shape (no latencies, start times or queue times): sent at the run's start, said so; TTFT, TPOT, ITL still vLLM's", () => {
    const doc = load('rate4');
    for (const k of ['latencies', 'start_times', 'queue_times', 'failed', 'endpoint_type', 'label', 'max_output_tokens_per_s', 'max_concurrent_requests', 'rtfx']) delete doc[k];
    const run = fromVllm(doc, 'old.json');
    assert.equal(run.importedFrom?.startTimes, 'none');
    assert.ok(run.importedFrom?.missing?.[0]?.startsWith('per-request send times'));
    assert.ok(run.importedFrom?.missing?.some((m) => m.includes('[DONE]')));
    assert.equal(new Set(run.requests.map((r) => r.sentAt)).size, 1);
    for (const [key, , st] of metricsOf(run)) close(st.mean, doc[`mean_${key}_ms`] as number, `mean ${key}`);
    // without send times requests cannot be lined up: no stall is laid on a culprit
    assert.ok(run.requests.every((r) => r.stalls === undefined));
  });

  it('results appended one per line (--append-result) make a sweep, each point with its own figures and vLLM\'s', () => {
    const a = load('burst');
    const b = load('concurrency2');
    const run = fromVllm([a, b], 'both.json');
    assert.equal(run.sweep?.dimension, 'concurrency');
    assert.deepEqual(run.sweep?.points.map((p) => p.concurrency), [24, 2]);
    for (const [i, doc] of [a, b].entries()) {
      const p: SweepPoint = run.sweep!.points[i]!;
      close(p.summary.ttftMs.mean, doc.mean_ttft_ms as number, `point ${i} ttft`);
      close(p.summary.itlMs.p99!, doc.p99_itl_ms as number, `point ${i} itl p99`);
      assert.equal(p.reported?.mean_tpot_ms, doc.mean_tpot_ms);
    }
  });
});

describe('vLLM results: what is refused', () => {
  it('saved without --save-detailed: says to re-run with it', () => {
    const doc = JSON.parse(readFileSync(join(DIR, 'summary-only.json'), 'utf8')) as unknown;
    assert.ok(isVllm(doc));
    assert.throws(() => fromVllm(doc, 'summary-only.json'), (e: unknown) => {
      assert.ok(e instanceof ImportError);
      assert.equal(
        e.message,
        'summary-only.json: this vLLM result has no per-request data (it has 4 end-to-end latencies but no TTFT or inter-token gaps): it was saved without --save-detailed. ' +
          'Re-run `vllm bench serve` (or benchmark_serving.py) with --save-result --save-detailed',
      );
      return true;
    });
  });

  it('lists of a shape not known (lengths that disagree, gaps that are not lists): named, with the shapes known', () => {
    const short = load('burst');
    short.itls = short.itls.slice(1);
    assert.throws(() => fromVllm(short, 'x.json'), /^ImportError: x\.json: a vLLM result of a shape not known: "itls" has 23 entries but "ttfts" has 24 \(known: `vllm bench serve/);
    const flat = load('burst') as Record<string, unknown>;
    (flat.itls as unknown[])[2] = 0.5;
    assert.throws(() => fromVllm(flat, 'x.json'), /itls\[2\] is not a list of seconds/);
  });

  it('JSON that is not a vLLM result is not taken for one', () => {
    assert.equal(isVllm({ benchmarks: [] }), false);
    assert.equal(isVllm({ completed: 1, duration: 2 }), false);
    assert.equal(isVllm(load('burst')), true);
  });
});
