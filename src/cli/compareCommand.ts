// `llm-profiler compare BASE NEW [--fail-on-regression PCT] [--json | --markdown] [--junit FILE]`: two
// run files (or other tools' results, imported as `import` imports them; or two sweeps point by point)
// compared figure by figure with a bootstrap interval and a verdict (engine/analysis/compare.ts).
// Runs that are not the same workload are refused (exit 2) unless --force; what to know first is said
// before the figures. The output and the exit code are compareOutput.ts's, shared with `ab`.
import { basename, resolve } from 'node:path';
import { comparability } from '../engine/analysis/comparable';
import { adviseSampleSize, comparePoints, compareRuns } from '../engine/analysis/compare';
import { isObject } from '../engine/core/json';
import { printable } from '../engine/core/redact';
import { RUN_FORMAT, TOOL_VERSION } from '../engine/core/runFormat';
import type { RunFile } from '../engine/core/types';
import { ImportError } from '../engine/files/importers/common';
import { IMPORT_MAX_BYTES, importBenchmarkFile } from '../engine/files/importers/index';
import { parseRunFile, RunFileError } from '../engine/files/runFile';
import { readUntrustedFile, UntrustedFileError } from '../engine/files/untrustedFile';
import { UsageError } from '../jobs/errors';
import type { OptionValues } from '../jobs/values';
import { problemLines, sampleSizeText } from '../present/compareText';
import { checkComparisonOptions, reportComparison } from './compareOutput';
import type { ComparisonReport } from './compareOutput';
import { EXIT, processIo } from './io';
import type { CliIo } from './io';
import { parseCommandLine, splitFiles } from './parse';
import { usage } from './usage';

/** A file that cannot be compared: the message names it as given. */
class SideError extends Error {}

/**
 * One side: an llm-profiler run file, or another tool's result imported as `import` imports it. The
 * file may come from anywhere (a baseline kept in a repository): it is read as untrusted files are,
 * a regular file only, bounded in bytes and time, before it is parsed.
 */
async function readSide(file: string, cwd: string): Promise<RunFile> {
  const path = resolve(cwd, file);
  const named = (message: string) => new SideError(message.split(path).join(file));
  let text: string;
  try {
    text = (await readUntrustedFile(path, { maxBytes: IMPORT_MAX_BYTES })).toString('utf8').replace(/^\uFEFF/, '');
  } catch (e) {
    if (!(e instanceof UntrustedFileError)) throw e;
    const code = (e.cause as NodeJS.ErrnoException | undefined)?.code;
    throw new SideError(`${file}: ${e.reason === 'missing' && code === 'ENOENT' ? 'no such file' : e.message}`);
  }
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    // not JSON as a whole: JSON lines or YAML of another tool, or a damaged file (the importer says which)
  }
  try {
    if (isObject(doc) && typeof doc.format === 'string' && (doc.format === RUN_FORMAT || doc.format.startsWith('llm-profiler'))) return parseRunFile(text, file);
    return await importBenchmarkFile(path);
  } catch (e) {
    if (e instanceof RunFileError || e instanceof ImportError) throw named(e.message);
    throw e;
  }
}

/** The two sides' names as printed: their file names, or the paths when the names are the same. */
function sideNames(a: string, b: string): [string, string] {
  return basename(a) !== basename(b) ? [basename(a), basename(b)] : [a, b];
}

function usageError(io: CliIo, message: string): number {
  io.stderr.write(`llm-profiler: compare: ${printable(message)}\nTry: llm-profiler compare --help\n`);
  return EXIT.usage;
}

/** What `compare` prints, once both sides are read and allowed to be compared. */
function reportOf(base: RunFile, next: RunFile, names: [string, string], values: OptionValues): ComparisonReport | string {
  if ((base.sweep === undefined) !== (next.sweep === undefined)) {
    const [sweep, single] = base.sweep ? ['BASE', 'NEW'] : ['NEW', 'BASE'];
    return `${sweep} is a sweep and ${single} a single run: compare a sweep with a sweep (point by point), or a run with a run`;
  }
  const problems = comparability(base, next);
  const refusals = problems.filter((p) => p.severity === 'refuse');
  if (refusals.length > 0 && !values.flag('force')) {
    return `BASE and NEW are not the same workload, so their difference would be the workload's:\n${problemLines(refusals).map((l) => `  ${l}`).join('\n')}\nCompare runs of the same workload, or give --force to compare them anyway`;
  }
  const options = { ...(values.num('resamples') !== undefined ? { resamples: values.num('resamples')! } : {}), seed: values.num('bootstrapSeed') ?? 0 };
  const [baseName, nextName] = names;
  if (base.sweep && next.sweep) return { baseName, nextName, points: comparePoints(base, next, options), problems };
  return { baseName, nextName, comparison: compareRuns(base, next, options), problems };
}

/** Runs `llm-profiler compare` with argv (after the command); resolves with the exit code. */
export async function compareCommand(argv: readonly string[], io: CliIo = processIo()): Promise<number> {
  const { files, flags } = splitFiles('compare', argv);
  let values: OptionValues;
  try {
    values = parseCommandLine('compare', flags);
    if (values.flag('help') || values.flag('version')) {
      io.stdout.write(values.flag('help') ? usage('compare') : `${TOOL_VERSION}\n`);
      return EXIT.ok;
    }
    if (files.length === 0 || files.length > 2) throw new UsageError(files.length === 0 ? 'give two run files: llm-profiler compare BASE NEW (or one, for the sample sizes it would need)' : `give two run files, BASE and NEW; ${files.length} were given`);
    await checkComparisonOptions(values, io.cwd);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    return usageError(io, e.message);
  }
  const runs: RunFile[] = [];
  for (const file of files) {
    try {
      runs.push(await readSide(file, io.cwd));
    } catch (e) {
      if (!(e instanceof SideError)) throw e;
      io.stderr.write(`llm-profiler: compare: ${printable(e.message, true)}\n`);
      return EXIT.usage;
    }
  }
  if (runs.length === 1) return adviseOne(io, runs[0]!, basename(files[0]!), values);
  const report = reportOf(runs[0]!, runs[1]!, sideNames(files[0]!, files[1]!), values);
  if (typeof report === 'string') return usageError(io, report);
  return reportComparison(io, report, values);
}

/** `compare RUN`: how many requests two runs like this one need to tell --detect % apart, from its own spread. */
function adviseOne(io: CliIo, run: RunFile, name: string, values: OptionValues): number {
  const pct = values.num('detect') ?? 5;
  const advice = adviseSampleSize(run, pct, { ...(values.num('resamples') !== undefined ? { resamples: values.num('resamples')! } : {}), seed: values.num('bootstrapSeed') ?? 0 });
  const requests = run.summary.completed;
  if (values.flag('json')) io.stdout.write(`${JSON.stringify({ run: run.id, requests, detectPct: pct, advice }, null, 2)}\n`);
  else io.stdout.write(sampleSizeText(name, requests, pct, advice));
  return EXIT.ok;
}
