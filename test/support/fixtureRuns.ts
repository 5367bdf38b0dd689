// Realistic run files of any size from a seed, for the report panel's tests and benchmark: a closed
// loop of streams with TTFT, jittered ITL, stalls that hit every stream at once (another request's
// prefill), a few errors (429 before any token, a reset mid-stream), and warmup requests. The summary
// is computed here the way the engine defines it (linear percentiles), so the panel's table can be
// checked against `run.summary` exactly.
import { Rng } from '../../src/engine/random';
import type { ErrorKind, RequestRecord, RunFile, SloSpec, Stall, Stats, Summary, WorkloadSpec } from '../../src/engine/types';

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
    const promptTokens = 64 + Math.floor(rand() * 960);
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
      ttft = 80 + promptTokens * 0.15 + Math.abs(normal()) * 40 + (isWarmup ? 300 : 0);
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
  };
  const summary = summarizeFixture(requests, workload);
  const last = Math.max(...requests.map((r) => r.sentAt + Math.max(r.e2eMs ?? 0, r.lastByteMs ?? 0)));
  return {
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
}

/** The engine's definitions, for fixtures only (the real ones live in src/engine/metrics.ts). */
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
