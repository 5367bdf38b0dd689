// The server's own account of a run, from its Prometheus /metrics (vLLM, SGLang, llama.cpp server,
// TGI): one scrape before the run and one after it give the histogram and counter deltas (what the
// server observed during the run: its TTFT, queue, prefill and decode times, tokens, prefix-cache
// hits), and the scheduler's gauges (running, waiting, KV-cache use) are sampled about once a second
// in between. Nothing here may fail or slow a run: every scrape is bounded (time and size), every
// failure becomes one note in the run file, and a server without /metrics costs one GET.
//
// The text format is read by parse-prometheus-text-format, with one correction: its 1.1.1 merges a
// labelled histogram's label sets into one and drops their _sum and _count (yunyu/
// parse-prometheus-text-format#13; the fix, PR #8, was never released). So `# TYPE x histogram`
// (and summary) lines reach it as `untyped`: it then returns x_bucket, x_sum and x_count as plain
// series with all their labels, and the histogram is put together here.
//
// Label sets (several models, engines, finish reasons) are summed; KV-cache use, a share, takes the
// largest. A note says when a metric came in several label sets.
import type { Dispatcher } from 'undici';
import { createDispatcher } from './connections';
import { readCapped } from './readCapped';
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { METRICS_FAMILY_LABELS } from '../core/types';
import type { EndpointSpec, HistogramDelta, MetricsFamily, NetworkSpec, ServerMetrics } from '../core/types';
import { requestPath, splitBaseUrl } from './adapters/adapter';
import { keyHeaderFor } from './adapters/registry';
import { authHeaders, displayUrl, fromServer, Scrubber, secretsOf } from '../core/redact';

type HistogramRole = keyof ServerMetrics['histograms'];
type GaugeRole = 'running' | 'waiting' | 'kvCacheUsage';

/** Where a counter comes from. */
type CounterSource =
  /** A counter (the first name present). */
  | { readonly counter: readonly string[] }
  /** A histogram's _sum (TGI counts tokens only as histograms). */
  | { readonly histogramSum: string }
  /** A running mean since the server started: kept as the mean over the run, weighted by the counter `per` (a role of `counters`). */
  | { readonly meanOf: readonly string[]; readonly per: string };

interface FamilyNames {
  /** Metric name prefixes; the names below are written without them. */
  readonly prefixes: readonly string[];
  /** Histograms in seconds, by what they measure; the first name present wins. */
  readonly histograms: Readonly<Partial<Record<HistogramRole, readonly string[]>>>;
  /** The counters read, by what they count (the run file keys them by the server's metric name). */
  readonly counters: Readonly<Record<string, CounterSource>>;
  readonly gauges: Readonly<Partial<Record<GaugeRole, readonly string[]>>>;
}

/**
 * Which metric means what, per server, as each server's source names them (counters are exposed
 * with `_total` by prometheus_client and llama.cpp).
 */
export const FAMILY_NAMES: Readonly<Record<MetricsFamily, FamilyNames>> = {
  // vllm-project/vllm vllm/v1/metrics/loggers.py (PrometheusStatLogger); the V0 engine
  // (vllm/engine/metrics.py) used the same names where it had the metric.
  vllm: {
    prefixes: ['vllm:'],
    histograms: {
      ttft: ['time_to_first_token_seconds'],
      queue: ['request_queue_time_seconds'],
      prefill: ['request_prefill_time_seconds'],
      decode: ['request_decode_time_seconds'],
      e2e: ['e2e_request_latency_seconds'],
      // time_per_output_token_seconds is the older name (V1 still exposes it beside the new one, same values).
      itl: ['inter_token_latency_seconds', 'time_per_output_token_seconds'],
    },
    counters: {
      promptTokens: { counter: ['prompt_tokens_total'] },
      generationTokens: { counter: ['generation_tokens_total'] },
      // In tokens; the gpu_ names are the ones deprecated in 0.9.
      prefixCacheHits: { counter: ['prefix_cache_hits_total', 'gpu_prefix_cache_hits_total'] },
      prefixCacheQueries: { counter: ['prefix_cache_queries_total', 'gpu_prefix_cache_queries_total'] },
      requestsSucceeded: { counter: ['request_success_total'] },
      preemptions: { counter: ['num_preemptions_total'] },
    },
    // kv_cache_usage_perc is a share (1 = full) despite its name; gpu_cache_usage_perc is its pre-0.9 name.
    gauges: { running: ['num_requests_running'], waiting: ['num_requests_waiting'], kvCacheUsage: ['kv_cache_usage_perc', 'gpu_cache_usage_perc'] },
  },
  // sgl-project/sglang python/sglang/srt/metrics/collector.py (TokenizerMetricsCollector,
  // SchedulerMetricsCollector). Some deployments' scrapers turn the colon into an underscore.
  sglang: {
    prefixes: ['sglang:', 'sglang_'],
    histograms: {
      ttft: ['time_to_first_token_seconds'],
      queue: ['queue_time_seconds'],
      e2e: ['e2e_request_latency_seconds'],
      itl: ['inter_token_latency_seconds'],
    },
    counters: {
      promptTokens: { counter: ['prompt_tokens_total'] },
      generationTokens: { counter: ['generation_tokens_total'] },
      // cached_tokens: the prompt tokens served from the radix cache, out of all prompt tokens.
      prefixCacheHits: { counter: ['cached_tokens_total'] },
      prefixCacheQueries: { counter: ['prompt_tokens_total'] },
      requests: { counter: ['num_requests_total'] },
      requestsAborted: { counter: ['num_aborted_requests_total'] },
    },
    gauges: { running: ['num_running_reqs'], waiting: ['num_queue_reqs'], kvCacheUsage: ['token_usage'] },
  },
  // ggml-org/llama.cpp tools/server/server.cpp, the /metrics handler (llama-server --metrics); the
  // kv_cache_* gauges are in older builds only. No histograms.
  llamacpp: {
    prefixes: ['llamacpp:'],
    histograms: {},
    counters: {
      // Prompt tokens evaluated: those a slot took from its cache are not counted.
      promptTokens: { counter: ['prompt_tokens_total'] },
      promptSeconds: { counter: ['prompt_seconds_total'] },
      generationTokens: { counter: ['tokens_predicted_total'] },
      generationSeconds: { counter: ['tokens_predicted_seconds_total'] },
      decodeCalls: { counter: ['n_decode_total'] },
      // Declared a counter, but it is busy slots / decode calls since the server started.
      busySlotsPerDecode: { meanOf: ['n_busy_slots_per_decode'], per: 'decodeCalls' },
    },
    gauges: { running: ['requests_processing'], waiting: ['requests_deferred'], kvCacheUsage: ['kv_cache_usage_ratio'] },
  },
  // huggingface/text-generation-inference router/src/server.rs (every metric ending in "duration"
  // gets histogram buckets, in seconds), router/src/validation.rs (tgi_request_input_length),
  // router/src/queue.rs and the batching loop (tgi_queue_size, tgi_batch_current_size). The metrics
  // crate's exporter wrote counters without `_total` before its 0.16. No TTFT and no KV-cache gauge.
  tgi: {
    prefixes: ['tgi_'],
    histograms: {
      queue: ['request_queue_duration'],
      e2e: ['request_duration'],
      // inference time / generated tokens, per request
      itl: ['request_mean_time_per_token_duration'],
    },
    counters: {
      promptTokens: { histogramSum: 'request_input_length' },
      generationTokens: { histogramSum: 'request_generated_tokens' },
      requests: { counter: ['request_count', 'request_count_total'] },
      requestsSucceeded: { counter: ['request_success', 'request_success_total'] },
      requestsFailed: { counter: ['request_failure', 'request_failure_total'] },
    },
    gauges: { running: ['batch_current_size'], waiting: ['queue_size'] },
  },
};

const FAMILIES = Object.keys(FAMILY_NAMES) as MetricsFamily[];

// ---- The text format ------------------------------------------------------------------------------

interface Series {
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

/** A parsed /metrics page: the series of each sample name, and the declared type of each family (lower case). */
export interface Exposition {
  readonly series: ReadonlyMap<string, readonly Series[]>;
  readonly types: ReadonlyMap<string, string>;
}

const COMPOSITE_TYPE = /^[ \t]*#[ \t]+TYPE[ \t]+(\S+)[ \t]+(histogram|summary)[ \t]*\r?$/gim;

/** Reads the Prometheus text format; throws (the parser's error) on a line it cannot read. */
export function parseExposition(text: string): Exposition {
  const types = new Map<string, string>();
  const flat = text.replace(COMPOSITE_TYPE, (_line, name: string, type: string) => {
    types.set(name, type.toLowerCase());
    return `# TYPE ${name} untyped`;
  });
  // The parser drops a last line that has no newline after it.
  const families = parsePrometheusTextFormat(flat.endsWith('\n') ? flat : `${flat}\n`);
  const series = new Map<string, Series[]>();
  for (const f of families) {
    const type = f.type.toLowerCase();
    if (!types.has(f.name) || (types.get(f.name) === 'untyped' && type !== 'untyped')) types.set(f.name, type);
    let list = series.get(f.name);
    for (const m of f.metrics) {
      if (m.value === undefined) continue;
      if (!list) series.set(f.name, (list = []));
      list.push({ labels: m.labels ?? {}, value: sampleValue(m.value) });
    }
  }
  return { series, types };
}

function sampleValue(text: string): number {
  const t = text.trim().toLowerCase();
  if (t === '+inf' || t === 'inf') return Number.POSITIVE_INFINITY;
  if (t === '-inf') return Number.NEGATIVE_INFINITY;
  return t === '' ? Number.NaN : Number(t);
}

/** The declared type of a sample name's family ("untyped" when none is declared). */
function typeOf(expo: Exposition, name: string): string {
  const own = expo.types.get(name);
  if (own !== undefined && own !== 'untyped') return own;
  // OpenMetrics declares a counter without its `_total`.
  return (name.endsWith('_total') ? expo.types.get(name.slice(0, -6)) : undefined) ?? 'untyped';
}

/** The family whose names the page holds most of; the others found, for a note. */
export function detectFamily(expo: Exposition): { family?: MetricsFamily; others: MetricsFamily[] } {
  const counts = FAMILIES.map((f) => {
    let n = 0;
    for (const name of expo.series.keys()) if (FAMILY_NAMES[f].prefixes.some((p) => name.startsWith(p))) n++;
    return [f, n] as const;
  })
    .filter(([, n]) => n > 0)
    .sort((a, b) => b[1] - a[1]);
  return counts.length === 0 ? { others: [] } : { family: counts[0]![0], others: counts.slice(1).map(([f]) => f) };
}

// ---- One scrape, read ---------------------------------------------------------------------------

interface HistogramState {
  readonly metric: string;
  readonly count: number;
  /** Seconds. */
  readonly sum: number;
  /** [upper bound in seconds, cumulative count], ascending; +Inf last when given. */
  readonly buckets: readonly (readonly [number, number])[];
}

interface CounterState {
  readonly metric: string;
  /** For a running mean: mean × its count, so that deltas divide. */
  readonly value: number;
}

export type Gauges = Readonly<Record<GaugeRole, number | null>>;

/** What one scrape said, by what each metric measures. */
export interface Snapshot {
  readonly family: MetricsFamily;
  readonly histograms: Readonly<Partial<Record<HistogramRole, HistogramState>>>;
  /** By role (promptTokens, prefixCacheHits, …: the keys of FAMILY_NAMES' counters). */
  readonly counters: Readonly<Record<string, CounterState>>;
  readonly gauges: Gauges;
  readonly notes: readonly string[];
}

/** Reads what the family's map names from a parsed page. */
function readSnapshot(expo: Exposition, family: MetricsFamily): Snapshot {
  const names = FAMILY_NAMES[family];
  const notes: string[] = [];
  const labelled = new LabelSets();
  const histograms: Partial<Record<HistogramRole, HistogramState>> = {};
  for (const [role, list] of Object.entries(names.histograms) as [HistogramRole, readonly string[]][]) {
    const metric = firstPresent(expo, names.prefixes, list, ['_count', '_sum', '_bucket', '']);
    if (metric === undefined) continue;
    const h = readHistogram(expo, metric, notes, labelled);
    if (h) histograms[role] = h;
  }
  const counters: Record<string, CounterState> = {};
  for (const [key, source] of Object.entries(names.counters)) {
    const c = readCounterSource(expo, names.prefixes, source, counters, notes, labelled);
    if (c) counters[key] = c;
  }
  const note = labelled.note();
  if (note) notes.push(note);
  return { family, histograms, counters, gauges: readGauges(expo, family, notes), notes };
}

/** The first of `names` (with any prefix) that has a series under any of the suffixes. */
function firstPresent(expo: Exposition, prefixes: readonly string[], names: readonly string[], suffixes: readonly string[]): string | undefined {
  for (const n of names) for (const p of prefixes) if (suffixes.some((s) => expo.series.has(p + n + s))) return p + n;
  return undefined;
}

function wrongType(metric: string, declared: string, wanted: string): string {
  return `${metric} is ${/^[aeiou]/.test(declared) ? 'an' : 'a'} ${declared} here, not ${/^[aeiou]/.test(wanted) ? 'an' : 'a'} ${wanted}: not used`;
}

/** Sums the finite values of a sample name's series. */
function total(expo: Exposition, name: string): { value: number; series: readonly Series[] } | undefined {
  const list = expo.series.get(name);
  if (!list) return undefined;
  let value = 0;
  let finite = 0;
  for (const s of list) {
    if (!Number.isFinite(s.value)) continue;
    value += s.value;
    finite++;
  }
  return finite > 0 ? { value, series: list } : undefined;
}

function readHistogram(expo: Exposition, metric: string, notes: string[], labelled: LabelSets): HistogramState | undefined {
  const declared = typeOf(expo, metric);
  const count = total(expo, `${metric}_count`);
  const sum = total(expo, `${metric}_sum`);
  const bucketSeries = expo.series.get(`${metric}_bucket`);
  if (declared !== 'histogram' && declared !== 'summary' && (declared !== 'untyped' || (!count && !sum && !bucketSeries))) {
    notes.push(wrongType(metric, declared, 'histogram'));
    return undefined;
  }
  const byBound = new Map<number, number>();
  for (const s of bucketSeries ?? []) {
    const le = s.labels.le === undefined ? Number.NaN : sampleValue(s.labels.le);
    if (Number.isNaN(le) || !Number.isFinite(s.value)) continue;
    byBound.set(le, (byBound.get(le) ?? 0) + s.value);
  }
  const buckets = [...byBound].sort((a, b) => a[0] - b[0]);
  const n = count?.value ?? byBound.get(Number.POSITIVE_INFINITY);
  if (n === undefined || sum === undefined) {
    notes.push(`${metric} has no _sum or _count: not used`);
    return undefined;
  }
  labelled.add(metric, (count ?? sum).series);
  return { metric, count: n, sum: sum.value, buckets };
}

function readCounterSource(expo: Exposition, prefixes: readonly string[], source: CounterSource, read: Readonly<Record<string, CounterState>>, notes: string[], labelled: LabelSets): CounterState | undefined {
  if ('histogramSum' in source) {
    const metric = firstPresent(expo, prefixes, [source.histogramSum], ['_sum']);
    if (metric === undefined) return undefined;
    const declared = typeOf(expo, metric);
    if (declared !== 'histogram' && declared !== 'summary' && declared !== 'untyped') {
      notes.push(wrongType(metric, declared, 'histogram'));
      return undefined;
    }
    const sum = total(expo, `${metric}_sum`);
    if (!sum) return undefined;
    labelled.add(metric, sum.series);
    return { metric: `${metric}_sum`, value: sum.value };
  }
  const isMean = 'meanOf' in source;
  const metric = firstPresent(expo, prefixes, isMean ? source.meanOf : source.counter, ['']);
  if (metric === undefined) return undefined;
  const declared = typeOf(expo, metric);
  const allowed = isMean ? ['counter', 'gauge', 'untyped'] : ['counter', 'untyped'];
  if (!allowed.includes(declared)) {
    notes.push(wrongType(metric, declared, 'counter'));
    return undefined;
  }
  const t = total(expo, metric);
  if (!t) return undefined;
  labelled.add(metric, t.series);
  if (!isMean) return { metric, value: t.value };
  const per = read[source.per];
  return per ? { metric, value: t.value * per.value } : undefined;
}

/** The gauges the sampler charts; null where the server has no such gauge (or it is of another type). */
export function readGauges(expo: Exposition, family: MetricsFamily, notes: string[] = []): Gauges {
  const names = FAMILY_NAMES[family];
  const read = (role: GaugeRole): number | null => {
    const metric = firstPresent(expo, names.prefixes, names.gauges[role] ?? [], ['']);
    if (metric === undefined) return null;
    const declared = typeOf(expo, metric);
    if (declared !== 'gauge' && declared !== 'untyped') {
      notes.push(wrongType(metric, declared, 'gauge'));
      return null;
    }
    const values = (expo.series.get(metric) ?? []).map((s) => s.value).filter(Number.isFinite);
    if (values.length === 0) return null;
    // A share is not summed over engines: the fullest one is what limits.
    return role === 'kvCacheUsage' ? values.reduce((a, b) => (b > a ? b : a), -Infinity) : values.reduce((a, b) => a + b, 0);
  };
  return { running: read('running'), waiting: read('waiting'), kvCacheUsage: read('kvCacheUsage') };
}

/** Every name a gauge of the family may have: what a sample hands the parser. */
function gaugeNames(family: MetricsFamily): string[] {
  const names = FAMILY_NAMES[family];
  return Object.values(names.gauges).flatMap((list) => list.flatMap((n) => names.prefixes.map((p) => p + n)));
}

/** Remembers the metric that came in the most label sets, and which labels told them apart. */
class LabelSets {
  #metric = '';
  #sets = 1;
  #differ: string[] = [];

  add(metric: string, series: readonly Series[]): void {
    if (series.length <= this.#sets) return;
    this.#metric = metric;
    this.#sets = series.length;
    const names = new Set(series.flatMap((s) => Object.keys(s.labels)));
    this.#differ = [...names].filter((n) => n !== 'le' && new Set(series.map((s) => s.labels[n])).size > 1).sort();
  }

  note(): string | undefined {
    if (this.#sets <= 1) return undefined;
    const by = this.#differ.length > 0 ? ` (by ${this.#differ.join(', ')})` : '';
    return `metrics come in up to ${this.#sets} label sets${by}, e.g. ${this.#metric}: values summed over them (KV-cache use: the largest)`;
  }
}

/** What a page's text says, or why it cannot be used (one note). */
export function snapshotOf(text: string, family?: MetricsFamily): { snapshot: Snapshot } | { note: string } {
  if (/^\s*</.test(text.slice(0, 256))) return { note: '/metrics answered an HTML page, not Prometheus text: not used' };
  let expo: Exposition;
  try {
    expo = parseExposition(text);
  } catch (err) {
    return { note: `/metrics is not Prometheus text (${fromServer((err as Error).message, new Scrubber(), 120, true)}): not used` };
  }
  const found = detectFamily(expo);
  const use = family ?? found.family;
  if (use === undefined) return { note: '/metrics holds no vLLM, SGLang, llama.cpp or TGI metrics: not used' };
  const snapshot = readSnapshot(expo, use);
  const others = [found.family, ...found.others].filter((f): f is MetricsFamily => f !== undefined && f !== use);
  if (others.length === 0) return { snapshot };
  const note = `/metrics also holds ${others.map((f) => METRICS_FAMILY_LABELS[f]).join(', ')} metrics: only ${METRICS_FAMILY_LABELS[use]}'s are used`;
  return { snapshot: { ...snapshot, notes: [...snapshot.notes, note] } };
}

// ---- Before and after -----------------------------------------------------------------------------

/** Milliseconds with µs resolution: no float noise from subtracting two sums. */
const ms = (seconds: number): number => Math.round(seconds * 1e6) / 1000;
const tidy = (v: number): number => Math.round(v * 1e6) / 1e6;

/**
 * The upper bound of the bucket that holds the q-quantile (rank q × total, as Prometheus's
 * histogram_quantile, but the bound itself, not interpolated). +Inf when it falls past the last
 * finite bound; undefined when nothing was observed.
 */
export function quantileBound(buckets: readonly (readonly [number, number])[], q: number): number | undefined {
  const totalCount = buckets.length > 0 ? buckets[buckets.length - 1]![1] : 0;
  if (totalCount <= 0) return undefined;
  const rank = q * totalCount;
  for (const [le, c] of buckets) if (c >= rank && c > 0) return le;
  return undefined;
}

function histogramDelta(before: HistogramState | undefined, after: HistogramState, notes: string[]): HistogramDelta | undefined {
  const count = after.count - (before?.count ?? 0);
  const sum = after.sum - (before?.sum ?? 0);
  const was = new Map(before?.buckets ?? []);
  const buckets = after.buckets.map(([le, c]) => [le, c - (was.get(le) ?? 0)] as const);
  if (count < 0 || sum < -1e-9 || buckets.some(([, c]) => c < 0)) {
    notes.push(`${after.metric} went down between the scrapes (the server restarted?): no delta`);
    return undefined;
  }
  const out: { -readonly [K in keyof HistogramDelta]: HistogramDelta[K] } = { metric: after.metric, count: tidy(count), sumMs: ms(Math.max(0, sum)) };
  if (count > 0) {
    out.meanMs = ms(Math.max(0, sum) / count);
    for (const [key, q] of [['p50Ms', 0.5], ['p99Ms', 0.99]] as const) {
      const bound = quantileBound(buckets, q);
      if (bound === undefined) continue;
      if (Number.isFinite(bound)) out[key] = ms(bound);
      else {
        const largest = buckets.filter(([le]) => Number.isFinite(le)).at(-1)?.[0];
        notes.push(`the p${q * 100} of ${after.metric} is past its largest bucket${largest !== undefined ? ` (${ms(largest)} ms)` : ''}`);
      }
    }
  }
  return out;
}

export interface MetricsDelta {
  readonly histograms: ServerMetrics['histograms'];
  /** By the server's metric name (a TGI token count by its histogram's `_sum`). */
  readonly counters: Readonly<Record<string, number>>;
  readonly prefixCacheHitRate?: number;
  readonly notes: readonly string[];
}

/** What the server observed between two scrapes: histogram and counter deltas, the prefix-cache hit rate. */
export function deltaOf(before: Snapshot, after: Snapshot): MetricsDelta {
  const notes: string[] = [];
  const histograms: { -readonly [K in HistogramRole]?: HistogramDelta } = {};
  for (const [role, h] of Object.entries(after.histograms) as [HistogramRole, HistogramState][]) {
    const b = before.histograms[role];
    const d = histogramDelta(b && b.metric === h.metric ? b : undefined, h, notes);
    if (d) histograms[role] = d;
  }
  const sources = FAMILY_NAMES[after.family].counters;
  const byRole: Record<string, number> = {};
  const counters: Record<string, number> = {};
  const wentDown = new Set<string>();
  for (const [role, c] of Object.entries(after.counters)) {
    const source = sources[role];
    if (source && 'meanOf' in source) continue;
    // A series the server creates on first use (label sets made lazily) was 0 before it.
    const d = c.value - (before.counters[role]?.value ?? 0);
    if (d >= 0) counters[c.metric] = byRole[role] = tidy(d);
    else if (!wentDown.has(c.metric)) {
      wentDown.add(c.metric);
      notes.push(`${c.metric} went down between the scrapes (the server restarted?): no delta`);
    }
  }
  for (const [role, c] of Object.entries(after.counters)) {
    const source = sources[role];
    if (!source || !('meanOf' in source)) continue;
    // Not a delta: the mean over the run's own `per` (llama.cpp's busy slots per decode call).
    const per = byRole[source.per];
    const d = c.value - (before.counters[role]?.value ?? 0);
    if (per !== undefined && per > 0 && d >= 0) counters[c.metric] = tidy(d / per);
  }
  const hits = byRole.prefixCacheHits;
  const queries = byRole.prefixCacheQueries;
  const rate = hits !== undefined && queries !== undefined && queries > 0 ? tidy(hits / queries) : undefined;
  return { histograms, counters, ...(rate !== undefined ? { prefixCacheHitRate: rate } : {}), notes };
}

// ---- Fetching -------------------------------------------------------------------------------------

const SCRAPE_TIMEOUT_MS = 2000;
/** Connecting is the part that hangs on a dead host. */
const CONNECT_TIMEOUT_MS = 1000;
const SAMPLE_INTERVAL_MS = 1000;
const MAX_BODY_BYTES = 8 * 1024 * 1024;
/** Of an error answer, what is read for its message. */
const ERROR_BODY_BYTES = 16 * 1024;
const MAX_SAMPLES = 36_000;
/** The classic text format: prometheus_client answers OpenMetrics only to those who ask for it. */
const ACCEPT = 'text/plain;version=0.0.4;q=1,*/*;q=0.1';

type Scrape =
  | { readonly kind: 'text'; readonly text: string }
  /** No /metrics at all (404, nothing listening): no field in the run file. */
  | { readonly kind: 'absent' }
  /** Something is there but cannot be used: one note. */
  | { readonly kind: 'unusable'; readonly why: string };

export interface MetricsSamplerOptions {
  /** Per scrape (default 2000 ms). */
  readonly timeoutMs?: number;
  /** Between gauge samples (default 1000 ms). */
  readonly intervalMs?: number;
  /** The largest page read (default 8 MB). */
  readonly maxBytes?: number;
  /** Gauge samples kept before every other one is dropped (default 36,000). */
  readonly maxSamples?: number;
  /** Proxy and certificates, as the run's own requests use them. */
  readonly network?: NetworkSpec;
}

function header(headers: Record<string, string | string[] | undefined>, name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** A size as the notes say it: "8 MB", "512 KB". */
function sizeText(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${Math.round((bytes / (1024 * 1024)) * 10) / 10} MB` : `${Math.round(bytes / 1024)} KB`;
}

/** The GETs of /metrics under one endpoint: its own small pool, the endpoint's headers and key, no redirect followed. */
class Scraper {
  /** As written to the run file: no credentials. */
  readonly url: string;
  readonly #pool: Dispatcher;
  readonly #path: string;
  readonly #origin: string;
  readonly #headers: Record<string, string>;
  readonly #scrubber: Scrubber;
  readonly #timeoutMs: number;
  readonly #maxBytes: number;

  constructor(endpoint: EndpointSpec, apiKey: string | undefined, options: MetricsSamplerOptions) {
    const split = splitBaseUrl(endpoint.url);
    this.#path = requestPath(split, '/metrics');
    this.#origin = split.origin;
    this.url = displayUrl(split.origin + this.#path);
    this.#timeoutMs = options.timeoutMs ?? SCRAPE_TIMEOUT_MS;
    this.#maxBytes = options.maxBytes ?? MAX_BODY_BYTES;
    this.#scrubber = new Scrubber(secretsOf({ url: endpoint.url, headers: endpoint.headers }, apiKey));
    this.#headers = { ...endpoint.headers, accept: ACCEPT, ...authHeaders(apiKey, keyHeaderFor(endpoint)) };
    this.#pool = createDispatcher(split.origin, options.network, { connections: 1, connectTimeout: CONNECT_TIMEOUT_MS, keepAliveTimeout: 4000 });
  }

  async get(stop?: AbortSignal): Promise<Scrape> {
    // A signal of this request's own, never aborted once it is over: undici keeps listening to it
    // for the body, and a late abort (AbortSignal.timeout's, the sampler's stop) would surface as an
    // uncaught error on a body already thrown away.
    const abort = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      abort.abort();
    }, this.#timeoutMs);
    const onStop = () => abort.abort();
    stop?.addEventListener('abort', onStop, { once: true });
    try {
      const res = await this.#pool.request({ origin: this.#origin, path: this.#path, method: 'GET', headers: this.#headers, signal: abort.signal, headersTimeout: this.#timeoutMs, bodyTimeout: this.#timeoutMs });
      let read = false;
      try {
        const status = res.statusCode;
        if (status === 404 || status === 410) return { kind: 'absent' };
        const location = header(res.headers, 'location');
        if (status >= 300 && status < 400) {
          const to = location !== undefined ? ` to ${this.said(this.#absolute(location))}` : '';
          return { kind: 'unusable', why: `/metrics redirects${to} (HTTP ${status}); not followed: not used` };
        }
        if (status < 200 || status >= 300) {
          // llama-server without --metrics says so (501, "… Start it with `--metrics`"): worth passing on.
          read = true;
          const said = errorText(await wholeText(res.body, ERROR_BODY_BYTES).catch(() => undefined));
          return { kind: 'unusable', why: `/metrics answered HTTP ${status}${said ? ` (${this.said(said)})` : ''}: not used` };
        }
        const type = (header(res.headers, 'content-type') ?? '').toLowerCase();
        if (type.includes('html')) return { kind: 'unusable', why: '/metrics answered an HTML page, not Prometheus text: not used' };
        if (type !== '' && !type.startsWith('text/plain') && !type.startsWith('application/openmetrics-text')) {
          return { kind: 'unusable', why: `/metrics answered ${this.said(type.split(';', 1)[0]!.trim())}, not Prometheus text: not used` };
        }
        const tooLarge: Scrape = { kind: 'unusable', why: `/metrics is larger than ${sizeText(this.#maxBytes)}: not used` };
        if (Number(header(res.headers, 'content-length')) > this.#maxBytes) return tooLarge;
        read = true;
        const text = await wholeText(res.body, this.#maxBytes);
        return text === undefined ? tooLarge : { kind: 'text', text };
      } finally {
        if (!read) {
          // undici reports a body destroyed unread as an error: nobody is waiting for it.
          res.body.on('error', () => undefined);
          res.body.destroy();
        }
      }
    } catch (err) {
      const e = err as Error & { code?: string; cause?: { code?: string } };
      const code = e.code ?? e.cause?.code ?? e.name;
      if (code === 'ECONNREFUSED') return { kind: 'absent' };
      if (stop?.aborted && !timedOut) return { kind: 'unusable', why: 'stopped' };
      if (timedOut || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') {
        return { kind: 'unusable', why: `/metrics did not answer within ${this.#timeoutMs} ms: not used` };
      }
      return { kind: 'unusable', why: `/metrics could not be read (${this.said(code)}): not used` };
    } finally {
      clearTimeout(timer);
      stop?.removeEventListener('abort', onStop);
    }
  }

  #absolute(location: string): string {
    try {
      return displayUrl(new URL(location, this.#origin + this.#path).toString());
    } catch {
      return location;
    }
  }

  /** Text from the server (or about it), made one safe line: no control characters, no secret. */
  said(text: string, max = 120): string {
    return fromServer(text, this.#scrubber, max, true);
  }

  async close(): Promise<void> {
    await this.#pool.destroy().catch(() => undefined);
  }
}

/** What a server's error answer says: JSON's error.message (OpenAI, llama.cpp) or message, else its first line. */
function errorText(body: string | undefined): string {
  if (!body) return '';
  try {
    const json = JSON.parse(body) as { error?: { message?: unknown } | string; message?: unknown };
    const m = typeof json.error === 'object' ? json.error?.message : (json.error ?? json.message);
    if (typeof m === 'string') return m;
  } catch {
    // not JSON: its first line
  }
  return /^\s*</.test(body) ? '' : body.trim().split('\n', 1)[0]!;
}

/** The body as text, or undefined past `max` bytes (reading stops there). */
async function wholeText(body: AsyncIterable<unknown>, max: number): Promise<string | undefined> {
  const read = await readCapped(body, max);
  return read.whole ? read.text : undefined;
}

/**
 * Only the lines of the named metrics (their TYPE lines and samples): what a gauge sample hands the
 * parser, so that a sample taken while requests stream costs the event loop next to nothing (a
 * vLLM page of 200 KB takes the parser ~13 ms, long enough to show as a stall).
 */
export function linesOf(text: string, names: readonly string[]): string {
  const out: string[] = [];
  for (const name of names) {
    let from = 0;
    for (;;) {
      const i = text.indexOf(name, from);
      if (i < 0) break;
      const start = text.lastIndexOf('\n', i - 1) + 1;
      const nl = text.indexOf('\n', i);
      const end = nl < 0 ? text.length : nl;
      from = end + 1;
      const line = text.slice(start, end);
      const next = text[i + name.length];
      if (start === i && (next === '{' || next === ' ' || next === '\t')) out.push(line);
      else if (line.startsWith('#') && /^#\s+TYPE\s+(\S+)/.exec(line)?.[1] === name) out.push(line);
    }
  }
  return `${out.join('\n')}\n`;
}

// ---- The sampler ----------------------------------------------------------------------------------

/**
 * Scrapes a server's /metrics around a run: `start` scrapes once (before the run) and, when the page
 * is usable, samples the gauges about every second (a timer that never overlaps itself and never
 * keeps the process alive); `stop` scrapes once more and returns what the run file keeps. Neither
 * ever throws.
 */
export class MetricsSampler {
  readonly #scraper: Scraper | undefined;
  readonly #maxSamples: number;
  readonly #notes = new Set<string>();
  readonly #stop = new AbortController();
  #intervalMs: number;
  #usable: 'absent' | 'unusable' | 'usable' = 'absent';
  #before: Snapshot | undefined;
  /** performance.now() when the first scrape ended: the run's start, for the samples' times. */
  #t0 = 0;
  readonly #atMs: number[] = [];
  readonly #running: (number | null)[] = [];
  readonly #waiting: (number | null)[] = [];
  readonly #kv: (number | null)[] = [];
  #samplesTried = 0;
  #samplesFailed = 0;
  #lastFailure = '';
  #timer: ReturnType<typeof setTimeout> | undefined;
  #sampling: Promise<void> | undefined;
  #result: Promise<ServerMetrics | undefined> | undefined;

  private constructor(scraper: Scraper | undefined, options: MetricsSamplerOptions) {
    this.#scraper = scraper;
    this.#intervalMs = Math.max(10, options.intervalMs ?? SAMPLE_INTERVAL_MS);
    this.#maxSamples = Math.max(4, options.maxSamples ?? MAX_SAMPLES);
  }

  static async start(endpoint: EndpointSpec, apiKey?: string, options: MetricsSamplerOptions = {}): Promise<MetricsSampler> {
    let scraper: Scraper | undefined;
    try {
      scraper = new Scraper(endpoint, apiKey, options);
    } catch {
      // not a URL this tool can request: the run itself says so
    }
    const sampler = new MetricsSampler(scraper, options);
    try {
      await sampler.#begin();
    } catch (err) {
      sampler.#unusable(`/metrics could not be read (${scraper?.said((err as Error).message) ?? ''}): not used`);
    }
    return sampler;
  }

  /** Whether the first scrape found a usable page (then the gauges are being sampled). */
  get sampling(): boolean {
    return this.#usable === 'usable';
  }

  async #begin(): Promise<void> {
    if (!this.#scraper) return;
    const r = await this.#scraper.get();
    if (r.kind === 'absent') {
      await this.#scraper.close();
      return;
    }
    if (r.kind === 'unusable') return this.#unusable(r.why);
    const read = snapshotOf(r.text);
    if ('note' in read) return this.#unusable(read.note);
    this.#usable = 'usable';
    this.#before = read.snapshot;
    for (const n of read.snapshot.notes) this.#note(n);
    this.#t0 = performance.now();
    this.#push(0, read.snapshot.gauges);
    this.#schedule(this.#intervalMs);
  }

  /** Every note passes here: label and metric names in it are the server's text. */
  #note(text: string): void {
    this.#notes.add(this.#scraper ? this.#scraper.said(text, 400) : text);
  }

  #unusable(why: string): void {
    this.#usable = 'unusable';
    this.#note(why);
    void this.#scraper?.close();
  }

  #schedule(delayMs: number): void {
    if (this.#stop.signal.aborted) return;
    this.#timer = setTimeout(() => {
      this.#sampling = this.#sample().finally(() => {
        this.#sampling = undefined;
      });
    }, delayMs);
    this.#timer.unref();
  }

  async #sample(): Promise<void> {
    const started = performance.now();
    this.#samplesTried++;
    try {
      const r = await this.#scraper!.get(this.#stop.signal);
      if (this.#stop.signal.aborted) return;
      if (r.kind !== 'text') throw new Error(r.kind === 'absent' ? '/metrics is gone (404)' : r.why.replace(/: not used$/, ''));
      const family = this.#before!.family;
      const gauges = readGauges(parseExposition(linesOf(r.text, gaugeNames(family))), family);
      this.#push(started - this.#t0, gauges);
    } catch (err) {
      this.#samplesFailed++;
      this.#lastFailure = this.#scraper!.said((err as Error).message);
    } finally {
      this.#schedule(Math.max(0, this.#intervalMs - (performance.now() - started)));
    }
  }

  #push(atMs: number, g: Gauges): void {
    if (this.#atMs.length >= this.#maxSamples) this.#thin();
    this.#atMs.push(Math.round(atMs * 1000) / 1000);
    this.#running.push(g.running);
    this.#waiting.push(g.waiting);
    this.#kv.push(g.kvCacheUsage);
  }

  /** Memory stays bounded on a run of any length: every other sample goes, and sampling slows to match. */
  #thin(): void {
    for (const list of [this.#atMs, this.#running, this.#waiting, this.#kv] as (number | null)[][]) {
      let w = 0;
      for (let i = 0; i < list.length; i += 2) list[w++] = list[i]!;
      list.length = w;
    }
    this.#intervalMs *= 2;
    this.#note(`gauge samples thinned to one every ${formatSeconds(this.#intervalMs)} to stay within ${this.#maxSamples} points`);
  }

  /** Scrapes once more and returns what the run file keeps: undefined when the server has no /metrics. Idempotent. */
  stop(): Promise<ServerMetrics | undefined> {
    return (this.#result ??= this.#finish().catch(() => (this.#usable === 'absent' ? undefined : this.#assemble())));
  }

  async #finish(): Promise<ServerMetrics | undefined> {
    this.#stop.abort();
    clearTimeout(this.#timer);
    await this.#sampling;
    clearTimeout(this.#timer);
    if (this.#usable === 'absent' || !this.#scraper) return undefined;
    if (this.#usable === 'unusable') return this.#assemble();
    try {
      const at = performance.now() - this.#t0;
      const r = await this.#scraper.get();
      const read = r.kind === 'text' ? snapshotOf(r.text, this.#before!.family) : { note: r.kind === 'absent' ? '/metrics is gone (404)' : r.why.replace(/: not used$/, '') };
      if ('note' in read) {
        this.#note(`the scrape after the run failed (${read.note.replace(/: not used$/, '')}): no deltas`);
        return this.#assemble();
      }
      this.#push(at, read.snapshot.gauges);
      for (const n of read.snapshot.notes) this.#note(n);
      return this.#assemble(deltaOf(this.#before!, read.snapshot));
    } finally {
      await this.#scraper.close();
    }
  }

  #assemble(delta?: MetricsDelta): ServerMetrics {
    for (const n of delta?.notes ?? []) this.#note(n);
    if (this.#samplesFailed > 0) this.#note(`${this.#samplesFailed} of ${this.#samplesTried} gauge samples failed (last: ${this.#lastFailure})`);
    const family = this.#before?.family;
    return {
      url: this.#scraper?.url ?? '',
      ...(family ? { family } : {}),
      histograms: delta?.histograms ?? {},
      counters: delta?.counters ?? {},
      ...(delta?.prefixCacheHitRate !== undefined ? { prefixCacheHitRate: delta.prefixCacheHitRate } : {}),
      samples: { atMs: this.#atMs.slice(), running: this.#running.slice(), waiting: this.#waiting.slice(), kvCacheUsage: this.#kv.slice() },
      notes: [...this.#notes],
    };
  }
}

function formatSeconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}
