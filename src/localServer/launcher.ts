// Starts a local llama.cpp server in its own process and hands back {url, pid, stop}: the bundled
// server (node-llama-cpp, dist/localServer.mjs) or a real llama-server binary. Used by the CLI and
// the extension. The model is checked before anything starts; readiness is /health; the server
// exits when this process dies (it watches its stdin pipe and our pid).
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { createInterface } from 'node:readline';
import type { GgufHeader } from './gguf';
import { checkMemory, resolveModel } from './model';
import { defaultCtxSize, defaultThreads, DEFAULT_BATCH_SIZE, DEFAULT_PARALLEL, DEFAULT_READY_TIMEOUT_MS, STOP_GRACE_MS } from './defaults';
import { findLlamaServer, serverBundlePath } from './paths';
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

/** Resolves when nothing listens on 127.0.0.1:port; a clear error when something does. */
function checkPortFree(port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', (e: NodeJS.ErrnoException) => {
      reject(new LocalServerError(e.code === 'EADDRINUSE' ? `port ${port} on 127.0.0.1 is already in use (pick another port, or 0 for any free port)` : `cannot listen on port ${port}: ${e.message}`));
    });
    s.listen(port, '127.0.0.1', () => {
      const addr = s.address();
      const got = typeof addr === 'object' && addr ? addr.port : port;
      s.close(() => resolve(got));
    });
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

export async function startLocalServer(options: LocalServerOptions): Promise<LocalServerHandle> {
  const backend = options.backend ?? 'bundled';
  if (backend !== 'bundled' && backend !== 'llama-server') throw new LocalServerError(`unknown backend ${JSON.stringify(backend)} (bundled or llama-server)`);
  const parallel = positiveInt('parallel', options.parallel, DEFAULT_PARALLEL);
  const batchSize = positiveInt('batchSize', options.batchSize, DEFAULT_BATCH_SIZE);
  const threads = positiveInt('threads', options.threads, defaultThreads());
  const ctxSize = positiveInt('ctxSize', options.ctxSize, defaultCtxSize(parallel), 64);
  const requestedPort = positiveInt('port', options.port, 0, 0);
  if (requestedPort > 65535) throw new LocalServerError(`port must be at most 65535 (got ${requestedPort})`);
  const onLog = options.onLog ?? (() => undefined);

  // Everything that can be wrong with the input is found before a process starts.
  const bin = backend === 'llama-server' ? findLlamaServer(options.llamaServerPath) : undefined;
  if (backend === 'llama-server' && !bin) {
    throw new LocalServerError(
      options.llamaServerPath
        ? `llama-server not found or not executable: ${options.llamaServerPath}`
        : 'llama-server not found on PATH or in the cache: build it with `npm run build:llama-server`, or give its path',
    );
  }
  const model = await resolveModel(options.model);
  checkMemory(model.path, model.header, ctxSize);
  let port = requestedPort;
  if (port !== 0) await checkPortFree(port);

  const bundle = serverBundlePath();
  if (!existsSync(bundle)) throw new LocalServerError(`the server bundle ${bundle} is missing: run \`npm run build\` first`);
  let args: string[];
  if (backend === 'bundled') {
    args = [bundle, '--model', model.path, '--alias', model.alias, '--port', String(port), '--parallel', String(parallel), '--batch-size', String(batchSize), '--threads', String(threads), '--ctx-size', String(ctxSize)];
    if (options.fullBatches === false) args.push('--no-full-batches');
  } else {
    // llama-server cannot report a port it picked: pick a free one here.
    if (port === 0) port = await checkPortFree(0);
    const ubatch = Math.min(batchSize, 512);
    args = [bundle, '--supervise', '--', bin!, '-m', model.path, '--alias', model.alias, '--host', '127.0.0.1', '--port', String(port), '-np', String(parallel), '-b', String(batchSize), '-ub', String(ubatch), '-t', String(threads), '-tb', String(threads), '-c', String(ctxSize), '-ngl', '0', '--no-webui'];
    // As the bundled server does: a synthetic model's byte and control tokens are never sampled
    // (random weights would pick them, and llama-server rejects the broken UTF-8 they make).
    if (model.synthetic) for (const id of unsampleableTokens(model.header)) args.push('-l', `${id}-inf`);
  }
  // Supervision flags go before `--`.
  args.splice(1, 0, '--parent-pid', String(process.pid), '--watch-stdin');

  const tail: string[] = [];
  const pushLog = (line: string) => {
    tail.push(line);
    if (tail.length > LOG_TAIL) tail.shift();
    onLog(line);
  };
  // Its own process group, so that Ctrl+C in a terminal reaches only us (we stop it cleanly) and a
  // SIGKILL reaches llama-server behind the supervisor too.
  const child: ChildProcess = spawn(process.execPath, args, { stdio: ['pipe', 'pipe', 'pipe'], detached: true, env: { ...process.env, ELECTRON_RUN_AS_NODE: '1' } }); // in VS Code, execPath is Electron
  child.stdin?.on('error', () => undefined);
  let listening: { port: number; model?: string } | undefined;
  const exited = new Promise<number | null>((resolve) => {
    child.once('exit', (code, signal) => resolve(code ?? (signal ? null : 1)));
    child.once('error', (e) => {
      pushLog(`cannot start the server: ${e.message}`);
      resolve(127);
    });
  });
  const rlOut = createInterface({ input: child.stdout! });
  rlOut.on('line', (line) => {
    if (line.startsWith('{"event":')) {
      try {
        const ev = JSON.parse(line) as { event: string; port?: number; model?: string };
        if (ev.event === 'listening' && typeof ev.port === 'number') listening = { port: ev.port, model: ev.model };
        return;
      } catch {
        // an ordinary log line
      }
    }
    pushLog(line);
  });
  createInterface({ input: child.stderr! }).on('line', pushLog);

  let stopping: Promise<void> | undefined;
  const killGroup = (sig: NodeJS.Signals) => {
    try {
      if (child.pid) process.kill(-child.pid, sig);
    } catch {
      try {
        child.kill(sig);
      } catch {
        // already gone
      }
    }
  };
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      killGroup('SIGTERM');
      const done = await Promise.race([exited.then(() => true), sleep(STOP_GRACE_MS).then(() => false)]);
      if (!done) {
        pushLog(`the server did not stop within ${STOP_GRACE_MS} ms: SIGKILL`);
        killGroup('SIGKILL');
        await exited;
      }
      child.stdin?.destroy();
    })();
    return stopping;
  };

  // Readiness: /health answers 200 (llama-server answers 503 while loading).
  const timeoutMs = options.readyTimeoutMs ?? DEFAULT_READY_TIMEOUT_MS;
  const deadline = performance.now() + timeoutMs;
  let exitCode: number | null | undefined;
  void exited.then((c) => {
    exitCode = c;
  });
  let url: string | undefined;
  while (true) {
    if (exitCode !== undefined) {
      await sleep(50); // let the last log lines arrive
      throw new LocalServerError(`the ${backend} server exited during start-up (exit code ${exitCode})`, tail.slice(), exitCode);
    }
    if (performance.now() > deadline) {
      await stop();
      throw new LocalServerError(`the ${backend} server was not ready within ${Math.round(timeoutMs / 1000)} s`, tail.slice());
    }
    const p = backend === 'bundled' ? listening?.port : port;
    if (p !== undefined) {
      const candidate = `http://127.0.0.1:${p}`;
      const ac = new AbortController();
      const t = setTimeout(() => ac.abort(), 2000);
      const ok = await healthy(candidate, ac.signal);
      clearTimeout(t);
      if (ok) {
        url = candidate;
        break;
      }
    }
    await sleep(backend === 'bundled' ? 50 : 200);
  }
  void exited.then((code) => {
    if (!stopping) pushLog(`the ${backend} server exited unexpectedly (exit code ${code})`);
  });
  return {
    url,
    pid: child.pid!,
    model: listening?.model ?? model.alias,
    backend,
    exited,
    stop,
    logTail: () => tail.slice(),
  };
}
