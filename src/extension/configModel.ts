// The `llmProfiler.*` settings as one typed, validated, clamped snapshot. Pure (no `vscode`): the
// extension hands in the raw values it read, and gets back a snapshot plus the problems to report.
// A bad value never throws: it is reported and replaced by its default.
import type { ApiKind } from '../engine/core/apis';
import { API_KINDS, isApiKind } from '../engine/core/apis';
import type { SloSpec } from '../engine/core/types';
import { isObject } from '../engine/core/json';
import { isSecretHeaderName } from '../engine/core/redact';
import { defaultOf, option, settingBounds, settingOptions } from '../jobs/options';
import type { WorkloadDefaults } from '../jobs/presets';
import { endpointUrlProblem, withScheme } from '../jobs/urls';
import { SYNTHETIC_PRESETS } from '../localServer/presets';
import type { SyntheticPreset } from '../localServer/presets';

export type EndpointOrigin = 'user' | 'workspace';

export interface EndpointEntry {
  /** Unique among the entries; the key its API key is stored under. */
  readonly name: string;
  readonly url: string;
  readonly api: ApiKind | 'auto';
  readonly model?: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly apiKeyEnv?: string;
  /** The header the key goes in (e.g. api-key); default Authorization: Bearer. A name, never a key. */
  readonly apiKeyHeader?: string;
  /** Where it was defined: a workspace's settings are not trusted with keys when the workspace is not trusted. */
  readonly origin: EndpointOrigin;
}

export interface LocalServerConfig {
  readonly preset: SyntheticPreset;
  readonly modelPath?: string;
  readonly backend: 'bundled' | 'llama-server';
  readonly llamaServerPath?: string;
  readonly parallel: number;
  readonly batchSize: number;
  readonly port: number;
}

/** The `tls.*` settings: certificates for https:// endpoints, beside VS Code's own http.* settings. */
export interface TlsConfig {
  /** A PEM file of CA certificates to trust too (relative: to the first workspace folder; `~/` is the home folder). */
  readonly caFile?: string;
  /** Certificates are not checked at all (dangerous; said in the log and the run file). */
  readonly insecure: boolean;
}

/** The `workload.*` settings: what the workload presets start from. */
export type WorkloadConfig = WorkloadDefaults;

export interface ConfigSnapshot {
  readonly endpoints: readonly EndpointEntry[];
  readonly localServer: LocalServerConfig;
  readonly workload: WorkloadConfig;
  /** `workload.prefixCache`: runs and sweeps keep prompts out of the server's prefix cache (cold) or not (warm). */
  readonly prefixCache: 'cold' | 'warm';
  /** `workload.respectRetryAfter`: wait out a rate limit's Retry-After and send again (--respect-retry-after). */
  readonly respectRetryAfter: boolean;
  readonly sloText: string;
  readonly slo?: SloSpec;
  readonly codeLens: { readonly enabled: boolean; readonly extraGlobs: readonly string[] };
  readonly tls: TlsConfig;
  /** `otlp.endpoint`: where each finished run's metrics are sent over OTLP/HTTP (--otlp-endpoint); absent: nowhere. */
  readonly otlpEndpoint?: string;
}

export interface ConfigProblem {
  readonly setting: string;
  readonly message: string;
}

/**
 * Every setting besides `endpoints` (read by scope), without the `llmProfiler.` prefix; mirrors
 * package.json. The options table's settings, and those only the extension has.
 */
export const CONFIG_KEYS: readonly string[] = [...settingOptions().map((o) => o.setting!.key), 'codeLens.enabled', 'codeLens.extraGlobs'];

/** What the extension read: plain values by key (without the `llmProfiler.` prefix), endpoints by scope. */
export interface RawConfig {
  readonly values: Readonly<Record<string, unknown>>;
  readonly endpoints: { readonly user?: unknown; readonly workspace?: unknown };
}

/** Header names that carry credentials: never accepted from settings. */
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** A setting's default, as the options table gives it (scaled to the setting's unit). */
function settingDefault<T extends number | string>(key: string): T {
  const o = option(key);
  const d = defaultOf<number | string>(key, 'settings')!;
  return (typeof d === 'number' ? d * (o.setting?.scale ?? 1) : d) as T;
}

const DEFAULT_LOCAL_SERVER: LocalServerConfig = {
  preset: settingDefault<SyntheticPreset>('preset'),
  backend: settingDefault<'bundled' | 'llama-server'>('backend'),
  parallel: settingDefault<number>('parallel'),
  batchSize: settingDefault<number>('batchSize'),
  port: settingDefault<number>('port'),
};

/** Validates one endpoint entry; returns it, or the reason it cannot be used. */
export function validateEndpoint(raw: unknown, origin: EndpointOrigin): { entry?: EndpointEntry; errors: string[]; warnings: string[] } {
  const errors: string[] = [];
  const warnings: string[] = [];
  if (!isObject(raw)) return { errors: ['must be an object with at least "name" and "url"'], warnings };
  const name = typeof raw.name === 'string' ? raw.name.trim() : '';
  if (!name) errors.push('"name" is missing or empty');
  let url = '';
  if (typeof raw.url !== 'string' || !raw.url.trim()) {
    errors.push('"url" is missing or empty');
  } else {
    // "localhost:8000" is host:port, taken as http:// (as the URL boxes and the CLI's --url take it)
    url = withScheme(raw.url);
    const problem = endpointUrlProblem(url, 'settings');
    if (problem) errors.push(`"url" ${problem}`);
  }
  let api: ApiKind | 'auto' = 'auto';
  if (raw.api !== undefined) {
    if (raw.api === 'auto' || isApiKind(raw.api)) api = raw.api;
    else errors.push(`"api" must be one of auto, ${API_KINDS.join(', ')} (got ${JSON.stringify(raw.api)})`);
  }
  let model: string | undefined;
  if (raw.model !== undefined) {
    if (typeof raw.model === 'string') model = raw.model.trim() || undefined;
    else errors.push('"model" must be a string');
  }
  let headers: Record<string, string> | undefined;
  if (raw.headers !== undefined) {
    if (!isObject(raw.headers)) errors.push('"headers" must be an object of strings');
    else {
      headers = {};
      for (const [k, v] of Object.entries(raw.headers)) {
        if (isSecretHeaderName(k)) {
          warnings.push(`header "${k}" was ignored: secrets do not belong in settings, use "LLM Profiler: Set API key"`);
          continue;
        }
        if (typeof v !== 'string') { errors.push(`header "${k}" must be a string`); continue; }
        headers[k] = v;
      }
      if (Object.keys(headers).length === 0) headers = undefined;
    }
  }
  let apiKeyEnv: string | undefined;
  if (raw.apiKeyEnv !== undefined && raw.apiKeyEnv !== '') {
    if (typeof raw.apiKeyEnv === 'string' && ENV_NAME.test(raw.apiKeyEnv)) apiKeyEnv = raw.apiKeyEnv;
    else errors.push(`"apiKeyEnv" must be an environment variable name (got ${JSON.stringify(raw.apiKeyEnv)})`);
  }
  let apiKeyHeader: string | undefined;
  if (raw.apiKeyHeader !== undefined && raw.apiKeyHeader !== '') {
    if (typeof raw.apiKeyHeader === 'string' && /^[A-Za-z0-9-]+$/.test(raw.apiKeyHeader)) apiKeyHeader = raw.apiKeyHeader;
    else errors.push(`"apiKeyHeader" must be a header name such as "api-key" (got ${JSON.stringify(raw.apiKeyHeader)})`);
  }
  for (const k of Object.keys(raw)) {
    if (!['name', 'url', 'api', 'model', 'headers', 'apiKeyEnv', 'apiKeyHeader'].includes(k)) {
      if (/key|token|secret|password/i.test(k)) warnings.push(`"${k}" was ignored: secrets do not belong in settings, use "LLM Profiler: Set API key"`);
      else warnings.push(`unknown field "${k}" was ignored`);
    }
  }
  if (errors.length) return { errors, warnings };
  return { entry: { name, url, api, model, headers, apiKeyEnv, ...(apiKeyHeader ? { apiKeyHeader } : {}), origin }, errors, warnings };
}

/** A whole-number setting, clamped to the bounds of its option in the options table. */
function clampInt(values: Readonly<Record<string, unknown>>, optionKey: string, problems: ConfigProblem[]): number {
  const o = option(optionKey);
  const key = o.setting!.key;
  const def = settingDefault<number>(optionKey);
  const { min = -Infinity, max = Infinity } = settingBounds(o);
  const v = values[key];
  if (v === undefined || v === null) return def;
  if (typeof v !== 'number' || !Number.isFinite(v)) {
    problems.push({ setting: `llmProfiler.${key}`, message: `must be a number (got ${JSON.stringify(v)}); using ${def}` });
    return def;
  }
  const n = Math.round(v);
  if (n < min || n > max) {
    const c = Math.min(max, Math.max(min, n));
    problems.push({ setting: `llmProfiler.${key}`, message: `must be between ${min} and ${max} (got ${v}); using ${c}` });
    return c;
  }
  return n;
}

function pickEnum<T extends string>(values: Readonly<Record<string, unknown>>, key: string, allowed: readonly T[], def: T, problems: ConfigProblem[]): T {
  const v = values[key];
  if (v === undefined || v === null) return def;
  if (typeof v === 'string' && (allowed as readonly string[]).includes(v)) return v as T;
  problems.push({ setting: `llmProfiler.${key}`, message: `must be one of ${allowed.join(', ')} (got ${JSON.stringify(v)}); using ${def}` });
  return def;
}

function optString(values: Readonly<Record<string, unknown>>, key: string, problems: ConfigProblem[]): string | undefined {
  const v = values[key];
  if (v === undefined || v === null || v === '') return undefined;
  if (typeof v === 'string') return v.trim() || undefined;
  problems.push({ setting: `llmProfiler.${key}`, message: `must be a string (got ${JSON.stringify(v)})` });
  return undefined;
}

/** The endpoints of both scopes, workspace first (what VS Code itself shows as the effective value). */
function readEndpoints(raw: RawConfig['endpoints'], problems: ConfigProblem[]): EndpointEntry[] {
  const endpoints: EndpointEntry[] = [];
  const names = new Set<string>();
  for (const [origin, list] of [['workspace', raw.workspace], ['user', raw.user]] as const) {
    if (list === undefined || list === null) continue;
    const where = origin === 'user' ? 'user settings' : 'workspace settings';
    if (!Array.isArray(list)) {
      problems.push({ setting: 'llmProfiler.endpoints', message: `(${where}) must be an array of endpoints` });
      continue;
    }
    list.forEach((item, i) => {
      const label = isObject(item) && typeof item.name === 'string' && item.name ? `"${item.name}"` : `#${i + 1}`;
      const { entry, errors, warnings } = validateEndpoint(item, origin);
      for (const w of warnings) problems.push({ setting: 'llmProfiler.endpoints', message: `endpoint ${label} (${where}): ${w}` });
      if (!entry) {
        problems.push({ setting: 'llmProfiler.endpoints', message: `endpoint ${label} (${where}) skipped: ${errors.join('; ')}` });
        return;
      }
      if (names.has(entry.name)) {
        if (origin === 'workspace') problems.push({ setting: 'llmProfiler.endpoints', message: `endpoint "${entry.name}" (${where}) skipped: the name is used twice` });
        // A user entry shadowed by the workspace's same-named one is simply not shown (VS Code's own rule).
        return;
      }
      names.add(entry.name);
      endpoints.push(entry);
    });
  }
  return endpoints;
}

/**
 * Builds the snapshot. `parseSlo` is passed in (the engine's) so this module stays free of load-order
 * concerns and easy to test.
 */
export function buildConfig(raw: RawConfig, parseSlo: (text: string) => SloSpec): { config: ConfigSnapshot; problems: ConfigProblem[] } {
  const problems: ConfigProblem[] = [];
  const v = raw.values;
  const endpoints = readEndpoints(raw.endpoints, problems);

  const localServer: LocalServerConfig = {
    preset: pickEnum(v, 'localServer.preset', SYNTHETIC_PRESETS, DEFAULT_LOCAL_SERVER.preset, problems),
    modelPath: optString(v, 'localServer.modelPath', problems),
    backend: pickEnum(v, 'localServer.backend', option('backend').choices as readonly ('bundled' | 'llama-server')[], DEFAULT_LOCAL_SERVER.backend, problems),
    llamaServerPath: optString(v, 'localServer.llamaServerPath', problems),
    parallel: clampInt(v, 'parallel', problems),
    batchSize: clampInt(v, 'batchSize', problems),
    port: clampInt(v, 'port', problems),
  };
  const workload: WorkloadConfig = {
    concurrency: clampInt(v, 'concurrency', problems),
    requests: clampInt(v, 'requests', problems),
    warmup: clampInt(v, 'warmup', problems),
    maxTokens: clampInt(v, 'maxTokens', problems),
    promptTokens: clampInt(v, 'promptTokens', problems),
    timeoutMs: clampInt(v, 'timeout', problems),
  };

  const prefixCache = pickEnum(v, 'workload.prefixCache', ['cold', 'warm'] as const, settingDefault<'cold' | 'warm'>('prefixCache'), problems);
  let respectRetryAfter = defaultOf<boolean>('respectRetryAfter', 'settings') ?? false;
  const rawRetry = v['workload.respectRetryAfter'];
  if (typeof rawRetry === 'boolean') respectRetryAfter = rawRetry;
  else if (rawRetry !== undefined && rawRetry !== null) problems.push({ setting: 'llmProfiler.workload.respectRetryAfter', message: `must be true or false; using ${respectRetryAfter}` });

  let sloText = '';
  let slo: SloSpec | undefined;
  const rawSlo = v['slo'];
  if (typeof rawSlo === 'string' && rawSlo.trim()) {
    sloText = rawSlo.trim();
    try { slo = parseSlo(sloText); } catch (err) {
      problems.push({ setting: 'llmProfiler.slo', message: `${(err as Error).message}; no SLO used` });
      sloText = '';
    }
  } else if (rawSlo !== undefined && rawSlo !== null && rawSlo !== '') {
    problems.push({ setting: 'llmProfiler.slo', message: 'must be a string like "ttft=500,tpot=50"' });
  }

  let enabled = true;
  const rawEnabled = v['codeLens.enabled'];
  if (typeof rawEnabled === 'boolean') enabled = rawEnabled;
  else if (rawEnabled !== undefined && rawEnabled !== null) problems.push({ setting: 'llmProfiler.codeLens.enabled', message: 'must be true or false; using true' });
  const extraGlobs: string[] = [];
  const rawGlobs = v['codeLens.extraGlobs'];
  if (Array.isArray(rawGlobs)) {
    for (const g of rawGlobs) {
      if (typeof g === 'string' && g.trim()) extraGlobs.push(g.trim());
      else problems.push({ setting: 'llmProfiler.codeLens.extraGlobs', message: `ignored a non-string or empty entry ${JSON.stringify(g)}` });
    }
  } else if (rawGlobs !== undefined && rawGlobs !== null) {
    problems.push({ setting: 'llmProfiler.codeLens.extraGlobs', message: 'must be an array of glob patterns' });
  }

  const caFile = optString(v, 'tls.caFile', problems);
  let insecure = defaultOf<boolean>('insecure', 'settings') ?? false;
  const rawInsecure = v['tls.insecure'];
  if (typeof rawInsecure === 'boolean') insecure = rawInsecure;
  else if (rawInsecure !== undefined && rawInsecure !== null) problems.push({ setting: 'llmProfiler.tls.insecure', message: `must be true or false; using ${insecure}` });
  const tls: TlsConfig = { ...(caFile !== undefined ? { caFile } : {}), insecure };

  let otlpEndpoint = optString(v, 'otlp.endpoint', problems);
  const otlpProblem = otlpEndpoint !== undefined ? option('otlpEndpoint').check?.(otlpEndpoint) : undefined;
  if (otlpProblem !== undefined) {
    problems.push({ setting: 'llmProfiler.otlp.endpoint', message: `${otlpProblem}; runs are not sent` });
    otlpEndpoint = undefined;
  }

  return {
    config: { endpoints, localServer, workload, prefixCache, respectRetryAfter, sloText, slo, codeLens: { enabled, extraGlobs }, tls, ...(otlpEndpoint !== undefined ? { otlpEndpoint } : {}) },
    problems,
  };
}

/** The origin (scheme://host:port) a stored key was set for: a key is only ever sent back there. */
export function keyOrigin(url: string): string {
  try { return new URL(url).origin; } catch { return url; }
}
