// Where one request's time went: queue → prefill → first token → decode, plus what the trip between
// the server and the client added, from the best evidence present.
//
// With server timings (vLLM's per-request metrics, TGI's headers) the queue and prefill are the
// server's own words and transport is what is left of the client's TTFT. llama.cpp and Ollama report
// the prompt's time but not the wait for a slot, so there the rest of TTFT is "wait": queue, network
// and client, not told apart. With no server timings the client knows only its own clock: the
// response headers arrive one round trip after sending on servers that answer headers at once
// ("headers"), and the rest of TTFT is the server's queue and prefill together ("queue + prefill").
// Each request says which evidence it used. Each kind has one name and one meaning (PHASE_WORDS),
// which every surface (the verdicts, the report's legend, bars and text, the CLI) says it with.
// Browser-safe (the report panel imports it).
import type { RequestRecord, ServerSideSummary, Stats, TimingSource } from '../core/types';
import { stats } from '../core/stats';

/** A part of a request's time; each has one name and one meaning, PHASE_WORDS. */
export type PhaseKind = 'queue' | 'prefill' | 'wait' | 'queuePrefill' | 'headers' | 'transport' | 'decode';

/**
 * Each part's words, the one place they are defined: `short` for tight places (a CLI column), `label`
 * for a legend and a bar's text, `means` for the sentence that explains it.
 */
export const PHASE_WORDS: Readonly<Record<PhaseKind, { readonly short: string; readonly label: string; readonly means: string }>> = {
  queue: { short: 'queue', label: 'queue (server)', means: "waiting in the server's queue before its prefill, as the server reported it" },
  prefill: { short: 'prefill', label: 'prefill (server)', means: "the prompt's processing, as the server reported it" },
  wait: { short: 'wait', label: 'wait: queue, network and client', means: "TTFT beyond the server's prefill: its queue, the network and the client, not told apart (the server reports its prefill, not its queue)" },
  queuePrefill: { short: 'queue + prefill', label: 'queue + prefill (not told apart)', means: "the server's queue and prefill together: without server timings the client cannot tell them apart" },
  headers: { short: 'headers', label: 'round trip to the response headers', means: "from sending to the response headers on the client's clock: the network's round trip, on a server that answers headers at once" },
  transport: { short: 'transport', label: 'transport: network, proxies and client', means: "what the client's TTFT adds to the server's own: the network, proxies and the client" },
  decode: { short: 'decode', label: 'decode', means: 'from the first token to the last' },
};

export interface PhaseSegment {
  readonly kind: PhaseKind;
  readonly ms: number;
  /** PHASE_WORDS[kind].label. */
  readonly label: string;
  /** PHASE_WORDS[kind].short. */
  readonly short: string;
}

/** A segment of `kind`, with its words. */
function segment(kind: PhaseKind, ms: number): PhaseSegment {
  return { kind, ms, label: PHASE_WORDS[kind].label, short: PHASE_WORDS[kind].short };
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
  const decode = segment('decode', e2e - ttft);
  const st = r.serverTimings;
  const serverTtft = st?.serverTtftMs;
  if (st !== undefined && serverTtft !== undefined) {
    const segments: PhaseSegment[] = [];
    let serverPart = Math.min(ttft, nonNeg(serverTtft));
    if (st.queueMs !== undefined) {
      const queue = Math.min(serverPart, nonNeg(st.queueMs));
      segments.push(segment('queue', queue), segment('prefill', serverPart - queue), segment('transport', ttft - serverPart));
    } else {
      serverPart = Math.min(ttft, nonNeg(st.promptMs ?? serverTtft));
      segments.push(segment('prefill', serverPart), segment('wait', ttft - serverPart));
    }
    segments.push(decode);
    return { index: r.index, evidence: 'server', segments, ttftMs: ttft, e2eMs: e2e };
  }
  const transport = Math.min(ttft, nonNeg(r.headersMs ?? 0));
  return {
    index: r.index,
    evidence: 'client',
    segments: [segment('headers', transport), segment('queuePrefill', ttft - transport), decode],
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

/** Where the slowest requests' TTFT went: those at TTFT p99 or above, their parts summed, kind by kind. */
export interface TtftTail {
  /** How many requests: those whose TTFT is at or above `fromMs` (at least the slowest one). */
  readonly requests: number;
  /** TTFT p99 of the requests summarized. */
  readonly fromMs: number;
  /** Their TTFTs summed, ms. */
  readonly ttftMs: number;
  /** Their parts up to the first token, summed by kind, ms: each share is over `ttftMs`, so the shares add up to 1. */
  readonly byKind: Readonly<Partial<Record<PhaseKind, number>>>;
}

/**
 * The TTFT tail as one split: every share a verdict gives of "TTFT p99" is a share of the same
 * requests' TTFT, so they add up (the p99 of each part over the p99 of TTFT would not: those are
 * other requests). Undefined without a request that got a first token.
 */
export function ttftTail(records: readonly RequestRecord[], p99: number | undefined): TtftTail | undefined {
  // a loop, not a spread: an imported run can hold 150,000 requests
  let slowest = -Infinity;
  for (const r of records) if (r.ttftMs !== undefined && r.ttftMs > slowest) slowest = r.ttftMs;
  if (slowest === -Infinity) return undefined;
  const from = p99 !== undefined && p99 <= slowest ? p99 : slowest;
  // split only the tail's requests into their parts
  const tail = records.filter((r) => r.ttftMs !== undefined && r.ttftMs >= from).map(phasesOf).filter((p): p is RequestPhases => p !== undefined);
  const byKind: Partial<Record<PhaseKind, number>> = {};
  let ttftMs = 0;
  for (const p of tail) {
    ttftMs += p.ttftMs;
    for (const s of p.segments) if (s.kind !== 'decode') byKind[s.kind] = (byKind[s.kind] ?? 0) + s.ms;
  }
  return { requests: tail.length, fromMs: from, ttftMs, byKind };
}
