// The report's DOM parts: the header with the headline figures, the percentile table, the compare
// table and the stalls list. Which figures they show, and their values, come from figures.ts (over the
// metric catalogue, src/present/metricCatalogue.ts); sentences about them (buffering, the prefix cache,
// a stall's cause) from src/present/whereText.ts.
import { prefixCacheSplitLine } from '../../src/present/cacheCheckText';
import type { RunFile, Stall, Stats } from '../../src/engine/core/types';
import type { LatencyKey } from '../../src/present/metricCatalogue';
import { h, pageClock, scrollRegion } from './dom';
import { itlBurstNote, overlongLine, stallSizeText, workerLossLines } from '../../src/present/runText';
import { dialWorkload, pooledNote, sweepWorkload } from '../../src/present/sweepText';
import { formatAt, formatDelta, formatInt, formatMs, formatNumber, formatPercent, formatPrecise } from '../../src/present/units';
import { bufferingSentence, measuresProxy, stallPhrase, stallRule, stallSizeMeaning } from '../../src/present/whereText';
import { UNKNOWN_STALL_CAUSE } from '../../src/engine/analysis/stalls';
import { networkNotes } from '../../src/present/endpointText';
import { FROM_TEXT, sentLine, sentNotes, sentWithRows } from '../../src/present/sentText';
import { importedLine, reportedRows, type ReportedRow } from '../../src/present/importText';
import { importToolLabel } from '../../src/present/toolLabels';
import { comparability, type ComparableProblem } from '../../src/engine/analysis/comparable';
import { problemLines } from '../../src/present/compareText';
import { compareRows, headlineFigures, noChunks, percentileRows, PROXY_NOTE, type CompareRow, type PercentileRow } from './figures';
import { modeLong, promptWords } from '../../src/present/workloadText';
import { cacheMeantText, scheduleText } from '../../src/present/scheduleText';
import { toolCallLine } from '../../src/present/toolText';
import { interruptedLine } from '../../src/present/recoverText';
import { clockTime } from '../../src/present/timeText';
import { allFailedLine, cancelledLine } from '../../src/present/outcomeText';

function percentileKeys(run: RunFile): `p${string}`[] {
  const ps = run.workload?.percentiles?.length ? run.workload.percentiles : [50, 90, 95, 99];
  return ps.map((p) => `p${p}` as const);
}

function stat(s: Stats | undefined, k: string): number | undefined {
  const v = s ? (s as unknown as Record<string, number>)[k] : undefined;
  return typeof v === 'number' ? v : undefined;
}

function describeWorkload(run: RunFile): string {
  const w = run.workload;
  if (!w) return '';
  // a sweep's own workload is only its first point's: say what was swept instead
  if (run.sweep) return `${sweepWorkload(run)} · ${sentLine(run)}`;
  if (run.prefillDial) return `chunked-prefill dial: ${dialWorkload(run)}`;
  const mode = modeLong(w.mode);
  const size = w.sessions !== undefined ? `${formatInt(w.sessions)} sessions` : w.requests !== undefined ? `${formatInt(w.requests)} requests`
    : w.durationS !== undefined ? `${w.durationS} s` : w.mode.kind === 'trace' ? 'the whole trace' : 'every conversation';
  // synthetic prompts: the tokens the server counted, beside the length asked
  const prompt = promptWords(run);
  // what was sent (RunFile.prompts: a prompt file's max tokens, not the workload's default)
  return `${mode} · ${size}${w.warmup ? ` + ${w.warmup} warmup` : ''} · ${prompt} · ${sentLine(run)}`;
}

/** When the run started, as the tab's title and the run list say it: in the host's locale and zone (src/present/timeText.ts). */
function when(run: RunFile): string {
  return clockTime(run.startedAt, pageClock());
}

export function runTitle(run: RunFile): string {
  // an imported run whose file names no endpoint: the model alone (the header's next line says where it came from)
  if (run.importedFrom && !run.endpoint?.url) return run.endpoint?.model ?? run.endpoint?.name ?? importedLine(run.importedFrom);
  return `${run.endpoint?.model ?? run.endpoint?.name ?? 'endpoint'} @ ${run.endpoint?.url ?? '?'}`;
}

export function headerView(run: RunFile, actions: HTMLElement): HTMLElement {
  const meta = [run.endpoint?.api, describeWorkload(run), when(run)].filter(Boolean).join(' · ');
  const flags: string[] = [];
  if (run.cancelled) flags.push(['cancelled: partial results', cancelledLine(run)].filter(Boolean).join('; '));
  flags.push(...workerLossLines(run));
  const interrupted = interruptedLine(run, pageClock());
  if (interrupted) flags.push(interrupted);
  flags.push(...networkNotes(run.endpoint));
  const overlong = overlongLine(run);
  if (overlong) flags.push(overlong);
  flags.push(...sentNotes(run));
  // conversations, traces and shared-prefix groups are sent warm on purpose: said, as the CLI's head says it
  const warm = run.workload ? cacheMeantText(run) : undefined;
  if (warm) flags.push(warm);
  const buffered = bufferingSentence(run.summary);
  const evidence = run.summary.buffering?.evidence ?? [];
  const schedule = run.summary.schedule;
  const tools = run.workload ? toolCallLine(run) : undefined;
  const allFailed = allFailedLine(run);
  return h('header', { class: 'run-header' },
    h('div', { class: 'titles' },
      h('h1', { text: runTitle(run) }),
      h('p', { class: 'meta', text: meta }),
      // nothing completed: the first failure's words before any figure (the figures read "–")
      allFailed ? h('p', { class: 'flags all-failed', role: 'alert', text: allFailed }) : undefined,
      ...importedView(run),
      flags.length ? h('p', { class: 'flags', text: flags.join(' · ') }) : undefined,
      // a trace or an open loop: how late requests were sent against their schedule (a warning when it was not kept)
      schedule ? h('p', { class: `${schedule.kept ? 'meta' : 'flags'} schedule-line`, role: schedule.kept ? undefined : 'note', 'data-kept': String(schedule.kept), text: `Schedule: ${scheduleText(schedule)}` }) : undefined,
      tools ? h('p', { class: 'meta tool-calls-line', text: tools }) : undefined,
      buffered ? h('p', { class: 'buffering', role: 'note', title: evidence.length ? `Evidence: ${evidence.join('; ')}` : undefined },
        h('span', { class: 'icon', 'aria-hidden': 'true', text: '⚠ ' }), buffered) : undefined,
    ),
    actions,
  );
}

/** An imported run's lines: where it came from (the whole path in the tooltip), and what its file does not record. */
function importedView(run: RunFile): HTMLElement[] {
  const from = run.importedFrom;
  if (!from) return [];
  const tool = importToolLabel(from.tool);
  const out = [h('p', { class: 'meta imported-from', 'data-tool': from.tool, title: [from.file, ...(from.files ?? [])].join('\n'), text: importedLine(from) })];
  if (from.missing?.length) {
    out.push(h('p', { class: 'flags imported-missing', role: 'note' }, `Not in the ${tool} file, so not shown here: `,
      ...from.missing.flatMap((m, i) => [i ? '; ' : '', h('span', { 'data-missing': i, text: m })])));
  }
  return out;
}

/**
 * The figures the tool wrote in its own file, under its names, with ours from the same requests
 * beside each where the name says which figure and unit it is (present/importText.ts). Undefined
 * for a measured run, or an imported one whose file reported nothing.
 */
export function reportedView(run: RunFile): HTMLElement | undefined {
  const from = run.importedFrom;
  if (!from) return undefined;
  const tool = importToolLabel(from.tool);
  const rows = reportedRows(from, run.summary);
  if (rows.length) return reportedTable(tool, rows, `As ${tool} reported`);
  // a sweep whose tool reported per point (GuideLLM's benchmarks): one table per point, folded, against that point's figures
  const points = (run.sweep?.points ?? []).map((p) => ({ p, rows: reportedRows({ tool: from.tool, reported: p.reported }, p.summary) })).filter((x) => x.rows.length);
  if (points.length === 0) return undefined;
  // one point's table at a time, picked by its button (pressed: the one shown)
  const box = h('div', { class: 'reported-point' });
  const buttons = points.map(({ p, rows: r }, i) => {
    const b = h('button', { type: 'button', class: 'tool', 'data-point': p.label, 'aria-pressed': String(i === 0), 'aria-controls': 'reported-point',
      title: `${formatInt(r.length)} figures, ${formatInt(r.filter((x) => x.ours !== undefined).length)} beside ours`, text: p.label });
    b.addEventListener('click', () => {
      for (const o of buttons) o.setAttribute('aria-pressed', String(o === b));
      box.replaceChildren(reportedTable(tool, r, `As ${tool} reported for ${p.label}`));
      box.dataset.point = p.label;
    });
    return b;
  });
  box.id = 'reported-point';
  box.dataset.point = points[0]!.p.label;
  box.append(reportedTable(tool, points[0]!.rows, `As ${tool} reported for ${points[0]!.p.label}`));
  return h('div', { class: 'reported-points' },
    h('div', { class: 'toolbar', role: 'toolbar', 'aria-label': `Sweep point whose ${tool} figures are shown` }, ...buttons), box);
}

function reportedTable(tool: string, rows: readonly ReportedRow[], label: string): HTMLElement {
  const head = h('tr', {}, h('th', { scope: 'col', text: `${tool}'s name` }), h('th', { scope: 'col', class: 'num', text: `As ${tool} reported` }),
    h('th', { scope: 'col', class: 'num', text: 'Ours' }), h('th', { scope: 'col', text: 'Ours is' }));
  const row = (r: ReportedRow) => h('tr', { 'data-key': r.key },
    h('th', { scope: 'row', text: r.key }),
    h('td', { class: 'num', 'data-stat': 'reported', 'data-value': r.value, title: formatPrecise(r.value), text: formatNumber(r.value) }),
    h('td', { class: 'num', 'data-stat': 'ours', 'data-value': r.ours, title: r.ours === undefined ? undefined : formatPrecise(r.ours), text: r.ours === undefined ? '–' : formatNumber(r.ours) }),
    h('td', { text: r.oursLabel ?? 'not matched by name' }));
  // the figures set beside ours first; the tool's others (counts, its own metrics) behind a button: the table stays small
  const matched = rows.filter((r) => r.ours !== undefined);
  const others = matched.length ? rows.filter((r) => r.ours === undefined) : [];
  const rest = h('tbody', { class: 'reported-others', hidden: others.length > 0 }, ...others.map(row));
  const table = h('table', { class: 'reported' },
    h('caption', { text: `The figures ${tool} wrote in its file, under its own names and units; ours are computed from the same requests, in the same unit, where the name says which figure it is` }),
    h('thead', {}, head), h('tbody', {}, ...(matched.length ? matched : rows).map(row)), others.length ? rest : undefined);
  const region = scrollRegion(table, label);
  if (others.length === 0) return region;
  const more = `Show the ${formatInt(others.length)} other figures ${tool} reported`;
  const toggle = h('button', { type: 'button', class: 'tool reported-more', 'aria-expanded': 'false', text: more });
  toggle.addEventListener('click', () => {
    const open = rest.hidden;
    rest.hidden = !open;
    toggle.setAttribute('aria-expanded', String(open));
    toggle.textContent = open ? `Hide the ${formatInt(others.length)} other figures` : more;
  });
  return h('div', {}, region, toggle);
}

/** `side`: "A" or "B" in a compare, so each side's figures have their own name. */
export function headlineView(run: RunFile, side?: string): HTMLElement {
  const missed = new Set(run.summary.sloMissed ?? []);
  // a sweep's tiles are every point's requests together: said above them
  const pooled = pooledNote(run);
  return h('section', { class: 'headline', 'aria-label': side ? `Headline figures of ${side}` : 'Headline figures' }, pooled ? h('p', { class: 'headline-note', text: pooled }) : undefined, ...headlineFigures(run).map((x) => {
    const isMissed = x.slo !== undefined && missed.has(x.slo);
    const sloText = x.slo && x.sloValue !== undefined ? `${isMissed ? '✗ misses' : '✓ meets'} SLO ${formatMs(x.sloValue)}` : undefined;
    return h('div', { class: `figure${isMissed || x.bad ? ' bad' : ''}${isMissed ? ' missed' : ''}${x.proxy ? ' proxy' : ''}`, 'data-figure': x.id, 'data-value': x.raw, 'data-proxy': x.proxy ? 'true' : undefined,
      title: [x.tip, sloText].filter(Boolean).join('\n') || undefined },
      h('span', { class: 'label', text: x.label }),
      h('span', { class: 'value', text: x.value }),
      sloText ? h('span', { class: `slo${isMissed ? ' missed' : ''}`, text: sloText }) : undefined,
      x.note ? h('span', { class: 'note', text: x.note }) : undefined,
    );
  }));
}

/** The percentile table's row of a metric, which its CDF chart names as its text alternative (aria-describedby). */
export function percentileRowId(key: LatencyKey): string {
  return `pct-${key}`;
}
const PERCENTILE_CAPTION_ID = 'pct-caption';

function percentileRow(r: PercentileRow, cols: readonly string[]): HTMLElement {
  const m = r.metric;
  return h('tr', { id: percentileRowId(m.key), 'data-metric': m.key, 'data-proxy': r.proxy ? 'true' : undefined },
    h('th', { scope: 'row', title: r.proxy ? `${m.title}: ${PROXY_NOTE} (the stream is buffered)` : m.title },
      m.label, r.proxy ? h('span', { class: 'proxy-flag', text: ` ⚠ ${PROXY_NOTE}` }) : undefined),
    h('td', { class: 'num', 'data-stat': 'count', 'data-value': r.count, text: formatInt(r.count) }),
    ...cols.map((c) => {
      const v = stat(r.stats, c);
      return h('td', { class: 'num', 'data-stat': c, 'data-value': v, title: v === undefined ? undefined : formatPrecise(v, 'ms'), text: formatMs(v) });
    }),
    h('td', { class: `slo${r.missed ? ' missed' : ''}`, 'data-stat': 'slo',
      text: r.sloValue === undefined ? '–' : `≤ ${formatMs(r.sloValue)} ${r.missed ? '✗ missed' : '✓'}` }),
  );
}

export function percentileTable(run: RunFile): HTMLElement {
  const s = run.summary;
  const cols = ['mean', ...percentileKeys(run), 'max'];
  const head = h('tr', {}, h('th', { scope: 'col', text: 'Metric' }), h('th', { scope: 'col', class: 'num', text: 'n' }),
    ...cols.map((c) => h('th', { scope: 'col', class: 'num', text: c })), h('th', { scope: 'col', text: 'SLO' }));
  const proxy = measuresProxy(s);
  const bursts = itlBurstNote(s);
  return scrollRegion(h('table', { class: 'percentiles' },
    h('caption', { id: PERCENTILE_CAPTION_ID, text: `Latency percentiles over measured requests (SLOs judged on p99)${proxy ? '. The stream is buffered between the server and you: TPOT and ITL time the buffer\'s flushes' : ''}${bursts ? `. ${bursts}` : ''}` }),
    h('thead', {}, head), h('tbody', {}, ...percentileRows(run).map((r) => percentileRow(r, cols)))), 'Latency percentiles');
}

/** The compare table's row of a metric, which the overlaid CDF names as its text alternative. */
export function compareRowId(key: LatencyKey): string {
  return `cmp-${key}`;
}
const COMPARE_CAPTION_ID = 'cmp-caption';

/** B against A: "+12 %" (a rate: higher is better). */
function rateChange(a: number | undefined, b: number | undefined): { text: string; better?: boolean } {
  if (a === undefined || b === undefined || !(a > 0) || !Number.isFinite(b)) return { text: '–' };
  const d = (b - a) / a;
  return { text: `${d > 0 ? '+' : d < 0 ? '−' : '±'}${formatPercent(Math.abs(d))}`, ...(d !== 0 ? { better: d > 0 } : {}) };
}

function compareRow(r: CompareRow): HTMLElement {
  const m = r.metric;
  if (m.kind === 'figure') {
    const [a, b] = [r.a as number | undefined, r.b as number | undefined];
    const change = rateChange(a, b);
    return h('tr', { 'data-metric': m.key }, h('th', { scope: 'row', text: m.label }),
      h('td', { class: 'num', colspan: 3, 'data-stat': 'a-b', text: `${formatNumber(a)} → ${formatNumber(b)}` }),
      h('td', { class: `num delta${change.better === undefined ? '' : change.better ? ' better' : ' worse'}`, colspan: 3, 'data-stat': 'change', text: change.text }));
  }
  const [sa, sb] = [r.a as Stats | undefined, r.b as Stats | undefined];
  const cell = (v: number | undefined, st: string) => h('td', { class: 'num', 'data-stat': st, 'data-value': v, text: formatMs(v) });
  const delta = (x: number | undefined, y: number | undefined, st: string) => {
    const worse = x !== undefined && y !== undefined && y > x;
    return h('td', { class: `num delta${worse ? ' worse' : x !== undefined && y !== undefined && y < x ? ' better' : ''}`, 'data-stat': st, text: formatDelta(x, y) });
  };
  return h('tr', { id: compareRowId(m.key), 'data-metric': m.key }, h('th', { scope: 'row', text: m.label }),
    cell(sa?.p50, 'a-p50'), cell(sb?.p50, 'b-p50'), delta(sa?.p50, sb?.p50, 'd-p50'),
    cell(sa?.p99, 'a-p99'), cell(sb?.p99, 'b-p99'), delta(sa?.p99, sb?.p99, 'd-p99'));
}

export function compareTable(a: RunFile, b: RunFile): HTMLElement {
  const head = h('tr', {}, h('th', { scope: 'col', text: 'Metric' }),
    ...['A p50', 'B p50', 'Δ p50', 'A p99', 'B p99', 'Δ p99'].map((c) => h('th', { scope: 'col', class: 'num', text: c })));
  const table = h('table', { class: 'compare' },
    h('caption', { id: COMPARE_CAPTION_ID, text: 'B against A: a positive Δ of a latency means B is slower; a rate\'s change is B\'s against A\'s' }),
    h('thead', {}, head), h('tbody', {}, ...compareRows(a, b).map(compareRow)));
  return scrollRegion(table, 'Differences, B against A');
}

/** A line said before a compare's figures: `kind` names what it is about (a caveat's, or the engine's problem kind). */
export interface CompareNote {
  readonly kind: string;
  readonly severity: 'refuse' | 'warn';
  readonly text: string;
}

/**
 * Everything to say before the figures of B against A, in one list: the engine's refusals first (not
 * the same workload), then this report's caveats, then the engine's other notes, each said once (the
 * engine's note on the cache or on buffering is left out where the report's caveat says it already).
 */
export function compareNotes(a: RunFile, b: RunFile): CompareNote[] {
  const caveats = compareCaveats(a, b);
  const said = new Set(caveats.map(([kind]) => CAVEAT_COVERS[kind]));
  const problems = comparability(a, b, { sameRequests: sameAbPair(a, b) });
  const line = (p: ComparableProblem): CompareNote => ({ kind: p.kind, severity: p.severity, text: problemLines([p])[0]! });
  return [
    ...problems.filter((p) => p.severity === 'refuse').map(line),
    ...caveats.map(([kind, text]): CompareNote => ({ kind, severity: 'warn', text })),
    ...problems.filter((p) => p.severity === 'warn' && !said.has(p.kind)).map(line),
  ];
}

/** The engine's problem kind each of the report's caveats already says. */
const CAVEAT_COVERS: Readonly<Record<string, ComparableProblem['kind']>> = { 'prefix-cache': 'cache', buffering: 'buffering' };

/** Both sides of one interleaved A/B run: they were sent the very same requests, so their APIs may differ on purpose. */
function sameAbPair(a: RunFile, b: RunFile): boolean {
  return a.ab !== undefined && b.ab !== undefined && a.ab.pairId === b.ab.pairId;
}

/** What makes a difference in the compare table not what it seems: a warm cache on one side, a buffered stream. */
function compareCaveats(a: RunFile, b: RunFile): [string, string][] {
  const out: [string, string][] = [];
  const warm = (r: RunFile) => (r.summary.prefixCache?.warmRequests ?? 0) > 0;
  if (warm(a) || warm(b)) {
    const side = (tag: string, r: RunFile) => `${tag}: ${warm(r) ? (prefixCacheSplitLine(r.summary.prefixCache) ?? `${formatInt(r.summary.prefixCache!.warmRequests)} warm requests`) : 'no request served from the prefix cache'}`;
    out.push(['prefix-cache', `TTFT: the prefix cache served ${warm(a) && warm(b) ? 'both runs' : warm(a) ? 'A, not B' : 'B, not A'}, so the TTFT difference is largely the cache. ${side('A', a)}. ${side('B', b)}.`]);
  }
  const pa = measuresProxy(a.summary);
  const pb = measuresProxy(b.summary);
  if (pa || pb) out.push(['buffering', `TPOT and ITL of ${pa && pb ? 'both runs' : pa ? 'A' : 'B'} ${PROXY_NOTE} (the stream is buffered between the server and the client).`]);
  return out;
}

export function stallsList(run: RunFile, onSelect: (s: Stall) => void, t0: number): HTMLElement {
  const worst = run.summary.stalls.worst ?? [];
  if (noChunks(run)) {
    return h('p', { class: 'empty', 'data-reason': 'no-chunks', text: `Stalls cannot be found here: the ${importToolLabel(run.importedFrom!.tool)} file has no chunk arrival times, and a stall is a gap between chunks.` });
  }
  if (worst.length === 0) {
    return h('p', { class: 'empty', text: `No stalls: ${stallRule(run.summary.stalls, 'no')}.` });
  }
  const list = h('ol', { class: 'stalls-list' });
  for (const s of worst) {
    const at = s.startAt - t0;
    const culprits = s.culprits?.map((c) => c.index).join(',');
    const btn = h('button', { type: 'button', class: `stall${s.cause ? ` cause-${s.cause}` : ''}`, 'data-request': s.requestIndex, 'data-start': s.startMs,
      'data-cause': s.cause, 'data-culprits': culprits || undefined },
      h('span', { class: 'req', text: `Request #${s.requestIndex}` }),
      h('span', { class: 'at', text: `at ${formatAt(at)}` }),
      h('span', { class: 'gap', text: formatMs(s.gapMs) }),
      h('span', { class: 'ratio', title: stallSizeMeaning(run.summary.stalls), text: stallSizeText(s, run.summary.stalls) }),
      // the engine's verdict on the cause, when the file has one
      s.cause ? h('span', { class: 'why', title: s.cause === 'unknown' ? UNKNOWN_STALL_CAUSE : undefined, text: stallPhrase(s, run) }) : undefined,
    );
    btn.addEventListener('click', () => onSelect(s));
    list.append(h('li', {}, btn));
  }
  return list;
}

export function errorView(message: string, path?: string): HTMLElement {
  return h('section', { class: 'error-view', role: 'alert' },
    h('h1', { text: 'This run cannot be shown' }),
    h('p', { class: 'message', text: message }),
    path ? h('p', { class: 'path', text: path }) : undefined,
    h('p', { class: 'hint', text: 'Nothing was changed. Open another run file, or run the profile again.' }));
}

/**
 * A cache-check run's verdict (`run.prefixCache`): TTFT cold, warm and for a variant, the cached
 * tokens the server reported, and the check's own sentence. Undefined for any other run.
 */
/** "Sent with": per prompt of the run (RunFile.prompts), each setting sent, its value and where it came from. Undefined without prompts. */
export function sentWithView(run: RunFile): HTMLElement | undefined {
  const rows = sentWithRows(run);
  if (rows.length === 0) return undefined;
  const head = h('tr', {}, ...['Prompt', 'Setting', 'Value', 'From'].map((c) => h('th', { scope: 'col', text: c })));
  const body = rows.flatMap((r, i) => r.settings.map((x, j) =>
    h('tr', { 'data-prompt': i, 'data-setting': x.key },
      j === 0 ? h('th', { scope: 'rowgroup', rowspan: r.settings.length, text: r.name }) : undefined,
      h('td', { text: x.label }),
      h('td', { 'data-value': x.value, text: x.value }),
      h('td', { class: 'from', text: x.from }))));
  return scrollRegion(h('table', { class: 'sent-with' },
    h('caption', { text: `What each prompt was sent with: a flag or setting beats the prompt file, the file beats the defaults ("${FROM_TEXT.workload}", "${FROM_TEXT.file}", "${FROM_TEXT.default}")` }),
    h('thead', {}, head), h('tbody', {}, ...body)), 'What each prompt was sent with');
}

/** `side`: "A" or "B" in a compare, in the section's name. */
export function prefixCacheCheckView(run: RunFile, side?: string): HTMLElement | undefined {
  const c = run.prefixCache;
  if (!c) return undefined;
  const share = (v: number) => (c.coldTtftMs > 0 ? `${formatPercent(v / c.coldTtftMs)} of cold` : undefined);
  const figures: { id: string; label: string; value: string; raw?: number; note?: string; bad?: boolean }[] = [
    { id: 'cache-verdict', label: 'Prefix cache', value: c.hit ? 'caches prompts' : 'none seen', note: `median of ${formatInt(c.rounds)} round${c.rounds === 1 ? '' : 's'}` },
    { id: 'cache-cold', label: 'TTFT cold', value: formatMs(c.coldTtftMs), raw: c.coldTtftMs, note: 'a new unique prefix' },
    { id: 'cache-warm', label: 'TTFT warm', value: formatMs(c.warmTtftMs), raw: c.warmTtftMs, note: share(c.warmTtftMs) },
  ];
  if (c.variantTtftMs !== undefined) figures.push({ id: 'cache-variant', label: 'TTFT variant', value: formatMs(c.variantTtftMs), raw: c.variantTtftMs, note: 'the last words changed' });
  figures.push({ id: 'cache-tokens', label: 'Cached tokens', value: c.cachedTokens === undefined ? '–' : formatInt(c.cachedTokens), raw: c.cachedTokens,
    note: c.cachedTokens === undefined ? 'not reported by the server' : 'reported on the warm request' });
  return h('section', { class: 'prefix-cache-check', 'aria-label': side ? `Prefix cache check of ${side}` : 'Prefix cache check', 'data-hit': String(c.hit) },
    h('div', { class: 'headline' }, ...figures.map((x) => h('div', { class: `figure${x.bad ? ' bad' : ''}`, 'data-figure': x.id, 'data-value': x.raw },
      h('span', { class: 'label', text: x.label }),
      h('span', { class: 'value', text: x.value }),
      x.note ? h('span', { class: 'note', text: x.note }) : undefined))),
    h('p', { class: 'cache-message', role: 'note', text: c.message }));
}
