// A comparison's output, for `compare` and `ab` alike: the text table (or --json, or --markdown, also
// appended to GitHub's step summary), the regression gate (--fail-on-regression), the JUnit report
// (--junit) and the exit code. The words are present/compareText.ts's; this file decides what goes where.
import { appendFile, lstat, stat, writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import type { Comparison, PointComparison } from '../engine/analysis/compare';
import type { ComparableProblem } from '../engine/analysis/comparable';
import { applyGate, GateSyntaxError, parseGate } from '../engine/analysis/compareGate';
import type { RegressionGate } from '../engine/analysis/compareGate';
import { printable } from '../engine/core/redact';
import { UsageError } from '../jobs/errors';
import type { OptionValues } from '../jobs/values';
import { adviceOf, comparisonJunit, comparisonMarkdown, comparisonText, rowSentence, unjudgeableText } from '../present/compareText';
import type { CompareSection, ComparisonView, GatedRow, GateOutcome } from '../present/compareText';
import { EXIT } from './io';
import type { CliIo } from './io';

export interface ComparisonReport {
  /** How the sides are named in the output: file names, or "A" and "B". */
  readonly baseName: string;
  readonly nextName: string;
  /** A single comparison, or */
  readonly comparison?: Comparison;
  /** two sweeps compared point by point. */
  readonly points?: readonly PointComparison[];
  /** What comparability() said: the 'warn' ones are printed before the figures (and 'refuse' ones, when forced). */
  readonly problems: readonly ComparableProblem[];
}

/** The change --detect sizes the advice for when it is not given. */
const DEFAULT_DETECT_PCT = 5;

/**
 * The comparison options checked before any work (reading runs, measuring an A/B): the gate's syntax,
 * --junit's folder, and --junit without a gate. Throws UsageError naming the flag; returns the gate.
 */
export async function checkComparisonOptions(v: OptionValues, cwd: string): Promise<RegressionGate | undefined> {
  const spec = v.str('failOnRegression');
  let gate: RegressionGate | undefined;
  if (spec !== undefined) {
    try {
      gate = parseGate(spec);
    } catch (e) {
      if (!(e instanceof GateSyntaxError)) throw e;
      throw new UsageError(e.message, '--fail-on-regression');
    }
  }
  const junit = v.str('junit');
  if (junit !== undefined) {
    if (!gate) throw new UsageError('--junit writes one test case per figure gated by --fail-on-regression: give --fail-on-regression too (e.g. --fail-on-regression 5%)', '--junit');
    const path = resolve(cwd, junit);
    const parent = await stat(dirname(path)).catch(() => undefined);
    if (!parent?.isDirectory()) throw new UsageError(`--junit: the folder ${dirname(path)} does not exist`, '--junit');
    const existing = await lstat(path).catch(() => undefined);
    if (existing?.isSymbolicLink()) throw new UsageError(`--junit: ${path} is a symbolic link; give the path of a regular file`, '--junit');
    if (existing?.isDirectory()) throw new UsageError(`--junit: ${path} is a folder; give a file name such as compare.xml`, '--junit');
  }
  return gate;
}

function sectionsOf(report: ComparisonReport): CompareSection[] {
  if (report.points) return report.points.map((p) => ({ label: p.label, ...(p.comparison ? { comparison: p.comparison } : {}), ...(p.missing ? { missing: p.missing } : {}) }));
  return report.comparison ? [{ comparison: report.comparison }] : [];
}

/** Every section's gated rows; a gate of every figure leaves out (skipped) those that cannot be judged. */
function gateOutcome(spec: string, gate: RegressionGate, sections: readonly CompareSection[]): GateOutcome {
  const results: GatedRow[] = [];
  const skipped: GatedRow[] = [];
  for (const s of sections) {
    if (!s.comparison) continue;
    const applied = applyGate(s.comparison, gate);
    const tag = (result: GatedRow['result']): GatedRow => {
      const row = s.comparison!.rows.find((r) => r.key === result.key);
      return { ...(s.label !== undefined ? { point: s.label } : {}), result, ...(row ? { row } : {}) };
    };
    results.push(...applied.results.map(tag));
    skipped.push(...applied.skipped.map(tag));
  }
  return { spec, results, skipped };
}

/** The exit code the gate gives: a regression shown (1) before a figure named that cannot be judged (2). */
function gateCode(gate: GateOutcome | undefined): number {
  if (!gate) return EXIT.ok;
  // EXIT.failed is the code a CI job reads as "this change is slower"
  if (gate.results.some((g) => g.result.outcome === 'fail')) return EXIT.failed;
  if (gate.results.some((g) => g.result.outcome === 'cannot-judge')) return EXIT.usage;
  return EXIT.ok;
}

/** The comparison as --json prints it: the figures, each row's sentence, the gate, the advice and the exit code. */
function jsonOf(report: ComparisonReport, view: ComparisonView, code: number): unknown {
  const withSentences = (c: Comparison) => ({ ...c, rows: c.rows.map((r) => ({ ...r, sentence: rowSentence(r) })) });
  const advice = view.sections.flatMap((s) => (s.comparison ? adviceOf(s.comparison, view.detectPct).map((a) => ({ ...(s.label !== undefined ? { point: s.label } : {}), ...a })) : []));
  const gated = (g: GatedRow) => ({ ...(g.point !== undefined ? { point: g.point } : {}), ...g.result, ...(g.result.outcome === 'cannot-judge' ? { why: unjudgeableText(g) } : {}) });
  return {
    base: report.baseName,
    next: report.nextName,
    problems: report.problems,
    ...(report.comparison ? { comparison: withSentences(report.comparison) } : {}),
    ...(report.points ? { points: report.points.map((p) => ({ ...p, ...(p.comparison ? { comparison: withSentences(p.comparison) } : {}) })) } : {}),
    ...(view.gate ? { gate: { spec: view.gate.spec, results: view.gate.results.map(gated), skipped: view.gate.skipped.map(gated) } } : {}),
    advice: { detectPct: view.detectPct, rows: advice },
    exitCode: code,
  };
}

/** Appends to a file, or says why not; true when written. */
async function writeOut(io: CliIo, what: string, path: string, text: string, append: boolean): Promise<boolean> {
  try {
    await (append ? appendFile(path, text, 'utf8') : writeFile(path, text, 'utf8'));
    return true;
  } catch (e) {
    io.stderr.write(`llm-profiler: could not write ${what} ${printable(path, true)}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}\n`);
    return false;
  }
}

/**
 * Prints the comparison (text, --json or --markdown, the Markdown also appended to the file named by
 * GITHUB_STEP_SUMMARY), applies --fail-on-regression, writes --junit, and returns the exit code:
 * 0 no gated figure regressed; 1 a gated figure is slower by more than its threshold (or a file
 * could not be written); 2 a usage error: the gate's syntax, or a figure named in it that these runs
 * cannot judge (p99 of 100 requests), said with why and what to do.
 */
export async function reportComparison(io: CliIo, report: ComparisonReport, v: OptionValues): Promise<number> {
  let gate: RegressionGate | undefined;
  try {
    gate = await checkComparisonOptions(v, io.cwd);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    io.stderr.write(`llm-profiler: ${printable(e.message, true)}\n`);
    return EXIT.usage;
  }
  const sections = sectionsOf(report);
  const outcome = gate ? gateOutcome(v.str('failOnRegression')!, gate, sections) : undefined;
  const view: ComparisonView = {
    baseName: printable(report.baseName, true),
    nextName: printable(report.nextName, true),
    problems: report.problems,
    sections,
    ...(outcome ? { gate: outcome } : {}),
    detectPct: v.num('detect') ?? DEFAULT_DETECT_PCT,
  };
  let code = gateCode(outcome);
  if (v.flag('json')) io.stdout.write(`${JSON.stringify(jsonOf(report, view, code), null, 2)}\n`);
  else if (v.flag('markdown')) {
    const md = comparisonMarkdown(view);
    io.stdout.write(md);
    const summary = io.env.GITHUB_STEP_SUMMARY;
    if (summary && !(await writeOut(io, 'the step summary', summary, `${md}\n`, true)) && code === EXIT.ok) code = EXIT.failed;
  } else io.stdout.write(printable(comparisonText(view)));
  const junit = v.str('junit');
  if (junit !== undefined && outcome) {
    const path = resolve(io.cwd, junit);
    if (await writeOut(io, 'the JUnit report', path, comparisonJunit(view, outcome), false)) io.stderr.write(`llm-profiler: JUnit report written to ${printable(path, true)}\n`);
    else if (code === EXIT.ok) code = EXIT.failed;
  }
  if (code === EXIT.usage) {
    const named = outcome!.results.filter((g) => g.result.outcome === 'cannot-judge');
    for (const g of named) io.stderr.write(`llm-profiler: --fail-on-regression names ${g.point !== undefined ? `${g.point} ` : ''}${g.result.key}, which ${printable(unjudgeableText(g), true)}\n`);
  }
  return code;
}
