// The metric catalogue: one row per figure the product shows, with its name, unit, meaning (as vLLM's
// `bench serve` and GenAI-Perf define it, where they do) and the surfaces that show it. The CLI's
// table, the report's tiles, percentile and compare tables, the sweep view and docs/metrics.md all
// read it: a new metric is a row here. Pure.
import type { SloSpec, Stats, Summary } from '../engine/core/types';

/** Where a figure can be shown. */
export type Surface = 'cli' | 'tiles' | 'percentiles' | 'compare' | 'sweep' | 'tradeOff' | 'distributions' | 'docs';

/** Each surface in words (the docs' "Shown in" column). */
const SURFACE_NAMES: Readonly<Record<Surface, string>> = {
  cli: 'CLI table',
  tiles: 'report tiles',
  percentiles: 'percentile table',
  compare: 'compare view',
  sweep: 'sweep points (CLI and report)',
  tradeOff: 'sweep trade-off charts',
  distributions: 'CDF charts',
  docs: 'docs',
};

/** The latency distributions of a summary (Stats, ms). */
export type LatencyKey = 'ttftMs' | 'ttfoMs' | 'tpotMs' | 'itlMs' | 'e2eMs';
/** The summary's single figures (a count, a rate, a duration; `stalls` is its count). */
export type FigureKey =
  | 'completed' | 'failed' | 'durationS' | 'totalInputTokens' | 'totalOutputTokens'
  | 'requestsPerSecond' | 'outputTokensPerSecond' | 'totalTokensPerSecond' | 'goodput' | 'stalls';
export type MetricKey = LatencyKey | FigureKey;

/** What a figure is about: each surface lists the groups in its own order (metricsFor). */
export type MetricGroup = 'latency' | 'throughput' | 'requests';

interface MetricBase {
  /** A short id: the report's tiles are `${id}` or `${id}-p50`. */
  readonly id: string;
  /** Its name on every surface ("TTFT", "Output tokens/s"). */
  readonly label: string;
  /** Its name in full ("Time to first token"). */
  readonly title: string;
  readonly unit: string;
  /** What it means, in one line. */
  readonly means: string;
  readonly group: MetricGroup;
  readonly shown: readonly Surface[];
  /** Only some runs have it (TTFO with reasoning, goodput with an SLO): shown where the run has it. */
  readonly optional?: boolean;
}

export interface LatencyMetric extends MetricBase {
  readonly kind: 'latency';
  readonly key: LatencyKey;
  /** The percentiles a tile and a sweep point show. */
  readonly headline: readonly `p${number}`[];
  /** The SLO that judges it. */
  readonly slo?: keyof SloSpec;
  /** Timed between chunks: behind a buffer between the server and the client it times the buffer's flushes. */
  readonly proxy?: boolean;
}

export interface FigureMetric extends MetricBase {
  readonly kind: 'figure';
  readonly key: FigureKey;
  /** Its line in the CLI's table, as vLLM's `bench serve` names it ("Request throughput (req/s)"). */
  readonly cliLine?: string;
  /** Its column in the sweep's points table ("req/s"). */
  readonly column?: string;
}

export type Metric = LatencyMetric | FigureMetric;

const LATENCY_SURFACES: readonly Surface[] = ['cli', 'tiles', 'percentiles', 'compare', 'sweep', 'docs'];

/** Every figure the product shows, in the order the surfaces list them within a group. */
export const METRIC_CATALOGUE: readonly Metric[] = [
  { kind: 'latency', key: 'ttftMs', id: 'ttft', label: 'TTFT', title: 'Time to first token', unit: 'ms', group: 'latency',
    means: 'From sending the request to the first chunk carrying content or reasoning text (vLLM\'s TTFT).',
    headline: ['p50', 'p99'], slo: 'ttftMs', shown: [...LATENCY_SURFACES, 'tradeOff', 'distributions'] },
  { kind: 'latency', key: 'ttfoMs', id: 'ttfo', label: 'TTFO', title: 'Time to first output token', unit: 'ms', group: 'latency', optional: true,
    means: 'From sending the request to the first chunk of answer (non-reasoning) text; shown when a reply streamed reasoning.',
    headline: ['p50', 'p99'], shown: [...LATENCY_SURFACES, 'tradeOff', 'distributions'] },
  { kind: 'latency', key: 'tpotMs', id: 'tpot', label: 'TPOT', title: 'Time per output token', unit: 'ms', group: 'latency', proxy: true,
    means: 'Per request with more than one output token, (E2E − TTFT) / (output tokens − 1) (vLLM\'s TPOT).',
    headline: ['p50', 'p99'], slo: 'tpotMs', shown: [...LATENCY_SURFACES, 'tradeOff', 'distributions'] },
  { kind: 'latency', key: 'itlMs', id: 'itl', label: 'ITL', title: 'Inter-token latency', unit: 'ms', group: 'latency', proxy: true,
    means: 'Every gap between consecutive content chunks of a request, pooled over all requests (vLLM\'s ITL).',
    headline: ['p99'], slo: 'itlMs', shown: [...LATENCY_SURFACES, 'distributions'] },
  { kind: 'latency', key: 'e2eMs', id: 'e2e', label: 'E2E', title: 'End-to-end latency', unit: 'ms', group: 'latency',
    means: 'From sending the request to its last token chunk (vLLM\'s E2EL); a trailing usage chunk does not count.',
    headline: ['p50', 'p99'], slo: 'e2eMs', shown: LATENCY_SURFACES },
  { kind: 'figure', key: 'completed', id: 'completed', label: 'Successful requests', title: 'Successful requests', unit: 'requests', group: 'requests',
    means: 'Measured requests (warmup left out) that completed without an error.', cliLine: 'Successful requests', shown: ['cli', 'docs'] },
  { kind: 'figure', key: 'failed', id: 'errors', label: 'Errors', title: 'Failed requests', unit: 'requests', group: 'requests',
    means: 'Measured requests that failed: an HTTP error, a timeout, a broken or empty stream, by kind and status.',
    cliLine: 'Failed requests', column: 'errors', shown: ['cli', 'tiles', 'sweep', 'docs'] },
  { kind: 'figure', key: 'durationS', id: 'duration', label: 'Duration', title: 'Benchmark duration', unit: 's', group: 'requests',
    means: 'Wall time of the measured phase, from its start until every measured request ended (vLLM\'s duration).',
    cliLine: 'Benchmark duration (s)', shown: ['cli', 'docs'] },
  { kind: 'figure', key: 'totalInputTokens', id: 'input-tokens', label: 'Input tokens', title: 'Total input tokens', unit: 'tokens', group: 'requests',
    means: 'Prompt tokens of the successful requests, as the server counted them.', cliLine: 'Total input tokens', shown: ['cli', 'docs'] },
  { kind: 'figure', key: 'totalOutputTokens', id: 'output-tokens', label: 'Generated tokens', title: 'Total generated tokens', unit: 'tokens', group: 'requests',
    means: 'Tokens generated by the successful requests: the server\'s usage, else one per content chunk.', cliLine: 'Total generated tokens', shown: ['cli', 'docs'] },
  { kind: 'figure', key: 'requestsPerSecond', id: 'rps', label: 'Requests/s', title: 'Request throughput', unit: 'req/s', group: 'throughput',
    means: 'Successful requests per second of the measured phase (vLLM\'s request throughput).',
    cliLine: 'Request throughput (req/s)', column: 'req/s', shown: ['cli', 'tiles', 'compare', 'sweep', 'docs'] },
  { kind: 'figure', key: 'outputTokensPerSecond', id: 'output-tps', label: 'Output tokens/s', title: 'Output token throughput', unit: 'tok/s', group: 'throughput',
    means: 'Generated tokens per second of the measured phase (vLLM\'s output token throughput).',
    cliLine: 'Output token throughput (tok/s)', column: 'tok/s', shown: ['cli', 'tiles', 'compare', 'sweep', 'docs'] },
  { kind: 'figure', key: 'totalTokensPerSecond', id: 'total-tps', label: 'Total tokens/s', title: 'Total token throughput', unit: 'tok/s', group: 'throughput',
    means: 'Prompt and generated tokens per second of the measured phase.', cliLine: 'Total token throughput (tok/s)', shown: ['cli', 'docs'] },
  { kind: 'figure', key: 'goodput', id: 'goodput', label: 'Goodput', title: 'Request goodput', unit: 'req/s', group: 'throughput', optional: true,
    means: 'Requests per second that met every per-request SLO given (TTFT, TPOT, E2E), as vLLM\'s goodput; only with an SLO.',
    cliLine: 'Request goodput (req/s)', column: 'goodput', shown: ['cli', 'tiles', 'sweep', 'docs'] },
  { kind: 'figure', key: 'stalls', id: 'stalls', label: 'Stalls', title: 'Stalls', unit: 'stalls', group: 'requests',
    means: 'Gaps between chunks longer than the stall factor × the stream\'s median ITL and the stall floor.',
    column: 'stalls', shown: ['cli', 'tiles', 'sweep', 'docs'] },
];

/** The order of the groups on each surface. */
const GROUP_ORDER: Readonly<Record<Surface, readonly MetricGroup[]>> = {
  cli: ['requests', 'throughput', 'latency'],
  tiles: ['latency', 'throughput', 'requests'],
  percentiles: ['latency'],
  compare: ['latency', 'throughput'],
  sweep: ['throughput', 'latency', 'requests'],
  tradeOff: ['latency'],
  distributions: ['latency'],
  docs: ['latency', 'throughput', 'requests'],
};

/** A summary's value of a single figure (a stall count for `stalls`); undefined when the summary has none. */
export function figureValue(m: FigureMetric, s: Summary): number | undefined {
  if (m.key === 'stalls') return s.stalls.count;
  const v = s[m.key];
  return typeof v === 'number' ? v : undefined;
}

/** A summary's distribution of a latency; undefined when the summary has none (TTFO without reasoning). */
export function latencyStats(m: LatencyMetric, s: Summary): Stats | undefined {
  return s[m.key];
}

/** Whether a summary has the metric (an optional one only when some request gave it). */
function hasMetric(m: Metric, s: Summary): boolean {
  return m.kind === 'latency' ? latencyStats(m, s) !== undefined : figureValue(m, s) !== undefined;
}

/**
 * The metrics a surface shows, in its order: those marked for it that any of `summaries` has (one
 * run, both sides of a compare, every point of a sweep). Without summaries, every row marked for it.
 */
export function metricsFor(surface: Surface, summaries?: readonly Summary[]): Metric[] {
  const order = GROUP_ORDER[surface];
  return METRIC_CATALOGUE
    .filter((m) => m.shown.includes(surface) && order.includes(m.group))
    .filter((m) => summaries === undefined || !m.optional || summaries.some((s) => hasMetric(m, s)))
    .sort((a, b) => order.indexOf(a.group) - order.indexOf(b.group));
}

/** The latencies a surface shows (metricsFor, latencies only). */
export function latenciesFor(surface: Surface, summaries?: readonly Summary[]): LatencyMetric[] {
  return metricsFor(surface, summaries).filter((m): m is LatencyMetric => m.kind === 'latency');
}

/** The catalogue row of a summary field. */
export function metricOf(key: MetricKey): Metric {
  return METRIC_CATALOGUE.find((m) => m.key === key)!;
}

const cell = (s: string) => s.replace(/\|/g, '\\|');

/** The catalogue as docs/metrics.md shows it (between its `metrics:start` and `metrics:end` markers). */
export function metricTableMarkdown(): string {
  const rows = metricsFor('docs').map((m) => {
    const where = m.shown.filter((s) => s !== 'docs').map((s) => SURFACE_NAMES[s]).join(', ');
    return `| ${cell(m.label === m.title ? m.label : `${m.label} (${m.title.toLowerCase()})`)} | ${cell(m.unit)} | ${cell(m.means)} | ${cell(where)} |`;
  });
  return ['| Metric | Unit | What it means | Shown in |', '|---|---|---|---|', ...rows].join('\n');
}
