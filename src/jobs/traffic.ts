// The traffic options (--chat, --multi-turn, --sessions, --think-time, --trace, --ramp,
// --prefix-groups, --tools, --response-format) as workload fields: one place for the CLI and the
// extension. A problem is a UsageError naming the flag.
import type { Prompt, RampSpec, ResponseFormat, ToolDefinition, WorkloadMode, WorkloadSpec } from '../engine/core/types';
import { isObject } from '../engine/core/json';
import { toolDefinitions } from '../engine/core/toolDefinitions';
import { readUntrustedFile, UntrustedFileError } from '../engine/files/untrustedFile';
import { readTrace, TraceError, tracePrompt } from '../engine/prompts/traces';
import type { Trace, TraceEntry } from '../engine/prompts/traces';
import { UsageError } from './errors';
import { chatInput } from './presets';
import type { OptionValues } from './values';

/** A --tools or --response-format file larger than this is refused: definitions, not data. */
const MAX_DEFINITION_BYTES = 4 * 1024 * 1024;

/** `turns=6,user=64,reply=32` → a chat prompt source, what it leaves out from the defaults (the option's check has vetted the form). */
export function chatSource(text: string): Extract<WorkloadSpec['prompt'], { kind: 'chat' }> {
  return { kind: 'chat', ...chatInput(text)! };
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

/** A trace's format from its name (the Azure trace is CSV, Mooncake's JSON Lines): a first guess, which traceOf corrects from the content. */
export function traceFormatOf(path: string): 'mooncake' | 'azure' {
  return /\.csv$/i.test(path) ? 'azure' : 'mooncake';
}

type TracePrompt = Extract<WorkloadSpec['prompt'], { kind: 'trace' }>;

/** `--trace F`: read and checked before anything starts (a bad line is a usage error naming it), its format told from the content. */
export async function traceOf(source: TracePrompt): Promise<{ prompt: TracePrompt; longest: Prompt | undefined }> {
  try {
    const trace = await readTrace(source.path);
    return { prompt: { ...source, format: trace.format }, longest: longestEntry(trace) };
  } catch (e) {
    if (e instanceof TraceError) throw new UsageError(`--trace: ${e.message}`, '--trace');
    throw e;
  }
}

/** The trace line whose prompt and reply together are longest, as a prompt: what a local server's slots must hold. */
function longestEntry(trace: Trace): Prompt | undefined {
  let best: TraceEntry | undefined;
  const size = (e: TraceEntry) => e.inputLength + (e.outputLength ?? 0);
  for (const e of trace.entries) if (best === undefined || size(e) > size(best)) best = e;
  return best === undefined ? undefined : tracePrompt(best, 0, 0);
}

async function readJson(path: string, flag: string): Promise<unknown> {
  try {
    return JSON.parse((await readUntrustedFile(path, { maxBytes: MAX_DEFINITION_BYTES })).toString('utf8'));
  } catch (e) {
    const reason = e instanceof UntrustedFileError ? e.message : ((e as NodeJS.ErrnoException).code ?? (e as Error).message);
    throw new UsageError(`${flag}: cannot read ${path} as JSON (${reason})`, flag);
  }
}

/** `--tools F.json`: a JSON list of function definitions (or `{"tools": [...]}`). */
export async function toolsOf(path: string): Promise<readonly ToolDefinition[]> {
  const tools = toolDefinitions(await readJson(path, '--tools'), path);
  if (typeof tools === 'string') throw new UsageError(`--tools: ${tools}`, '--tools');
  return tools;
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
