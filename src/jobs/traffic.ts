// The traffic options (--chat, --multi-turn, --sessions, --think-time, --trace, --ramp,
// --prefix-groups, --tools, --response-format) as workload fields: one place for the CLI and the
// extension. A problem is a UsageError naming the flag.
import type { RampSpec, ResponseFormat, ToolDefinition, WorkloadMode, WorkloadSpec } from '../engine/core/types';
import { isObject } from '../engine/core/json';
import { readUntrustedFile, UntrustedFileError } from '../engine/files/untrustedFile';
import { UsageError } from './errors';
import type { OptionValues } from './values';

/** A --tools or --response-format file larger than this is refused: definitions, not data. */
const MAX_DEFINITION_BYTES = 4 * 1024 * 1024;

/** --chat's defaults, each replaced by what the spec gives. */
export const CHAT_DEFAULTS = { turns: 6, userTokens: 64, replyTokens: 64 } as const;

/** Sessions a --chat run sends when --sessions is not given. */
export const DEFAULT_CHAT_SESSIONS = 4;

/** `turns=6,user=64,reply=32` → a chat prompt source (the option's check has vetted the form). */
export function chatSource(text: string): Extract<WorkloadSpec['prompt'], { kind: 'chat' }> {
  const out: { turns: number; userTokens: number; replyTokens: number } = { ...CHAT_DEFAULTS };
  for (const part of text.split(',')) {
    const [k, n] = part.trim().split('=') as [string, string];
    if (k === 'turns') out.turns = Number(n);
    else if (k === 'user') out.userTokens = Number(n);
    else if (k === 'reply') out.replyTokens = Number(n);
  }
  return { kind: 'chat', ...out };
}

/** `linear:1-10` → an open loop ramping from 1 to 10 req/s. */
export function rampMode(text: string, v: OptionValues): WorkloadMode {
  const m = /^(linear|exponential):([\d.]+)-([\d.]+)$/.exec(text)!;
  const ramp: RampSpec = { kind: m[1] as RampSpec['kind'], start: Number(m[2]) };
  const maxConcurrency = v.num('maxConcurrency');
  return { kind: 'open', rate: Number(m[3]), burstiness: v.num('burstiness') ?? 1, ramp, ...(maxConcurrency !== undefined ? { maxConcurrency } : {}) };
}

/** `8:512` → 8 groups sharing a 512-token prefix, checked against the prompt length. */
export function groupsOf(text: string, promptTokens: number): { count: number; prefixTokens: number } {
  const [g, t] = text.split(':').map(Number) as [number, number];
  if (t >= promptTokens) throw new UsageError(`--prefix-groups: the shared prefix (${t} tokens) must be shorter than the prompt (--prompt-tokens ${promptTokens})`, '--prefix-groups');
  return { count: g, prefixTokens: t };
}

/** A trace's format from its name: the Azure trace is CSV, Mooncake's JSON Lines. */
export function traceFormatOf(path: string): 'mooncake' | 'azure' {
  return /\.csv$/i.test(path) ? 'azure' : 'mooncake';
}

async function readJson(path: string, flag: string): Promise<unknown> {
  try {
    return JSON.parse((await readUntrustedFile(path, { maxBytes: MAX_DEFINITION_BYTES })).toString('utf8'));
  } catch (e) {
    const reason = e instanceof UntrustedFileError ? e.message : ((e as NodeJS.ErrnoException).code ?? (e as Error).message);
    throw new UsageError(`${flag}: cannot read ${path} as JSON (${reason})`, flag);
  }
}

/** One function definition, in OpenAI's form or bare (`{name, description, parameters}`); a problem is a message. */
export function toolDefinition(x: unknown, where: string): ToolDefinition | string {
  const fn = isObject(x) && x.type === 'function' && isObject(x.function) ? x.function : x;
  if (!isObject(fn) || typeof fn.name !== 'string' || !/^[A-Za-z0-9_.-]{1,64}$/.test(fn.name)) return `${where}: a tool needs a name of letters, digits, _ . - (at most 64)`;
  if (fn.description !== undefined && typeof fn.description !== 'string') return `${where}: ${fn.name}'s description must be text`;
  if (fn.parameters !== undefined && !isObject(fn.parameters)) return `${where}: ${fn.name}'s parameters must be a JSON schema object`;
  return {
    type: 'function',
    function: { name: fn.name, ...(typeof fn.description === 'string' ? { description: fn.description } : {}), ...(isObject(fn.parameters) ? { parameters: fn.parameters } : {}) },
  };
}

/** `--tools F.json`: a JSON list of function definitions (or `{"tools": [...]}`). */
export async function toolsOf(path: string): Promise<readonly ToolDefinition[]> {
  const json = await readJson(path, '--tools');
  const list = Array.isArray(json) ? json : isObject(json) && Array.isArray(json.tools) ? json.tools : undefined;
  if (!list || list.length === 0) throw new UsageError(`--tools: ${path} must hold a non-empty JSON list of function definitions`, '--tools');
  return list.map((x, i) => {
    const t = toolDefinition(x, `${path} tool ${i + 1}`);
    if (typeof t === 'string') throw new UsageError(`--tools: ${t}`, '--tools');
    return t;
  });
}

/** `--response-format json` or a JSON schema file (`{"name","schema"}` as OpenAI's json_schema, or a bare schema). */
export async function responseFormatOf(text: string): Promise<ResponseFormat> {
  if (text === 'json') return { type: 'json_object' };
  const json = await readJson(text, '--response-format');
  if (!isObject(json)) throw new UsageError(`--response-format: ${text} must hold a JSON schema object`, '--response-format');
  if (json.type === 'json_schema' && isObject(json.json_schema)) return { type: 'json_schema', json_schema: json.json_schema };
  const named = isObject(json.schema) ? json : { name: 'response', schema: json };
  return { type: 'json_schema', json_schema: { ...named, ...(named.strict === undefined ? {} : { strict: named.strict }) } };
}
