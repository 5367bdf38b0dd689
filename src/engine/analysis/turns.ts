// A multi-turn run by turn index: TTFT, the history carried and the prompt tokens the server reported
// cached, per turn (Summary.byTurn); and the verdict when TTFT grows with the history while the
// server's cache does not serve it (the history is prefilled again each turn). Pure.
import type { RequestRecord, TurnSummary, Verdict } from '../core/types';
import { stats } from '../core/stats';
import { intWords, msWords } from '../core/words';
import { cachedTokensOf } from './prefixCache';

/** TTFT must grow at least this much from the first turn's p50 to the last's for the history verdict. */
export const HISTORY_TTFT_GROWTH = 1.2;
/** The history counts as served from the cache when the turns after the first report at least this share of it cached. */
const CACHED_HISTORY_SHARE = 0.5;

const mean = (xs: readonly number[]): number => (xs.length > 0 ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);

/**
 * TTFT and tokens by turn index over the measured successful requests that carry a turn and a first
 * token; undefined when none does (a single-turn run). Percentiles: the workload's, with p50 and p90
 * (what the tables show).
 */
export function summarizeTurns(measuredOk: readonly RequestRecord[], percentiles: readonly number[]): TurnSummary[] | undefined {
  const byTurn = new Map<number, RequestRecord[]>();
  for (const r of measuredOk) {
    if (r.turn === undefined || r.ttftMs === undefined) continue;
    const list = byTurn.get(r.turn);
    if (list) list.push(r);
    else byTurn.set(r.turn, [r]);
  }
  if (byTurn.size === 0) return undefined;
  const pcts = [...new Set([...percentiles, 50, 90])].sort((a, b) => a - b);
  return [...byTurn.keys()].sort((a, b) => a - b).map((turn) => {
    const rs = byTurn.get(turn)!;
    const cached = rs.map(cachedTokensOf).filter((n): n is number => n !== undefined);
    return {
      turn,
      requests: rs.length,
      ttftMs: stats(rs.map((r) => r.ttftMs!), pcts),
      historyTokens: mean(rs.map((r) => r.historyTokens ?? 0)),
      promptTokens: mean(rs.map((r) => r.promptTokens ?? 0)),
      ...(cached.length > 0 ? { cachedTokens: mean(cached) } : {}),
    };
  });
}

/** Least-squares slope of y on x; undefined when x does not vary. */
function slope(points: readonly (readonly [number, number])[]): number | undefined {
  const mx = mean(points.map((p) => p[0]));
  const my = mean(points.map((p) => p[1]));
  let sxy = 0;
  let sxx = 0;
  for (const [x, y] of points) {
    sxy += (x - mx) * (y - my);
    sxx += (x - mx) ** 2;
  }
  return sxx > 0 ? sxy / sxx : undefined;
}

/**
 * The verdict when TTFT grows with the history and the cache does not serve it. "Grows": the last
 * turn's TTFT p50 is at least HISTORY_TTFT_GROWTH × the first's, the history grew between them, and
 * the least-squares slope of the turns' TTFT p50 on their mean history tokens is positive. "Does not
 * serve it": the turns after the first report less than half their history cached (none at all, or no
 * figure: then TTFT alone tells it, and the message says so). When the cache serves the history, none.
 */
export function historyVerdict(turns: readonly TurnSummary[]): Verdict | undefined {
  const measured = turns.filter((t) => t.ttftMs.count > 0);
  if (measured.length < 2) return undefined;
  const first = measured[0]!;
  const last = measured[measured.length - 1]!;
  const p50 = (t: TurnSummary) => t.ttftMs.p50 ?? t.ttftMs.mean;
  if (!(last.historyTokens > first.historyTokens) || !(p50(last) >= HISTORY_TTFT_GROWTH * p50(first))) return undefined;
  const perToken = slope(measured.map((t) => [t.historyTokens, p50(t)] as const));
  if (perToken === undefined || !(perToken > 0)) return undefined;
  const later = measured.slice(1);
  const reported = later.filter((t) => t.cachedTokens !== undefined);
  const cached = reported.reduce((a, t) => a + t.cachedTokens! * t.requests, 0);
  const history = reported.reduce((a, t) => a + t.historyTokens * t.requests, 0);
  if (reported.length > 0 && cached >= CACHED_HISTORY_SHARE * history) return undefined;
  const cache =
    reported.length === 0
      ? 'the server reports no cached-token figure (so TTFT alone tells it)'
      : cached === 0
        ? 'the server reports no cached prompt tokens'
        : `the server reports only ${intWords(cached / reported.reduce((a, t) => a + t.requests, 0))} of ${intWords(history / reported.reduce((a, t) => a + t.requests, 0))} history tokens cached per request`;
  const at = (t: TurnSummary) => `${msWords(p50(t))} at turn ${t.turn + 1} (${intWords(t.historyTokens)} history tokens)`;
  return {
    kind: 'history',
    message: `TTFT grows with the history: p50 ${at(first)} to ${at(last)}, ${msWords(perToken * 1000)} per 1,000 history tokens, and ${cache}: the history is prefilled again each turn: enable the prefix cache`,
    value: p50(last) - p50(first),
  };
}
