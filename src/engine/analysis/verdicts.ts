// The top causes of a run, in plain words, each with its number: what the CLI and the report panel
// end with. Only claims the evidence carries are made: queue and prefill shares need the server's own
// timings; a stall is blamed on prefills only when attribution.ts found the culprits; buffering
// first, because a buffered stream makes the client's ITL and TPOT the buffer's, not the server's.
import type { BufferingVerdict, PrefixCacheSummary, ScheduleSummary, ServerSideSummary, StallSummary, Stats, TurnSummary, Verdict, WorkloadMode } from '../core/types';
import { scheduleVerdict } from './schedule';
import { historyVerdict } from './turns';
import { intWords as formatInt, msWords as formatMs } from '../core/words';
import { PHASE_WORDS, type PhaseKind, type TtftTail } from './phases';
import { UNKNOWN_STALL_CAUSE } from './stalls';

export interface VerdictInputs {
  readonly mode: WorkloadMode;
  readonly completed: number;
  readonly ttftMs: Stats;
  readonly stalls: StallSummary;
  /** For each prefill stall, the prompt tokens of its largest culprit. */
  readonly culpritPromptTokens: readonly number[];
  readonly buffering?: BufferingVerdict;
  readonly server?: ServerSideSummary;
  readonly prefixCache?: PrefixCacheSummary;
  /** (multi-turn) TTFT by turn: the history verdict (turns.ts). */
  readonly byTurn?: readonly TurnSummary[];
  /** How late requests went against their schedule (open loop, trace): the schedule verdict (schedule.ts). */
  readonly schedule?: ScheduleSummary;
  /** Where the TTFT of the requests at p99 went (phases.ts ttftTail): every share of "TTFT p99" is of it, so they add up. */
  readonly tail?: TtftTail;
}

/** A share worth a verdict. */
const NOTABLE_SHARE = 0.3;

const pct = (x: number): string => `${Math.round(x * 100)}%`;

/**
 * "At TTFT p99 (950 ms; the slowest request, 1,000 ms)", "At TTFT p99 (812 ms; the 3 slowest requests,
 * their TTFT together)": whose TTFT a share is of; the slowest request's own TTFT beside the p99 when
 * they differ, since the shares are of it.
 */
function atP99(t: TtftTail): string {
  const own = formatMs(t.ttftMs) !== formatMs(t.fromMs) ? `, ${formatMs(t.ttftMs)}` : '';
  return `At TTFT p99 (${formatMs(t.fromMs)}; ${t.requests === 1 ? `the slowest request${own}` : `the ${formatInt(t.requests)} slowest requests, their TTFT together`})`;
}

function load(mode: WorkloadMode): string {
  if (mode.kind === 'trace') return `the trace's rate ×${mode.speed}`;
  return mode.kind === 'closed' ? `concurrency ${mode.concurrency}` : `${mode.rate} requests/s`;
}

export function verdictsOf(v: VerdictInputs): Verdict[] {
  // first: when the client fell behind its schedule, every other figure is of a lighter load than asked
  const late = scheduleVerdict(v.schedule, v.mode);
  const out: Verdict[] = late ? [late] : [];
  if (v.completed === 0) return out;
  const b = v.buffering;
  if (b?.detected) {
    const inflation = b.inflationMs !== undefined ? `: TTFT inflated by about ${formatMs(b.inflationMs)}` : '';
    out.push({
      kind: 'buffering',
      message: `the stream is buffered between the server and you${inflation}; ITL and TPOT measure the buffer, not the server (${b.bufferedStreams} of ${b.streams} streams arrive in bursts${b.periodMs !== undefined ? `, every ~${formatMs(b.periodMs)}` : ''})`,
      value: b.inflationMs ?? 0,
    });
  }
  const s = v.server;
  // every share of "TTFT p99" is of the same requests' TTFT (the tail's), so that they add up
  const tail = s !== undefined ? v.tail : undefined;
  const share = (kind: PhaseKind): number => (tail && tail.ttftMs > 0 ? Math.min(1, (tail.byKind[kind] ?? 0) / tail.ttftMs) : 0);
  if (tail && s?.queueMs !== undefined && share('queue') >= NOTABLE_SHARE) {
    out.push({ kind: 'queue', message: `${atP99(tail)}, ${pct(share('queue'))} of TTFT is ${PHASE_WORDS.queue.short} (${PHASE_WORDS.queue.means}): the endpoint is saturated at ${load(v.mode)}`, value: share('queue') });
  } else if (tail && s?.queueMs === undefined && !b?.detected && share('wait') >= NOTABLE_SHARE && (tail.byKind.wait ?? 0) / tail.requests >= 20) {
    out.push({ kind: 'queue', message: `${atP99(tail)}, ${pct(share('wait'))} of TTFT is ${PHASE_WORDS.wait.short} (${PHASE_WORDS.wait.means}) at ${load(v.mode)}`, value: share('wait') });
  }
  const st = v.stalls;
  const prefillStalls = st.byCause?.prefill ?? 0;
  if (prefillStalls > 0) {
    const tokens = [...v.culpritPromptTokens].sort((a, c) => a - c);
    const from = tokens.length > 0 ? `, all from prefills of prompts ≥ ${formatInt(tokens[0]!)} tokens` : '';
    const ms = st.msByCause?.prefill ?? 0;
    out.push({ kind: 'stalls', message: `${formatInt(prefillStalls)} decode stall${prefillStalls === 1 ? '' : 's'}, ${formatMs(ms)} summed over the streams${from}: chunked prefill would bound them`, value: ms });
  }
  const history = v.byTurn ? historyVerdict(v.byTurn) : undefined;
  if (history) out.push(history);
  if (tail && s?.promptMs !== undefined && share('prefill') >= 0.5) {
    out.push({ kind: 'prefill', message: `${atP99(tail)}, ${pct(share('prefill'))} of TTFT is ${PHASE_WORDS.prefill.short} (${PHASE_WORDS.prefill.means}): longer prompts, or a slower prefill, set TTFT here`, value: share('prefill') });
  }
  if (s?.transportMs !== undefined && s.queueMs !== undefined && !b?.detected) {
    const p50 = s.transportMs.p50 ?? s.transportMs.mean;
    const ttftP50 = v.ttftMs.p50 ?? v.ttftMs.mean;
    if (p50 >= 20 && ttftP50 > 0 && p50 / ttftP50 >= 0.25) {
      out.push({ kind: 'transport', message: `at the median, ${formatMs(p50)} of TTFT (${pct(p50 / ttftP50)}) is ${PHASE_WORDS.transport.short} (${PHASE_WORDS.transport.means}): the server's own TTFT p50 is ${formatMs(s.ttftServerMs?.p50 ?? 0)}`, value: p50 });
    }
  }
  const pc = v.prefixCache;
  if (pc !== undefined && pc.warmRequests > 0 && pc.warmTtftMs !== undefined) {
    const warm = pc.warmTtftMs.p50 ?? pc.warmTtftMs.mean;
    const cold = pc.coldTtftMs !== undefined && pc.coldRequests > 0 ? pc.coldTtftMs.p50 ?? pc.coldTtftMs.mean : undefined;
    const vs = cold !== undefined ? ` vs ${formatMs(cold)} cold` : '';
    const cached = pc.cachedTokens > 0 ? `, ${formatInt(pc.cachedTokens)} cached prompt tokens reported` : '';
    const n = `${formatInt(pc.warmRequests)} of ${formatInt(pc.warmRequests + pc.coldRequests)} requests`;
    out.push({
      kind: 'prefix-cache',
      message:
        pc.mode === 'cold'
          ? `prefix cache: ${n} were served warm although sent cold (TTFT ${formatMs(warm)}${vs}${cached}): the server shares more than the nonce breaks`
          : pc.cachedTokens > 0
            ? `prefix cache: warm TTFT ${formatMs(warm)}${vs} (${n} served warm${cached})`
            : `prefix cache: ${n} repeat an earlier prompt, TTFT ${formatMs(warm)}${vs.replace('cold', 'for first sends')} (the server reports no cached tokens, so whether it served them warm is told by TTFT alone)`,
      value: warm,
    });
  }
  // last, after every verdict with a cause: a gap whose cause is not shown is no alarm (grey in the report, never its headline)
  const unknown = st.byCause?.unknown ?? 0;
  if (unknown > 0) {
    const ms = st.msByCause?.unknown ?? 0;
    out.push({ kind: 'stalls-unknown', message: `${formatInt(unknown)} stall${unknown === 1 ? '' : 's'}, ${formatMs(ms)} summed over the streams, ${UNKNOWN_STALL_CAUSE}`, value: ms });
  }
  return out;
}
