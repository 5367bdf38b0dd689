// The top causes of a run, in plain words, each with its number: what the CLI and the report panel
// end with. Only claims the evidence carries are made: queue and prefill shares need the server's own
// timings; a stall is blamed on prefills only when attribution.ts found the culprits; buffering
// first, because a buffered stream makes the client's ITL and TPOT the buffer's, not the server's.
import type { BufferingVerdict, PrefixCacheSummary, ScheduleSummary, ServerSideSummary, StallSummary, Stats, TurnSummary, Verdict, WorkloadMode } from '../core/types';
import { scheduleVerdict } from './schedule';
import { historyVerdict } from './turns';
import { intWords as formatInt, msWords as formatMs } from '../core/words';

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
}

/** A share worth a verdict. */
const NOTABLE_SHARE = 0.3;

const pct = (x: number): string => `${Math.round(x * 100)}%`;

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
  const ttftP99 = v.ttftMs.p99 ?? v.ttftMs.max;
  const s = v.server;
  if (s?.queueMs !== undefined && ttftP99 > 0) {
    const share = (s.queueMs.p99 ?? s.queueMs.max) / ttftP99;
    if (share >= NOTABLE_SHARE) {
      out.push({ kind: 'queue', message: `TTFT p99 is ${pct(Math.min(1, share))} queue wait (queue p99 ${formatMs(s.queueMs.p99 ?? s.queueMs.max)}): the endpoint is saturated at ${load(v.mode)}`, value: share });
    }
  } else if (s?.transportMs !== undefined && s.promptMs !== undefined && !b?.detected && ttftP99 > 0) {
    // llama.cpp / Ollama: no queue reported; what TTFT holds beyond the prompt's own time is queue, network and client.
    const rest = s.transportMs.p99 ?? s.transportMs.max;
    const share = rest / ttftP99;
    if (share >= NOTABLE_SHARE && rest >= 20) {
      out.push({ kind: 'queue', message: `TTFT p99 is ${pct(Math.min(1, share))} waiting beyond the prompt's own ${formatMs(s.promptMs.p99 ?? s.promptMs.max)} (the server does not report its queue: queue, network and client together) at ${load(v.mode)}`, value: share });
    }
  }
  const st = v.stalls;
  const prefillStalls = st.byCause?.prefill ?? 0;
  if (prefillStalls > 0) {
    const tokens = [...v.culpritPromptTokens].sort((a, c) => a - c);
    const from = tokens.length > 0 ? `, all from prefills of prompts ≥ ${formatInt(tokens[0]!)} tokens` : '';
    const ms = st.msByCause?.prefill ?? 0;
    out.push({ kind: 'stalls', message: `${formatInt(prefillStalls)} decode stall${prefillStalls === 1 ? '' : 's'}, ${formatMs(ms)} in all${from}: chunked prefill would bound them`, value: ms });
  }
  const unknown = st.byCause?.unknown ?? 0;
  if (unknown > 0) {
    const ms = st.msByCause?.unknown ?? 0;
    out.push({ kind: 'stalls', message: `${formatInt(unknown)} stall${unknown === 1 ? '' : 's'} of unknown cause, ${formatMs(ms)} in all: no request of this run had its prefill in them (another client's traffic, or a pause of the server or of this machine)`, value: ms });
  }
  const history = v.byTurn ? historyVerdict(v.byTurn) : undefined;
  if (history) out.push(history);
  if (s?.promptMs !== undefined && ttftP99 > 0) {
    const share = (s.promptMs.p99 ?? s.promptMs.max) / ttftP99;
    if (share >= 0.5) out.push({ kind: 'prefill', message: `TTFT p99 is ${pct(Math.min(1, share))} prefill (prompt p99 ${formatMs(s.promptMs.p99 ?? s.promptMs.max)} on the server): longer prompts, or a slower prefill, set TTFT here`, value: share });
  }
  if (s?.transportMs !== undefined && s.queueMs !== undefined && !b?.detected) {
    const p50 = s.transportMs.p50 ?? s.transportMs.mean;
    const ttftP50 = v.ttftMs.p50 ?? v.ttftMs.mean;
    if (p50 >= 20 && ttftP50 > 0 && p50 / ttftP50 >= 0.25) {
      out.push({ kind: 'transport', message: `the network and client add ${formatMs(p50)} to TTFT at the median (${pct(p50 / ttftP50)} of it): the server's own TTFT p50 is ${formatMs(s.ttftServerMs?.p50 ?? 0)}`, value: p50 });
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
  return out;
}
