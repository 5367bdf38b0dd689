// What a command writes and sends beside the run file, once the run is done: --trace-out (a Perfetto /
// chrome://tracing trace), --chunks-csv (a row per chunk) and --otlp-endpoint (the run's metrics over
// OTLP/HTTP). Each says one line; a failure is said and counted, never thrown: the run is kept. Each
// takes the scrubbed run (redact.ts scrubRun), as the run file does: none can be handed another.
import { lstat, stat, writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { chunksToCsv } from '../engine/files/chunksCsv';
import { exportRunToOtlp, otlpHeadersFromEnv, otlpTimeoutFromEnv } from '../engine/files/otlp';
import type { Scrubber, ScrubbedRun } from '../engine/core/redact';
import { traceToJson } from '../engine/files/traceEvents';
import { UsageError } from '../jobs/errors';
import type { OptionValues } from '../jobs/values';

export interface ExportTargets {
  readonly traceOut?: string;
  readonly chunksCsv?: string;
  readonly otlpEndpoint?: string;
}

export function exportTargets(v: OptionValues): ExportTargets {
  const traceOut = v.str('traceOut');
  const chunksCsv = v.str('chunksCsv');
  const otlpEndpoint = v.str('otlpEndpoint');
  return {
    ...(traceOut !== undefined ? { traceOut } : {}),
    ...(chunksCsv !== undefined ? { chunksCsv } : {}),
    ...(otlpEndpoint !== undefined ? { otlpEndpoint } : {}),
  };
}

/** The values of the OTLP headers (OTEL_EXPORTER_OTLP_HEADERS): secrets, scrubbed from everything printed. */
export function exportSecrets(targets: ExportTargets, env: NodeJS.ProcessEnv): string[] {
  return targets.otlpEndpoint !== undefined ? Object.values(otlpHeadersFromEnv(env)) : [];
}

/** Checks the files' folders before anything is measured (as --out is checked): a run is never measured only for its trace to be lost. */
export async function checkExportPaths(targets: ExportTargets, cwd: string): Promise<void> {
  for (const [flag, path] of [['--trace-out', targets.traceOut], ['--chunks-csv', targets.chunksCsv]] as const) {
    if (path === undefined) continue;
    const target = resolve(cwd, path);
    const folder = await stat(dirname(target)).catch(() => undefined);
    if (!folder?.isDirectory()) throw new UsageError(`${flag}: the folder ${dirname(target)} does not exist`, flag);
    const existing = await lstat(target).catch(() => undefined);
    if (existing?.isDirectory()) throw new UsageError(`${flag}: ${target} is a folder; give a file name`, flag);
  }
}

export interface ExportContext {
  readonly cwd: string;
  readonly env: NodeJS.ProcessEnv;
  /** One line to the user (stderr), without the "llm-profiler: " prefix. */
  readonly say: (line: string) => void;
  /** The job's secrets, scrubbed from what is written (as from the run file). */
  readonly scrubber?: Scrubber;
  readonly signal?: AbortSignal;
}

async function writeText(flag: string, what: string, path: string, text: string, ctx: ExportContext): Promise<boolean> {
  const target = resolve(ctx.cwd, path);
  try {
    await writeFile(target, ctx.scrubber ? ctx.scrubber.scrub(text) : text, 'utf8');
    ctx.say(`${what} written to ${target}`);
    return true;
  } catch (e) {
    ctx.say(`${flag}: could not write ${target}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
    return false;
  }
}

/** Writes the trace and the chunk CSV, sends the run over OTLP; true when everything asked for was done. */
export async function writeExports(run: ScrubbedRun, targets: ExportTargets, ctx: ExportContext): Promise<boolean> {
  let ok = true;
  if (targets.traceOut !== undefined) ok = (await writeText('--trace-out', 'trace', targets.traceOut, traceToJson(run), ctx)) && ok;
  if (targets.chunksCsv !== undefined) ok = (await writeText('--chunks-csv', 'chunks CSV', targets.chunksCsv, chunksToCsv(run), ctx)) && ok;
  if (targets.otlpEndpoint !== undefined) {
    const timeoutMs = otlpTimeoutFromEnv(ctx.env);
    const res = await exportRunToOtlp(run, {
      endpoint: targets.otlpEndpoint,
      headers: otlpHeadersFromEnv(ctx.env),
      ...(timeoutMs !== undefined ? { timeoutMs } : {}),
      ...(ctx.signal ? { signal: ctx.signal } : {}),
    });
    if (res.ok) ctx.say(`OTLP: ${res.requests} request${res.requests === 1 ? '' : 's'} sent to ${res.url}`);
    else {
      ctx.say(`OTLP: could not send the run to ${res.url}: ${res.message}`);
      ok = false;
    }
  }
  return ok;
}
