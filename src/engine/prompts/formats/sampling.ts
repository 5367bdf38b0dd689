// The sampling settings a prompt file gives (Prompty's `model.parameters` / `model.options`, GitHub
// Models' `modelParameters` and `responseFormat`), read into SamplingParams. A setting the profiler
// does not send is named in a warning, never dropped silently. `tools` (OpenAI's function definitions)
// are sent, and the calls streamed back timed; `tool_choice` is not (the server's default: auto).
import { parseJson } from '../../core/json';
import { toolDefinitions } from '../../core/toolDefinitions';
import type { ResponseFormat, SamplingKey, SamplingParams } from '../../core/types';
import { ownValue, type Reader } from './reader';
import { keyLine, type Yaml } from './yamlDoc';

type Kind = 'int' | 'number' | 'stop' | 'format' | 'tools';

interface Field {
  readonly key: SamplingKey;
  readonly kind: Kind;
  readonly min?: number;
  readonly max?: number;
}

const MAX_TOKENS: Field = { key: 'maxTokens', kind: 'int', min: 1 };
const TEMPERATURE: Field = { key: 'temperature', kind: 'number', min: 0 };
const TOP_P: Field = { key: 'topP', kind: 'number', min: 0, max: 1 };
const STOP: Field = { key: 'stop', kind: 'stop' };
const FREQUENCY: Field = { key: 'frequencyPenalty', kind: 'number', min: -2, max: 2 };
const PRESENCE: Field = { key: 'presencePenalty', kind: 'number', min: -2, max: 2 };
const FORMAT: Field = { key: 'responseFormat', kind: 'format' };
const TOOLS: Field = { key: 'tools', kind: 'tools' };

/** OpenAI's request fields, as Prompty's `model.parameters` (and v2's `additionalProperties`) give them. */
export const OPENAI_FIELDS: Readonly<Record<string, Field>> = {
  max_tokens: MAX_TOKENS,
  max_completion_tokens: MAX_TOKENS,
  temperature: TEMPERATURE,
  top_p: TOP_P,
  stop: STOP,
  frequency_penalty: FREQUENCY,
  presence_penalty: PRESENCE,
  response_format: FORMAT,
  tools: TOOLS,
};

/** Prompty v2's `model.options`. */
export const PROMPTY_OPTIONS: Readonly<Record<string, Field>> = {
  maxOutputTokens: MAX_TOKENS,
  temperature: TEMPERATURE,
  topP: TOP_P,
  stopSequences: STOP,
  frequencyPenalty: FREQUENCY,
  presencePenalty: PRESENCE,
};

/** GitHub Models' `modelParameters` (gh-models reads these three). */
export const GH_MODEL_PARAMETERS: Readonly<Record<string, Field>> = { maxTokens: MAX_TOKENS, temperature: TEMPERATURE, topP: TOP_P };

/** Why a known setting is not sent, where the profiler decides it. */
const NOT_SENT: Readonly<Record<string, string>> = {
  seed: 'the profiler sends its own seed per request (--seed)',
  tool_choice: 'the profiler sends the tools and leaves the choice to the model (auto)',
  parallel_tool_calls: "the profiler leaves it to the server's default",
  allowMultipleToolCalls: "the profiler leaves it to the server's default",
  stream: 'the profiler always streams',
  n: 'the profiler asks for one completion per request',
};

/**
 * Reads `obj`'s settings by `fields` into `into` (earlier readers win: call the most specific first);
 * `path` names the block in messages and finds its line.
 */
export function readSampling(r: Reader, y: Yaml | undefined, obj: Record<string, unknown>, path: readonly string[], fields: Readonly<Record<string, Field>>, into: { -readonly [K in SamplingKey]?: SamplingParams[K] }): void {
  for (const [name, value] of Object.entries(obj)) {
    if (value === undefined || value === null) continue;
    const line = keyLine(y, [...path, name], keyLine(y, path, 0));
    const field = ownValue(fields, name) as Field | undefined;
    const where = [...path, name].join('.');
    if (!field) {
      r.warn(`${where} is not sent: ${(ownValue(NOT_SENT, name) as string | undefined) ?? 'the profiler does not know this setting'}`, line);
      continue;
    }
    if (into[field.key] !== undefined) continue;
    const read = readField(field, value);
    if (typeof read === 'string') r.warn(`${where} ${read}: not sent`, line);
    else (into as Record<string, unknown>)[field.key] = read.value;
  }
}

function readField(f: Field, value: unknown): { value: unknown } | string {
  switch (f.kind) {
    case 'int':
    case 'number': {
      const n = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
      if (typeof n !== 'number' || !Number.isFinite(n)) return `must be a number, got ${JSON.stringify(value)}`;
      if (f.kind === 'int' && !Number.isInteger(n)) return `must be a whole number, got ${n}`;
      if ((f.min !== undefined && n < f.min) || (f.max !== undefined && n > f.max)) return `must be ${f.max !== undefined ? `between ${f.min} and ${f.max}` : `at least ${f.min}`}, got ${n}`;
      return { value: n };
    }
    case 'stop': {
      const list = typeof value === 'string' ? [value] : value;
      if (!Array.isArray(list) || !list.every((s) => typeof s === 'string')) return 'must be text or a list of texts';
      return list.length > 0 ? { value: list } : 'is empty';
    }
    case 'format':
      return responseFormat(value);
    case 'tools': {
      const tools = toolDefinitions(value, 'the list');
      return typeof tools === 'string' ? `is not a list of function definitions (${tools.replace(/^the list /, '')})` : { value: tools };
    }
  }
}

/** OpenAI's `response_format`: `json_object`, `text`, or `{ type: json_schema, json_schema: { name, schema } }`. */
export function responseFormat(value: unknown, jsonSchema?: unknown): { value: ResponseFormat } | string {
  const type = typeof value === 'string' ? value : typeof value === 'object' && value !== null ? (value as { type?: unknown }).type : undefined;
  if (type === 'text' || type === 'json_object') return { value: { type } };
  if (type === 'json_schema') {
    const schema = jsonSchema ?? (value as { json_schema?: unknown }).json_schema;
    const parsed = typeof schema === 'string' ? parseJson(schema) : schema;
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return 'is json_schema without a schema (jsonSchema: { name, schema })';
    const s = parsed as Record<string, unknown>;
    // gh-models also takes a bare JSON schema ({ type: object, properties, … }) and names it itself
    const named = s.schema !== undefined ? s : { name: 'response', schema: s };
    return { value: { type: 'json_schema', json_schema: named } };
  }
  return `must be text, json_object or json_schema, got ${JSON.stringify(type ?? value)}`;
}
