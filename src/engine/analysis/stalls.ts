// Prefill stalls, first cut: a gap in one stream far longer than that stream's own rhythm.
//
// Why judge a gap against the stream's own median ITL and not a fixed threshold: decode speed varies
// tenfold between endpoints (a tiny local model streams a token every 5 ms, a large hosted one every
// 60 ms), so "slow" only means something relative to the same stream. Why a factor of 3: ordinary
// jitter (scheduler noise, a GC pause, network batching) rarely triples a gap, whereas another
// request's prefill landing in the same engine step typically stretches it by far more. Why a floor
// (50 ms): on a fast stream 3 × 4 ms = 12 ms is within the noise of a loaded machine and of the OS
// timer; a pause under ~50 ms is also below what a reader of streamed text notices. Both are
// settings (WorkloadSpec.stallFactor / stallFloorMs).
import type { RequestRecord, RequestStall, Stall, StallCause, StallSummary } from '../core/types';
import { gapsOf, median } from '../core/stats';

const WORST_STALLS = 10;

/**
 * A stall whose cause the client cannot show, said as what it could be (every surface, the verdict
 * included): no alarm, since the client sees no prefill of its own run then. The short form names it in a legend.
 */
export const UNKNOWN_STALL_SHORT = 'cause not shown';
/** Why the cause is not shown: a stall's own line says it beside UNKNOWN_STALL_SHORT. */
export const UNKNOWN_STALL_WHY = 'no request of this run was prefilling then';
export const UNKNOWN_STALL_CAUSE = `${UNKNOWN_STALL_SHORT}: ${UNKNOWN_STALL_WHY}; it could be this machine (a pause of the client's process or of the OS), the server's own pauses, or another client's traffic`;

/** The stalls in one stream: gaps > factor × the stream's median ITL and > floorMs. */
export function findStalls(record: RequestRecord, factor: number, floorMs: number): Stall[] {
  const times = record.chunkTimesMs;
  const gaps = gapsOf(times);
  if (gaps.length === 0) return [];
  const med = median(gaps);
  const threshold = Math.max(factor * med, floorMs);
  const stalls: Stall[] = [];
  for (let i = 0; i < gaps.length; i++) {
    const gap = gaps[i]!;
    if (gap > threshold) {
      const startMs = times[i]!;
      stalls.push({ requestIndex: record.index, startMs, startAt: record.sentAt + startMs, gapMs: gap, medianItlMs: med, atChunk: i + 1 });
    }
  }
  return stalls;
}

export interface StallSummaryOptions {
  /** Each stall's cause and culprits (attribution.ts), by request index. */
  readonly attributed?: ReadonlyMap<number, readonly RequestStall[]>;
  /** The stalls `attributed` judged, as findStalls gave them, in the same order: not found a second time. */
  readonly found?: ReadonlyMap<number, readonly Stall[]>;
  /** A culprit's prompt tokens, to name them in the list. */
  readonly promptTokens?: (index: number) => number | undefined;
  readonly worstCount?: number;
}

/**
 * Stalls over a set of requests (the caller passes the measured, successful ones). Decode time of a
 * request is its first content chunk to its last; `shareOfDecode` is stalled time over the sum.
 */
export function summarizeStalls(
  records: readonly RequestRecord[],
  factor: number,
  floorMs: number,
  options: StallSummaryOptions = {},
): StallSummary {
  const { attributed, found, promptTokens, worstCount = WORST_STALLS } = options;
  const all: Stall[] = [];
  let decodeMs = 0;
  const byCause: Record<StallCause, number> = { prefill: 0, buffering: 0, unknown: 0 };
  const msByCause: Record<StallCause, number> = { prefill: 0, buffering: 0, unknown: 0 };
  for (const r of records) {
    const t = r.chunkTimesMs;
    if (t.length >= 2) decodeMs += t[t.length - 1]! - t[0]!;
    const verdicts = attributed?.get(r.index);
    const stalls = found !== undefined ? (found.get(r.index) ?? []) : findStalls(r, factor, floorMs);
    for (let j = 0; j < stalls.length; j++) {
      const s = stalls[j]!;
      // found with the verdicts: the same list, the same order; else matched by the chunk that ended the gap
      const v = found !== undefined ? verdicts?.[j] : verdicts?.find((x) => x.atChunk === s.atChunk);
      if (v === undefined) {
        all.push(s);
        if (attributed !== undefined) {
          byCause.unknown++;
          msByCause.unknown += s.gapMs;
        }
        continue;
      }
      byCause[v.cause]++;
      msByCause[v.cause] += s.gapMs;
      const culprits = v.culprits.map((index) => {
        const p = promptTokens?.(index);
        return p !== undefined ? { index, promptTokens: p } : { index };
      });
      all.push({ ...s, cause: v.cause, culprits });
    }
  }
  let totalMs = 0;
  for (const s of all) totalMs += s.gapMs;
  const worst = [...all].sort((a, b) => b.gapMs - a.gapMs || a.requestIndex - b.requestIndex).slice(0, worstCount);
  return {
    count: all.length,
    totalMs,
    shareOfDecode: decodeMs > 0 ? totalMs / decodeMs : 0,
    worst,
    factor,
    floorMs,
    ...(attributed !== undefined ? { byCause, msByCause } : {}),
  };
}
