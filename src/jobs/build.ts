// Jobs from option values (src/jobs/values.ts): the CLI's flags and the extension's settings and
// commands go through the same builders, so every surface gets the same defaults, rules and
// messages. A problem is a UsageError naming the flag.
import { statSync } from 'node:fs';
import { resolve as resolvePath } from 'node:path';
import { cacheCheckRounds, cacheCheckWorkload } from '../engine/run/cacheCheck';
import { parseSlo } from '../engine/core/slo';
import { defaultConcurrencies } from '../engine/run/sweep';
import type { SweepDimension } from '../engine/run/sweep';
import type { Prompt, PromptPulledIn, SamplingKey, SloSpec, WorkloadMode, WorkloadSpec } from '../engine/core/types';
import type { ApiKind } from '../engine/core/apis';
import { defaultWorkload, workloadProblems, WorkloadError } from '../engine/core/workload';
import { checkOneLoop } from '../engine/run/segments';
import { GgufError } from '../localServer/gguf';
import { modelContext } from '../localServer/model';
import { isSyntheticPreset } from '../localServer/presets';
import { parseShapeSpec } from '../localServer/synthetic';
import { UsageError } from './errors';
import { chatSource, groupsOf, rampMode, responseFormatOf, toolsOf, traceFormatOf, traceOf } from './traffic';
import type { BuiltJob, CacheCheckJob, DialJob, LocalServerRequest, RunJob, SweepJob, Target } from './job';
import { defaultOf } from './options';
import type { CommandName } from './options';
import { dialCtxSize, dialSlotNeed, sweepConcurrencyLimit, sweepPromptTokens, TRAFFIC_DEFAULTS } from './presets';
import { loadPrompts, loadVars } from './jobPrompts';
import type { LoadedPrompts } from './jobPrompts';
import { CLI_SLOT_NAMES, promptNeeds, SETTING_SLOT_NAMES, sizeSlots } from './slotContext';
import type { OptionValues } from './values';

/** What the builders take besides the values. */
export interface BuildContext {
  /** File paths are resolved against it (default: the process's). */
  readonly cwd?: string;
  /** Where to send the requests, when the caller has resolved it (a configured endpoint); else from --url. */
  readonly target?: Target;
  /** The prompts to send (a CodeLens prompt), instead of reading the prompt file or dataset the values name. */
  readonly prompts?: readonly Prompt[];
  /** An SLO to use when the values give none (the prompt file's front matter, the settings'). */
  readonly slo?: SloSpec;
  /**
   * The sampling values the caller set on purpose (the extension: settings the user gave), which beat a
   * prompt file's own. Absent: those whose option was given (the CLI's flags).
   */
  readonly explicit?: readonly SamplingKey[];
  /** Where a prompt file's allowed `${env:…}` values come from (the CLI's environment); default: the process's. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** What the caller's `prompts` pulled in when their file was read (the extension's reader): recorded as a read file's would be. */
  readonly pulledIn?: PromptPulledIn;
}

const path = (ctx: BuildContext, p: string): string => resolvePath(ctx.cwd ?? process.cwd(), p);

/** The sampling keys that have an option of their own (the rest come only from a prompt file). */
const SAMPLING_OPTIONS: readonly SamplingKey[] = ['maxTokens', 'temperature', 'topP', 'responseFormat', 'tools'];

function sloOf(v: OptionValues): SloSpec | undefined {
  const text = v.str('slo');
  if (text === undefined) return undefined;
  try {
    return parseSlo(text);
  } catch (e) {
    throw new UsageError(`--slo: ${(e as Error).message}`, '--slo');
  }
}

function headersOf(v: OptionValues): Record<string, string> | undefined {
  const list = v.strs('header');
  if (list.length === 0) return undefined;
  const out: Record<string, string> = {};
  for (const h of list) {
    const i = h.indexOf(':');
    out[h.slice(0, i).trim()] = h.slice(i + 1).trim();
  }
  return out;
}

/** A model named on the command line: a preset, `shape:…`, or (with `files`) a .gguf path. */
export function modelFrom(text: string, flag: string, ctx: BuildContext = {}, files = false): LocalServerRequest['model'] {
  if (files && /\.gguf$/i.test(text)) return { kind: 'file', path: path(ctx, text) };
  if (text.startsWith('shape:')) {
    try {
      return { kind: 'shape', shape: parseShapeSpec(text) };
    } catch (e) {
      throw new UsageError(`${flag}: ${(e as Error).message}`, flag);
    }
  }
  if (!isSyntheticPreset(text)) throw new UsageError(`${flag} must be tiny, small, medium or shape:…${files ? ' or a .gguf file' : ''}, got "${text}"`, flag);
  return { kind: 'preset', preset: text };
}

function localModel(v: OptionValues, command: CommandName, ctx: BuildContext): LocalServerRequest['model'] {
  const file = v.str('modelFile');
  if (file !== undefined) return { kind: 'file', path: path(ctx, file) };
  return modelFrom(v.str('preset') ?? defaultOf<string>('preset', command) ?? 'tiny', '--preset', ctx);
}

/** The local server a command starts, from the local-server options; `parallel` is what the job needs. */
export function localServerRequest(
  v: OptionValues,
  command: CommandName,
  parallel: number,
  ctx: BuildContext = {},
  model: LocalServerRequest['model'] = localModel(v, command, ctx),
): LocalServerRequest {
  const llamaServer = v.str('llamaServer');
  const backend = (v.str('backend') ?? (llamaServer !== undefined ? 'llama-server' : 'bundled')) as LocalServerRequest['backend'];
  const threads = v.num('threads');
  const ctxSize = v.num('ctxSize');
  const batchSize = v.num('batchSize');
  return {
    model,
    backend,
    ...(llamaServer !== undefined ? { llamaServerPath: path(ctx, llamaServer) } : {}),
    ...(threads !== undefined ? { threads } : {}),
    ...(ctxSize !== undefined ? { ctxSize } : {}),
    ...(batchSize !== undefined ? { batchSize } : {}),
    parallel: Math.max(1, v.num('parallel') ?? parallel),
  };
}

function targetOf(v: OptionValues, command: CommandName, parallel: number, ctx: BuildContext): Target {
  if (ctx.target) return ctx.target.kind === 'local' ? { kind: 'local', server: { ...ctx.target.server, parallel: Math.max(ctx.target.server.parallel, parallel) } } : ctx.target;
  const url = v.str('url');
  if (url === undefined) return { kind: 'local', server: localServerRequest(v, command, parallel, ctx) };
  return endpointTarget(v, url, v.str('model'));
}

/** An endpoint target from the endpoint options, with this URL and model (`ab` gives each side its own). */
export function endpointTarget(v: OptionValues, url: string, model: string | undefined): Target {
  const headers = headersOf(v);
  const apiKeyHeader = v.str('apiKeyHeader');
  return {
    kind: 'endpoint',
    url,
    api: (v.str('api') ?? 'auto') as ApiKind | 'auto',
    ...(model !== undefined ? { model } : {}),
    ...(headers ? { headers } : {}),
    ...(apiKeyHeader !== undefined ? { apiKeyHeader } : {}),
  };
}

/**
 * A local target whose slots hold the job's longest prompt and the max tokens it is sent with
 * (slotContext), or whose explicit --ctx-size was checked against that prompt: one that cannot fit is
 * a usage error here, before a server starts. `syntheticTokens`: the synthetic prompt lengths the job
 * sends when it has no prompts of its own.
 */
async function sizedTarget(target: Target, workload: WorkloadSpec, prompts: readonly Prompt[] | undefined, syntheticTokens: readonly number[], ctx: BuildContext): Promise<Target> {
  if (target.kind !== 'local') return target;
  const server = target.server;
  // The extension names its settings; it passes the target it resolved, the CLI never does.
  const names = ctx.target ? SETTING_SLOT_NAMES : CLI_SLOT_NAMES;
  let model: Awaited<ReturnType<typeof modelContext>>;
  try {
    model = await modelContext(server.model);
  } catch (e) {
    if (!(e instanceof GgufError)) throw e;
    const flag = ctx.target ? 'llmProfiler.localServer.modelPath' : '--model-file';
    throw new UsageError(`${flag}: ${e.message}`, '--model-file');
  }
  const slotContext = sizeSlots(promptNeeds(workload, prompts, syntheticTokens, model.count), {
    parallel: server.parallel,
    ...(server.ctxSize !== undefined ? { ctxSize: server.ctxSize } : {}),
    model,
    names,
  });
  return slotContext === undefined ? target : { kind: 'local', server: { ...server, slotContext } };
}

/** The synthetic prompt length a workload sends, when it sends synthetic prompts. */
const syntheticLength = (w: WorkloadSpec): number[] => {
  const p = w.prompt;
  if (p.kind === 'synthetic') return [p.tokens];
  // a chat's last turn carries every earlier user turn and reply
  return p.kind === 'chat' ? [p.turns * p.userTokens + (p.turns - 1) * p.replyTokens] : [];
};

function modeOf(v: OptionValues, command: CommandName): WorkloadMode {
  if (v.str('trace') !== undefined) return { kind: 'trace', speed: v.num('traceSpeed') ?? 1, ...(v.num('maxConcurrency') !== undefined ? { maxConcurrency: v.num('maxConcurrency')! } : {}) };
  const ramp = v.str('ramp');
  if (ramp !== undefined) return rampMode(ramp, v);
  const rate = v.num('rate');
  if (rate === undefined) return { kind: 'closed', concurrency: v.num('concurrency') ?? defaultOf<number>('concurrency', command) ?? 1 };
  const maxConcurrency = v.num('maxConcurrency');
  return { kind: 'open', rate, burstiness: v.num('burstiness') ?? 1, ...(maxConcurrency !== undefined ? { maxConcurrency } : {}) };
}

/** Where the prompts come from: a prompt file, a dataset (its conversations with --multi-turn), --chat, a trace, or synthetic prompts (in --prefix-groups). */
function promptSourceOf(v: OptionValues, ctx: BuildContext, promptTokens: number): WorkloadSpec['prompt'] {
  const promptFile = v.str('promptFile');
  if (promptFile !== undefined) return { kind: 'file', path: path(ctx, promptFile) };
  const dataset = v.str('dataset');
  if (dataset !== undefined) return { kind: 'dataset', path: path(ctx, dataset), ...(v.flag('multiTurn') ? { multiTurn: true } : {}) };
  const chat = v.str('chat');
  if (chat !== undefined) return chatSource(chat);
  const trace = v.str('trace');
  if (trace !== undefined) return { kind: 'trace', path: path(ctx, trace), format: traceFormatOf(trace) };
  const groups = v.str('prefixGroups');
  return { kind: 'synthetic', tokens: promptTokens, sharedPrefix: v.flag('sharedPrefix'), ...(groups !== undefined ? { groups: groupsOf(groups, promptTokens) } : {}) };
}

/** How much is sent: a duration, sessions (conversations), the whole trace, or a request count. */
function sizeOf(v: OptionValues, command: CommandName, prompt: WorkloadSpec['prompt']): Partial<WorkloadSpec> {
  const duration = v.num('duration');
  if (duration !== undefined) return { durationS: duration };
  const sessions = v.num('sessions');
  const multiTurn = prompt.kind === 'chat' || (prompt.kind === 'dataset' && prompt.multiTurn === true);
  if (sessions !== undefined && !multiTurn) throw new UsageError('--sessions needs conversations: --chat, or --dataset with --multi-turn', '--sessions');
  if (multiTurn) return sessions !== undefined ? { sessions } : prompt.kind === 'chat' ? { sessions: TRAFFIC_DEFAULTS.chat.sessions } : {};
  if (prompt.kind === 'trace') return {};
  return { requests: v.num('requestsPerPoint') ?? v.num('requests') ?? defaultOf<number>('requests', command) ?? 10 };
}

/** --tools and --response-format, read from their files: values the user set, so they beat a prompt file's own. `side`: an A/B run's side (1: B's, given twice). */
export async function trafficFiles(v: OptionValues, ctx: BuildContext, side = 0): Promise<Partial<WorkloadSpec>> {
  const tools = v.sides('tools')[side] ?? v.str('tools');
  const format = v.sides('responseFormat')[side] ?? v.str('responseFormat');
  return {
    ...(tools !== undefined && tools !== 'none' ? { tools: await toolsOf(path(ctx, tools)) } : {}),
    ...(format !== undefined && format !== 'none' ? { responseFormat: await responseFormatOf(format === 'json' ? format : path(ctx, format)) } : {}),
  };
}

/** The workload fields `run` and `sweep` share, from the values (defaults from the table for `command`). */
export function workloadOf(v: OptionValues, command: CommandName, ctx: BuildContext, promptTokens: number): Partial<WorkloadSpec> {
  const o: { -readonly [K in keyof WorkloadSpec]?: WorkloadSpec[K] } = {};
  o.mode = modeOf(v, command);
  o.prompt = promptSourceOf(v, ctx, promptTokens);
  // a run's and a sweep's synthetic prompts are sized so that the server counts promptTokens (engine/run/promptLength.ts)
  if (o.prompt.kind === 'synthetic' && (command === 'run' || command === 'sweep')) o.prompt = { ...o.prompt, sizing: 'server' };
  Object.assign(o, sizeOf(v, command, o.prompt));
  o.warmup = v.num('warmup') ?? defaultOf<number>('warmup', command) ?? 1;
  o.maxTokens = v.num('maxTokens') ?? (o.prompt.kind === 'chat' ? o.prompt.replyTokens : undefined) ?? defaultOf<number>('maxTokens', command) ?? 128;
  const thinkTime = v.num('thinkTime');
  if (thinkTime !== undefined) o.thinkTimeMs = thinkTime;
  o.ignoreEos = !v.flag('noIgnoreEos');
  const seed = v.num('seed');
  if (seed !== undefined) o.seed = seed;
  const temperature = v.num('temperature');
  if (temperature !== undefined) o.temperature = temperature;
  const topP = v.num('topP');
  if (topP !== undefined) o.topP = topP;
  // The values the user set beat a prompt file's own; the table's defaults are not in `v`, so they never do.
  const explicit = ctx.explicit ?? SAMPLING_OPTIONS.filter((k) => v.has(k));
  if (explicit.length > 0) o.explicit = [...explicit];
  const timeout = v.num('timeout');
  if (timeout !== undefined) o.timeoutMs = timeout * 1000;
  const idle = v.num('idleTimeout');
  if (idle !== undefined) o.idleTimeoutMs = idle * 1000;
  if (v.flag('respectRetryAfter')) o.respectRetryAfter = true;
  const workers = v.num('workers');
  if (workers !== undefined) o.workers = workers;
  const percentiles = v.nums('percentiles');
  if (percentiles !== undefined) o.percentiles = [...new Set(percentiles)].sort((a, b) => a - b);
  const prefixCache = v.str('prefixCache') as WorkloadSpec['prefixCache'];
  const meetsCache = (['sharedPrefix', 'prefixGroups', 'chat', 'multiTurn', 'trace'] as const).find((k) => v.has(k));
  if (prefixCache === 'cold' && meetsCache !== undefined) {
    const what = meetsCache === 'sharedPrefix' || meetsCache === 'prefixGroups' ? 'shared-prefix prompts exist to be served from the prefix cache' : meetsCache === 'trace' ? "a trace's shared blocks are meant to meet the prefix cache" : "a conversation's history is meant to meet the prefix cache";
    throw new UsageError(`--prefix-cache cold cannot be used with --${meetsCache.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}: ${what}, and keeping it cold would take that away (they are sent warm)`, '--prefix-cache');
  }
  // absent: defaultWorkload decides (cold; warm for shared-prefix prompts)
  if (prefixCache !== undefined) o.prefixCache = prefixCache;
  return o;
}

type FileSource = Extract<WorkloadSpec['prompt'], { kind: 'file' }>;

/** A folder --allow-read names, checked now: a typo would otherwise only show as refused reads. */
function allowedFolder(ctx: BuildContext, dir: string): string {
  const p = path(ctx, dir);
  if (!statSync(p, { throwIfNoEntry: false })?.isDirectory()) throw new UsageError(`--allow-read: ${p} is not a folder`, '--allow-read');
  return p;
}

/** The prompt file's source with its variables' values (--var, --vars) and what it may pull in (--allow-read, --allow-env). */
async function fileSource(source: FileSource, v: OptionValues, ctx: BuildContext): Promise<FileSource> {
  const varsFile = v.str('vars');
  const vars = await loadVars(v.strs('var'), varsFile !== undefined ? path(ctx, varsFile) : undefined);
  const allowRead = [...new Set(v.strs('allowRead').map((d) => allowedFolder(ctx, d)))];
  const allowEnv = [...new Set(v.strs('allowEnv'))];
  return { ...source, ...(vars ? { vars } : {}), ...(allowRead.length > 0 ? { allowRead } : {}), ...(allowEnv.length > 0 ? { allowEnv } : {}) };
}

/**
 * The workload's prompt source (a prompt file's with its values and allowances, and what it pulled in)
 * and the prompts: the caller's (already filled), else the prompt file's or dataset's.
 */
export async function promptsFor(given: Partial<WorkloadSpec>, v: OptionValues, ctx: BuildContext): Promise<{ base: Partial<WorkloadSpec>; loaded: LoadedPrompts; sizing?: readonly Prompt[] }> {
  const trace = given.prompt?.kind === 'trace' ? await traceOf(given.prompt) : undefined;
  const base = { ...given, ...(await trafficFiles(v, ctx)), ...(trace ? { prompt: trace.prompt } : {}) };
  const source = base.prompt!.kind === 'file' ? await fileSource(base.prompt!, v, ctx) : base.prompt!;
  const loaded: LoadedPrompts = ctx.prompts && ctx.prompts.length > 0
    ? { prompts: ctx.prompts, warnings: [], ...(ctx.pulledIn ? { pulledIn: ctx.pulledIn } : {}) }
    : await loadPrompts(source, ctx.env ? { env: ctx.env } : {});
  const prompt = source.kind === 'file' && loaded.pulledIn ? { ...source, pulledIn: loaded.pulledIn } : source;
  // a trace's longest line sizes a local server's slots (its prompts are made as the run goes)
  return { base: { ...base, prompt }, loaded, ...(trace?.longest ? { sizing: [trace.longest] } : {}) };
}

export function checked(w: WorkloadSpec): WorkloadSpec {
  const problems = workloadProblems(w);
  if (problems.length > 0) throw new UsageError(problems.join('; '));
  return w;
}

/** A run in segments (`--repeat`, `ab`) sends from one event loop: a workload that wants worker threads is a usage error. */
export function oneLoop(w: WorkloadSpec, what: string): void {
  try {
    checkOneLoop(w, what);
  } catch (e) {
    if (e instanceof WorkloadError) throw new UsageError(e.message, w.workers !== undefined ? '--workers' : undefined);
    throw e;
  }
}

function needSlo(failOnSlo: boolean, slo: SloSpec | undefined, where: string): void {
  if (failOnSlo && slo === undefined) throw new UsageError(`--fail-on-slo needs an SLO: give --slo${where}`, '--fail-on-slo');
}

/** `llm-profiler run`: one workload against an endpoint, or against the bundled server started for it. */
export async function buildRunJob(v: OptionValues, ctx: BuildContext = {}): Promise<BuiltJob<RunJob>> {
  const { base, loaded, sizing } = await promptsFor(workloadOf(v, 'run', ctx, v.num('promptTokens') ?? defaultOf<number>('promptTokens', 'run') ?? 256), v, ctx);
  const slo = sloOf(v) ?? loaded.slo ?? ctx.slo;
  const failOnSlo = v.flag('failOnSlo');
  needSlo(failOnSlo, slo, ' (or an llmProfiler.slo block in the prompt file)');
  const workload = checked(defaultWorkload({ ...base, ...(slo ? { slo } : {}) }));
  // one slot per request in flight, so the server never queues what the client meant to run in parallel
  const mode = workload.mode;
  const parallel = mode.kind === 'closed' ? mode.concurrency : (mode.maxConcurrency ?? 4);
  const repeat = v.num('repeat') ?? 1;
  if (repeat > 1) oneLoop(workload, '--repeat');
  const job: RunJob = {
    kind: 'run',
    target: await sizedTarget(targetOf(v, 'run', parallel, ctx), workload, loaded.prompts ?? sizing, syntheticLength(workload), ctx),
    workload,
    ...(loaded.prompts ? { prompts: loaded.prompts } : {}),
    ...(repeat > 1 ? { repeat } : {}),
    failOnSlo,
  };
  return { job, warnings: loaded.warnings };
}

function sweepDimension(v: OptionValues, local: boolean): { dimension: SweepDimension; values: number[] } {
  const conc = v.nums('concurrency');
  const rates = v.nums('rate');
  const prompts = v.nums('promptTokens');
  const promptList = prompts && prompts.length > 1 ? prompts : undefined;
  const lists = [conc && conc.length > 1 ? '--concurrency' : '', rates && rates.length > 1 ? '--rate' : '', promptList ? '--prompt-tokens' : ''].filter(Boolean);
  if (lists.length > 1) throw new UsageError(`sweep one dimension at a time: got lists for ${lists.join(' and ')}`);
  if (rates) return { dimension: 'rate', values: [...rates] };
  if (promptList) {
    if (conc && conc[0] !== 1) throw new UsageError('a prompt-length sweep runs at concurrency 1: drop --concurrency', '--concurrency');
    return { dimension: 'promptTokens', values: [...promptList] };
  }
  const limit = v.num('concurrencyLimit') ?? sweepConcurrencyLimit(local);
  return { dimension: 'concurrency', values: conc && conc.length > 0 ? [...conc] : defaultConcurrencies(limit) };
}

/** `llm-profiler sweep`: one workload at several concurrencies, rates or prompt lengths. */
export async function buildSweepJob(v: OptionValues, ctx: BuildContext = {}): Promise<BuiltJob<SweepJob>> {
  const local = ctx.target ? ctx.target.kind === 'local' : !v.has('url');
  const { dimension, values } = sweepDimension(v, local);
  const single = v.nums('promptTokens');
  const promptTokens = single && single.length === 1 ? single[0]! : sweepPromptTokens(local);
  const { base, loaded } = await promptsFor(workloadOf(v, 'sweep', ctx, promptTokens), v, ctx);
  const slo = sloOf(v) ?? loaded.slo ?? ctx.slo;
  const failOnSlo = v.flag('failOnSlo');
  needSlo(failOnSlo, slo, ' (or a prompt file with slo: in its front matter)');
  const workload = checked(defaultWorkload({
    ...base,
    ...(slo ? { slo } : {}),
  }));
  for (const value of values) if (!(Number.isFinite(value) && value > 0)) throw new UsageError(`bad ${dimension} value ${value}: must be a positive number`);
  // a slot per concurrent stream: fewer would queue them, and the curve would measure the queue
  const parallel = dimension === 'concurrency' ? Math.max(...values) : (workload.mode.kind === 'open' ? (workload.mode.maxConcurrency ?? 4) : 4);
  const job: SweepJob = {
    kind: 'sweep',
    target: await sizedTarget(targetOf(v, 'sweep', parallel, ctx), workload, loaded.prompts, dimension === 'promptTokens' ? [Math.max(...values)] : syntheticLength(workload), ctx),
    dimension,
    values,
    workload,
    stopOnSaturation: !v.flag('noEarlyStop'),
    ...(loaded.prompts ? { prompts: loaded.prompts } : {}),
    failOnSlo,
  };
  return { job, warnings: loaded.warnings };
}

/**
 * `llm-profiler cache-check`: per round a prompt led by a new unique prefix, the same text again, and a
 * variant, one request at a time. The prompts: a prompt file's (each one in turn), or one synthetic
 * prompt of --prompt-tokens.
 */
export async function buildCacheCheckJob(v: OptionValues, ctx: BuildContext = {}): Promise<BuiltJob<CacheCheckJob>> {
  const { base, loaded } = await promptsFor(workloadOf(v, 'cache-check', ctx, v.num('promptTokens') ?? defaultOf<number>('promptTokens', 'cache-check') ?? 1024), v, ctx);
  const prompts = loaded.prompts;
  const workload = checked(cacheCheckWorkload(defaultWorkload({ ...base, prefixCache: 'warm' }), cacheCheckRounds(prompts ? { prompts } : {})));
  const job: CacheCheckJob = {
    kind: 'cache-check',
    target: await sizedTarget(targetOf(v, 'cache-check', 1, ctx), workload, prompts, syntheticLength(workload), ctx),
    workload,
    ...(prompts ? { prompts } : {}),
    failOnSlo: false,
  };
  return { job, warnings: loaded.warnings };
}

/** `llm-profiler prefill-dial`: the same mixed workload on the local server at several prefill chunk sizes. */
export function buildDialJob(v: OptionValues, ctx: BuildContext = {}): BuiltJob<DialJob> {
  // every dial figure has its default in the options table
  const d = (key: string): number => v.num(key) ?? defaultOf<number>(key, 'prefill-dial')!;
  const batchSizes = [...(v.nums('batchSizes') ?? defaultOf<readonly number[]>('batchSizes', 'prefill-dial')!)];
  if (batchSizes.length < 2) throw new UsageError('--batch-sizes needs at least two sizes to compare, e.g. 32,512', '--batch-sizes');
  const parallel = d('parallel');
  if (parallel < 2) throw new UsageError(`--parallel must be at least 2 for the prefill dial (got ${parallel}): one slot is kept for the long prompts`, '--parallel');
  const decodeStreams = v.num('decodeStreams') ?? parallel - 1;
  if (decodeStreams >= parallel) throw new UsageError(`--decode-streams must be below --parallel (${parallel}): one slot is kept for the long prompts`, '--decode-streams');
  const slo = sloOf(v) ?? ctx.slo;
  const failOnSlo = v.flag('failOnSlo');
  needSlo(failOnSlo, slo, '');
  const longPromptTokens = d('longPromptTokens');
  const longMaxTokens = d('longMaxTokens');
  const given = v.num('ctxSize');
  if (given !== undefined && given / parallel < dialSlotNeed(longPromptTokens, longMaxTokens)) {
    throw new UsageError(`--ctx-size ${given} gives each of the ${parallel} slots ${Math.floor(given / parallel)} tokens: too few for a ${longPromptTokens}-token prompt`, '--ctx-size');
  }
  const timeout = v.num('timeout');
  const idle = v.num('idleTimeout');
  const seed = v.num('seed');
  const { batchSize: _perConfig, ...server } = localServerRequest(v, 'prefill-dial', parallel, ctx);
  const job: DialJob = {
    kind: 'dial',
    server: { ...server, parallel, ctxSize: given ?? dialCtxSize(parallel, longPromptTokens, longMaxTokens) },
    dial: {
      batchSizes,
      decodeStreams,
      shortPromptTokens: d('shortPromptTokens'),
      shortMaxTokens: d('shortMaxTokens'),
      longPromptTokens,
      longMaxTokens,
      longRate: d('longRate'),
      durationS: d('duration'),
      workload: defaultWorkload({
        warmup: 0,
        ...(seed !== undefined ? { seed } : {}),
        ...(timeout !== undefined ? { timeoutMs: timeout * 1000 } : {}),
        ...(idle !== undefined ? { idleTimeoutMs: idle * 1000 } : {}),
        ...(slo ? { slo } : {}),
      }),
    },
    failOnSlo,
  };
  return { job, warnings: [] };
}
