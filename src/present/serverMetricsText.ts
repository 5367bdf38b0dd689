// What the server's own /metrics said over a run (src/engine/transport/serverMetrics.ts), in words, for the CLI
// and the report: one line of what it measured, then each note. Pure.
import { METRICS_FAMILY_LABELS } from '../engine/core/types';
import type { HistogramDelta, ServerMetrics } from '../engine/core/types';
import { formatInt, formatMs, formatNumber, formatPercent } from './units';


/** The histograms in the order they are told, with their names in the line. */
const HISTOGRAMS: readonly (readonly [keyof ServerMetrics['histograms'], string])[] = [
  ['ttft', 'TTFT'],
  ['queue', 'queue'],
  ['prefill', 'prefill'],
  ['decode', 'decode'],
  ['itl', 'ITL'],
  ['e2e', 'E2E'],
];

function histogramText(name: string, h: HistogramDelta, first: boolean): string {
  if (h.count === 0 || h.meanMs === undefined) return `${name}: none observed`;
  const p99 = h.p99Ms !== undefined ? ` (p99 ≤ ${formatMs(h.p99Ms)})` : '';
  return `${name} mean ${formatMs(h.meanMs)}${p99}${first ? ` over ${formatInt(h.count)} requests` : ''}`;
}

/** Tokens, with the server's own rate where it counts the seconds too (llama.cpp). */
function tokensText(what: string, tokens: number | undefined, seconds: number | undefined): string | undefined {
  if (tokens === undefined) return undefined;
  const rate = seconds !== undefined && seconds > 0 ? ` (${formatNumber(tokens / seconds, 'tok/s')})` : '';
  return `${formatInt(tokens)} ${what} tokens${rate}`;
}

/**
 * The counters worth a word, found by the servers' own names (src/engine/transport/serverMetrics.ts's
 * FAMILY_NAMES: vLLM, SGLang and llama.cpp write `<prefix>:prompt_tokens_total`, TGI counts tokens as
 * a histogram's `_sum`); that module is not imported here, as it holds the node-only fetching.
 */
const COUNTERS = {
  promptTokens: /(?:^|[:_])(?:prompt_tokens_total|request_input_length_sum)$/,
  promptSeconds: /[:_]prompt_seconds_total$/,
  generationTokens: /[:_](?:generation_tokens_total|tokens_predicted_total|request_generated_tokens_sum)$/,
  generationSeconds: /[:_]tokens_predicted_seconds_total$/,
  busySlotsPerDecode: /[:_]n_busy_slots_per_decode$/,
  preemptions: /[:_]num_preemptions_total$/,
} as const;

function counter(counters: Readonly<Record<string, number>>, what: keyof typeof COUNTERS): number | undefined {
  for (const [name, value] of Object.entries(counters)) if (COUNTERS[what].test(name)) return value;
  return undefined;
}

function largest(values: readonly (number | null)[]): number | undefined {
  let max: number | undefined;
  for (const v of values) if (v !== null && Number.isFinite(v) && (max === undefined || v > max)) max = v;
  return max;
}

/**
 * "Server /metrics (vLLM): TTFT mean 41.2 ms (p99 ≤ 100 ms) over 100 requests; queue mean 3.1 ms;
 * prefix cache hits 62.0 %; running ≤ 8, waiting ≤ 3, KV cache ≤ 41.0 %", then "note: …" per note.
 */
export function serverMetricsLines(m: ServerMetrics): string[] {
  const parts: string[] = [];
  let first = true;
  for (const [key, name] of HISTOGRAMS) {
    const h = m.histograms[key];
    if (!h) continue;
    parts.push(histogramText(name, h, first));
    first = false;
  }
  const c = (what: keyof typeof COUNTERS) => counter(m.counters, what);
  const tokens = [tokensText('prompt', c('promptTokens'), c('promptSeconds')), tokensText('generated', c('generationTokens'), c('generationSeconds'))].filter((t) => t !== undefined);
  if (tokens.length) parts.push(tokens.join(', '));
  if (m.prefixCacheHitRate !== undefined) parts.push(`prefix cache hits ${formatPercent(m.prefixCacheHitRate)}`);
  const busy = c('busySlotsPerDecode');
  // llama.cpp's n_busy_slots_per_decode: how many requests each engine step (llama_decode call) worked on, on average
  if (busy !== undefined) parts.push(`${formatNumber(busy)} requests per engine step on average (llama.cpp's busy slots per decode call: the batch it ran)`);
  const preemptions = c('preemptions');
  if (preemptions) parts.push(`${formatInt(preemptions)} preemptions`);
  const gauges: string[] = [];
  const running = largest(m.samples.running);
  const waiting = largest(m.samples.waiting);
  const kv = largest(m.samples.kvCacheUsage);
  if (running !== undefined) gauges.push(`running ≤ ${formatInt(running)}`);
  if (waiting !== undefined) gauges.push(`waiting ≤ ${formatInt(waiting)}`);
  if (kv !== undefined) gauges.push(`KV cache ≤ ${formatPercent(kv)}`);
  if (gauges.length) parts.push(gauges.join(', '));

  const label = m.family ? ` (${METRICS_FAMILY_LABELS[m.family]})` : '';
  const head = parts.length ? `Server /metrics${label}: ${parts.join('; ')}` : `Server /metrics${label}: nothing measured`;
  return [head, ...m.notes.map((n) => `note: ${n}`)];
}
