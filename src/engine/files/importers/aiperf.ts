// AIPerf's profile_export.jsonl (ai-dynamo/aiperf) as a run: one line per request, each a
// MetricRecordInfo {metadata, metrics: {tag: {value, unit}}, error}; the profile_export_aiperf.json
// beside it gives the run's settings (input_config), AIPerf's version and its aggregate figures.
// Two shapes are read, told from the fields present:
// - the shape of AIPerf's own example artifacts (examples/artifacts/run1 @ 7c31f579): metadata
//   `timestamp_ns` (the request's start, wall clock) and `credit_phase`, tags `ttft`, `ttst`; the
//   aggregate's metrics under "records";
// - the later one (src/aiperf/common/models/record_export_models.py @ 745695dd, MetricRecordMetadata
//   in record_models.py): `request_start_ns` / `request_end_ns`, `benchmark_phase`, tags
//   `time_to_first_token`, `time_to_second_token`; the aggregate (export_models.py JsonExportData @
//   26240f9e) with its metrics at the top level beside `schema_version` and `aiperf_version`.
//
// How AIPerf's per-request metrics map to ours (metrics.ts):
// - sentAt: the request's start (epoch ns), so the requests line up ("absolute");
// - ttftMs: AIPerf's time_to_first_token (first response − request start), same definition;
// - e2eMs: AIPerf's request_latency, which ends at the last response carrying content (not a usage-only
//   chunk: metrics/types/request_latency_metric.py @ 4f7ccffd), as ours;
// - chunkTimesMs: ttft, then ttft plus the running sum of AIPerf's inter_chunk_latency (the gaps between
//   consecutive content responses, inter_chunk_latency_metric.py @ 58028d5b), so our ITL values are its
//   inter_chunk_latency values and stalls and the timeline work; absent when the line has no list;
// - outputTokens: output_sequence_length, reasoning included (reasoning_token_count is its part);
// - tpotMs follows: (e2e − ttft)/(tokens − 1), which is what AIPerf calls inter_token_latency
//   (inter_token_latency_metric.py @ 58dd5dea: (request_latency − ttft)/(osl − 1), unless
//   --per-chunk-usage gives the first chunk's own count);
// - AIPerf's percentiles are numpy's linear ones and its std the population one (metric_dicts.py
//   @ 0fec57a6), as ours, so the figures agree to the last digit AIPerf writes.
// A request that failed carries AIPerf's error (code, type, message); one AIPerf cancelled on purpose
// (--request-cancellation-rate: code 499, RequestCancellationError) is kind "aborted".
import { basename, dirname, join } from 'node:path';
import type { ErrorKind, RequestError, RequestRecord, RunFile, WorkloadMode, WorkloadSpec } from '../../core/types';
import type { ApiKind } from '../../core/apis';
import { readUntrustedFile, UntrustedFileError } from '../untrustedFile';
import { DEFAULT_PERCENTILES, defaultWorkload } from '../../core/workload';
import { extent, ImportError, importedRun, inRange, isObj, obj, RANGE, str, withFields } from './common';
import { num } from '../../core/json';
import type { ImportOptions, Obj, Range } from './common';



/** AIPerf's rate mode "constant" spaces requests evenly; as a gamma of arrival gaps that is a very large shape. */
const CONSTANT_BURSTINESS = 1e6;

/** Whether the first parsed line of a .jsonl is an AIPerf per-request record. */
export function isAiperfRecord(firstLine: unknown): boolean {
  if (!isObj(firstLine) || !isObj(firstLine.metadata) || !isObj(firstLine.metrics)) return false;
  const m = firstLine.metadata;
  return 'request_start_ns' in m || 'timestamp_ns' in m || 'benchmark_phase' in m || 'credit_phase' in m;
}

/** Whether a parsed JSON document is AIPerf's aggregate profile_export_aiperf.json (which holds no requests). */
export function isAiperfAggregate(doc: unknown): boolean {
  if (!isObj(doc)) return false;
  if (isObj(doc.records) && isObj(doc.input_config)) return true;
  return ('aiperf_version' in doc || 'schema_version' in doc) && isObj(doc.input_config);
}

/** The refusal of an aggregate given alone: it has AIPerf's figures but not one request. */
export function aiperfAggregateAlone(file: string): ImportError {
  return new ImportError(
    file,
    "this is AIPerf's aggregate (profile_export_aiperf.json): it holds AIPerf's summary figures, not the requests. " +
      'Open the profile_export.jsonl beside it (its figures are read from this file then)',
  );
}

const SIDECAR = 'profile_export_aiperf.json';

/** The records of a profile_export.jsonl, in the order sent, and how many streamed requests lack chunk times. */
function recordsOf(file: string, text: string): { records: Omit<RequestRecord, 'index'>[]; noChunks: number; streamed: number } {
  const lines = text.split(/\r?\n/);
  const records: Omit<RequestRecord, 'index'>[] = [];
  let noChunks = 0;
  let streamed = 0;
  for (const [i, line] of lines.entries()) {
    if (line.trim() === '') continue;
    let rec: unknown;
    try {
      rec = JSON.parse(line);
    } catch (e) {
      if (i === 0 && looksLikeAggregate(text)) throw aiperfAggregateAlone(file);
      throw new ImportError(file, `line ${i + 1} is not JSON (${(e as Error).message}); each line of AIPerf's profile_export.jsonl is one JSON record`);
    }
    if (!isAiperfRecord(rec)) {
      if (i === 0 && isAiperfAggregate(rec)) throw aiperfAggregateAlone(file);
      throw new ImportError(file, `line ${i + 1} is not an AIPerf record: it needs "metadata" (with request_start_ns or timestamp_ns) and "metrics"`);
    }
    const r = withFields(file, () => requestOf(rec as Obj, i + 1, file), `line ${i + 1}: `);
    if (r.error === undefined && r.outputTokens > 1) {
      streamed++;
      if (r.chunkTimesMs.length === 0) noChunks++;
    }
    records.push(r);
  }
  if (records.length === 0) throw new ImportError(file, 'no AIPerf records: the file is empty');
  records.sort((a, b) => a.sentAt - b.sentAt);
  return { records, noChunks, streamed };
}

/** How the requests were sent, from the aggregate's input_config (numbers refused, naming the aggregate, when out of range). */
function workloadOf(config: Obj, records: readonly Omit<RequestRecord, 'index'>[], options: ImportOptions): WorkloadSpec {
  const measured = records.filter((r) => !r.warmup).length;
  const output = obj(obj(config.input).prompt).output_tokens;
  // a number, or (a later AIPerf) a distribution {mean, stddev}
  const maxTokens = inRange(output, RANGE.count, 'input_config.input.prompt.output_tokens') ?? inRange(obj(output).mean, RANGE.meanCount, 'input_config.input.prompt.output_tokens.mean');
  return defaultWorkload({
    mode: modeOf(obj(config.loadgen)),
    requests: measured,
    warmup: records.length - measured,
    ...(maxTokens !== undefined ? { maxTokens } : {}),
    percentiles: options.percentiles ?? DEFAULT_PERCENTILES,
  });
}

/** What the source lacks, in plain words. */
function missingOf(sidecar: Sidecar, records: readonly Omit<RequestRecord, 'index'>[], noChunks: number, streamed: number): string[] {
  const missing: string[] = [];
  if (sidecar.problem) missing.push(sidecar.problem);
  if (noChunks > 0) {
    missing.push(
      `chunk arrival times: AIPerf wrote no inter_chunk_latency for ${noChunks} of ${streamed} streamed requests, so those have no inter-token latencies (ITL), stalls or per-chunk timeline`,
    );
  }
  if (records.some((r) => (r.reasoningTokens ?? 0) > 0 && r.ttfoMs === undefined)) {
    missing.push('time to first output token (after the reasoning): this AIPerf file has reasoning tokens but no time_to_first_output_token');
  }
  if (!sidecar.doc && !sidecar.problem) missing.push(`how the requests were sent (concurrency or rate) and AIPerf's own figures: ${SIDECAR} was not beside the file`);
  return missing;
}

/** A profile_export.jsonl (its whole text) as a run; reads profile_export_aiperf.json beside it when there is one. */
export async function fromAiperf(file: string, text: string, options: ImportOptions): Promise<RunFile> {
  const { records, noChunks, streamed } = recordsOf(file, text);
  const sidecar = await readSidecar(file);
  const missing = missingOf(sidecar, records, noChunks, streamed);
  const agg = sidecar.doc;
  const config = obj(agg?.input_config);
  const endpointCfg = obj(config.endpoint);
  const aggName = basename(sidecar.path ?? SIDECAR);
  const { workload, duration } = withFields(
    file,
    () => ({ workload: workloadOf(config, records, options), duration: agg ? inRange(obj(metricsOf(agg).benchmark_duration).avg, RANGE.runSeconds, 'benchmark_duration.avg') : undefined }),
    `${aggName} beside it: `,
  );
  const reported = agg ? reportedOf(agg) : undefined;
  const { min: start } = extent(records.map((r) => r.sentAt));
  const { max: end } = extent(records.map((r) => r.sentAt + (r.e2eMs ?? 0)));
  const model = Array.isArray(endpointCfg.model_names) ? str(endpointCfg.model_names[0]) : undefined;
  const version = agg ? str(agg.aiperf_version) : undefined;
  return importedRun({
    from: {
      tool: 'aiperf',
      ...(version ? { version } : {}),
      file,
      ...(sidecar.path && agg ? { files: [sidecar.path] } : {}),
      startTimes: 'absolute',
      ...(missing.length > 0 ? { missing } : {}),
      ...(reported ? { reported } : {}),
    },
    startedAt: new Date(start).toISOString(),
    endedAt: new Date(end).toISOString(),
    endpoint: { url: urlOf(str(endpointCfg.url)), api: apiOf(str(endpointCfg.type)), ...(model ? { model } : {}) },
    points: [{ requests: records, workload, ...(duration !== undefined ? { durationS: duration } : {}) }],
  });
}

function looksLikeAggregate(text: string): boolean {
  try {
    return isAiperfAggregate(JSON.parse(text));
  } catch {
    return false;
  }
}

/** A metric's value in ms (durations) or as it is (counts), from AIPerf's {value, unit}, checked against `range`. */
function valueOf(m: Obj, range: Range, ...tags: string[]): number | undefined {
  for (const tag of tags) {
    const mv = obj(m[tag]);
    const unit = str(mv.unit);
    const v = inRange(mv.value, range, () => `metrics.${tag}.value`, toMs(unit), unit);
    if (v !== undefined) return v;
  }
  return undefined;
}

function toMs(unit: string | undefined): number {
  switch (unit) {
    case 'ns':
      return 1e-6;
    case 'us':
      return 1e-3;
    case 's':
    case 'sec':
      return 1000;
    default:
      return 1; // ms, and the counts (tokens, requests)
  }
}

/** The chunk arrival times (ms after the send): the TTFT, then each of AIPerf's inter_chunk_latency gaps added. */
function chunkTimesOf(m: Obj, ttftMs: number | undefined, oneToken: boolean): number[] {
  const icl = obj(m.inter_chunk_latency);
  const gaps = Array.isArray(icl.value) ? icl.value : undefined;
  if (ttftMs === undefined) return [];
  if (!gaps) return oneToken ? [ttftMs] : [];
  const unit = str(icl.unit);
  const times = [ttftMs];
  let t = ttftMs;
  for (let j = 0; j < gaps.length; j++) {
    const gap = inRange(gaps[j], RANGE.ms, () => `metrics.inter_chunk_latency.value[${j}]`, toMs(unit), unit);
    // a list with something else than numbers in it is no list of gaps
    if (gap === undefined) return oneToken ? [ttftMs] : [];
    times.push((t += gap));
  }
  return times;
}

function requestOf(rec: Obj, lineNo: number, file: string): Omit<RequestRecord, 'index'> {
  const meta = obj(rec.metadata);
  const m = obj(rec.metrics);
  const startNs = inRange(meta.request_start_ns, RANGE.epochNs, 'metadata.request_start_ns') ?? inRange(meta.timestamp_ns, RANGE.epochNs, 'metadata.timestamp_ns');
  if (startNs === undefined) throw new ImportError(file, `line ${lineNo}: the record has no start time (metadata.request_start_ns or timestamp_ns)`);
  const sentAt = startNs / 1e6;
  const phase = str(meta.benchmark_phase) ?? str(meta.credit_phase);
  const ttftMs = valueOf(m, RANGE.ms, 'time_to_first_token', 'ttft');
  const ttfoMs = valueOf(m, RANGE.ms, 'time_to_first_output_token');
  const latency = valueOf(m, RANGE.ms, 'request_latency');
  const endNs = inRange(meta.request_end_ns, RANGE.epochNs, 'metadata.request_end_ns');
  const failed = isObj(rec.error);
  const e2eMs = latency ?? (failed && endNs !== undefined && endNs >= startNs ? (endNs - startNs) / 1e6 : undefined);
  const outputTokens = valueOf(m, RANGE.count, 'output_sequence_length') ?? valueOf(m, RANGE.count, 'output_token_count') ?? 0;
  const reasoning = valueOf(m, RANGE.count, 'reasoning_token_count');
  const promptTokens = valueOf(m, RANGE.count, 'input_sequence_length');
  const chunkTimesMs = chunkTimesOf(m, ttftMs, !failed && outputTokens === 1);
  const credit = inRange(meta.credit_issued_ns, RANGE.epochNs, 'metadata.credit_issued_ns');
  return {
    warmup: phase === 'warmup',
    scheduledAt: credit !== undefined ? Math.min(credit / 1e6, sentAt) : sentAt,
    sentAt,
    ...(ttftMs !== undefined ? { ttftMs } : {}),
    ...(ttfoMs !== undefined ? { ttfoMs } : {}),
    ...(e2eMs !== undefined ? { e2eMs } : {}),
    ...(promptTokens !== undefined ? { promptTokens } : {}),
    outputTokens,
    ...(reasoning !== undefined && reasoning > 0 ? { reasoningTokens: reasoning } : {}),
    // AIPerf counts output tokens itself (its tokenizer over the text) unless told to use the server's usage
    tokenSource: 'usage',
    chunkTimesMs,
    ...(failed ? errorOf(obj(rec.error)) : {}),
  };
}

function errorOf(e: Obj): { error: RequestError; httpStatus?: number } {
  const code = num(e.code);
  const type = str(e.type);
  const message = [type, str(e.message)].filter(Boolean).join(': ') || 'failed (AIPerf recorded no message)';
  let kind: ErrorKind = 'other';
  if (code === 499 || type === 'RequestCancellationError') kind = 'aborted';
  else if (code !== undefined && code >= 400 && code < 600) kind = 'http';
  else if (/timeout/i.test(message)) kind = 'timeout';
  return { error: { kind, message, ...(kind === 'http' ? { status: code! } : {}) }, ...(kind === 'http' ? { httpStatus: code! } : {}) };
}

function modeOf(loadgen: Obj): WorkloadMode {
  const rate = inRange(loadgen.request_rate, RANGE.rate, 'input_config.loadgen.request_rate');
  const concurrency = inRange(loadgen.concurrency, RANGE.concurrency, 'input_config.loadgen.concurrency');
  if (rate !== undefined) {
    const constant = str(loadgen.request_rate_mode) === 'constant';
    return { kind: 'open', rate, burstiness: constant ? CONSTANT_BURSTINESS : 1, ...(concurrency !== undefined ? { maxConcurrency: concurrency } : {}) };
  }
  return { kind: 'closed', concurrency: concurrency ?? 1 };
}

function apiOf(type: string | undefined): ApiKind {
  return type === 'completions' ? 'openai-completions' : 'openai-chat';
}

/** AIPerf writes its --url as given ("localhost:9000"): a scheme is added so it reads as a URL. */
function urlOf(url: string | undefined): string {
  if (!url) return '';
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(url) ? url : `http://${url}`;
}

/** The aggregate's metrics: under "records" in the earlier shape, at the top level in the later one. */
function metricsOf(agg: Obj): Obj {
  return isObj(agg.records) ? agg.records : agg;
}

const REPORTED_TAGS = [
  'time_to_first_token',
  'ttft',
  'time_to_second_token',
  'ttst',
  'time_to_first_output_token',
  'request_latency',
  'inter_token_latency',
  'inter_chunk_latency',
  'output_token_throughput_per_user',
  'output_sequence_length',
  'input_sequence_length',
  'reasoning_token_count',
  'request_throughput',
  'output_token_throughput',
  'benchmark_duration',
  'request_count',
  'error_request_count',
];
const REPORTED_STATS = ['avg', 'min', 'max', 'std', 'p1', 'p5', 'p10', 'p25', 'p50', 'p75', 'p90', 'p95', 'p99'];

/** AIPerf's own figures, under its names ("time_to_first_token.p99"). */
function reportedOf(agg: Obj): Readonly<Record<string, number>> | undefined {
  const metrics = metricsOf(agg);
  const out: Record<string, number> = {};
  for (const tag of REPORTED_TAGS) {
    const r = obj(metrics[tag]);
    for (const stat of REPORTED_STATS) {
      const v = num(r[stat]);
      if (v !== undefined) out[`${tag}.${stat}`] = v;
    }
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

/** The aggregate is a few kilobytes; a larger file beside the records is not AIPerf's. */
const SIDECAR_MAX_BYTES = 64 * 2 ** 20;

interface Sidecar {
  readonly doc?: Obj;
  readonly path?: string;
  readonly problem?: string;
}

async function readSidecar(file: string): Promise<Sidecar> {
  const dir = dirname(file);
  const stem = basename(file).replace(/\.jsonl$/i, '');
  // AIPerf names the aggregate after the record file's stem (profile_export → profile_export_aiperf.json)
  const candidates = [...new Set([join(dir, `${stem}_aiperf.json`), join(dir, SIDECAR)])];
  for (const path of candidates) {
    let text: string;
    try {
      // beside an untrusted file, as untrusted: a FIFO or a link to /dev/zero there must not hang the import
      text = (await readUntrustedFile(path, { maxBytes: SIDECAR_MAX_BYTES })).toString('utf8');
    } catch (e) {
      if (!(e instanceof UntrustedFileError)) throw e;
      if ((e.cause as NodeJS.ErrnoException | undefined)?.code === 'ENOENT') continue;
      return { path, problem: `${basename(path)} beside the file was not read (${e.message}): AIPerf's settings and figures are left out` };
    }
    try {
      const doc: unknown = JSON.parse(text);
      if (!isObj(doc)) return { path, problem: `${basename(path)} beside the file is not a JSON object: AIPerf's settings and figures are left out` };
      return { doc, path };
    } catch (e) {
      return { path, problem: `${basename(path)} beside the file is not JSON (${(e as Error).message}): AIPerf's settings and figures are left out` };
    }
  }
  return {};
}
