// A run in words, for every surface: the CLI's result table (laid out like vLLM's `bench serve`)
// and progress line, and the short texts of the extension (notification, status bar, CodeLens,
// run lists). Pure.
import type { Progress, RunFile, SloSpec, Stats, Summary } from '../engine/types';
import { formatSlo } from '../engine/slo';
import { prefixCacheSplitLine } from './cacheCheckText';
import { connectionRetriesLine, rateLimitLine, retryAfterNote, statusCounts } from './retryText';
import { DASH, fixed as num, formatMs } from './units';
import { serverMetricsLines } from './serverMetricsText';
import { measuresProxy, whereTimeLines } from './whereText';
import { connectionText, endpointText, networkShort } from './endpointText';
import { sentLine, sentNotes, sentPerPromptLines } from './sentText';

function pad(s: string, width: number, right = false): string {
  return right ? s.padStart(width) : s.padEnd(width);
}

/** One line, rewritten in place on a terminal: done/total, in flight, TTFT p50 so far, tokens/s. */
export function formatProgressLine(p: Progress & { readonly phase?: string }): string {
  const parts = [`${p.phase ? `${p.phase}: ` : ''}${p.finished}${p.total !== undefined ? `/${p.total}` : ''} done${p.failed > 0 ? ` (${p.failed} failed)` : ''}`];
  parts.push(`${p.inFlight} in flight`);
  if (p.ttftP50Ms !== undefined) parts.push(`TTFT p50 ${formatMs(p.ttftP50Ms)}`);
  if (p.outputTokensPerSecond !== undefined) parts.push(`${p.outputTokensPerSecond.toFixed(1)} tok/s`);
  parts.push(`${p.elapsedS.toFixed(1)} s`);
  return parts.join(' · ');
}

function statRow(name: string, s: Stats, percentiles: readonly number[]): string[] {
  if (s.count === 0) return [name, DASH, ...percentiles.map(() => DASH), '0'];
  return [name, num(s.mean), ...percentiles.map((p) => num(s[`p${p}`] ?? Number.NaN)), String(s.count)];
}

function grid(rows: string[][]): string {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  return rows.map((r) => r.map((cell, c) => pad(cell, widths[c]!, c > 0)).join('  ').trimEnd()).join('\n');
}

function line(label: string, value: string): string {
  return `${pad(label, 36)}${value}`;
}

export function formatErrors(s: Summary): string {
  const kinds = Object.entries(s.errorsByKind).filter(([, n]) => (n ?? 0) > 0);
  if (kinds.length === 0) return 'Errors: none';
  const statuses = statusCounts(s);
  return `Errors: ${s.failed} of ${s.completed + s.failed} (${kinds.map(([k, n]) => (k === 'http' && statuses ? `http ${n}: ${statuses}` : `${k} ${n}`)).join(', ')})`;
}

/** "3 replies ran far past max_tokens (the server ignored it)", or undefined when none did. */
export function overlongLine(run: Pick<RunFile, 'requests'>): string | undefined {
  const n = run.requests.filter((r) => !r.warmup && (r.exceedsMaxTokens || r.error?.kind === 'overlong')).length;
  if (n === 0) return undefined;
  return `${n} ${n === 1 ? 'reply' : 'replies'} ran far past max_tokens (the server ignored it)`;
}

export function formatStalls(s: Summary): string {
  const st = s.stalls;
  if (st.count === 0) return `Stalls: none (a gap > ${st.factor}× the stream's median ITL and > ${st.floorMs} ms)`;
  const worst = st.worst[0];
  const by = st.byCause;
  const causes = by ? ` (${(['prefill', 'buffering', 'unknown'] as const).filter((k) => by[k] > 0).map((k) => `${k} ${by[k]}`).join(', ')})` : '';
  return (
    `Stalls: ${st.count}${causes}, ${formatMs(st.totalMs)} in all, ${num(st.shareOfDecode * 100, 1)}% of decode time` +
    (worst ? `; worst ${formatMs(worst.gapMs)} in request ${worst.requestIndex} (its median ITL ${formatMs(worst.medianItlMs)})` : '')
  );
}

/** The result, as the terminal shows it. */
export function formatRunTable(run: RunFile): string {
  const s = run.summary;
  const w = run.workload;
  const pcts = w.percentiles;
  const mode = w.mode.kind === 'closed' ? `closed loop, concurrency ${w.mode.concurrency}` : `open loop, ${w.mode.rate} req/s, burstiness ${w.mode.burstiness}`;
  const out: string[] = [];
  out.push(`============ LLM Profiler result ============`);
  out.push(line('Endpoint:', endpointText(run.endpoint)));
  out.push(line('Workload:', mode));
  out.push(line('Sent with:', sentLine(run)));
  for (const p of sentPerPromptLines(run)) out.push(`  ${p}`);
  const connections = connectionText(run.connection);
  if (connections !== undefined) out.push(line('Connections:', connections));
  out.push(line('Successful requests:', String(s.completed)));
  out.push(line('Failed requests:', String(s.failed)));
  out.push(line('Benchmark duration (s):', num(s.durationS)));
  out.push(line('Total input tokens:', String(s.totalInputTokens)));
  out.push(line('Total generated tokens:', `${s.totalOutputTokens} (counted from ${s.tokenSource === 'usage' ? 'server usage' : s.tokenSource === 'chunks' ? 'chunks' : 'usage and chunks'})`));
  out.push(line('Request throughput (req/s):', num(s.requestsPerSecond)));
  out.push(line('Output token throughput (tok/s):', num(s.outputTokensPerSecond)));
  out.push(line('Total token throughput (tok/s):', num(s.totalTokensPerSecond)));
  if (s.goodput !== undefined) out.push(line('Request goodput (req/s):', `${num(s.goodput)}  (SLO ${formatSlo(w.slo ?? {})})`));
  out.push('');
  const rows: string[][] = [['Metric (ms)', 'mean', ...pcts.map((p) => `p${p}`), 'n']];
  rows.push(statRow('TTFT', s.ttftMs, pcts));
  if (s.ttfoMs) rows.push(statRow('TTFO', s.ttfoMs, pcts));
  const proxy = measuresProxy(s) ? ' *' : '';
  rows.push(statRow(`TPOT${proxy}`, s.tpotMs, pcts));
  rows.push(statRow(`ITL${proxy}`, s.itlMs, pcts));
  rows.push(statRow('E2E', s.e2eMs, pcts));
  out.push(grid(rows));
  if (proxy) out.push('* measures the buffer between the server and you, not the server (see below)');
  out.push('');
  if (s.sloMissed !== undefined) {
    out.push(s.sloMissed.length === 0 ? `SLO: met at p99 (${formatSlo(w.slo ?? {})})` : `SLO: MISSED at p99: ${s.sloMissed.map((k) => k.replace(/Ms$/, '')).join(', ')} (${formatSlo(w.slo ?? {})})`);
  }
  out.push(formatStalls(s));
  const cache = prefixCacheSplitLine(s.prefixCache);
  if (cache) out.push(cache);
  out.push(formatErrors(s));
  const firstError = run.requests.find((r) => !r.warmup && r.error && r.error.kind !== 'aborted');
  if (firstError?.error) {
    const body = firstError.error.body?.replace(/\s+/g, ' ').trim().slice(0, 120);
    out.push(`  first: request ${firstError.index}: ${firstError.error.message}${retryAfterNote(firstError.error)}${body ? ` (${body})` : ''}`);
  }
  const rateLimited = rateLimitLine(run);
  if (rateLimited) out.push(rateLimited);
  const resent = connectionRetriesLine(run);
  if (resent) out.push(resent);
  const overlong = overlongLine(run);
  if (overlong) out.push(`Warning: ${overlong}`);
  for (const n of sentNotes(run)) out.push(`Note: ${n}`);
  if (s.malformedEvents > 0) out.push(`Malformed stream events skipped: ${s.malformedEvents}`);
  if (s.multiTokenChunks > 0) out.push(`Chunks carrying more than one token: ${s.multiTokenChunks}`);
  if (run.cancelled) out.push('Cancelled: the figures cover what finished.');
  const where = whereTimeLines(run);
  if (where.length > 0) out.push('', ...where);
  if (run.serverMetrics) out.push('', ...serverMetricsLines(run.serverMetrics));
  out.push('=============================================');
  return out.join('\n') + '\n';
}

// ---- Short texts (notification, status bar, sidebar, CodeLens, run lists) ----

/** "12/40 · TTFT p50 312 ms" (total unknown: "12 done"); finished requests, failed ones included. */
export function progressLine(p: Pick<Progress, 'finished' | 'failed' | 'total' | 'ttftP50Ms'> & { readonly phase?: string }): string {
  const count = p.total !== undefined ? `${p.finished}/${p.total}` : `${p.finished} done`;
  const failed = p.failed ? ` (${p.failed} failed)` : '';
  const ttft = p.ttftP50Ms !== undefined ? ` · TTFT p50 ${formatMs(p.ttftP50Ms)}` : '';
  return `${p.phase ? `${p.phase} · ` : ''}${count}${failed}${ttft}`;
}

/** The p99s an SLO is judged at, and how many requests completed (a run list's entry carries these). */
export interface SloFigures {
  readonly completed: number;
  readonly ttftP99Ms?: number;
  readonly tpotP99Ms?: number;
  readonly itlP99Ms?: number;
  readonly e2eP99Ms?: number;
}

const SLO_KEYS = [['ttftMs', 'ttft', 'ttftP99Ms'], ['tpotMs', 'tpot', 'tpotP99Ms'], ['itlMs', 'itl', 'itlP99Ms'], ['e2eMs', 'e2e', 'e2eP99Ms']] as const;

/**
 * A run's p99s against an SLO, judged as the engine's summary judges `sloMissed` (p99 ≤ limit):
 * "SLO ✓", or "SLO ✗ tpot p99 63 ms > 50 ms" naming each miss. A metric the run has no sample of
 * (ITL of one-token replies) is not held against it, unless nothing completed. Undefined without an SLO.
 */
export function sloVerdict(r: SloFigures, slo: SloSpec | undefined): string | undefined {
  if (!slo || !SLO_KEYS.some(([k]) => slo[k] !== undefined)) return undefined;
  if (!r.completed) return 'SLO ✗ none completed';
  const misses: string[] = [];
  for (const [key, name, field] of SLO_KEYS) {
    const limit = slo[key];
    const value = r[field];
    if (limit === undefined || value === undefined) continue;
    if (value > limit) misses.push(`${name} p99 ${formatMs(value)} > ${formatMs(limit)}`);
  }
  return misses.length ? `SLO ✗ ${misses.join(', ')}` : 'SLO ✓';
}

/**
 * The result shown in place above a prompt: "TTFT p50 312 ms · p99 540 ms · TPOT 41 ms", with the
 * SLO verdict appended when an SLO applies (the prompt file's front matter, else the settings').
 */
export function lensResult(
  r: SloFigures & { readonly ttftP50Ms?: number; readonly tpotP50Ms?: number; readonly failed: number },
  slo?: SloSpec,
): string {
  const verdict = sloVerdict(r, slo);
  if (!r.completed) return [`last run: ${r.failed} failed, none completed`, verdict].filter(Boolean).join(' · ');
  const parts = [`TTFT p50 ${formatMs(r.ttftP50Ms)}`, `p99 ${formatMs(r.ttftP99Ms)}`];
  if (r.tpotP50Ms !== undefined) parts.push(`TPOT ${formatMs(r.tpotP50Ms)}`);
  if (r.failed) parts.push(`${r.failed} failed`);
  if (verdict) parts.push(verdict);
  return parts.join(' · ');
}

/** A run in a list: "<endpoint> — <local time>", or "<endpoint> (via proxy http://p:3128) — <local time>" (`network`: networkShort's notes). */
export function runLabel(r: { readonly endpointName: string; readonly startedAt: string; readonly network?: readonly string[] }): string {
  const d = new Date(r.startedAt);
  const when = Number.isNaN(d.getTime()) ? r.startedAt : d.toLocaleString();
  return `${r.endpointName}${r.network?.length ? ` (${r.network.join(' · ')})` : ''} — ${when}`;
}

/** A one-paragraph summary (a notification, the log). */
export function summaryText(run: Pick<RunFile, 'endpoint' | 'summary'>): string {
  const s = run.summary;
  const t = s.ttftMs.count ? `TTFT p50 ${formatMs(s.ttftMs.p50)} · p99 ${formatMs(s.ttftMs.p99)}` : 'no TTFT';
  const tp = s.tpotMs.count ? ` · TPOT p50 ${formatMs(s.tpotMs.p50)}` : '';
  const buffered = s.buffering?.detected ? ' · the stream is buffered between the server and you (ITL and TPOT measure the buffer)' : '';
  const notes = networkShort(run.endpoint);
  return `${run.endpoint.name ?? run.endpoint.url}${notes.length ? ` (${notes.join(' · ')})` : ''}: ${s.completed} completed, ${s.failed} failed · ${t}${tp} · ${s.outputTokensPerSecond.toFixed(1)} tok/s${buffered}`;
}
