// The tool calls of a run (RequestRecord.toolCalls): how many completed requests streamed one, how
// long until a call's first piece, and how fast its arguments streamed. Pure.
import type { RequestRecord, ToolCallSummary } from '../core/types';
import { stats } from '../core/stats';

/**
 * Over the successful measured requests: the requests that made a call, the calls, the time to each
 * call's first piece (ms after the send), and each call's argument tokens per second from its first
 * to its last piece, for calls whose arguments came in at least two pieces (one piece has no span).
 * Undefined when no request streamed a call.
 */
export function summarizeToolCalls(ok: readonly RequestRecord[], percentiles: readonly number[]): ToolCallSummary | undefined {
  let requests = 0;
  const firsts: number[] = [];
  const rates: number[] = [];
  for (const r of ok) {
    const calls = r.toolCalls;
    if (calls === undefined || calls.length === 0) continue;
    requests++;
    for (const c of calls) {
      firsts.push(c.firstDeltaMs);
      const spanMs = c.lastDeltaMs - c.firstDeltaMs;
      if (c.argDeltas >= 2 && spanMs > 0) rates.push(c.argTokens / (spanMs / 1000));
    }
  }
  if (requests === 0) return undefined;
  return {
    requests,
    calls: firsts.length,
    firstDeltaMs: stats(firsts, percentiles),
    ...(rates.length > 0 ? { argTokensPerS: stats(rates, percentiles) } : {}),
  };
}
