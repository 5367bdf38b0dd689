// Reading servers' Prometheus /metrics: each family's page as the server writes it (the names from
// its source), the deltas between two scrapes, label sets, counter resets, and the pages that are
// not to be used (HTML, garbage, a metric of the wrong type).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as v from 'valibot';
import { deltaOf, detectFamily, linesOf, parseExposition, quantileBound, readGauges, snapshotOf } from '../../src/engine/transport/serverMetrics';
import type { Snapshot } from '../../src/engine/transport/serverMetrics';
import { RunFileSchema } from '../../src/engine/core/runSchema';
import type { ServerMetrics } from '../../src/engine/core/types';
import { serverMetricsLines } from '../../src/present/serverMetricsText';
import { fixtureRun } from '../support/fixtureRuns';

/** vLLM's TTFT buckets (vllm/v1/metrics/loggers.py). */
const VLLM_TTFT_BUCKETS = [0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0];
const VLLM_LATENCY_BUCKETS = [0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0];

/** A float as prometheus_client writes it: "1.0", "0.25", "+Inf". */
const py = (x: number): string => (x === Number.POSITIVE_INFINITY ? '+Inf' : Number.isInteger(x) ? `${x}.0` : String(x));

/** One label set of a histogram, as prometheus_client writes it: cumulative buckets, _count, _sum. */
function histogram(name: string, labels: string, bounds: readonly number[], observed: readonly number[]): string {
  const lines = [...bounds, Number.POSITIVE_INFINITY].map((le) => `${name}_bucket{${labels.replace('LE', py(le))}} ${py(observed.filter((o) => o <= le).length)}`);
  const plain = labels.replace(/,?le="LE"/, '');
  lines.push(`${name}_count{${plain}} ${py(observed.length)}`, `${name}_sum{${plain}} ${py(observed.reduce((a, b) => a + b, 0))}`);
  return lines.join('\n');
}

interface VllmState {
  readonly ttft: readonly number[];
  readonly queue: readonly number[];
  readonly otherModelTtft?: readonly number[];
  readonly prompt: number;
  readonly hits: number;
  readonly queries: number;
  readonly running: number;
  readonly waiting: number;
  readonly kv: number;
}

/** A vLLM V1 page (prometheus_client, text format 0.0.4), cut to the metrics read here plus a few others. */
function vllmPage(s: VllmState): string {
  const l = (model: string) => `engine="0",le="LE",model_name="${model}"`;
  return [
    '# HELP python_gc_objects_collected_total Objects collected during gc',
    '# TYPE python_gc_objects_collected_total counter',
    'python_gc_objects_collected_total{generation="0"} 12345.0',
    '# HELP vllm:num_requests_running Number of requests in model execution batches.',
    '# TYPE vllm:num_requests_running gauge',
    `vllm:num_requests_running{engine="0",model_name="m"} ${py(s.running)}`,
    '# HELP vllm:num_requests_waiting Number of requests waiting to be processed.',
    '# TYPE vllm:num_requests_waiting gauge',
    `vllm:num_requests_waiting{engine="0",model_name="m"} ${py(s.waiting)}`,
    '# HELP vllm:kv_cache_usage_perc KV-cache usage. 1 means 100 percent usage.',
    '# TYPE vllm:kv_cache_usage_perc gauge',
    `vllm:kv_cache_usage_perc{engine="0",model_name="m"} ${py(s.kv)}`,
    '# HELP vllm:prefix_cache_queries_total Prefix cache queries, in terms of number of queried tokens.',
    '# TYPE vllm:prefix_cache_queries_total counter',
    `vllm:prefix_cache_queries_total{engine="0",model_name="m"} ${py(s.queries)}`,
    '# HELP vllm:prefix_cache_queries_created Prefix cache queries, in terms of number of queried tokens.',
    '# TYPE vllm:prefix_cache_queries_created gauge',
    'vllm:prefix_cache_queries_created{engine="0",model_name="m"} 1.7500000123e+09',
    '# HELP vllm:prefix_cache_hits_total Prefix cache hits, in terms of number of cached tokens.',
    '# TYPE vllm:prefix_cache_hits_total counter',
    `vllm:prefix_cache_hits_total{engine="0",model_name="m"} ${py(s.hits)}`,
    '# HELP vllm:prompt_tokens_total Number of prefill tokens processed.',
    '# TYPE vllm:prompt_tokens_total counter',
    `vllm:prompt_tokens_total{engine="0",model_name="m"} ${py(s.prompt)}`,
    '# HELP vllm:time_to_first_token_seconds Histogram of time to first token in seconds.',
    '# TYPE vllm:time_to_first_token_seconds histogram',
    histogram('vllm:time_to_first_token_seconds', l('m'), VLLM_TTFT_BUCKETS, s.ttft),
    ...(s.otherModelTtft ? [histogram('vllm:time_to_first_token_seconds', l('other'), VLLM_TTFT_BUCKETS, s.otherModelTtft)] : []),
    '# HELP vllm:time_to_first_token_seconds_created Histogram of time to first token in seconds.',
    '# TYPE vllm:time_to_first_token_seconds_created gauge',
    'vllm:time_to_first_token_seconds_created{engine="0",model_name="m"} 1.7500000123e+09',
    '# HELP vllm:request_queue_time_seconds Histogram of time spent in WAITING phase for request.',
    '# TYPE vllm:request_queue_time_seconds histogram',
    histogram('vllm:request_queue_time_seconds', l('m'), VLLM_LATENCY_BUCKETS, s.queue),
    '',
  ].join('\n');
}

function snap(text: string): Snapshot {
  const r = snapshotOf(text);
  assert.ok('snapshot' in r, 'note' in r ? r.note : '');
  return r.snapshot;
}

test('vLLM: family, histograms, counters and gauges as its page writes them; the delta is what happened between the scrapes', () => {
  const before = snap(vllmPage({ ttft: [0.03, 0.2], queue: [0], prompt: 500, hits: 100, queries: 500, running: 0, waiting: 0, kv: 0 }));
  assert.equal(before.family, 'vllm');
  assert.equal(before.histograms.ttft?.metric, 'vllm:time_to_first_token_seconds');
  assert.equal(before.histograms.ttft?.count, 2);
  assert.deepEqual(before.gauges, { running: 0, waiting: 0, kvCacheUsage: 0 });
  assert.deepEqual(before.notes, []);

  // 10 requests during the run: TTFTs and queue times known exactly.
  const ttft = [0.03, 0.2, 0.009, 0.015, 0.03, 0.05, 0.05, 0.07, 0.09, 0.3, 0.6, 3];
  const after = snap(vllmPage({ ttft, queue: [0, 0.4, 0.4, 0.7], prompt: 2500, hits: 1300, queries: 2500, running: 3, waiting: 2, kv: 0.41 }));
  assert.deepEqual(after.gauges, { running: 3, waiting: 2, kvCacheUsage: 0.41 });
  const d = deltaOf(before, after);
  const run = ttft.slice(2);
  const sumMs = run.reduce((a, b) => a + b, 0) * 1000;
  assert.equal(d.histograms.ttft?.count, 10);
  assert.ok(Math.abs(d.histograms.ttft!.sumMs - sumMs) < 1e-6, `${d.histograms.ttft!.sumMs} vs ${sumMs}`);
  assert.ok(Math.abs(d.histograms.ttft!.meanMs! - sumMs / 10) < 1e-6);
  // sorted: 9, 15, 30, 50, 50 | 70, 90, 300, 600, 3000 ms: the 5th is in (40, 60] ms; the 10th in (2.5, 5] s.
  assert.equal(d.histograms.ttft?.p50Ms, 60);
  assert.equal(d.histograms.ttft?.p99Ms, 5000);
  assert.deepEqual({ ...d.histograms.queue }, { metric: 'vllm:request_queue_time_seconds', count: 3, sumMs: 1500, meanMs: 500, p50Ms: 500, p99Ms: 800 });
  assert.deepEqual(d.counters, { 'vllm:prompt_tokens_total': 2000, 'vllm:prefix_cache_hits_total': 1200, 'vllm:prefix_cache_queries_total': 2000 });
  assert.equal(d.prefixCacheHitRate, 0.6);
  assert.deepEqual(d.notes, []);
});

test('label sets (several models) are summed, with a note naming the label that differs', () => {
  const before = snap(vllmPage({ ttft: [0.1], otherModelTtft: [], queue: [], prompt: 0, hits: 0, queries: 0, running: 0, waiting: 0, kv: 0 }));
  const after = snap(vllmPage({ ttft: [0.1, 0.2], otherModelTtft: [0.3, 0.4], queue: [], prompt: 0, hits: 0, queries: 0, running: 0, waiting: 0, kv: 0 }));
  assert.equal(after.histograms.ttft?.count, 4);
  const d = deltaOf(before, after);
  assert.equal(d.histograms.ttft?.count, 3);
  assert.ok(Math.abs(d.histograms.ttft!.sumMs - 900) < 1e-6);
  assert.match(after.notes.join('\n'), /2 label sets \(by model_name\), e\.g\. vllm:time_to_first_token_seconds: values summed/);
});

test('SGLang: its collector names (and the underscore form some scrapers write), cached/prompt tokens give the hit rate', () => {
  const page = (n: number, cached: number, prompt: number, running: number, queue: number, usage: number, sep = ':') =>
    [
      `# HELP sglang${sep}num_running_reqs The number of running requests.`,
      `# TYPE sglang${sep}num_running_reqs gauge`,
      `sglang${sep}num_running_reqs{model_name="qwen",engine_type="unified",tp_rank="0",pp_rank="0",moe_ep_rank="0"} ${py(running)}`,
      `# TYPE sglang${sep}num_queue_reqs gauge`,
      `sglang${sep}num_queue_reqs{model_name="qwen",engine_type="unified",tp_rank="0",pp_rank="0",moe_ep_rank="0"} ${py(queue)}`,
      `# TYPE sglang${sep}token_usage gauge`,
      `sglang${sep}token_usage{model_name="qwen",engine_type="unified",tp_rank="0",pp_rank="0",moe_ep_rank="0"} ${py(usage)}`,
      `# HELP sglang${sep}prompt_tokens_total Number of prefill tokens processed.`,
      `# TYPE sglang${sep}prompt_tokens_total counter`,
      `sglang${sep}prompt_tokens_total{model_name="qwen"} ${py(prompt)}`,
      `# TYPE sglang${sep}cached_tokens_total counter`,
      `sglang${sep}cached_tokens_total{model_name="qwen"} ${py(cached)}`,
      `# TYPE sglang${sep}num_requests_total counter`,
      `sglang${sep}num_requests_total{model_name="qwen"} ${py(n)}`,
      `# HELP sglang${sep}time_to_first_token_seconds Histogram of time to first token in seconds.`,
      `# TYPE sglang${sep}time_to_first_token_seconds histogram`,
      histogram(`sglang${sep}time_to_first_token_seconds`, 'le="LE",model_name="qwen"', [0.1, 0.2, 0.4, 0.6, 0.8, 1, 2], Array.from({ length: n }, () => 0.15)),
      `# TYPE sglang${sep}queue_time_seconds histogram`,
      histogram(`sglang${sep}queue_time_seconds`, 'le="LE",model_name="qwen"', [0.0, 0.1, 0.2, 0.5, 1], Array.from({ length: n }, () => 0)),
      '',
    ].join('\n');
  for (const sep of [':', '_']) {
    const before = snap(page(4, 0, 400, 0, 0, 0.01, sep));
    const after = snap(page(10, 300, 1000, 6, 1, 0.33, sep));
    assert.equal(after.family, 'sglang', sep);
    assert.deepEqual(after.gauges, { running: 6, waiting: 1, kvCacheUsage: 0.33 }, sep);
    const d = deltaOf(before, after);
    assert.equal(d.histograms.ttft?.metric, `sglang${sep}time_to_first_token_seconds`);
    assert.equal(d.histograms.ttft?.count, 6);
    assert.equal(d.histograms.ttft?.p99Ms, 200);
    assert.equal(d.histograms.queue?.p50Ms, 0, 'the 0 bucket holds them: the bound is 0 ms');
    assert.deepEqual(d.counters, { [`sglang${sep}prompt_tokens_total`]: 600, [`sglang${sep}cached_tokens_total`]: 300, [`sglang${sep}num_requests_total`]: 6 });
    assert.equal(d.prefixCacheHitRate, 0.5);
  }
});

/** llama-server --metrics, exactly as tools/server/server.cpp writes it (counters, then gauges, each with HELP and TYPE). */
function llamaPage(t: { prompt: number; promptS: number; predicted: number; predictedS: number; decodes: number; busyPerDecode: number; processing: number; deferred: number }): string {
  const m = (type: string, name: string, help: string, value: number) => `# HELP llamacpp:${name} ${help}\n# TYPE llamacpp:${name} ${type}\nllamacpp:${name} ${value}\n`;
  return (
    m('counter', 'prompt_tokens_total', 'Number of prompt tokens processed.', t.prompt) +
    m('counter', 'prompt_seconds_total', 'Prompt process time', t.promptS) +
    m('counter', 'tokens_predicted_total', 'Number of generation tokens processed.', t.predicted) +
    m('counter', 'tokens_predicted_seconds_total', 'Predict process time', t.predictedS) +
    m('counter', 'n_decode_total', 'Total number of llama_decode() calls', t.decodes) +
    m('counter', 'n_tokens_max', 'Largest observed n_tokens.', 4096) +
    m('counter', 'n_busy_slots_per_decode', 'Average number of busy slots per llama_decode() call', t.busyPerDecode) +
    m('gauge', 'prompt_tokens_seconds', 'Average prompt throughput in tokens/s.', 1234.5) +
    m('gauge', 'predicted_tokens_seconds', 'Average generation throughput in tokens/s.', 45.6) +
    m('gauge', 'requests_processing', 'Number of requests processing.', t.processing) +
    m('gauge', 'requests_deferred', 'Number of requests deferred.', t.deferred)
  );
}

test('llama.cpp server: its counters as deltas, the busy slots per decode over the run only, its gauges; no histograms', () => {
  const before = snap(llamaPage({ prompt: 1000, promptS: 2, predicted: 500, predictedS: 10, decodes: 100, busyPerDecode: 1, processing: 0, deferred: 0 }));
  // 100 more decodes with 3 busy slots each: (1·100 + 3·100) / 200 = 2 since the start, 3 over the run.
  const after = snap(llamaPage({ prompt: 1640, promptS: 2.5, predicted: 628, predictedS: 12, decodes: 200, busyPerDecode: 2, processing: 4, deferred: 2 }));
  assert.equal(after.family, 'llamacpp');
  assert.deepEqual(after.histograms, {});
  assert.deepEqual(after.gauges, { running: 4, waiting: 2, kvCacheUsage: null });
  const d = deltaOf(before, after);
  assert.deepEqual(d.counters, {
    'llamacpp:prompt_tokens_total': 640,
    'llamacpp:prompt_seconds_total': 0.5,
    'llamacpp:tokens_predicted_total': 128,
    'llamacpp:tokens_predicted_seconds_total': 2,
    'llamacpp:n_decode_total': 100,
    'llamacpp:n_busy_slots_per_decode': 3,
  });
  assert.equal(d.prefixCacheHitRate, undefined);
  assert.deepEqual([...after.notes, ...d.notes], []);
});

test('TGI: metrics-exporter-prometheus text (counters without _total, histograms in seconds), tokens from histogram sums', () => {
  const page = (n: number, queued: number, batch: number) =>
    [
      '# TYPE tgi_request_count counter',
      `tgi_request_count ${n}`,
      '# TYPE tgi_request_success counter',
      `tgi_request_success{kind="stream",stop_reason="length"} ${n - 1}`,
      `tgi_request_success{kind="stream",stop_reason="eos_token"} 1`,
      '# TYPE tgi_queue_size gauge',
      `tgi_queue_size ${queued}`,
      '# TYPE tgi_batch_current_size gauge',
      `tgi_batch_current_size ${batch}`,
      '# TYPE tgi_request_queue_duration histogram',
      histogram('tgi_request_queue_duration', 'le="LE"', [0.00015, 0.000225, 0.001, 0.01, 0.1], Array.from({ length: n }, () => 0.0002)).replaceAll('.0\n', '\n'),
      '# TYPE tgi_request_input_length histogram',
      histogram('tgi_request_input_length', 'le="LE"', [100, 200, 300], Array.from({ length: n }, () => 150)),
      '# TYPE tgi_request_generated_tokens histogram',
      histogram('tgi_request_generated_tokens', 'le="LE"', [100, 200, 300], Array.from({ length: n }, () => 64)),
      '',
    ].join('\n');
  const before = snap(page(2, 0, 0));
  const after = snap(page(12, 3, 8));
  assert.equal(after.family, 'tgi');
  assert.deepEqual(after.gauges, { running: 8, waiting: 3, kvCacheUsage: null });
  const d = deltaOf(before, after);
  assert.equal(d.histograms.queue?.count, 10);
  assert.equal(d.histograms.queue?.p99Ms, 0.225);
  assert.deepEqual(d.counters, { tgi_request_input_length_sum: 1500, tgi_request_generated_tokens_sum: 640, tgi_request_count: 10, tgi_request_success: 10 });
  assert.match(after.notes.join('\n'), /2 label sets \(by stop_reason\)/);
});

test('a counter or histogram that went down (the server restarted) is a note, not a delta', () => {
  const base = { queue: [], hits: 0, queries: 0, running: 0, waiting: 0, kv: 0 };
  const before = snap(vllmPage({ ...base, ttft: [0.1, 0.1, 0.1], prompt: 900 }));
  const after = snap(vllmPage({ ...base, ttft: [0.2], prompt: 40 }));
  const d = deltaOf(before, after);
  assert.equal(d.histograms.ttft, undefined);
  assert.equal(d.counters['vllm:prompt_tokens_total'], undefined);
  assert.deepEqual(d.notes, [
    'vllm:time_to_first_token_seconds went down between the scrapes (the server restarted?): no delta',
    'vllm:prompt_tokens_total went down between the scrapes (the server restarted?): no delta',
  ]);
});

test('a quantile past the last finite bucket is not given a bound: a note says so', () => {
  assert.equal(quantileBound([[0.1, 1], [1, 1], [Number.POSITIVE_INFINITY, 5]], 0.5), Number.POSITIVE_INFINITY);
  assert.equal(quantileBound([[0.1, 1], [1, 3], [Number.POSITIVE_INFINITY, 3]], 0.5), 1);
  assert.equal(quantileBound([[0.1, 0], [Number.POSITIVE_INFINITY, 0]], 0.5), undefined);
  const base = { queue: [], prompt: 0, hits: 0, queries: 0, running: 0, waiting: 0, kv: 0 };
  const d = deltaOf(snap(vllmPage({ ...base, ttft: [] })), snap(vllmPage({ ...base, ttft: [3000, 3000] })));
  assert.equal(d.histograms.ttft?.count, 2);
  assert.equal(d.histograms.ttft?.p99Ms, undefined);
  assert.match(d.notes.join('\n'), /the p99 of vllm:time_to_first_token_seconds is past its largest bucket \(2560000 ms\)/);
});

test('pages that are not to be used: HTML, garbage, text with no server family, empty', () => {
  const note = (text: string) => {
    const r = snapshotOf(text);
    assert.ok('note' in r, `a note for ${JSON.stringify(text.slice(0, 40))}`);
    return r.note;
  };
  assert.match(note('<!DOCTYPE html><html><body>Grafana</body></html>'), /HTML page/);
  assert.match(note('\uFEFF  <html>\n<p>vllm:num_requests_running 1</p>'), /HTML page/);
  assert.match(note('vllm:num_requests_running{engine="0" 1\n'), /not Prometheus text \(Encountered invalid line/);
  assert.match(note('# TYPE a b c\n'), /not Prometheus text/);
  assert.match(note('# TYPE go_goroutines gauge\ngo_goroutines 12\nprocess_cpu_seconds_total 3.5\n'), /no vLLM, SGLang, llama\.cpp or TGI metrics/);
  assert.match(note(''), /no vLLM, SGLang, llama\.cpp or TGI metrics/);
  assert.match(note('{"steps": 3, "tokens": 12}'), /no vLLM|not Prometheus text/);
  // A control character from the server never reaches the note.
  assert.ok(!note('vllm:x{a="\u001b[2J" 1\n').includes('\u001b'));
});

test('a metric of the wrong type is not used, with a note; the rest of the page is', () => {
  const page = [
    '# TYPE vllm:time_to_first_token_seconds gauge',
    'vllm:time_to_first_token_seconds 0.25',
    '# TYPE vllm:prompt_tokens_total gauge',
    'vllm:prompt_tokens_total 123',
    '# TYPE vllm:num_requests_running counter',
    'vllm:num_requests_running_total 5',
    'vllm:num_requests_running 5',
    '# TYPE vllm:num_requests_waiting gauge',
    'vllm:num_requests_waiting 2',
    '# TYPE vllm:generation_tokens_total counter',
    'vllm:generation_tokens_total 77',
    '',
  ].join('\n');
  const s = snap(page);
  assert.equal(s.histograms.ttft, undefined);
  assert.deepEqual(Object.keys(s.counters), ['generationTokens']);
  assert.deepEqual(s.gauges, { running: null, waiting: 2, kvCacheUsage: null });
  assert.deepEqual(s.notes, [
    'vllm:time_to_first_token_seconds is a gauge here, not a histogram: not used',
    'vllm:prompt_tokens_total is a gauge here, not a counter: not used',
    'vllm:num_requests_running is a counter here, not a gauge: not used',
  ]);
});

test('the parser correction: a labelled histogram keeps every label set and its _sum/_count; OpenMetrics counters are read', () => {
  const expo = parseExposition([
    '# TYPE h histogram',
    'h_bucket{m="a",le="1"} 1',
    'h_bucket{m="a",le="+Inf"} 2',
    'h_sum{m="a"} 3.5',
    'h_count{m="a"} 2',
    'h_bucket{m="b",le="1"} 0',
    'h_bucket{m="b",le="+Inf"} 1',
    'h_sum{m="b"} 9',
    'h_count{m="b"} 1',
    '# TYPE vllm:prompt_tokens counter',
    'vllm:prompt_tokens_total 42',
    '# EOF',
  ].join('\n'));
  assert.equal(expo.types.get('h'), 'histogram');
  assert.deepEqual(expo.series.get('h_sum')!.map((s) => s.value), [3.5, 9]);
  assert.deepEqual(expo.series.get('h_count')!.map((s) => s.labels.m), ['a', 'b']);
  assert.equal(expo.series.get('h_bucket')!.length, 4);
  assert.equal(detectFamily(expo).family, 'vllm');
  const s = snap('# TYPE vllm:prompt_tokens counter\nvllm:prompt_tokens_total 42\n# EOF');
  assert.equal(s.counters.promptTokens?.value, 42);
  // The last line is read even without a newline after it.
  assert.equal(readGauges(parseExposition('vllm:num_requests_running 7'), 'vllm').running, 7);
});

test('a gauge sample hands the parser only the gauge lines, and only exact names', () => {
  const page = vllmPage({ ttft: [0.1], queue: [], prompt: 1, hits: 0, queries: 0, running: 5, waiting: 1, kv: 0.5 }) + 'vllm:num_requests_running_extra 99\n';
  const picked = linesOf(page, ['vllm:num_requests_running', 'vllm:num_requests_waiting', 'vllm:kv_cache_usage_perc', 'vllm:gpu_cache_usage_perc']);
  assert.deepEqual(picked.trim().split('\n'), [
    '# TYPE vllm:num_requests_running gauge',
    'vllm:num_requests_running{engine="0",model_name="m"} 5.0',
    '# TYPE vllm:num_requests_waiting gauge',
    'vllm:num_requests_waiting{engine="0",model_name="m"} 1.0',
    '# TYPE vllm:kv_cache_usage_perc gauge',
    'vllm:kv_cache_usage_perc{engine="0",model_name="m"} 0.5',
  ]);
  assert.deepEqual(readGauges(parseExposition(picked), 'vllm'), { running: 5, waiting: 1, kvCacheUsage: 0.5 });
});

const metrics = (over: Partial<ServerMetrics> = {}): ServerMetrics => ({
  url: 'http://127.0.0.1:8000/metrics',
  family: 'vllm',
  histograms: {
    ttft: { metric: 'vllm:time_to_first_token_seconds', count: 100, sumMs: 4120, meanMs: 41.2, p50Ms: 40, p99Ms: 100 },
    queue: { metric: 'vllm:request_queue_time_seconds', count: 100, sumMs: 310, meanMs: 3.1, p50Ms: 300, p99Ms: 300 },
  },
  counters: { 'vllm:prompt_tokens_total': 25600, 'vllm:generation_tokens_total': 12800, 'vllm:prefix_cache_hits_total': 15872, 'vllm:prefix_cache_queries_total': 25600 },
  prefixCacheHitRate: 0.62,
  samples: { atMs: [0, 1000, 2000], running: [0, 8, null], waiting: [0, 3, 1], kvCacheUsage: [0, 0.41, 0.2] },
  notes: [],
  ...over,
});

test('serverMetricsLines: one line of what the server measured, then each note', () => {
  assert.deepEqual(serverMetricsLines(metrics()), [
    'Server /metrics (vLLM): TTFT mean 41.2 ms (p99 ≤ 100 ms) over 100 requests; queue mean 3.1 ms (p99 ≤ 300 ms); 25,600 prompt tokens, 12,800 generated tokens; prefix cache hits 62.0 %; running ≤ 8, waiting ≤ 3, KV cache ≤ 41.0 %',
  ]);
  const llama = serverMetricsLines(metrics({
    family: 'llamacpp',
    histograms: {},
    counters: { 'llamacpp:prompt_tokens_total': 640, 'llamacpp:prompt_seconds_total': 0.5, 'llamacpp:tokens_predicted_total': 128, 'llamacpp:tokens_predicted_seconds_total': 2, 'llamacpp:n_decode_total': 100, 'llamacpp:n_busy_slots_per_decode': 3 },
    prefixCacheHitRate: undefined,
    samples: { atMs: [0], running: [4], waiting: [2], kvCacheUsage: [null] },
    notes: ['metrics come in up to 2 label sets'],
  }));
  assert.deepEqual(llama, [
    'Server /metrics (llama.cpp): 640 prompt tokens (1,280 tok/s), 128 generated tokens (64.0 tok/s); 3.00 requests per engine step on average (llama.cpp\'s busy slots per decode call: the batch it ran); running ≤ 4, waiting ≤ 2',
    'note: metrics come in up to 2 label sets',
  ]);
  const none = serverMetricsLines({ url: 'http://h/metrics', histograms: {}, counters: {}, samples: { atMs: [], running: [], waiting: [], kvCacheUsage: [] }, notes: ['/metrics answered an HTML page, not Prometheus text: not used'] });
  assert.deepEqual(none, ['Server /metrics: nothing measured', 'note: /metrics answered an HTML page, not Prometheus text: not used']);
  const idle = serverMetricsLines(metrics({ histograms: { ttft: { metric: 'vllm:time_to_first_token_seconds', count: 0, sumMs: 0 } }, counters: {}, prefixCacheHitRate: undefined, samples: { atMs: [], running: [], waiting: [], kvCacheUsage: [] } }));
  assert.deepEqual(idle, ['Server /metrics (vLLM): TTFT: none observed']);
});

test('a run file with serverMetrics passes the run schema; NaN or Infinity in it would not', () => {
  const run = { ...fixtureRun({ seed: 3, requests: 2 }), serverMetrics: metrics() };
  assert.ok(v.safeParse(RunFileSchema, run).success);
  const bad = { ...run, serverMetrics: metrics({ samples: { atMs: [0, Number.NaN as unknown as number], running: [0, 1], waiting: [0, 1], kvCacheUsage: [0, 1] } }) };
  assert.equal(v.safeParse(RunFileSchema, JSON.parse(JSON.stringify(bad))).success, false);
});
