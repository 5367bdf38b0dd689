// `llm-profiler run`: flags → workload → engine → table (or JSON) and, with --out, a run file.
import { readFile } from 'node:fs/promises';
import type { EndpointSpec, Prompt, RunFile, SloSpec, WorkloadSpec } from '../engine/types';
import { defaultWorkload, workloadProblems } from '../engine/workload';
import { parsePromptFile } from '../engine/promptFiles';
import { loadDataset } from '../engine/dataset';
import { TOOL_VERSION, writeRunFile } from '../engine/runFile';
import { authHeaders } from '../engine/redact';
import { parseRunArgs, RUN_USAGE, UsageError } from './args';
import type { RunArgs } from './args';
import { formatProgressLine, formatRunTable } from './table';

/** Where the command writes; injectable for tests, the process's own by default. */
export interface CliIo {
  readonly stdout: NodeJS.WritableStream & { isTTY?: boolean };
  readonly stderr: NodeJS.WritableStream & { isTTY?: boolean };
  readonly env: NodeJS.ProcessEnv;
}

const processIo = (): CliIo => ({ stdout: process.stdout, stderr: process.stderr, env: process.env });

export const EXIT_OK = 0;
export const EXIT_FAILED = 1;
export const EXIT_USAGE = 2;
export const EXIT_SLO = 3;
export const EXIT_INTERRUPTED = 130;

export interface ResolvedEndpoint {
  readonly endpoint: EndpointSpec;
  readonly detectedApi: boolean;
  /** Stops whatever was started for the run (the bundled local server); absent for a given --url. */
  readonly stop?: () => Promise<void>;
}

/**
 * THE place where `run` gets its endpoint. With --url: that URL (the API detected when --api auto,
 * the model defaulted to the first one the server lists). Without --url: the bundled llama.cpp
 * server on a synthetic model (or --model-file), started on 127.0.0.1 for this run and stopped after it.
 */
export async function resolveEndpointForRun(args: RunArgs, apiKey: string | undefined, onLog?: (line: string) => void): Promise<ResolvedEndpoint> {
  if (args.url === undefined) {
    const { startLocalServer } = await import('../localServer/launcher');
    // One slot per request in flight, so the server never queues what the client meant to run in parallel.
    const parallel = args.mode.kind === 'closed' ? (args.mode.concurrency ?? 1) : (args.mode.maxConcurrency ?? 4);
    const server = await startLocalServer({
      model: args.localModel ?? { kind: 'preset', preset: 'tiny' },
      parallel: Math.max(1, parallel),
      ...(onLog ? { onLog } : {}),
    });
    return {
      endpoint: { name: 'local llama.cpp (bundled)', url: server.url, api: 'openai-chat', model: server.model },
      detectedApi: false,
      stop: () => server.stop(),
    };
  }
  const headers = Object.keys(args.headers).length > 0 ? args.headers : undefined;
  let api = args.api;
  let detectedApi = false;
  if (api === 'auto') {
    const { detectApi } = await import('../engine/detect');
    api = await detectApi(args.url, { ...(apiKey ? { apiKey } : {}), ...(args.apiKeyHeader ? { apiKeyHeader: args.apiKeyHeader } : {}), ...(headers ? { headers: { ...headers } } : {}) });
    detectedApi = true;
  }
  const model = args.model ?? (await firstModel(args.url, api, apiKey, headers, args.apiKeyHeader));
  return {
    endpoint: { url: args.url, api, ...(model !== undefined ? { model } : {}), ...(headers ? { headers } : {}), ...(args.apiKeyHeader ? { apiKeyHeader: args.apiKeyHeader } : {}) },
    detectedApi,
  };
}

/** The first model the server lists (/v1/models, or /api/tags for Ollama); undefined when it lists none or cannot say. */
export async function firstModel(url: string, api: EndpointSpec['api'], apiKey: string | undefined, headers?: Readonly<Record<string, string>>, apiKeyHeader?: string): Promise<string | undefined> {
  const base = url.replace(/\/+$/, '').replace(/\/v1$/, '');
  const path = api === 'ollama' ? '/api/tags' : '/v1/models';
  try {
    const res = await fetch(base + path, {
      headers: { accept: 'application/json', ...headers, ...authHeaders(apiKey, apiKeyHeader) },
      signal: AbortSignal.timeout(2000),
    });
    if (!res.ok) return undefined;
    const json = (await res.json()) as { data?: { id?: unknown }[]; models?: { name?: unknown }[] };
    const first = api === 'ollama' ? json.models?.[0]?.name : json.data?.[0]?.id;
    return typeof first === 'string' && first !== '' ? first : undefined;
  } catch {
    return undefined;
  }
}

/** The workload the flags describe (defaults from defaultWorkload). */
export function workloadFromArgs(args: RunArgs, slo: SloSpec | undefined): WorkloadSpec {
  const o: { -readonly [K in keyof WorkloadSpec]?: WorkloadSpec[K] } = {};
  o.mode = args.mode.kind === 'closed' ? { kind: 'closed', concurrency: args.mode.concurrency ?? 1 } : args.mode;
  if (args.requests !== undefined) o.requests = args.requests;
  if (args.durationS !== undefined) o.durationS = args.durationS;
  if (args.warmup !== undefined) o.warmup = args.warmup;
  if (args.maxTokens !== undefined) o.maxTokens = args.maxTokens;
  o.prompt = args.prompt.kind === 'synthetic' ? { kind: 'synthetic', tokens: args.prompt.tokens ?? 256, sharedPrefix: args.prompt.sharedPrefix } : args.prompt;
  o.ignoreEos = args.ignoreEos;
  if (args.seed !== undefined) o.seed = args.seed;
  if (args.temperature !== undefined) o.temperature = args.temperature;
  if (args.timeoutS !== undefined) o.timeoutMs = args.timeoutS * 1000;
  if (args.idleTimeoutS !== undefined) o.idleTimeoutMs = args.idleTimeoutS * 1000;
  if (slo !== undefined) o.slo = slo;
  if (args.percentiles !== undefined) o.percentiles = args.percentiles;
  return defaultWorkload(o);
}

/** Prompts from --prompt-file / --dataset (and a prompt file's SLO). Bad files are usage errors naming the flag. */
async function loadPrompts(args: RunArgs): Promise<{ prompts?: Prompt[]; slo?: SloSpec; warnings: string[] }> {
  const p = args.prompt;
  if (p.kind === 'synthetic') return { warnings: [] };
  if (p.kind === 'dataset') {
    try {
      return { prompts: await loadDataset(p.path), warnings: [] };
    } catch (e) {
      throw new UsageError(`--dataset: ${(e as Error).message}`, '--dataset');
    }
  }
  let text: string;
  try {
    text = await readFile(p.path, 'utf8');
  } catch (e) {
    throw new UsageError(`--prompt-file: cannot read ${p.path} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`, '--prompt-file');
  }
  const parsed = parsePromptFile(p.path, text);
  const where = (line?: number) => `${p.path}${line !== undefined ? `:${line + 1}` : ''}`;
  if (parsed.prompts.length === 0) {
    const e = parsed.errors[0];
    throw new UsageError(`--prompt-file: ${where(e?.line)}: ${e?.message ?? 'no prompt in the file'}`, '--prompt-file');
  }
  return {
    prompts: parsed.prompts.map((x) => x.prompt),
    ...(parsed.slo ? { slo: parsed.slo } : {}),
    warnings: parsed.errors.map((e) => `${where(e.line)}: ${e.message}`),
  };
}

function exitCodeFor(run: RunFile, failOnSlo: boolean): number {
  if (run.summary.failed > 0) return EXIT_FAILED;
  if (failOnSlo && (run.summary.sloMissed?.length ?? 0) > 0) return EXIT_SLO;
  return EXIT_OK;
}

/** Runs `llm-profiler run` with argv (after "run"); resolves with the exit code. Never rejects. */
export async function runCommand(argv: readonly string[], io: CliIo = processIo()): Promise<number> {
  const err = (line: string) => io.stderr.write(`llm-profiler: ${line}\n`);
  let args: RunArgs;
  try {
    args = parseRunArgs(argv);
  } catch (e) {
    if (e instanceof UsageError) {
      err(`run: ${e.message}`);
      io.stderr.write('Try: llm-profiler run --help\n');
      return EXIT_USAGE;
    }
    throw e;
  }
  if (args.help) {
    io.stdout.write(RUN_USAGE);
    return EXIT_OK;
  }
  if (args.version) {
    io.stdout.write(`${TOOL_VERSION}\n`);
    return EXIT_OK;
  }

  const ac = new AbortController();
  let interrupts = 0;
  const onSigint = () => {
    interrupts++;
    if (interrupts === 1) {
      ac.abort();
      clearLive();
      io.stderr.write('llm-profiler: interrupted: stopping, keeping what finished (Ctrl+C again to quit at once)\n');
    } else {
      process.exit(EXIT_INTERRUPTED);
    }
  };
  process.on('SIGINT', onSigint);
  let resolved: ResolvedEndpoint | undefined;
  let live = false;
  const clearLive = () => {
    if (live) io.stderr.write('\x1b[2K\r');
    live = false;
  };
  try {
    let apiKey: string | undefined;
    if (args.apiKeyEnv !== undefined) {
      apiKey = io.env[args.apiKeyEnv];
      if (!apiKey) throw new UsageError(`--api-key-env: the environment variable ${args.apiKeyEnv} is not set`, '--api-key-env');
    }
    const loaded = await loadPrompts(args);
    for (const w of loaded.warnings) err(`warning: ${w}`);
    const slo = args.slo ?? loaded.slo;
    if (args.failOnSlo && slo === undefined) throw new UsageError('--fail-on-slo needs an SLO: give --slo (or an llmProfiler.slo block in the prompt file)', '--fail-on-slo');
    const workload = workloadFromArgs(args, slo);
    const problems = workloadProblems(workload);
    if (problems.length > 0) throw new UsageError(problems.join('; '));

    if (args.url === undefined) io.stderr.write('llm-profiler: no --url: starting the bundled llama.cpp server on 127.0.0.1 (synthetic model, CPU)\n');
    resolved = await resolveEndpointForRun(args, apiKey);
    if (args.url === undefined) io.stderr.write(`llm-profiler: local server ${resolved.endpoint.url} (model ${resolved.endpoint.model ?? '?'})\n`);
    if (ac.signal.aborted) return EXIT_INTERRUPTED;

    live = io.stderr.isTTY === true;
    const { runWorkload } = await import('../engine/runner');
    const run = await runWorkload(resolved.endpoint, workload, {
      ...(apiKey !== undefined ? { apiKey } : {}),
      signal: ac.signal,
      ...(loaded.prompts ? { prompts: loaded.prompts } : {}),
      ...(resolved.detectedApi ? { detectedApi: true } : {}),
      // After Ctrl+C the line is cleared for good: the messages that follow stay readable.
      ...(live ? { onProgress: (p) => live && io.stderr.write(`\x1b[2K\r${formatProgressLine(p)}`) } : {}),
    });
    clearLive();

    if (args.json) io.stdout.write(JSON.stringify(run.summary, null, 2) + '\n');
    else io.stdout.write(formatRunTable(run));

    let code = run.cancelled ? EXIT_INTERRUPTED : exitCodeFor(run, args.failOnSlo);
    if (args.out !== undefined) {
      try {
        await writeRunFile(args.out, run);
        if (!args.json) io.stderr.write(`llm-profiler: run written to ${args.out}\n`);
      } catch (e) {
        err(`could not write the run file ${args.out}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
        code = code === EXIT_OK ? EXIT_FAILED : code;
      }
    }
    return code;
  } catch (e) {
    clearLive();
    if (e instanceof UsageError) {
      err(`run: ${e.message}`);
      return EXIT_USAGE;
    }
    // PreflightError (endpoint down, bad key, unknown model) and anything else: one line, exit 1.
    const message = e instanceof Error ? e.message : String(e);
    err(message.split('\n')[0]!);
    return EXIT_FAILED;
  } finally {
    process.off('SIGINT', onSigint);
    await resolved?.stop?.().catch(() => undefined);
  }
}
