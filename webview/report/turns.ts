// TTFT (and the cached prompt tokens the server reported) by turn index, for the report's chart:
// the engine's Summary.byTurn when the run file has it, else the engine's own summary of the turns
// worked out here from the requests (a file written before the engine summarized turns).
import type { RunFile, TurnSummary } from '../../src/engine/core/types';
import { summarizeTurns } from '../../src/engine/analysis/turns';

const DEFAULT_PERCENTILES = [50, 90, 95, 99];

/** The run's turns: the engine's summary, else the requests'. Empty for a run without turns. */
export function turnsOf(run: Pick<RunFile, 'requests' | 'workload' | 'summary'>): readonly TurnSummary[] {
  if (run.summary.byTurn?.length) return run.summary.byTurn;
  const measuredOk = run.requests.filter((r) => !r.warmup && r.error === undefined);
  return summarizeTurns(measuredOk, run.workload?.percentiles ?? DEFAULT_PERCENTILES) ?? [];
}
