// Realistic run files of any size from a seed, for the report panel's tests and benchmark: a closed
// loop of streams with TTFT, jittered ITL, stalls that hit every stream at once (another request's
// prefill), a few errors (429 before any token, a reset mid-stream), and warmup requests. The summary
// is computed here the way the engine defines it (linear percentiles), so the panel's table can be
// checked against `run.summary` exactly.
import { Rng } from '../../src/engine/core/random';
import type {
  BufferingVerdict, ErrorKind, HistogramDelta, PrefixCacheSummary, RequestRecord, RequestStall, RunFile, ServerMetrics, ServerSideSummary,
  SloSpec, Stall, StallCause, Stats, Summary, Verdict, WorkloadSpec,
} from '../../src/engine/core/types';
import { formatInt, formatMs, formatPercent } from '../../src/present/units';

export interface FixtureOptions {
  readonly seed?: number;
  /** Measured requests. */
  readonly requests?: number;
  readonly warmup?: number;
  readonly chunksPerRequest?: number;
  readonly concurrency?: number;
  /** Mean gap between global stall events, ms (0: none). */
  readonly stallEveryMs?: number;
  readonly stallMs?: number;
  /** Share of requests that fail. */
  readonly errorRate?: number;
  readonly slo?: SloSpec;
  readonly id?: string;
  readonly startedAt?: string;
  /**
   * "warm": prompts repeat in threes (index % 3 = 1 and 2 resend the prompt of index % 3 = 0) and a
   * repeat's prefill is mostly served from the prefix cache (a tenth of it is left). Absent: every
   * prompt is new, as before (the random draws are the same, so existing seeds give the same runs).
   */
  readonly prefixCache?: 'cold' | 'warm';
}

/** A deterministic uniform [0, 1) source from a seed (the engine's Rng). */
export function rng(seed: number): () => number {
  const r = new Rng(seed);
  return () => r.next();
}

export function percentileOf(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const pos = ((sorted.length - 1) * p) / 100;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (pos - lo);
}

export function statsOf(values: readonly number[], percentiles: readonly number[]): Stats {
  const s = values.slice().sort((a, b) => a - b);
  const n = s.length;
  const mean = n ? s.reduce((a, b) => a + b, 0) / n : NaN;
  const std = n ? Math.sqrt(s.reduce((a, b) => a + (b - mean) ** 2, 0) / n) : NaN;
  const out: Record<string, number> = { count: n, mean, std, min: n ? s[0]! : NaN, max: n ? s[n - 1]! : NaN };
  for (const p of percentiles) out[`p${p}`] = percentileOf(s, p);
  return out as unknown as Stats;
}

export function fixtureRun(options: FixtureOptions = {}): RunFile {
  return buildFixture(options).run;
}

/** The run, and its global stall windows [start, end) in ms since the run's start (for fixtureWhereRun). */
function buildFixture(options: FixtureOptions): { run: RunFile; stallWindows: readonly (readonly [number, number])[] } {
  const seed = options.seed ?? 1;
  const rand = rng(seed);
  const measured = options.requests ?? 40;
  const warmup = options.warmup ?? 2;
  const perReq = options.chunksPerRequest ?? 64;
  const conc = Math.max(1, options.concurrency ?? 4);
  const stallEvery = options.stallEveryMs ?? 4000;
  const stallMs = options.stallMs ?? 600;
  const errorRate = options.errorRate ?? 0.05;
  const slo = options.slo ?? { ttftMs: 400, tpotMs: 25, e2eMs: 8000 };
  const t0 = Date.parse(options.startedAt ?? '2026-03-01T12:00:00.000Z');
  const normal = () => Math.sqrt(-2 * Math.log(rand() || 1e-12)) * Math.cos(2 * Math.PI * rand());

  // global stall windows: every stream that is decoding at that moment waits until the window ends
  const horizon = ((measured + warmup) / conc) * (perReq * 30 + 600) * 2 + 10_000;
  const stalls: [number, number][] = [];
  if (stallEvery > 0) {
    for (let t = stallEvery * (0.5 + rand()); t < horizon; t += stallEvery * (0.5 + rand())) {
      stalls.push([t, t + stallMs * (0.6 + 0.8 * rand())]);
    }
  }
  let si = 0;
  const pushOut = (t: number): number => {
    while (si > 0 && stalls[si - 1]![0] > t) si--;
    while (si < stalls.length && stalls[si]![1] <= t) si++;
    const w = stalls[si];
    return w && w[0] <= t && t < w[1] ? w[1] : t;
  };

  const slots = new Array<number>(conc).fill(0);
  const requests: RequestRecord[] = [];
  const kinds: ErrorKind[] = ['http', 'reset', 'timeout'];
  for (let index = 0; index < measured + warmup; index++) {
    let slot = 0;
    for (let s = 1; s < conc; s++) if (slots[s]! < slots[slot]!) slot = s;
    const scheduledAt = slots[slot]!;
    const wait = rand() < 0.1 ? 5 + 40 * rand() : 0.2 + 1.5 * rand();
    const sentAt = scheduledAt + wait;
    const isWarmup = index < warmup;
    const drawnTokens = 64 + Math.floor(rand() * 960);
    const repeatOf = options.prefixCache === 'warm' && !isWarmup && (index - warmup) % 3 !== 0 ? index - ((index - warmup) % 3) : undefined;
    const promptTokens = repeatOf === undefined ? drawnTokens : requests[repeatOf]!.promptTokens!;
    const prefillShare = repeatOf === undefined ? 1 : 0.1;
    const fail = !isWarmup && rand() < errorRate ? kinds[Math.floor(rand() * kinds.length)]! : undefined;
    const chunkTimesMs: number[] = [];
    let ttft: number | undefined;
    let e2e: number;
    let lastByte: number | undefined;
    let error: RequestRecord['error'];
    let httpStatus = 200;
    if (fail === 'http') {
      httpStatus = 429;
      e2e = 3 + 10 * rand();
      lastByte = e2e;
      error = { kind: 'http', status: 429, message: 'HTTP 429 Too Many Requests', body: '{"error":"rate limited"}' };
    } else {
      ttft = 80 * (repeatOf === undefined ? 1 : 0.5) + promptTokens * 0.15 * prefillShare + Math.abs(normal()) * 40 + (isWarmup ? 300 : 0);
      let t = sentAt + ttft;
      t = pushOut(t);
      const n = fail === 'reset' ? Math.max(1, Math.floor(perReq * rand())) : perReq;
      for (let i = 0; i < n; i++) {
        if (i > 0) t = pushOut(t + Math.max(1, 22 + normal() * 3 + (rand() < 0.01 ? 60 * rand() : 0)));
        chunkTimesMs.push(Math.round((t - sentAt) * 1000) / 1000);
      }
      ttft = chunkTimesMs[0];
      // the end: the last token on success; the usage chunk and [DONE] follow 0.4 ms later (lastByteMs)
      lastByte = chunkTimesMs[chunkTimesMs.length - 1]!;
      e2e = fail ? lastByte + 0.4 : lastByte;
      if (!fail) lastByte += 0.4;
      if (fail === 'reset') error = { kind: 'reset', message: 'The connection was reset mid-stream (ECONNRESET)' };
      if (fail === 'timeout') error = { kind: 'timeout', message: 'The request took longer than the 60000 ms timeout' };
    }
    e2e = Math.round(e2e * 1000) / 1000;
    const outputTokens = chunkTimesMs.length;
    const rec: RequestRecord = {
      index,
      responseId: error?.kind === 'http' ? undefined : `chatcmpl-${seed}-${index.toString(16).padStart(6, '0')}`,
      warmup: isWarmup,
      scheduledAt: t0 + scheduledAt,
      sentAt: t0 + sentAt,
      headersMs: Math.min(e2e, 1 + rand() * 3),
      firstChunkMs: ttft,
      ttftMs: ttft,
      ttfoMs: ttft,
      tpotMs: ttft !== undefined && outputTokens > 1 ? (e2e - ttft) / (outputTokens - 1) : undefined,
      e2eMs: e2e,
      ...(lastByte !== undefined ? { lastByteMs: Math.round(lastByte * 1000) / 1000 } : {}),
      promptTokens,
      outputTokens,
      tokenSource: 'usage',
      chunkTimesMs,
      httpStatus,
      ...(error ? { error } : {}),
      ...(repeatOf === undefined ? {} : { repeatOf }),
    };
    requests.push(rec);
    slots[slot] = sentAt + Math.max(e2e, lastByte ?? 0) + 0.5 + rand() * 2;
  }

  const workload: WorkloadSpec = {
    mode: { kind: 'closed', concurrency: conc },
    requests: measured,
    warmup,
    maxTokens: perReq,
    prompt: { kind: 'synthetic', tokens: 512, sharedPrefix: false },
    ignoreEos: true,
    seed,
    timeoutMs: 60_000,
    idleTimeoutMs: 10_000,
    slo,
    percentiles: [50, 90, 95, 99],
    stallFactor: 5,
    stallFloorMs: 100,
    ...(options.prefixCache ? { prefixCache: options.prefixCache } : {}),
  };
  const summary = summarizeFixture(requests, workload);
  const last = Math.max(...requests.map((r) => r.sentAt + Math.max(r.e2eMs ?? 0, r.lastByteMs ?? 0)));
  const run: RunFile = {
    format: 'llm-profiler.run',
    version: 1,
    id: options.id ?? `fixture-${seed}-${measured}x${perReq}`,
    startedAt: new Date(t0).toISOString(),
    endedAt: new Date(last).toISOString(),
    tool: { name: 'llm-profiler', version: '0.1.0' },
    endpoint: { name: 'fixture', url: 'http://127.0.0.1:8080', api: 'openai-chat', model: 'fixture-model-7b' },
    workload,
    connection: { connections: conc, connectMs: new Array(conc).fill(1.5) },
    requests,
    summary,
  };
  return { run, stallWindows: stalls };
}

/** The engine's definitions, for fixtures only (the real ones live in src/engine/analysis/metrics.ts). */
export function summarizeFixture(requests: readonly RequestRecord[], workload: WorkloadSpec): Summary {
  const pct = workload.percentiles;
  const measured = requests.filter((r) => !r.warmup);
  const ok = measured.filter((r) => !r.error);
  const failed = measured.filter((r) => r.error);
  const errorsByKind: Partial<Record<ErrorKind, number>> = {};
  for (const r of failed) errorsByKind[r.error!.kind] = (errorsByKind[r.error!.kind] ?? 0) + 1;
  const start = Math.min(...measured.map((r) => r.sentAt));
  const end = Math.max(...measured.map((r) => r.sentAt + Math.max(r.e2eMs ?? 0, r.lastByteMs ?? 0)));
  const durationS = (end - start) / 1000;
  const ttft = ok.flatMap((r) => (r.ttftMs === undefined ? [] : [r.ttftMs]));
  const tpot = ok.flatMap((r) => (r.tpotMs === undefined ? [] : [r.tpotMs]));
  const e2e = ok.flatMap((r) => (r.e2eMs === undefined ? [] : [r.e2eMs]));
  const itl: number[] = [];
  const stalls: Stall[] = [];
  let stalledMs = 0;
  let decodeMs = 0;
  for (const r of measured) {
    const c = r.chunkTimesMs;
    const gaps: number[] = [];
    for (let i = 1; i < c.length; i++) gaps.push(c[i]! - c[i - 1]!);
    if (!r.error) itl.push(...gaps);
    if (c.length > 1) decodeMs += c[c.length - 1]! - c[0]!;
    const med = percentileOf(gaps.slice().sort((a, b) => a - b), 50);
    const threshold = Math.max(workload.stallFactor * med, workload.stallFloorMs);
    for (let i = 1; i < c.length; i++) {
      const g = c[i]! - c[i - 1]!;
      if (g > threshold) {
        stalls.push({ requestIndex: r.index, startMs: c[i - 1]!, startAt: r.sentAt + c[i - 1]!, gapMs: g, medianItlMs: med });
        stalledMs += g;
      }
    }
  }
  stalls.sort((a, b) => b.gapMs - a.gapMs);
  const outTokens = measured.reduce((a, r) => a + r.outputTokens, 0);
  const inTokens = measured.reduce((a, r) => a + (r.promptTokens ?? 0), 0);
  const slo = workload.slo;
  let goodput: number | undefined;
  let sloMissed: (keyof SloSpec)[] | undefined;
  const ttftS = statsOf(ttft, pct);
  const tpotS = statsOf(tpot, pct);
  const itlS = statsOf(itl, pct);
  const e2eS = statsOf(e2e, pct);
  if (slo) {
    const good = ok.filter((r) => (slo.ttftMs === undefined || (r.ttftMs ?? Infinity) <= slo.ttftMs)
      && (slo.tpotMs === undefined || (r.tpotMs ?? 0) <= slo.tpotMs)
      && (slo.e2eMs === undefined || (r.e2eMs ?? Infinity) <= slo.e2eMs)).length;
    goodput = durationS > 0 ? good / durationS : 0;
    sloMissed = [];
    if (slo.ttftMs !== undefined && ttftS.p99! > slo.ttftMs) sloMissed.push('ttftMs');
    if (slo.tpotMs !== undefined && tpotS.p99! > slo.tpotMs) sloMissed.push('tpotMs');
    if (slo.itlMs !== undefined && itlS.p99! > slo.itlMs) sloMissed.push('itlMs');
    if (slo.e2eMs !== undefined && e2eS.p99! > slo.e2eMs) sloMissed.push('e2eMs');
  }
  return {
    completed: ok.length,
    failed: failed.length,
    errorsByKind,
    durationS,
    totalInputTokens: inTokens,
    totalOutputTokens: outTokens,
    requestsPerSecond: durationS > 0 ? ok.length / durationS : 0,
    outputTokensPerSecond: durationS > 0 ? outTokens / durationS : 0,
    totalTokensPerSecond: durationS > 0 ? (outTokens + inTokens) / durationS : 0,
    ttftMs: ttftS,
    ttfoMs: ttftS,
    tpotMs: tpotS,
    itlMs: itlS,
    e2eMs: e2eS,
    ...(goodput === undefined ? {} : { goodput }),
    ...(sloMissed === undefined ? {} : { sloMissed }),
    stalls: {
      count: stalls.length,
      totalMs: stalledMs,
      shareOfDecode: decodeMs > 0 ? stalledMs / decodeMs : 0,
      worst: stalls.slice(0, 10),
      factor: workload.stallFactor,
      floorMs: workload.stallFloorMs,
    },
    malformedEvents: 0,
    tokenSource: 'usage',
    multiTokenChunks: 0,
  };
}

/** A run file's text cut off in the middle, as a crash mid-write would leave it. */
export function truncatedRunText(run: RunFile = fixtureRun()): string {
  const text = JSON.stringify(run);
  return text.slice(0, Math.floor(text.length * 0.6));
}

/** A run written by a future version of the tool. */
export function unknownVersionRun(run: RunFile = fixtureRun()): unknown {
  return { ...run, version: 2 };
}

/** A fixture with about `chunks` chunks in total, for the benchmark. */
export function fixtureWithChunks(chunks: number, seed = 7): RunFile {
  const perReq = chunks >= 100_000 ? 500 : 200;
  const requests = Math.max(1, Math.round(chunks / perReq));
  return fixtureRun({ seed, requests, warmup: 0, chunksPerRequest: perReq, concurrency: Math.min(64, Math.max(4, Math.round(requests / 30))), errorRate: 0.01 });
}

/** A concurrency sweep (1, 2, 4, 8): one run file holding every point, the points one after another. */
export function fixtureSweepRun(seed = 31): RunFile {
  const levels = [1, 2, 4, 8];
  const requests: RequestRecord[] = [];
  const points: NonNullable<RunFile['sweep']>['points'][number][] = [];
  let offset = 0;
  let base: RunFile | undefined;
  for (const c of levels) {
    const r = fixtureRun({ seed: seed + c, requests: 4 * c, warmup: 0, concurrency: c, chunksPerRequest: 48, errorRate: 0, stallEveryMs: 0 });
    base ??= r;
    const t0 = Math.min(...r.requests.map((q) => q.scheduledAt));
    const start = requests.length;
    const shift = offset - t0 + Date.parse(base.startedAt);
    for (const q of r.requests) requests.push({ ...q, index: requests.length, scheduledAt: q.scheduledAt + shift, sentAt: q.sentAt + shift });
    const mine = requests.slice(start);
    offset = Math.max(...mine.map((q) => q.sentAt + (q.e2eMs ?? 0))) - Date.parse(base.startedAt) + 200;
    points.push({ label: `concurrency ${c}`, concurrency: c, summary: summarizeFixture(mine, r.workload), requestIndexes: mine.map((q) => q.index) });
  }
  const workload = base!.workload;
  return {
    ...base!,
    id: `fixture-sweep-${seed}`,
    requests,
    summary: summarizeFixture(requests, workload),
    sweep: { dimension: 'concurrency', points, fit: { baseMs: 20, kMs: 1, ceilingTokensPerSecond: 1000, r2: 0.97 } },
  };
}

// ---- "Where the time went": a run as the engine writes it once it explains itself ----

export interface WhereFixtureOptions extends FixtureOptions {
  /**
   * A proxy between the server and the client holds the stream and flushes it every `bufferPeriodMs`
   * (250 ms): chunks arrive in bunches, TTFT grows by up to a period, every flush gap is a stall
   * caused by buffering, ITL and TPOT measure the proxy. Its global prefill stalls are off unless asked for.
   */
  readonly buffered?: boolean;
  readonly bufferPeriodMs?: number;
  /** The server's Prometheus /metrics (histogram deltas, counters, gauges about once a second); default true. */
  readonly serverMetrics?: boolean;
}

interface FoundGap { readonly atChunk: number; readonly startMs: number; readonly gapMs: number; readonly medianItlMs: number }

/** The stall rule of summarizeFixture (and of src/engine/analysis/stalls.ts): a gap above max(factor × median ITL, floor). */
function gapsAboveRule(r: RequestRecord, workload: WorkloadSpec): FoundGap[] {
  const c = r.chunkTimesMs;
  const gaps: number[] = [];
  for (let i = 1; i < c.length; i++) gaps.push(c[i]! - c[i - 1]!);
  const med = percentileOf(gaps.slice().sort((a, b) => a - b), 50);
  const threshold = Math.max(workload.stallFactor * med, workload.stallFloorMs);
  const out: FoundGap[] = [];
  for (let i = 1; i < c.length; i++) {
    const g = c[i]! - c[i - 1]!;
    if (g > threshold) out.push({ atChunk: i, startMs: c[i - 1]!, gapMs: g, medianItlMs: med });
  }
  return out;
}

/** Epoch [start, end] of a request's prefill as the panel draws it: sentAt + TTFT − (server prompt time ?? TTFT) → first token. */
export function prefillSpanOf(r: RequestRecord): [number, number] | undefined {
  if (r.ttftMs === undefined) return undefined;
  const end = r.sentAt + r.ttftMs;
  return [end - (r.serverTimings?.promptMs ?? r.ttftMs), end];
}

const BUCKETS_MS = [1, 5, 10, 20, 40, 60, 80, 100, 250, 500, 750, 1000, 2500, 5000, 7500, 10_000, 20_000, 40_000, 80_000];

function histogram(metric: string, values: readonly number[]): HistogramDelta | undefined {
  if (values.length === 0) return undefined;
  const sorted = values.slice().sort((a, b) => a - b);
  const sumMs = sorted.reduce((a, b) => a + b, 0);
  const bucket = (v: number) => BUCKETS_MS.find((b) => b >= v) ?? Infinity;
  return { metric, count: sorted.length, sumMs, meanMs: sumMs / sorted.length, p50Ms: bucket(percentileOf(sorted, 50)), p99Ms: bucket(percentileOf(sorted, 99)) };
}

/**
 * A run with everything the engine now writes to explain where each request's time went, filled in
 * consistently with its own requests: vLLM-style server timings (queue, prefill, decode; the client's
 * TTFT = the server's + transport), each stream's stalls with their cause (a stall is "prefill" when
 * another request's prefill, as the panel draws it, covers most of the gap; those requests are the
 * culprits), the buffering verdict (detected only with `buffered`), the client-vs-server summary, the
 * cold/warm TTFT split (`prefixCache: 'warm'` repeats prompts), verdicts in words, and /metrics.
 * Each global stall window of fixtureRun becomes a long prompt (1,024 to 4,096 tokens) whose prefill
 * runs over it: these requests come after the closed loop's in `index`.
 */
export function fixtureWhereRun(options: WhereFixtureOptions = {}): RunFile {
  const seed = options.seed ?? 1;
  const buffered = options.buffered ?? false;
  const period = options.bufferPeriodMs ?? 250;
  const built = buildFixture({
    ...options,
    ...(buffered && options.stallEveryMs === undefined ? { stallEveryMs: 0 } : {}),
    id: options.id ?? `fixture-where-${seed}${buffered ? '-buffered' : ''}${options.prefixCache === 'warm' ? '-warm' : ''}`,
  });
  const rand = rng(seed * 7919 + 17);
  const t0 = runStartOf(built.run.requests);
  const warm = options.prefixCache === 'warm';

  // 0. each global stall window of the closed loop becomes what it stands for: a long prompt that
  // arrives, waits briefly in the queue, and whose prefill runs exactly over the window (every stream
  // decoding then waits for it); then it decodes a few tokens itself
  const windows = built.stallWindows.map(([a, b]) => [t0 + a, t0 + b] as const);
  const pushOut = (t: number) => { for (const [a, b] of windows) if (a <= t && t < b) return b; return t; };
  const measuredBase = built.run.requests.filter((r) => !r.warmup);
  const spanStart = runStartOf(measuredBase);
  const spanEnd = Math.max(...measuredBase.map((r) => r.sentAt + (r.e2eMs ?? 0)));
  const extras: RequestRecord[] = [];
  let nextIndex = built.run.requests.length;
  for (const [a, b] of windows) {
    if (a < spanStart || b > spanEnd) continue;
    if (rand() < 0.2) continue; // a pause nobody explains (its stalls stay "unknown")
    const queueMs = 4 + 12 * rand();
    const transport = 2 + 3 * rand();
    const promptTokens = [1024, 2048, 3072, 4096][Math.floor(rand() * 4)]!;
    const sentAt = a - queueMs - transport / 2;
    const ttftMs = b + transport / 2 - sentAt;
    const chunkTimesMs: number[] = [];
    let t = sentAt + ttftMs;
    const n = 8 + Math.floor(rand() * 24);
    for (let i = 0; i < n; i++) {
      if (i > 0) t = pushOut(t + 20 + 4 * rand());
      chunkTimesMs.push(Math.round((t - sentAt) * 1000) / 1000);
    }
    const e2eMs = chunkTimesMs[n - 1]!;
    const index = nextIndex++;
    extras.push({
      index, responseId: `chatcmpl-${seed}-${index.toString(16).padStart(6, '0')}`, warmup: false, scheduledAt: sentAt, sentAt,
      headersMs: 1 + rand() * 2, firstChunkMs: chunkTimesMs[0], ttftMs: chunkTimesMs[0], ttfoMs: chunkTimesMs[0],
      tpotMs: (e2eMs - chunkTimesMs[0]!) / (n - 1), e2eMs, lastByteMs: Math.round((e2eMs + 0.4) * 1000) / 1000,
      promptTokens, outputTokens: n, tokenSource: 'usage', chunkTimesMs, httpStatus: 200,
      serverTimings: {
        source: 'vllm', queueMs, serverTtftMs: queueMs + (b - a), promptTokens, promptMs: b - a,
        predictedTokens: n, predictedMs: e2eMs - chunkTimesMs[0]!, cachedTokens: 0, meanItlMs: (e2eMs - chunkTimesMs[0]!) / (n - 1),
      },
      transportMs: chunkTimesMs[0]! - (queueMs + (b - a)),
    });
  }
  const base: RunFile = {
    ...built.run,
    workload: { ...built.run.workload, requests: (built.run.workload.requests ?? 0) + extras.length },
    requests: [...built.run.requests, ...extras],
  };

  // 1. the server's own view of each request that got an answer, then (buffered) what the proxy made of it
  const timed: RequestRecord[] = base.requests.map((r) => {
    if (r.ttftMs === undefined || r.error) return { ...r, ...(warm ? {} : { cacheBust: 'nonce' as const }) };
    const transport = r.transportMs ?? 2 + rand() * 4;
    const serverTtft = r.serverTimings?.serverTtftMs ?? r.ttftMs - transport;
    const queueMs = r.serverTimings?.queueMs ?? serverTtft * (0.05 + 0.25 * rand());
    const promptMs = r.serverTimings?.promptMs ?? serverTtft - queueMs;
    const cachedTokens = r.repeatOf !== undefined ? Math.floor((r.promptTokens ?? 0) * 0.9) : 0;
    let chunkTimesMs = r.chunkTimesMs;
    let e2eMs = r.e2eMs!;
    if (buffered) {
      let lastFlush = -1;
      let j = 0;
      chunkTimesMs = r.chunkTimesMs.map((c) => {
        const flush = Math.ceil((r.sentAt + c - t0) / period) * period;
        j = flush === lastFlush ? j + 1 : 0;
        lastFlush = flush;
        return Math.round((t0 + flush + j * 0.05 - r.sentAt) * 1000) / 1000;
      });
      e2eMs = chunkTimesMs[chunkTimesMs.length - 1]!;
    }
    const ttftMs = chunkTimesMs[0]!;
    const n = chunkTimesMs.length;
    return {
      ...r,
      firstChunkMs: ttftMs,
      ttftMs,
      ttfoMs: ttftMs,
      tpotMs: n > 1 ? (e2eMs - ttftMs) / (n - 1) : undefined,
      e2eMs,
      lastByteMs: Math.round((e2eMs + 0.4) * 1000) / 1000,
      chunkTimesMs,
      serverTimings: {
        source: 'vllm',
        queueMs,
        serverTtftMs: serverTtft,
        promptTokens: r.promptTokens,
        promptMs,
        predictedTokens: r.outputTokens,
        predictedMs: r.e2eMs! - r.ttftMs,
        cachedTokens,
        ...(r.tpotMs === undefined ? {} : { meanItlMs: r.tpotMs }),
      },
      transportMs: ttftMs - serverTtft,
      ...(buffered ? { intermediaries: { via: '1.1 corp-proxy', 'x-accel-buffering': 'yes' } } : {}),
      ...(warm ? {} : { cacheBust: 'nonce' as const }),
    };
  });

  // 2. each stream's stalls, with the engine's cause and culprits
  const spans = timed.map((r) => [r, prefillSpanOf(r)] as const).filter((x): x is readonly [RequestRecord, [number, number]] => x[1] !== undefined);
  const found = new Map<number, FoundGap[]>();
  const requests: RequestRecord[] = timed.map((r) => {
    const gaps = gapsAboveRule(r, base.workload);
    found.set(r.index, gaps);
    if (gaps.length === 0) return r;
    const stalls: RequestStall[] = gaps.map((g) => {
      const a = r.sentAt + g.startMs;
      const b = a + g.gapMs;
      const culprits = buffered ? [] : spans
        .filter(([q]) => q.index !== r.index)
        // its prefill ran in the gap and the stream resumed when it ended
        .map(([q, [s, e]]) => ({ index: q.index, overlap: Math.min(b, e) - Math.max(a, s), endsAt: e }))
        .filter((x) => x.overlap > 0 && Math.abs(x.endsAt - b) <= Math.max(5, 0.02 * g.gapMs))
        .sort((x, y) => y.overlap - x.overlap)
        .slice(0, 2)
        .map((x) => x.index);
      const cause: StallCause = culprits.length ? 'prefill' : buffered ? 'buffering' : 'unknown';
      return { atChunk: g.atChunk, gapMs: g.gapMs, cause, culprits };
    });
    return { ...r, stalls };
  });

  // 3. the summary, as the engine would extend it
  const s0 = summarizeFixture(requests, base.workload);
  const byIndex = new Map(requests.map((r) => [r.index, r] as const));
  const worst: Stall[] = s0.stalls.worst.map((w) => {
    const r = byIndex.get(w.requestIndex)!;
    const k = found.get(r.index)!.findIndex((g) => g.startMs === w.startMs);
    const st = r.stalls![k]!;
    return { ...w, atChunk: st.atChunk, cause: st.cause, culprits: st.culprits.map((i) => ({ index: i, promptTokens: byIndex.get(i)?.promptTokens })) };
  });
  const byCause = { prefill: 0, buffering: 0, unknown: 0 };
  const msByCause = { prefill: 0, buffering: 0, unknown: 0 };
  for (const r of requests) {
    if (r.warmup) continue;
    for (const st of r.stalls ?? []) { byCause[st.cause]++; msByCause[st.cause] += st.gapMs; }
  }
  const pct = base.workload.percentiles;
  const ok = requests.filter((r) => !r.warmup && !r.error && r.ttftMs !== undefined);
  const withServer = ok.filter((r) => r.serverTimings);
  const pickS = (f: (r: RequestRecord) => number | undefined) => statsOf(withServer.map(f).filter((v): v is number => v !== undefined), pct);
  const server: ServerSideSummary = {
    sources: ['vllm'],
    requests: withServer.length,
    ttftClientMs: statsOf(ok.map((r) => r.ttftMs!), pct),
    ttftServerMs: pickS((r) => r.serverTimings!.serverTtftMs),
    queueMs: pickS((r) => r.serverTimings!.queueMs),
    promptMs: pickS((r) => r.serverTimings!.promptMs),
    transportMs: pickS((r) => r.transportMs),
    cachedTokens: withServer.reduce((a, r) => a + (r.serverTimings!.cachedTokens ?? 0), 0),
    cachedRequests: withServer.filter((r) => (r.serverTimings!.cachedTokens ?? 0) > 0).length,
  };
  const inflation = percentileOf(ok.map((r) => r.transportMs!).sort((a, b) => a - b), 50);
  const bufferingVerdict: BufferingVerdict = buffered
    ? {
      detected: true,
      evidence: [`chunks arrive in bursts every ~${period} ms`, 'a via: 1.1 corp-proxy header', `client TTFT is ${formatMs(inflation)} above the server's (p50)`],
      inflationMs: inflation,
      bufferedStreams: ok.length,
      streams: ok.length,
      periodMs: period,
    }
    : { detected: false, evidence: [], bufferedStreams: 0, streams: ok.length };
  const cold = ok.filter((r) => (r.serverTimings?.cachedTokens ?? 0) === 0);
  const hot = ok.filter((r) => (r.serverTimings?.cachedTokens ?? 0) > 0);
  const prefixCache: PrefixCacheSummary = {
    mode: warm ? 'warm' : 'cold',
    coldRequests: cold.length,
    warmRequests: hot.length,
    ...(cold.length ? { coldTtftMs: statsOf(cold.map((r) => r.ttftMs!), pct) } : {}),
    ...(hot.length ? { warmTtftMs: statsOf(hot.map((r) => r.ttftMs!), pct) } : {}),
    cachedTokens: server.cachedTokens,
  };
  const verdicts: Verdict[] = [];
  if (buffered) {
    verdicts.push({ kind: 'buffering', value: inflation,
      message: `The stream is buffered between the server and you: TTFT inflated by about ${formatMs(inflation)}; ITL and TPOT measure the proxy, not the server.` });
  }
  if (s0.stalls.count > 0) {
    verdicts.push({ kind: 'stalls', value: s0.stalls.shareOfDecode,
      message: `${formatInt(s0.stalls.count)} stalls cost ${formatMs(s0.stalls.totalMs)} (${formatPercent(s0.stalls.shareOfDecode)} of decode): ${formatInt(byCause.prefill)} during another request's prefill, ${formatInt(byCause.buffering)} buffered, ${formatInt(byCause.unknown)} unexplained.` });
  }
  if (hot.length) {
    verdicts.push({ kind: 'prefix-cache', value: hot.length,
      message: `${formatInt(hot.length)} of ${formatInt(ok.length)} requests reused the prefix cache: TTFT p50 ${formatMs(prefixCache.warmTtftMs!.p50)} warm against ${formatMs(prefixCache.coldTtftMs?.p50)} cold.` });
  }
  verdicts.push({ kind: 'queue', value: server.queueMs!.p50!, message: `Requests waited ${formatMs(server.queueMs!.p50)} (p50) in the server's queue before their prefill.` });
  const summary: Summary = {
    ...s0,
    stalls: { ...s0.stalls, worst, byCause, msByCause },
    buffering: bufferingVerdict,
    server,
    prefixCache,
    verdicts,
  };

  // 4. the server's /metrics
  let serverMetrics: ServerMetrics | undefined;
  if (options.serverMetrics ?? true) {
    const measured = requests.filter((r) => !r.warmup);
    const mStart = runStartOf(measured);
    const mEnd = Math.max(...measured.map((r) => r.sentAt + Math.max(r.e2eMs ?? 0, r.lastByteMs ?? 0)));
    const atMs: number[] = [];
    const running: (number | null)[] = [];
    const waiting: (number | null)[] = [];
    const kv: (number | null)[] = [];
    for (let t = 0; t <= mEnd - mStart + 1000; t += 1000) {
      const at = t + Math.round(rand() * 30);
      const e = mStart + at;
      let run = 0;
      let wait = 0;
      let tokens = 0;
      for (const r of measured) {
        const st = r.serverTimings;
        if (!st) continue;
        const admitted = r.sentAt + (st.queueMs ?? 0);
        const end = r.sentAt + r.e2eMs!;
        if (e >= r.sentAt && e < admitted) wait++;
        else if (e >= admitted && e < end) {
          run++;
          tokens += (r.promptTokens ?? 0) + r.chunkTimesMs.filter((c) => r.sentAt + c <= e).length;
        }
      }
      atMs.push(at);
      // a scrape that timed out leaves a hole
      const hole = atMs.length === 3;
      running.push(hole ? null : run);
      waiting.push(hole ? null : wait);
      kv.push(hole ? null : Math.min(1, tokens / 8192));
    }
    const mOk = measured.filter((r) => r.serverTimings && !r.error);
    const itlCount = mOk.reduce((a, r) => a + Math.max(0, r.outputTokens - 1), 0);
    const decodeSum = mOk.reduce((a, r) => a + r.serverTimings!.predictedMs!, 0);
    const queries = mOk.reduce((a, r) => a + (r.promptTokens ?? 0), 0);
    const hits = mOk.reduce((a, r) => a + (r.serverTimings!.cachedTokens ?? 0), 0);
    const hist = (metric: string, f: (r: RequestRecord) => number) => histogram(metric, mOk.map(f));
    serverMetrics = {
      url: `${base.endpoint.url}/metrics`,
      family: 'vllm',
      histograms: {
        ttft: hist('vllm:time_to_first_token_seconds', (r) => r.serverTimings!.serverTtftMs!),
        queue: hist('vllm:request_queue_time_seconds', (r) => r.serverTimings!.queueMs!),
        prefill: hist('vllm:request_prefill_time_seconds', (r) => r.serverTimings!.promptMs!),
        decode: hist('vllm:request_decode_time_seconds', (r) => r.serverTimings!.predictedMs!),
        e2e: hist('vllm:e2e_request_latency_seconds', (r) => r.serverTimings!.serverTtftMs! + r.serverTimings!.predictedMs!),
        itl: { metric: 'vllm:time_per_output_token_seconds', count: itlCount, sumMs: decodeSum, meanMs: itlCount ? decodeSum / itlCount : undefined },
      },
      // under the engine's names (src/engine/transport/serverMetrics.ts), not the server's
      counters: {
        promptTokens: queries,
        generationTokens: mOk.reduce((a, r) => a + r.outputTokens, 0),
        prefixCacheQueries: queries,
        prefixCacheHits: hits,
      },
      ...(queries > 0 ? { prefixCacheHitRate: hits / queries } : {}),
      samples: { atMs, running, waiting, kvCacheUsage: kv },
      notes: [],
    };
  }
  return { ...base, requests, summary, ...(serverMetrics ? { serverMetrics } : {}) };
}

function runStartOf(requests: readonly RequestRecord[]): number {
  let t = Infinity;
  for (const r of requests) t = Math.min(t, r.scheduledAt, r.sentAt);
  return t;
}

// ---- Traffic: conversations (sessions), trace replays, tool calls ----

/** A successful stream's record: TTFT, then `n` chunks ~22 ms apart, usage reported. */
function streamRecord(rand: () => number, base: Omit<RequestRecord, 'outputTokens' | 'tokenSource' | 'chunkTimesMs'>, ttftMs: number, n: number): RequestRecord {
  const chunkTimesMs: number[] = [];
  let t = ttftMs;
  for (let i = 0; i < n; i++) {
    if (i > 0) t += 18 + 8 * rand();
    chunkTimesMs.push(Math.round(t * 1000) / 1000);
  }
  const e2eMs = chunkTimesMs[n - 1]!;
  return {
    ...base, headersMs: 1 + rand(), firstChunkMs: chunkTimesMs[0], ttftMs: chunkTimesMs[0], ttfoMs: chunkTimesMs[0],
    ...(n > 1 ? { tpotMs: (e2eMs - chunkTimesMs[0]!) / (n - 1) } : {}), e2eMs, lastByteMs: Math.round((e2eMs + 0.4) * 1000) / 1000,
    outputTokens: n, tokenSource: 'usage', chunkTimesMs, httpStatus: 200,
  };
}

function runOf(id: string, startedAt: number, workload: WorkloadSpec, requests: RequestRecord[], summary: Summary, connections: number): RunFile {
  const last = Math.max(...requests.map((r) => r.sentAt + Math.max(r.e2eMs ?? 0, r.lastByteMs ?? 0)));
  return {
    format: 'llm-profiler.run', version: 1, id, startedAt: new Date(startedAt).toISOString(), endedAt: new Date(last).toISOString(),
    tool: { name: 'llm-profiler', version: '0.1.0' },
    endpoint: { name: 'fixture', url: 'http://127.0.0.1:8080', api: 'openai-chat', model: 'fixture-model-7b' },
    workload, connection: { connections, connectMs: new Array(connections).fill(1.5) }, requests, summary,
  };
}

export interface SessionFixtureOptions {
  readonly seed?: number;
  readonly sessions?: number;
  readonly turns?: number;
  /** Sessions in flight (the closed loop's concurrency). */
  readonly concurrency?: number;
  readonly thinkTimeMs?: number;
  readonly userTokens?: number;
  readonly replyTokens?: number;
  /** "on": the server serves each turn's history from its prefix cache (and says so); "off": it prefills the whole history again, reports no cached tokens, and the run carries the 'history' verdict. */
  readonly cache?: 'on' | 'off';
  /** Leave the summary's byTurn out (a file whose engine did not write it). */
  readonly withoutByTurn?: boolean;
  readonly id?: string;
}

/** TTFT, history, prompt and cached tokens by turn, as the engine defines them (measured, successful requests with a turn). */
export function byTurnOf(requests: readonly RequestRecord[], percentiles: readonly number[]): NonNullable<Summary['byTurn']> {
  const turns = new Map<number, RequestRecord[]>();
  for (const r of requests) {
    if (r.warmup || r.error || r.turn === undefined || r.ttftMs === undefined) continue;
    const list = turns.get(r.turn) ?? [];
    list.push(r);
    turns.set(r.turn, list);
  }
  const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
  return [...turns.keys()].sort((a, b) => a - b).map((turn) => {
    const rs = turns.get(turn)!;
    const cached = rs.filter((r) => r.serverTimings?.cachedTokens !== undefined).map((r) => r.serverTimings!.cachedTokens!);
    return {
      turn, requests: rs.length, ttftMs: statsOf(rs.map((r) => r.ttftMs!), percentiles),
      historyTokens: mean(rs.map((r) => r.historyTokens ?? 0)), promptTokens: mean(rs.map((r) => r.promptTokens ?? 0)),
      ...(cached.length ? { cachedTokens: mean(cached) } : {}),
    };
  });
}

/**
 * A multi-turn run (synthetic chat): `sessions` conversations of `turns` turns, `concurrency` of them
 * in flight; each turn is sent `thinkTimeMs` after the last reply ended and carries the whole history
 * (its prompt grows by the last user turn and the reply). One warmup request outside any session
 * comes first. With the cache on, a turn's history is served from the prefix cache (TTFT stays flat);
 * off, it is prefilled again (TTFT grows with the history) and the verdicts say so.
 */
export function fixtureSessionRun(options: SessionFixtureOptions = {}): RunFile {
  const seed = options.seed ?? 5;
  const rand = rng(seed);
  const S = options.sessions ?? 6;
  const T = options.turns ?? 5;
  const C = Math.max(1, options.concurrency ?? 3);
  const think = options.thinkTimeMs ?? 400;
  const user = options.userTokens ?? 64;
  const reply = options.replyTokens ?? 24;
  const cacheOn = (options.cache ?? 'on') === 'on';
  const t0 = Date.parse('2026-03-02T09:00:00.000Z');
  const requests: RequestRecord[] = [];
  // the warmup: one request before the sessions, in none of them
  requests.push(streamRecord(rand, { index: 0, warmup: true, scheduledAt: t0, sentAt: t0 + 0.5, promptTokens: user }, 260, reply));
  const slots = new Array<number>(C).fill(requests[0]!.sentAt + requests[0]!.lastByteMs! + 5 - t0);
  let index = 1;
  for (let session = 0; session < S; session++) {
    let slot = 0;
    for (let s = 1; s < C; s++) if (slots[s]! < slots[slot]!) slot = s;
    let free = slots[slot]!;
    let history = 0;
    for (let turn = 0; turn < T; turn++) {
      const scheduled = turn === 0 ? free : free + think;
      const sent = scheduled + 0.3 + rand();
      const promptTokens = history + user;
      const cachedTokens = cacheOn && turn > 0 ? history : 0;
      const ttft = 35 + 0.25 * (promptTokens - cachedTokens) + 10 * rand();
      const rec = streamRecord(rand, {
        index: index++, warmup: false, scheduledAt: t0 + scheduled, sentAt: t0 + sent, promptTokens, session, turn, historyTokens: history,
        serverTimings: { source: 'vllm', promptTokens, cachedTokens, promptMs: ttft - 8, serverTtftMs: ttft - 3 },
      }, ttft, reply);
      requests.push(rec);
      free = sent + rec.lastByteMs!;
      history = promptTokens + reply;
    }
    slots[slot] = free + 2;
  }
  const workload: WorkloadSpec = {
    mode: { kind: 'closed', concurrency: C }, sessions: S, thinkTimeMs: think, warmup: 1, maxTokens: reply,
    prompt: { kind: 'chat', turns: T, userTokens: user, replyTokens: reply }, ignoreEos: true, seed, timeoutMs: 60_000, idleTimeoutMs: 10_000,
    percentiles: [50, 90, 95, 99], stallFactor: 5, stallFloorMs: 100, prefixCache: 'warm',
  };
  const byTurn = byTurnOf(requests, workload.percentiles);
  const first = byTurn[0]!;
  const lastTurn = byTurn[byTurn.length - 1]!;
  const verdicts: Verdict[] = cacheOn ? [] : [{
    kind: 'history',
    message: `TTFT grows with the history: turn ${lastTurn.turn + 1}'s p50 is ${formatMs(lastTurn.ttftMs.p50)} against ${formatMs(first.ttftMs.p50)} on turn 1, and the server reported no cached prompt tokens: the history is prefilled again each turn: enable the prefix cache`,
    value: lastTurn.ttftMs.p50! / first.ttftMs.p50!,
  }];
  const summary: Summary = { ...summarizeFixture(requests, workload), ...(options.withoutByTurn ? {} : { byTurn }), ...(verdicts.length ? { verdicts } : {}) };
  return runOf(options.id ?? `fixture-sessions-${seed}-${S}x${T}-${cacheOn ? 'cached' : 'uncached'}`, t0, workload, requests, summary, C);
}

export interface TraceFixtureOptions {
  readonly seed?: number;
  /** Lines of the trace replayed. */
  readonly requests?: number;
  readonly speed?: number;
  /** Share of requests the client sent 20–60 ms late (the schedule not kept when it is above 1 %). */
  readonly lateShare?: number;
  /** Every third reply streams a tool call (get_weather) before its text. */
  readonly tools?: boolean;
  readonly id?: string;
}

/**
 * A trace replayed at its timestamps (Mooncake JSONL): bursts of arrivals, each request sent at its
 * line's time (a fraction of a millisecond late, or 20–60 ms for `lateShare` of them), prompts of the
 * line's length; the summary's schedule lag, and with `tools` the tool calls streamed.
 */
export function fixtureTraceRun(options: TraceFixtureOptions = {}): RunFile {
  const seed = options.seed ?? 9;
  const rand = rng(seed);
  const n = options.requests ?? 60;
  const speed = options.speed ?? 1;
  const lateShare = options.lateShare ?? 0;
  const t0 = Date.parse('2026-03-03T14:00:00.000Z');
  const requests: RequestRecord[] = [];
  let at = 0;
  for (let line = 0; line < n; line++) {
    at += (rand() < 0.2 ? 400 : 30) * rand() / speed;
    const late = rand() < lateShare;
    const lag = late ? 20 + 40 * rand() : 0.05 + 0.6 * rand();
    const promptTokens = 128 + Math.floor(rand() * 3000);
    const tool = options.tools === true && line % 3 === 0;
    const ttft = 40 + promptTokens * 0.05 + 10 * rand();
    const rec = streamRecord(rand, { index: line, warmup: false, scheduledAt: t0 + at, sentAt: t0 + at + lag, promptTokens, traceLine: line }, ttft, 8 + Math.floor(rand() * 40));
    const toolCalls = tool ? [{ name: 'get_weather', firstDeltaMs: ttft - 12, lastDeltaMs: ttft - 12 + 180, argDeltas: 9, argChars: 41, argTokens: 12 }] : undefined;
    requests.push(toolCalls ? { ...rec, toolCalls } : rec);
  }
  const workload: WorkloadSpec = {
    mode: { kind: 'trace', speed }, warmup: 0, maxTokens: 256, prompt: { kind: 'trace', path: '/w/traces/mooncake_trace.jsonl', format: 'mooncake' },
    ignoreEos: true, seed, timeoutMs: 60_000, idleTimeoutMs: 10_000, percentiles: [50, 90, 95, 99], stallFactor: 5, stallFloorMs: 100, prefixCache: 'warm',
  };
  const lags = requests.map((r) => r.sentAt - r.scheduledAt);
  const lagMs = statsOf(lags, workload.percentiles);
  const late = lags.filter((l) => l > 5).length;
  const kept = (lagMs.p99 ?? lagMs.max) <= 5;
  const withTools = requests.filter((r) => r.toolCalls?.length);
  const calls = withTools.flatMap((r) => r.toolCalls!);
  const summary: Summary = {
    ...summarizeFixture(requests, workload),
    schedule: { lagMs, late, kept },
    ...(calls.length ? { toolCalls: {
      requests: withTools.length, calls: calls.length, firstDeltaMs: statsOf(calls.map((c) => c.firstDeltaMs), workload.percentiles),
      argTokensPerS: statsOf(calls.map((c) => c.argTokens / ((c.lastDeltaMs - c.firstDeltaMs) / 1000)), workload.percentiles),
    } } : {}),
    ...(kept ? {} : { verdicts: [{ kind: 'schedule' as const, message: `the client could not keep the trace's schedule: ${formatInt(late)} of ${formatInt(n)} requests were sent more than 5 ms late (p99 ${formatMs(lagMs.p99)}): the load it sent was lighter than the trace's`, value: lagMs.p99 ?? 0 }] }),
  };
  return runOf(options.id ?? `fixture-trace-${seed}-${n}${calls.length ? '-tools' : ''}`, t0, workload, requests, summary, 16);
}
