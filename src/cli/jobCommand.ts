// `llm-profiler run`, `sweep`, `prefill-dial` and `cache-check`: parse → build the job → execute → print, with a
// live progress line on a terminal, Ctrl+C that keeps what finished, and the run file with --out.
import { access, constants, lstat, stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { scrubRun, secretsOf } from '../engine/core/redact';
import type { ScrubbedRun } from '../engine/core/redact';
import { writeRunFile } from '../engine/files/runFile';
import { fsErrorText } from '../engine/files/fsErrors';
import { TOOL_VERSION } from '../engine/core/runFormat';
import type { NetworkSpec, RunFile } from '../engine/core/types';
import { insecureWarning, proxyFor, shownProxy } from '../engine/transport/connections';
import { buildNetwork, networkSecrets } from '../jobs/networkSpec';
import { buildCacheCheckJob, buildDialJob, buildRunJob, buildSweepJob } from '../jobs/build';
import { UsageError } from '../jobs/errors';
import { executeJob, sloFailure } from '../jobs/execute';
import type { JobHooks } from '../jobs/execute';
import type { BuiltJob, LocalServerRequest } from '../jobs/job';
import { DEFAULT_SLOT_CONTEXT } from '../localServer/defaults';
import { LocalServerError } from '../localServer/launcher';
import type { OptionValues } from '../jobs/values';
import { formatCacheCheck } from '../present/cacheCheckText';
import { pulledInLine } from '../present/jobText';
import { formatProgressLine, formatRunTable } from '../present/runText';
import { formatDial, formatSweep } from '../present/sweepText';
import { formatMs } from '../present/units';
import { checkExportPaths, exportSecrets, exportTargets, writeExports } from './exports';
import { journalFor, sayLeftovers, settleJournal } from './journals';
import { newRunId } from '../engine/core/runId';
import { EXIT, processIo } from './io';
import type { CliIo } from './io';
import { parseCommandLine } from './parse';
import { usage } from './usage';
import { Printer } from './printer';

export { Printer };

export type JobCommandName = 'run' | 'sweep' | 'prefill-dial' | 'cache-check';

function build(command: JobCommandName, v: OptionValues, io: CliIo): Promise<BuiltJob> | BuiltJob {
  const ctx = { cwd: io.cwd, env: io.env };
  switch (command) {
    case 'run': return buildRunJob(v, ctx);
    case 'sweep': return buildSweepJob(v, ctx);
    case 'prefill-dial': return buildDialJob(v, ctx);
    case 'cache-check': return buildCacheCheckJob(v, ctx);
  }
}

/** What --json prints: the part of the run file the command is about (a run's summary; with --repeat, each repetition's beside it). */
export function jsonOf(command: JobCommandName, run: RunFile): unknown {
  switch (command) {
    case 'run': return run.repeats ? { ...run.summary, repeats: run.repeats.map(({ requestIndexes: _indexes, ...r }) => r) } : run.summary;
    case 'sweep': return run.sweep;
    case 'prefill-dial': return run.prefillDial;
    case 'cache-check': return run.prefixCache ?? null;
  }
}

export function textOf(command: JobCommandName, run: RunFile): string {
  switch (command) {
    case 'run': return formatRunTable(run);
    case 'sweep': return formatSweep(run);
    case 'prefill-dial': return formatDial(run);
    case 'cache-check': return formatCacheCheck(run);
  }
}

/** The key named by --api-key-env (`name`: a side's, for ab), read from the environment: never printed or stored. */
export function apiKeyFrom(v: OptionValues, io: CliIo, name = v.str('apiKeyEnv')): string | undefined {
  if (name === undefined) return undefined;
  const key = io.env[name];
  if (!key) throw new UsageError(`--api-key-env: the environment variable ${name} is not set`, '--api-key-env');
  return key;
}


/** "1 slot of 3584 tokens": what the local server is started with (each slot holds the longest prompt and its max tokens). */
function slotsText(s: LocalServerRequest): string {
  const per = s.ctxSize !== undefined ? Math.floor(s.ctxSize / s.parallel) : (s.slotContext ?? DEFAULT_SLOT_CONTEXT);
  return `${s.parallel} slot${s.parallel === 1 ? '' : 's'} of ${per} tokens`;
}

/** A line rewritten in place on a terminal, cleared for good once the run ends or is interrupted. */
export class LiveLine {
  #on: boolean;
  constructor(private readonly printer: Printer, enabled: boolean) {
    this.#on = enabled;
  }
  get enabled(): boolean {
    return this.#on;
  }
  show(text: string): void {
    if (this.#on) this.printer.rewrite(text);
  }
  /** A line that stays (a finished point), then the live line again. */
  print(text: string): void {
    if (this.#on) this.printer.rewrite(`${text}\n`);
  }
  stop(): void {
    if (this.#on) this.printer.rewrite('');
    this.#on = false;
  }
}

/**
 * Ctrl+C during a run: the first aborts `signal` (what finished is kept) and says `what`; a second quits
 * at once. `release()` takes the handler off again.
 */
export function catchInterrupt(live: LiveLine, say: (line: string) => void, what: string): { readonly signal: AbortSignal; release(): void } {
  const ac = new AbortController();
  let interrupts = 0;
  const onSigint = () => {
    if (++interrupts > 1) process.exit(EXIT.interrupted);
    ac.abort();
    live.stop();
    say(`interrupted: stopping, ${what} (Ctrl+C again to quit at once)`);
  };
  process.on('SIGINT', onSigint);
  return { signal: ac.signal, release: () => process.off('SIGINT', onSigint) };
}

/** The proxy and trust settings from --proxy, --no-proxy, --ca-file, --insecure and the environment (HTTPS_PROXY, NO_PROXY, NODE_EXTRA_CA_CERTS…), for `url` (ab: a side's). */
export function networkFrom(v: OptionValues, io: CliIo, url = v.str('url')): NetworkSpec | undefined {
  const proxy = v.str('proxy');
  return buildNetwork(
    url,
    {
      ...(proxy !== undefined ? { proxy, proxySource: '--proxy' } : {}),
      ...(v.flag('noProxy') ? { direct: true } : {}),
      caFiles: v.strs('caFile'),
      ...(v.flag('insecure') ? { insecure: true } : {}),
    },
    io.env,
    io.cwd,
  );
}

function hooksFor(live: LiveLine, printer: Printer, local: boolean, apiKey: string | undefined, network: NetworkSpec | undefined, signal: AbortSignal): JobHooks {
  return {
    ...(apiKey !== undefined ? { apiKey } : {}),
    ...(network !== undefined ? { network } : {}),
    signal,
    onStart: ({ endpoint }) => {
      if (local) printer.err(`llm-profiler: local server ${endpoint.url} (model ${endpoint.model ?? '?'})\n`);
    },
    ...(live.enabled
      ? {
          onProgress: (p) => live.show(formatProgressLine(p)),
          onPoint: (pt) => live.print(`${pt.label}: ${pt.summary.outputTokensPerSecond.toFixed(1)} tok/s, TPOT p50 ${formatMs(pt.summary.tpotMs.p50)}`),
          onConfig: (c) => live.print(`${c.label}: done`),
          onStatus: (m) => live.print(m),
        }
      : {}),
  };
}

/**
 * Checks --out before anything is measured: its folder exists, and the path is not a folder or a
 * symbolic link (the atomic write would replace the link, not write where it points). A run is
 * never measured only to be lost at the end.
 */
export async function checkOut(path: string, io: CliIo, flag = '--out'): Promise<void> {
  const target = resolve(io.cwd, path);
  const folder = await stat(dirname(target)).catch(() => undefined);
  if (!folder?.isDirectory()) throw new UsageError(`${flag}: the folder ${dirname(target)} does not exist`, flag);
  const existing = await lstat(target).catch(() => undefined);
  if (existing?.isSymbolicLink()) throw new UsageError(`${flag}: ${target} is a symbolic link; give the path of a regular file`, flag);
  if (existing?.isDirectory()) throw new UsageError(`${flag}: ${target} is a folder; give a file name such as run.json`, flag);
  // refused now, not after a run of an hour: a read-only disk, a folder this user may not write
  const denied = await access(dirname(target), constants.W_OK).then(() => undefined, (e: unknown) => e);
  if (denied !== undefined) throw new UsageError(`${flag}: the folder ${dirname(target)} cannot be written: ${fsErrorText(denied)}`, flag);
}

/** Writes a scrubbed run file atomically and says where (`what`: "run", "A's run"); false when it could not. */
export async function writeOut(path: string, run: ScrubbedRun, io: CliIo, printer: Printer, what = 'run'): Promise<boolean> {
  const target = resolve(io.cwd, path);
  try {
    await writeRunFile(target, run, printer.scrubber);
    printer.err(`llm-profiler: ${what} written to ${target}\n`);
    return true;
  } catch (e) {
    // ENOENT here: the folder went while the run went (removed, unmounted); it is not made again
    const why = (e as NodeJS.ErrnoException).code === 'ENOENT' ? `the folder ${dirname(target)} no longer exists (ENOENT)` : fsErrorText(e);
    printer.err(`llm-profiler: could not write the run file ${target}: ${why}\n`);
    return false;
  }
}

/** One order for every command: interrupted, then failed requests, then a missed SLO (said). */
function exitCodeOf(job: BuiltJob['job'], run: RunFile, err: (line: string) => void): number {
  const slo = sloFailure(job, run);
  if (run.cancelled) return EXIT.interrupted;
  if (run.summary.failed > 0) return EXIT.failed;
  if (job.kind === 'cache-check' && !run.prefixCache) return EXIT.failed;
  if (slo) {
    err(slo);
    return EXIT.slo;
  }
  return EXIT.ok;
}

/** Runs `llm-profiler <command>` with argv (after the command); resolves with the exit code. Never rejects. */
export async function jobCommand(command: JobCommandName, argv: readonly string[], io: CliIo = processIo()): Promise<number> {
  const printer = new Printer(io);
  const err = (line: string) => printer.err(`llm-profiler: ${line}\n`);
  let values: OptionValues;
  try {
    values = parseCommandLine(command, argv);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    err(`${command}: ${e.message}`);
    io.stderr.write(`Try: llm-profiler ${command} --help\n`);
    return EXIT.usage;
  }
  if (values.flag('help')) {
    printer.out(usage(command));
    return EXIT.ok;
  }
  if (values.flag('version')) {
    io.stdout.write(`${TOOL_VERSION}\n`);
    return EXIT.ok;
  }

  const live = new LiveLine(printer, io.stderr.isTTY === true && !values.flag('json'));
  const interrupt = catchInterrupt(live, err, 'keeping what finished');
  try {
    const apiKey = apiKeyFrom(values, io);
    const network = networkFrom(values, io);
    printer.know([...secretsOf({ url: values.str('url') }, apiKey), ...networkSecrets(network, io.env)]);
    const url = values.str('url');
    if (url !== undefined) {
      const via = proxyFor(url, network);
      if (via !== undefined) err(`via proxy ${shownProxy(via)} (from ${network?.proxySource ?? 'the environment'}): connecting and the tunnel are timed apart from TTFT, but every byte passes the proxy`);
      const insecure = insecureWarning(url, network);
      if (insecure !== undefined) err(`warning: ${insecure}`);
    }
    const out = values.str('out');
    if (out !== undefined) await checkOut(out, io);
    const exports = exportTargets(values);
    await checkExportPaths(exports, io.cwd);
    printer.know(exportSecrets(exports, io.env));
    const { job, warnings } = await build(command, values, io);
    for (const w of warnings) err(`warning: ${w}`);
    const pulled = pulledInLine(job);
    if (pulled !== undefined) err(pulled);
    const local = job.kind === 'dial' || job.target.kind === 'local';
    if (job.kind !== 'dial' && job.target.kind === 'local') err(`no --url: starting the bundled llama.cpp server on 127.0.0.1 (synthetic model, CPU; ${slotsText(job.target.server)})`);
    await sayLeftovers(out, io, printer);
    const runId = newRunId();
    const journal = await journalFor(job, runId, out, io, printer);
    const hooks = { ...hooksFor(live, printer, local, apiKey, network, interrupt.signal), runId, ...(journal ? { journal } : {}) };
    // what is printed, written and sent is the scrubbed run: a server may have echoed a secret as its model name
    const run = scrubRun(await executeJob(job, hooks).catch(async (e: unknown) => { await journal?.abandon(); throw e; }), printer.scrubber);
    live.stop();
    printer.out(values.flag('json') ? `${JSON.stringify(jsonOf(command, run), null, 2)}\n` : textOf(command, run));
    let code = exitCodeOf(job, run, err);
    const stored = out === undefined || (await writeOut(out, run, io, printer));
    if (!stored && code === EXIT.ok) code = EXIT.failed;
    await settleJournal(journal, run, stored, io, printer);
    // the trace, the chunk CSV and OTLP after the run file: a failure there is said, and the run is kept
    if (!(await writeExports(run, exports, { cwd: io.cwd, env: io.env, say: err, scrubber: printer.scrubber })) && code === EXIT.ok) code = EXIT.failed;
    return code;
  } catch (e) {
    live.stop();
    if (e instanceof UsageError) {
      err(`${command}: ${e.message}`);
      return EXIT.usage;
    }
    // PreflightError (endpoint down, bad key, unknown model), a server that would not start: one line, exit 1;
    // for the server, the last lines of its log under it (they say why).
    err((e instanceof Error ? e.message : String(e)).split('\n')[0]!);
    if (e instanceof LocalServerError && e.logTail.length) io.stderr.write(`${e.logTail.slice(-5).map((l) => `  ${l}`).join('\n')}\n`);
    return EXIT.failed;
  } finally {
    interrupt.release();
  }
}
