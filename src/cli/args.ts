// Flags for `llm-profiler run`: parsed strictly, so that a typo is an error naming the flag (exit 2)
// rather than a silently different run.
import type { ApiKind, SloSpec } from '../engine/types';
import { API_KINDS } from '../engine/types';
import { parseSlo } from '../engine/slo';
import type { LocalServerOptions } from '../localServer/types';
import { parseShapeSpec } from '../localServer/synthetic';

export class UsageError extends Error {
  override readonly name = 'UsageError';
  constructor(message: string, readonly flag?: string) {
    super(message);
  }
}

type Kind = 'string' | 'int' | 'number' | 'boolean';

interface FlagSpec {
  readonly kind: Kind;
  readonly repeatable?: boolean;
}

const RUN_FLAGS: Readonly<Record<string, FlagSpec>> = {
  '--url': { kind: 'string' },
  '--api': { kind: 'string' },
  '--model': { kind: 'string' },
  '--concurrency': { kind: 'int' },
  '--rate': { kind: 'number' },
  '--burstiness': { kind: 'number' },
  '--max-concurrency': { kind: 'int' },
  '--requests': { kind: 'int' },
  '--duration': { kind: 'number' },
  '--prompt-tokens': { kind: 'int' },
  '--shared-prefix': { kind: 'boolean' },
  '--prompt-file': { kind: 'string' },
  '--dataset': { kind: 'string' },
  '--max-tokens': { kind: 'int' },
  '--warmup': { kind: 'int' },
  '--seed': { kind: 'int' },
  '--temperature': { kind: 'number' },
  '--no-ignore-eos': { kind: 'boolean' },
  '--timeout': { kind: 'number' },
  '--idle-timeout': { kind: 'number' },
  '--slo': { kind: 'string' },
  '--fail-on-slo': { kind: 'boolean' },
  '--percentiles': { kind: 'string' },
  '--out': { kind: 'string' },
  '--json': { kind: 'boolean' },
  '--api-key-env': { kind: 'string' },
  '--api-key-header': { kind: 'string' },
  '--header': { kind: 'string', repeatable: true },
  '--preset': { kind: 'string' },
  '--model-file': { kind: 'string' },
  '--help': { kind: 'boolean' },
  '--version': { kind: 'boolean' },
};

const ALIASES: Readonly<Record<string, string>> = { '-h': '--help', '-V': '--version', '-c': '--concurrency', '-n': '--requests', '-o': '--out' };

type Raw = Map<string, (string | number | boolean)[]>;

/** Tokenizes argv against a flag table: `--flag value`, `--flag=value`, booleans without a value. */
export function parseFlags(argv: readonly string[], table: Readonly<Record<string, FlagSpec>>): { flags: Raw; positional: string[] } {
  const flags: Raw = new Map();
  const positional: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--') {
      positional.push(...argv.slice(i + 1));
      break;
    }
    if (!arg.startsWith('-') || arg === '-') {
      positional.push(arg);
      continue;
    }
    const eq = arg.indexOf('=');
    let name = eq > 0 ? arg.slice(0, eq) : arg;
    name = ALIASES[name] ?? name;
    const spec = table[name];
    if (!spec) throw new UsageError(`unknown flag ${name}${suggest(name, table)}`, name);
    let text: string | undefined;
    if (spec.kind === 'boolean') {
      if (eq > 0) throw new UsageError(`${name} takes no value`, name);
    } else if (eq > 0) {
      text = arg.slice(eq + 1);
    } else {
      text = argv[i + 1];
      // A negative number is a value, any other dash-word is the next flag.
      if (text === undefined || (text.startsWith('--') && text.length > 2)) throw new UsageError(`${name} needs a value`, name);
      i++;
    }
    const list = flags.get(name) ?? [];
    if (list.length > 0 && !spec.repeatable) throw new UsageError(`${name} given more than once`, name);
    list.push(spec.kind === 'boolean' ? true : convert(name, spec.kind, text!));
    flags.set(name, list);
  }
  return { flags, positional };
}

function convert(name: string, kind: Kind, text: string): string | number {
  const t = text.trim();
  if (kind === 'string') {
    if (t === '') throw new UsageError(`${name} needs a value`, name);
    return text;
  }
  if (kind === 'int') {
    if (!/^-?\d+$/.test(t)) throw new UsageError(`${name} must be a whole number, got "${text}"`, name);
    return Number(t);
  }
  const n = Number(t);
  if (t === '' || !Number.isFinite(n)) throw new UsageError(`${name} must be a number, got "${text}"`, name);
  return n;
}

function suggest(name: string, table: Readonly<Record<string, FlagSpec>>): string {
  const bare = name.replace(/^-+/, '');
  const hit = Object.keys(table).find((k) => k.slice(2).startsWith(bare.slice(0, 4)) && bare.length >= 3);
  return hit ? ` (did you mean ${hit}?)` : '';
}

export type PromptArg =
  | { readonly kind: 'synthetic'; readonly tokens?: number; readonly sharedPrefix: boolean }
  | { readonly kind: 'file'; readonly path: string }
  | { readonly kind: 'dataset'; readonly path: string };

export interface RunArgs {
  readonly help: boolean;
  readonly version: boolean;
  readonly url?: string;
  readonly api: ApiKind | 'auto';
  readonly model?: string;
  readonly mode:
    | { readonly kind: 'closed'; readonly concurrency?: number }
    | { readonly kind: 'open'; readonly rate: number; readonly burstiness: number; readonly maxConcurrency?: number };
  readonly requests?: number;
  readonly durationS?: number;
  readonly prompt: PromptArg;
  readonly maxTokens?: number;
  readonly warmup?: number;
  readonly seed?: number;
  readonly temperature?: number;
  readonly ignoreEos: boolean;
  readonly timeoutS?: number;
  readonly idleTimeoutS?: number;
  readonly slo?: SloSpec;
  readonly failOnSlo: boolean;
  readonly percentiles?: readonly number[];
  readonly out?: string;
  readonly json: boolean;
  readonly apiKeyEnv?: string;
  /** The header the key goes in (default Authorization: Bearer). */
  readonly apiKeyHeader?: string;
  readonly headers: Readonly<Record<string, string>>;
  /** Without --url: the bundled local server's model (a synthetic preset, or a GGUF file). */
  readonly localModel?: LocalServerOptions['model'];
}

function one<T extends string | number | boolean>(flags: Raw, name: string): T | undefined {
  return flags.get(name)?.[0] as T | undefined;
}

function positive(flags: Raw, name: string, min: number, what: string): number | undefined {
  const v = one<number>(flags, name);
  if (v !== undefined && !(v >= min)) throw new UsageError(`${name} must be ${what}, got ${v}`, name);
  return v;
}

function conflict(flags: Raw, a: string, b: string): void {
  if (flags.has(a) && flags.has(b)) throw new UsageError(`${a} and ${b} cannot be used together`, flags.has(b) ? b : a);
}

/** Parses and checks `run`'s flags. Throws UsageError naming the flag. */
export function parseRunArgs(argv: readonly string[]): RunArgs {
  const { flags, positional } = parseFlags(argv, RUN_FLAGS);
  if (positional.length > 0) throw new UsageError(`unexpected argument "${positional[0]}" (flags start with --)`);
  const help = flags.has('--help');
  const version = flags.has('--version');

  conflict(flags, '--concurrency', '--rate');
  conflict(flags, '--concurrency', '--max-concurrency');
  conflict(flags, '--requests', '--duration');
  conflict(flags, '--prompt-tokens', '--prompt-file');
  conflict(flags, '--prompt-tokens', '--dataset');
  conflict(flags, '--prompt-file', '--dataset');
  conflict(flags, '--shared-prefix', '--prompt-file');
  conflict(flags, '--shared-prefix', '--dataset');
  if (flags.has('--burstiness') && !flags.has('--rate')) throw new UsageError('--burstiness needs --rate (it shapes open-loop arrivals)', '--burstiness');
  if (flags.has('--max-concurrency') && !flags.has('--rate')) throw new UsageError('--max-concurrency needs --rate (a closed loop uses --concurrency)', '--max-concurrency');

  const url = one<string>(flags, '--url');
  if (url !== undefined) {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw new UsageError(`--url is not a valid URL: "${url}"`, '--url');
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new UsageError(`--url must be http:// or https://, got "${url}"`, '--url');
    if (parsed.username || parsed.password) throw new UsageError('--url must not carry credentials (user:password@): pass a key with --api-key-env VAR', '--url');
  }
  const apiText = one<string>(flags, '--api') ?? 'auto';
  if (apiText !== 'auto' && !(API_KINDS as readonly string[]).includes(apiText)) {
    throw new UsageError(`--api must be auto, ${API_KINDS.join(', ')}; got "${apiText}"`, '--api');
  }

  let mode: RunArgs['mode'];
  if (flags.has('--rate')) {
    const rate = one<number>(flags, '--rate')!;
    if (!(rate > 0)) throw new UsageError(`--rate must be a positive number of requests per second, got ${rate}`, '--rate');
    const burstiness = one<number>(flags, '--burstiness') ?? 1;
    if (!(burstiness > 0)) throw new UsageError(`--burstiness must be a positive number (1 = Poisson), got ${burstiness}`, '--burstiness');
    const maxConcurrency = positive(flags, '--max-concurrency', 1, 'a whole number ≥ 1');
    mode = { kind: 'open', rate, burstiness, ...(maxConcurrency !== undefined ? { maxConcurrency } : {}) };
  } else {
    const concurrency = positive(flags, '--concurrency', 1, 'a whole number ≥ 1');
    mode = { kind: 'closed', ...(concurrency !== undefined ? { concurrency } : {}) };
  }

  let prompt: PromptArg;
  if (flags.has('--prompt-file')) prompt = { kind: 'file', path: one<string>(flags, '--prompt-file')! };
  else if (flags.has('--dataset')) prompt = { kind: 'dataset', path: one<string>(flags, '--dataset')! };
  else {
    const tokens = positive(flags, '--prompt-tokens', 1, 'a whole number ≥ 1');
    prompt = { kind: 'synthetic', ...(tokens !== undefined ? { tokens } : {}), sharedPrefix: flags.has('--shared-prefix') };
  }

  let slo: SloSpec | undefined;
  const sloText = one<string>(flags, '--slo');
  if (sloText !== undefined) {
    try {
      slo = parseSlo(sloText);
    } catch (e) {
      throw new UsageError(`--slo: ${(e as Error).message}`, '--slo');
    }
  }

  let percentiles: number[] | undefined;
  const pText = one<string>(flags, '--percentiles');
  if (pText !== undefined) {
    percentiles = pText.split(',').map((s) => {
      const n = Number(s.trim());
      if (s.trim() === '' || !Number.isFinite(n) || n < 0 || n > 100) throw new UsageError(`--percentiles must be numbers within 0..100 separated by commas, got "${pText}"`, '--percentiles');
      return n;
    });
    percentiles = [...new Set(percentiles)].sort((a, b) => a - b);
  }

  const headers: Record<string, string> = {};
  for (const h of (flags.get('--header') ?? []) as string[]) {
    const i = h.indexOf(':');
    const key = i > 0 ? h.slice(0, i).trim() : '';
    if (i <= 0 || key === '' || /\s/.test(key)) throw new UsageError(`--header must be "Name: value", got "${h}"`, '--header');
    if (/^authorization$/i.test(key)) throw new UsageError('--header Authorization is not allowed: pass the key with --api-key-env VAR so it is never stored', '--header');
    headers[key] = h.slice(i + 1).trim();
  }

  const apiKeyHeader = one<string>(flags, '--api-key-header');
  if (apiKeyHeader !== undefined) {
    if (!flags.has('--api-key-env')) throw new UsageError('--api-key-header needs --api-key-env (the key it carries)', '--api-key-header');
    if (!/^[A-Za-z0-9-]+$/.test(apiKeyHeader)) throw new UsageError(`--api-key-header takes a header NAME such as api-key or x-api-key, got "${apiKeyHeader}"`, '--api-key-header');
  }
  const apiKeyEnv = one<string>(flags, '--api-key-env');
  if (apiKeyEnv !== undefined && !/^[A-Za-z_][A-Za-z0-9_]*$/.test(apiKeyEnv)) {
    throw new UsageError(`--api-key-env takes the NAME of an environment variable (e.g. OPENAI_API_KEY), not the key itself`, '--api-key-env');
  }
  const temperature = one<number>(flags, '--temperature');
  if (temperature !== undefined && !(temperature >= 0)) throw new UsageError(`--temperature must be ≥ 0, got ${temperature}`, '--temperature');
  const model = one<string>(flags, '--model');
  const requests = positive(flags, '--requests', 1, 'a whole number ≥ 1');
  const durationS = positive(flags, '--duration', Number.MIN_VALUE, 'a positive number of seconds');
  const maxTokens = positive(flags, '--max-tokens', 1, 'a whole number ≥ 1');
  const warmup = positive(flags, '--warmup', 0, 'a whole number ≥ 0');
  const seed = one<number>(flags, '--seed');
  const timeoutS = positive(flags, '--timeout', Number.MIN_VALUE, 'a positive number of seconds');
  const idleTimeoutS = positive(flags, '--idle-timeout', Number.MIN_VALUE, 'a positive number of seconds');
  const out = one<string>(flags, '--out');
  conflict(flags, '--preset', '--model-file');
  for (const f of ['--preset', '--model-file']) {
    if (flags.has(f) && flags.has('--url')) throw new UsageError(`${f} chooses the bundled local server's model: it cannot be used with --url`, f);
  }
  const preset = one<string>(flags, '--preset');
  let shaped: LocalServerOptions['model'];
  if (preset?.startsWith('shape:')) {
    try { shaped = { kind: 'shape', shape: parseShapeSpec(preset) }; } catch (e) { throw new UsageError(`--preset: ${(e as Error).message}`, '--preset'); }
  } else if (preset !== undefined && !['tiny', 'small', 'medium'].includes(preset)) {
    throw new UsageError(`--preset must be tiny, small, medium or shape:…, got "${preset}"`, '--preset');
  }
  const modelFile = one<string>(flags, '--model-file');
  const localModel: LocalServerOptions['model'] = modelFile !== undefined
    ? { kind: 'file' as const, path: modelFile }
    : shaped ?? (preset !== undefined ? { kind: 'preset' as const, preset: preset as 'tiny' | 'small' | 'medium' } : undefined);

  return {
    help,
    version,
    ...(url !== undefined ? { url } : {}),
    api: apiText as ApiKind | 'auto',
    ...(model !== undefined ? { model } : {}),
    mode,
    ...(requests !== undefined ? { requests } : {}),
    ...(durationS !== undefined ? { durationS } : {}),
    prompt,
    ...(maxTokens !== undefined ? { maxTokens } : {}),
    ...(warmup !== undefined ? { warmup } : {}),
    ...(seed !== undefined ? { seed } : {}),
    ...(temperature !== undefined ? { temperature } : {}),
    ignoreEos: !flags.has('--no-ignore-eos'),
    ...(timeoutS !== undefined ? { timeoutS } : {}),
    ...(idleTimeoutS !== undefined ? { idleTimeoutS } : {}),
    ...(slo !== undefined ? { slo } : {}),
    failOnSlo: flags.has('--fail-on-slo'),
    ...(percentiles !== undefined ? { percentiles } : {}),
    ...(out !== undefined ? { out } : {}),
    json: flags.has('--json'),
    ...(apiKeyEnv !== undefined ? { apiKeyEnv } : {}),
    ...(apiKeyHeader !== undefined ? { apiKeyHeader } : {}),
    headers,
    ...(localModel !== undefined ? { localModel } : {}),
  };
}

export const RUN_USAGE = `Usage: llm-profiler run [--url URL] [options]

Profile a streaming LLM endpoint: TTFT, TPOT, ITL, E2E latency, throughput, goodput, stalls.

Endpoint
  --url URL                 base URL, e.g. http://127.0.0.1:8000 (a trailing /v1 is fine);
                            without it the bundled llama.cpp server is started on 127.0.0.1,
                            profiled and stopped
  --preset P                without --url: synthetic model tiny (default) | small | medium |
                            shape:layers=L,width=W,heads=H,kv-heads=K,ffn=F,vocab=V,type=f16|q8_0
  --model-file F            without --url: a GGUF file of your own
  --api KIND                auto (default) | openai-chat | openai-completions | ollama | llamacpp
  --model M                 model name (default: the first one the server lists)
  --api-key-env VAR         read the API key from environment variable VAR (never printed or stored)
  --api-key-header NAME     send the key as "NAME: key" (e.g. api-key, x-api-key) instead of Authorization: Bearer
  --header "K: V"           an extra request header (repeatable; not for keys)

Load (closed loop by default)
  --concurrency N           N requests in flight, each sent when the last ends (default 1)
  --rate R                  open loop: R requests/s, gamma-distributed gaps (Poisson by default)
  --burstiness B            shape of the gaps with --rate (1 = Poisson, <1 burstier, >1 steadier)
  --max-concurrency N       with --rate: at most N in flight (later arrivals wait)
  --requests N              measured requests (default 10)
  --duration S              or: send for S seconds
  --warmup K                requests first, not measured (default 1)

Prompts (default: synthetic, 256 tokens)
  --prompt-tokens N         synthetic prompts of about N tokens, each unique from its first token
  --shared-prefix           synthetic prompts that share all but their last words
  --prompt-file F           plain text, *.prompt.md, *.prompty or *.prompt.yml
  --dataset F.jsonl         one prompt per line: {"prompt"}, {"messages"} or ShareGPT
  --max-tokens N            output tokens per request (default 128)
  --no-ignore-eos           let the model stop early (ignore_eos is sent by default)
  --temperature T           sampling temperature (default: the server's)
  --seed N                  seed for prompts, arrivals and per-request sampling (default 0)

Limits and judgement
  --timeout S               per request (default 120)
  --idle-timeout S          between chunks (default 30)
  --slo ttft=500,tpot=50,itl=100,e2e=20000   SLOs in ms: goodput and pass/fail
  --fail-on-slo             exit 3 when an SLO's p99 is missed
  --percentiles 50,90,99    percentiles to report (default 50,90,95,99)

Output
  --out FILE                write the run file (JSON; nothing is written without it)
  --json                    print the summary as JSON on stdout instead of the table
  -h, --help                this help
  -V, --version             the version

Exit codes: 0 ok, 1 some requests failed (or the endpoint is down), 2 usage error,
3 an SLO was missed (with --fail-on-slo), 130 interrupted (what finished is printed and written).
`;
