// The schedule's line in the run table (how late requests went against a trace's timestamps or an
// open loop's arrivals), and the head's line for prompts meant to meet the prefix cache (a trace's
// shared blocks, shared-prefix groups). Pure, browser-safe.
import type { RunFile, ScheduleSummary } from '../engine/core/types';
import { SCHEDULE_LATE_MS } from '../engine/analysis/schedule';
import { formatInt, formatMs } from './units';
import { promptSourceWords } from './workloadText';

/** "kept: lag p50 0.21 ms, p99 1.30 ms, max 3.10 ms; 0 of 200 sent more than 5 ms late", or NOT kept with what it means. */
export function scheduleText(s: ScheduleSummary): string {
  const lag = `lag p50 ${formatMs(s.lagMs.p50)}, p99 ${formatMs(s.lagMs.p99 ?? s.lagMs.max)}, max ${formatMs(s.lagMs.max)}`;
  const late = `${formatInt(s.late)} of ${formatInt(s.lagMs.count)} sent more than ${formatMs(SCHEDULE_LATE_MS)} late`;
  return s.kept ? `kept: ${lag}; ${late}` : `NOT kept: ${late}; ${lag}: the load was lighter than asked`;
}

/** The run table's schedule line, for runs whose requests had a schedule (open loop, trace). */
export function scheduleLines(run: Pick<RunFile, 'summary'>): string[] {
  const s = run.summary.schedule;
  return s ? [`Schedule: ${scheduleText(s)}`] : [];
}

const FORMAT_NAMES = { mooncake: 'Mooncake JSONL', azure: 'Azure LLM inference CSV' } as const;

/** What the prompts are, when they are meant to meet the prefix cache: sent warm, no cache-busting nonce. */
export function cacheMeantText(run: Pick<RunFile, 'workload'>): string | undefined {
  const p = run.workload.prompt;
  const warm = run.workload.prefixCache !== 'cold';
  if (p.kind === 'trace') {
    const how = warm ? 'sent warm (no cache-busting nonce): blocks the trace shares are meant to meet the prefix cache' : 'sent cold';
    return `the trace ${p.path} (${FORMAT_NAMES[p.format]}), each prompt built to its stated length; ${how}`;
  }
  if (p.kind === 'chat' || (p.kind === 'dataset' && p.multiTurn)) {
    return warm ? `${promptSourceWords(p)}, sent warm on purpose (no cache-busting nonce): each turn carries the conversation so far, which a prefix cache is meant to serve` : undefined;
  }
  if (p.kind === 'synthetic' && p.groups) {
    const how = warm ? 'sent warm: the shared prefixes are meant to meet the prefix cache' : 'sent cold';
    return `${formatInt(p.tokens)}-token prompts, request k in group k mod ${p.groups.count}, each group's first ${formatInt(p.groups.prefixTokens)} tokens shared; ${how}`;
  }
  return undefined;
}
