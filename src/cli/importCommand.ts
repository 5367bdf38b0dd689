// `llm-profiler import FILE… [--out run.json | --out-dir DIR] [--json] [--percentiles …]`: another
// tool's results (a tool of IMPORT_TOOL_ROWS) as a run, printed as `run` (or `sweep`) prints one, under a
// line saying where it came from and what the source lacks; --out writes the run file atomically, and
// --trace-out, --chunks-csv and --otlp-endpoint export it as they export a measured run (cli/exports.ts).
import { lstat, stat } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { importBenchmarkFile } from '../engine/files/importers/index';
import { ImportError } from '../engine/files/importers/common';
import { printable, Scrubber, scrubRun } from '../engine/core/redact';
import type { ScrubbedRun } from '../engine/core/redact';
import { writeRunFile } from '../engine/files/runFile';
import { TOOL_VERSION } from '../engine/core/runFormat';
import type { RunFile } from '../engine/core/types';
import { UsageError } from '../jobs/errors';
import { reportedRows } from '../present/importText';
import { importToolLabel } from '../present/toolLabels';
import { formatRunTable } from '../present/runText';
import { formatSweep } from '../present/sweepText';
import { checkExportPaths, exportSecrets, exportTargets, writeExports } from './exports';
import { EXIT, processIo } from './io';
import type { CliIo } from './io';
import { parseCommandLine, splitFiles } from './parse';
import { usage } from './usage';

/** The line above the table: where the run came from, and what its source does not record. */
function importedHeader(run: RunFile): string {
  const f = run.importedFrom;
  if (!f) return '';
  const out = [`Imported from ${importToolLabel(f.tool)}${f.version ? ` ${f.version}` : ''}: ${f.file}${f.files?.length ? ` (with ${f.files.join(', ')})` : ''}`];
  if (f.startTimes === 'none') out.push('  Send times: none in the source: every request is placed at the start (concurrency over time and stall culprits cannot be read)');
  if (f.missing?.length) out.push('  Not in the source:', ...f.missing.map((m) => `    - ${m}`));
  return `${out.join('\n')}\n`;
}

/** The tool's own figures that name one of ours, ours beside each (present/importText.ts reportedRows, as the report panel shows them). */
function reportedLines(run: RunFile): string[] {
  const from = run.importedFrom;
  if (!from || run.sweep) return [];
  const rows = reportedRows(from, run.summary).filter((r) => r.ours !== undefined);
  if (rows.length === 0) return [];
  const width = Math.max(...rows.map((r) => r.oursLabel!.length));
  const fmt = (x: number) => (Number.isInteger(x) ? String(x) : x.toFixed(2));
  return [
    `Recomputed here, beside ${importToolLabel(from.tool)}'s own figures:`,
    ...rows.map((r) => `  ${r.oursLabel!.padEnd(width)}  ${fmt(r.ours!).padStart(10)}   ${r.key} ${fmt(r.value)}`),
  ];
}

async function checkTarget(path: string, flag: string, folder: boolean): Promise<void> {
  const info = await stat(path).catch(() => undefined);
  if (folder) {
    if (!info?.isDirectory()) throw new UsageError(`${flag}: the folder ${path} does not exist`, flag);
    return;
  }
  const parent = await stat(dirname(path)).catch(() => undefined);
  if (!parent?.isDirectory()) throw new UsageError(`${flag}: the folder ${dirname(path)} does not exist`, flag);
  const existing = await lstat(path).catch(() => undefined);
  if (existing?.isSymbolicLink()) throw new UsageError(`${flag}: ${path} is a symbolic link; give the path of a regular file`, flag);
  if (existing?.isDirectory()) throw new UsageError(`${flag}: ${path} is a folder; give a file name such as run.json`, flag);
}

/** Where --out-dir writes the run of `file`: DIR/NAME.run.json (NAME without its extension). */
function outFileIn(dir: string, file: string): string {
  return join(dir, `${basename(file).replace(/\.(jsonl|json|ya?ml)$/i, '')}.run.json`);
}

/** Runs `llm-profiler import` with argv (after the command); resolves with the exit code. Never rejects. */
export async function importCommand(argv: readonly string[], io: CliIo = processIo()): Promise<number> {
  const err = (line: string) => io.stderr.write(`llm-profiler: ${printable(line)}\n`);
  const { files, flags } = splitFiles('import', argv);
  let values;
  try {
    values = parseCommandLine('import', flags);
    if (values.flag('help') || values.flag('version')) {
      io.stdout.write(values.flag('help') ? usage('import') : `${TOOL_VERSION}\n`);
      return EXIT.ok;
    }
    if (files.length === 0) throw new UsageError('give the file to import, e.g. llm-profiler import result.json');
    const out = values.str('out');
    const outDir = values.str('outDir');
    if (out !== undefined && files.length > 1) throw new UsageError(`--out takes one file's run; ${files.length} files were given: use --out-dir DIR`, '--out');
    if (out !== undefined) await checkTarget(resolve(io.cwd, out), '--out', false);
    if (outDir !== undefined) await checkTarget(resolve(io.cwd, outDir), '--out-dir', true);
    // a trace or a chunk CSV is one run's: several files would overwrite each other's
    for (const [flag, key] of [['--trace-out', 'traceOut'], ['--chunks-csv', 'chunksCsv']] as const) {
      if (values.str(key) !== undefined && files.length > 1) throw new UsageError(`${flag} takes one file's run; ${files.length} files were given: import them one at a time`, flag);
    }
    await checkExportPaths(exportTargets(values), io.cwd);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    err(`import: ${e.message}`);
    io.stderr.write('Try: llm-profiler import --help\n');
    return EXIT.usage;
  }

  const percentiles = values.nums('percentiles');
  const out = values.str('out');
  const outDir = values.str('outDir');
  const json = values.flag('json');
  const exports = exportTargets(values);
  // the OTLP headers' values (OTEL_EXPORTER_OTLP_HEADERS) never reach what is printed or written
  const scrubber = new Scrubber(exportSecrets(exports, io.env));
  const say = (line: string) => err(scrubber.scrub(line));
  // what is printed passes the same scrubber as what is written (Printer in jobCommand.ts does this for run)
  const print = (text: string) => io.stdout.write(scrubber.scrub(printable(text, false)));
  const runs: ScrubbedRun[] = [];
  let code: number = EXIT.ok;
  for (const file of files) {
    let run: RunFile;
    try {
      run = await importBenchmarkFile(resolve(io.cwd, file), percentiles ? { percentiles } : {});
    } catch (e) {
      if (!(e instanceof ImportError)) throw e;
      // the message names the path as given, not as resolved
      err(e.message.replace(resolve(io.cwd, file), file));
      code = EXIT.failed;
      continue;
    }
    // every export, the run file included, takes the scrubbed run (redact.ts scrubRun)
    const safe = scrubRun({ ...run, importedFrom: { ...run.importedFrom!, file } }, scrubber);
    runs.push(safe);
    if (!json) {
      const lines = reportedLines(safe);
      print(`${importedHeader(safe)}${safe.sweep ? formatSweep(safe) : formatRunTable(safe)}${lines.length ? `${lines.join('\n')}\n` : ''}`);
    }
    const target = out !== undefined ? resolve(io.cwd, out) : outDir !== undefined ? outFileIn(resolve(io.cwd, outDir), file) : undefined;
    if (target !== undefined) {
      try {
        await writeRunFile(target, safe, scrubber);
        err(`run written to ${target}`);
      } catch (e) {
        err(`could not write the run file ${target}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
        code = EXIT.failed;
      }
    }
    if (exports.chunksCsv !== undefined && safe.requests.every((r) => r.chunkTimesMs.length === 0)) {
      say(`--chunks-csv: ${importToolLabel(safe.importedFrom!.tool)} keeps no chunk times in ${file}: the CSV has its header only`);
    }
    if (!(await writeExports(safe, exports, { cwd: io.cwd, env: io.env, say, scrubber }))) code = EXIT.failed;
  }
  if (json) {
    const shown = runs.map((r) => ({ importedFrom: r.importedFrom, summary: r.summary, ...(r.sweep ? { sweep: r.sweep } : {}) }));
    print(`${JSON.stringify(files.length === 1 ? (shown[0] ?? null) : shown, null, 2)}\n`);
  }
  return code;
}
