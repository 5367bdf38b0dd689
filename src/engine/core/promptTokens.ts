// The prompt tokens the server counted for a run's requests: one definition for the run file's
// promptLength.sent (run/promptLength.ts) and every surface's header (present/workloadText.ts).
import type { PromptLength, RequestRecord } from './types';
import { median } from './stats';

/** The prompt tokens a reply's usage reported (not the client's estimate), for a request that succeeded. */
export function serverCounted(r: RequestRecord): number | undefined {
  return r.error === undefined && !r.promptTokensEstimated && r.promptTokens !== undefined ? r.promptTokens : undefined;
}

/** The measured requests' prompt tokens as the server counted them: median, lowest, highest, how many; undefined when none was counted. */
export function sentCounts(requests: readonly RequestRecord[]): PromptLength['sent'] | undefined {
  const counted: number[] = [];
  let min = Infinity;
  let max = -Infinity;
  for (const r of requests) {
    const n = r.warmup ? undefined : serverCounted(r);
    if (n === undefined) continue;
    counted.push(n);
    min = Math.min(min, n);
    max = Math.max(max, n);
  }
  return counted.length > 0 ? { p50: median(counted), min, max, requests: counted.length } : undefined;
}
