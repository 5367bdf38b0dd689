// `llm-profiler serve`: starts the local llama.cpp server, prints its URL, runs until Ctrl+C (or
// SIGTERM), then stops it cleanly. Exit 2 for a bad flag (named), 1 when the server cannot start.
import { UsageError } from '../jobs/errors';
import { localServerRequest, modelFrom } from '../jobs/build';
import { startLocalServerFor } from '../jobs/resolve';
import type { LocalServerRequest } from '../jobs/job';
import { defaultOf } from '../jobs/options';
import type { OptionValues } from '../jobs/values';
import type { LocalServerHandle } from '../localServer/types';
import { EXIT, processIo } from './io';
import type { CliIo } from './io';
import { parseCommandLine } from './parse';
import { usage } from './usage';

/** The server `serve` starts: `--model` names a preset, a shape or a GGUF file. */
function serveRequest(v: OptionValues, io: CliIo): LocalServerRequest {
  const ctx = { cwd: io.cwd };
  const model = modelFrom(v.str('serveModel') ?? defaultOf<string>('serveModel', 'serve')!, '--model', ctx, true);
  return localServerRequest(v, 'serve', defaultOf<number>('parallel', 'serve')!, ctx, model);
}

function describe(r: LocalServerRequest): string {
  const m = r.model;
  return m.kind === 'preset' ? `the synthetic ${m.preset} model` : m.kind === 'shape' ? 'a synthetic model of a custom shape' : m.path;
}

/** `--build native`: the native CPU backend, built once into the cache (the bundled server then loads it). */
async function buildNative(io: CliIo, quiet: boolean): Promise<number | undefined> {
  const { buildNativeCpuBackend, findNativeCpuBackend } = await import('../localServer/nativeBuild');
  const found = findNativeCpuBackend();
  if (!found.ok) io.stderr.write(`Building llama.cpp's CPU backend for this CPU into ${found.dir} (once; minutes)...\n`);
  try {
    const r = await buildNativeCpuBackend({ ...(quiet ? {} : { log: (line: string) => io.stderr.write(`  [build] ${line}\n`) }) });
    io.stderr.write(r.built ? `Built ${r.lib} in ${r.info.buildSeconds} s; the bundled server uses it from now on.\n` : `Native CPU backend already built: ${r.lib}\n`);
    return undefined;
  } catch (e) {
    io.stderr.write(`llm-profiler serve: cannot build the native CPU backend: ${(e as Error).message}\n`);
    return EXIT.failed;
  }
}

export async function serveCommand(argv: readonly string[], io: CliIo = processIo()): Promise<number> {
  let v: OptionValues;
  let request: LocalServerRequest;
  try {
    v = parseCommandLine('serve', argv);
    if (v.flag('help')) {
      io.stdout.write(usage('serve'));
      return EXIT.ok;
    }
    request = serveRequest(v, io);
    if (v.str('build') !== undefined && request.backend !== 'bundled') {
      throw new UsageError("--build native builds the bundled server's CPU backend: it cannot be used with --backend llama-server", '--build');
    }
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    io.stderr.write(`llm-profiler serve: ${e.message}\nTry: llm-profiler serve --help\n`);
    return EXIT.usage;
  }
  if (v.str('build') === 'native') {
    const failed = await buildNative(io, v.flag('quiet'));
    if (failed !== undefined) return failed;
  }
  io.stderr.write(`Starting the ${request.backend} server on ${describe(request)}...\n`);
  let handle: LocalServerHandle;
  try {
    const port = v.num('port');
    const ready = v.num('readyTimeout');
    handle = await startLocalServerFor(request, { ...(v.flag('quiet') ? {} : { onLog: (line: string) => io.stderr.write(`  [server] ${line}\n`) }) }, {
      ...(port !== undefined ? { port } : {}),
      ...(ready !== undefined ? { readyTimeoutMs: ready * 1000 } : {}),
    });
  } catch (e) {
    io.stderr.write(`llm-profiler serve: ${(e as Error).message}\n`);
    return EXIT.failed;
  }
  // Listening for Ctrl+C before the URL is out: a caller may signal as soon as it reads it.
  const stopped = new Promise<'signal'>((resolve) => {
    const on = () => resolve('signal');
    process.once('SIGINT', on);
    process.once('SIGTERM', on);
  });
  io.stdout.write(`${handle.url}\n`);
  io.stderr.write(
    `Serving ${handle.model} (${handle.backend}, pid ${handle.pid}) at ${handle.url}\n` +
      `  OpenAI-compatible: ${handle.url}/v1/chat/completions, /v1/completions, /v1/models; /health\n` +
      `  Profile it: llm-profiler run --url ${handle.url}\n` +
      `Press Ctrl+C to stop.\n`,
  );
  const why = await Promise.race([stopped, handle.exited.then(() => 'exited' as const)]);
  if (why === 'exited') {
    const code = await handle.exited;
    io.stderr.write(`llm-profiler serve: the server exited (exit code ${code})\n${(handle.logTail?.() ?? []).slice(-15).join('\n')}\n`);
    return EXIT.failed;
  }
  io.stderr.write('Stopping the server...\n');
  await handle.stop();
  io.stderr.write('Stopped.\n');
  return EXIT.ok;
}
