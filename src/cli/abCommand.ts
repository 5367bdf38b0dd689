// `llm-profiler ab --url A [--url B] [--model MA [--model MB]] [options]`: the same workload on two
// sides in alternating blocks in one process (src/jobs/ab.ts), then the comparison `compare` prints
// (B against A, the blocks paired), its gate and exit code (compareOutput.ts). --out-dir keeps both
// run files. Ctrl+C stops, keeps what finished on both sides and compares that. Sides that differ in
// their response format or tools (given twice) are named with them, and a line after the table says
// what sending them costs in TTFT and TPOT.
import { join } from 'node:path';
import { comparability } from '../engine/analysis/comparable';
import { compareRuns } from '../engine/analysis/compare';
import type { Comparison } from '../engine/analysis/compare';
import { displayUrl, scrubRun, secretsOf } from '../engine/core/redact';
import type { ScrubbedRun } from '../engine/core/redact';
import { TOOL_VERSION } from '../engine/core/runFormat';
import type { NetworkSpec, RunFile } from '../engine/core/types';
import { insecureWarning, proxyFor, shownProxy } from '../engine/transport/connections';
import { buildAbJob, executeAbJob } from '../jobs/ab';
import type { AbHooks } from '../jobs/ab';
import type { AbSideName } from '../engine/run/abRun';
import { UsageError } from '../jobs/errors';
import { networkSecrets } from '../jobs/networkSpec';
import type { OptionValues } from '../jobs/values';
import { endpointText } from '../present/endpointText';
import { structuredCostLine, structuredDifference, structuredSide, structuredText } from '../present/toolText';
import { formatProgressLine, summaryText } from '../present/runText';
import { checkComparisonOptions, reportComparison } from './compareOutput';
import { EXIT, processIo } from './io';
import type { CliIo } from './io';
import { apiKeyFrom, catchInterrupt, checkOut, LiveLine, networkFrom, Printer, writeOut } from './jobCommand';
import { parseCommandLine } from './parse';
import { usage } from './usage';

const SIDES: readonly AbSideName[] = ['A', 'B'];
/** The run files --out-dir holds, A's then B's. */
const OUT_NAMES = ['a.run.json', 'b.run.json'] as const;

/** Each side's key and network, from --api-key-env (once for both, or A's then B's) and the network options. */
function sideHooks(v: OptionValues, io: CliIo): readonly [{ apiKey?: string; network?: NetworkSpec }, { apiKey?: string; network?: NetworkSpec }] {
  const urls = v.sides('url');
  const keys = v.sides('apiKeyEnv');
  const side = (i: number) => {
    const apiKey = apiKeyFrom(v, io, keys[i] ?? keys[0]);
    const network = networkFrom(v, io, urls[i] ?? urls[0]);
    return { ...(apiKey !== undefined ? { apiKey } : {}), ...(network !== undefined ? { network } : {}) };
  };
  return [side(0), side(1)];
}

/** What the sides are called in the comparison: "A (http://h:8000, model-x)"; with `sent`, what it sends with ("…; response format JSON"). */
function sideName(side: AbSideName, run: RunFile, sent?: string): string {
  return `${side} (${displayUrl(run.endpoint.url)}${run.endpoint.model ? `, ${run.endpoint.model}` : ''}${sent !== undefined ? `; ${sent}` : ''})`;
}

/** Sides that differ in their response format or tools: the line saying what sending them costs (undefined when both send some), to stdout after the text table, else to stderr. */
function costLine(a: RunFile, b: RunFile, comparison: Comparison, what: string | undefined): string | undefined {
  const withSide = what !== undefined ? structuredSide(a.workload, b.workload) : undefined;
  return what !== undefined && withSide !== undefined ? structuredCostLine(comparison, what, withSide) : undefined;
}

/** Says, before anything is sent, how each side's URL is reached when that is worth knowing (a proxy, no TLS check). */
function networkNotes(v: OptionValues, sides: ReturnType<typeof sideHooks>, err: (line: string) => void): void {
  const urls = v.sides('url');
  SIDES.forEach((name, i) => {
    const url = urls[i] ?? urls[0]!;
    if (i === 1 && urls.length < 2) return; // one URL: said once
    const network = sides[i]!.network;
    const via = proxyFor(url, network);
    const who = urls.length > 1 ? `${name}: ` : '';
    if (via !== undefined) err(`${who}via proxy ${shownProxy(via)} (from ${network?.proxySource ?? 'the environment'}): connecting and the tunnel are timed apart from TTFT, but every byte passes the proxy`);
    const insecure = insecureWarning(url, network);
    if (insecure !== undefined) err(`${who}warning: ${insecure}`);
  });
}

/** --out-dir, checked before anything is measured: a folder, and neither run file's path a link or a folder. */
async function checkOutDir(dir: string | undefined, io: CliIo): Promise<void> {
  if (dir === undefined) return;
  for (const name of OUT_NAMES) await checkOut(join(dir, name), io, '--out-dir');
}

function hooksFor(live: LiveLine, printer: Printer, sides: ReturnType<typeof sideHooks>, signal: AbortSignal): AbHooks {
  return {
    sides,
    signal,
    onStart: ({ skeleton }, side) => printer.err(`llm-profiler: ${side}: ${endpointText(skeleton.endpoint)}\n`),
    ...(live.enabled ? { onProgress: (p) => live.show(formatProgressLine(p)) } : {}),
  };
}

/** The exit code: interrupted first, then the comparison's (a regression, a gate that cannot judge), then failed requests. */
function exitCode(runs: readonly RunFile[], compared: number, err: (line: string) => void): number {
  if (runs.some((r) => r.cancelled)) return EXIT.interrupted;
  if (compared !== EXIT.ok) return compared;
  const failing = runs.map((r, i) => (r.summary.failed > 0 ? `${SIDES[i]} ${r.summary.failed}` : '')).filter(Boolean);
  if (failing.length === 0) return EXIT.ok;
  err(`failed requests: ${failing.join(', ')} (only those that succeeded are compared)`);
  return EXIT.failed;
}

/** Runs `llm-profiler ab` with argv (after the command); resolves with the exit code. Never rejects. */
export async function abCommand(argv: readonly string[], io: CliIo = processIo()): Promise<number> {
  const printer = new Printer(io);
  const err = (line: string) => printer.err(`llm-profiler: ${line}\n`);
  let v: OptionValues;
  try {
    v = parseCommandLine('ab', argv);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    err(`ab: ${e.message}`);
    io.stderr.write('Try: llm-profiler ab --help\n');
    return EXIT.usage;
  }
  if (v.flag('help')) {
    printer.out(usage('ab'));
    return EXIT.ok;
  }
  if (v.flag('version')) {
    io.stdout.write(`${TOOL_VERSION}\n`);
    return EXIT.ok;
  }
  const live = new LiveLine(printer, io.stderr.isTTY === true && !v.flag('json'));
  const interrupt = catchInterrupt(live, err, 'keeping what finished on both sides');
  try {
    await checkComparisonOptions(v, io.cwd);
    const outDir = v.str('outDir');
    await checkOutDir(outDir, io);
    const sides = sideHooks(v, io);
    printer.know(sides.flatMap((s, i) => [...secretsOf({ url: v.sides('url')[i] ?? v.sides('url')[0] }, s.apiKey), ...networkSecrets(s.network, io.env)]));
    networkNotes(v, sides, err);
    const { job, warnings } = await buildAbJob(v, { cwd: io.cwd, env: io.env });
    for (const w of warnings) err(`warning: ${w}`);
    const perBlock = (job.workload.requests ?? 0) / job.blocks;
    err(`A and B take turns: ${job.blocks} blocks of ${perBlock} requests a side (AB BA AB …)`);
    if (job.workloads) err(`A sends every request with ${structuredText(job.workloads[0])}; B with ${structuredText(job.workloads[1])}`);
    const result = await executeAbJob(job, hooksFor(live, printer, sides, interrupt.signal));
    live.stop();
    // what is printed and written is the scrubbed run: a server may have echoed a secret as its model name
    const runs: ScrubbedRun[] = [scrubRun(result.a, printer.scrubber), scrubRun(result.b, printer.scrubber)];
    const [a, b] = runs as [ScrubbedRun, ScrubbedRun];
    for (const [i, run] of runs.entries()) err(`${SIDES[i]}: ${summaryText(run)}`);
    // the run files first: a measurement is never lost to what comes after it
    let written = true;
    if (outDir !== undefined) {
      for (const [i, run] of runs.entries()) written = (await writeOut(join(outDir, OUT_NAMES[i]!), run, io, printer, `${SIDES[i]}'s run`)) && written;
    }
    const resamples = v.num('resamples');
    const comparison = compareRuns(a, b, { seed: v.num('seed') ?? 0, ...(resamples !== undefined ? { resamples } : {}) });
    const problems = comparability(a, b, { sameRequests: true });
    const what = structuredDifference(a.workload, b.workload);
    const [nameA, nameB] = what !== undefined ? [sideName('A', a, structuredText(a.workload)), sideName('B', b, structuredText(b.workload))] : [sideName('A', a), sideName('B', b)];
    const compared = await reportComparison(io, { baseName: nameA, nextName: nameB, comparison, problems }, v);
    const cost = costLine(a, b, comparison, what);
    if (cost !== undefined) {
      if (v.flag('json') || v.flag('markdown')) err(cost);
      else printer.out(`${cost}\n`);
    }
    const code = exitCode(runs, compared, err);
    return code === EXIT.ok && !written ? EXIT.failed : code;
  } catch (e) {
    live.stop();
    if (e instanceof UsageError) {
      err(`ab: ${e.message}`);
      return EXIT.usage;
    }
    // a side's endpoint that cannot be used (named "A: …" or "B: …"): one line, exit 1
    err((e instanceof Error ? e.message : String(e)).split('\n')[0]!);
    return EXIT.failed;
  } finally {
    interrupt.release();
  }
}
