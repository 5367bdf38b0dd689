// GuideLLM's benchmarks.json / .yaml (vllm-project/guidellm) as a run: each benchmark of the report
// (a strategy: synchronous, concurrent@N, throughput, constant@R, poisson@R) becomes a sweep point,
// each of its saved requests a RequestRecord. Two report formats are read, each told from its shape:
//
// - schema 1 (GuideLLM 0.3/0.4 and later, `metadata.version: 1`; the shape without `metadata` that
//   preceded it is read the same way): src/guidellm/benchmark/schemas/report.py @ 2ffffa8d,
//   schemas/generative/benchmark.py and metrics.py @ 03820eba / 06cef291, src/guidellm/schemas/
//   request_stats.py @ 06cef291 and info.py @ 04fcfd86 (a request's `info.timings`, with the
//   computed fields request_start_time, time_to_first_token_ms, inter_token_latency_ms…);
// - 0.2.x: src/guidellm/benchmark/benchmark.py @ 47ce2924 (GenerativeTextResponseStats: start_time,
//   first_token_time, last_token_time, end_time; the benchmark's `args.strategy`).
// Any other `metadata.version` is refused, naming what was found.
//
// What GuideLLM keeps of a request, and how it maps to ours (metrics.ts):
// - sentAt: request_start (epoch s), so the requests line up across each other ("absolute");
// - ttftMs: first_token_iteration − request_start (GuideLLM's time_to_first_token_ms, same definition);
// - e2eMs: last_token_iteration − request_start (the last token, as ours and vLLM's), and lastByteMs:
//   request_end − request_start, which is GuideLLM's request_latency (it runs past the last token to
//   the end of the stream: its trailing usage chunk and [DONE]). Our E2E is therefore the shorter one;
// - tpotMs follows: (e2e − ttft)/(tokens − 1) = (last − first)/(tokens − 1), which is what GuideLLM
//   calls inter_token_latency_ms. GuideLLM's time_per_output_token_ms is another thing, (last −
//   start)/tokens in schema 1 and (last − first)/tokens in 0.2: it has no counterpart here and is
//   only carried in `reported`. GuideLLM's distribution of inter_token_latency_ms is weighted by each
//   request's tokens − 1 and that of time_per_output_token_ms by its tokens, so their means and
//   percentiles are per token, ours per request: they agree when every request has the same length;
// - GuideLLM's percentiles are the lower inverse CDF (the first value whose cumulative share reaches
//   p: np.searchsorted over the cumulative probabilities), ours numpy's linear interpolation, so a
//   percentile can differ by up to the gap between two neighbouring values;
// - chunk arrival times: GuideLLM keeps the first and last token times only, so chunkTimesMs is empty
//   (no ITL, no stalls, no per-chunk timeline) and `missing` says so.
// Requests outside the measured phase (a request that ended before measure_start_time or started
// after measure_end_time: warmup, cooldown) are kept and marked `warmup`, which keeps them out of the
// summary exactly as GuideLLM's metrics leave them out.
import type { ErrorKind, RequestError, RequestRecord, RunFile, WorkloadMode, WorkloadSpec } from '../../core/types';
import type { ApiKind } from '../../core/apis';
import { DEFAULT_PERCENTILES, defaultWorkload } from '../../core/workload';
import { extent, ImportError, importedRun, inRange, isObj, list, obj, RANGE, str, withFields } from './common';
import { num } from '../../core/json';
import type { ImportOptions, ImportedPoint, Obj, Range } from './common';



/** GuideLLM's constant strategy spaces requests evenly; as a gamma of arrival gaps that is a very large shape. */
const CONSTANT_BURSTINESS = 1e6;

/** Whether a parsed JSON/YAML document is a GuideLLM report (of any version: fromGuidellm refuses the ones it cannot read). */
export function isGuidellm(doc: unknown): boolean {
  if (!isObj(doc) || !Array.isArray(doc.benchmarks)) return false;
  if (isObj(doc.metadata) && 'guidellm_version' in doc.metadata) return true;
  return doc.benchmarks.some((b) => isObj(b) && (b.type_ === 'generative_benchmark' || (isObj(b.requests) && isObj(b.metrics))));
}

type Shape = 'v1' | '0.2';

interface Status {
  readonly status: 'successful' | 'incomplete' | 'errored';
  readonly q: Obj;
  /** Its place in its list, for a refusal's field name. */
  readonly i: number;
}

/** What every benchmark of a report is read with. */
interface Context {
  readonly args: Obj;
  readonly percentiles: readonly number[];
  /** What the source lacks, in plain words (added to by each benchmark). */
  readonly missing: Set<string>;
}

type Point = ImportedPoint & { readonly order: number; readonly kind: string };

/** One benchmark read: its point, the requests left out (no start time), its span and the request types its requests name. */
interface Benchmark {
  readonly point: Point;
  readonly dropped: number;
  readonly start: number;
  readonly end: number;
  readonly apiHints: readonly (string | undefined)[];
}

/** The report's benchmarks and the format of each, or the refusal of a version or shape not known. */
function benchmarksOf(doc: unknown, file: string): { benchmarks: readonly unknown[]; shapes: Shape[]; meta: Obj } {
  if (!isObj(doc) || !Array.isArray(doc.benchmarks)) throw new ImportError(file, 'not a GuideLLM report: it has no "benchmarks" list');
  const meta = obj(doc.metadata);
  const guidellmVersion = str(meta.guidellm_version);
  if (meta.version !== undefined && meta.version !== 1) {
    throw new ImportError(
      file,
      `GuideLLM report schema version ${JSON.stringify(meta.version)}${guidellmVersion ? ` (GuideLLM ${guidellmVersion})` : ''} is not supported: ` +
        'llm-profiler reads schema version 1 (GuideLLM 0.3 and later) and the GuideLLM 0.2 format',
    );
  }
  const benchmarks = doc.benchmarks;
  if (benchmarks.length === 0) throw new ImportError(file, 'the GuideLLM report has no benchmarks');
  const shapes: Shape[] = benchmarks.map((b, i) => {
    const shape = shapeOf(b);
    if (!shape) {
      const keys = isObj(b) ? Object.keys(b).slice(0, 12).join(', ') || 'none' : typeof b;
      throw new ImportError(
        file,
        `benchmark ${i + 1} is in no GuideLLM format known here (schema 1 has "config.strategy", GuideLLM 0.2 "args.strategy"); its keys: ${keys}`,
      );
    }
    return shape;
  });
  if (shapes[0] === '0.2' && meta.version !== undefined) throw new ImportError(file, 'metadata.version 1 with benchmarks in the GuideLLM 0.2 format: the file is not one GuideLLM wrote');
  return { benchmarks, shapes, meta };
}

/** The requests GuideLLM saved of a benchmark, with their status; refused when there are none. */
function savedOf(b: Obj, i: number, label: string, file: string): Status[] {
  const reqs = obj(b.requests);
  const saved: Status[] = [];
  for (const status of ['successful', 'incomplete', 'errored'] as const) list(reqs[status]).forEach((q, k) => saved.push({ status, q: obj(q), i: k }));
  if (saved.length === 0) {
    throw new ImportError(
      file,
      `benchmark ${i + 1} (${label}) has no requests saved, only GuideLLM's aggregates. GuideLLM saves every request unless ` +
        '--sample-requests (GuideLLM 0.2: --output-sampling) limits how many: run it again without that option, or with a number at least the request count',
    );
  }
  return saved;
}

/** Benchmark i as a point: its requests in the order sent, how they were sent and GuideLLM's own figures. */
function benchmarkOf(b: Obj, i: number, shape: Shape, ctx: Context, file: string): Benchmark {
  const strategy = obj(shape === 'v1' ? obj(b.config).strategy : obj(b.args).strategy);
  const label = strategyLabel(strategy);
  const saved = savedOf(b, i, label, file);
  const totals = obj(shape === 'v1' ? obj(b.metrics).request_totals : b.request_totals);
  const totalsAt = shape === 'v1' ? 'metrics.request_totals' : 'request_totals';
  const count = (k: string) => inRange(totals[k], RANGE.count, `${totalsAt}.${k}`);
  const made = count('total') ?? (count('successful') ?? 0) + (count('incomplete') ?? 0) + (count('errored') ?? 0);
  if (made > saved.length) {
    ctx.missing.add(`requests: GuideLLM saved ${saved.length} of benchmark ${i + 1}'s ${made} (--sample-requests), so that point's figures are over the saved ones only`);
  }
  const sm = obj(b.scheduler_metrics);
  const measureStart = shape === 'v1' ? (inRange(sm.measure_start_time, RANGE.epochS, 'scheduler_metrics.measure_start_time') ?? inRange(b.start_time, RANGE.epochS, 'start_time')) : undefined;
  const measureEnd = shape === 'v1' ? (inRange(sm.measure_end_time, RANGE.epochS, 'scheduler_metrics.measure_end_time') ?? inRange(b.end_time, RANGE.epochS, 'end_time')) : undefined;
  const records: Omit<RequestRecord, 'index'>[] = [];
  const apiHints: (string | undefined)[] = [];
  let start = Infinity;
  let end = -Infinity;
  for (const s of saved) {
    const r = shape === 'v1' ? requestV1(s, measureStart, measureEnd) : request02(s);
    if (!r) continue;
    records.push(r);
    start = Math.min(start, r.sentAt);
    end = Math.max(end, r.sentAt + (r.lastByteMs ?? r.e2eMs ?? 0));
    if (shape === '0.2') apiHints.push(str(s.q.request_type));
  }
  records.sort((a, b2) => a.sentAt - b2.sentAt);
  const warmups = records.filter((r) => r.warmup).length;
  const mode = modeOf(strategy, records.length);
  const workload: WorkloadSpec = defaultWorkload({
    mode,
    requests: records.length - warmups,
    warmup: warmups,
    ...sentWith(ctx.args, shape === '0.2' ? obj(b.request_loader) : obj(obj(b.config).requests)),
    percentiles: ctx.percentiles,
  });
  const durationS = inRange(b.duration, RANGE.runSeconds, 'duration');
  const rps = inRange(obj(obj(obj(b.metrics).requests_per_second).successful).mean, RANGE.measuredRate, 'metrics.requests_per_second.successful.mean');
  const value = mode.kind === 'open' ? mode.rate : undefined;
  const point: Point = {
    requests: records,
    workload,
    ...(durationS !== undefined ? { durationS } : {}),
    label,
    reported: reportedOf(b, shape),
    order: i,
    kind: str(strategy.type_) ?? 'unknown',
    // on a rate sweep, the closed-loop points (synchronous, throughput) sit at the rate GuideLLM measured, as its own sweep places them
    ...(value !== undefined ? { value } : rps !== undefined ? { value: rps } : {}),
  };
  return { point, dropped: saved.length - records.length, start, end, apiHints };
}

/** The endpoint as the report names it. */
function endpointOf(args: Obj, first: Obj, apiHints: readonly (string | undefined)[]) {
  const backend = obj(obj(first.config).backend);
  const worker = obj(first.worker);
  const model = str(args.model) ?? str(backend.model) ?? str(worker.backend_model);
  return {
    url: str(args.target) ?? str(backend.target) ?? str(worker.backend_target) ?? '',
    api: apiOf([str(args.request_type), str(backend.request_format)].concat(apiHints)),
    ...(model ? { model } : {}),
  };
}

/** A GuideLLM report as a run file: one sweep point per benchmark (a plain run when there is one). */
export function fromGuidellm(doc: unknown, file: string, options: ImportOptions): RunFile {
  const { benchmarks, shapes, meta } = benchmarksOf(doc, file);
  const ctx: Context = {
    args: obj((doc as Obj).args),
    percentiles: options.percentiles ?? DEFAULT_PERCENTILES,
    missing: new Set<string>([
      'chunk arrival times: GuideLLM keeps the first and last token times only, so there are no inter-token latencies (ITL), no stalls and no per-chunk timeline',
    ]),
  };
  // a number out of its range is refused naming the benchmark and the field
  const read = benchmarks.map((b, i) => withFields(file, () => benchmarkOf(b as Obj, i, shapes[i]!, ctx, file), `benchmark ${i + 1}: `));
  const dropped = read.reduce((n, r) => n + r.dropped, 0);
  if (dropped > 0) ctx.missing.add(`${dropped} request(s) without a start time: left out`);
  const start = extent(read.map((r) => r.start)).min;
  const end = extent(read.map((r) => r.end)).max;
  const points = read.map((r) => r.point);
  const guidellmVersion = str(meta.guidellm_version);
  const from = {
    tool: 'guidellm' as const,
    ...(guidellmVersion ? { version: guidellmVersion } : {}),
    file,
    startTimes: 'absolute' as const,
    missing: [...ctx.missing],
    ...(points.length === 1 && points[0]!.reported ? { reported: points[0]!.reported } : {}),
  };
  const endpoint = endpointOf(ctx.args, obj(benchmarks[0]), read.flatMap((r) => r.apiHints));
  const base = { from, startedAt: new Date(Number.isFinite(start) ? start : Date.now()).toISOString(), ...(Number.isFinite(end) ? { endedAt: new Date(end).toISOString() } : {}), endpoint };
  if (points.length === 1) {
    const { order: _o, kind: _k, value: _v, ...only } = points[0]!;
    return importedRun({ ...base, points: [only] });
  }
  const closedOnly = points.every((p) => p.workload.mode.kind === 'closed');
  const dimension = closedOnly ? ('concurrency' as const) : ('rate' as const);
  const swept = points
    .map(({ order: _o, kind: _k, ...p }) => (closedOnly && p.workload.mode.kind === 'closed' ? { ...p, value: p.workload.mode.concurrency } : p))
    .sort((a, b) => (a.value ?? Infinity) - (b.value ?? Infinity));
  return importedRun({ ...base, points: swept, dimension });
}

function shapeOf(b: unknown): Shape | undefined {
  if (!isObj(b)) return undefined;
  if (isObj(b.config) && isObj(b.config.strategy)) return 'v1';
  if (isObj(b.args) && isObj(b.args.strategy)) return '0.2';
  return undefined;
}

/** GuideLLM's own name for a strategy (its __str__: "concurrent@4", "constant@1.50"). */
/** A strategy's numbers, each in its range (the strategy is under config.strategy in schema 1, args.strategy in 0.2: named "strategy" here). */
function strategyNumbers(s: Obj): { streams?: number; rate?: number; maxConcurrency?: number } {
  const streams = inRange(s.streams, RANGE.concurrency, 'strategy.streams');
  const rate = inRange(s.rate, RANGE.rate, 'strategy.rate');
  const maxConcurrency = inRange(s.max_concurrency, RANGE.concurrency, 'strategy.max_concurrency');
  return { ...(streams !== undefined ? { streams } : {}), ...(rate !== undefined ? { rate } : {}), ...(maxConcurrency !== undefined ? { maxConcurrency } : {}) };
}

function strategyLabel(s: Obj): string {
  const kind = str(s.type_) ?? 'unknown';
  const { streams, rate } = strategyNumbers(s);
  if (kind === 'concurrent' && streams !== undefined) return `concurrent@${streams}`;
  if ((kind === 'constant' || kind === 'poisson') && rate !== undefined) return `${kind}@${rate.toFixed(2)}`;
  return kind;
}

function modeOf(s: Obj, saved: number): WorkloadMode {
  const kind = str(s.type_);
  const { streams, rate, maxConcurrency } = strategyNumbers(s);
  if (kind === 'synchronous') return { kind: 'closed', concurrency: 1 };
  if (kind === 'concurrent') return { kind: 'closed', concurrency: streams ?? maxConcurrency ?? 1 };
  if ((kind === 'constant' || kind === 'poisson') && rate !== undefined) {
    return { kind: 'open', rate, burstiness: kind === 'poisson' ? 1 : CONSTANT_BURSTINESS, ...(maxConcurrency !== undefined ? { maxConcurrency } : {}) };
  }
  // throughput: every request at once, up to max_concurrency when set
  return { kind: 'closed', concurrency: maxConcurrency ?? Math.max(1, saved) };
}

/** What the requests were made of, as far as GuideLLM's data spec says ("prompt_tokens=256,output_tokens=128"). */
function sentWith(args: Obj, loader: Obj): Partial<WorkloadSpec> {
  const dataRaw = args.data ?? loader.data;
  const data = Array.isArray(dataRaw) ? dataRaw.filter((d): d is string => typeof d === 'string').join(',') : (str(dataRaw) ?? '');
  const prompt = /prompt_tokens=(\d+)/.exec(data);
  const output = /output_tokens=(\d+)(?:-(\d+))?/.exec(data);
  const maxTokens = output ? inRange(Number(output[2] ?? output[1]), RANGE.count, 'the data spec\'s output_tokens') : undefined;
  const tokens = prompt ? inRange(Number(prompt[1]), RANGE.count, 'the data spec\'s prompt_tokens') : undefined;
  return {
    ...(maxTokens !== undefined ? { maxTokens } : {}),
    ...(tokens !== undefined ? { prompt: { kind: 'synthetic' as const, tokens, sharedPrefix: false } } : data ? { prompt: { kind: 'dataset' as const, path: data } } : {}),
  };
}

function apiOf(hints: readonly (string | undefined)[]): ApiKind {
  return hints.some((h) => h !== undefined && (h.includes('text_completions') || (/\/completions$/.test(h) && !h.includes('chat')))) ? 'openai-completions' : 'openai-chat';
}

const ms = (fromS: number | undefined, toS: number | undefined): number | undefined =>
  fromS !== undefined && toS !== undefined ? (toS - fromS) * 1000 : undefined;

/** What a saved request's times give, in the record's fields: sent at its start, scheduled no later, and each latency and count the file has (none made up). */
type Timed = Pick<RequestRecord, 'scheduledAt' | 'sentAt' | 'ttftMs' | 'ttfoMs' | 'e2eMs' | 'lastByteMs' | 'promptTokens'>;
function timed(startS: number, scheduledS: number | undefined, f: Partial<Pick<Timed, 'ttftMs' | 'ttfoMs' | 'e2eMs' | 'lastByteMs' | 'promptTokens'>>): Timed {
  const sentAt = startS * 1000;
  const out: { -readonly [K in keyof Timed]: Timed[K] } = { scheduledAt: scheduledS !== undefined ? Math.min(scheduledS * 1000, sentAt) : sentAt, sentAt };
  for (const k of ['ttftMs', 'ttfoMs', 'e2eMs', 'lastByteMs', 'promptTokens'] as const) if (f[k] !== undefined) out[k] = f[k];
  return out;
}

/** The checked number at `key` of a saved request (`requests.successful[3].info.timings.request_start` in a refusal). */
function reader(s: Status): (value: unknown, range: Range, key: string) => number | undefined {
  return (value, range, key) => inRange(value, range, () => `requests.${s.status}[${s.i}].${key}`);
}

/** A schema-1 GenerativeRequestStats. */
function requestV1(s: Status, measureStart: number | undefined, measureEnd: number | undefined): Omit<RequestRecord, 'index'> | undefined {
  const { status, q } = s;
  const at = reader(s);
  const info = obj(q.info);
  const t = obj(info.timings);
  const time = (key: string) => at(t[key], RANGE.epochS, `info.timings.${key}`);
  const start = at(q.request_start_time, RANGE.epochS, 'request_start_time') ?? time('request_start') ?? time('resolve_start');
  if (start === undefined) return undefined;
  const first = time('first_token_iteration') ?? time('first_iteration');
  const last = time('last_token_iteration') ?? time('last_iteration');
  const end = at(q.request_end_time, RANGE.epochS, 'request_end_time') ?? time('request_end') ?? time('resolve_end');
  const ttftMs = at(q.time_to_first_token_ms, RANGE.ms, 'time_to_first_token_ms') ?? ms(start, first);
  const ttfoMs = at(q.time_to_first_output_token_ms, RANGE.ms, 'time_to_first_output_token_ms') ?? ms(start, time('first_output_token_iteration'));
  const usage = at(obj(q.output_metrics).total_tokens, RANGE.count, 'output_metrics.total_tokens');
  const outputTokens = at(q.output_tokens, RANGE.count, 'output_tokens') ?? usage ?? at(t.token_iterations, RANGE.count, 'info.timings.token_iterations') ?? 0;
  const promptTokens = at(q.prompt_tokens, RANGE.count, 'prompt_tokens') ?? at(obj(q.input_metrics).total_tokens, RANGE.count, 'input_metrics.total_tokens');
  const warmup = (measureStart !== undefined && end !== undefined && end < measureStart) || (measureEnd !== undefined && start > measureEnd);
  return {
    ...(str(q.response_id) ? { responseId: str(q.response_id)! } : {}),
    warmup,
    ...timed(start, time('targeted_start'), { ttftMs, ttfoMs, e2eMs: last !== undefined ? ms(start, last) : ms(start, end), lastByteMs: ms(start, end), promptTokens }),
    outputTokens,
    // GuideLLM counts tokens from the server's usage when it reports one, else one per streamed iteration
    tokenSource: usage !== undefined ? 'usage' : 'chunks',
    chunkTimesMs: [],
    ...(status !== 'successful' ? { error: errorOf(status, str(info.error)) } : {}),
  };
}

/** A 0.2.x GenerativeTextResponseStats or GenerativeTextErrorStats (0.2 saves no warmup or cooldown requests). */
function request02(s: Status): Omit<RequestRecord, 'index'> | undefined {
  const { status, q } = s;
  const at = reader(s);
  const time = (key: string) => at(q[key], RANGE.epochS, key);
  const start = time('start_time');
  if (start === undefined) return undefined;
  const first = time('first_token_time');
  const last = time('last_token_time');
  const end = time('end_time');
  const scheduled = at(obj(q.scheduler_info).targeted_start_time, RANGE.epochS, 'scheduler_info.targeted_start_time');
  return {
    warmup: false,
    ...timed(start, scheduled, { ttftMs: ms(start, first), e2eMs: last !== undefined ? ms(start, last) : ms(start, end), lastByteMs: ms(start, end),
      promptTokens: at(q.prompt_tokens, RANGE.count, 'prompt_tokens') }),
    outputTokens: at(q.output_tokens, RANGE.count, 'output_tokens') ?? 0,
    tokenSource: 'usage',
    chunkTimesMs: [],
    ...(status !== 'successful' ? { error: errorOf(status, str(q.error)) } : {}),
  };
}

/** GuideLLM's error text, under the closest of our kinds. */
function errorOf(status: 'incomplete' | 'errored', message: string | undefined): RequestError {
  if (status === 'incomplete') {
    return { kind: 'aborted', message: `incomplete: ${message ?? 'GuideLLM cancelled the request when the benchmark stopped'}` };
  }
  const text = message ?? 'errored (GuideLLM recorded no message)';
  const httpStatus = /\b(?:HTTPStatusError|ClientResponseError|status(?: code)?|Server error|Client error)\b[^0-9]{0,12}([1-5]\d\d)\b/i.exec(text);
  let kind: ErrorKind = 'other';
  if (httpStatus) kind = 'http';
  else if (/timeout|timed out/i.test(text)) kind = 'timeout';
  else if (/connect(?:ion)?(?:error| refused)|ConnectError/i.test(text)) kind = 'connect';
  return { kind, message: text, ...(httpStatus ? { status: Number(httpStatus[1]) } : {}) };
}

/** GuideLLM's own figures for a benchmark, under its names ("time_to_first_token_ms.successful.p99"). */
function reportedOf(b: Obj, shape: Shape): Readonly<Record<string, number>> | undefined {
  const metrics = obj(b.metrics);
  const out: Record<string, number> = {};
  const names = [
    'time_to_first_token_ms',
    'time_to_first_output_token_ms',
    'inter_token_latency_ms',
    'time_per_output_token_ms',
    'request_latency',
    'requests_per_second',
    'output_tokens_per_second',
    'tokens_per_second',
    'prompt_token_count',
    'output_token_count',
  ];
  for (const name of names) {
    const d = obj(obj(metrics[name]).successful);
    for (const stat of ['mean', 'median', 'std_dev', 'min', 'max', 'count']) {
      const v = num(d[stat]);
      if (v !== undefined) out[`${name}.successful.${stat}`] = v;
    }
    const p = obj(d.percentiles);
    for (const key of ['p50', 'p90', 'p95', 'p99', 'p999']) {
      const v = num(p[key]);
      if (v !== undefined) out[`${name}.successful.${key}`] = v;
    }
  }
  const totals = obj(shape === 'v1' ? metrics.request_totals : b.request_totals);
  for (const k of ['successful', 'incomplete', 'errored', 'total']) {
    const v = num(totals[k]);
    if (v !== undefined) out[`request_totals.${k}`] = v;
  }
  const duration = num(b.duration);
  if (duration !== undefined) out.duration = duration;
  return Object.keys(out).length > 0 ? out : undefined;
}
