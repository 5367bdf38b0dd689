// "Where the time went" in words, for every surface: the CLI's block after the result table and the
// report panel's section say the same things in the same words. Pure, browser-safe.
import type { RequestRecord, RunFile, Stall, StallSummary, Stats, Summary } from '../engine/core/types';
import { PHASE_WORDS, phaseBands, phasesOf } from '../engine/analysis/phases';
import { UNKNOWN_STALL_SHORT, UNKNOWN_STALL_WHY } from '../engine/analysis/stalls';
import type { RequestPhases } from '../engine/analysis/phases';
import { DASH, formatInt, formatMs, formatPercent, formatQuantity } from './units';

/** "stalled 482 ms by #17's 2,048-token prefill", "… buffered between the server and you", "… cause unknown". */
export function stallPhrase(stall: Stall, run?: Pick<RunFile, 'requests'>): string {
  const head = `stalled ${formatMs(stall.gapMs)}`;
  switch (stall.cause) {
    case 'buffering':
      return `${head}: buffered between the server and you`;
    case 'prefill': {
      const tokensOf = (c: { index: number; promptTokens?: number }): number | undefined => c.promptTokens ?? run?.requests.find((r) => r.index === c.index)?.promptTokens;
      // the largest prefill first: it is the one that made the step long
      const culprits = [...(stall.culprits ?? [])].sort((a, b) => (tokensOf(b) ?? -1) - (tokensOf(a) ?? -1));
      const named = culprits.slice(0, 3).map((c) => {
        const tokens = tokensOf(c);
        return tokens !== undefined ? `#${c.index}'s ${formatInt(tokens)}-token prefill` : `#${c.index}'s prefill`;
      });
      const more = culprits.length > 3 ? ` and ${culprits.length - 3} more` : '';
      return `${head} by ${named.join(', ')}${more}`;
    }
    case 'unknown':
      // said in full once (the verdict, the tile's and the list's tooltips), not on every stall
      return `${head}: ${UNKNOWN_STALL_SHORT} (${UNKNOWN_STALL_WHY})`;
    default:
      return head;
  }
}


/** "a gap between two chunks of one stream longer than both 3× that stream's median ITL and 50 ms (the stall floor)": what a stall is, every surface ("no gap …" to say there was none). */
export function stallRule(st: Pick<StallSummary, 'factor' | 'floorMs'>, article: 'a' | 'no' = 'a'): string {
  return `${article} gap between two chunks of one stream longer than both ${formatQuantity(st.factor)}× that stream's median ITL and ${formatMs(st.floorMs)} (the stall floor)`;
}

/** How a stall's size is said ("12.5× median ITL", "4.87× the 50 ms stall floor"): against the larger of the two bars it crossed. */
export function stallSizeMeaning(st: Pick<StallSummary, 'factor' | 'floorMs'>): string {
  return `A stall is ${stallRule(st)}; its size is said against the larger of the two: "× median ITL", or "× the ${formatMs(st.floorMs)} stall floor" when the stream's chunks come so fast that the floor is the larger.`;
}

/**
 * The stalls' time in all, said as what it is: a sum over the streams, which can exceed the run's
 * wall time when several streams stall at once ("11.4 s summed over 8 streams (the run took 10.5 s),
 * 12.3 % of all streams' decode time": the share is over every measured stream's decode time, stalled or not).
 */
export function stallTotalText(st: Pick<StallSummary, 'count' | 'totalMs' | 'shareOfDecode'>, streams: number | undefined, durationS?: number): string {
  const over = streams === 1 ? 'in one stream' : streams === undefined ? 'summed over the streams' : `summed over ${formatInt(streams)} streams`;
  const wall = durationS !== undefined && st.totalMs > durationS * 1000 ? ` (the run took ${formatMs(durationS * 1000)}: streams stalled at the same time)` : '';
  return `${formatMs(st.totalMs)} ${over}${wall}, ${formatPercent(st.shareOfDecode)} of all streams' decode time`;
}

/** The streams that stalled, each counted once; undefined for a file whose requests do not carry their stalls. */
export function stalledStreams(run: Pick<RunFile, 'requests'>): number | undefined {
  const n = run.requests.filter((r) => !r.warmup && (r.stalls?.length ?? 0) > 0).length;
  return n > 0 ? n : undefined;
}

/** Whether the stalls are an alarm: some have a cause shown (another request's prefill, a buffer). A gap of unknown cause alone is not. */
export function stallsAlarm(st: Pick<StallSummary, 'count' | 'byCause'>): boolean {
  if (st.count === 0) return false;
  if (!st.byCause) return true; // a file from before causes were judged: as it was shown then
  return st.byCause.prefill + st.byCause.buffering > 0;
}

const p = (s: Stats | undefined, k: 'p50' | 'p99'): string => (s && s.count > 0 ? formatMs(s[k] ?? s.max) : DASH);

/** The client's TTFT beside the server's own, and the parts the server reports, at p50 and p99. */
export function timingTable(s: Summary): { header: readonly string[]; rows: readonly (readonly string[])[] } | undefined {
  const sv = s.server;
  if (sv === undefined) return undefined;
  // the same requests on every row: those that carried server timings
  const rows: string[][] = [['TTFT (client)', p(sv.ttftClientMs, 'p50'), p(sv.ttftClientMs, 'p99')]];
  if (sv.ttftServerMs) rows.push(['TTFT (server)', p(sv.ttftServerMs, 'p50'), p(sv.ttftServerMs, 'p99')]);
  if (sv.queueMs) rows.push([PHASE_WORDS.queue.label, p(sv.queueMs, 'p50'), p(sv.queueMs, 'p99')]);
  if (sv.promptMs) rows.push([PHASE_WORDS.prefill.label, p(sv.promptMs, 'p50'), p(sv.promptMs, 'p99')]);
  // client − server: transport where the server reports its queue, else wait (queue, network and client: PHASE_WORDS)
  if (sv.transportMs) rows.push([`${sv.queueMs ? PHASE_WORDS.transport.short : PHASE_WORDS.wait.short} (client − server)`, p(sv.transportMs, 'p50'), p(sv.transportMs, 'p99')]);
  return { header: ['', 'p50', 'p99'], rows };
}

/** The buffering verdict in plain words for a header, or undefined when the stream is not buffered. */
export function bufferingSentence(s: Summary): string | undefined {
  const b = s.buffering;
  if (!b?.detected) return undefined;
  const inflation = b.inflationMs !== undefined ? `: TTFT inflated by about ${formatMs(b.inflationMs)}` : '';
  const period = b.periodMs !== undefined ? `, flushed every ~${formatMs(b.periodMs)}` : '';
  return `The stream is buffered between the server and you (${b.bufferedStreams} of ${b.streams} streams arrive in bursts${period})${inflation}. ITL and TPOT measure the buffer, not the server.`;
}

/** ITL and TPOT from a buffered stream measure the proxy, not the server. */
export function measuresProxy(s: Summary): boolean {
  return s.buffering?.detected === true;
}

export function verdictLines(s: Summary): string[] {
  return (s.verdicts ?? []).map((v) => v.message);
}

/** One request's phases as "queue 3 ms → prefill 40 ms → transport 2 ms → decode 310 ms". */
function phasesLine(ph: RequestPhases): string {
  return ph.segments.map((seg) => `${seg.short} ${formatMs(seg.ms)}`).join(' → ');
}

/** The CLI's block: per-band phases, client vs server, stalls by cause, buffering, the verdicts. */
export function whereTimeLines(run: Pick<RunFile, 'requests' | 'summary'>): string[] {
  const s = run.summary;
  const measured = run.requests.filter((r: RequestRecord) => !r.warmup && r.error === undefined);
  if (measured.length === 0) return [];
  const out: string[] = ['Where the time went:'];
  const bands = phaseBands(measured);
  const evidence = measured.some((r) => phasesOf(r)?.evidence === 'server') ? 'server timings' : `the client's clock only (no server timings: ${PHASE_WORDS.queuePrefill.label})`;
  out.push(`  by TTFT band (from ${evidence}):`);
  for (const b of bands) out.push(`    ${b.label.padEnd(9)} ${String(b.count).padStart(5)} req  ${phasesLine(b.phases)}`);
  // what each part's name means, once, for the parts that are not the server's own words
  const kinds = new Set(bands.flatMap((b) => b.phases.segments.map((s) => s.kind)));
  for (const k of ['wait', 'queuePrefill', 'headers', 'transport'] as const) if (kinds.has(k)) out.push(`    ${PHASE_WORDS[k].short}: ${PHASE_WORDS[k].means}`);
  const table = timingTable(s);
  if (table) {
    const width = Math.max(...table.rows.map((r) => r[0]!.length));
    out.push(`  client vs server (${s.server!.sources.join(', ') || 'server'} timings, ${s.server!.requests} requests):`);
    out.push(`    ${''.padEnd(width)}  ${'p50'.padStart(9)}  ${'p99'.padStart(9)}`);
    for (const r of table.rows) out.push(`    ${r[0]!.padEnd(width)}  ${r[1]!.padStart(9)}  ${r[2]!.padStart(9)}`);
    if (s.server!.cachedTokens > 0) out.push(`    cached prompt tokens: ${formatInt(s.server!.cachedTokens)} over ${s.server!.cachedRequests} requests`);
  }
  if (s.stalls.byCause && s.stalls.count > 0) {
    out.push('  worst stalls:');
    for (const st of s.stalls.worst.slice(0, 3)) out.push(`    #${st.requestIndex} ${stallPhrase(st, run)}`);
  }
  const buffered = bufferingSentence(s);
  if (buffered) {
    out.push(`  ${buffered}`);
    for (const e of s.buffering!.evidence) out.push(`    evidence: ${e}`);
  } else if (s.buffering && s.buffering.evidence.length > 0) {
    out.push(`  Not buffered: the stream passes through (${s.buffering.evidence.join('; ')})`);
  }
  const verdicts = verdictLines(s);
  if (verdicts.length > 0) {
    out.push('Verdicts:');
    for (const v of verdicts) out.push(`  - ${v}`);
  }
  return out;
}
