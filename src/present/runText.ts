// A run in words, for every surface: the CLI's result table (laid out like vLLM's `bench serve`)
// and progress line, and the short texts of the extension (notification, status bar, CodeLens,
// run lists). Pure.
import { interruptedLine } from './recoverText';
import { clockTime } from './timeText';
import type { SurfaceClock } from '../shared/protocol';
import type { Progress, RunFile, SloSpec, Stall, Stats, Summary } from '../engine/core/types';
import { formatSlo } from '../engine/core/slo';
import { prefixCacheSplitLine } from './cacheCheckText';
import { connectionRetriesLine, rateLimitLine, retryAfterNote, statusCounts } from './retryText';
import { DASH, fixed as num, formatMs, formatNumber, formatQuantity, TINY_MS } from './units';
import { serverMetricsLines } from './serverMetricsText';
import { measuresProxy, stallRule, stallSizeMeaning, stallTotalText, stalledStreams, whereTimeLines } from './whereText';
import { UNKNOWN_STALL_SHORT } from '../engine/analysis/stalls';
import { connectionText, endpointText, networkShort } from './endpointText';
import { sentLine, sentNotes, sentPerPromptLines } from './sentText';
import { countedByTool } from './toolLabels';
import { turnLines } from './turnText';
import { toolCallLine } from './toolText';
import { cacheMeantText, scheduleLines } from './scheduleText';
import { figureValue, latenciesFor, latencyStats, metricsFor, type FigureMetric } from './metricCatalogue';
import { concurrentMode, modeLong, modeShort, promptWords } from './workloadText';
import { allFailedLine, cancelledCount, cancelledLine, firstFailure, noneCompleted } from './outcomeText';

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

/** A stream's median ITL in words: "4.2 ms", or, when its chunks come several to a network read, "under 0.01 ms (chunks arrive in bursts)". */
export function medianItlText(ms: number): string {
  return ms < TINY_MS ? `under ${TINY_MS} ms (chunks arrive in bursts)` : formatMs(ms);
}

/**
 * How far a stall's gap went past what made it a stall, against the bar it crossed: "12.5× median
 * ITL" when the stream's own rhythm set the bar, "3.4× the 50 ms stall floor" when the floor did
 * (a median of ~0 from chunks that arrive in bursts would otherwise give "86,545× median ITL").
 */
export function stallSizeText(stall: Pick<Stall, 'gapMs' | 'medianItlMs'>, rule: { readonly factor: number; readonly floorMs: number }): string {
  const byMedian = rule.factor * stall.medianItlMs;
  const ratio = byMedian >= rule.floorMs && stall.medianItlMs > 0
    ? `${formatNumber(stall.gapMs / stall.medianItlMs)}× median ITL`
    : `${formatNumber(stall.gapMs / rule.floorMs)}× the ${formatMs(rule.floorMs)} stall floor`;
  return stall.medianItlMs < TINY_MS ? `${ratio}; median ITL ${medianItlText(stall.medianItlMs)}` : ratio;
}

/**
 * Why ITL's median is so small, where it is (the latency table, the ITL tile): under what a duration
 * shows, or under 1 ms and a tenth of TPOT's median, the chunks come several to a network read.
 */
export function itlBurstNote(s: Pick<Summary, 'itlMs'> & Partial<Pick<Summary, 'tpotMs'>>): string | undefined {
  const p50 = s.itlMs.p50;
  if (s.itlMs.count === 0 || p50 === undefined) return undefined;
  const tpot = s.tpotMs?.count ? s.tpotMs.p50 : undefined;
  if (p50 >= TINY_MS && !(tpot !== undefined && p50 < 1 && p50 < tpot / 10)) return undefined;
  const per = tpot !== undefined ? `; TPOT p50, ${formatMs(tpot)}, is the time per token` : '';
  return `ITL p50 is ${p50 < TINY_MS ? `under ${TINY_MS} ms` : formatMs(p50)}: chunks arrive in bursts, several in one network read, so most gaps between them are about zero${per}.`;
}

/** The stall line: how many, by cause, their time summed over the streams (`streams` that stalled, when known), the worst. */
export function formatStalls(s: Summary, streams?: number): string {
  const st = s.stalls;
  if (st.count === 0) return `Stalls: none (${stallRule(st, 'no')})`;
  const worst = st.worst[0];
  const by = st.byCause;
  const causes = by ? ` (${(['prefill', 'buffering', 'unknown'] as const).filter((k) => by[k] > 0).map((k) => `${k === 'unknown' ? UNKNOWN_STALL_SHORT : k} ${by[k]}`).join(', ')})` : '';
  return (
    `Stalls: ${st.count}${causes}, ${stallTotalText(st, streams, s.durationS)}` +
    (worst ? `; worst ${formatMs(worst.gapMs)} in request ${worst.requestIndex} (${stallSizeText(worst, st)})` : '')
  );
}

/**
 * Who counted the output tokens: the server's usage, our count of the chunks, or, for another tool's
 * result, that tool (each importable tool takes usage or its own tokenizer's count, and its file
 * does not say which).
 */
function tokensCountedBy(run: RunFile): string {
  if (run.importedFrom) return countedByTool(run.importedFrom.tool);
  const source = run.summary.tokenSource;
  return `counted from ${source === 'usage' ? 'server usage' : source === 'chunks' ? 'chunks' : 'usage and chunks'}`;
}

/** A single figure's value in the CLI's table (vLLM prints counts as they are, the rest `.2f`). */
function figureText(m: FigureMetric, run: RunFile): string {
  const v = figureValue(m, run.summary);
  switch (m.key) {
    case 'completed': case 'failed': case 'totalInputTokens': case 'stalls': return String(v);
    case 'totalOutputTokens': return `${v} (${tokensCountedBy(run)})`;
    // a rate over no completed request is no figure: "–", not 0.00
    case 'goodput': return `${noneCompleted(run.summary) ? DASH : num(v)}  (SLO ${formatSlo(run.workload.slo ?? {})})`;
    default: return noneCompleted(run.summary) && m.group === 'throughput' ? DASH : num(v);
  }
}

/** The figures' lines, in the catalogue's order (src/present/metricCatalogue.ts), each under vLLM's name. */
function figureLines(run: RunFile): string[] {
  return metricsFor('cli', [run.summary])
    .filter((m): m is FigureMetric => m.kind === 'figure' && m.cliLine !== undefined)
    .map((m) => line(`${m.cliLine}:`, figureText(m, run)));
}

/** The latency table: a row per catalogue latency, a column per percentile, and the notes under it. */
function latencyTable(run: RunFile): string[] {
  const s = run.summary;
  const pcts = run.workload.percentiles;
  const proxy = measuresProxy(s);
  const rows: string[][] = [['Metric (ms)', 'mean', ...pcts.map((p) => `p${p}`), 'n']];
  for (const m of latenciesFor('cli', [s])) rows.push(statRow(`${m.label}${proxy && m.proxy ? ' *' : ''}`, latencyStats(m, s)!, pcts));
  const out = [grid(rows)];
  if (proxy) out.push('* measures the buffer between the server and you, not the server (see below)');
  const bursts = itlBurstNote(s);
  if (bursts) out.push(bursts);
  return out;
}

/** Lowest–highest of a figure over repetitions: "48.10–50.20", one value when they agree, a dash when none has it. */
function rangeText(values: readonly (number | undefined)[]): string {
  const xs = values.filter((x): x is number => x !== undefined && Number.isFinite(x));
  if (xs.length === 0) return DASH;
  const lo = num(Math.min(...xs));
  const hi = num(Math.max(...xs));
  return lo === hi ? lo : `${lo}–${hi}`;
}

/** The percentiles the spread shows: p50 and p99 where the run has them, else its lowest and highest. */
function spreadPercentiles(pcts: readonly number[]): number[] {
  const wanted = [50, 99].filter((p) => pcts.includes(p));
  if (wanted.length === 2 || pcts.length === 0) return wanted;
  return [...new Set([pcts[0]!, pcts[pcts.length - 1]!])];
}

/** "3 repetitions of 100 requests", "10 blocks of 10 requests", "3 repetitions of 30 s". */
function segmentsText(run: RunFile, count: number): string {
  const what = run.ab ? (count === 1 ? 'block' : 'blocks') : count === 1 ? 'repetition' : 'repetitions';
  const w = run.workload;
  const size = run.ab ? `${run.ab.blockRequests} requests` : w.durationS !== undefined ? `${formatQuantity(w.durationS)} s` : w.requests !== undefined ? `${w.requests} requests` : '';
  return `${count} ${what}${size ? ` of ${size}` : ''}`;
}

/**
 * The spread between repetitions (`run --repeat`) or an A/B side's blocks: each one's own p50 and p99
 * (lowest–highest over them) beside the pooled figures above, and its output throughput. How far
 * apart the same workload lands when nothing changed.
 */
export function repeatSpreadLines(run: RunFile): string[] {
  // a cancelled run's last repetition was cut short: its figures are not the workload's
  const all = run.repeats ?? [];
  const reps = run.cancelled ? all.slice(0, -1) : all;
  if (reps.length < 2) return [];
  const pcts = spreadPercentiles(run.workload.percentiles);
  const rows: string[][] = [['Metric (ms)', ...pcts.map((p) => `p${p}`)]];
  for (const m of latenciesFor('cli', [run.summary])) {
    rows.push([m.label, ...pcts.map((p) => rangeText(reps.map((r) => latencyStats(m, r.summary)?.[`p${p}`])))]);
  }
  const each = run.ab ? 'each block' : 'each repetition';
  return [
    `Between ${run.ab ? 'blocks' : 'repetitions'}: ${segmentsText(run, reps.length)}, lowest–highest of ${each}'s own figure${reps.length < all.length ? ' (the last, cut short, left out)' : ''}`,
    grid(rows),
    line('Output token throughput (tok/s):', rangeText(reps.map((r) => r.summary.outputTokensPerSecond))),
  ];
}

/** The run's endpoint, workload and what it sent: the table's head. */
function headLines(run: RunFile): string[] {
  const w = run.workload;
  const mode = modeLong(w.mode);
  const n = run.repeats?.length ?? 0;
  const segments = n > 1 ? `; ${segmentsText(run, n)}, pooled below` : '';
  const out = [line('Endpoint:', endpointText(run.endpoint)), line('Workload:', `${mode}${segments}`), line('Sent with:', sentLine(run))];
  const meant = cacheMeantText(run);
  // synthetic prompts: the tokens the server counted, beside the length asked
  const prompts = meant ?? (w.prompt.kind === 'synthetic' && !run.sweep && !run.prefillDial ? promptWords(run) : undefined);
  if (prompts) out.splice(2, 0, line('Prompts:', prompts));
  for (const p of sentPerPromptLines(run)) out.push(`  ${p}`);
  const connections = connectionText(run.connection);
  if (connections !== undefined) out.push(line('Connections:', connections));
  return out;
}

/** The SLO verdict, stalls, cache split and errors, with the first error's words. */
function verdictLines(run: RunFile): string[] {
  const s = run.summary;
  const slo = formatSlo(run.workload.slo ?? {});
  const out: string[] = [];
  if (s.sloMissed !== undefined) {
    out.push(s.sloMissed.length === 0 ? `SLO: met at p99 (${slo})` : `SLO: MISSED at p99: ${s.sloMissed.map((k) => k.replace(/Ms$/, '')).join(', ')} (${slo})`);
  }
  out.push(...scheduleLines(run), formatStalls(s, stalledStreams(run)));
  if (s.stalls.count > 0) out.push(`  ${stallSizeMeaning(s.stalls)}`);
  const tools = toolCallLine(run);
  if (tools) out.push(tools);
  const cache = prefixCacheSplitLine(s.prefixCache);
  if (cache) out.push(cache);
  out.push(formatErrors(s));
  const firstError = firstFailure(run);
  if (firstError) {
    const body = firstError.error.body?.replace(/\s+/g, ' ').trim().slice(0, 120);
    out.push(`  first: request ${firstError.index}: ${firstError.error.message}${retryAfterNote(firstError.error)}${body ? ` (${body})` : ''}`);
  }
  const cancelled = cancelledLine(run);
  if (cancelled) out.push(`Cancelled: ${cancelled}`);
  return out;
}

/** What else the reader should know: rate limits, resends, overlong replies, odd streams, cancellation. */
function noteLines(run: RunFile): string[] {
  const s = run.summary;
  const out: string[] = [];
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
  out.push(...workerLossLines(run));
  const interrupted = interruptedLine(run);
  if (interrupted) out.push(interrupted);
  return out;
}

/** "Lost: 3 requests in flight when worker thread 2 of 2 exited (code 70); the run went on with 3 of 5 streams", one line per thread that died. */
export function workerLossLines(run: Pick<RunFile, 'requests'>): string[] {
  const byWhy = new Map<string, number>();
  for (const r of run.requests) if (r.error?.kind === 'worker') byWhy.set(r.error.message, (byWhy.get(r.error.message) ?? 0) + 1);
  return [...byWhy].map(([why, n]) => `Lost: ${n} ${n === 1 ? 'request' : 'requests'} in flight when ${why}`);
}

/** The result, as the terminal shows it. */
export function formatRunTable(run: RunFile): string {
  const spread = repeatSpreadLines(run);
  const turns = turnLines(run);
  const allFailed = allFailedLine(run);
  const out = ['============ LLM Profiler result ============', ...headLines(run), ...(allFailed ? [allFailed] : []), ...figureLines(run), '', ...latencyTable(run), '', ...(turns.length > 0 ? [...turns, ''] : []), ...(spread.length > 0 ? [...spread, ''] : [])];
  out.push(...verdictLines(run), ...noteLines(run));
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

interface SloMiss { readonly name: string; readonly value: number; readonly limit: number }

/** The SLOs a run missed at p99 (a metric without a sample is not held against it); undefined without an SLO. */
function sloMisses(r: SloFigures, slo: SloSpec | undefined): readonly SloMiss[] | 'none completed' | undefined {
  if (!slo || !SLO_KEYS.some(([k]) => slo[k] !== undefined)) return undefined;
  if (!r.completed) return 'none completed';
  const misses: SloMiss[] = [];
  for (const [key, name, field] of SLO_KEYS) {
    const limit = slo[key];
    const value = r[field];
    if (limit === undefined || value === undefined) continue;
    if (value > limit) misses.push({ name, value, limit });
  }
  return misses;
}

/**
 * The SLO verdict above a prompt, as its own CodeLens: a title short enough to survive a narrow
 * editor ("✓ SLOs met", "✗ TTFT p99 1.2 s > 1 s", "✗ TTFT p99 540 ms > 500 ms +1") and the whole
 * verdict, with the SLO, for its tooltip. Undefined without an SLO.
 */
export function lensVerdict(r: SloFigures, slo: SloSpec | undefined): { readonly title: string; readonly tooltip: string } | undefined {
  const misses = sloMisses(r, slo);
  if (misses === undefined || !slo) return undefined;
  const judged = `SLO ${formatSlo(slo)} (ms, at p99)`;
  if (misses === 'none completed') return { title: '✗ none completed', tooltip: `${judged}: missed, no request of the last run completed` };
  if (!misses.length) return { title: '✓ SLOs met', tooltip: `${judged}: met by the last run` };
  const first = misses[0]!;
  const more = misses.length > 1 ? ` +${misses.length - 1}` : '';
  return {
    title: `✗ ${first.name.toUpperCase()} p99 ${formatMs(first.value)} > ${formatMs(first.limit)}${more}`,
    tooltip: `${judged}: missed by the last run: ${misses.map((m) => `${m.name.toUpperCase()} p99 ${formatMs(m.value)} > ${formatMs(m.limit)}`).join(', ')}`,
  };
}

/**
 * The result shown in place above a prompt: "TTFT p50 312 ms · p99 540 ms · TPOT 41 ms" (the SLO
 * verdict is a lens of its own, lensVerdict, so that a narrow editor does not cut it off).
 */
export function lensResult(r: SloFigures & { readonly ttftP50Ms?: number; readonly tpotP50Ms?: number; readonly failed: number }): string {
  if (!r.completed) return `last run: ${r.failed} failed, none completed`;
  const parts = [`TTFT p50 ${formatMs(r.ttftP50Ms)}`, `p99 ${formatMs(r.ttftP99Ms)}`];
  if (r.tpotP50Ms !== undefined) parts.push(`TPOT ${formatMs(r.tpotP50Ms)}`);
  if (r.failed) parts.push(`${r.failed} failed`);
  return parts.join(' · ');
}

// ---- Run names: what tells one run from another (tab titles, run lists, quick picks) ----

/** What a run's name is built from: RunIndexEntry carries these, and runNameParts gets them from a run file. */
export interface RunNameParts {
  /** What ran: the workload or the prompt ("c=8 · 64 req", "sweep rate 1–8/s", "greet.prompt.md"); runWhat. */
  readonly what?: string;
  readonly endpointName: string;
  readonly startedAt: string;
}

/** A prompt a run was started from in the editor (the extension's `promptRef`): its file and name. */
interface PromptRefLike { readonly file?: unknown; readonly name?: unknown }

type RunForName = Pick<RunFile, 'workload' | 'sweep' | 'prefillDial' | 'prefixCache' | 'prompts'> & { readonly promptRef?: unknown };

const fileName = (path: string): string => path.split(/[\\/]/).pop() || path;

/** A sweep's values, first to last: "1–16", or "4" for one point. */
function span(values: readonly number[], unit = ''): string {
  if (values.length === 0) return '';
  const lo = Math.min(...values);
  const hi = Math.max(...values);
  return lo === hi ? `${formatQuantity(lo)}${unit}` : `${formatQuantity(lo)}–${formatQuantity(hi)}${unit}`;
}

/** "rows.prompt.yml: Rows · row 2"; the name left out when the file's name already says it (greet.prompt.md's "greet"). */
function withName(file: string, name: string | undefined): string {
  if (!name || file.toLowerCase().startsWith(`${name.toLowerCase()}.`)) return file;
  return `${file}: ${name}`;
}

/** The prompt a run sent, when it was not synthetic: "rows.prompt.yml: Rows · row 2", "data.jsonl". */
function promptWhat(run: RunForName): string | undefined {
  const ref = run.promptRef as PromptRefLike | undefined;
  if (ref && typeof ref.file === 'string') return withName(fileName(ref.file), typeof ref.name === 'string' ? ref.name : undefined);
  const p = run.workload?.prompt;
  if (p?.kind === 'chat') return `${p.turns}-turn chats`;
  if (!p || p.kind === 'synthetic') return undefined;
  const base = fileName(p.path);
  if (p.kind === 'dataset' || p.kind === 'trace') return base;
  const named = run.prompts?.filter((r) => r.name) ?? [];
  return run.prompts?.length === 1 && named.length === 1 ? withName(base, named[0]!.name) : base;
}

/** The load of a plain run: "c=8 · 64 req", "rate 4/s · 30 s". */
function loadWhat(w: RunFile['workload']): string | undefined {
  const mode = w?.mode;
  if (!mode) return undefined;
  const load = modeShort(mode);
  const size = w.durationS !== undefined ? `${w.durationS} s` : w.sessions !== undefined ? `${w.sessions} sessions` : w.requests !== undefined ? `${w.requests} req` : undefined;
  return size ? `${load} · ${size}` : load;
}

/**
 * What ran, in a few words: the workload ("c=8 · 64 req", "rate 4/s · 64 req", "sweep c 1–16",
 * "sweep rate 1–8/s", "sweep prompt 128–2048 tok", "cache check", "prefill dial") or the prompt
 * ("greet.prompt.md", "rows.prompt.yml: Rows · row 2"), the prompt with its load when that is more
 * than one at a time. Tolerates a partial run file (a run list entry of an odd file).
 */
export function runWhat(run: RunForName): string {
  const prompt = promptWhat(run);
  const withPrompt = (head: string) => (prompt ? `${head} · ${prompt}` : head);
  if (run.prefillDial) return `prefill dial ${run.prefillDial.configs.map((c) => c.batchSize).join('/')}`.trim();
  if (run.prefixCache) return withPrompt('cache check');
  const sweep = run.sweep;
  if (sweep) {
    const pts = sweep.points ?? [];
    switch (sweep.dimension) {
      case 'rate': return withPrompt(`sweep rate ${span(pts.map((p) => p.rate ?? Number.NaN).filter(Number.isFinite), '/s')}`.trim());
      case 'promptTokens': return `sweep prompt ${span(pts.map((p) => p.promptTokens ?? Number.NaN).filter(Number.isFinite), ' tok')}`.trim();
      default: return withPrompt(`sweep c ${span(pts.map((p) => p.concurrency ?? Number.NaN).filter(Number.isFinite))}`.trim());
    }
  }
  const load = loadWhat(run.workload);
  if (!prompt) return load ?? 'run';
  const m = run.workload?.mode;
  // one prompt, one at a time (▶ Profile's quick check): the prompt says it all
  // conversations: how many sessions, even one at a time
  return m && (concurrentMode(m) || run.workload?.sessions !== undefined) && load ? `${prompt} · ${load}` : prompt;
}

/** The parts of a run file's name. */
export function runNameParts(run: RunForName & Pick<RunFile, 'endpoint' | 'startedAt' | 'id'>): RunNameParts {
  return { what: runWhat(run), endpointName: run.endpoint?.name ?? run.endpoint?.url ?? run.id, startedAt: run.startedAt };
}

/** An endpoint as a name shows it: its configured name, or a URL's host. */
function endpointShort(name: string): string {
  if (!/^https?:\/\//i.test(name)) return name;
  try {
    return new URL(name).host;
  } catch {
    return name;
  }
}

interface NameOptions {
  /** The window's locale and zone (src/extension/clock.ts); without one, this process's own (the CLI). */
  readonly clock?: SurfaceClock;
  /** Leave the endpoint out (a compare says it once when both sides share it). */
  readonly endpoint?: boolean;
}

const two = (n: number) => String(n).padStart(2, '0');

/**
 * A run's name, for a tab, a run list, a quick pick: "c=8 · 64 req on ui-scripted, 5 Dec 2026,
 * 10:14:03", "greet.prompt.md on 127.0.0.1:8080, …"; its time as every surface says it (clockTime).
 */
export function runName(r: RunNameParts, opts: NameOptions = {}): string {
  const what = r.what || 'run';
  const where = opts.endpoint === false ? '' : ` on ${endpointShort(r.endpointName)}`;
  return `${what}${where}, ${clockTime(r.startedAt, opts.clock)}`;
}

/** Characters a file name cannot hold on some system (Windows' reserved ones, path separators). */
const NOT_IN_FILE_NAMES = /[\\/:*?"<>|]/g;
/** Control characters (a name from a server or a file could hold them): dropped from a file name. */
const isControl = (c: string): boolean => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f;

/**
 * A run's name as the default file name of an export, `suffix` included: "c=8 · 64 req on vllm
 * 2026-12-05 10-14.csv". Its date in full (a file outlives the day), local time; no character a file
 * system refuses; at most 150 characters before the suffix.
 */
export function runFileName(r: RunNameParts, suffix: string): string {
  const d = new Date(r.startedAt);
  const when = Number.isNaN(d.getTime()) ? r.startedAt : `${d.getFullYear()}-${two(d.getMonth() + 1)}-${two(d.getDate())} ${two(d.getHours())}-${two(d.getMinutes())}`;
  const base = safeFileName(`${r.what || 'run'} on ${endpointShort(r.endpointName)} ${when}`).replace(/\s+/g, ' ').slice(0, 150).replace(/[. ]+$/, '');
  return `${base}${suffix}`;
}

/** `name` with no character a file system refuses: a control character a space, a reserved one "-". */
export function safeFileName(name: string): string {
  return [...name].map((c) => (isControl(c) ? ' ' : c)).join('').replace(NOT_IN_FILE_NAMES, '-');
}

/**
 * Two runs side by side ("A vs B"), told apart: the endpoint said once when both share it, and the
 * ids when nothing else differs (the same second).
 */
export function compareName(a: RunNameParts & { readonly id?: string }, b: RunNameParts & { readonly id?: string }, clock?: SurfaceClock): string {
  const same = endpointShort(a.endpointName) === endpointShort(b.endpointName);
  const opts: NameOptions = { clock, endpoint: !same };
  let [na, nb] = [runName(a, opts), runName(b, opts)];
  if (na === nb && a.id && b.id) [na, nb] = [`${na} (${a.id})`, `${nb} (${b.id})`];
  return `${na} vs ${nb}${same ? ` on ${endpointShort(a.endpointName)}` : ''}`;
}

/** A run in a list: its name, and how the endpoint was reached when that changed what was measured (`network`: networkShort's notes). */
export function runLabel(r: RunNameParts & { readonly network?: readonly string[] }, clock?: SurfaceClock): string {
  return `${runName(r, { clock })}${r.network?.length ? ` (${r.network.join(' · ')})` : ''}`;
}

/** A one-paragraph summary (a notification, the log). */
export function summaryText(run: Pick<RunFile, 'endpoint' | 'summary'> & Partial<Pick<RunFile, 'importedFrom'>>): string {
  const s = run.summary;
  const t = s.ttftMs.count ? `TTFT p50 ${formatMs(s.ttftMs.p50)} · p99 ${formatMs(s.ttftMs.p99)}` : 'no TTFT';
  const tp = s.tpotMs.count ? ` · TPOT p50 ${formatMs(s.tpotMs.p50)}` : '';
  const buffered = s.buffering?.detected ? ' · the stream is buffered between the server and you (ITL and TPOT measure the buffer)' : '';
  const notes = networkShort(run.endpoint);
  const cancelled = cancelledCount(run);
  const tps = noneCompleted(s) ? '' : ` · ${s.outputTokensPerSecond.toFixed(1)} tok/s`;
  return `${run.endpoint.name ?? run.endpoint.url}${notes.length ? ` (${notes.join(' · ')})` : ''}: ${s.completed} completed, ${s.failed} failed${cancelled ? `, ${cancelled}` : ''} · ${t}${tp}${tps}${buffered}`;
}
