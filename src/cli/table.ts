// Terminal output for `run`: the live progress line and the result table (laid out like vLLM's).
import type { Progress, RunFile, Stats, Summary } from '../engine/types';
import { formatSlo } from '../engine/slo';

const num = (v: number, digits = 2): string => (Number.isFinite(v) ? v.toFixed(digits) : '–');

function pad(s: string, width: number, right = false): string {
  return right ? s.padStart(width) : s.padEnd(width);
}

/** One line, rewritten in place on a terminal: done/total, in flight, TTFT p50 so far, tokens/s. */
export function formatProgressLine(p: Progress): string {
  const parts = [`${p.finished}${p.total !== undefined ? `/${p.total}` : ''} done${p.failed > 0 ? ` (${p.failed} failed)` : ''}`];
  parts.push(`${p.inFlight} in flight`);
  if (p.ttftP50Ms !== undefined) parts.push(`TTFT p50 ${Math.round(p.ttftP50Ms)} ms`);
  if (p.outputTokensPerSecond !== undefined) parts.push(`${p.outputTokensPerSecond.toFixed(1)} tok/s`);
  parts.push(`${p.elapsedS.toFixed(1)} s`);
  return parts.join(' · ');
}

function statRow(name: string, s: Stats, percentiles: readonly number[]): string[] {
  if (s.count === 0) return [name, '–', ...percentiles.map(() => '–'), '0'];
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
  return `Errors: ${s.failed} of ${s.completed + s.failed} (${kinds.map(([k, n]) => `${k} ${n}`).join(', ')})`;
}

export function formatStalls(s: Summary): string {
  const st = s.stalls;
  if (st.count === 0) return `Stalls: none (a gap > ${st.factor}× the stream's median ITL and > ${st.floorMs} ms)`;
  const worst = st.worst[0];
  return (
    `Stalls: ${st.count}, ${num(st.totalMs, 0)} ms in all, ${num(st.shareOfDecode * 100, 1)}% of decode time` +
    (worst ? `; worst ${num(worst.gapMs, 0)} ms in request ${worst.requestIndex} (its median ITL ${num(worst.medianItlMs, 1)} ms)` : '')
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
  out.push(line('Endpoint:', `${run.endpoint.url} (${run.endpoint.api}${run.endpoint.detectedApi ? ', detected' : ''}${run.endpoint.model ? `, ${run.endpoint.model}` : ''})`));
  out.push(line('Workload:', mode));
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
  rows.push(statRow('TPOT', s.tpotMs, pcts));
  rows.push(statRow('ITL', s.itlMs, pcts));
  rows.push(statRow('E2E', s.e2eMs, pcts));
  out.push(grid(rows));
  out.push('');
  if (s.sloMissed !== undefined) {
    out.push(s.sloMissed.length === 0 ? `SLO: met at p99 (${formatSlo(w.slo ?? {})})` : `SLO: MISSED at p99: ${s.sloMissed.map((k) => k.replace(/Ms$/, '')).join(', ')} (${formatSlo(w.slo ?? {})})`);
  }
  out.push(formatStalls(s));
  out.push(formatErrors(s));
  const firstError = run.requests.find((r) => !r.warmup && r.error && r.error.kind !== 'aborted');
  if (firstError?.error) {
    const body = firstError.error.body?.replace(/\s+/g, ' ').trim().slice(0, 120);
    out.push(`  first: request ${firstError.index}: ${firstError.error.message}${body ? ` (${body})` : ''}`);
  }
  if (s.malformedEvents > 0) out.push(`Malformed stream events skipped: ${s.malformedEvents}`);
  if (s.multiTokenChunks > 0) out.push(`Chunks carrying more than one token: ${s.multiTokenChunks}`);
  if (run.cancelled) out.push('Cancelled: the figures cover what finished.');
  out.push('=============================================');
  return out.join('\n') + '\n';
}
