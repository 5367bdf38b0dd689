// The workload: what to send, how often, and how to judge it. Defaults are a quick, honest check.
import { SAMPLING_KEYS } from './types';
import type { WorkloadSpec } from './types';

/** A gap is a stall when it is over this many times the stream's median gap, and over the floor (ms). */
export const DEFAULT_STALL_FACTOR = 3;
export const DEFAULT_STALL_FLOOR_MS = 50;

export class WorkloadError extends Error {
  override readonly name = 'WorkloadError';
}

export const DEFAULT_PERCENTILES: readonly number[] = [50, 90, 95, 99];

/** Open loop without --max-concurrency: connections opened for it (requests beyond wait in the pool, and their sentAt shows the wait). */
const OPEN_LOOP_CONNECTION_CAP = 256;

/**
 * A workload from the defaults and what is given. Prompts are kept out of the server's prefix cache
 * (`prefixCache: 'cold'`) unless asked otherwise: what a profile means is the server's own prefill.
 * Synthetic prompts with a shared prefix exist to be served from that cache, so they default to warm.
 */
export function defaultWorkload(overrides: Partial<WorkloadSpec> = {}): WorkloadSpec {
  const base: WorkloadSpec = {
    mode: { kind: 'closed', concurrency: 1 },
    requests: 10,
    warmup: 1,
    maxTokens: 128,
    prompt: { kind: 'synthetic', tokens: 256, sharedPrefix: false },
    ignoreEos: true,
    seed: 0,
    timeoutMs: 120_000,
    idleTimeoutMs: 30_000,
    percentiles: DEFAULT_PERCENTILES,
    stallFactor: DEFAULT_STALL_FACTOR,
    stallFloorMs: DEFAULT_STALL_FLOOR_MS,
  };
  const prompt = overrides.prompt ?? base.prompt;
  // shared prefixes, conversations and traces are meant to meet the prefix cache: warm unless asked otherwise
  const sharedPrefix = (prompt.kind === 'synthetic' && (prompt.sharedPrefix || prompt.groups !== undefined)) || prompt.kind === 'chat' || prompt.kind === 'trace' || (prompt.kind === 'dataset' && prompt.multiTurn === true);
  const merged: WorkloadSpec = { ...base, ...overrides, prefixCache: overrides.prefixCache ?? (sharedPrefix ? 'warm' : 'cold') };
  // --duration, sessions and traces replace the request count rather than adding to it.
  if ((overrides.durationS !== undefined || overrides.sessions !== undefined || merged.mode.kind === 'trace' || isSessions(merged)) && overrides.requests === undefined) {
    const { requests: _drop, ...rest } = merged;
    return rest;
  }
  return merged;
}

const isInt = (n: unknown): n is number => typeof n === 'number' && Number.isInteger(n);
const isPos = (n: unknown): n is number => typeof n === 'number' && Number.isFinite(n) && n > 0;

/** Every problem with a workload, as messages naming the field; empty when valid. */
export function workloadProblems(w: WorkloadSpec): string[] {
  const p: string[] = [];
  const m = w.mode;
  if (m.kind === 'closed') {
    if (!isInt(m.concurrency) || m.concurrency < 1) p.push(`concurrency must be a whole number ≥ 1, got ${m.concurrency}`);
  } else if (m.kind === 'open') {
    if (!isPos(m.rate)) p.push(`rate must be a positive number of requests per second, got ${m.rate}`);
    if (!isPos(m.burstiness)) p.push(`burstiness must be a positive number (1 = Poisson), got ${m.burstiness}`);
    if (m.ramp !== undefined && !((m.ramp.kind === 'linear' || m.ramp.kind === 'exponential') && isPos(m.ramp.start))) p.push('ramp must be linear or exponential from a positive rate');
  } else if (m.kind === 'trace') {
    if (!isPos(m.speed)) p.push(`trace speed must be a positive number, got ${m.speed}`);
  } else {
    p.push(`mode must be closed, open or trace`);
  }
  if (m.kind !== 'closed' && m.maxConcurrency !== undefined && (!isInt(m.maxConcurrency) || m.maxConcurrency < 1)) p.push(`maxConcurrency must be a whole number ≥ 1, got ${m.maxConcurrency}`);
  p.push(...sizeProblems(w), ...sessionProblems(w));
  if (w.requests !== undefined && (!isInt(w.requests) || w.requests < 1)) p.push(`requests must be a whole number ≥ 1, got ${w.requests}`);
  if (w.durationS !== undefined && !isPos(w.durationS)) p.push(`durationS must be a positive number of seconds, got ${w.durationS}`);
  if (!isInt(w.warmup) || w.warmup < 0) p.push(`warmup must be a whole number ≥ 0, got ${w.warmup}`);
  if (!isInt(w.maxTokens) || w.maxTokens < 1) p.push(`maxTokens must be a whole number ≥ 1, got ${w.maxTokens}`);
  const pr = w.prompt;
  if (pr.kind === 'synthetic') {
    if (!isInt(pr.tokens) || pr.tokens < 1) p.push(`prompt tokens must be a whole number ≥ 1, got ${pr.tokens}`);
    if (pr.groups !== undefined && !(isInt(pr.groups.count) && pr.groups.count >= 1 && isInt(pr.groups.prefixTokens) && pr.groups.prefixTokens >= 1 && pr.groups.prefixTokens < pr.tokens)) {
      p.push(`prompt groups need a whole number of groups ≥ 1 and a prefix shorter than the prompt (${pr.tokens} tokens)`);
    }
  } else if (pr.kind === 'file' || pr.kind === 'dataset' || pr.kind === 'trace') {
    if (typeof pr.path !== 'string' || pr.path === '') p.push(`prompt ${pr.kind} needs a path`);
  } else if (pr.kind === 'chat') {
    for (const k of ['turns', 'userTokens', 'replyTokens'] as const) if (!isInt(pr[k]) || pr[k] < 1) p.push(`chat ${k} must be a whole number ≥ 1, got ${pr[k]}`);
  } else {
    p.push('prompt must be synthetic, file, dataset, chat or trace');
  }
  if (!isInt(w.seed)) p.push(`seed must be a whole number, got ${w.seed}`);
  if (w.temperature !== undefined && !(typeof w.temperature === 'number' && w.temperature >= 0)) p.push(`temperature must be ≥ 0, got ${w.temperature}`);
  if (w.topP !== undefined && !(typeof w.topP === 'number' && w.topP >= 0 && w.topP <= 1)) p.push(`topP must be between 0 and 1, got ${w.topP}`);
  for (const k of w.explicit ?? []) if (!(SAMPLING_KEYS as readonly string[]).includes(k)) p.push(`explicit names an unknown sampling setting "${String(k)}"`);
  if (!isPos(w.timeoutMs)) p.push(`timeoutMs must be positive, got ${w.timeoutMs}`);
  if (!isPos(w.idleTimeoutMs)) p.push(`idleTimeoutMs must be positive, got ${w.idleTimeoutMs}`);
  if (!Array.isArray(w.percentiles) || w.percentiles.length === 0) p.push('percentiles must list at least one value');
  else for (const q of w.percentiles) if (!(typeof q === 'number' && q >= 0 && q <= 100)) p.push(`percentile ${q} is outside 0..100`);
  if (!isPos(w.stallFactor) || w.stallFactor < 1) p.push(`stallFactor must be ≥ 1, got ${w.stallFactor}`);
  if (!(typeof w.stallFloorMs === 'number' && w.stallFloorMs >= 0)) p.push(`stallFloorMs must be ≥ 0, got ${w.stallFloorMs}`);
  if (w.prefixCache !== undefined && w.prefixCache !== 'cold' && w.prefixCache !== 'warm') p.push(`prefixCache must be cold or warm, got ${String(w.prefixCache)}`);
  if (w.prefixCache === 'cold' && pr.kind === 'synthetic' && pr.sharedPrefix) {
    p.push('prefixCache cold cannot be used with shared-prefix prompts: they share a prefix to be served from the cache, and keeping them cold would take it away (use warm)');
  }
  if (w.slo) {
    for (const [k, v] of Object.entries(w.slo)) if (v !== undefined && !isPos(v)) p.push(`slo ${k} must be a positive number of ms, got ${v}`);
  }
  return p;
}

/** Whether the workload sends sessions (multi-turn conversations) rather than single requests. */
export function isSessions(w: Pick<WorkloadSpec, 'prompt'>): boolean {
  return w.prompt.kind === 'chat' || (w.prompt.kind === 'dataset' && w.prompt.multiTurn === true);
}

/** How much is sent: requests, a duration, sessions, or (a trace) the whole file. */
function sizeProblems(w: WorkloadSpec): string[] {
  const p: string[] = [];
  const given = [w.requests !== undefined, w.durationS !== undefined, w.sessions !== undefined].filter(Boolean).length;
  const wholeTrace = w.mode.kind === 'trace' || isSessions(w);
  if (given === 0 && !wholeTrace) p.push('give either requests or durationS');
  if (w.requests !== undefined && w.durationS !== undefined) p.push('give either requests or durationS, not both');
  if (w.sessions !== undefined && w.requests !== undefined) p.push('give either sessions or requests, not both (a session sends all its turns)');
  if (w.requests !== undefined && (!isInt(w.requests) || w.requests < 1)) p.push(`requests must be a whole number ≥ 1, got ${w.requests}`);
  if (w.durationS !== undefined && !isPos(w.durationS)) p.push(`durationS must be a positive number of seconds, got ${w.durationS}`);
  return p;
}

/** Sessions and traces: each kind of load goes with its own prompt source. */
function sessionProblems(w: WorkloadSpec): string[] {
  const p: string[] = [];
  const sessions = isSessions(w);
  if (w.sessions !== undefined && (!isInt(w.sessions) || w.sessions < 1)) p.push(`sessions must be a whole number ≥ 1, got ${w.sessions}`);
  if (w.prompt.kind === 'chat' && w.sessions === undefined && w.durationS === undefined) p.push('a chat workload needs sessions (or durationS)');
  if (w.sessions !== undefined && !sessions) p.push('sessions needs conversations (a chat workload, or a dataset read with multiTurn)');
  if (w.thinkTimeMs !== undefined && !(typeof w.thinkTimeMs === 'number' && w.thinkTimeMs >= 0 && Number.isFinite(w.thinkTimeMs))) p.push(`thinkTimeMs must be ≥ 0, got ${w.thinkTimeMs}`);
  if (w.thinkTimeMs !== undefined && !sessions) p.push('thinkTimeMs needs conversations (multi-turn)');
  if ((w.mode.kind === 'trace') !== (w.prompt.kind === 'trace')) p.push('a trace is both the load and the prompts: mode trace goes with prompt trace');
  if (sessions && w.mode.kind === 'open' && w.mode.ramp) p.push('a ramp shapes single requests, not sessions');
  if (w.prefixCache === 'cold' && (sessions || w.prompt.kind === 'trace')) p.push('prefixCache cold cannot be used with conversations or traces: they are meant to meet the prefix cache (use warm)');
  return p;
}

/** Throws WorkloadError listing every problem. */
export function validateWorkload(w: WorkloadSpec): WorkloadSpec {
  const problems = workloadProblems(w);
  if (problems.length > 0) throw new WorkloadError(`invalid workload: ${problems.join('; ')}`);
  return w;
}

/** Connections the client opens and warms first: the concurrency, or for an open loop its cap or a guess (more open on demand). */
export function connectionsFor(w: WorkloadSpec): number {
  if (w.mode.kind === 'closed') return w.mode.concurrency;
  if (w.mode.maxConcurrency !== undefined) return w.mode.maxConcurrency;
  if (w.mode.kind === 'trace') return 16; // more open on demand: a trace's bursts are not known before it is read
  // Little's law with a generous latency guess (10 s in flight per request), within [4, cap].
  return Math.min(OPEN_LOOP_CONNECTION_CAP, Math.max(4, Math.ceil(w.mode.rate * 10)));
}
