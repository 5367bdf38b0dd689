// `llm-profiler recover [JOURNAL | RUN.json | DIR] [--out F] [--json]`: the run file of each journal a
// run or sweep left when its process died (engine/run/recover.ts), written atomically where the run
// was to be written (or --out, or RUN_ID.json here), printed as `run` or `sweep` prints it; the journal
// is removed once the file is in place. A journal whose process still runs is left alone.
import { lstat, unlink } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { Scrubber, scrubRun } from '../engine/core/redact';
import { JOURNAL_SUFFIX, runFileName } from '../engine/core/runId';
import { TOOL_VERSION } from '../engine/core/runFormat';
import type { RunFile } from '../engine/core/types';
import { JournalError, journalsIn, readJournal, readJournalHead, writerState } from '../engine/files/journal';
import { recoverRun } from '../engine/run/recover';
import { UsageError } from '../jobs/errors';
import { journalHome } from '../jobs/journal';
import { runFileWritten } from '../jobs/recovery';
import { EXIT, processIo } from './io';
import type { CliIo } from './io';
import { checkOut, jsonOf, Printer, textOf, writeOut } from './jobCommand';
import { parseCommandLine, splitFiles } from './parse';
import { usage } from './usage';

/** The journals a path names: a journal itself, a folder's, or those a run with `--out PATH` left; none given: the journal home's and this folder's. */
async function journalsNamed(path: string | undefined, io: CliIo): Promise<string[]> {
  if (path === undefined) return [...(await journalsIn(journalHome(io.env))), ...(await journalsIn(io.cwd))];
  const target = resolve(io.cwd, path);
  const st = await lstat(target).catch(() => undefined);
  if (st?.isDirectory()) return journalsIn(target);
  if (target.endsWith(JOURNAL_SUFFIX)) {
    if (!st) throw new UsageError(`${path}: no such journal`);
    return [target];
  }
  return journalsIn(dirname(target), `${basename(target)}.`);
}

/** Where a recovered run goes: --out; else where the run was to be written, unless a file is there now; else RUN_ID.json here. */
async function targetOf(run: RunFile, out: string | undefined, recordedOut: string | undefined, io: CliIo): Promise<string> {
  if (out !== undefined) return resolve(io.cwd, out);
  if (recordedOut !== undefined) {
    const folder = await lstat(dirname(recordedOut)).catch(() => undefined);
    const existing = await lstat(recordedOut).catch(() => undefined);
    if (folder?.isDirectory() && !existing) return recordedOut;
    if (folder?.isDirectory()) return join(dirname(recordedOut), runFileName(run.id));
  }
  return join(io.cwd, runFileName(run.id));
}

/**
 * Recovers one journal; the exit code of it. `named`: the path named this journal itself (one written
 * on another machine is recovered only then: found in a shared folder, its run may still be going there).
 */
async function recoverOne(path: string, out: string | undefined, json: boolean, named: boolean, io: CliIo, printer: Printer): Promise<number> {
  const err = (line: string) => printer.err(`llm-profiler: ${line}\n`);
  const head = await readJournalHead(path);
  const state = writerState(head);
  if (state === 'running') {
    err(`${path}: the run is still going (process ${head.pid}): stop it first, or let it end`);
    return EXIT.failed;
  }
  if (state === 'elsewhere' && !named) {
    err(`${path}: written on ${head.host}, whose run may still be going: name the journal itself to recover it here`);
    return EXIT.ok;
  }
  if (state === 'elsewhere') err(`${path}: written on ${head.host}; recovering it here`);
  const written = await runFileWritten(head, dirname(path));
  if (written !== undefined) {
    await unlink(path).catch(() => undefined);
    err(`${path}: its run was written to ${written} before its process stopped; the journal is removed`);
    return EXIT.ok;
  }
  // its lines were scrubbed as they were written; the run file is written as every run file is
  const run = scrubRun(recoverRun(await readJournal(path)), new Scrubber());
  const target = await targetOf(run, out, head.out, io);
  await checkOut(target, io);
  const command = run.sweep ? 'sweep' : 'run';
  printer.out(json ? `${JSON.stringify({ ...(jsonOf(command, run) as object), interrupted: run.interrupted ?? null }, null, 2)}\n` : textOf(command, run));
  if (!(await writeOut(target, run, io, printer, 'recovered run'))) return EXIT.failed;
  await unlink(path).catch(() => undefined);
  return EXIT.ok;
}

/** Runs `llm-profiler recover` with argv (after the command); resolves with the exit code. Never rejects. */
export async function recoverCommand(argv: readonly string[], io: CliIo = processIo()): Promise<number> {
  const printer = new Printer(io);
  const err = (line: string) => printer.err(`llm-profiler: ${line}\n`);
  try {
    const { files, flags } = splitFiles('recover', argv);
    const values = parseCommandLine('recover', flags);
    if (values.flag('help') || values.flag('version')) {
      io.stdout.write(values.flag('help') ? usage('recover') : `${TOOL_VERSION}\n`);
      return EXIT.ok;
    }
    if (files.length > 1) throw new UsageError(`give one journal, run file or folder (${files.length} were given)`);
    const journals = await journalsNamed(files[0], io);
    const out = values.str('out');
    if (journals.length === 0) {
      err(`no journal found ${files[0] !== undefined ? `for ${files[0]}` : `in ${journalHome(io.env)} or ${io.cwd}`}: nothing to recover`);
      return EXIT.ok;
    }
    if (out !== undefined && journals.length > 1) throw new UsageError(`--out takes one journal's run; ${journals.length} were found: name one (${journals.join(', ')})`, '--out');
    let code: number = EXIT.ok;
    for (const j of journals) {
      const c = await recoverOne(j, out, values.flag('json'), files[0] !== undefined && resolve(io.cwd, files[0]) === j, io, printer).catch((e: unknown) => {
        if (e instanceof UsageError) throw e;
        err(e instanceof JournalError ? e.message : `${j}: ${e instanceof Error ? e.message : String(e)}`);
        return EXIT.failed;
      });
      code = Math.max(code, c);
    }
    return code;
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    err(`recover: ${e.message}`);
    io.stderr.write('Try: llm-profiler recover --help\n');
    return EXIT.usage;
  }
}
