// The words of a run recovered from its journal (engine/run/recover.ts), the same on every surface:
// the CLI's table, the sweep's lines, the report's header and the extension's offer to recover.
import type { Interrupted, RunFile } from '../engine/core/types';
import { clockTime } from './timeText';
import type { SurfaceClock } from '../shared/protocol';

/** "183 of 400 requests" (a duration-bound run: "183 requests"). */
export function finishedOf(finished: number, total: number | undefined): string {
  return `${finished}${total !== undefined ? ` of ${total}` : ''} request${finished === 1 && total === undefined ? '' : 's'}`;
}

/** One sentence: when the process stopped (in `clock`: the window's, src/present/timeText.ts), what finished, what was lost; undefined for a run that ended. */
export function interruptedLine(run: Pick<RunFile, 'interrupted'>, clock?: SurfaceClock): string | undefined {
  const i: Interrupted | undefined = run.interrupted;
  if (!i) return undefined;
  const lost = i.inFlight > 0 ? `; the ${i.inFlight} in flight then were lost` : '';
  const point = i.unfinishedPoint !== undefined ? ` Point ${i.unfinishedPoint} had not finished: its requests are kept but not fitted.` : '';
  const rep = i.unfinishedRepetition !== undefined ? ` Repetition ${i.unfinishedRepetition + 1} had not finished: it holds the requests it finished.` : '';
  const skipped = i.skippedLines ? ` ${i.skippedLines} damaged line${i.skippedLines === 1 ? '' : 's'} of the journal skipped.` : '';
  return `Interrupted: the process stopped after ${clockTime(i.lastSeenAt, clock)} with ${finishedOf(i.finished, i.total)} finished${lost}; recovered from its journal.${point}${rep}${skipped}`;
}

/** A run its process left, as every surface offers it: "A run against vllm-a stopped at 5 Dec 2026, 10:14:03 with 183 of 400 requests." */
export function leftLine(j: { readonly kind: 'run' | 'sweep'; readonly against: string; readonly stoppedAt: string; readonly finished: number; readonly total?: number }, clock?: SurfaceClock): string {
  return `${j.kind === 'sweep' ? 'A sweep' : 'A run'} against ${j.against} stopped at ${clockTime(j.stoppedAt, clock)} with ${finishedOf(j.finished, j.total)}.`;
}
