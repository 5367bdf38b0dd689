// The bundled server process (dist/localServer.mjs): `node dist/localServer.mjs --model FILE.gguf
// [--port N] [--parallel N] [--batch-size N] [--threads N] [--ctx-size N] [--parent-pid N]`.
// On stdout it prints one JSON line once it listens ({"event":"listening","port":N,...}) and
// nothing else; logs go to stderr. It exits when its parent dies (stdin closes or the parent pid
// is gone), on SIGTERM/SIGINT, or with code 1 and a message on stderr when it cannot start.
//
// With --supervise it instead runs the command after `--` (a real llama-server) as its child,
// relays its output (to stderr), prints {"event":"listening","port":N} once the kernel shows that
// child listening on 127.0.0.1:N, and kills it when our parent dies: llama-server cannot watch its
// parent itself.
import { spawn } from 'node:child_process';
import { LlamaEngine } from './inference';
import { LocalHttpServer } from './httpServer';
import { listenersOf } from './listeningPorts';
import { defaultCtxSize, defaultThreads, DEFAULT_BATCH_SIZE, DEFAULT_PARALLEL } from './defaults';

interface ServerArgs {
  model?: string;
  alias?: string;
  port: number;
  parallel: number;
  batchSize: number;
  threads: number;
  ctxSize?: number;
  parentPid?: number;
  fullBatches: boolean;
  /** The launcher holds our stdin open: its end means the launcher is gone. */
  watchStdin: boolean;
  supervise?: string[];
}

function parseArgs(argv: readonly string[]): ServerArgs {
  const a: ServerArgs = { port: 0, parallel: DEFAULT_PARALLEL, batchSize: DEFAULT_BATCH_SIZE, threads: defaultThreads(), fullBatches: true, watchStdin: false };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i]!;
    if (flag === '--') {
      a.supervise = argv.slice(i + 1);
      break;
    }
    const int = (min: number): number => {
      const v = argv[++i];
      const n = Number(v);
      if (v === undefined || !Number.isInteger(n) || n < min) throw new Error(`${flag} needs an integer >= ${min} (got ${v ?? 'nothing'})`);
      return n;
    };
    switch (flag) {
      case '--model': a.model = argv[++i]; break;
      case '--alias': a.alias = argv[++i]; break;
      case '--port': a.port = int(0); break;
      case '--parallel': a.parallel = int(1); break;
      case '--batch-size': a.batchSize = int(1); break;
      case '--threads': a.threads = int(1); break;
      case '--ctx-size': a.ctxSize = int(64); break;
      case '--parent-pid': a.parentPid = int(1); break;
      case '--no-full-batches': a.fullBatches = false; break;
      case '--watch-stdin': a.watchStdin = true; break;
      case '--supervise': break;
      default: throw new Error(`unknown flag ${flag}`);
    }
  }
  return a;
}

const log = (line: string) => process.stderr.write(`${line}\n`);

/** Calls `onGone` once when the parent process is gone. */
function watchParent(parentPid: number | undefined, watchStdin: boolean, onGone: () => void): void {
  let fired = false;
  const fire = () => {
    if (fired) return;
    fired = true;
    onGone();
  };
  const startPpid = process.ppid;
  const timer = setInterval(() => {
    if (process.ppid !== startPpid) return fire();
    if (parentPid !== undefined) {
      try {
        process.kill(parentPid, 0);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'ESRCH') fire();
      }
    }
  }, 250);
  timer.unref();
  // The launcher holds our stdin open; it closes when the launcher exits, however it exits.
  if (watchStdin) {
    process.stdin.on('end', fire);
    process.stdin.on('close', fire);
    process.stdin.on('error', fire);
    process.stdin.resume();
  }
}

async function supervise(args: ServerArgs): Promise<void> {
  const [cmd, ...rest] = args.supervise!;
  if (!cmd) throw new Error('--supervise needs a command after --');
  // Its stdout goes to our stderr: our stdout carries only our own events, which the launcher trusts.
  const child = spawn(cmd, rest, { stdio: ['ignore', 2, 'inherit'] });
  let exiting = false;
  const kill = (sig: NodeJS.Signals) => {
    if (child.exitCode === null && child.signalCode === null) child.kill(sig);
  };
  child.on('error', (e) => {
    log(`cannot start ${cmd}: ${e.message}`);
    process.exit(127);
  });
  child.on('spawn', () => {
    process.stdout.write(`${JSON.stringify({ event: 'spawned', pid: child.pid })}\n`);
    reportListening(child.pid!, () => child.exitCode !== null || child.signalCode !== null, () => kill('SIGTERM'));
  });
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 128 + (signal === 'SIGKILL' ? 9 : 15) : 1)));
  for (const sig of ['SIGTERM', 'SIGINT'] as const) {
    process.on(sig, () => {
      exiting = true;
      kill('SIGTERM');
    });
  }
  watchParent(args.parentPid, args.watchStdin, () => {
    if (!exiting) log('parent process gone: stopping llama-server');
    kill('SIGKILL');
  });
}

/**
 * Prints {"event":"listening","port":N} once llama-server (pid) holds a listening socket on
 * 127.0.0.1, as the kernel says (listeningPorts.ts): the port it bound itself (--port 0) or was
 * given, never one that something else answers on. Where the platform cannot tell, it stops.
 */
function reportListening(pid: number, gone: () => boolean, stop: () => void): void {
  const timer = setInterval(() => {
    if (gone()) return clearInterval(timer);
    const listeners = listenersOf(pid);
    if (listeners === undefined) {
      clearInterval(timer);
      log('cannot tell which port llama-server listens on (this platform has no /proc and no /usr/sbin/lsof): stopping it');
      stop();
      return;
    }
    const own = listeners.find((l) => l.address === '127.0.0.1');
    if (own === undefined) return;
    clearInterval(timer);
    process.stdout.write(`${JSON.stringify({ event: 'listening', port: own.port, url: `http://127.0.0.1:${own.port}`, pid })}\n`);
  }, 50);
}

async function serve(args: ServerArgs): Promise<void> {
  if (!args.model) throw new Error('--model FILE.gguf is required');
  // What is up so far: a signal can arrive while the model loads.
  const up: { engine?: LlamaEngine; http?: LocalHttpServer } = {};
  let stopping = false;
  const stop = async (code: number, why: string) => {
    if (stopping) return;
    stopping = true;
    log(why);
    // A stuck native call must not keep an orphan alive.
    setTimeout(() => process.exit(code), 3000).unref();
    await up.http?.close().catch(() => undefined);
    await up.engine?.dispose().catch(() => undefined);
    process.exit(code);
  };
  process.on('SIGTERM', () => void stop(0, 'SIGTERM: shutting down'));
  process.on('SIGINT', () => void stop(0, 'SIGINT: shutting down'));
  watchParent(args.parentPid, args.watchStdin, () => void stop(0, 'parent process gone: shutting down'));

  const ctxSize = args.ctxSize ?? defaultCtxSize(args.parallel);
  log(`loading ${args.model} (parallel ${args.parallel}, batch ${args.batchSize}, threads ${args.threads}, ctx ${ctxSize})`);
  const t0 = performance.now();
  const engine = await LlamaEngine.create({ modelPath: args.model, parallel: args.parallel, batchSize: args.batchSize, threads: args.threads, ctxSize, fullBatches: args.fullBatches, log });
  up.engine = engine;
  if (stopping) return;
  const modelId = args.alias ?? engine.modelName;
  const http = new LocalHttpServer(engine, modelId, log);
  up.http = http;
  const port = await http.listen(args.port);
  log(`model loaded in ${Math.round(performance.now() - t0)} ms; ${args.parallel} slots of ${engine.slotContextSize} tokens; listening on http://127.0.0.1:${port}`);
  process.stdout.write(`${JSON.stringify({ event: 'listening', port, url: `http://127.0.0.1:${port}`, model: modelId, pid: process.pid, slotContext: engine.slotContextSize, cpuBackend: engine.cpuBackend.kind })}\n`);
}

async function main(): Promise<void> {
  let args: ServerArgs;
  try {
    args = parseArgs(process.argv.slice(2));
  } catch (e) {
    log(`error: ${(e as Error).message}`);
    process.exit(2);
  }
  try {
    if (args.supervise) await supervise(args);
    else await serve(args);
  } catch (e) {
    log(`error: ${(e as Error).message}`);
    process.exit(1);
  }
}

void main();
