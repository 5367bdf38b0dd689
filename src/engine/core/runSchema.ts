// The run file's schema (format "llm-profiler.run", version 1), field by field as docs/run-format.md
// documents it: the engine's parseRunFile and the report panel (webview/report/validate.ts) check a
// run with it. Browser-safe: valibot and types only, no node import.
//
// The types stay the interfaces of types.ts (their comments are the reference); the check at the end
// of this file fails to compile when the schema's output and RunFile disagree, either way.
//
// Optional fields are optional, unknown keys are allowed (readers ignore what they do not know).
// Number lists (chunkTimesMs: a run can hold a million) are checked by one tight loop, not element
// by element through the schema machinery.
import * as v from 'valibot';
import { API_KINDS } from './apis';
import { IMPORT_TOOLS, METRICS_FAMILIES, RETRY_REASONS, SAMPLING_KEYS, SIZING_METHODS, STALL_CAUSES, TIMING_SOURCES, TOKENIZER_KINDS } from './types';
import type { EndpointSpec, PromptRecord, RequestRecord, RunFile, Stats, SweepPoint, WorkloadSpec } from './types';
import { RUN_FORMAT, RUN_VERSION, TOOL_NAME } from './runFormat';

function isNumberList(value: unknown): boolean {
  if (!Array.isArray(value)) return false;
  for (let i = 0; i < value.length; i++) if (typeof value[i] !== 'number') return false;
  return true;
}

const STATS_FIELDS = ['count', 'mean', 'std', 'min', 'max'] as const;

/** count, mean, std, min, max and one `p<n>` per percentile, all numbers. */
function isStats(value: unknown): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const o = value as Record<string, unknown>;
  for (const k of STATS_FIELDS) if (typeof o[k] !== 'number') return false;
  for (const k in o) if (k.startsWith('p') && typeof o[k] !== 'number') return false;
  return true;
}

const num = v.number();
const str = v.string();
const bool = v.boolean();
const numbers = v.custom<readonly number[]>(isNumberList, 'expected a list of numbers');
const stats = v.custom<Stats>(isStats, 'expected statistics {count, mean, std, min, max, p…} (numbers)');
const list = <T extends v.GenericSchema>(item: T) => v.pipe(v.array(item), v.readonly());
const opt = v.optional;

const stallCause = v.picklist(STALL_CAUSES);
const errorKind = v.picklist(['connect', 'http', 'reset', 'timeout', 'idle-timeout', 'malformed', 'server', 'empty', 'aborted', 'overlong', 'worker', 'other']);
const sloKey = v.picklist(['ttftMs', 'tpotMs', 'itlMs', 'e2eMs']);

const endpoint = v.object({
  name: opt(str),
  url: str,
  api: v.picklist(API_KINDS),
  model: opt(str),
  headers: opt(v.record(str, str)),
  apiKeyHeader: opt(str),
  proxy: opt(str),
  tls: opt(v.object({ ca: opt(list(str)), insecure: opt(bool) })),
  detectedApi: opt(bool),
});

const handshake = v.object({ tcpMs: opt(num), tunnelMs: opt(num), tlsMs: opt(num), totalMs: num });

const slo = v.object({ ttftMs: opt(num), tpotMs: opt(num), itlMs: opt(num), e2eMs: opt(num) });

const samplingKey = v.picklist(SAMPLING_KEYS);
const paramSource = v.picklist(['workload', 'file', 'default']);

const toolDefinition = v.object({
  type: v.literal('function'),
  function: v.object({ name: str, description: opt(str), parameters: opt(v.record(str, v.unknown())) }),
});

const responseFormat = v.variant('type', [
  v.object({ type: v.literal('text') }),
  v.object({ type: v.literal('json_object') }),
  v.object({ type: v.literal('json_schema'), json_schema: v.record(str, v.unknown()) }),
]);

/** RunFile.prompts: what each prompt was sent with, and where each value came from. */
const promptRecord = v.object({
  source: opt(str),
  name: opt(str),
  sent: v.object({
    maxTokens: num,
    temperature: opt(num),
    topP: opt(num),
    stop: opt(list(str)),
    frequencyPenalty: opt(num),
    presencePenalty: opt(num),
    responseFormat: opt(responseFormat),
    tools: opt(list(toolDefinition)),
  }),
  from: v.object({
    maxTokens: opt(paramSource),
    temperature: opt(paramSource),
    topP: opt(paramSource),
    stop: opt(paramSource),
    frequencyPenalty: opt(paramSource),
    presencePenalty: opt(paramSource),
    responseFormat: opt(paramSource),
    tools: opt(paramSource),
  }),
  notes: opt(list(str)),
});

const workload = v.object({
  mode: v.variant('kind', [
    v.object({ kind: v.literal('closed'), concurrency: num }),
    v.object({ kind: v.literal('open'), rate: num, burstiness: num, maxConcurrency: opt(num), ramp: opt(v.object({ kind: v.picklist(['linear', 'exponential']), start: num })) }),
    v.object({ kind: v.literal('trace'), speed: num, maxConcurrency: opt(num) }),
  ]),
  requests: opt(num),
  durationS: opt(num),
  warmup: num,
  maxTokens: num,
  prompt: v.variant('kind', [
    v.object({ kind: v.literal('synthetic'), tokens: num, sharedPrefix: bool, groups: opt(v.object({ count: num, prefixTokens: num })), sizing: opt(v.literal('server')), words: opt(num) }),
    v.object({
      kind: v.literal('file'),
      path: str,
      vars: opt(v.record(str, v.unknown())),
      allowRead: opt(list(str)),
      allowEnv: opt(list(str)),
      pulledIn: opt(v.object({ files: list(str), env: list(str) })),
    }),
    v.object({ kind: v.literal('dataset'), path: str, multiTurn: opt(bool) }),
    v.object({ kind: v.literal('chat'), turns: num, userTokens: num, replyTokens: num }),
    v.object({ kind: v.literal('trace'), path: str, format: v.picklist(['mooncake', 'azure']) }),
  ]),
  sessions: opt(num),
  thinkTimeMs: opt(num),
  ignoreEos: bool,
  seed: num,
  temperature: opt(num),
  topP: opt(num),
  responseFormat: opt(responseFormat),
  tools: opt(list(toolDefinition)),
  explicit: opt(list(samplingKey)),
  timeoutMs: num,
  idleTimeoutMs: num,
  slo: opt(slo),
  percentiles: numbers,
  stallFactor: num,
  stallFloorMs: num,
  prefixCache: opt(v.picklist(['cold', 'warm'])),
  respectRetryAfter: opt(bool),
  workers: opt(num),
});

const requestError = v.object({ kind: errorKind, message: str, status: opt(num), body: opt(str), retryAfterS: opt(num) });
const retryReason = v.picklist(RETRY_REASONS);

const request = v.object({
  index: num,
  responseId: opt(str),
  warmup: bool,
  scheduledAt: num,
  sentAt: num,
  headersMs: opt(num),
  firstChunkMs: opt(num),
  ttftMs: opt(num),
  ttfoMs: opt(num),
  tpotMs: opt(num),
  e2eMs: opt(num),
  lastByteMs: opt(num),
  promptTokens: opt(num),
  promptTokensEstimated: opt(bool),
  outputTokens: num,
  reasoningTokens: opt(num),
  tokenSource: v.picklist(['usage', 'chunks']),
  chunkTimesMs: numbers,
  multiTokenChunks: opt(num),
  serverTimings: opt(
    v.object({
      source: opt(v.picklist(TIMING_SOURCES)),
      queueMs: opt(num),
      serverTtftMs: opt(num),
      promptTokens: opt(num),
      promptMs: opt(num),
      predictedTokens: opt(num),
      predictedMs: opt(num),
      cachedTokens: opt(num),
      meanItlMs: opt(num),
      inferenceMs: opt(num),
      loadMs: opt(num),
      totalMs: opt(num),
    }),
  ),
  ignoredServerFields: opt(list(str)),
  transportMs: opt(num),
  stalls: opt(list(v.object({ atChunk: num, gapMs: num, cause: stallCause, culprits: numbers }))),
  intermediaries: opt(v.record(str, str)),
  cacheBust: opt(v.picklist(['cache_prompt', 'nonce'])),
  repeatOf: opt(num),
  repeat: opt(num),
  promptRef: opt(num),
  session: opt(num),
  turn: opt(num),
  historyTokens: opt(num),
  traceLine: opt(num),
  toolCalls: opt(list(v.object({ name: opt(str), firstDeltaMs: num, lastDeltaMs: num, argDeltas: num, argChars: num, argTokens: num }))),
  malformedEvents: opt(num),
  exceedsMaxTokens: opt(bool),
  httpStatus: opt(num),
  retries: opt(list(v.object({ reason: retryReason, sentAt: num, failedAfterMs: num, waitMs: num, error: requestError }))),
  error: opt(requestError),
});

const stall = v.object({
  requestIndex: num,
  startMs: num,
  startAt: num,
  gapMs: num,
  medianItlMs: num,
  atChunk: opt(num),
  cause: opt(stallCause),
  culprits: opt(list(v.object({ index: num, promptTokens: opt(num) }))),
});

const byCause = v.object({ prefill: num, buffering: num, unknown: num });

const buffering = v.object({
  detected: bool,
  evidence: list(str),
  inflationMs: opt(num),
  bufferedStreams: num,
  streams: num,
  periodMs: opt(num),
});

const serverSide = v.object({
  sources: list(v.picklist(TIMING_SOURCES)),
  requests: num,
  ttftClientMs: stats,
  ttftServerMs: opt(stats),
  queueMs: opt(stats),
  promptMs: opt(stats),
  transportMs: opt(stats),
  cachedTokens: num,
  cachedRequests: num,
});

const prefixCacheSummary = v.object({
  mode: v.picklist(['cold', 'warm']),
  coldRequests: num,
  warmRequests: num,
  coldTtftMs: opt(stats),
  warmTtftMs: opt(stats),
  cachedTokens: num,
});

const verdict = v.object({
  kind: v.picklist(['queue', 'prefill', 'stalls', 'stalls-unknown', 'buffering', 'transport', 'prefix-cache', 'history', 'schedule']),
  message: str,
  value: num,
});

const summary = v.object({
  completed: num,
  failed: num,
  cancelled: opt(num),
  errorsByKind: v.record(errorKind, num),
  errorsByStatus: opt(v.record(str, num)),
  retries: opt(v.record(retryReason, num)),
  durationS: num,
  totalInputTokens: num,
  totalOutputTokens: num,
  requestsPerSecond: num,
  outputTokensPerSecond: num,
  totalTokensPerSecond: num,
  ttftMs: stats,
  ttfoMs: opt(stats),
  tpotMs: stats,
  itlMs: stats,
  e2eMs: stats,
  goodput: opt(num),
  sloMissed: opt(list(sloKey)),
  stalls: v.object({ count: num, totalMs: num, shareOfDecode: num, worst: list(stall), factor: num, floorMs: num, byCause: opt(byCause), msByCause: opt(byCause) }),
  malformedEvents: num,
  tokenSource: v.picklist(['usage', 'chunks', 'mixed']),
  multiTokenChunks: num,
  buffering: opt(buffering),
  server: opt(serverSide),
  prefixCache: opt(prefixCacheSummary),
  byTurn: opt(list(v.object({ turn: num, requests: num, ttftMs: stats, historyTokens: num, promptTokens: num, cachedTokens: opt(num) }))),
  schedule: opt(v.object({ lagMs: stats, late: num, kept: bool })),
  toolCalls: opt(v.object({ requests: num, calls: num, firstDeltaMs: stats, argTokensPerS: opt(stats) })),
  verdicts: opt(list(verdict)),
});

const pick = v.object({ index: num, label: str, goodput: opt(num), outputTokensPerSecond: num });

const sweepPoint = v.object({
  label: str,
  concurrency: opt(num),
  rate: opt(num),
  promptTokens: opt(num),
  summary,
  requestIndexes: numbers,
  meanBatch: opt(num),
  measuredPromptTokens: opt(num),
  reported: opt(v.record(str, num)),
});

const sweep = v.looseObject({
  dimension: v.picklist(['concurrency', 'rate', 'promptTokens']),
  points: list(sweepPoint),
  fit: opt(v.object({ baseMs: num, kMs: num, ceilingTokensPerSecond: num, r2: num })),
  fitX: opt(v.picklist(['meanBatch', 'concurrency'])),
  residuals: opt(list(v.object({ label: str, batch: num, tpotMs: num, predictedMs: num, residualMs: num }))),
  sloBatch: opt(num),
  knee: opt(v.object({ index: num, label: str, gainPerDoubling: num, threshold: num })),
  operatingPoint: opt(pick),
  maxThroughputPoint: opt(pick),
  prefillFit: opt(v.object({ aMs: num, bMsPerToken: num, prefillTokensPerSecond: opt(num), r2: num, residualsMs: numbers })),
  verdicts: opt(
    list(
      v.object({
        kind: v.picklist(['too-few-points', 'poor-fit', 'non-monotone', 'not-rising', 'negative-base', 'throughput-falls', 'errors', 'no-slo', 'no-point-meets-slo']),
        message: str,
      }),
    ),
  ),
  slo: opt(slo),
  stoppedEarly: opt(v.object({ afterLabel: str, reason: str, asked: opt(num) })),
});

const dialPart = v.object({ summary, requestIndexes: numbers });

const prefillDial = v.object({
  configs: list(v.object({ batchSize: num, label: str, decode: dialPart, long: dialPart })),
  decodeStreams: num,
  shortPromptTokens: num,
  shortMaxTokens: num,
  longPromptTokens: num,
  longMaxTokens: num,
  longRate: num,
  durationS: num,
});

const histogram = v.object({ metric: str, count: num, sumMs: num, meanMs: opt(num), p50Ms: opt(num), p99Ms: opt(num) });
const gaugeSeries = v.pipe(v.array(v.nullable(num)), v.readonly());

const serverMetrics = v.object({
  url: str,
  family: opt(v.picklist(METRICS_FAMILIES)),
  histograms: v.object({
    ttft: opt(histogram),
    queue: opt(histogram),
    prefill: opt(histogram),
    decode: opt(histogram),
    e2e: opt(histogram),
    itl: opt(histogram),
  }),
  counters: v.record(str, num),
  prefixCacheHitRate: opt(num),
  samples: v.object({ atMs: numbers, running: gaugeSeries, waiting: gaugeSeries, kvCacheUsage: gaugeSeries }),
  notes: list(str),
});

const prefixCacheCheck = v.object({
  coldTtftMs: num,
  warmTtftMs: num,
  variantTtftMs: opt(num),
  cachedTokens: opt(num),
  hit: bool,
  rounds: num,
  message: str,
});

const importedFrom = v.object({
  tool: v.picklist(IMPORT_TOOLS),
  version: opt(str),
  file: str,
  files: opt(list(str)),
  startTimes: v.picklist(['absolute', 'relative', 'none']),
  missing: opt(list(str)),
  reported: opt(v.record(str, num)),
});

const interrupted = v.object({
  lastRecordAt: opt(str),
  lastSeenAt: str,
  inFlight: num,
  finished: num,
  total: opt(num),
  recoveredAt: str,
  journal: str,
  unfinishedPoint: opt(str),
  unfinishedRepetition: opt(num),
  skippedLines: opt(num),
});

export const RunFileSchema = v.looseObject({
  format: v.literal(RUN_FORMAT),
  version: v.literal(RUN_VERSION),
  id: v.pipe(str, v.nonEmpty()),
  startedAt: str,
  endedAt: opt(str),
  cancelled: opt(bool),
  interrupted: opt(interrupted),
  tool: v.object({ name: v.literal(TOOL_NAME), version: str }),
  endpoint,
  workload,
  prompts: opt(list(promptRecord)),
  connection: opt(v.object({ connections: num, connectMs: numbers, handshakes: opt(list(handshake)), reopened: opt(list(handshake)) })),
  requests: list(request),
  summary,
  sweep: opt(sweep),
  prefillDial: opt(prefillDial),
  serverMetrics: opt(serverMetrics),
  prefixCache: opt(prefixCacheCheck),
  importedFrom: opt(importedFrom),
  repeats: opt(list(v.object({ index: num, startedAt: str, durationS: num, summary, requestIndexes: numbers }))),
  ab: opt(v.object({ pairId: str, side: v.picklist(['A', 'B']), otherId: str, blocks: num, blockRequests: num })),
  promptLength: opt(v.object({
    method: v.picklist(SIZING_METHODS),
    asked: num,
    words: num,
    tokenizer: opt(v.picklist(TOKENIZER_KINDS)),
    usageCorrected: opt(bool),
    addedWarmup: opt(num),
    shortest: opt(bool),
    sent: opt(v.object({ p50: num, min: num, max: num, requests: num })),
  })),
});

/** What is wrong with a value that should be a run file; each reader words it its own way. */
export type RunFileProblem =
  | { readonly kind: 'not-object' }
  | { readonly kind: 'format'; readonly format: unknown }
  | { readonly kind: 'version'; readonly version: unknown; readonly newer: boolean }
  | {
      readonly kind: 'field';
      /** Where, e.g. `requests[3].sentAt`. */
      readonly path: string;
      /** The object holding it (`requests[3]`; '' at the top level) and its key there. */
      readonly parent: string;
      readonly key: string;
      /** The field is absent (else present with a bad value). */
      readonly missing: boolean;
      /** e.g. `expected number, got "3"`. */
      readonly detail: string;
    };

// ---- A fast yes/no from the same schema ----

/** What compiledCheck reads of a valibot schema (its public, introspectable fields). */
interface SchemaNode {
  readonly type: string;
  readonly pipe?: readonly { readonly kind: string; readonly type: string }[];
  readonly entries?: Readonly<Record<string, v.GenericSchema>>;
  readonly wrapped?: v.GenericSchema;
  readonly item?: v.GenericSchema;
  readonly key?: v.GenericSchema | string;
  readonly value?: v.GenericSchema;
  readonly options?: readonly unknown[];
  readonly literal?: unknown;
  readonly default?: unknown;
  readonly check?: (input: unknown) => boolean;
}

type Check = (value: unknown) => boolean;

const isOptional = (schema: v.GenericSchema): boolean => (schema as unknown as SchemaNode).type === 'optional';
const isRecordLike = (x: unknown): x is Record<string, unknown> => !!x && typeof x === 'object';

/**
 * A plain predicate that says yes exactly when valibot's parse would, built once from the schema:
 * valibot builds an output and datasets for every field, which costs ~3 µs per request record (a
 * 100,000-request run: ~0.3 s); this is ~10× faster. valibot itself runs only to name a problem.
 * Kinds of schema not handled here fall back to v.is (test/unit/runSchema.test.ts checks they agree).
 */
export function compiledCheck(schema: v.GenericSchema): Check {
  const node = schema as unknown as SchemaNode;
  const actions = node.pipe?.slice(1) ?? [];
  if (actions.some((a) => a.kind !== 'metadata' && a.type !== 'readonly' && a.type !== 'non_empty')) return (x) => v.is(schema, x);
  const base = baseCheck(node.pipe ? (node.pipe[0] as unknown as v.GenericSchema) : schema);
  if (!actions.some((a) => a.type === 'non_empty')) return base;
  return (x) => base(x) && (x as { length: number }).length > 0;
}

function baseCheck(schema: v.GenericSchema): Check {
  const s = schema as unknown as SchemaNode;
  switch (s.type) {
    case 'number':
      return (x) => typeof x === 'number' && !Number.isNaN(x);
    case 'string':
      return (x) => typeof x === 'string';
    case 'boolean':
      return (x) => typeof x === 'boolean';
    case 'literal':
      return (x) => x === s.literal;
    case 'picklist':
      return (x) => s.options!.includes(x);
    case 'custom':
      return s.check!;
    case 'optional': {
      if (s.default !== undefined) break;
      const wrapped = compiledCheck(s.wrapped!);
      return (x) => x === undefined || wrapped(x);
    }
    case 'array': {
      const item = compiledCheck(s.item!);
      return (x) => {
        if (!Array.isArray(x)) return false;
        for (let i = 0; i < x.length; i++) if (!item(x[i])) return false;
        return true;
      };
    }
    case 'object':
    case 'loose_object': {
      const keys = Object.keys(s.entries!);
      const checks = keys.map((k) => compiledCheck(s.entries![k]!));
      const optional = keys.map((k) => isOptional(s.entries![k]!));
      return (x) => {
        if (!isRecordLike(x)) return false;
        for (let i = 0; i < keys.length; i++) {
          const value = x[keys[i]!];
          if (value === undefined ? !optional[i] && !(keys[i]! in x && checks[i]!(value)) : !checks[i]!(value)) return false;
        }
        return true;
      };
    }
    case 'record': {
      const key = compiledCheck(s.key as v.GenericSchema);
      const value = compiledCheck(s.value!);
      return (x) => {
        if (!isRecordLike(x)) return false;
        for (const k in x) {
          if (!Object.prototype.hasOwnProperty.call(x, k) || k === '__proto__' || k === 'prototype' || k === 'constructor') continue;
          if (!key(k) || !value(x[k])) return false;
        }
        return true;
      };
    }
    case 'variant': {
      const tag = s.key as string;
      const options = (s.options as v.GenericSchema[]).map((o) => ({ tag: compiledCheck((o as unknown as SchemaNode).entries![tag]!), check: compiledCheck(o) }));
      return (x) => isRecordLike(x) && tag in x && options.some((o) => o.tag(x[tag]) && o.check(x));
    }
  }
  return (x) => v.is(schema, x);
}

const isRunFile = compiledCheck(RunFileSchema);

/** The parts a journal (files/journal.ts) holds line by line, checked as the run file checks them. */
export const isRequestRecord = compiledCheck(request) as (x: unknown) => x is RequestRecord;
export const isSweepPoint = compiledCheck(sweepPoint) as (x: unknown) => x is SweepPoint;
export const isWorkloadSpec = compiledCheck(workload) as (x: unknown) => x is WorkloadSpec;
export const isEndpointRecord = compiledCheck(endpoint) as (x: unknown) => x is EndpointSpec;
export const isPromptRecords = compiledCheck(list(promptRecord)) as (x: unknown) => x is readonly PromptRecord[];

/** The first problem of a run file (format and version first), or undefined when it is one. */
export function runFileProblem(value: unknown): RunFileProblem | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return { kind: 'not-object' };
  const o = value as Record<string, unknown>;
  if (o.format !== RUN_FORMAT) return { kind: 'format', format: o.format };
  if (o.version !== RUN_VERSION) return { kind: 'version', version: o.version, newer: typeof o.version === 'number' && o.version > RUN_VERSION };
  if (isRunFile(value)) return undefined;
  const result = v.safeParse(RunFileSchema, value, { abortEarly: true });
  return result.success ? undefined : fieldProblem(result.issues[0]);
}

/** Parses an unknown value as a run file: the value itself (unknown keys kept), or the problem. */
export function asRunFile(value: unknown): { run: RunFile } | { problem: RunFileProblem } {
  const problem = runFileProblem(value);
  return problem ? { problem } : { run: value as RunFile };
}

function fieldProblem(issue: v.BaseIssue<unknown>): RunFileProblem {
  let path = '';
  let parent = '';
  let key = '';
  let missing = false;
  for (const item of issue.path ?? []) {
    parent = path;
    const k = item.key;
    key = String(k);
    path += typeof k === 'number' ? `[${k}]` : path === '' ? key : `.${key}`;
    missing = item.value === undefined;
  }
  let detail = issue.type === 'custom' || issue.type === 'non_empty' ? issue.message : `expected ${issue.expected ?? 'another value'}, got ${issue.received}`;
  if (issue.type === 'custom' && Array.isArray(issue.input)) {
    const i = issue.input.findIndex((x) => typeof x !== 'number');
    if (i >= 0) detail += `; item ${i} is ${JSON.stringify(issue.input[i]) ?? String(issue.input[i])}`;
  }
  return { kind: 'field', path, parent, key, missing, detail };
}

// ---- The schema and RunFile agree (checked by the compiler, both ways) ----

/** A type with every property readonly, arrays readonly, intersections flattened: what "the same fields" means here. */
type Normal<T> = T extends readonly (infer U)[] ? readonly Normal<U>[] : T extends object ? { readonly [K in keyof T]: Normal<T[K]> } : T;
/** True only when A and B are the same type (not merely assignable one way). */
type Same<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;

const schemaMatchesRunFile: Same<Normal<v.InferOutput<typeof RunFileSchema>>, Normal<RunFile>> = true;
void schemaMatchesRunFile;
