// `llm-profiler sweep` and `llm-profiler prefill-dial`: flags → engine → a table on stdout, a run file.
// Exit codes as `run`: 0 ok, 1 some requests failed, 2 a usage error naming the flag, 3 with
// --fail-on-slo: no point of the sweep meets every SLO (sweep), or a configuration misses one (dial).
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { ceilingTokensPerSecond } from '../engine/fit';
import { parsePromptFile } from '../engine/promptFiles';
import { writeRunFile } from '../engine/runFile';
import { parseSlo } from '../engine/slo';
import { defaultConcurrencies, runPrefillDial, runSweep } from '../engine/sweep';
import { dialFigures } from '../engine/fit';
import type { DialServer, PrefillDialSpec, SweepDimension } from '../engine/sweep';
import type { ApiKind, EndpointSpec, RunFile, SloSpec, WorkloadSpec } from '../engine/types';
import { API_KINDS } from '../engine/types';
import { defaultWorkload, workloadProblems } from '../engine/workload';
import type { LocalServerHandle, LocalServerOptions, SyntheticPreset } from '../localServer/types';

export class UsageError extends Error {
  override readonly name = 'UsageError';
}

const SWEEP_FLAGS = new Set([
  'url', 'api', 'model', 'api-key-env', 'concurrency', 'rate', 'burstiness', 'prompt-tokens', 'prompt-file', 'requests-per-point',
  'requests', 'duration', 'max-tokens', 'warmup', 'slo', 'fail-on-slo', 'out', 'json', 'max-concurrency', 'concurrency-limit', 'no-early-stop',
  'seed', 'timeout', 'idle-timeout', 'shared-prefix', 'parallel', 'preset', 'model-file', 'threads', 'help',
]);
const DIAL_FLAGS = new Set([
  'batch-sizes', 'parallel', 'preset', 'model-file', 'threads', 'ctx-size', 'decode-streams', 'short-prompt-tokens',
  'short-max-tokens', 'long-prompt-tokens', 'long-max-tokens', 'long-rate', 'duration', 'slo', 'fail-on-slo', 'out', 'json',
  'seed', 'timeout', 'idle-timeout', 'backend', 'llama-server', 'help',
]);
const BOOLEAN = new Set(['fail-on-slo', 'json', 'no-early-stop', 'shared-prefix', 'help']);

type Flags = Map<string, string>;

function parseFlags(argv: readonly string[], known: ReadonlySet<string>, command: string): Flags {
  const args = argv[0] === command ? argv.slice(1) : argv;
  const flags: Flags = new Map();
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (!a.startsWith('--')) throw new UsageError(`unexpected argument "${a}": flags start with --`);
    const eq = a.indexOf('=');
    const name = a.slice(2, eq >= 0 ? eq : undefined);
    if (!known.has(name)) throw new UsageError(`unknown flag --${name} for ${command}`);
    if (flags.has(name)) throw new UsageError(`--${name} given twice`);
    if (BOOLEAN.has(name)) {
      if (eq >= 0) throw new UsageError(`--${name} takes no value`);
      flags.set(name, 'true');
      continue;
    }
    let value: string | undefined;
    if (eq >= 0) value = a.slice(eq + 1);
    else {
      value = args[i + 1];
      if (value === undefined || value.startsWith('--')) throw new UsageError(`--${name} needs a value`);
      i++;
    }
    flags.set(name, value);
  }
  return flags;
}

function number(flags: Flags, name: string, opts: { integer?: boolean; min?: number } = {}): number | undefined {
  const text = flags.get(name);
  if (text === undefined) return undefined;
  const n = Number(text);
  if (text.trim() === '' || !Number.isFinite(n) || (opts.integer && !Number.isInteger(n)) || (opts.min !== undefined && n < opts.min)) {
    throw new UsageError(`--${name} must be ${opts.integer ? 'a whole number' : 'a number'}${opts.min !== undefined ? ` ≥ ${opts.min}` : ''}, got "${text}"`);
  }
  return n;
}

function list(flags: Flags, name: string, opts: { integer?: boolean } = {}): number[] | undefined {
  const text = flags.get(name);
  if (text === undefined) return undefined;
  const values = text.split(',').map((s) => s.trim());
  const out: number[] = [];
  for (const v of values) {
    const n = Number(v);
    if (v === '' || !Number.isFinite(n) || n <= 0 || (opts.integer && !Number.isInteger(n))) {
      throw new UsageError(`--${name} must list positive ${opts.integer ? 'whole numbers' : 'numbers'} separated by commas, got "${text}"`);
    }
    out.push(n);
  }
  return out;
}

function sloFlag(flags: Flags): SloSpec | undefined {
  const text = flags.get('slo');
  if (text === undefined) return undefined;
  try {
    return parseSlo(text);
  } catch (e) {
    throw new UsageError(`--slo: ${e instanceof Error ? e.message : String(e)}`);
  }
}

const SWEEP_USAGE = `usage: llm-profiler sweep [--url URL] [--api auto|${API_KINDS.join('|')}] [--model M] [--api-key-env VAR]
  (--concurrency 1,2,4,8 | --rate 1,2,4 [--burstiness B] [--max-concurrency N] | --prompt-tokens 128,512,2048 | --concurrency-limit N)
  [--requests-per-point N | --duration S] [--max-tokens N] [--prompt-tokens N] [--prompt-file F] [--warmup K]
  [--slo ttft=500,tpot=50,e2e=20000] [--fail-on-slo] [--no-early-stop] [--out FILE] [--json]
  default concurrencies: 1, 2, 4, … up to --concurrency-limit (32; 8 on the bundled server)
  without --url: the bundled local server ([--parallel P, default the largest concurrency] [--preset tiny|small|medium, default tiny]
  [--model-file F] [--threads T])`;

const DIAL_USAGE = `usage: llm-profiler prefill-dial [--batch-sizes 32,512] [--parallel N] [--preset tiny|small|medium (tiny)] [--model-file F]
  [--decode-streams N] [--short-prompt-tokens N] [--short-max-tokens N] [--long-prompt-tokens N] [--long-max-tokens N]
  [--long-rate R] [--duration S] [--slo ...] [--fail-on-slo] [--out FILE] [--json]
  [--ctx-size N] [--threads T] [--backend bundled|llama-server] [--llama-server PATH] [--seed N] [--timeout S] [--idle-timeout S]`;

/** `llm-profiler sweep ...`; returns the exit code. */
export async function sweepCommand(argv: readonly string[]): Promise<number> {
  let flags: Flags;
  let plan: { endpoint?: EndpointSpec; dimension: SweepDimension; values: number[]; workload: WorkloadSpec; apiKey?: string; failOnSlo: boolean };
  try {
    flags = parseFlags(argv, SWEEP_FLAGS, 'sweep');
    if (flags.has('help')) {
      process.stdout.write(`${SWEEP_USAGE}\n`);
      return 0;
    }
    plan = await planSweep(flags);
  } catch (e) {
    return usageFailure(e, SWEEP_USAGE);
  }
  const controller = new AbortController();
  const onSigint = () => controller.abort();
  process.once('SIGINT', onSigint);
  let server: LocalServerHandle | undefined;
  try {
    let endpoint = plan.endpoint;
    let detected = false;
    if (!endpoint) {
      server = await startBundled(flags, { parallel: number(flags, 'parallel', { integer: true, min: 1 }) ?? Math.max(...(plan.dimension === 'concurrency' ? plan.values : [4])) });
      endpoint = { url: server.url, api: 'openai-chat', model: server.model };
    } else if ((flags.get('api') ?? 'auto') === 'auto') {
      const { detectApi } = await import('../engine/detect');
      endpoint = { ...endpoint, api: await detectApi(endpoint.url, { ...(plan.apiKey ? { apiKey: plan.apiKey } : {}) }) };
      detected = true;
    }
    const live = process.stderr.isTTY && !flags.has('json');
    const run = await runSweep(
      endpoint,
      { dimension: plan.dimension, values: plan.values, workload: plan.workload, stopOnSaturation: !flags.has('no-early-stop') },
      {
        signal: controller.signal,
        ...(plan.apiKey ? { apiKey: plan.apiKey } : {}),
        ...(detected ? { detectedApi: true } : {}),
        ...(live
          ? {
              onProgress: (p) =>
                process.stderr.write(`\r${p.finished}${p.total ? `/${p.total}` : ''} requests · ${p.inFlight} in flight · ${(p.outputTokensPerSecond ?? 0).toFixed(0)} tok/s   `),
              onPoint: (pt) => process.stderr.write(`\r${pt.label}: ${pt.summary.outputTokensPerSecond.toFixed(1)} tok/s, TPOT p50 ${fmt(pt.summary.tpotMs.p50)} ms${' '.repeat(20)}\n`),
            }
          : {}),
      },
    );
    if (live) process.stderr.write('\x1b[2K\r');
    if (flags.has('json')) process.stdout.write(`${JSON.stringify(run.sweep, null, 2)}\n`);
    else process.stdout.write(formatSweep(run));
    // as `run`: interrupted 130; then --fail-on-slo 3 when no point meets every SLO at p99; failures 1
    let code = run.cancelled ? EXIT_INTERRUPTED : 0;
    if (!run.cancelled) {
      if (plan.failOnSlo && !run.sweep?.operatingPoint) {
        err('SLO missed: no point of the sweep meets every SLO at p99');
        code = 3;
      } else if (run.sweep!.points.some((p) => p.summary.failed > 0)) code = 1;
    }
    return await writeOut(flags.get('out'), run, code);
  } catch (e) {
    if (e instanceof UsageError) return usageFailure(e, SWEEP_USAGE);
    // PreflightError (endpoint down, bad key), a server that would not start: one line, exit 1
    err(`sweep: ${(e instanceof Error ? e.message : String(e)).split('\n')[0]}`);
    return 1;
  } finally {
    process.off('SIGINT', onSigint);
    await server?.stop().catch(() => undefined);
  }
}

const EXIT_INTERRUPTED = 130;

function err(line: string): void {
  process.stderr.write(`llm-profiler: ${line}\n`);
}

/** Writes the run file after the table is out; a write failure turns an ok exit into 1. */
async function writeOut(out: string | undefined, run: RunFile, code: number): Promise<number> {
  if (out === undefined) return code;
  try {
    await writeRunFile(resolve(out), run);
    err(`run written to ${resolve(out)}`);
    return code;
  } catch (e) {
    err(`could not write the run file ${out}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
    return code === 0 ? 1 : code;
  }
}

async function planSweep(flags: Flags) {
  const url = flags.get('url');
  const apiText = flags.get('api') ?? 'auto';
  if (apiText !== 'auto' && !API_KINDS.includes(apiText as ApiKind)) throw new UsageError(`--api must be auto or one of ${API_KINDS.join(', ')}, got "${apiText}"`);
  if (!url) for (const f of ['api', 'model', 'api-key-env']) if (flags.has(f)) throw new UsageError(`--${f} needs --url (without it the bundled local server is used)`);
  if (url) {
    try {
      const u = new URL(url);
      if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error();
    } catch {
      throw new UsageError(`--url must be an http(s) URL, got "${url}"`);
    }
  }
  let apiKey: string | undefined;
  const keyEnv = flags.get('api-key-env');
  if (keyEnv !== undefined) {
    apiKey = process.env[keyEnv];
    if (!apiKey) throw new UsageError(`--api-key-env ${keyEnv}: that environment variable is not set`);
  }

  const conc = list(flags, 'concurrency', { integer: true });
  const rates = list(flags, 'rate');
  const prompts = list(flags, 'prompt-tokens', { integer: true });
  const promptList = prompts && prompts.length > 1 ? prompts : undefined;
  const sweeping = [conc && conc.length > 1 ? 'concurrency' : undefined, rates ? 'rate' : undefined, promptList ? 'prompt-tokens' : undefined].filter(Boolean);
  if (sweeping.length > 1) throw new UsageError(`sweep one dimension at a time: got lists for --${sweeping.join(' and --')}`);
  if (rates && conc) throw new UsageError('--rate and --concurrency cannot be combined: a rate sweep is open loop');
  const maxC = number(flags, 'concurrency-limit', { integer: true, min: 1 });
  if (maxC !== undefined && (conc || rates || promptList)) throw new UsageError('--concurrency-limit sets the default concurrency list: give it without --concurrency, --rate or a --prompt-tokens list');
  // as for `run`: the open loop's cap on requests in flight
  const capInFlight = number(flags, 'max-concurrency', { integer: true, min: 1 });
  if (capInFlight !== undefined && !rates) throw new UsageError('--max-concurrency caps a --rate sweep (open loop); for the concurrency list use --concurrency or --concurrency-limit');
  let dimension: SweepDimension;
  let values: number[];
  if (rates) {
    dimension = 'rate';
    values = rates;
  } else if (promptList) {
    if (conc && conc[0] !== 1) throw new UsageError('a prompt-length sweep runs at concurrency 1: drop --concurrency');
    if (flags.has('prompt-file')) throw new UsageError('--prompt-file cannot be combined with a --prompt-tokens list');
    dimension = 'promptTokens';
    values = promptList;
  } else {
    dimension = 'concurrency';
    // the bundled server runs on this machine's CPU: a shorter default list there
    values = conc && conc.length > 0 ? conc : defaultConcurrencies(maxC ?? (url ? 32 : 8));
  }

  const promptFile = flags.get('prompt-file');
  let slo = sloFlag(flags);
  if (!slo && promptFile) {
    // SLOs where the prompts live: a prompt file's front matter, when --slo does not override it
    let parsed;
    try {
      parsed = parsePromptFile(resolve(promptFile), await readFile(resolve(promptFile), 'utf8'));
    } catch (e) {
      throw new UsageError(`--prompt-file ${promptFile}: ${e instanceof Error ? e.message : String(e)}`);
    }
    if (parsed.slo) slo = parsed.slo;
  }
  const failOnSlo = flags.has('fail-on-slo');
  if (failOnSlo && !slo) throw new UsageError('--fail-on-slo needs an SLO: give --slo (or a prompt file with slo: in its front matter)');

  const perPoint = number(flags, 'requests-per-point', { integer: true, min: 1 }) ?? number(flags, 'requests', { integer: true, min: 1 });
  if (flags.has('requests-per-point') && flags.has('requests')) throw new UsageError('give --requests-per-point or --requests, not both');
  const duration = number(flags, 'duration', { min: 0.001 });
  if (perPoint !== undefined && duration !== undefined) throw new UsageError('give --requests-per-point or --duration, not both');
  const timeout = number(flags, 'timeout', { min: 0.001 });
  const idle = number(flags, 'idle-timeout', { min: 0.001 });
  const burst = number(flags, 'burstiness', { min: 0.001 });
  if (burst !== undefined && !rates) throw new UsageError('--burstiness applies to a --rate sweep');
  const firstPrompt = prompts && !promptList ? prompts[0] : undefined;
  const overrides: Partial<WorkloadSpec> = {
    ...(rates ? { mode: { kind: 'open', rate: rates[0]!, burstiness: burst ?? 1, ...(capInFlight !== undefined ? { maxConcurrency: capInFlight } : {}) } } : {}),
    ...(duration !== undefined ? { durationS: duration } : { requests: perPoint ?? 16 }),
    ...(flags.has('max-tokens') ? { maxTokens: number(flags, 'max-tokens', { integer: true, min: 1 })! } : { maxTokens: 64 }),
    ...(flags.has('warmup') ? { warmup: number(flags, 'warmup', { integer: true, min: 0 })! } : {}),
    ...(flags.has('seed') ? { seed: number(flags, 'seed', { integer: true })! } : {}),
    ...(timeout !== undefined ? { timeoutMs: timeout * 1000 } : {}),
    ...(idle !== undefined ? { idleTimeoutMs: idle * 1000 } : {}),
    ...(promptFile
      ? { prompt: { kind: 'file' as const, path: resolve(promptFile) } }
      : { prompt: { kind: 'synthetic' as const, tokens: firstPrompt ?? (url ? 256 : 64), sharedPrefix: flags.has('shared-prefix') } }),
    ...(slo ? { slo } : {}),
  };
  const workload = defaultWorkload(overrides);
  const problems = workloadProblems(workload);
  if (problems.length) throw new UsageError(problems.join('; '));
  const modelName = flags.get('model');
  const endpoint: EndpointSpec | undefined = url
    ? { url, api: apiText === 'auto' ? 'openai-chat' : (apiText as ApiKind), ...(modelName ? { model: modelName } : {}) }
    : undefined;
  return { ...(endpoint ? { endpoint } : {}), dimension, values, workload, ...(apiKey ? { apiKey } : {}), failOnSlo };
}

function usageFailure(e: unknown, usage: string): number {
  process.stderr.write(`llm-profiler: ${e instanceof Error ? e.message : String(e)}\n${usage}\n`);
  return 2;
}

async function startBundled(flags: Flags, extra: Partial<LocalServerOptions>): Promise<LocalServerHandle> {
  const { startLocalServer } = await import('../localServer/launcher');
  const preset = (flags.get('preset') ?? 'tiny') as SyntheticPreset;
  if (!['tiny', 'small', 'medium'].includes(preset)) throw new UsageError(`--preset must be tiny, small or medium, got "${preset}"`);
  const file = flags.get('model-file');
  const threads = number(flags, 'threads', { integer: true, min: 1 });
  const ctx = number(flags, 'ctx-size', { integer: true, min: 16 });
  const backend = flags.get('backend');
  if (backend !== undefined && backend !== 'bundled' && backend !== 'llama-server') throw new UsageError(`--backend must be bundled or llama-server, got "${backend}"`);
  const serverPath = flags.get('llama-server');
  return startLocalServer({
    model: file ? { kind: 'file', path: resolve(file) } : { kind: 'preset', preset },
    port: 0,
    ...(threads !== undefined ? { threads } : {}),
    ...(ctx !== undefined ? { ctxSize: ctx } : {}),
    ...(backend ? { backend } : {}),
    ...(serverPath ? { llamaServerPath: resolve(serverPath) } : {}),
    ...extra,
  });
}

// ---- The table ----

function fmt(n: number | undefined, digits = 1): string {
  return n === undefined || !Number.isFinite(n) ? '-' : n.toFixed(digits);
}

function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

/** The sweep as text: a row per point, then the fit, knee, operating point and verdicts. */
export function formatSweep(run: RunFile): string {
  const sw = run.sweep;
  if (!sw) return 'not a sweep run\n';
  const rows = sw.points.map((p) => {
    const s = p.summary;
    const mark = [p.label === sw.operatingPoint?.label ? 'op' : '', p.label === sw.maxThroughputPoint?.label ? 'max' : '', p.label === sw.knee?.label ? 'knee' : '']
      .filter(Boolean)
      .join(',');
    return [
      p.label,
      fmt(s.requestsPerSecond, 2),
      fmt(s.outputTokensPerSecond),
      fmt(s.ttftMs.p50),
      fmt(s.ttftMs.p99),
      fmt(s.tpotMs.p50),
      fmt(s.tpotMs.p99),
      fmt(s.itlMs.p99),
      s.goodput === undefined ? '-' : fmt(s.goodput, 2),
      fmt(p.meanBatch, 2),
      String(s.failed),
      mark,
    ];
  });
  const out = [
    table(['point', 'req/s', 'tok/s', 'TTFT p50', 'TTFT p99', 'TPOT p50', 'TPOT p99', 'ITL p99', 'goodput', 'batch', 'errors', ''], rows),
    '',
  ];
  if (sw.fit) {
    out.push(
      `fit: TPOT(B) ≈ ${fmt(sw.fit.baseMs, 2)} ms + ${fmt(sw.fit.kMs, 3)} ms·B (B = ${sw.fitX === 'meanBatch' ? 'measured decoding batch' : 'concurrency'}), R² ${fmt(sw.fit.r2, 3)}; ceiling ≈ ${fmt(sw.fit.ceilingTokensPerSecond, 0)} tokens/s`,
    );
    if (sw.sloBatch !== undefined && sw.slo?.tpotMs !== undefined) out.push(`TPOT reaches the ${sw.slo.tpotMs} ms SLO at B ≈ ${fmt(sw.sloBatch, 1)}`);
  } else if (sw.residuals?.length) {
    const k = sw.residuals.length >= 2 ? (sw.residuals[1]!.predictedMs - sw.residuals[0]!.predictedMs) / (sw.residuals[1]!.batch - sw.residuals[0]!.batch || 1) : undefined;
    out.push(`fit: no ceiling (k = ${fmt(k, 3)} ms${k !== undefined && ceilingTokensPerSecond(k) === undefined ? ', TPOT does not rise' : ''})`);
  }
  if (sw.prefillFit) {
    const pf = sw.prefillFit;
    out.push(`prefill: TTFT ≈ ${fmt(pf.aMs, 1)} ms + ${fmt(pf.bMsPerToken, 4)} ms·tokens, R² ${fmt(pf.r2, 3)}; prefill rate ≈ ${fmt(pf.prefillTokensPerSecond, 0)} tokens/s`);
  }
  if (sw.knee) out.push(`knee: ${sw.knee.label} (the next doubling buys ${fmt(sw.knee.gainPerDoubling * 100, 1)}% throughput, < ${fmt(sw.knee.threshold * 100, 0)}%)`);
  if (sw.operatingPoint) out.push(`operating point (interactive): ${sw.operatingPoint.label}: goodput ${fmt(sw.operatingPoint.goodput, 2)} req/s, ${fmt(sw.operatingPoint.outputTokensPerSecond)} tok/s`);
  if (sw.maxThroughputPoint) out.push(`max throughput (batch work): ${sw.maxThroughputPoint.label}: ${fmt(sw.maxThroughputPoint.outputTokensPerSecond)} tok/s`);
  if (sw.stoppedEarly) out.push(`stopped after ${sw.stoppedEarly.afterLabel}: ${sw.stoppedEarly.reason}`);
  if (run.cancelled) out.push('cancelled: the points finished so far are kept');
  for (const v of sw.verdicts ?? []) out.push(`note: ${v.message}`);
  return out.join('\n') + '\n';
}

// ---- The dial ----

/** `llm-profiler prefill-dial ...`: the same mixed workload on the local server at several prefill chunks. */
export async function prefillDialCommand(argv: readonly string[]): Promise<number> {
  let flags: Flags;
  let spec: PrefillDialSpec;
  let parallel: number;
  try {
    flags = parseFlags(argv, DIAL_FLAGS, 'prefill-dial');
    if (flags.has('help')) {
      process.stdout.write(`${DIAL_USAGE}\n`);
      return 0;
    }
    const batchSizes = list(flags, 'batch-sizes', { integer: true }) ?? [32, 512];
    if (batchSizes.length < 2) throw new UsageError('--batch-sizes needs at least two sizes to compare, e.g. 32,512');
    parallel = number(flags, 'parallel', { integer: true, min: 2 }) ?? 4;
    const decodeStreams = number(flags, 'decode-streams', { integer: true, min: 1 }) ?? parallel - 1;
    if (decodeStreams >= parallel) throw new UsageError(`--decode-streams must be below --parallel (${parallel}): one slot is kept for the long prompts`);
    const slo = sloFlag(flags);
    if (flags.has('fail-on-slo') && !slo) throw new UsageError('--fail-on-slo needs --slo');
    const timeout = number(flags, 'timeout', { min: 0.001 });
    const idle = number(flags, 'idle-timeout', { min: 0.001 });
    spec = {
      batchSizes,
      decodeStreams,
      shortPromptTokens: number(flags, 'short-prompt-tokens', { integer: true, min: 1 }) ?? 16,
      shortMaxTokens: number(flags, 'short-max-tokens', { integer: true, min: 2 }) ?? 48,
      longPromptTokens: number(flags, 'long-prompt-tokens', { integer: true, min: 1 }) ?? 1024,
      longMaxTokens: number(flags, 'long-max-tokens', { integer: true, min: 1 }) ?? 4,
      longRate: number(flags, 'long-rate', { min: 0.001 }) ?? 0.5,
      durationS: number(flags, 'duration', { min: 0.1 }) ?? 12,
      workload: defaultWorkload({
        warmup: 0,
        ...(flags.has('seed') ? { seed: number(flags, 'seed', { integer: true })! } : {}),
        ...(timeout !== undefined ? { timeoutMs: timeout * 1000 } : {}),
        ...(idle !== undefined ? { idleTimeoutMs: idle * 1000 } : {}),
        ...(slo ? { slo } : {}),
      }),
    };
    const ctx = number(flags, 'ctx-size', { integer: true, min: 16 });
    if (ctx !== undefined && ctx / parallel < spec.longPromptTokens + spec.longMaxTokens + 16) {
      throw new UsageError(`--ctx-size ${ctx} gives each of the ${parallel} slots ${Math.floor(ctx / parallel)} tokens: too few for a ${spec.longPromptTokens}-token prompt`);
    }
  } catch (e) {
    return usageFailure(e, DIAL_USAGE);
  }
  const controller = new AbortController();
  const onSigint = () => controller.abort();
  process.once('SIGINT', onSigint);
  try {
    const live = process.stderr.isTTY && !flags.has('json');
    // each slot holds a long prompt with room to spare: a synthetic word can be more than one token
    const ctxSize = number(flags, 'ctx-size', { integer: true, min: 16 }) ?? Math.max(2048, parallel * (2 * spec.longPromptTokens + spec.longMaxTokens + 256));
    const run = await runPrefillDial(spec, {
      signal: controller.signal,
      startServer: async (batchSize): Promise<DialServer> => {
        if (live) process.stderr.write(`starting the local server with --batch-size ${batchSize}...\n`);
        const server = await startBundled(flags, { parallel, batchSize, ctxSize });
        return { endpoint: { url: server.url, api: 'openai-chat', model: server.model }, stop: () => server.stop() };
      },
      ...(live
        ? {
            onProgress: (p) => process.stderr.write(`\r${p.finished} requests · ${p.inFlight} in flight   `),
            onConfig: (c) => process.stderr.write(`\r${c.label}: done${' '.repeat(30)}\n`),
          }
        : {}),
    });
    if (live) process.stderr.write('\x1b[2K\r');
    if (flags.has('json')) process.stdout.write(`${JSON.stringify(run.prefillDial, null, 2)}\n`);
    else process.stdout.write(formatDial(run));
    const configs = run.prefillDial?.configs ?? [];
    let code = run.cancelled ? EXIT_INTERRUPTED : 0;
    if (!run.cancelled) {
      if (flags.has('fail-on-slo') && configs.some((c) => (c.decode.summary.sloMissed?.length ?? 0) > 0 || (c.long.summary.sloMissed?.length ?? 0) > 0)) {
        err('SLO missed in at least one configuration');
        code = 3;
      } else if (configs.some((c) => c.decode.summary.failed + c.long.summary.failed > 0)) code = 1;
    }
    return await writeOut(flags.get('out'), run, code);
  } catch (e) {
    if (e instanceof UsageError) return usageFailure(e, DIAL_USAGE);
    err(`prefill-dial: ${(e instanceof Error ? e.message : String(e)).split('\n')[0]}`);
    return 1;
  } finally {
    process.off('SIGINT', onSigint);
  }
}

/** The dial side by side: one column per prefill chunk size. */
export function formatDial(run: RunFile): string {
  const dial = run.prefillDial;
  if (!dial) return 'not a prefill-dial run\n';
  const figs = dial.configs.map(dialFigures);
  const rows: [string, (f: ReturnType<typeof dialFigures>) => string][] = [
    ['decode TPOT p99 (ms)', (f) => fmt(f.tpotP99Ms)],
    ['stalls (count)', (f) => String(f.stallCount)],
    ['stall time (ms)', (f) => fmt(f.stallTotalMs, 0)],
    ['stall share of decode', (f) => `${fmt(f.stallShare * 100, 1)}%`],
    ['long-prompt TTFT p50 (ms)', (f) => fmt(f.longTtftP50Ms, 0)],
    ['long-prompt TTFT p99 (ms)', (f) => fmt(f.longTtftP99Ms, 0)],
    ['long prompts', (f) => String(f.longCount)],
    ['failed requests', (f) => String(f.failed)],
    ['decode tokens/s', (f) => fmt(f.outputTokensPerSecond)],
  ];
  return (
    `prefill dial: ${dial.decodeStreams} short decodes (${dial.shortPromptTokens}-token prompts, ${dial.shortMaxTokens} tokens) + long prompts of ${dial.longPromptTokens} tokens at ${dial.longRate}/s, ${dial.durationS} s each\n\n` +
    table(['', ...figs.map((f) => `batch ${f.batchSize}`)], rows.map(([name, get]) => [name, ...figs.map(get)])) +
    '\n'
  );
}
