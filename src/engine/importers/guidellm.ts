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
import type { ApiKind, ErrorKind, RequestError, RequestRecord, RunFile, WorkloadMode, WorkloadSpec } from '../types';
import { DEFAULT_PERCENTILES, defaultWorkload } from '../workload';
import { ImportError, importedRun, isObj, list, num, obj, str, type ImportedPoint, type Obj } from './common';
import type { ImportOptions } from './index';



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
}

/** A GuideLLM report as a run file: one sweep point per benchmark (a plain run when there is one). */
export function fromGuidellm(doc: unknown, file: string, options: ImportOptions): RunFile {
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
  const percentiles = options.percentiles ?? DEFAULT_PERCENTILES;
  const args = obj(doc.args);
  const missing = new Set<string>([
    'chunk arrival times: GuideLLM keeps the first and last token times only, so there are no inter-token latencies (ITL), no stalls and no per-chunk timeline',
  ]);

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

  let apiHint = [str(args.request_type), str(obj(obj(obj(benchmarks[0]).config).backend).request_format)];
  const points: (ImportedPoint & { readonly order: number; readonly kind: string })[] = [];
  let start = Infinity;
  let end = -Infinity;
  let dropped = 0;
  for (const [i, raw] of benchmarks.entries()) {
    const b = raw as Obj;
    const shape = shapes[i]!;
    const strategy = obj(shape === 'v1' ? obj(b.config).strategy : obj(b.args).strategy);
    const kind = str(strategy.type_) ?? 'unknown';
    const label = strategyLabel(strategy);
    const reqs = obj(b.requests);
    const saved: Status[] = [
      ...list(reqs.successful).map((q) => ({ status: 'successful' as const, q: obj(q) })),
      ...list(reqs.incomplete).map((q) => ({ status: 'incomplete' as const, q: obj(q) })),
      ...list(reqs.errored).map((q) => ({ status: 'errored' as const, q: obj(q) })),
    ];
    if (saved.length === 0) {
      throw new ImportError(
        file,
        `benchmark ${i + 1} (${label}) has no requests saved, only GuideLLM's aggregates. GuideLLM saves every request unless ` +
          '--sample-requests (GuideLLM 0.2: --output-sampling) limits how many: run it again without that option, or with a number at least the request count',
      );
    }
    const totals = obj(shape === 'v1' ? obj(b.metrics).request_totals : b.request_totals);
    const made = num(totals.total) ?? (num(totals.successful) ?? 0) + (num(totals.incomplete) ?? 0) + (num(totals.errored) ?? 0);
    if (made > saved.length) {
      missing.add(`requests: GuideLLM saved ${saved.length} of benchmark ${i + 1}'s ${made} (--sample-requests), so that point's figures are over the saved ones only`);
    }
    const measureStart = shape === 'v1' ? num(obj(b.scheduler_metrics).measure_start_time) ?? num(b.start_time) : undefined;
    const measureEnd = shape === 'v1' ? num(obj(b.scheduler_metrics).measure_end_time) ?? num(b.end_time) : undefined;
    const records: Omit<RequestRecord, 'index'>[] = [];
    for (const s of saved) {
      const r = shape === 'v1' ? requestV1(s, measureStart, measureEnd) : request02(s);
      if (!r) {
        dropped++;
        continue;
      }
      records.push(r);
      start = Math.min(start, r.sentAt);
      end = Math.max(end, r.sentAt + (r.lastByteMs ?? r.e2eMs ?? 0));
      if (shape === '0.2') apiHint = [...apiHint, str(s.q.request_type)];
    }
    records.sort((a, b2) => a.sentAt - b2.sentAt);
    const measured = records.filter((r) => !r.warmup);
    const mode = modeOf(strategy, records.length);
    const workload: WorkloadSpec = defaultWorkload({
      mode,
      requests: measured.length,
      warmup: records.length - measured.length,
      ...sentWith(args, shape === '0.2' ? obj(b.request_loader) : obj(obj(b.config).requests)),
      percentiles,
    });
    const reported = reportedOf(b, shape);
    const rps = num(obj(obj(obj(b.metrics).requests_per_second).successful).mean);
    const value = mode.kind === 'open' ? mode.rate : undefined;
    points.push({
      requests: records,
      workload,
      ...(num(b.duration) !== undefined ? { durationS: num(b.duration)! } : {}),
      label,
      reported,
      order: i,
      kind,
      // on a rate sweep, the closed-loop points (synchronous, throughput) sit at the rate GuideLLM measured, as its own sweep places them
      ...(value !== undefined ? { value } : rps !== undefined ? { value: rps } : {}),
    });
  }
  if (dropped > 0) missing.add(`${dropped} request(s) without a start time: left out`);

  const from = {
    tool: 'guidellm' as const,
    ...(guidellmVersion ? { version: guidellmVersion } : {}),
    file,
    startTimes: 'absolute' as const,
    missing: [...missing],
    ...(points.length === 1 && points[0]!.reported ? { reported: points[0]!.reported } : {}),
  };
  const first = obj(benchmarks[0]);
  const backend = obj(obj(first.config).backend);
  const worker = obj(first.worker);
  const endpoint = {
    url: str(args.target) ?? str(backend.target) ?? str(worker.backend_target) ?? '',
    api: apiOf(apiHint),
    ...((str(args.model) ?? str(backend.model) ?? str(worker.backend_model)) ? { model: (str(args.model) ?? str(backend.model) ?? str(worker.backend_model))! } : {}),
  };
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
function strategyLabel(s: Obj): string {
  const kind = str(s.type_) ?? 'unknown';
  if (kind === 'concurrent' && num(s.streams) !== undefined) return `concurrent@${num(s.streams)}`;
  if ((kind === 'constant' || kind === 'poisson') && num(s.rate) !== undefined) return `${kind}@${num(s.rate)!.toFixed(2)}`;
  return kind;
}

function modeOf(s: Obj, saved: number): WorkloadMode {
  const kind = str(s.type_);
  const maxConcurrency = num(s.max_concurrency);
  if (kind === 'synchronous') return { kind: 'closed', concurrency: 1 };
  if (kind === 'concurrent') return { kind: 'closed', concurrency: num(s.streams) ?? maxConcurrency ?? 1 };
  if ((kind === 'constant' || kind === 'poisson') && num(s.rate) !== undefined) {
    return { kind: 'open', rate: num(s.rate)!, burstiness: kind === 'poisson' ? 1 : CONSTANT_BURSTINESS, ...(maxConcurrency !== undefined ? { maxConcurrency } : {}) };
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
  return {
    ...(output ? { maxTokens: Number(output[2] ?? output[1]) } : {}),
    ...(prompt ? { prompt: { kind: 'synthetic' as const, tokens: Number(prompt[1]), sharedPrefix: false } } : data ? { prompt: { kind: 'dataset' as const, path: data } } : {}),
  };
}

function apiOf(hints: readonly (string | undefined)[]): ApiKind {
  return hints.some((h) => h !== undefined && (h.includes('text_completions') || (/\/completions$/.test(h) && !h.includes('chat')))) ? 'openai-completions' : 'openai-chat';
}

const ms = (fromS: number | undefined, toS: number | undefined): number | undefined =>
  fromS !== undefined && toS !== undefined ? (toS - fromS) * 1000 : undefined;

/** A schema-1 GenerativeRequestStats. */
function requestV1({ status, q }: Status, measureStart: number | undefined, measureEnd: number | undefined): Omit<RequestRecord, 'index'> | undefined {
  const info = obj(q.info);
  const t = obj(info.timings);
  const start = num(q.request_start_time) ?? num(t.request_start) ?? num(t.resolve_start);
  if (start === undefined) return undefined;
  const first = num(t.first_token_iteration) ?? num(t.first_iteration);
  const last = num(t.last_token_iteration) ?? num(t.last_iteration);
  const end = num(q.request_end_time) ?? num(t.request_end) ?? num(t.resolve_end);
  const ttftMs = num(q.time_to_first_token_ms) ?? ms(start, first);
  const ttfoMs = num(q.time_to_first_output_token_ms) ?? ms(start, num(t.first_output_token_iteration));
  const outputTokens = num(q.output_tokens) ?? num(obj(q.output_metrics).total_tokens) ?? num(t.token_iterations) ?? 0;
  const promptTokens = num(q.prompt_tokens) ?? num(obj(q.input_metrics).total_tokens);
  const e2eMs = last !== undefined ? ms(start, last) : ms(start, end);
  const lastByteMs = ms(start, end);
  const warmup = (measureStart !== undefined && end !== undefined && end < measureStart) || (measureEnd !== undefined && start > measureEnd);
  const sentAt = start * 1000;
  const scheduled = num(t.targeted_start);
  return {
    ...(str(q.response_id) ? { responseId: str(q.response_id)! } : {}),
    warmup,
    scheduledAt: scheduled !== undefined ? Math.min(scheduled * 1000, sentAt) : sentAt,
    sentAt,
    ...(ttftMs !== undefined ? { ttftMs } : {}),
    ...(ttfoMs !== undefined ? { ttfoMs } : {}),
    ...(e2eMs !== undefined ? { e2eMs } : {}),
    ...(lastByteMs !== undefined ? { lastByteMs } : {}),
    ...(promptTokens !== undefined ? { promptTokens } : {}),
    outputTokens,
    // GuideLLM counts tokens from the server's usage when it reports one, else one per streamed iteration
    tokenSource: num(obj(q.output_metrics).total_tokens) !== undefined ? 'usage' : 'chunks',
    chunkTimesMs: [],
    ...(status !== 'successful' ? { error: errorOf(status, str(info.error)) } : {}),
  };
}

/** A 0.2.x GenerativeTextResponseStats or GenerativeTextErrorStats (0.2 saves no warmup or cooldown requests). */
function request02({ status, q }: Status): Omit<RequestRecord, 'index'> | undefined {
  const start = num(q.start_time);
  if (start === undefined) return undefined;
  const first = num(q.first_token_time);
  const last = num(q.last_token_time);
  const end = num(q.end_time);
  const ttftMs = ms(start, first);
  const e2eMs = last !== undefined ? ms(start, last) : ms(start, end);
  const lastByteMs = ms(start, end);
  const sentAt = start * 1000;
  const scheduled = num(obj(q.scheduler_info).targeted_start_time);
  const promptTokens = num(q.prompt_tokens);
  return {
    warmup: false,
    scheduledAt: scheduled !== undefined ? Math.min(scheduled * 1000, sentAt) : sentAt,
    sentAt,
    ...(ttftMs !== undefined ? { ttftMs } : {}),
    ...(e2eMs !== undefined ? { e2eMs } : {}),
    ...(lastByteMs !== undefined ? { lastByteMs } : {}),
    ...(promptTokens !== undefined ? { promptTokens } : {}),
    outputTokens: num(q.output_tokens) ?? 0,
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
