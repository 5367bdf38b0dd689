// `llm-profiler serve`: starts the local llama.cpp server, prints its URL, runs until Ctrl+C (or
// SIGTERM), then stops it cleanly. Exit 2 for a bad flag (named), 1 when the server cannot start.
import { startLocalServer } from '../localServer/launcher';
import { parseShapeSpec } from '../localServer/synthetic';
import { DEFAULT_BATCH_SIZE, DEFAULT_PARALLEL, DEFAULT_PRESET, defaultThreads } from '../localServer/defaults';
import type { LocalServerOptions, SyntheticPreset } from '../localServer/types';

export const SERVE_USAGE = `Usage: llm-profiler serve [options]

Starts a local llama.cpp server (OpenAI-compatible, on 127.0.0.1) and keeps it running until Ctrl+C.

  --model tiny|small|medium|FILE.gguf   a synthetic model (made and cached on first use) or your own GGUF (default ${DEFAULT_PRESET})
  --model shape:layers=L,width=W,heads=H,kv-heads=K,ffn=F,vocab=V,type=f16|q8_0[,base=tiny|small|medium]
                                       a synthetic model of a custom shape (unset keys from the base, tiny by default)
  --port N                  port on 127.0.0.1; 0 picks a free one (default 0)
  --parallel N              sequences decoded together (slots); requests beyond wait in a queue (default ${DEFAULT_PARALLEL})
  --batch-size N            prefill chunk: most tokens per engine step (default ${DEFAULT_BATCH_SIZE})
  --threads N               CPU threads (default ${defaultThreads()} on this machine)
  --ctx-size N              total context over all slots (default 2048 per slot)
  --backend bundled|llama-server   node-llama-cpp in its own process, or a real llama-server (default bundled)
  --llama-server PATH       the llama-server binary (default: PATH, then \`npm run build:llama-server\`'s cache)
  --ready-timeout S         seconds to wait for the server to be ready (default 60)
  --quiet                   do not print the server's log lines
  -h, --help                this help`;

const PRESETS: readonly SyntheticPreset[] = ['tiny', 'small', 'medium'];

class FlagError extends Error {}

export function parseServeArgs(argv: readonly string[]): { options: LocalServerOptions; quiet: boolean; help: boolean } {
  let model: LocalServerOptions['model'];
  const o: { -readonly [K in keyof LocalServerOptions]?: LocalServerOptions[K] } = {};
  let quiet = false;
  let help = false;
  for (let i = 0; i < argv.length; i++) {
    let flag = argv[i]!;
    let inline: string | undefined;
    const eq = flag.indexOf('=');
    if (flag.startsWith('--') && eq > 0) {
      inline = flag.slice(eq + 1);
      flag = flag.slice(0, eq);
    }
    const value = (): string => {
      const v = inline ?? argv[++i];
      if (v === undefined || (inline === undefined && v.startsWith('--'))) throw new FlagError(`${flag} needs a value`);
      return v;
    };
    const int = (min: number, max = Number.MAX_SAFE_INTEGER): number => {
      const v = value();
      const n = Number(v);
      if (!/^\d+$/.test(v) || n < min || n > max) throw new FlagError(`${flag} must be an integer from ${min} to ${max} (got ${JSON.stringify(v)})`);
      return n;
    };
    switch (flag) {
      case '--model': {
        const v = value();
        if (v.startsWith('shape:')) {
          try { model = { kind: 'shape', shape: parseShapeSpec(v) }; } catch (e) { throw new FlagError(`--model: ${(e as Error).message}`); }
          break;
        }
        model = (PRESETS as readonly string[]).includes(v) ? { kind: 'preset', preset: v as SyntheticPreset } : { kind: 'file', path: v };
        if (model.kind === 'file' && !/\.gguf$/i.test(v)) throw new FlagError(`--model must be tiny, small, medium, shape:… or a .gguf file (got ${JSON.stringify(v)})`);
        break;
      }
      case '--port': o.port = int(0, 65535); break;
      case '--parallel': o.parallel = int(1, 256); break;
      case '--batch-size': o.batchSize = int(1, 65536); break;
      case '--threads': o.threads = int(1, 1024); break;
      case '--ctx-size': o.ctxSize = int(64); break;
      case '--backend': {
        const v = value();
        if (v !== 'bundled' && v !== 'llama-server') throw new FlagError(`--backend must be bundled or llama-server (got ${JSON.stringify(v)})`);
        o.backend = v;
        break;
      }
      case '--llama-server': o.llamaServerPath = value(); o.backend ??= 'llama-server'; break;
      case '--ready-timeout': o.readyTimeoutMs = int(1) * 1000; break;
      case '--quiet': quiet = true; break;
      case '-h':
      case '--help': help = true; break;
      default: throw new FlagError(`unknown flag ${flag}`);
    }
  }
  if (model) o.model = model;
  return { options: o, quiet, help };
}

export async function serveCommand(argv: string[]): Promise<number> {
  let parsed: ReturnType<typeof parseServeArgs>;
  try {
    parsed = parseServeArgs(argv);
  } catch (e) {
    process.stderr.write(`llm-profiler serve: ${(e as Error).message}\n\n${SERVE_USAGE}\n`);
    return 2;
  }
  if (parsed.help) {
    process.stdout.write(`${SERVE_USAGE}\n`);
    return 0;
  }
  const { options, quiet } = parsed;
  const model = options.model ?? { kind: 'preset', preset: DEFAULT_PRESET };
  process.stderr.write(`Starting the ${options.backend ?? 'bundled'} server on ${model.kind === 'preset' ? `the synthetic ${model.preset} model` : model.kind === 'shape' ? 'a synthetic model of a custom shape' : model.path}...\n`);
  let handle;
  try {
    handle = await startLocalServer({ ...options, model, onLog: quiet ? undefined : (line) => process.stderr.write(`  [server] ${line}\n`) });
  } catch (e) {
    process.stderr.write(`llm-profiler serve: ${(e as Error).message}\n`);
    return 1;
  }
  // Listening for Ctrl+C before the URL is out: a caller may signal as soon as it reads it.
  const stopped = new Promise<'signal'>((resolve) => {
    const on = () => resolve('signal');
    process.once('SIGINT', on);
    process.once('SIGTERM', on);
  });
  process.stdout.write(`${handle.url}\n`);
  process.stderr.write(
    `Serving ${handle.model} (${handle.backend}, pid ${handle.pid}) at ${handle.url}\n` +
      `  OpenAI-compatible: ${handle.url}/v1/chat/completions, /v1/completions, /v1/models; /health\n` +
      `  Profile it: llm-profiler run --url ${handle.url}\n` +
      `Press Ctrl+C to stop.\n`,
  );
  const why = await Promise.race([stopped, handle.exited.then(() => 'exited' as const)]);
  if (why === 'exited') {
    const code = await handle.exited;
    process.stderr.write(`llm-profiler serve: the server exited (exit code ${code})\n${(handle.logTail?.() ?? []).slice(-15).join('\n')}\n`);
    return 1;
  }
  process.stderr.write('Stopping the server...\n');
  await handle.stop();
  process.stderr.write('Stopped.\n');
  return 0;
}
