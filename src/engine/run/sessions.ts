// A multi-turn run's measured phase: sessions, each sending its conversation's turns in order. Turn
// t carries the whole history: the earlier user turns and the assistant's replies as the server
// streamed them (the client keeps a reply's text when asked, RequestSpec.keepReply; the sender hands
// it back here and never to the tally), then the new user turn. A turn waits its think time after
// the previous reply ended. The load counts sessions: a closed loop's concurrency is the sessions in
// flight (a finished session frees its slot for the next), an open loop's rate is session arrivals
// (scheduler.ts's schedule); a duration stops the starting of sessions, not the ones under way. A
// failed turn ends its session: its later turns are not sent (the progress's total drops them).
import type { ChatMessage, RequestRecord, WorkloadSpec } from '../core/types';
import { realClock } from '../core/clock';
import type { Clock } from '../core/clock';
import { plannedTurns, turnPrompt } from '../prompts/conversations';
import type { SessionSource } from '../prompts/conversations';
import { estimatePromptTokens } from '../prompts/syntheticPrompts';
import { paced, sleepUntil } from './scheduler';
import type { Planner } from './plan';
import type { Sender } from './sender';

/** Which sessions a phase sends (runner.ts MeasuredSpan's fields that sessions read). */
export interface SessionSpan {
  /** The record index of the phase's first request; later ones are numbered in the order sent. */
  readonly firstIndex: number;
  /** Start sessions until this has passed; absent: the workload's sessions (or every conversation). */
  readonly durationS?: number;
  /** The open loop's arrival seed. */
  readonly seed: number;
}

interface SessionRun {
  readonly w: WorkloadSpec;
  readonly source: SessionSource;
  readonly planner: Planner;
  readonly sender: Sender;
  readonly signal: AbortSignal | undefined;
  readonly clock: Clock;
  /** The next record index. */
  next: number;
  /** Whether the progress's total counts the phase's turns (the session count was known). */
  readonly counted: boolean;
}

/**
 * The history's tokens after a turn: the server's prompt and output tokens of that turn when it
 * reported usage, else undefined (the caller estimates from the text).
 */
export function servedTokens(r: RequestRecord): number | undefined {
  if (r.promptTokens === undefined || r.promptTokensEstimated === true || r.tokenSource !== 'usage') return undefined;
  return r.promptTokens + r.outputTokens;
}

/** How many sessions the phase starts: the workload's, else (without a duration) one per conversation of a dataset. */
export function sessionCount(w: Pick<WorkloadSpec, 'sessions'>, source: SessionSource, durationS: number | undefined): number | undefined {
  return w.sessions ?? (durationS === undefined ? source.conversations : undefined);
}

/** Session k, from its first turn (due at `due`, clock ms) to its last, or to its first failed turn. */
async function runSession(s: SessionRun, k: number, due: number): Promise<void> {
  const conversation = s.source.conversation(k);
  const turns = conversation.turns;
  const history: ChatMessage[] = [];
  let historyTokens = 0;
  for (let t = 0; t < turns.length; t++) {
    const turn = turns[t]!;
    if (t > 0) {
      due = s.clock.now() + (turn.thinkTimeMs ?? s.w.thinkTimeMs ?? 0);
      await sleepUntil(due, s.signal, s.clock);
    }
    if (s.signal?.aborted) return;
    const prompt = turnPrompt(history, turn, conversation.source);
    const planned = s.planner.planPrompt(s.next++, prompt, s.clock.origin + due, { keepReply: true, tags: { session: k, turn: t, historyTokens } });
    const rec = await s.sender.exchange(planned);
    if (rec.error !== undefined) {
      // the history would lack this reply: the session ends here, its later turns never sent
      if (s.counted) s.sender.expect(-(turns.length - t - 1));
      return;
    }
    history.push(...turn.messages, { role: 'assistant', content: rec.reply ?? '' });
    historyTokens = servedTokens(rec) ?? estimatePromptTokens(history);
  }
}

/** The sessions of a phase, in the workload's mode; resolves with how many requests were sent. */
export async function sessionPhase(w: WorkloadSpec, span: SessionSpan, planner: Planner, sender: Sender, signal: AbortSignal | undefined, clock: Clock = realClock): Promise<number> {
  const source = planner.sessions;
  if (source === undefined) throw new Error('the workload sends no sessions');
  const deadline = span.durationS !== undefined ? clock.now() + span.durationS * 1000 : undefined;
  const count = sessionCount(w, source, span.durationS);
  if (count !== undefined) sender.expect(plannedTurns(source, count));
  const s: SessionRun = { w, source, planner, sender, signal, clock, next: span.firstIndex, counted: count !== undefined };
  const m = w.mode;
  if (m.kind === 'trace') throw new Error('a trace is replayed as single requests, not sessions');
  // sessions take no ramp (workload.ts refuses one), so the phase's duration only stops their starting
  await paced(m, { ...(count !== undefined ? { total: count } : {}), ...(deadline !== undefined ? { deadline } : {}), seed: span.seed, ...(signal ? { signal } : {}), clock }, (k, due) => runSession(s, k, due));
  return s.next - span.firstIndex;
}
