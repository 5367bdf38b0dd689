// Prefill stalls, attributed. A gap in one stream (stalls.ts's rule: far longer than the stream's
// own rhythm) is a prefill stall only when another request's prefill ran in that engine step.
//
// The rule. An engine step that prefills a prompt ends by emitting that request's first token, in
// the same step that emits the next token of every stream decoding beside it (vLLM, SGLang,
// llama.cpp and TGI all batch this way). So the culprits of a gap that ends at chunk i of stream S
// are the requests whose first token arrived with S's chunk i: after S's previous chunk and no later
// than S's chunk i, give or take half of S's ITL (a token of the next step comes a whole ITL later),
// and that were sent before the gap began (a request that reached the server after a step started
// waits for the next one: one that merely finished in the same burst after a pause is not blamed).
// Where a request's server timings give its prefill time, its prefill is placed before its first
// token on the client's clock, and a gap that lies mostly inside it is blamed on it too (a chunked
// prefill spreads over several steps): of several such, the one that finishes first, since servers
// fill the prefill budget first come, first served.
//
// The limits (docs/metrics.md, "Where the time went"): culprits must be requests of this run: another
// client's traffic on the same server shows as "unknown"; a request whose first token never came
// cannot be blamed; in a buffered stream the gaps are the buffer's (cause "buffering"), never a
// prefill; and the client's clock sees arrivals, so a gap under the stall floor is not judged at all.
import { judgeBuffering } from './buffering';
import type { BufferingAnalysis } from './buffering';
import { prefillStartMs, transportOf } from './phases';
import { findStalls } from './stalls';
import type { RequestRecord, RequestStall, Stall, StallCause, WorkloadSpec } from '../core/types';

export interface TimingAnalysis {
  /** Stalls by request index (requests without stalls are absent). */
  readonly stalls: ReadonlyMap<number, readonly RequestStall[]>;
  /** The same stalls as stalls.ts found them (start, median ITL), in the same order: the summary's, without finding them again. */
  readonly found: ReadonlyMap<number, readonly Stall[]>;
  readonly buffering: BufferingAnalysis;
}

interface FirstToken {
  readonly at: number;
  readonly index: number;
  /** When it was sent: a request sent after a step began cannot be in that step. */
  readonly sentAt: number;
  /** Start of its prefill on the client's clock, when the server said how long it took. */
  readonly prefillFrom?: number;
}

/** Share of a gap that a culprit's reported prefill must cover. */
const PREFILL_COVER = 0.5;

/** Every request's first-token arrival (epoch ms), sorted: the candidates for blame. */
function firstTokens(records: readonly RequestRecord[]): FirstToken[] {
  const out: FirstToken[] = [];
  for (const r of records) {
    if (r.ttftMs === undefined) continue;
    const at = r.sentAt + r.ttftMs;
    const from = prefillStartMs(r);
    out.push(from !== undefined ? { at, index: r.index, sentAt: r.sentAt, prefillFrom: r.sentAt + from } : { at, index: r.index, sentAt: r.sentAt });
  }
  return out.sort((a, b) => a.at - b.at);
}

/** First position in `sorted` whose `at` is > t. */
function upperBound(sorted: readonly FirstToken[], t: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (sorted[mid]!.at <= t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * The culprits of the gap (from, to] (epoch ms) in stream `self`: first tokens that arrived with the
 * chunk that ended it, and reported prefills that cover most of it.
 */
function culpritsOf(tokens: readonly FirstToken[], longestPrefillMs: number, self: number, from: number, to: number, slackMs: number): number[] {
  const found = new Set<number>();
  for (let k = upperBound(tokens, from + slackMs); k < tokens.length && tokens[k]!.at <= to + slackMs; k++) {
    const c = tokens[k]!;
    if (c.index !== self && c.sentAt < from) found.add(c.index);
  }
  if (longestPrefillMs > 0) {
    // Prefills ending after the gap began and starting before it ended; scan from the first that can.
    // Of those covering most of the gap, only the one that finishes first is blamed: servers give the
    // prefill budget first come, first served, so a later prompt's reported prefill time includes
    // steps it spent waiting behind the one in progress.
    const gap = to - from;
    let first: FirstToken | undefined;
    for (let k = upperBound(tokens, from); k < tokens.length && tokens[k]!.at - longestPrefillMs <= to; k++) {
      const c = tokens[k]!;
      if (c.index === self || c.prefillFrom === undefined || found.has(c.index)) continue;
      const cover = Math.min(to, c.at) - Math.max(from, c.prefillFrom);
      if (gap > 0 && cover >= PREFILL_COVER * gap && (first === undefined || c.at < first.at)) first = c;
    }
    if (first !== undefined) found.add(first.index);
  }
  return [...found].sort((a, b) => a - b);
}

/**
 * Stalls of every successful stream, with cause and culprits, and the buffering verdict. Culprits
 * are looked for among all requests given (warmup and failed ones included: their prefill ran too).
 */
export function analyzeTiming(records: readonly RequestRecord[], workload: Pick<WorkloadSpec, 'stallFactor' | 'stallFloorMs'>): TimingAnalysis {
  const ok = records.filter((r) => r.error === undefined);
  const buffering = judgeBuffering(ok);
  const tokens = firstTokens(records);
  let longestPrefillMs = 0;
  for (const t of tokens) if (t.prefillFrom !== undefined) longestPrefillMs = Math.max(longestPrefillMs, t.at - t.prefillFrom);
  const stalls = new Map<number, RequestStall[]>();
  const foundBy = new Map<number, Stall[]>();
  for (const r of ok) {
    const found = findStalls(r, workload.stallFactor, workload.stallFloorMs);
    if (found.length === 0) continue;
    foundBy.set(r.index, found);
    // Behind a buffer every gap ends at a flush, where other requests' first tokens land too: no gap of a buffered run is blamed on a prefill.
    const buffered = buffering.verdict.detected;
    const list: RequestStall[] = [];
    for (const s of found) {
      let cause: StallCause = 'unknown';
      let culprits: number[] = [];
      if (buffered) {
        cause = 'buffering';
      } else {
        const slack = Math.min(0.5 * s.medianItlMs, 0.25 * s.gapMs);
        culprits = culpritsOf(tokens, longestPrefillMs, r.index, s.startAt, s.startAt + s.gapMs, slack);
        if (culprits.length > 0) cause = 'prefill';
      }
      list.push({ atChunk: s.atChunk!, gapMs: s.gapMs, cause, culprits });
    }
    stalls.set(r.index, list);
  }
  return { stalls, found: foundBy, buffering };
}

/**
 * The records with what the analysis says about each: `stalls` (replacing any earlier verdict) and
 * `transportMs`. Records that gain nothing are returned as they are.
 */
export function annotateRequests(records: readonly RequestRecord[], analysis: TimingAnalysis): RequestRecord[] {
  return records.map((r) => {
    const stalls = analysis.stalls.get(r.index);
    const transportMs = transportOf(r);
    if (stalls === undefined && transportMs === undefined && r.stalls === undefined && r.transportMs === undefined) return r;
    const { stalls: _old, transportMs: _oldT, ...rest } = r;
    return {
      ...rest,
      ...(transportMs !== undefined ? { transportMs } : {}),
      ...(stalls !== undefined ? { stalls } : {}),
    };
  });
}
