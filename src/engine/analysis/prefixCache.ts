// Which requests of a run the server answered from its prefix cache ("warm"), and TTFT split by it:
// a run that repeats a prompt must not pass off cached prefill as the server's speed.
import type { PrefixCacheSummary, RequestRecord } from '../core/types';
import { stats } from '../core/stats';
import { DEFAULT_PERCENTILES } from '../core/workload';

/**
 * The share of a prompt's tokens the server must report cached for the request to count warm. Not
 * "any": llama.cpp reuses a chat template's first tokens even for a prompt led by a nonce, a few
 * tokens of hundreds; a prompt served from the cache has all but its new tail cached.
 */
const WARM_CACHED_SHARE = 0.5;

/** The prompt tokens the server reported cached, when it reported them. */
export function cachedTokensOf(r: RequestRecord): number | undefined {
  const n = r.serverTimings?.cachedTokens;
  return typeof n === 'number' && Number.isFinite(n) && n >= 0 ? n : undefined;
}

/** True when at least half of the prompt's tokens were reported cached. */
export function mostlyCached(cached: number, promptTokens: number | undefined): boolean {
  if (cached <= 0) return false;
  const total = Math.max(promptTokens ?? 0, cached);
  return cached >= WARM_CACHED_SHARE * total;
}

/**
 * Whether a request was served warm. The server's own count wins where it gives one (most of the
 * prompt cached); without it, a repeat of an earlier prompt in a warm run is taken as warm (the
 * server may cache it; nothing kept it from doing so).
 */
export function servedWarm(r: RequestRecord, mode: 'cold' | 'warm'): boolean {
  const cached = cachedTokensOf(r);
  if (cached !== undefined) return mostlyCached(cached, r.promptTokens);
  return mode === 'warm' && r.repeatOf !== undefined;
}

/**
 * TTFT of the cold and the warm requests among measured successful ones, and the cached tokens the
 * server reported; undefined when no prompt repeats and no request was served warm (nothing to split).
 */
export function summarizePrefixCache(
  measuredOk: readonly RequestRecord[],
  mode: 'cold' | 'warm',
  percentiles: readonly number[] = DEFAULT_PERCENTILES,
): PrefixCacheSummary | undefined {
  const cold: number[] = [];
  const warm: number[] = [];
  let coldRequests = 0;
  let warmRequests = 0;
  let repeats = 0;
  let cachedTokens = 0;
  for (const r of measuredOk) {
    if (r.repeatOf !== undefined) repeats++;
    cachedTokens += cachedTokensOf(r) ?? 0;
    const isWarm = servedWarm(r, mode);
    if (isWarm) warmRequests++;
    else coldRequests++;
    if (r.ttftMs !== undefined) (isWarm ? warm : cold).push(r.ttftMs);
  }
  if (repeats === 0 && warmRequests === 0) return undefined;
  return {
    mode,
    coldRequests,
    warmRequests,
    ...(cold.length > 0 ? { coldTtftMs: stats(cold, percentiles) } : {}),
    ...(warm.length > 0 ? { warmTtftMs: stats(warm, percentiles) } : {}),
    cachedTokens,
  };
}
