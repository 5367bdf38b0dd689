// `npm run bench:compare`: does `compare` tell a real change from noise? (issue 29, "Done when")
// Measured, not assumed, in two parts:
//
// 1. Against step servers that know the truth (test/support/stepServer.ts, each in its own process,
//    its engine step set exactly): runs made by the real CLI (`node dist/cli.js run --url … --out F`,
//    its own process), judged by the real CLI (`node dist/cli.js compare BASE NEW
//    --fail-on-regression 2% --json`; by the engine's compareRuns + applyGate with --judge engine,
//    or when the CLI has no `compare`). Each round makes two runs at stepMs (A1, A2) and, in the
//    first --ab rounds, one at stepMs × 1.05 (SLOW) and one at stepMs × 0.95 (FAST), in an order
//    rotated every round, so drift on a shared machine falls on every kind. Then:
//      A/A     A1 vs A2 (--aa rounds): how often the 2% gate fails (target ≤ 5%), how often any row
//              says slower
//      slower  A1 vs SLOW (--ab rounds): how often TPOT p50 and TPOT mean are called slower (≥ 90%)
//      faster  A2 vs FAST: how often any row is called slower (target 0) and the gate fails
//      cover   how often the 95% interval (ms) of TPOT p50 and TPOT mean holds the true difference
//              (target ≥ 90%), and of every latency row that has one
//    The true difference is the server's: from its log of when it received each request and wrote
//    each token, a run's server-side figures (TTFT = first token write − arrival, TPOT = (last −
//    first token write) / (tokens − 1), ITL = gaps between token writes, E2E = last token write −
//    arrival; percentiles and means over the run's measured requests), NEW's minus BASE's. The
//    nominal difference (stepMs × 5%) is shown beside it.
// 2. A pure simulation (no server, no CLI): runs drawn from known distributions (TTFT lognormal,
//    per-request TPOT lognormal, each gap jittered around it), A/A and A/B with TPOT and ITL 5%
//    higher or lower, judged by the engine: the false-alarm rate, the power and the intervals'
//    coverage of the true (population) difference, over many more replications.
//
// Options: --quick (8 A/A, 4 A/B each way; 200 and 100 simulated) --aa 40 --ab 20 --sim-aa 1000
//          --sim-ab 500 --sim-resamples 1000 --requests 100 --concurrency 16 --max-tokens 32
//          --step 10 --ttft 20 --shift 5 --judge auto|cli|engine --no-server --no-sim
//          --repeat N (each run as `run --repeat N`, requests / N a repetition, so drift between
//          repetitions is in the interval) --details (a line per comparison) --keep (keep the run
//          files; their folder is printed)
// Exit code 1 when a target is missed.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { COMPARE_STATS, compareRuns, LATENCY_METRICS } from '../src/engine/analysis/compare';
import type { CompareOptions, CompareRow, LatencyMetric, RowKey } from '../src/engine/analysis/compare';
import { applyGate, parseGate } from '../src/engine/analysis/compareGate';
import { Rng } from '../src/engine/core/random';
import { gapsOf, percentile } from '../src/engine/core/stats';
import type { RequestRecord, RunFile } from '../src/engine/core/types';
import type { ScriptedRequestLog, ScriptedServerProcess } from '../test/support/scriptedServer';
import { startStepServerProcess } from '../test/support/stepServer';

const CLI = join(__dirname, '..', 'dist', 'cli.js');
const GATE = '2%';

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i !== -1 && process.argv[i + 1] !== undefined ? process.argv[i + 1]! : fallback;
}
const flag = (name: string): boolean => process.argv.includes(`--${name}`);

interface BenchOptions {
  readonly aa: number;
  readonly ab: number;
  readonly simAa: number;
  readonly simAb: number;
  readonly simResamples: number;
  readonly requests: number;
  readonly concurrency: number;
  readonly maxTokens: number;
  readonly stepMs: number;
  readonly ttftMs: number;
  readonly shiftPct: number;
  readonly judge: 'auto' | 'cli' | 'engine';
  readonly server: boolean;
  readonly sim: boolean;
  readonly keep: boolean;
  /** Each run as `run --repeat N` of requests / N requests. */
  readonly repeat: number;
  readonly details: boolean;
}

function readOptions(): BenchOptions {
  const quick = flag('quick');
  const judge = arg('judge', 'auto');
  if (judge !== 'auto' && judge !== 'cli' && judge !== 'engine') throw new Error(`--judge must be auto, cli or engine (got ${judge})`);
  return {
    aa: Number(arg('aa', quick ? '8' : '40')),
    ab: Number(arg('ab', quick ? '4' : '20')),
    simAa: Number(arg('sim-aa', quick ? '200' : '1000')),
    simAb: Number(arg('sim-ab', quick ? '100' : '500')),
    simResamples: Number(arg('sim-resamples', '1000')),
    requests: Number(arg('requests', '100')),
    concurrency: Number(arg('concurrency', '16')),
    maxTokens: Number(arg('max-tokens', '32')),
    stepMs: Number(arg('step', '10')),
    ttftMs: Number(arg('ttft', '20')),
    shiftPct: Number(arg('shift', '5')),
    judge,
    server: !flag('no-server'),
    sim: !flag('no-sim'),
    keep: flag('keep'),
    repeat: Number(arg('repeat', '1')),
    details: flag('details'),
  };
}

// ---------------------------------------------------------------------------------------------
// Figures, truths and what a comparison says

/** Figures by row, ms: a run's server-side figures, or a true difference NEW − BASE. */
type Figures = Partial<Record<RowKey, number>>;

/** p50, p90, p99 and the mean of each latency metric's values (numpy-linear percentiles, as the engine). */
function figuresOf(values: Readonly<Record<LatencyMetric, readonly number[]>>): Figures {
  const out: Figures = {};
  for (const m of LATENCY_METRICS) {
    const sorted = Float64Array.from(values[m]).sort();
    for (const stat of COMPARE_STATS) {
      out[`${m}.${stat}`] = stat === 'mean' ? sorted.reduce((s, v) => s + v, 0) / sorted.length : percentile(sorted, Number(stat.slice(1)));
    }
  }
  return out;
}

function minus(a: Figures, b: Figures): Figures {
  const out: Figures = {};
  for (const k of Object.keys(a) as RowKey[]) if (a[k] !== undefined && b[k] !== undefined) out[k] = a[k] - b[k];
  return out;
}

/** One comparison's outcome: the gate's exit code (0 pass, 1 regression) and the rows. */
interface Judged {
  readonly gateExit: number;
  readonly rows: readonly CompareRow[];
}

interface Case {
  readonly judged: Judged;
  /** The true difference of the latency rows (server-side, or the simulation population's). */
  readonly truth: Figures;
  /** The nominal difference of TPOT p50 and mean (stepMs × shift). */
  readonly nominal?: Figures;
  /** BASE's server-side figures, for differences in %. */
  readonly base?: Figures;
  readonly label?: string;
}

const rowOf = (j: Judged, key: RowKey): CompareRow | undefined => j.rows.find((r) => r.key === key);
const anySlower = (j: Judged): boolean => j.rows.some((r) => r.verdict === 'slower');
const called = (j: Judged, key: RowKey, verdict: CompareRow['verdict']): boolean => rowOf(j, key)?.verdict === verdict;
const covers = (row: CompareRow | undefined, value: number | undefined): boolean => value !== undefined && row?.ci !== undefined && row.ci[0] <= value && value <= row.ci[1];
/** A row called slower although its true difference is below zero: the wrong direction. */
const wrongWay = (c: Case): boolean => c.judged.rows.some((r) => r.verdict === 'slower' && (c.truth[r.key] ?? 0) < 0);

// ---------------------------------------------------------------------------------------------
// Rates and their printing

interface Target {
  readonly text: string;
  readonly ok: (share: number, hits: number) => boolean;
}

interface Rate {
  readonly label: string;
  readonly hits: number;
  readonly n: number;
  readonly target?: Target;
}

const atMost = (pct: number): Target => ({ text: `≤ ${pct}%`, ok: (s) => s <= pct / 100 + 1e-12 });
const atLeast = (pct: number): Target => ({ text: `≥ ${pct}%`, ok: (s) => s >= pct / 100 - 1e-12 });
const never: Target = { text: '0', ok: (_s, hits) => hits === 0 };

function rate(label: string, cases: readonly Case[], test: (c: Case) => boolean, target?: Target): Rate {
  return { label, hits: cases.filter(test).length, n: cases.length, ...(target ? { target } : {}) };
}

/** Coverage over every (case, latency row with an interval and a known truth). */
function rowsCoverage(label: string, cases: readonly Case[]): Rate {
  let hits = 0;
  let n = 0;
  for (const c of cases) {
    for (const r of c.judged.rows) {
      if (r.metric === 'throughput' || r.ci === undefined || c.truth[r.key] === undefined) continue;
      n++;
      if (covers(r, c.truth[r.key])) hits++;
    }
  }
  return { label, hits, n };
}

function printRates(title: string, rates: readonly Rate[]): boolean {
  console.log(`\n${title}`);
  const w = Math.max(...rates.map((r) => r.label.length));
  let allOk = true;
  for (const r of rates) {
    const share = r.n > 0 ? r.hits / r.n : Number.NaN;
    const figure = `${r.hits}/${r.n} = ${(share * 100).toFixed(1)}%`;
    let verdict = '';
    if (r.target) {
      const ok = r.n > 0 && r.target.ok(share, r.hits);
      allOk &&= ok;
      verdict = `target ${r.target.text}`.padEnd(14) + (ok ? 'PASS' : 'FAIL');
    }
    console.log(`  ${r.label.padEnd(w)}  ${figure.padEnd(20)}${verdict}`);
  }
  return allOk;
}

/** Rows picked in these comparisons, most often first. */
function printRowCounts(title: string, cases: readonly Case[], pick: (r: CompareRow, c: Case) => boolean): void {
  const counts = new Map<string, number>();
  for (const c of cases) for (const r of c.judged.rows) if (pick(r, c)) counts.set(r.key, (counts.get(r.key) ?? 0) + 1);
  const list = [...counts.entries()].sort((a, b) => b[1] - a[1]).map(([k, n]) => `${k} ${n}`);
  console.log(`  ${title} (of ${cases.length}): ${list.length ? list.join(', ') : 'none'}`);
}

const GATE_SPEC = parseGate(GATE);
function gateFails(c: Case, key: RowKey): boolean {
  const comparison = { rows: c.judged.rows } as unknown as Parameters<typeof applyGate>[0];
  return applyGate(comparison, GATE_SPEC).results.some((r) => r.key === key && r.outcome === 'fail');
}

interface Family {
  readonly aa: readonly Case[];
  readonly slower: readonly Case[];
  readonly faster: readonly Case[];
}

/** The rates of one family (server or simulation); true when every target is met. `power`: whether the power and "never slower" targets apply. */
function report(title: string, f: Family, truthName: string, power: boolean, details = false): boolean {
  const ab = [...f.slower, ...f.faster];
  const rates: Rate[] = [
    rate(`A/A: gate ${GATE} fails`, f.aa, (c) => c.judged.gateExit === 1, atMost(5)),
    rate('A/A: any row called slower', f.aa, (c) => anySlower(c.judged)),
    rate('A/B +5%: TPOT p50 called slower', f.slower, (c) => called(c.judged, 'tpot.p50', 'slower'), power ? atLeast(90) : undefined),
    rate('A/B +5%: TPOT mean called slower', f.slower, (c) => called(c.judged, 'tpot.mean', 'slower'), power ? atLeast(90) : undefined),
    rate(`A/B +5%: gate ${GATE} fails`, f.slower, (c) => c.judged.gateExit === 1),
    rate('A/B −5%: any row called slower', f.faster, (c) => anySlower(c.judged), power ? never : undefined),
    rate(`A/B −5%: a row called slower whose ${truthName} is < 0`, f.faster, wrongWay, never),
    rate(`A/B −5%: gate ${GATE} fails`, f.faster, (c) => c.judged.gateExit === 1),
    rate('A/B −5%: TPOT p50 called faster', f.faster, (c) => called(c.judged, 'tpot.p50', 'faster')),
    rate(`A/B: TPOT p50 CI (ms) covers the ${truthName}`, ab, (c) => covers(rowOf(c.judged, 'tpot.p50'), c.truth['tpot.p50']), atLeast(90)),
    rate(`A/B: TPOT mean CI (ms) covers the ${truthName}`, ab, (c) => covers(rowOf(c.judged, 'tpot.mean'), c.truth['tpot.mean']), atLeast(90)),
  ];
  if (ab.some((c) => c.nominal)) {
    rates.push(
      rate('A/B: TPOT p50 CI (ms) covers the nominal difference', ab, (c) => covers(rowOf(c.judged, 'tpot.p50'), c.nominal?.['tpot.p50'])),
      rate('A/B: TPOT mean CI (ms) covers the nominal difference', ab, (c) => covers(rowOf(c.judged, 'tpot.mean'), c.nominal?.['tpot.mean'])),
    );
  }
  if (f.aa.some((c) => c.base)) {
    // a gate failure on a row whose figure the server itself did not make worse by the gate's margin: the client's doing, or noise
    const threshold = Number.parseFloat(GATE);
    const unfounded = (c: Case): boolean => c.judged.rows.some((r) => gateFails(c, r.key) && r.metric !== 'throughput' && (pctOf(c, r.key) ?? Number.NaN) <= threshold);
    rates.push(rate(`A/A: gate fails on a row the server did not run ${GATE} slower`, f.aa, unfounded));
  }
  rates.push(rowsCoverage(`A/A: every latency row's CI covers the ${truthName}`, f.aa), rowsCoverage(`A/B: every latency row's CI covers the ${truthName}`, ab));
  const ok = printRates(title, rates);
  printRowCounts('A/A, rows failing the gate', f.aa, (r, c) => gateFails(c, r.key));
  printRowCounts('A/A, rows called slower', f.aa, (r) => r.verdict === 'slower');
  printRowCounts(`A/A, rows called slower whose ${truthName} is ≤ 0`, f.aa, (r, c) => r.verdict === 'slower' && (c.truth[r.key] ?? Number.NaN) <= 0);
  printRowCounts('A/B −5%, rows called slower', f.faster, (r) => r.verdict === 'slower');
  printDrift(f.aa);
  if (details) printDetails([...f.aa, ...f.slower, ...f.faster]);
  return ok;
}

const DRIFT_ROWS: readonly RowKey[] = ['ttft.p50', 'ttft.p90', 'tpot.p50', 'tpot.mean', 'itl.p99', 'e2e.p50'];

const pctOf = (c: Case, key: RowKey): number | undefined => {
  const d = c.truth[key];
  const b = c.base?.[key];
  return d !== undefined && b !== undefined && b > 0 ? (d / b) * 100 : undefined;
};

/**
 * A/A: how far apart the server's own figures of two runs of one configuration were (drift between
 * runs: a busy machine, timers), beside the half-width of the interval compare gave (the noise
 * within a run). Drift wider than the intervals is what a single run a side cannot hold.
 */
function printDrift(aa: readonly Case[]): void {
  if (!aa.some((c) => c.base)) return;
  const q = (xs: number[], p: number): string => percentile(Float64Array.from(xs).sort(), p).toFixed(2);
  console.log(`  A/A, the server's own figures apart, |Δ| % (median, p90, max), beside the interval's half-width % (median):`);
  for (const key of DRIFT_ROWS) {
    const apart = aa.map((c) => Math.abs(pctOf(c, key) ?? Number.NaN)).filter(Number.isFinite);
    const half = aa.map((c) => rowOf(c.judged, key)?.ciPct).filter((ci) => ci !== undefined).map((ci) => (ci[1] - ci[0]) / 2);
    if (apart.length === 0) continue;
    console.log(`    ${key.padEnd(10)} ${q(apart, 50)}, ${q(apart, 90)}, ${q(apart, 100)}  half-width ${half.length ? q(half, 50) : '–'}`);
  }
  const beyond = aa.filter((c) => DRIFT_ROWS.some((k) => Math.abs(pctOf(c, k) ?? 0) > Number.parseFloat(GATE))).length;
  console.log(`  A/A with a server-side figure more than ${GATE} apart: ${beyond}/${aa.length}`);
}

function printDetails(cases: readonly Case[]): void {
  const f = (v: number | undefined, digits = 2): string => (v === undefined ? '–' : `${v >= 0 ? '+' : ''}${v.toFixed(digits)}`);
  for (const c of cases) {
    const tpot = rowOf(c.judged, 'tpot.p50');
    const slow = c.judged.rows.filter((r) => r.verdict === 'slower').map((r) => `${r.key} ${f(r.diffPct, 1)}% (server ${f(pctOf(c, r.key), 1)}%)`);
    console.log(`    ${(c.label ?? '').padEnd(8)} exit ${c.judged.gateExit}  TPOT p50 Δ ${f(tpot?.diff)} ms [${f(tpot?.ci?.[0])}, ${f(tpot?.ci?.[1])}] server ${f(c.truth['tpot.p50'])} ${tpot?.verdict ?? ''}; slower: ${slow.join(', ') || 'none'}`);
  }
}

// ---------------------------------------------------------------------------------------------
// Judging: the CLI's compare, or the engine's

function runProcess(args: readonly string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

async function cliHasCompare(): Promise<boolean> {
  return (await runProcess([CLI, 'compare', '--help'])).code === 0;
}

/** The comparison's rows in the CLI's --json output (at its top level or under `comparison`). */
function rowsOfJson(json: unknown): readonly CompareRow[] | undefined {
  const o = json as { rows?: CompareRow[]; comparison?: { rows?: CompareRow[] } };
  return o.rows ?? o.comparison?.rows;
}

async function judgeCli(baseFile: string, nextFile: string): Promise<Judged> {
  const r = await runProcess([CLI, 'compare', baseFile, nextFile, '--fail-on-regression', GATE, '--json']);
  if (r.code !== 0 && r.code !== 1) throw new Error(`compare exited ${r.code}:\n${r.stderr}`);
  const rows = rowsOfJson(JSON.parse(r.stdout));
  if (!rows) throw new Error(`compare --json printed no rows:\n${r.stdout.slice(0, 400)}`);
  return { gateExit: r.code, rows };
}

function judgeEngine(base: RunFile, next: RunFile, options: Omit<CompareOptions, 'paired'> = {}): Judged {
  const comparison = compareRuns(base, next, options);
  const { results } = applyGate(comparison, GATE_SPEC);
  return { gateExit: results.some((r) => r.outcome === 'fail') ? 1 : 0, rows: comparison.rows };
}

const readRun = (file: string): RunFile => JSON.parse(readFileSync(file, 'utf8')) as RunFile;

// ---------------------------------------------------------------------------------------------
// Part 1: step servers and the real CLI

type Kind = 'a1' | 'a2' | 'slow' | 'fast';

interface MeasuredRun {
  readonly file: string;
  /** The run's figures by the server's clock, over its measured requests. */
  readonly server: Figures;
  readonly ms: number;
}

/** A run's figures from the server's own log of its measured requests (matched by stream id). */
function serverFigures(run: RunFile, log: readonly ScriptedRequestLog[]): Figures {
  const measured = run.requests.filter((r: RequestRecord) => !r.warmup && r.error === undefined);
  const byId = new Map(log.map((e) => [e.streamId, e]));
  const values: Record<LatencyMetric, number[]> = { ttft: [], tpot: [], itl: [], e2e: [] };
  for (const r of measured) {
    const entry = r.responseId !== undefined ? byId.get(r.responseId) : undefined;
    if (!entry) throw new Error(`request ${r.index} (${r.responseId}) is not in the server's log`);
    const tokens = entry.writes.filter((w) => w.kind === 'content').map((w) => w.at);
    const first = tokens[0]!;
    const last = tokens[tokens.length - 1]!;
    values.ttft.push(first - entry.receivedAt);
    values.e2e.push(last - entry.receivedAt);
    if (tokens.length > 1) values.tpot.push((last - first) / (tokens.length - 1));
    values.itl.push(...gapsOf(tokens));
  }
  return figuresOf(values);
}

async function produceRun(server: ScriptedServerProcess, file: string, o: BenchOptions): Promise<MeasuredRun> {
  await server.clearLog();
  const t0 = performance.now();
  const load = o.repeat > 1 ? ['--repeat', String(o.repeat), '--requests', String(Math.round(o.requests / o.repeat))] : ['--requests', String(o.requests)];
  const r = await runProcess([CLI, 'run', '--url', server.url, ...load, '--concurrency', String(o.concurrency), '--max-tokens', String(o.maxTokens), '--out', file]);
  const ms = performance.now() - t0;
  if (r.code !== 0) throw new Error(`run exited ${r.code}:\n${r.stderr}`);
  return { file, server: serverFigures(readRun(file), await server.fetchLog()), ms };
}

/** Every round's runs, its kinds in rotated order, by kind and round ("slow3"). */
async function makeRuns(o: BenchOptions, servers: Record<Kind, ScriptedServerProcess>, dir: string): Promise<Map<string, MeasuredRun>> {
  const runs = new Map<string, MeasuredRun>();
  const rounds = Math.max(o.aa, o.ab);
  const t0 = performance.now();
  for (let round = 0; round < rounds; round++) {
    const kinds: Kind[] = round < o.ab ? ['a1', 'slow', 'a2', 'fast'] : ['a1', 'a2'];
    const order = kinds.map((_, i) => kinds[(i + round) % kinds.length]!);
    for (const kind of order) runs.set(`${kind}${round}`, await produceRun(servers[kind], join(dir, `${kind}-${round}.run.json`), o));
    process.stderr.write(`\r  runs: round ${round + 1}/${rounds}, ${runs.size} runs, ${((performance.now() - t0) / 1000).toFixed(0)} s   `);
  }
  process.stderr.write('\n');
  return runs;
}

async function judgeRounds(o: BenchOptions, runs: Map<string, MeasuredRun>, useCli: boolean): Promise<Family> {
  const judge = (a: MeasuredRun, b: MeasuredRun): Promise<Judged> | Judged => (useCli ? judgeCli(a.file, b.file) : judgeEngine(readRun(a.file), readRun(b.file)));
  const nominal = (sign: number): Figures => {
    const d = (sign * o.stepMs * o.shiftPct) / 100;
    return { 'tpot.p50': d, 'tpot.mean': d };
  };
  const aa: Case[] = [];
  const slower: Case[] = [];
  const faster: Case[] = [];
  const rounds = Math.max(o.aa, o.ab);
  for (let round = 0; round < rounds; round++) {
    const a1 = runs.get(`a1${round}`)!;
    const a2 = runs.get(`a2${round}`)!;
    if (round < o.aa) aa.push({ judged: await judge(a1, a2), truth: minus(a2.server, a1.server), base: a1.server, label: `A/A ${round}` });
    if (round < o.ab) {
      const s = runs.get(`slow${round}`)!;
      const f = runs.get(`fast${round}`)!;
      slower.push({ judged: await judge(a1, s), truth: minus(s.server, a1.server), nominal: nominal(1), base: a1.server, label: `+${o.shiftPct}% ${round}` });
      faster.push({ judged: await judge(a2, f), truth: minus(f.server, a2.server), nominal: nominal(-1), base: a2.server, label: `−${o.shiftPct}% ${round}` });
    }
    process.stderr.write(`\r  comparisons: round ${round + 1}/${rounds}   `);
  }
  process.stderr.write('\n');
  return { aa, slower, faster };
}

interface ServerPart extends Family {
  readonly runMs: number[];
  readonly judgedBy: 'cli' | 'engine';
}

async function serverPart(o: BenchOptions): Promise<ServerPart> {
  const stepOf = { a: o.stepMs, slow: o.stepMs * (1 + o.shiftPct / 100), fast: o.stepMs * (1 - o.shiftPct / 100) };
  const [base, slow, fast] = await Promise.all([stepOf.a, stepOf.slow, stepOf.fast].map((stepMs) => startStepServerProcess({ stepMs, ttftMs: o.ttftMs })));
  const servers: Record<Kind, ScriptedServerProcess> = { a1: base!, a2: base!, slow: slow!, fast: fast! };
  const dir = mkdtempSync(join(tmpdir(), 'llmp-bench-compare-'));
  try {
    const runs = await makeRuns(o, servers, dir);
    const useCli = o.judge === 'cli' || (o.judge === 'auto' && (await cliHasCompare()));
    const family = await judgeRounds(o, runs, useCli);
    return { ...family, runMs: [...runs.values()].map((r) => r.ms), judgedBy: useCli ? 'cli' : 'engine' };
  } finally {
    await Promise.all([base!, slow!, fast!].map((s) => s.close()));
    if (o.keep) console.log(`run files kept in ${dir}`);
    else rmSync(dir, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------------------------
// Part 2: simulation (known distributions, no server)

interface SimModel {
  readonly requests: number;
  readonly concurrency: number;
  readonly tokens: number;
  readonly ttftMedianMs: number;
  readonly ttftSigma: number;
  readonly tpotMs: number;
  /** Spread of a request's own TPOT around tpotMs (lognormal sigma). */
  readonly tpotSigma: number;
  /** Jitter of each gap around its request's TPOT (lognormal sigma, mean 1). */
  readonly gapSigma: number;
}

const SIM: SimModel = { requests: 100, concurrency: 16, tokens: 32, ttftMedianMs: 50, ttftSigma: 0.3, tpotMs: 10, tpotSigma: 0.08, gapSigma: 0.25 };

/** One request's token times (ms after it was sent), its TPOT scaled by `scale`. */
function simChunkTimes(rng: Rng, m: SimModel, scale: number): number[] {
  const ttft = m.ttftMedianMs * Math.exp(m.ttftSigma * rng.normal());
  const tpot = m.tpotMs * scale * Math.exp(m.tpotSigma * rng.normal());
  const times = [ttft];
  for (let k = 1; k < m.tokens; k++) times.push(times[k - 1]! + tpot * Math.exp(m.gapSigma * rng.normal() - (m.gapSigma * m.gapSigma) / 2));
  return times;
}

/** `n` requests of a closed loop of m.concurrency: each sent when a slot frees (compare cuts a run into blocks by send time). */
function simRequests(rng: Rng, m: SimModel, scale: number, n: number): RequestRecord[] {
  const requests: RequestRecord[] = [];
  const freeAt = new Array<number>(m.concurrency).fill(0);
  for (let i = 0; i < n; i++) {
    const slot = freeAt.indexOf(Math.min(...freeAt));
    const sentAt = freeAt[slot]!;
    const chunkTimesMs = simChunkTimes(rng, m, scale);
    const ttftMs = chunkTimesMs[0]!;
    const e2eMs = chunkTimesMs[chunkTimesMs.length - 1]!;
    freeAt[slot] = sentAt + e2eMs;
    requests.push({ index: i, warmup: false, scheduledAt: sentAt, sentAt, ttftMs, e2eMs, outputTokens: m.tokens, tokenSource: 'chunks', chunkTimesMs, tpotMs: (e2eMs - ttftMs) / (m.tokens - 1) });
  }
  return requests;
}

/** What compare reads of a run: its requests, id, start and duration. */
function simRun(rng: Rng, m: SimModel, scale: number, id: string): RunFile {
  const requests = simRequests(rng, m, scale, m.requests);
  const durationS = Math.max(...requests.map((r) => r.sentAt + r.e2eMs!)) / 1000;
  return { id, startedAt: new Date(0).toISOString(), requests, summary: { durationS } } as unknown as RunFile;
}

/** The population's figures at a TPOT scale, from a large draw (the same seed at every scale, so TTFT is the same and TPOT and ITL scale exactly). */
function simPopulation(m: SimModel, scale: number, n: number): Figures {
  const rs = simRequests(new Rng(987_654_321), m, scale, n);
  return figuresOf({ ttft: rs.map((r) => r.ttftMs!), tpot: rs.map((r) => r.tpotMs!), itl: rs.flatMap((r) => gapsOf(r.chunkTimesMs)), e2e: rs.map((r) => r.e2eMs!) });
}

interface SimPart extends Family {
  readonly population: Figures;
}

function simPart(o: BenchOptions): SimPart {
  const rng = new Rng(29);
  const shift = o.shiftPct / 100;
  const population = simPopulation(SIM, 1, 100_000);
  const slowTruth = minus(simPopulation(SIM, 1 + shift, 100_000), population);
  const fastTruth = minus(simPopulation(SIM, 1 - shift, 100_000), population);
  const zero = minus(population, population);
  const judge = (a: RunFile, b: RunFile): Judged => judgeEngine(a, b, { resamples: o.simResamples });
  const aa: Case[] = [];
  const slower: Case[] = [];
  const faster: Case[] = [];
  const total = o.simAa + 2 * o.simAb;
  for (let i = 0; i < total; i++) {
    const base = simRun(rng, SIM, 1, `sim-base-${i}`);
    if (i < o.simAa) aa.push({ judged: judge(base, simRun(rng, SIM, 1, `sim-next-${i}`)), truth: zero });
    else if (i < o.simAa + o.simAb) slower.push({ judged: judge(base, simRun(rng, SIM, 1 + shift, `sim-slow-${i}`)), truth: slowTruth });
    else faster.push({ judged: judge(base, simRun(rng, SIM, 1 - shift, `sim-fast-${i}`)), truth: fastTruth });
    if (i % 50 === 49) process.stderr.write(`\r  simulated comparisons: ${i + 1}/${total}   `);
  }
  process.stderr.write('\n');
  return { aa, slower, faster, population };
}

// ---------------------------------------------------------------------------------------------

async function runServerPart(o: BenchOptions): Promise<boolean> {
  console.log(`\nStep servers (own processes), ttft ${o.ttftMs} ms, step ${o.stepMs} ms (A), ×${1 + o.shiftPct / 100} (SLOW), ×${1 - o.shiftPct / 100} (FAST); ` +
    `each run: node dist/cli.js run ${o.repeat > 1 ? `--repeat ${o.repeat} --requests ${Math.round(o.requests / o.repeat)}` : `--requests ${o.requests}`} --concurrency ${o.concurrency} --max-tokens ${o.maxTokens}; ${o.aa} A/A, ${o.ab} A/B each way`);
  const t = performance.now();
  const s = await serverPart(o);
  const median = percentile(Float64Array.from(s.runMs).sort(), 50) / 1000;
  const by = s.judgedBy === 'cli' ? `the CLI (compare --fail-on-regression ${GATE} --json)` : `the engine (compareRuns + applyGate ${GATE}; the CLI has no compare)`;
  console.log(`  ${s.runMs.length} runs of ${median.toFixed(2)} s (median), judged by ${by}; ${((performance.now() - t) / 1000).toFixed(0)} s`);
  const ok = report('Against the step servers (true difference: the server-side figures\' difference)', s, 'server-side difference', true, o.details);
  console.log(`  load average now ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  return ok;
}

function runSimPart(o: BenchOptions): boolean {
  const t = performance.now();
  const m = simPart(o);
  console.log(`\nSimulation: ${SIM.requests} requests a run (a closed loop of ${SIM.concurrency}) of ${SIM.tokens} tokens, TTFT lognormal (median ${SIM.ttftMedianMs} ms, σ ${SIM.ttftSigma}), ` +
    `TPOT ${SIM.tpotMs} ms × lognormal σ ${SIM.tpotSigma} per request, gaps × lognormal σ ${SIM.gapSigma}; population TPOT p50 ${m.population['tpot.p50']!.toFixed(3)} ms, ` +
    `mean ${m.population['tpot.mean']!.toFixed(3)} ms; ${o.simAa} A/A, ${o.simAb} A/B each way (TPOT and ITL ±${o.shiftPct}%, TTFT unchanged); ` +
    `the engine with ${o.simResamples} resamples; ${((performance.now() - t) / 1000).toFixed(0)} s`);
  return report('Simulation (true difference: the population\'s)', m, 'true difference', false);
}

async function main(): Promise<number> {
  const o = readOptions();
  const t0 = performance.now();
  console.log(`bench:compare on ${cpus().length} × ${cpus()[0]?.model ?? 'CPU'}, load ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  let ok = true;
  if (o.server) ok = (await runServerPart(o)) && ok;
  if (o.sim) ok = runSimPart(o) && ok;
  console.log(`\n${ok ? 'every target met' : 'some target missed'}; wall time ${((performance.now() - t0) / 1000).toFixed(0)} s`);
  return ok ? 0 : 1;
}

main().then((code) => process.exit(code), (e: unknown) => {
  console.error(e instanceof Error ? (e.stack ?? e.message) : String(e));
  process.exit(1);
});
