// Starts a local llama.cpp server in its own process and hands back {url, pid, stop}: the bundled
// server (node-llama-cpp, dist/localServer.mjs) or a real llama-server binary. Used by the CLI and
// the extension. The model is checked before anything starts; the server binds its port itself and
// the process reports it (see waitReady); readiness is /health; the server exits when this process
// dies (it watches its stdin pipe and our pid).
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { createInterface } from 'node:readline';
import type { GgufHeader } from './gguf';
import { checkMemory, resolveModel } from './model';
import { defaultCtxSize, defaultThreads, DEFAULT_BATCH_SIZE, DEFAULT_PARALLEL, DEFAULT_READY_TIMEOUT_MS, DEFAULT_SLOT_CONTEXT, STOP_GRACE_MS } from './defaults';
import { findLlamaServer, packageRoot, serverBundlePath } from './paths';
import { NodeLlamaCppMissingError, ownNodeLlamaCppEntry } from './nodeLlamaCpp';
import type { LocalServerHandle, LocalServerOptions } from './types';

const LOG_TAIL = 40;

/** Byte, control and unknown tokens of a synthetic model, end-of-generation tokens excepted. */
function unsampleableTokens(h: GgufHeader): number[] {
  const types = h.metadata.get('tokenizer.ggml.token_type');
  const tokens = h.metadata.get('tokenizer.ggml.tokens');
  const eos = Number(h.metadata.get('tokenizer.ggml.eos_token_id') ?? -1);
  if (!Array.isArray(types) || !Array.isArray(tokens)) return [];
  const out: number[] = [];
  types.forEach((t, i) => {
    if (t !== 1 && i !== eos && tokens[i] !== '<|im_end|>') out.push(i);
  });
  return out;
}

/** The server could not start or stopped; the message carries the exit code and the last log lines. */
export class LocalServerError extends Error {
  override readonly name = 'LocalServerError';
  constructor(
    message: string,
    readonly logTail: readonly string[] = [],
    readonly exitCode?: number | null,
  ) {
    super(logTail.length ? `${message}\n--- last server log lines ---\n${logTail.join('\n')}` : message);
  }
}

function positiveInt(name: string, v: number | undefined, def: number, min = 1): number {
  if (v === undefined) return def;
  if (!Number.isInteger(v) || v < min) throw new LocalServerError(`${name} must be an integer >= ${min} (got ${v})`);
  return v;
}

/** Resolves when nothing listens on 127.0.0.1:port; a clear error when something does (before a process starts). */
function checkPortFree(port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', (e: NodeJS.ErrnoException) => {
      reject(new LocalServerError(e.code === 'EADDRINUSE' ? `port ${port} on 127.0.0.1 is already in use (pick another port, or 0 for any free port)` : `cannot listen on port ${port}: ${e.message}`));
    });
    s.listen(port, '127.0.0.1', () => s.close(() => resolve()));
  });
}

async function healthy(url: string, signal: AbortSignal): Promise<boolean> {
  try {
    const r = await fetch(`${url}/health`, { signal });
    await r.arrayBuffer().catch(() => undefined);
    return r.status === 200;
  } catch {
    return false;
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The options checked and filled in, the binary found and the model resolved: everything before a process starts. */
interface Plan {
  readonly backend: 'bundled' | 'llama-server';
  readonly parallel: number;
  readonly batchSize: number;
  readonly threads: number;
  readonly ctxSize: number;
  /** 0: the server binds a free one. */
  readonly port: number;
  readonly bin: string | undefined;
  readonly model: Awaited<ReturnType<typeof resolveModel>>;
  readonly bundle: string;
}

async function plan(options: LocalServerOptions): Promise<Plan> {
  const backend = options.backend ?? 'bundled';
  if (backend !== 'bundled' && backend !== 'llama-server') throw new LocalServerError(`unknown backend ${JSON.stringify(backend)} (bundled or llama-server)`);
  const parallel = positiveInt('parallel', options.parallel, DEFAULT_PARALLEL);
  const batchSize = positiveInt('batchSize', options.batchSize, DEFAULT_BATCH_SIZE);
  const threads = positiveInt('threads', options.threads, defaultThreads());
  const slotContext = positiveInt('slotContext', options.slotContext, DEFAULT_SLOT_CONTEXT, 64);
  const ctxSize = positiveInt('ctxSize', options.ctxSize, defaultCtxSize(parallel, slotContext), 64);
  const requestedPort = positiveInt('port', options.port, 0, 0);
  if (requestedPort > 65535) throw new LocalServerError(`port must be at most 65535 (got ${requestedPort})`);

  const bin = backend === 'llama-server' ? findLlamaServer(options.llamaServerPath) : undefined;
  if (backend === 'llama-server' && !bin) {
    throw new LocalServerError(
      options.llamaServerPath
        ? `llama-server not found or not executable: ${options.llamaServerPath}`
        : 'llama-server not found on PATH or in the cache: build it with `npm run build:llama-server`, or give its path',
    );
  }
  const model = await resolveModel(options.model);
  checkMemory(model.path, model.header, ctxSize, undefined, parallel);
  if (requestedPort !== 0) await checkPortFree(requestedPort);
  if (backend === 'bundled' && !ownNodeLlamaCppEntry()) throw new LocalServerError(new NodeLlamaCppMissingError(packageRoot()).message);
  const bundle = serverBundlePath();
  if (!existsSync(bundle)) throw new LocalServerError(`the server bundle ${bundle} is missing: run \`npm run build\` first`);
  // Port 0 for either backend: the server binds a free port itself and its supervisor reports it. A
  // port picked here and closed again could be taken by any local program before the server bound it.
  return { backend, parallel, batchSize, threads, ctxSize, port: requestedPort, bin, model, bundle };
}

/** The command line of the server process (the bundle, which supervises llama-server for that backend). */
function serverArgs(p: Plan, fullBatches: boolean | undefined): string[] {
  const { model } = p;
  let args: string[];
  if (p.backend === 'bundled') {
    args = [p.bundle, '--model', model.path, '--alias', model.alias, '--port', String(p.port), '--parallel', String(p.parallel), '--batch-size', String(p.batchSize), '--threads', String(p.threads), '--ctx-size', String(p.ctxSize)];
    if (fullBatches === false) args.push('--no-full-batches');
  } else {
    const ubatch = Math.min(p.batchSize, 512);
    args = [p.bundle, '--supervise', '--', p.bin!, '-m', model.path, '--alias', model.alias, '--host', '127.0.0.1', '--port', String(p.port), '-np', String(p.parallel), '-b', String(p.batchSize), '-ub', String(ubatch), '-t', String(p.threads), '-tb', String(p.threads), '-c', String(p.ctxSize), '-ngl', '0', '--no-webui', '--metrics'];
    // As the bundled server does: a synthetic model's byte and control tokens are never sampled
    // (random weights would pick them, and llama-server rejects the broken UTF-8 they make).
    if (model.synthetic) for (const id of unsampleableTokens(model.header)) args.push('-l', `${id}-inf`);
  }
  // Supervision flags go before `--`.
  args.splice(1, 0, '--parent-pid', String(process.pid), '--watch-stdin');
  return args;
}

/** The server process: its log tail, the port it reports listening on, its exit, and stopping it. */
class ServerProcess {
  readonly tail: string[] = [];
  readonly exited: Promise<number | null>;
  listening: { port: number; model?: string; slotContext?: number } | undefined;
  readonly #child: ChildProcess;
  readonly #onLog: (line: string) => void;
  #stopping: Promise<void> | undefined;

  constructor(args: readonly string[], onLog: (line: string) => void) {
    this.#onLog = onLog;
    // Its own process group, so that Ctrl+C in a terminal reaches only us (we stop it cleanly) and a
    // SIGKILL reaches llama-server behind the supervisor too.
    const child = spawn(process.execPath, args, { stdio: ['pipe', 'pipe', 'pipe'], detached: true, env: { ...process.env, ELECTRON_RUN_AS_NODE: '1' } }); // in VS Code, execPath is Electron
    this.#child = child;
    child.stdin?.on('error', () => undefined);
    this.exited = new Promise<number | null>((resolve) => {
      child.once('exit', (code, signal) => resolve(code ?? (signal ? null : 1)));
      child.once('error', (e) => {
        this.log(`cannot start the server: ${e.message}`);
        resolve(127);
      });
    });
    createInterface({ input: child.stdout! }).on('line', (line) => this.#onStdout(line));
    createInterface({ input: child.stderr! }).on('line', (line) => this.log(line));
  }

  get pid(): number {
    return this.#child.pid!;
  }

  get stopping(): boolean {
    return this.#stopping !== undefined;
  }

  log(line: string): void {
    this.tail.push(line);
    if (this.tail.length > LOG_TAIL) this.tail.shift();
    this.#onLog(line);
  }

  /** SIGTERM to the group, SIGKILL after the grace period. */
  stop(): Promise<void> {
    this.#stopping ??= (async () => {
      const child = this.#child;
      if (child.exitCode !== null || child.signalCode !== null) return;
      this.#killGroup('SIGTERM');
      // the grace timer is cleared once the server is gone: a pending one would hold the process open for its 3 s
      let grace: NodeJS.Timeout | undefined;
      const timedOut = new Promise<false>((resolve) => (grace = setTimeout(() => resolve(false), STOP_GRACE_MS)));
      const done = await Promise.race([this.exited.then(() => true), timedOut]);
      clearTimeout(grace);
      if (!done) {
        this.log(`the server did not stop within ${STOP_GRACE_MS} ms: SIGKILL`);
        this.#killGroup('SIGKILL');
        await this.exited;
      }
      child.stdin?.destroy();
    })();
    return this.#stopping;
  }

  #onStdout(line: string): void {
    if (line.startsWith('{"event":')) {
      try {
        const ev = JSON.parse(line) as { event: string; port?: number; model?: string; slotContext?: number };
        if (ev.event === 'listening' && typeof ev.port === 'number') this.listening = { port: ev.port, model: ev.model, ...(typeof ev.slotContext === 'number' ? { slotContext: ev.slotContext } : {}) };
        return;
      } catch {
        // an ordinary log line
      }
    }
    this.log(line);
  }

  #killGroup(sig: NodeJS.Signals): void {
    try {
      if (this.#child.pid) process.kill(-this.#child.pid, sig);
    } catch {
      try {
        this.#child.kill(sig);
      } catch {
        // already gone
      }
    }
  }
}

/**
 * Readiness: /health answers 200 (llama-server answers 503 while loading) on the port the server
 * process reported over its stdout pipe, which only our own code writes: the bundled server's port
 * as it bound it, llama-server's as the kernel shows its supervisor. Never a port merely expected:
 * whatever else answers there is not asked. Resolves with the URL.
 */
async function waitReady(proc: ServerProcess, backend: Plan['backend'], port: number, timeoutMs: number): Promise<string> {
  const deadline = performance.now() + timeoutMs;
  let exitCode: number | null | undefined;
  void proc.exited.then((c) => {
    exitCode = c;
  });
  for (;;) {
    if (exitCode !== undefined) {
      await sleep(50); // let the last log lines arrive
      throw new LocalServerError(`the ${backend} server exited during start-up (exit code ${exitCode})`, proc.tail.slice(), exitCode);
    }
    if (performance.now() > deadline) {
      await proc.stop();
      throw new LocalServerError(`the ${backend} server was not ready within ${Math.round(timeoutMs / 1000)} s`, proc.tail.slice());
    }
    const p = proc.listening?.port;
    if (p !== undefined && port !== 0 && p !== port) {
      await proc.stop();
      throw new LocalServerError(`the ${backend} server listens on port ${p}, not on port ${port} as asked`, proc.tail.slice());
    }
    if (p !== undefined) {
      const candidate = `http://127.0.0.1:${p}`;
      const ac = new AbortController();
      const t = setTimeout(() => ac.abort(), 2000);
      const ok = await healthy(candidate, ac.signal);
      clearTimeout(t);
      if (ok) return candidate;
    }
    await sleep(backend === 'bundled' ? 50 : 200);
  }
}

export async function startLocalServer(options: LocalServerOptions): Promise<LocalServerHandle> {
  // Everything that can be wrong with the input is found before a process starts.
  const p = await plan(options);
  const proc = new ServerProcess(serverArgs(p, options.fullBatches), options.onLog ?? (() => undefined));
  const url = await waitReady(proc, p.backend, p.port, options.readyTimeoutMs ?? DEFAULT_READY_TIMEOUT_MS);
  void proc.exited.then((code) => {
    if (!proc.stopping) proc.log(`the ${p.backend} server exited unexpectedly (exit code ${code})`);
  });
  return {
    url,
    pid: proc.pid,
    model: proc.listening?.model ?? p.model.alias,
    backend: p.backend,
    exited: proc.exited,
    stop: () => proc.stop(),
    logTail: () => proc.tail.slice(),
    slotContext: proc.listening?.slotContext ?? Math.floor(p.ctxSize / p.parallel),
    parallel: p.parallel,
  };
}
