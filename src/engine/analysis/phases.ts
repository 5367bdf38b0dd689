// Where one request's time went: queue → prefill → first token → decode, plus what the trip between
// the server and the client added, from the best evidence present.
//
// With server timings (vLLM's per-request metrics, TGI's headers) the queue and prefill are the
// server's own words and transport is what is left of the client's TTFT. llama.cpp and Ollama report
// the prompt's time but not the wait for a slot, so there the rest of TTFT is "queue, network and
// client", not told apart. With no server timings the client knows only its own clock: the response
// headers arrive one round trip after sending on servers that answer headers at once, so that is
// the transport, and the rest of TTFT is the server's queue and prefill together ("wait"). Each
// request says which evidence it used. Browser-safe (the report panel imports it).
import type { RequestRecord, ServerSideSummary, Stats, TimingSource } from '../core/types';
import { stats } from '../core/stats';

export interface PhaseSegment {
  readonly kind: 'queue' | 'prefill' | 'wait' | 'transport' | 'decode';
  readonly ms: number;
  readonly label: string;
  /** A few words for tight places (a CLI column, a legend): "queue", "queue+transport". */
  readonly short: string;
}

export interface RequestPhases {
  readonly index: number;
  /** 'server': queue/prefill from the server's own timings; 'client': inferred from the client's clock alone. */
  readonly evidence: 'server' | 'client';
  /** In time order; their ms add up to e2eMs. */
  readonly segments: readonly PhaseSegment[];
  readonly ttftMs: number;
  readonly e2eMs: number;
}

/**
 * Where the server says the request's prefill began, ms after sentAt: its prompt time back from the
 * first token, but never before the request was sent (a server's claim beyond that is not believed).
 * Undefined without a first token or a reported prompt time.
 */
export function prefillStartMs(r: RequestRecord): number | undefined {
  const promptMs = r.serverTimings?.promptMs;
  if (r.ttftMs === undefined || promptMs === undefined || !(promptMs > 0)) return undefined;
  return Math.max(0, r.ttftMs - promptMs);
}

/** Client TTFT − server TTFT, or undefined when either is missing. Can be slightly negative (two clocks): kept as measured. */
export function transportOf(r: RequestRecord): number | undefined {
  const server = r.serverTimings?.serverTtftMs;
  if (server === undefined || r.ttftMs === undefined) return undefined;
  return Math.round((r.ttftMs - server) * 1000) / 1000;
}

const nonNeg = (ms: number): number => (ms > 0 ? ms : 0);

export function phasesOf(r: RequestRecord): RequestPhases | undefined {
  const ttft = r.ttftMs;
  if (ttft === undefined) return undefined;
  const e2e = Math.max(ttft, r.e2eMs ?? ttft);
  const decode: PhaseSegment = { kind: 'decode', ms: e2e - ttft, label: 'decode', short: 'decode' };
  const st = r.serverTimings;
  const serverTtft = st?.serverTtftMs;
  if (st !== undefined && serverTtft !== undefined) {
    const segments: PhaseSegment[] = [];
    let serverPart = Math.min(ttft, nonNeg(serverTtft));
    if (st.queueMs !== undefined) {
      const queue = Math.min(serverPart, nonNeg(st.queueMs));
      segments.push({ kind: 'queue', ms: queue, label: 'queue (server)', short: 'queue' });
      segments.push({ kind: 'prefill', ms: serverPart - queue, label: 'prefill (server)', short: 'prefill' });
      segments.push({ kind: 'transport', ms: ttft - serverPart, label: 'network, proxies and client', short: 'transport' });
    } else {
      serverPart = Math.min(ttft, nonNeg(st.promptMs ?? serverTtft));
      segments.push({ kind: 'prefill', ms: serverPart, label: 'prefill (server)', short: 'prefill' });
      segments.push({ kind: 'wait', ms: ttft - serverPart, label: 'queue, network and client (the server does not report its queue)', short: 'queue+transport' });
    }
    segments.push(decode);
    return { index: r.index, evidence: 'server', segments, ttftMs: ttft, e2eMs: e2e };
  }
  const transport = Math.min(ttft, nonNeg(r.headersMs ?? 0));
  return {
    index: r.index,
    evidence: 'client',
    segments: [
      { kind: 'transport', ms: transport, label: 'round trip to the response headers (client clock)', short: 'headers' },
      { kind: 'wait', ms: ttft - transport, label: 'queue and prefill (not told apart without server timings)', short: 'queue+prefill' },
      decode,
    ],
    ttftMs: ttft,
    e2eMs: e2e,
  };
}

/** TTFT bands for runs with too many requests to draw one bar each. */
const BANDS: readonly [number, number, string][] = [
  [0, 50, 'p0–p50'],
  [50, 90, 'p50–p90'],
  [90, 99, 'p90–p99'],
  [99, 100, 'p99–p100'],
];

/** Requests grouped by their TTFT percentile band, each band's segments averaged (kind by kind, labels of the first). */
export function phaseBands(records: readonly RequestRecord[]): { label: string; count: number; phases: RequestPhases }[] {
  const all = records.map(phasesOf).filter((p): p is RequestPhases => p !== undefined);
  all.sort((a, b) => a.ttftMs - b.ttftMs);
  const out: { label: string; count: number; phases: RequestPhases }[] = [];
  const n = all.length;
  for (const [lo, hi, label] of BANDS) {
    const from = Math.floor((lo / 100) * n);
    const to = hi === 100 ? n : Math.floor((hi / 100) * n);
    const band = all.slice(from, Math.max(from, to));
    if (band.length === 0) continue;
    const byKey = new Map<string, { seg: PhaseSegment; sum: number }>();
    let ttft = 0;
    let e2e = 0;
    let server = 0;
    for (const p of band) {
      ttft += p.ttftMs;
      e2e += p.e2eMs;
      if (p.evidence === 'server') server++;
      for (const s of p.segments) {
        const key = `${s.kind}:${s.label}`;
        const e = byKey.get(key);
        if (e) e.sum += s.ms;
        else byKey.set(key, { seg: s, sum: s.ms });
      }
    }
    const m = band.length;
    out.push({
      label,
      count: m,
      phases: {
        index: -1,
        evidence: server * 2 >= m ? 'server' : 'client',
        segments: [...byKey.values()].map(({ seg, sum }) => ({ kind: seg.kind, label: seg.label, short: seg.short, ms: sum / m })),
        ttftMs: ttft / m,
        e2eMs: e2e / m,
      },
    });
  }
  return out;
}

/** Client vs server over the successful measured requests that carried server timings; undefined when none did. */
export function summarizeServer(ok: readonly RequestRecord[], percentiles: readonly number[]): ServerSideSummary | undefined {
  // Cached tokens alone (OpenAI's usage) say nothing about time: those requests are not "with server timings".
  const withTimings = ok.filter((r) => {
    const st = r.serverTimings;
    return st !== undefined && (st.serverTtftMs !== undefined || st.queueMs !== undefined || st.promptMs !== undefined);
  });
  if (withTimings.length === 0) return undefined;
  const sources = new Set<TimingSource>();
  const client: number[] = [];
  const server: number[] = [];
  const queue: number[] = [];
  const prompt: number[] = [];
  const transport: number[] = [];
  let cachedTokens = 0;
  let cachedRequests = 0;
  for (const r of withTimings) {
    const st = r.serverTimings!;
    if (st.source !== undefined) sources.add(st.source);
    if (r.ttftMs !== undefined) client.push(r.ttftMs);
    if (st.serverTtftMs !== undefined) server.push(st.serverTtftMs);
    if (st.queueMs !== undefined) queue.push(st.queueMs);
    if (st.promptMs !== undefined) prompt.push(st.promptMs);
    const t = r.transportMs ?? transportOf(r);
    if (t !== undefined) transport.push(t);
    if (st.cachedTokens !== undefined && st.cachedTokens > 0) {
      cachedTokens += st.cachedTokens;
      cachedRequests++;
    }
  }
  const opt = (xs: number[]): Stats | undefined => (xs.length > 0 ? stats(xs, percentiles) : undefined);
  const out: { -readonly [K in keyof ServerSideSummary]: ServerSideSummary[K] } = {
    sources: [...sources],
    requests: withTimings.length,
    ttftClientMs: stats(client, percentiles),
    cachedTokens,
    cachedRequests,
  };
  const s = opt(server);
  const q = opt(queue);
  const p = opt(prompt);
  const tr = opt(transport);
  if (s) out.ttftServerMs = s;
  if (q) out.queueMs = q;
  if (p) out.promptMs = p;
  if (tr) out.transportMs = tr;
  return out;
}
