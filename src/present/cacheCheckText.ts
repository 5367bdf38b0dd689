// The prefix cache in words: the `cache-check` result block, and the line a run's table gets when its
// prompts repeat (TTFT split cold/warm). Pure.
import { endpointText } from './endpointText';
import type { PrefixCacheCheck, PrefixCacheSummary, RunFile } from '../engine/core/types';
import { formatInt, formatMs } from './units';
import { promptSourceWords } from './workloadText';

function line(label: string, value: string): string {
  return `${label.padEnd(24)}${value}`;
}

function change(warm: number, cold: number): string {
  if (!(cold > 0)) return '';
  const d = Math.round((warm / cold - 1) * 100);
  return ` (${d < 0 ? `−${-d}` : `+${d}`}% of cold)`;
}

/** What was sent, in a few words: "1,024-token synthetic prompt" or "2 prompts from F". */
function promptWords(run: RunFile): string {
  const p = run.workload.prompt;
  if (p.kind === 'synthetic') return `a ${formatInt(p.tokens)}-token synthetic prompt`;
  return promptSourceWords(p);
}

/** The `cache-check` result, as the terminal shows it. */
export function formatCacheCheck(run: RunFile): string {
  const c: PrefixCacheCheck | undefined = run.prefixCache;
  const out: string[] = ['============ LLM Profiler prefix cache check ============'];
  out.push(line('Endpoint:', endpointText(run.endpoint)));
  out.push(line('Sent:', `${promptWords(run)}, each led by a new unique prefix; then again; then with its last words changed`));
  if (!c) {
    const failed = run.requests.filter((r) => !r.warmup && r.error);
    out.push(`No round finished${run.cancelled ? ' (cancelled)' : ''}: nothing to compare.`);
    const first = failed[0]?.error;
    if (first) out.push(`  first error: ${first.message}`);
  } else {
    out.push(line('Rounds:', `${c.rounds}, one request at a time (medians below)`));
    out.push(line('Cold TTFT:', formatMs(c.coldTtftMs)));
    out.push(line('Warm TTFT:', `${formatMs(c.warmTtftMs)}${change(c.warmTtftMs, c.coldTtftMs)}`));
    if (c.variantTtftMs !== undefined) out.push(line('Variant TTFT:', `${formatMs(c.variantTtftMs)}${change(c.variantTtftMs, c.coldTtftMs)}`));
    out.push(line('Cached tokens:', c.cachedTokens === undefined ? 'not reported by the server' : `${formatInt(c.cachedTokens)} (reported on the warm request)`));
    out.push(line('Verdict:', c.hit ? 'the server caches prompts' : 'no prefix cache seen'));
    out.push(c.message);
  }
  if (run.cancelled) out.push('Cancelled: the figures cover what finished.');
  out.push('========================================================');
  return `${out.join('\n')}\n`;
}

/** A run's prefix-cache split in one line (the run table, the log), or undefined when its prompts never repeat. */
export function prefixCacheSplitLine(p: PrefixCacheSummary | undefined): string | undefined {
  if (!p) return undefined;
  const total = p.coldRequests + p.warmRequests;
  const cached = p.cachedTokens > 0 ? `; ${formatInt(p.cachedTokens)} cached tokens reported` : '';
  if (p.mode === 'cold' && p.warmRequests === 0) {
    return `Prefix cache: prompts repeat, every request kept cold (--prefix-cache cold)${cached}`;
  }
  const ttft = p.warmTtftMs && p.coldTtftMs
    ? `; TTFT p50 ${formatMs(p.warmTtftMs.p50)} warm vs ${formatMs(p.coldTtftMs.p50)} cold`
    : p.warmTtftMs ? `; TTFT p50 ${formatMs(p.warmTtftMs.p50)} warm` : '';
  const how = p.mode === 'warm' ? ' (--prefix-cache warm: the figures above mix them)' : ' (despite --prefix-cache cold)';
  return `Prefix cache: ${formatInt(p.warmRequests)} of ${formatInt(total)} requests served warm${how}${ttft}${cached}`;
}
