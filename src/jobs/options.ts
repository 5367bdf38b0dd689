// Every option of `run`, `sweep`, `prefill-dial`, `cache-check` and `serve`, and the settings that mirror them, in
// one table: its flag, kind, limits, defaults per surface, setting key and help text. The CLI parser,
// the usage texts, the settings snapshot (clamping), the commands' arguments, the sidebar's limits
// and the manifest test all read it. Pure: no node or `vscode` import (the webview imports it too).
import { displayUrl, isSecretHeaderName } from '../engine/core/redact';
import { MAX_RETRY_AFTER_S } from '../engine/transport/retry';
import { parseSlo } from '../engine/core/slo';
import { API_KINDS } from '../engine/core/apis';
import { SYNTHETIC_PRESETS } from '../localServer/presets';
import { endpointUrlProblem, withScheme } from './urls';

export type CommandName = 'run' | 'sweep' | 'prefill-dial' | 'cache-check' | 'serve' | 'import' | 'compare' | 'ab' | 'recover';
/** Where a default applies: a command, or the extension's settings. */
export type Surface = CommandName | 'settings';

export type OptionKind = 'string' | 'int' | 'number' | 'boolean' | 'enum';

export type OptionGroup = 'Endpoint' | 'Local server' | 'Load' | 'Prompts' | 'Traffic' | 'Sweep' | 'Prefill dial' | 'Comparison' | 'Limits and judgement' | 'Output';

/** The groups in the order the help and the reference list them. */
export const OPTION_GROUPS: readonly OptionGroup[] = ['Endpoint', 'Local server', 'Load', 'Prompts', 'Traffic', 'Sweep', 'Prefill dial', 'Comparison', 'Limits and judgement', 'Output'];

export interface OptionRule {
  /** The other option's key. */
  readonly key: string;
  /** The message after this option's flag; default "<a> and <b> cannot be used together" or "needs <b>". */
  readonly why?: string;
}

export interface SettingSpec {
  /** Without the `llmProfiler.` prefix, as in package.json. */
  readonly key: string;
  /** Setting value = CLI value × scale (timeouts: seconds on the command line, ms in settings). */
  readonly scale?: number;
  /** Bounds of the setting alone, in CLI units, where they differ from the command line's. */
  readonly min?: number;
  readonly max?: number;
}

export interface OptionSpec {
  /** camelCase; the flag is its kebab-case form unless `flag` says otherwise. */
  readonly key: string;
  readonly flag: `--${string}`;
  readonly short?: `-${string}`;
  readonly kind: OptionKind;
  readonly choices?: readonly string[];
  /** Inclusive bounds of a number (on the CLI's scale). */
  readonly min?: number;
  readonly max?: number;
  /** A number that must be > 0 (rates, seconds); `unit` names it in the message ("of seconds"). */
  readonly positive?: boolean;
  readonly unit?: string;
  /** The commands that take it. */
  readonly commands: readonly CommandName[];
  /** Commands where it takes a comma-separated list (a sweep's values). */
  readonly list?: readonly CommandName[];
  readonly repeatable?: boolean;
  /** Commands where it may be given once or twice: the first is side A's, the second side B's (`ab --url A --url B`). */
  readonly perSide?: readonly CommandName[];
  readonly group: OptionGroup;
  /** The placeholder in the usage text (N, URL, S…). */
  readonly value?: string;
  readonly help: string;
  /** The default on each surface where there is one (absent: none, or decided from other options; see `defaultNote`). */
  readonly defaults?: Partial<Record<Surface, number | string | boolean | readonly number[]>>;
  /** Said in the usage text when the default depends on other options. */
  readonly defaultNote?: string;
  readonly setting?: SettingSpec;
  /** The value as taken, before its check (a URL typed without its scheme gets http://). */
  readonly normalize?: (value: string) => string;
  /** A further check of a parsed value: the problem, after the flag (e.g. "must not carry credentials"). */
  readonly check?: (value: string) => string | undefined;
  /** Options this one cannot be combined with (checked when both are given). */
  readonly conflicts?: readonly OptionRule[];
  /** An option this one needs. */
  readonly needs?: OptionRule;
}

const ALL: readonly CommandName[] = ['run', 'sweep', 'prefill-dial', 'cache-check', 'serve', 'import', 'compare', 'ab', 'recover'];
const MEASURING: readonly CommandName[] = ['run', 'sweep', 'prefill-dial'];
const ENDPOINT: readonly CommandName[] = ['run', 'sweep', 'ab'];
/** Commands that send to an endpoint (--url) or to the bundled server started for them. */
const TARGET: readonly CommandName[] = ['run', 'sweep', 'cache-check', 'ab'];
/** Commands that print a comparison of two runs. */
const COMPARING: readonly CommandName[] = ['compare', 'ab'];
const STARTS_SERVER: readonly CommandName[] = ['run', 'sweep', 'prefill-dial', 'cache-check', 'serve'];

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const HEADER_NAME = /^[A-Za-z0-9-]+$/;
/** An HTTP header name (RFC 9110 token). */
const HEADER_TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** What an HTTP header value may hold: visible characters, spaces and tabs (no CR, LF or other controls). */
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

/** `turns=6,user=64,reply=64` (any of the three, in any order). */
function checkChatSpec(text: string): string | undefined {
  for (const part of text.split(',')) {
    const m = /^(turns|user|reply)=(\d+)$/.exec(part.trim());
    if (!m || Number(m[2]) < 1 || Number(m[2]) > 1_048_576) return `must be turns=T,user=N,reply=M (whole numbers ≥ 1, any of them), got "${text}"`;
  }
  return undefined;
}

/** `linear:1-10` or `exponential:0.5-20`: from A to B requests per second. */
function checkRampSpec(text: string): string | undefined {
  const m = /^(linear|exponential):(\d+(?:\.\d+)?)-(\d+(?:\.\d+)?)$/.exec(text);
  if (!m || !(Number(m[2]) > 0) || !(Number(m[3]) > 0)) return `must be linear:A-B or exponential:A-B (requests per second, above 0), got "${text}"`;
  return undefined;
}

/** `8:512`: 8 groups sharing a 512-token prefix. */
function checkGroupsSpec(text: string): string | undefined {
  const m = /^(\d+):(\d+)$/.exec(text);
  if (!m || Number(m[1]) < 1 || Number(m[2]) < 1) return `must be GROUPS:PREFIX_TOKENS (whole numbers ≥ 1), got "${text}"`;
  return undefined;
}

const NEEDS_URL: OptionRule = { key: 'url', why: 'needs --url (without it the bundled local server is used)' };
const NOT_WITH_URL: OptionRule = { key: 'url', why: 'sets up the bundled local server: it cannot be used with --url' };

function checkVarAssignment(text: string): string | undefined {
  const eq = text.indexOf('=');
  return eq > 0 && /^[A-Za-z_][\w.-]*$/.test(text.slice(0, eq)) ? undefined : `must be NAME=VALUE (NAME a variable's name), got "${text}"`;
}

/** An OTLP/HTTP collector's address: http(s), credentials in OTEL_EXPORTER_OTLP_HEADERS, never in the URL. */
function checkOtlpUrl(text: string): string | undefined {
  let u: URL;
  try {
    u = new URL(text);
  } catch {
    return `is not a valid URL${/[?@]/.test(text) ? '' : `: "${text}"`} (expected http://host:4318)`;
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return `must be http:// or https:// (OTLP/HTTP), got "${displayUrl(text)}"`;
  if (u.username || u.password) return 'must not carry credentials (user:password@): put them in OTEL_EXPORTER_OTLP_HEADERS';
  return undefined;
}

/** A proxy URL's problem (used for --proxy and the environment's and VS Code's proxy settings), or undefined when it can be used (http:// or https://, a host, nothing else). */
export function checkProxyUrl(text: string): string | undefined {
  let u: URL;
  try {
    u = new URL(text);
  } catch {
    return `is not a valid proxy URL${/[@]/.test(text) ? '' : `: "${text}"`} (expected http://host:port)`;
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return `must be an http:// or https:// proxy, got "${displayUrl(text)}"`;
  if ((u.pathname !== '/' && u.pathname !== '') || u.search || u.hash) return `must be a proxy's address only (scheme, host, port), got "${displayUrl(text)}"`;
  return undefined;
}

// The value is never echoed in a message: it may be the very secret the user should not have typed.
function checkHeader(text: string): string | undefined {
  const i = text.indexOf(':');
  const name = i > 0 ? text.slice(0, i).trim() : '';
  if (/[\r\n]/.test(text)) return 'must be one line (a CR or LF in a header would split the request)';
  if (i <= 0 || !HEADER_TOKEN.test(name)) return 'must be "Name: value" with a header name of letters, digits and - (the name is missing or has spaces)';
  if (isSecretHeaderName(name)) {
    const how = name.toLowerCase() === 'authorization' ? '--api-key-env VAR' : `--api-key-env VAR --api-key-header ${name}`;
    return `${name} looks like it carries a secret: pass the key with ${how}, so it is read from the environment and never stored or shown`;
  }
  if (!HEADER_VALUE.test(text.slice(i + 1))) return `${name}: the value has control characters`;
  return undefined;
}

function checkPreset(text: string): string | undefined {
  if ((SYNTHETIC_PRESETS as readonly string[]).includes(text) || text.startsWith('shape:')) return undefined;
  return `must be ${SYNTHETIC_PRESETS.join(', ')} or shape:…, got "${text}"`;
}

function checkSlo(text: string): string | undefined {
  try {
    parseSlo(text);
    return undefined;
  } catch (e) {
    return `: ${(e as Error).message}`;
  }
}

export const OPTIONS: readonly OptionSpec[] = [
  // ---- Endpoint ----
  {
    key: 'url', flag: '--url', kind: 'string', commands: TARGET, perSide: ['ab'], group: 'Endpoint', value: 'URL',
    normalize: withScheme, check: (url) => endpointUrlProblem(url, 'command line'),
    help: 'base URL, e.g. http://127.0.0.1:8000 (a trailing /v1 is fine; host:port is taken as http://host:port); without it the bundled llama.cpp server is started on 127.0.0.1, profiled and stopped; ab needs it: once for one endpoint (with two --model), twice for A then B',
  },
  {
    key: 'api', flag: '--api', kind: 'enum', choices: ['auto', ...API_KINDS], commands: TARGET, group: 'Endpoint', value: 'KIND',
    defaults: { run: 'auto', sweep: 'auto', 'cache-check': 'auto', ab: 'auto' }, needs: NEEDS_URL, help: 'the API the endpoint speaks; auto detects it',
  },
  {
    key: 'model', flag: '--model', kind: 'string', commands: TARGET, perSide: ['ab'], group: 'Endpoint', value: 'M', needs: NEEDS_URL,
    help: 'model name sent with each request (ab: twice for A then B)', defaultNote: 'the first one the server lists',
  },
  {
    key: 'apiKeyEnv', flag: '--api-key-env', kind: 'string', commands: TARGET, perSide: ['ab'], group: 'Endpoint', value: 'VAR', needs: NEEDS_URL,
    check: (v) => (ENV_NAME.test(v) ? undefined : 'takes the NAME of an environment variable (e.g. OPENAI_API_KEY), not the key itself'),
    help: 'read the API key from environment variable VAR (never printed or stored; ab: twice for A then B)',
  },
  {
    key: 'apiKeyHeader', flag: '--api-key-header', kind: 'string', commands: TARGET, group: 'Endpoint', value: 'NAME',
    needs: { key: 'apiKeyEnv', why: 'needs --api-key-env (the key it carries)' },
    check: (v) => (HEADER_NAME.test(v) ? undefined : `takes a header NAME such as api-key or x-api-key, got "${v}"`),
    help: 'send the key as "NAME: key" (e.g. api-key, x-api-key) instead of Authorization: Bearer',
  },
  {
    key: 'header', flag: '--header', kind: 'string', repeatable: true, commands: TARGET, group: 'Endpoint', value: '"K: V"', needs: NEEDS_URL,
    check: checkHeader, help: 'an extra request header (repeatable; not for keys)',
  },
  {
    key: 'proxy', flag: '--proxy', kind: 'string', commands: TARGET, group: 'Endpoint', value: 'URL', needs: NEEDS_URL, check: checkProxyUrl,
    conflicts: [{ key: 'noProxy' }],
    help: 'send requests through this forward proxy (http://[user:password@]host:port), loopback addresses included; default: HTTPS_PROXY / HTTP_PROXY / ALL_PROXY and NO_PROXY from the environment, loopback direct',
  },
  {
    key: 'noProxy', flag: '--no-proxy', kind: 'boolean', commands: TARGET, group: 'Endpoint', needs: NEEDS_URL,
    help: 'connect directly, whatever HTTPS_PROXY / HTTP_PROXY say',
  },
  {
    key: 'caFile', flag: '--ca-file', kind: 'string', repeatable: true, commands: TARGET, group: 'Endpoint', value: 'F', needs: NEEDS_URL,
    setting: { key: 'tls.caFile' },
    help: 'trust the CA certificates in this PEM file too (repeatable; beside Node\'s roots and NODE_EXTRA_CA_CERTS)',
  },
  {
    key: 'insecure', flag: '--insecure', kind: 'boolean', commands: TARGET, group: 'Endpoint', needs: NEEDS_URL,
    defaults: { settings: false }, setting: { key: 'tls.insecure' },
    help: 'do not check the endpoint\'s TLS certificate (said in the output and the run file; prefer --ca-file)',
  },

  // ---- Local server ----
  {
    key: 'preset', flag: '--preset', kind: 'string', commands: ['run', 'sweep', 'prefill-dial', 'cache-check'], group: 'Local server', value: 'P', check: checkPreset,
    defaults: { run: 'tiny', sweep: 'tiny', 'prefill-dial': 'tiny', 'cache-check': 'tiny', settings: 'tiny' }, setting: { key: 'localServer.preset' },
    conflicts: [{ key: 'url', why: "chooses the bundled local server's model: it cannot be used with --url" }],
    help: `without --url: a synthetic model, ${SYNTHETIC_PRESETS.join(' | ')} | shape:layers=L,width=W,heads=H,kv-heads=K,ffn=F,vocab=V,type=f16|q8_0`,
  },
  {
    key: 'modelFile', flag: '--model-file', kind: 'string', commands: ['run', 'sweep', 'prefill-dial', 'cache-check'], group: 'Local server', value: 'F',
    setting: { key: 'localServer.modelPath' },
    conflicts: [{ key: 'url', why: "chooses the bundled local server's model: it cannot be used with --url" }, { key: 'preset' }],
    help: 'without --url: a GGUF model file of your own',
  },
  {
    key: 'serveModel', flag: '--model', kind: 'string', commands: ['serve'], group: 'Local server', value: 'tiny|small|medium|FILE.gguf|shape:…',
    defaults: { serve: 'small' },
    check: (v) => (checkPreset(v) === undefined || /\.gguf$/i.test(v) ? undefined : `must be ${SYNTHETIC_PRESETS.join(', ')}, shape:… or a .gguf file, got "${v}"`),
    help: 'a synthetic model (made and cached on first use), a custom shape (shape:layers=L,width=W,…,type=f16|q8_0[,base=tiny]) or your own GGUF file',
  },
  {
    key: 'parallel', flag: '--parallel', kind: 'int', min: 1, max: 256, commands: STARTS_SERVER, group: 'Local server', value: 'N',
    defaults: { 'prefill-dial': 4, serve: 4, settings: 4 }, setting: { key: 'localServer.parallel' }, conflicts: [NOT_WITH_URL],
    defaultNote: 'run: the concurrency; sweep: the largest concurrency',
    help: 'server slots: sequences decoded together (requests beyond wait in its queue)',
  },
  {
    key: 'batchSize', flag: '--batch-size', kind: 'int', min: 1, max: 65536, commands: ['run', 'sweep', 'cache-check', 'serve'], group: 'Local server', value: 'N',
    defaults: { run: 512, sweep: 512, 'cache-check': 512, serve: 512, settings: 512 }, setting: { key: 'localServer.batchSize' }, conflicts: [NOT_WITH_URL],
    help: 'prefill chunk: the most prompt tokens per engine step',
  },
  {
    key: 'threads', flag: '--threads', kind: 'int', min: 1, max: 1024, commands: STARTS_SERVER, group: 'Local server', value: 'N', conflicts: [NOT_WITH_URL],
    defaultNote: '1 on a machine of 2 cores or fewer, else cores − 1 up to 8',
    help: 'CPU threads of the server',
  },
  {
    key: 'ctxSize', flag: '--ctx-size', kind: 'int', min: 64, max: 16_777_216, commands: STARTS_SERVER, group: 'Local server', value: 'N', conflicts: [NOT_WITH_URL],
    defaultNote: 'per slot, the longest prompt plus its max tokens, at least 2048; serve: 2048 per slot; the prefill dial: its long prompts',
    help: 'total context over all slots (too small for the longest prompt is refused)',
  },
  {
    key: 'backend', flag: '--backend', kind: 'enum', choices: ['bundled', 'llama-server'], commands: STARTS_SERVER, group: 'Local server', value: 'B',
    defaults: { run: 'bundled', sweep: 'bundled', 'prefill-dial': 'bundled', 'cache-check': 'bundled', serve: 'bundled', settings: 'bundled' },
    setting: { key: 'localServer.backend' }, conflicts: [NOT_WITH_URL],
    help: 'bundled: node-llama-cpp in its own process; llama-server: a llama.cpp server binary',
  },
  {
    key: 'llamaServer', flag: '--llama-server', kind: 'string', commands: STARTS_SERVER, group: 'Local server', value: 'PATH', conflicts: [NOT_WITH_URL],
    setting: { key: 'localServer.llamaServerPath' }, defaultNote: "PATH, then `npm run build:llama-server`'s cache",
    help: 'the llama-server binary (implies --backend llama-server)',
  },
  {
    key: 'port', flag: '--port', kind: 'int', min: 0, max: 65535, commands: ['serve'], group: 'Local server', value: 'N',
    defaults: { serve: 0, settings: 0 }, setting: { key: 'localServer.port' }, help: 'port on 127.0.0.1; 0 picks a free one',
  },
  {
    key: 'readyTimeout', flag: '--ready-timeout', kind: 'number', positive: true, unit: 'of seconds', commands: ['serve'], group: 'Local server', value: 'S',
    defaults: { serve: 60 }, help: 'seconds to wait for the server to be ready',
  },
  {
    key: 'build', flag: '--build', kind: 'enum', choices: ['native'], commands: ['serve'], group: 'Local server', value: 'native',
    help: "first build llama.cpp's CPU backend for this CPU (-march=native, from the source node-llama-cpp ships; needs cmake and a C++ compiler, minutes, once), cached beside the models: the bundled server uses it from then on",
  },
  { key: 'quiet', flag: '--quiet', kind: 'boolean', commands: ['serve'], group: 'Output', help: "do not print the server's log lines" },

  // ---- Load ----
  {
    key: 'concurrency', flag: '--concurrency', short: '-c', kind: 'int', min: 1, max: 4096, commands: ENDPOINT, list: ['sweep'], group: 'Load', value: 'N',
    defaults: { run: 1, ab: 1, settings: 4 }, setting: { key: 'workload.concurrency' },
    defaultNote: 'sweep: 1, 2, 4, … up to --concurrency-limit',
    help: 'requests in flight (closed loop), each sent when the last ends; a sweep takes a list: 1,2,4,8',
  },
  {
    key: 'rate', flag: '--rate', kind: 'number', positive: true, unit: 'of requests per second', commands: ENDPOINT, list: ['sweep'], group: 'Load', value: 'R',
    conflicts: [{ key: 'concurrency' }],
    help: 'open loop: R requests/s with gamma-distributed gaps (Poisson by default); a sweep takes a list',
  },
  {
    key: 'burstiness', flag: '--burstiness', kind: 'number', positive: true, commands: ENDPOINT, group: 'Load', value: 'B', defaults: { run: 1, sweep: 1, ab: 1 },
    needs: { key: 'rate', why: 'needs --rate (it shapes open-loop arrivals)' },
    help: 'shape of the gaps with --rate (1 = Poisson, <1 burstier, >1 steadier)',
  },
  {
    key: 'maxConcurrency', flag: '--max-concurrency', kind: 'int', min: 1, max: 4096, commands: ENDPOINT, group: 'Load', value: 'N',
    needs: { key: 'rate', why: 'needs --rate (a closed loop uses --concurrency)' }, conflicts: [{ key: 'concurrency' }],
    help: 'with --rate: at most N in flight (later arrivals wait)',
  },
  {
    key: 'workers', flag: '--workers', kind: 'int', min: 1, max: 64, commands: ['run', 'sweep'], group: 'Load', value: 'N',
    defaultNote: 'one loop below 512 streams, else the cores, at most 8',
    help: 'threads that send the requests, each with its own connections and clock; 1: one loop',
  },
  {
    key: 'requests', flag: '--requests', short: '-n', kind: 'int', min: 1, max: 10_000_000, commands: ENDPOINT, group: 'Load', value: 'N',
    defaults: { run: 10, sweep: 16, ab: 100, settings: 32 }, setting: { key: 'workload.requests' },
    help: 'measured requests (a sweep: per point; run --repeat: per repetition; ab: per side)',
  },
  {
    key: 'requestsPerPoint', flag: '--requests-per-point', kind: 'int', min: 1, max: 10_000_000, commands: ['sweep'], group: 'Sweep', value: 'N',
    conflicts: [{ key: 'requests' }], help: 'measured requests per point (the same as --requests)',
  },
  {
    key: 'duration', flag: '--duration', kind: 'number', positive: true, unit: 'of seconds', commands: MEASURING, group: 'Load', value: 'S',
    defaults: { 'prefill-dial': 12 }, conflicts: [{ key: 'requests' }, { key: 'requestsPerPoint' }],
    help: 'or: send for S seconds (a sweep: per point; the prefill dial: per chunk size)',
  },
  {
    key: 'repeat', flag: '--repeat', kind: 'int', min: 1, max: 1000, commands: ['run'], group: 'Load', value: 'N', defaults: { run: 1 },
    help: "run the workload N times in a row, each repetition kept (requests[].repeat) and its spread shown beside the pooled percentiles; compare then resamples repetitions first, so drift between runs is in its interval",
  },
  {
    key: 'blocks', flag: '--blocks', kind: 'int', min: 2, max: 1000, commands: ['ab'], group: 'Load', value: 'N', defaults: { ab: 10 },
    help: 'blocks per side: A and B take turns, a block each (who goes first alternates), so a slow minute hurts both; --requests is split over the blocks',
  },
  {
    key: 'warmup', flag: '--warmup', kind: 'int', min: 0, max: 10_000, commands: ENDPOINT, group: 'Load', value: 'K',
    defaults: { run: 1, sweep: 1, ab: 1, settings: 1 }, setting: { key: 'workload.warmup' }, help: 'requests sent first and not measured',
  },
  {
    key: 'seed', flag: '--seed', kind: 'int', min: -2_147_483_648, max: 4_294_967_295, commands: [...MEASURING, 'cache-check', 'ab'], group: 'Load', value: 'N',
    defaults: { run: 0, sweep: 0, 'prefill-dial': 0, 'cache-check': 0, ab: 0 }, help: 'seed for prompts, arrivals and per-request sampling (ab: and for the bootstrap)',
  },

  // ---- Prompts ----
  {
    key: 'promptTokens', flag: '--prompt-tokens', kind: 'int', min: 1, max: 1_048_576, commands: TARGET, list: ['sweep'], group: 'Prompts', value: 'N',
    defaults: { run: 256, 'cache-check': 1024, ab: 256, settings: 256 }, setting: { key: 'workload.promptTokens' }, defaultNote: 'sweep: 256, or 64 on the bundled server',
    help: 'synthetic prompts of about N tokens, each unique from its first token; a sweep over prompt length takes a list',
  },
  {
    key: 'sharedPrefix', flag: '--shared-prefix', kind: 'boolean', commands: ENDPOINT, group: 'Prompts',
    help: 'synthetic prompts that share all but their last words (sent warm: they exist to be served from the prefix cache)',
  },
  {
    key: 'prefixCache', flag: '--prefix-cache', kind: 'enum', choices: ['cold', 'warm'], commands: ENDPOINT, group: 'Prompts', value: 'MODE',
    defaultNote: 'cold; warm with --shared-prefix', defaults: { settings: 'cold' }, setting: { key: 'workload.prefixCache' },
    help: "cold: keep every request out of the server's prefix cache (llama.cpp: cache_prompt false; other APIs: a short unique nonce leads the prompt), so a repeated prompt measures the server's own prefill; warm: send prompts as they are, so repeats may be served from the cache",
  },
  {
    key: 'promptFile', flag: '--prompt-file', kind: 'string', commands: TARGET, group: 'Prompts', value: 'F',
    conflicts: [{ key: 'promptTokens' }, { key: 'sharedPrefix' }], help: 'plain text, *.prompt.md, *.prompty or *.prompt.yml',
  },
  {
    key: 'var', flag: '--var', kind: 'string', repeatable: true, commands: TARGET, group: 'Prompts', value: 'NAME=VALUE', needs: { key: 'promptFile', why: 'fills a variable of the --prompt-file' },
    check: checkVarAssignment, help: "a value for the prompt file's variable NAME ({{NAME}}, a Prompty input, ${input:NAME}, ${selection}, …); repeatable; beats the file's sample and default",
  },
  {
    key: 'vars', flag: '--vars', kind: 'string', commands: TARGET, group: 'Prompts', value: 'F.json', needs: { key: 'promptFile', why: 'fills the variables of the --prompt-file' },
    help: "a JSON object of values for the prompt file's variables (as Prompty's inputs); --var beats it",
  },
  {
    key: 'allowRead', flag: '--allow-read', kind: 'string', repeatable: true, commands: TARGET, group: 'Prompts', value: 'DIR', needs: { key: 'promptFile', why: 'widens what the --prompt-file may read' },
    help: "a folder the prompt file's ${file:…} and images may also read from (by real path: links are followed, then checked); repeatable. Without it: only the prompt's project (the nearest folder above it holding .git, else its own folder)",
  },
  {
    key: 'allowEnv', flag: '--allow-env', kind: 'string', repeatable: true, commands: TARGET, group: 'Prompts', value: 'NAME', needs: { key: 'promptFile', why: 'lets the --prompt-file read an environment variable' },
    check: (v) => (ENV_NAME.test(v) ? undefined : `takes the NAME of an environment variable, got "${v}"`),
    help: "an environment variable the prompt file's ${env:NAME} may read into what is sent; repeatable. Without it, ${env:…} is not read (its default, if any, is used)",
  },
  {
    key: 'dataset', flag: '--dataset', kind: 'string', commands: ENDPOINT, group: 'Prompts', value: 'F.jsonl',
    conflicts: [{ key: 'promptTokens' }, { key: 'sharedPrefix' }, { key: 'promptFile' }], help: 'one prompt per line: {"prompt"}, {"messages"} or ShareGPT',
  },
  {
    key: 'maxTokens', flag: '--max-tokens', kind: 'int', min: 1, max: 1_048_576, commands: TARGET, group: 'Prompts', value: 'N',
    defaults: { run: 128, sweep: 64, 'cache-check': 8, ab: 128, settings: 128 }, setting: { key: 'workload.maxTokens' }, help: 'output tokens per request',
  },
  { key: 'noIgnoreEos', flag: '--no-ignore-eos', kind: 'boolean', commands: ENDPOINT, group: 'Prompts', help: 'let the model stop early (ignore_eos is sent by default)' },
  {
    key: 'temperature', flag: '--temperature', kind: 'number', min: 0, max: 100, commands: TARGET, group: 'Prompts', value: 'T',
    defaultNote: "the server's", help: "sampling temperature; beats the prompt file's",
  },
  {
    key: 'topP', flag: '--top-p', kind: 'number', min: 0, max: 1, commands: TARGET, group: 'Prompts', value: 'P',
    defaultNote: "the prompt file's, else the server's", help: "nucleus sampling (top_p); beats the prompt file's",
  },

  // ---- Traffic: conversations, traces, ramps, shared prefixes, tools ----
  {
    key: 'multiTurn', flag: '--multi-turn', kind: 'boolean', commands: ['run'], group: 'Traffic', needs: { key: 'dataset', why: 'reads the --dataset\'s conversations as sessions' },
    help: 'each conversation line of the --dataset is a session: its turns in order, each carrying the history with the replies as streamed',
  },
  {
    key: 'chat', flag: '--chat', kind: 'string', commands: ['run'], group: 'Traffic', value: 'turns=T,user=N,reply=M', check: checkChatSpec,
    conflicts: [{ key: 'promptFile' }, { key: 'dataset' }, { key: 'sharedPrefix' }, { key: 'promptTokens', why: 'sets the prompt length: give user=N in --chat' }, { key: 'requests', why: 'sends whole sessions: give --sessions' }],
    help: 'synthetic multi-turn sessions: T turns of N-token user messages, replies of up to M tokens (defaults turns=6,user=64,reply=64)',
  },
  {
    key: 'sessions', flag: '--sessions', kind: 'int', min: 1, max: 1_000_000, commands: ['run'], group: 'Traffic', value: 'N', conflicts: [{ key: 'requests', why: 'a session sends all its turns: give one or the other' }],
    defaultNote: '4 with --chat; every conversation of a --multi-turn dataset', help: 'sessions to run (--concurrency counts sessions in flight, --rate session arrivals)',
  },
  {
    key: 'thinkTime', flag: '--think-time', kind: 'number', min: 0, max: 3_600_000, commands: ['run'], group: 'Traffic', value: 'MS', defaultNote: "0, or a turn's own think_time_ms",
    help: "wait between a reply's end and the next turn, ms",
  },
  {
    key: 'trace', flag: '--trace', kind: 'string', commands: ['run'], group: 'Traffic', value: 'F',
    conflicts: [{ key: 'promptFile' }, { key: 'dataset' }, { key: 'chat' }, { key: 'sharedPrefix' }, { key: 'promptTokens', why: 'the trace gives each prompt\'s length' }, { key: 'concurrency', why: 'the trace gives the arrival times' }, { key: 'rate', why: 'the trace gives the arrival times' }, { key: 'requests' }],
    help: 'replay a trace at its timestamps: Mooncake JSONL (timestamp, input_length, output_length, hash_ids) or the Azure LLM inference CSV',
  },
  {
    key: 'traceSpeed', flag: '--trace-speed', kind: 'number', positive: true, commands: ['run'], group: 'Traffic', value: 'X', defaults: { run: 1 },
    needs: { key: 'trace', why: 'speeds up a --trace' }, help: 'replay the trace X times faster (2: half the gaps)',
  },
  {
    key: 'ramp', flag: '--ramp', kind: 'string', commands: ['run'], group: 'Traffic', value: 'linear:A-B', check: checkRampSpec,
    conflicts: [{ key: 'rate', why: 'gives the rate: the ramp goes from A to B req/s' }, { key: 'concurrency' }],
    help: 'an open loop whose rate goes from A to B req/s over the run, linear or exponential (vLLM\'s ramp-up)',
  },
  {
    key: 'prefixGroups', flag: '--prefix-groups', kind: 'string', commands: ENDPOINT, group: 'Traffic', value: 'G:T', check: checkGroupsSpec,
    conflicts: [{ key: 'promptFile' }, { key: 'dataset' }, { key: 'sharedPrefix' }],
    help: 'synthetic prompts in G groups, each sharing its first T tokens (SGLang\'s generated shared prefix; sent warm)',
  },
  {
    key: 'tools', flag: '--tools', kind: 'string', commands: ENDPOINT, perSide: ['ab'], group: 'Traffic', value: 'F.json',
    help: 'send these function definitions (OpenAI tools, a JSON list) with every request, and time the tool calls streamed back; on ab, once per side (none: without)',
  },
  {
    key: 'responseFormat', flag: '--response-format', kind: 'string', commands: ENDPOINT, perSide: ['ab'], group: 'Traffic', value: 'json|F.json',
    help: 'structured output: json (a JSON object) or a JSON schema file; on ab, once per side (none: without), to see what the schema costs',
  },

  // ---- Sweep ----
  {
    key: 'concurrencyLimit', flag: '--concurrency-limit', kind: 'int', min: 1, max: 4096, commands: ['sweep'], group: 'Sweep', value: 'N',
    conflicts: [{ key: 'concurrency', why: 'sets the default concurrency list: give it without --concurrency' }, { key: 'rate', why: 'sets the default concurrency list: it does not apply to a --rate sweep' }],
    defaultNote: '32; 8 on the bundled server', help: 'the default concurrencies are 1, 2, 4, … up to N',
  },
  { key: 'noEarlyStop', flag: '--no-early-stop', kind: 'boolean', commands: ['sweep'], group: 'Sweep', help: 'run every value, even after the endpoint saturates' },

  // ---- Prefill dial ----
  {
    key: 'batchSizes', flag: '--batch-sizes', kind: 'int', min: 1, max: 65536, commands: ['prefill-dial'], list: ['prefill-dial'], group: 'Prefill dial', value: 'A,B',
    defaults: { 'prefill-dial': [32, 512] }, help: 'prefill chunk sizes to compare (at least two), tokens per engine step',
  },
  {
    key: 'decodeStreams', flag: '--decode-streams', kind: 'int', min: 1, max: 4096, commands: ['prefill-dial'], group: 'Prefill dial', value: 'N',
    defaultNote: '--parallel − 1 (one slot is kept for the long prompts)', help: 'concurrent short decodes: the streams a long prefill stalls',
  },
  {
    key: 'shortPromptTokens', flag: '--short-prompt-tokens', kind: 'int', min: 1, max: 1_048_576, commands: ['prefill-dial'], group: 'Prefill dial', value: 'N',
    defaults: { 'prefill-dial': 16 }, help: "the short decodes' prompt length",
  },
  {
    key: 'shortMaxTokens', flag: '--short-max-tokens', kind: 'int', min: 2, max: 1_048_576, commands: ['prefill-dial'], group: 'Prefill dial', value: 'N',
    defaults: { 'prefill-dial': 48 }, help: "the short decodes' output tokens",
  },
  {
    key: 'longPromptTokens', flag: '--long-prompt-tokens', kind: 'int', min: 1, max: 1_048_576, commands: ['prefill-dial'], group: 'Prefill dial', value: 'N',
    defaults: { 'prefill-dial': 1024 }, help: "the long prompts' length",
  },
  {
    key: 'longMaxTokens', flag: '--long-max-tokens', kind: 'int', min: 1, max: 1_048_576, commands: ['prefill-dial'], group: 'Prefill dial', value: 'N',
    defaults: { 'prefill-dial': 4 }, help: "the long prompts' output tokens",
  },
  {
    key: 'longRate', flag: '--long-rate', kind: 'number', positive: true, unit: 'of prompts per second', commands: ['prefill-dial'], group: 'Prefill dial', value: 'R',
    defaults: { 'prefill-dial': 0.5 }, help: 'long prompts per second (open loop, seeded: every chunk size gets the same arrivals)',
  },

  // ---- Comparison ----
  {
    key: 'failOnRegression', flag: '--fail-on-regression', kind: 'string', commands: COMPARING, group: 'Comparison', value: 'PCT|ttft.p99=10%,…',
    help: 'exit 1 when a 95% interval says NEW is slower by more than PCT: one number for every figure, or per figure (ttft.p99=10%,tpot.p50=3%,throughput=5%; a metric alone gates its every row)',
  },
  {
    key: 'detect', flag: '--detect', kind: 'number', positive: true, unit: 'of percent', commands: COMPARING, group: 'Comparison', value: 'PCT', defaults: { compare: 5, ab: 5 },
    help: 'the change the sample-size advice sizes for: where no difference is detected, how many requests a side would detect PCT%',
  },
  {
    key: 'resamples', flag: '--resamples', kind: 'int', min: 100, max: 100_000, commands: COMPARING, group: 'Comparison', value: 'N',
    defaultNote: '2000, fewer (at least 200) for runs of millions of values', help: 'bootstrap resamples behind each interval',
  },
  {
    key: 'bootstrapSeed', flag: '--seed', kind: 'int', min: -2_147_483_648, max: 4_294_967_295, commands: ['compare'], group: 'Comparison', value: 'N', defaults: { compare: 0 },
    help: "seed of the bootstrap's resampling (the same seed, the same intervals)",
  },
  {
    key: 'force', flag: '--force', kind: 'boolean', commands: ['compare'], group: 'Comparison',
    help: 'compare runs whose workloads differ (load, prompts, max tokens, API): the differences are printed first',
  },
  {
    key: 'markdown', flag: '--markdown', kind: 'boolean', commands: COMPARING, group: 'Comparison', conflicts: [{ key: 'json' }],
    help: 'print the comparison as a Markdown table for a pull-request comment; with GITHUB_STEP_SUMMARY set, also append it there',
  },
  {
    key: 'junit', flag: '--junit', kind: 'string', commands: COMPARING, group: 'Comparison', value: 'FILE',
    help: 'write a JUnit XML report: one test case per figure gated by --fail-on-regression',
  },

  // ---- Limits and judgement ----
  {
    key: 'timeout', flag: '--timeout', kind: 'number', positive: true, unit: 'of seconds', commands: [...MEASURING, 'cache-check', 'ab'], group: 'Limits and judgement', value: 'S',
    defaults: { run: 120, sweep: 120, 'prefill-dial': 120, 'cache-check': 120, ab: 120, settings: 120 }, setting: { key: 'workload.timeoutMs', scale: 1000, min: 1, max: 3600 }, help: 'per request',
  },
  {
    key: 'idleTimeout', flag: '--idle-timeout', kind: 'number', positive: true, unit: 'of seconds', commands: [...MEASURING, 'cache-check', 'ab'], group: 'Limits and judgement', value: 'S',
    defaults: { run: 30, sweep: 30, 'prefill-dial': 30, 'cache-check': 30, ab: 30 }, help: 'between chunks',
  },
  {
    key: 'respectRetryAfter', flag: '--respect-retry-after', kind: 'boolean', commands: ENDPOINT, group: 'Limits and judgement',
    defaults: { settings: false }, setting: { key: 'workload.respectRetryAfter' },
    help: `on a 429, 503 or 529 with Retry-After, wait as it says (at most ${MAX_RETRY_AFTER_S} s, within --timeout) and send the request again, each retry recorded; without it such a reply is a failed request, as the endpoint gave it`,
  },
  {
    key: 'slo', flag: '--slo', kind: 'string', commands: MEASURING, group: 'Limits and judgement', value: 'ttft=500,tpot=50,itl=100,e2e=20000',
    setting: { key: 'slo' }, check: checkSlo, help: "SLOs in ms: goodput and pass/fail (else a prompt file's front matter)",
  },
  {
    key: 'failOnSlo', flag: '--fail-on-slo', kind: 'boolean', commands: MEASURING, group: 'Limits and judgement',
    help: 'exit 3 when an SLO is missed at p99 (a sweep: when no point meets every SLO)',
  },
  {
    key: 'percentiles', flag: '--percentiles', kind: 'number', min: 0, max: 100, commands: [...ENDPOINT, 'import'], list: ['run', 'sweep', 'import'], group: 'Limits and judgement', value: '50,90,99',
    defaults: { run: [50, 90, 95, 99], sweep: [50, 90, 95, 99], ab: [50, 90, 95, 99], import: [50, 90, 95, 99] }, help: 'percentiles to report',
  },

  // ---- Output ----
  {
    key: 'out', flag: '--out', short: '-o', kind: 'string', commands: [...MEASURING, 'cache-check', 'import', 'recover'], group: 'Output', value: 'FILE',
    help: 'write the run file (JSON; without it nothing is written, but recover writes where the run was to go). While a run or sweep goes, every finished request is also appended to a journal beside it (FILE.<run id>.journal.jsonl), removed once the file is written',
  },
  {
    key: 'outDir', flag: '--out-dir', kind: 'string', commands: ['import', 'ab'], group: 'Output', value: 'DIR', conflicts: [{ key: 'out' }],
    help: 'import: write one run file per file imported into DIR, named after it (NAME.run.json); ab: write each side\'s run file into DIR (a.run.json, b.run.json)',
  },
  { key: 'json', flag: '--json', kind: 'boolean', commands: [...MEASURING, 'cache-check', 'import', 'compare', 'ab', 'recover'], group: 'Output', help: 'print the result as JSON on stdout instead of the table' },
  {
    key: 'traceOut', flag: '--trace-out', kind: 'string', commands: [...MEASURING, 'cache-check', 'import'], group: 'Output', value: 'FILE',
    help: 'write the run as a trace (Trace Event Format JSON: a track per request, queue/prefill/decode slices, a mark per chunk) to open in ui.perfetto.dev',
  },
  {
    key: 'chunksCsv', flag: '--chunks-csv', kind: 'string', commands: [...MEASURING, 'cache-check', 'import'], group: 'Output', value: 'FILE',
    help: 'write one CSV row per chunk (request, chunk, ms after sending, epoch ms, gap, stall cause)',
  },
  {
    key: 'otlpEndpoint', flag: '--otlp-endpoint', kind: 'string', commands: [...MEASURING, 'cache-check', 'import'], group: 'Output', value: 'URL',
    setting: { key: 'otlp.endpoint' }, check: checkOtlpUrl,
    help: 'send the run\'s metrics (OpenTelemetry GenAI names) over OTLP/HTTP to a collector, e.g. http://localhost:4318; headers from OTEL_EXPORTER_OTLP_HEADERS',
  },
  { key: 'help', flag: '--help', short: '-h', kind: 'boolean', commands: ALL, group: 'Output', help: 'this help' },
  { key: 'version', flag: '--version', short: '-V', kind: 'boolean', commands: ALL, group: 'Output', help: 'the version' },
];

const BY_KEY: ReadonlyMap<string, OptionSpec> = new Map(OPTIONS.map((o) => [o.key, o]));

export function option(key: string): OptionSpec {
  const o = BY_KEY.get(key);
  if (!o) throw new Error(`no option "${key}" in the options table`);
  return o;
}

/** The options a command takes, in table order. */
export function optionsOf(command: CommandName): OptionSpec[] {
  return OPTIONS.filter((o) => o.commands.includes(command));
}

export function takesList(o: OptionSpec, command: CommandName): boolean {
  return o.list?.includes(command) ?? false;
}

/** The default of an option on a surface, as the table gives it (undefined: none, or it depends on other options). */
export function defaultOf<T extends number | string | boolean | readonly number[]>(key: string, surface: Surface): T | undefined {
  return option(key).defaults?.[surface] as T | undefined;
}

/** The options that have a setting, by setting key. */
export function settingOptions(): OptionSpec[] {
  return OPTIONS.filter((o) => o.setting !== undefined);
}

/** Inclusive bounds of an option as its setting holds it (scaled), for clamping and the manifest. */
export function settingBounds(o: OptionSpec): { min?: number; max?: number } {
  const scale = o.setting?.scale ?? 1;
  const min = o.setting?.min ?? o.min;
  const max = o.setting?.max ?? o.max;
  return {
    ...(min !== undefined ? { min: min * scale } : {}),
    ...(max !== undefined ? { max: max * scale } : {}),
  };
}

/**
 * Checks one number against an option's limits; the problem after the flag, or undefined. `int`
 * and `positive` come from the table; used by the CLI parser, the settings and command arguments.
 */
export function numberProblem(o: OptionSpec, n: number): string | undefined {
  const whole = o.kind === 'int';
  if (!Number.isFinite(n) || (whole && !Number.isInteger(n))) return `must be ${whole ? 'a whole number' : 'a number'}, got ${n}`;
  if (o.positive && !(n > 0)) return `must be a positive number${o.unit ? ` ${o.unit}` : ''}, got ${n}`;
  if (o.min !== undefined && n < o.min) return `must be ${whole ? 'a whole number' : 'a number'} ≥ ${o.min}, got ${n}`;
  if (o.max !== undefined && n > o.max) return `must be at most ${o.max}, got ${n}`;
  return undefined;
}

/** "a, b or c": how a list of choices is written in messages. */
export function orList(items: readonly string[]): string {
  return items.length <= 1 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} or ${items[items.length - 1]}`;
}

/** The problem with a number typed into an input box for an option (the extension's pickers), or undefined. */
export function inputProblem(key: string, text: string): string | undefined {
  const o = option(key);
  const t = text.trim();
  const whole = o.kind === 'int';
  if (t === '' || (whole ? !/^-?\d+$/.test(t) : !Number.isFinite(Number(t)))) return whole ? 'Enter a whole number' : 'Enter a number';
  const n = Number(t);
  if ((o.min !== undefined && n < o.min) || (o.max !== undefined && n > o.max) || (o.positive && !(n > 0))) {
    return `Enter a number from ${o.positive && (o.min === undefined || o.min <= 0) ? 'above 0' : o.min} to ${o.max ?? 'any size'}`;
  }
  return undefined;
}

/**
 * A list of values of one option as typed ("1, 2, 4,8": a sweep's points): the numbers, or the
 * problem, each value checked as the option's (inputProblem). At least two values, each once. The
 * pickers (src/jobs/presets.ts parseSweepValues) and the sidebar's form read lists with it.
 */
export function parseValueList(key: string, text: string): { values: number[] } | { problem: string } {
  const parts = text.split(/[\s,]+/).filter(Boolean);
  if (parts.length < 2) return { problem: 'Enter two or more values, separated by commas' };
  for (const part of parts) {
    const problem = inputProblem(key, part);
    if (problem) return { problem: `${part}: ${problem.replace(/from above 0 to any size$/, 'above 0')}` };
  }
  const values = parts.map(Number);
  if (new Set(values).size !== values.length) return { problem: 'Enter each value once' };
  return { values };
}
