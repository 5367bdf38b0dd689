// vLLM's benchmark results as runs: `vllm bench serve --save-result --save-detailed` and the older
// `benchmarks/benchmark_serving.py --save-result --save-detailed`. Read from their source
// (vllm-project/vllm):
//  - vllm/benchmarks/serve.py (blob of commit 009e6d4a1cd6): the result dict of `benchmark()` and
//    `main_async()`: per request input_lens, output_lens, ttfts (s), itls (s, lists), latencies (s),
//    start_times (time.perf_counter() s: offsets only), queue_times (s), generated_texts, errors;
//    aggregates duration, completed, failed, mean/median/std/p{N}_{ttft,tpot,itl,e2el}_ms…; setup
//    date ("%Y%m%d-%H%M%S", local time, written after the run), backend, label, model_id,
//    num_prompts, request_rate ("inf" or a number), burstiness, max_concurrency, and the --metadata
//    KEY=VALUE pairs. Without --save-detailed the lists except latencies and queue_times are removed.
//  - vllm/benchmarks/lib/endpoint_request_func.py (blob of 02cfb534df56): ttft = first chunk with
//    choices − send; itl = gaps between such chunks; latency = the last such chunk − send; a failed
//    request keeps ttft 0 and an error text (the HTTP reason or a traceback).
//  - benchmarks/benchmark_serving.py (blobs of 0049e29c41fd and 8668d7c05027): the same per-request
//    lists without latencies, start_times and queue_times; no "failed" key (an old one spells
//    "request_goodput:" with a colon); at 8668d7c mean_e2el_ms and median_e2el_ms are swapped
//    (np.median and np.mean); benchmarks/backend_request_func.py (blob of 011841309828) then timed
//    latency at [DONE], not at the last chunk.
// Only fields are mapped here: the statistics come from importedRun (common.ts), with vLLM's own
// definitions (metrics.ts), so that they can be set beside vLLM's own figures (`reported`).
import type { ErrorKind, ImportedFrom, RequestError, RequestRecord, RunFile, WorkloadMode, WorkloadSpec } from '../../core/types';
import type { ApiKind } from '../../core/apis';
import { DEFAULT_PERCENTILES, defaultWorkload } from '../../core/workload';
import { extent, FieldError, ImportError, importedRun, inRange, isObj, outOfRange, RANGE, str, within, withFields, YEAR_S } from './common';
import { num } from '../../core/json';
import type { ImportOptions, ImportedPoint, Obj } from './common';


/** What vLLM's client waits for a whole request: aiohttp.ClientTimeout(total=6 * 60 * 60). */
const VLLM_TIMEOUT_MS = 6 * 60 * 60 * 1000;

/** The per-request lists of a detailed result; `ttfts` and `itls` are the ones without which there is nothing to import. */
const DETAILED = ['ttfts', 'itls', 'input_lens', 'output_lens', 'errors'] as const;

/** The shapes known, for the message that refuses another. */
const KNOWN =
  'known: `vllm bench serve --save-result --save-detailed` (per request ttfts, itls, latencies, start_times) and ' +
  'benchmarks/benchmark_serving.py --save-result --save-detailed (ttfts, itls, input_lens, output_lens, errors)';

/** Whether a parsed JSON document is a vLLM serving benchmark result (detailed or not). */
export function isVllm(doc: unknown): boolean {
  if (!isObj(doc)) return false;
  const setup = 'backend' in doc || 'endpoint_type' in doc || 'model_id' in doc;
  const figures = 'mean_ttft_ms' in doc || 'ttfts' in doc || 'mean_e2el_ms' in doc || 'latencies' in doc;
  return setup && figures && 'completed' in doc && 'duration' in doc;
}

/** vLLM's "20251204-161321" (local time without a zone, read as UTC) as epoch ms. */
function dateMs(date: unknown): number | undefined {
  const m = typeof date === 'string' ? /^(\d{4})(\d{2})(\d{2})-(\d{2})(\d{2})(\d{2})$/.exec(date) : null;
  if (!m) return undefined;
  const [y, mo, d, h, mi, s] = m.slice(1).map(Number) as [number, number, number, number, number, number];
  const t = Date.UTC(y, mo - 1, d, h, mi, s);
  // a date no clock shows ("20251399-250000") is not one: Date.UTC would roll it over into another
  const back = new Date(t);
  return back.getUTCMonth() === mo - 1 && back.getUTCDate() === d && back.getUTCHours() === h && back.getUTCMinutes() === mi && back.getUTCSeconds() === s ? t : undefined;
}

/** The kind of a vLLM error text: the HTTP reason phrase, its "never received a valid chunk", or a Python traceback. */
function errorOf(text: string): RequestError {
  const message = text.trim().split('\n').filter((l) => l.trim() !== '').pop()?.trim() ?? text.trim();
  let kind: ErrorKind = 'other';
  if (/Never received a valid chunk/i.test(text)) kind = 'empty';
  else if (/ClientConnectorError|Cannot connect|ConnectionRefused/i.test(text)) kind = 'connect';
  else if (/ServerDisconnected|ClientPayloadError|ConnectionReset|IncompleteRead/i.test(text)) kind = 'reset';
  else if (/TimeoutError|asyncio\.exceptions\.Timeout/i.test(text)) kind = 'timeout';
  else if (!text.includes('\n') && !/Traceback/.test(text)) kind = 'http';
  return { kind, message: message.slice(0, 500) };
}

/** The list `key` of `doc`, checked to have `n` entries; undefined when the file has none. */
function listOf(doc: Obj, key: string, n: number, file: string): unknown[] | undefined {
  const v = doc[key];
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v)) throw new ImportError(file, `a vLLM result of a shape not known: "${key}" is ${typeof v}, not a list (${KNOWN})`);
  if (v.length !== n) throw new ImportError(file, `a vLLM result of a shape not known: "${key}" has ${v.length} entries but "ttfts" has ${n} (${KNOWN})`);
  return v;
}

/** vLLM's own aggregate figures, under its names: every number at the top level of the result. */
function reportedOf(doc: Obj): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(doc)) {
    const n = num(v);
    if (n !== undefined) out[k] = n;
  }
  return out;
}

interface Point {
  readonly point: ImportedPoint;
  readonly startMs: number;
  readonly relative: boolean;
  readonly latencies: boolean;
  /** The result's max_concurrency, range-checked. */
  readonly maxConcurrency?: number;
}

/** The per-request lists of one detailed result, `n` entries each (undefined: the result has not that list). */
interface Lists {
  readonly n: number;
  readonly ttfts: readonly unknown[];
  readonly itls: readonly unknown[];
  readonly inputLens: readonly unknown[] | undefined;
  readonly outputLens: readonly unknown[] | undefined;
  readonly errors: readonly unknown[] | undefined;
  readonly latencies: readonly unknown[] | undefined;
  readonly startTimes: readonly unknown[] | undefined;
  readonly queueTimes: readonly unknown[] | undefined;
}

function listsOf(doc: Obj, file: string): Lists {
  const ttfts = doc.ttfts;
  if (ttfts === undefined) {
    const latencies = Array.isArray(doc.latencies) ? ` (it has ${doc.latencies.length} end-to-end latencies but no TTFT or inter-token gaps)` : '';
    throw new ImportError(
      file,
      `this vLLM result has no per-request data${latencies}: it was saved without --save-detailed. ` +
        'Re-run `vllm bench serve` (or benchmark_serving.py) with --save-result --save-detailed',
    );
  }
  if (!Array.isArray(ttfts)) throw new ImportError(file, `a vLLM result of a shape not known: "ttfts" is ${typeof ttfts}, not a list (${KNOWN})`);
  const n = ttfts.length;
  if (n === 0) throw new ImportError(file, 'this vLLM result holds no requests ("ttfts" is empty)');
  const [, itls, inputLens, outputLens, errors] = DETAILED.map((k) => listOf(doc, k, n, file));
  if (!itls) throw new ImportError(file, `this vLLM result has "ttfts" but no "itls": a shape not known (${KNOWN})`);
  const [latencies, startTimes, queueTimes] = ['latencies', 'start_times', 'queue_times'].map((k) => listOf(doc, k, n, file));
  return { n, ttfts, itls, inputLens, outputLens, errors, latencies, startTimes, queueTimes };
}

/** Each request's send time in seconds after the first's, when the result has them all (`vllm bench serve`'s start_times, perf_counter() readings). */
function offsetsOf(startTimes: readonly unknown[] | undefined): number[] | undefined {
  if (!startTimes) return undefined;
  const times: number[] = [];
  for (let i = 0; i < startTimes.length; i++) {
    const t = inRange(startTimes[i], RANGE.clockS, () => `start_times[${i}]`);
    if (t === undefined) return undefined;
    times.push(t);
  }
  const { min, max } = extent(times);
  if (max - min > YEAR_S) throw new FieldError(`"start_times" span ${Math.round(max - min)} s from the first to the last: expected the requests of one run, within a year`);
  return times.map((t) => t - min);
}

/** itls[i]: the gaps between request i's token chunks, s, each checked (one loop: a large result has millions). */
function itlsOf(gaps: unknown, i: number, file: string): readonly number[] {
  const shape = () => new ImportError(file, `a vLLM result of a shape not known: itls[${i}] is not a list of seconds (${KNOWN})`);
  if (!Array.isArray(gaps)) throw shape();
  for (let j = 0; j < gaps.length; j++) {
    const g: unknown = gaps[j];
    if (typeof g !== 'number') throw shape();
    if (!within(g, RANGE.seconds)) throw outOfRange(`itls[${i}][${j}]`, g, RANGE.seconds);
  }
  return gaps as number[];
}

/** Request i of the lists, sent at `sentAt` (epoch ms). */
function requestOf(l: Lists, i: number, sentAt: number, file: string): Omit<RequestRecord, 'index'> {
  const ttft = inRange(l.ttfts[i], RANGE.seconds, () => `ttfts[${i}]`);
  const gaps = itlsOf(l.itls[i], i, file);
  const queued = inRange(l.queueTimes?.[i], RANGE.seconds, () => `queue_times[${i}]`);
  const promptTokens = inRange(l.inputLens?.[i], RANGE.count, () => `input_lens[${i}]`);
  const outputTokens = inRange(l.outputLens?.[i], RANGE.count, () => `output_lens[${i}]`) ?? 0;
  const latency = inRange(l.latencies?.[i], RANGE.seconds, () => `latencies[${i}]`);
  const errorText = typeof l.errors?.[i] === 'string' ? (l.errors[i] as string) : '';
  const scheduledAt = queued !== undefined ? sentAt - queued * 1000 : sentAt;
  const base = { warmup: false, scheduledAt, sentAt, ...(promptTokens !== undefined ? { promptTokens } : {}), tokenSource: 'usage' as const };
  // vLLM's success: a first chunk came (ttft > 0) and no error text was kept
  if (errorText.trim() !== '' || ttft === undefined || ttft <= 0) {
    return { ...base, outputTokens: 0, chunkTimesMs: [], error: errorOf(errorText.trim() !== '' ? errorText : 'failed (vLLM kept no error text)') };
  }
  const chunkTimesMs = [ttft * 1000];
  let t = ttft;
  for (const g of gaps) {
    t += g;
    chunkTimesMs.push(t * 1000);
  }
  const e2eMs = latency !== undefined && latency > 0 ? latency * 1000 : chunkTimesMs[chunkTimesMs.length - 1]!;
  const tpot = outputTokens > 1 ? (e2eMs - ttft * 1000) / (outputTokens - 1) : undefined;
  return { ...base, ttftMs: ttft * 1000, ttfoMs: ttft * 1000, ...(tpot !== undefined ? { tpotMs: tpot } : {}), e2eMs, outputTokens, chunkTimesMs };
}

/** How vLLM sent the requests: a rate (open loop, with its burstiness and concurrency cap) or a concurrency. */
function modeOf(doc: Obj, n: number): WorkloadMode {
  // "inf" (every request at once) is a string, which inRange leaves undefined
  const rate = inRange(doc.request_rate, RANGE.rate, 'request_rate');
  const maxConcurrency = inRange(doc.max_concurrency, RANGE.concurrency, 'max_concurrency');
  if (rate === undefined) return { kind: 'closed', concurrency: maxConcurrency ?? n };
  const burstiness = inRange(doc.burstiness, RANGE.burstiness, 'burstiness') ?? 1;
  return { kind: 'open', rate, burstiness, ...(maxConcurrency !== undefined ? { maxConcurrency } : {}) };
}

function workloadOf(mode: WorkloadMode, requests: readonly Omit<RequestRecord, 'index'>[], options: ImportOptions): WorkloadSpec {
  let maxOutput = 0;
  let inputs = 0;
  let inputSum = 0;
  for (const r of requests) {
    if (r.error === undefined && r.outputTokens > maxOutput) maxOutput = r.outputTokens;
    if (r.promptTokens !== undefined) {
      inputs++;
      inputSum += r.promptTokens;
    }
  }
  return defaultWorkload({
    mode,
    requests: requests.length,
    warmup: 0,
    maxTokens: Math.max(1, maxOutput),
    prompt: { kind: 'synthetic', tokens: inputs ? Math.round(inputSum / inputs) : 0, sharedPrefix: false },
    ignoreEos: false,
    timeoutMs: VLLM_TIMEOUT_MS,
    idleTimeoutMs: VLLM_TIMEOUT_MS,
    percentiles: options.percentiles ?? DEFAULT_PERCENTILES,
    prefixCache: 'warm',
  });
}

/** One vLLM result as one point: its requests in the order vLLM sent them. */
function pointOf(doc: Obj, file: string, options: ImportOptions, savedAtMs: number): Point {
  const lists = listsOf(doc, file);
  const durationS = inRange(doc.duration, RANGE.runSeconds, 'duration');
  const offsets = offsetsOf(lists.startTimes);
  // the date is written after the run: its start is the date less the duration
  const startMs = (dateMs(doc.date) ?? savedAtMs) - (durationS ?? 0) * 1000;
  const requests: Omit<RequestRecord, 'index'>[] = [];
  for (let i = 0; i < lists.n; i++) requests.push(requestOf(lists, i, offsets ? startMs + offsets[i]! * 1000 : startMs, file));
  const mode = modeOf(doc, lists.n);
  const maxConcurrency = inRange(doc.max_concurrency, RANGE.concurrency, 'max_concurrency');
  return {
    point: {
      requests,
      workload: workloadOf(mode, requests, options),
      ...(durationS !== undefined ? { durationS } : {}),
      label: mode.kind === 'open' ? `${mode.rate}/s${maxConcurrency !== undefined ? ` c≤${maxConcurrency}` : ''}` : mode.kind === 'closed' ? `c=${mode.concurrency}` : 'trace',
      reported: reportedOf(doc),
    },
    startMs,
    relative: offsets !== undefined,
    latencies: lists.latencies !== undefined,
    ...(maxConcurrency !== undefined ? { maxConcurrency } : {}),
  };
}

/** What no vLLM result records, and what this one lacks, in plain words. */
function missingOf(docs: readonly Obj[], points: readonly Point[]): string[] {
  const missing = [
    'the prompts and the sampling settings: vLLM saves each prompt\'s length only (the workload\'s prompt size is their mean, its max tokens the longest output)',
    'response headers and the first byte: vLLM keeps the first token and the gaps between token chunks',
    'the endpoint\'s URL: vLLM saves the model and backend only',
    'warm-up requests: vLLM saves none of --num-warmups',
    'the time zone of the run: vLLM\'s "date" is local time without a zone (read as UTC); the start is that date less the duration',
    'how output tokens were counted: vLLM takes the server\'s usage, else its tokenizer\'s count of the text',
  ];
  if (points.some((p) => !p.relative)) {
    missing.unshift('per-request send times: this vLLM version saves none, so every request is placed at the run\'s start (no concurrency over time, no stall culprits)');
  }
  if (points.some((p) => !p.latencies)) {
    missing.push('end-to-end latency as vLLM timed it: taken as the last token chunk (benchmark_serving.py of 2024 timed the end at [DONE])');
  }
  if (docs.some((d) => !('queue_times' in d))) missing.push('time queued in the client before sending (--max-concurrency): this vLLM version saves none');
  return missing;
}

/**
 * One vLLM result, or several (`--append-result` writes one per line), as a run: one result is a
 * plain run, several a sweep over the request rate (when their rates differ) or the concurrency.
 * `savedAtMs` places a result without a date (the file's modification time).
 */
export function fromVllm(docs: unknown, file: string, options: ImportOptions = {}, savedAtMs = Date.now()): RunFile {
  const list = (Array.isArray(docs) ? docs : [docs]) as unknown[];
  const objs = list.map((d, i) => {
    if (!isVllm(d)) throw new ImportError(file, `result ${i + 1} is not a vLLM serving benchmark result (${KNOWN})`);
    return d as Obj;
  });
  // a number out of its range is refused naming its field, and the result's line when there are several
  const points = objs.map((d, i) => withFields(file, () => pointOf(d, file, options, savedAtMs), objs.length > 1 ? `result ${i + 1}: ` : ''));
  const firstDoc = objs[0]!;
  const backend = str(firstDoc.backend) ?? str(firstDoc.endpoint_type);
  const api: ApiKind = backend === 'openai-chat' ? 'openai-chat' : 'openai-completions';
  const model = str(firstDoc.model_id);
  const version = objs.map((d) => str(d.version) ?? str(d.vllm_version)).find((v) => v !== undefined);
  const from: ImportedFrom = {
    tool: 'vllm',
    ...(version !== undefined ? { version } : {}),
    file,
    startTimes: points.every((p) => p.relative) ? 'relative' : 'none',
    missing: missingOf(objs, points),
    ...(objs.length === 1 ? { reported: reportedOf(firstDoc) } : {}),
  };
  const startedMs = extent(points.map((p) => p.startMs)).min;
  const endedMs = extent(points.map((p) => p.startMs + (p.point.durationS ?? 0) * 1000)).max;
  const rateOf = (p: Point) => (p.point.workload.mode.kind === 'open' ? p.point.workload.mode.rate : Infinity);
  const rates = new Set(points.map(rateOf));
  const dimension = rates.size > 1 && !rates.has(Infinity) ? ('rate' as const) : ('concurrency' as const);
  const valueOf = (p: Point) => (dimension === 'rate' ? rateOf(p) : (p.maxConcurrency ?? p.point.requests.length));
  return importedRun({
    from,
    startedAt: new Date(startedMs).toISOString(),
    ...(endedMs > startedMs ? { endedAt: new Date(endedMs).toISOString() } : {}),
    endpoint: { url: '', api, ...(model !== undefined ? { model } : {}) },
    points: points.map((p) => (points.length > 1 ? { ...p.point, value: valueOf(p) } : p.point)),
    ...(points.length > 1 ? { dimension } : {}),
  });
}

