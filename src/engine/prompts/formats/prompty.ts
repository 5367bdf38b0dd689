// *.prompty: rendered as Prompty's runtime renders it (microsoft/prompty, runtime/python/prompty:
// core/loader.py, renderers/, parsers/prompty.py; the 0.1.x runtime where the newer one dropped a form):
// 1. front matter (YAML) and body; `${env:NAME[:default]}` and `${file:path}` in the values read
//    (a file next to the prompty: .json and .yaml parsed, anything else as text);
// 2. the inputs' values: the caller's, else the input's own `sample`, else the 0.1.x root `sample:`
//    (a mapping, a ${file:…}, promptflow's `sample: file.json`), else the input's `default` or
//    `example` (v2 and promptflow); every form: `inputs:` as a mapping of specs,
//    as `name: value` shorthand, as a list of { name, … }, and v2's `inputSchema.properties`;
// 3. the body rendered as a template: Jinja2 (the default) or mustache (`template: mustache`);
// 4. the rendered text split on role lines (`system:`, `user:`, `assistant:`, `developer:`, with an
//    optional `#` and attributes such as `user[name="Alice"]:`, any case); text before the first role
//    line is the system message; `![alt](url)` images become image parts;
// 5. `thread` inputs (a list of { role, content }) spliced in where the template places them.
// The sampling settings come from `model.parameters` (0.1.x, OpenAI's names, `tools` among them) or
// `model.options` (v2).
import { parse as parseYamlText } from 'yaml';
import type { ChatMessage, ContentPart, ResponseFormat, SamplingKey, SamplingParams } from '../../core/types';
import { isObject, parseJson } from '../../core/json';
import type { ReadRefusal } from './types';
import { asText, describe, keyMap, ownValue, scalarText, str, type Reader } from './reader';
import { OPENAI_FIELDS, PROMPTY_OPTIONS, readSampling } from './sampling';
import { renderJinja, renderMustache, TemplateError } from './templates';
import { images, roleLine } from './promptyText';
import { frontMatter, keyLine, type Yaml } from './yamlDoc';
import { sloOf, type FileBody } from './body';

interface InputSpec {
  readonly name: string;
  readonly kind?: string;
  readonly description?: string;
  /** The input's own `sample` (or its shorthand value): beats the root `sample:`. */
  readonly value?: unknown;
  /** Its `default` or `example`: used when neither the caller nor any sample gives a value. */
  readonly fallback?: unknown;
  readonly line: number;
}

const ATTRIBUTE = /(\w+)\s*=\s*"?([^",]*)"?/g;
const THREAD_MARK = (name: string) => `\u0000thread:${name}\u0000`;
const MIME: Readonly<Record<string, string>> = keyMap(Object.entries({ png: 'image/png', jpg: 'image/jpeg', jpeg: 'image/jpeg', gif: 'image/gif', webp: 'image/webp', svg: 'image/svg+xml' }));

export function readPrompty(r: Reader): FileBody {
  const fm = frontMatter(r);
  if (r.refusal) return { prompts: [] };
  const y = fm.yaml;
  const meta = y?.value ?? {};
  const slo = sloOf(r, y);
  const modelBlock = isObject(meta.model) ? meta.model : {};
  const model = str(meta.model) ?? modelName(modelBlock);
  const base = { ...(slo ? { slo } : {}), ...(model ? { model } : {}) };

  const format = templateFormat(r, y, meta.template);
  if (format === undefined) return { prompts: [], ...base };
  const params = { ...sampling(r, y, modelBlock) };
  // Prompty v2's own tool list (kinds, bindings): not OpenAI's definitions, which go in model.parameters
  if (meta.tools !== undefined && meta.tools !== null) r.warn("tools (Prompty's own tool list) is not sent: give OpenAI function definitions in model.parameters.tools", keyLine(y, ['tools'], 0));
  const outputs = resolve(r, y, meta.outputs, ['outputs']);
  if (params.responseFormat === undefined && Array.isArray(outputs) && outputs.some(isObject)) params.responseFormat = outputsFormat(outputs.filter(isObject));
  const inputs = inputsOf(r, y, meta);
  // keys from the file and the caller: a map without a prototype (`sample: {__proto__: …}` is a key)
  const values = keyMap();
  // `sample: sample.json` (promptflow's form) names a file as `${file:sample.json}` does
  const sampleRef = typeof meta.sample === 'string' && /^[^${}\n]+\.(json|ya?ml)$/i.test(meta.sample.trim()) ? `\${file:${meta.sample.trim()}}` : meta.sample;
  const sample = resolve(r, y, sampleRef, ['sample']);
  if (sample !== undefined) {
    if (isObject(sample)) for (const [k, v] of Object.entries(sample)) values[k] = v;
    else r.warn('sample must be a mapping of input names to values (or ${file:…} naming a JSON or YAML file of one): ignored', keyLine(y, ['sample'], 0));
  }
  const threads: string[] = [];
  const threadValues = new Map<string, unknown>();
  for (const input of inputs) {
    const v = r.given(input.name) ?? input.value ?? ownValue(values, input.name) ?? input.fallback;
    if (input.kind === 'thread') {
      threads.push(input.name);
      if (v !== undefined) threadValues.set(input.name, v);
      continue;
    }
    if (v !== undefined) values[input.name] = v;
  }
  for (const [k, v] of Object.entries(r.context.vars ?? {})) if (v !== undefined && v !== null && !threads.includes(k)) values[k] = v;

  // the body: Prompty's front-matter split drops the blank lines that start it
  let first = fm.bodyStart;
  while (first < r.lines.length && r.lines[first]!.trim() === '') first++;
  const template = r.lines.slice(first).join('\n');
  if (template.trim() === '') {
    r.refuse('the prompt body is empty: write the prompt below the front matter', Math.min(first, r.lines.length - 1));
    return { prompts: [], ...base };
  }
  const renderValues = keyMap(Object.entries(values));
  for (const t of threads) renderValues[t] = THREAD_MARK(t);
  let rendered: string;
  let missing: readonly string[];
  try {
    ({ text: rendered, missing } = format === 'mustache' ? renderMustache(template, renderValues) : renderJinja(template, renderValues));
  } catch (e) {
    if (!(e instanceof TemplateError)) throw e;
    const line = e.line !== undefined ? first + e.line : first;
    r.refuse(`the ${format === 'mustache' ? 'mustache' : 'Jinja2'} template cannot be rendered (line ${line + 1}): ${e.message}`, line);
    return { prompts: [], ...base };
  }
  noteVariables(r, inputs, values, missing, first, threads);

  const messages = splitRoles(r, rendered).flatMap((m) => spliceThreads(r, m, threads, threadValues));
  if (messages.length === 0 || messages.every((m) => m.content.trim() === '' && !m.parts)) {
    const unfilled = r.variables.filter((v) => !v.filled).map((v) => v.written ?? v.name);
    r.refuse(unfilled.length > 0
      ? `the prompt renders to no text: ${unfilled.join(', ')} ${unfilled.length === 1 ? 'has' : 'have'} no value`
      : 'the prompt renders to no text: write role lines (system:, user:) and text under them', first);
    return { prompts: [], ...base };
  }
  const name = str(meta.name) ?? r.baseName.replace(/\.prompty$/i, '');
  return { prompts: [{ prompt: r.prompt(messages, params, name), name, range: r.whole }], ...base };
}

function modelName(block: Record<string, unknown>): string | undefined {
  const conf = isObject(block.configuration) ? block.configuration : isObject(block.connection) ? block.connection : {};
  return str(block.id) ?? str(conf.azure_deployment) ?? str(conf.model) ?? str(conf.name) ?? str(block.name);
}

const KIND_TYPES: Readonly<Record<string, string>> = { string: 'string', integer: 'integer', float: 'number', number: 'number', boolean: 'boolean', array: 'array', object: 'object' };

/** A property of Prompty's `outputs` as JSON Schema (providers/openai/executor.py `_output_schema_to_wire`): optional ones nullable. */
function propertySchema(p: Record<string, unknown>, optional: boolean): Record<string, unknown> {
  const kind = typeof p.kind === 'string' ? p.kind : '';
  const type = ownValue(KIND_TYPES, kind) as string | undefined;
  const s: Record<string, unknown> = type ? { type } : {};
  if (typeof p.description === 'string' && p.description !== '') s.description = p.description;
  if (Array.isArray(p.enumValues) && p.enumValues.length > 0) s.enum = [...p.enumValues];
  if (kind === 'array') s.items = isObject(p.items) ? propertySchema(p.items, false) : { type: 'string' };
  if (kind === 'object') {
    const props: Record<string, unknown>[] = Array.isArray(p.properties)
      ? p.properties.filter(isObject)
      : isObject(p.properties)
        ? Object.entries(p.properties).flatMap(([name, v]) => (isObject(v) ? [{ name, ...v }] : []))
        : [];
    s.properties = Object.fromEntries(props.map((q) => [scalarText(q.name) ?? '', propertySchema(q, !q.required)]));
    if (props.length > 0) s.required = props.map((q) => scalarText(q.name) ?? '');
    s.additionalProperties = false;
  }
  if (p.nullable || optional) {
    if (typeof s.type === 'string') s.type = [s.type, 'null'];
    else if (Object.keys(s).length > 0) return { ...s, anyOf: [{ ...s }, { type: 'null' }] };
    if (Array.isArray(s.enum) && !s.enum.includes(null)) s.enum = [...s.enum, null];
  }
  return s;
}

/** Prompty v2's `outputs` as the structured-output response format its OpenAI executor sends. */
function outputsFormat(outputs: readonly Record<string, unknown>[]): ResponseFormat {
  const schema = {
    type: 'object',
    properties: Object.fromEntries(outputs.map((o) => [scalarText(o.name) ?? '', propertySchema(o, !o.required)])),
    additionalProperties: false,
    required: outputs.map((o) => scalarText(o.name) ?? ''),
  };
  return { type: 'json_schema', json_schema: { name: 'structured_output', strict: true, schema } };
}

/** 'jinja2' or 'mustache'; undefined (the file refused) for a template language the profiler does not render. */
function templateFormat(r: Reader, y: Yaml | undefined, t: unknown): 'jinja2' | 'mustache' | undefined {
  let kind: unknown = t;
  if (isObject(t)) {
    const f = t.format ?? t.type;
    kind = isObject(f) ? f.kind : f;
  }
  if (kind === undefined || kind === null || kind === '' || kind === '*') return 'jinja2';
  const k = scalarText(kind)?.toLowerCase();
  if (k === 'jinja2' || k === 'jinja') return 'jinja2';
  if (k === 'mustache') return 'mustache';
  r.refuse(`template ${describe(kind)} is not one the profiler renders: Prompty's jinja2 (the default) or mustache`, keyLine(y, ['template'], 0));
  return undefined;
}

function sampling(r: Reader, y: Yaml | undefined, model: Record<string, unknown>): SamplingParams {
  const out: { -readonly [K in SamplingKey]?: SamplingParams[K] } = {};
  const options = resolve(r, y, model.options, ['model', 'options']);
  if (isObject(options)) {
    const { additionalProperties, ...rest } = options;
    readSampling(r, y, rest, ['model', 'options'], PROMPTY_OPTIONS, out);
    if (isObject(additionalProperties)) readSampling(r, y, additionalProperties, ['model', 'options', 'additionalProperties'], OPENAI_FIELDS, out);
  }
  const parameters = resolve(r, y, model.parameters, ['model', 'parameters']);
  if (isObject(parameters)) readSampling(r, y, parameters, ['model', 'parameters'], OPENAI_FIELDS, out);
  return out;
}

/** Every form of a prompty's inputs, with their file's own values resolved. */
function inputsOf(r: Reader, y: Yaml | undefined, meta: Record<string, unknown>): InputSpec[] {
  const out: InputSpec[] = [];
  const add = (name: string, spec: unknown, path: readonly (string | number)[]) => {
    const line = keyLine(y, path, keyLine(y, [path[0]!], 0));
    if (!isSpec(spec)) {
      // the scalar shorthand `name: value` (a value, not a spec)
      const value = resolve(r, y, spec, path);
      out.push({ name, line, ...(value !== undefined && value !== null ? { value } : {}) });
      return;
    }
    const [sample, fallback] = [['sample'], ['default', 'example']].map((keys) => keys.map((k) => resolve(r, y, spec[k], [...path, k])).find((v) => v !== undefined && v !== null));
    const kind = str(spec.kind) ?? str(spec.type);
    const description = str(spec.description);
    out.push({ name, line, ...(kind ? { kind } : {}), ...(description ? { description } : {}), ...(sample !== undefined ? { value: sample } : {}), ...(fallback !== undefined ? { fallback } : {}) });
  };
  const readList = (list: unknown, path: readonly string[]) => {
    if (Array.isArray(list)) {
      list.forEach((item, i) => {
        const name = isObject(item) ? str(item.name) : undefined;
        if (name) add(name, item, [...path, i]);
        else r.warn(`${path.join('.')}[${i}] has no name: ignored`, keyLine(y, [...path, i], keyLine(y, path, 0)));
      });
    } else if (isObject(list)) {
      for (const [name, spec] of Object.entries(list)) add(name, spec, [...path, name]);
    } else if (list !== undefined && list !== null) {
      r.warn(`${path.join('.')} must be a list of inputs or a mapping of names to inputs: ignored`, keyLine(y, path, 0));
    }
  };
  // `inputs: ${file:inputs.json}` names the whole block
  readList(resolve(r, y, meta.inputs, ['inputs']), ['inputs']);
  const schema = resolve(r, y, meta.inputSchema, ['inputSchema']);
  if (isObject(schema)) readList(schema.properties, ['inputSchema', 'properties']);
  return out;
}

const SPEC_KEYS = ['type', 'kind', 'sample', 'default', 'example', 'description', 'required', 'name', 'strict'];

/** An input's spec ({ type, sample, default, … }) rather than its value given in the shorthand `name: value`. */
function isSpec(v: unknown): v is Record<string, unknown> {
  return isObject(v) && Object.keys(v).some((k) => SPEC_KEYS.includes(k));
}

/** A front-matter value at `path` with `${env:…}` / `${file:…}` resolved (in nested mappings and lists too); problems at the value's own line. */
function resolve(r: Reader, y: Yaml | undefined, value: unknown, path: readonly (string | number)[], within = new Set<object>()): unknown {
  if (typeof value === 'string') return resolveReference(r, value, () => keyLine(y, path, keyLine(y, path.slice(0, 1), 0)), path.join('.'));
  if (typeof value !== 'object' || value === null) return value;
  // a YAML file's alias inside its own anchor makes a value that holds itself
  if (within.has(value)) {
    r.warn(`${path.join('.')} holds itself (a YAML alias inside its own anchor): left out`, keyLine(y, path.slice(0, 1), 0));
    return undefined;
  }
  within.add(value);
  try {
    if (Array.isArray(value)) return value.map((v, i) => resolve(r, y, v, [...path, i], within));
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, resolve(r, y, v, [...path, k], within)]));
  } finally {
    within.delete(value);
  }
}

/** A caller's refusal to read (readFile, readEnv), told from what it read. */
function isRefusal(x: unknown): x is ReadRefusal {
  return typeof x === 'object' && x !== null && 'refused' in x;
}

function resolveReference(r: Reader, text: string, line: () => number, where: string): unknown {
  const t = text.trim();
  if (!t.startsWith('${') || !t.endsWith('}')) return text;
  const inner = t.slice(2, -1);
  const colon = inner.indexOf(':');
  const protocol = (colon < 0 ? inner : inner.slice(0, colon)).toLowerCase();
  const rest = colon < 0 ? '' : inner.slice(colon + 1);
  if (protocol === 'env') {
    const sep = rest.indexOf(':');
    const name = sep < 0 ? rest : rest.slice(0, sep);
    const fallback = sep < 0 ? undefined : rest.slice(sep + 1);
    const value = r.context.readEnv ? r.context.readEnv(name) : r.context.env?.[name];
    if (isRefusal(value)) {
      // said even with a default: the file meant the environment's value to be sent
      r.warn(`${where}: ${t} was not read: ${value.refused}${fallback ? '; its default was used' : ''}`, line());
      return fallback || undefined;
    }
    if (value !== undefined) return value;
    if (fallback) return fallback;
    r.warn(`${where}: the environment variable ${name} is not set (${t})`, line());
    return undefined;
  }
  if (protocol === 'file') {
    const bytes = r.context.readFile?.(rest);
    if (bytes === undefined || isRefusal(bytes)) {
      r.warn(`${where}: cannot read ${rest} next to the prompt file (${t})${bytes ? `: ${bytes.refused}` : ''}`, line());
      return undefined;
    }
    const content = new TextDecoder().decode(bytes).replace(/^\uFEFF/, '');
    try {
      if (/\.json$/i.test(rest)) return JSON.parse(content);
      if (/\.ya?ml$/i.test(rest)) return parseYamlText(content, { maxAliasCount: 100 });
    } catch (e) {
      r.warn(`${where}: ${rest} is not valid ${/\.json$/i.test(rest) ? 'JSON' : 'YAML'}: ${(e as Error).message.split('\n')[0]}`, line());
      return undefined;
    }
    return content;
  }
  return text;
}

/** Each input and each name the template read, once: filled or not, at its first use in the body. */
function noteVariables(r: Reader, inputs: readonly InputSpec[], values: Record<string, unknown>, missing: readonly string[], first: number, threads: readonly string[]): void {
  const useLine = (name: string, fallback: number) => {
    // the name is the file's: every character a regular expression reads is escaped
    const re = new RegExp(`\\{\\{[#^/&{]?\\s*${name.replace(/[\\^$.*+?()[\]{}|/-]/g, '\\$&')}\\b`);
    return r.findLine((line) => re.test(line), first) ?? fallback;
  };
  for (const input of inputs) {
    const v = threads.includes(input.name) ? (r.given(input.name) ?? input.value ?? input.fallback) : ownValue(values, input.name);
    const filled = v !== undefined && v !== null;
    r.variable({
      name: input.name,
      kind: 'input',
      line: useLine(input.name, input.line),
      filled,
      ...(input.description ? { placeholder: input.description } : {}),
      ...(filled ? { value: asText(v) } : { sentAs: 'empty' }),
      written: `{{${input.name}}}`,
    });
  }
  for (const name of missing) if (!threads.includes(name)) r.variable({ name, kind: 'input', line: useLine(name, first), filled: false, written: `{{${name}}}`, sentAs: 'empty' });
}

/** The rendered text split on role lines, as Prompty's parser does. */
function splitRoles(r: Reader, text: string): ChatMessage[] {
  const out: ChatMessage[] = [];
  let role: ChatMessage['role'] = 'system';
  let name: string | undefined;
  let buf: string[] = [];
  const flush = () => {
    if (buf.length > 0) out.push(message(r, role, buf.join('\n').replace(/^\n+|\n+$/g, ''), name));
    buf = [];
  };
  for (const line of text.split(/\r?\n/)) {
    const m = roleLine(line.trim());
    if (!m) {
      buf.push(line);
      continue;
    }
    flush();
    const r0 = m.role.toLowerCase();
    role = r0 === 'developer' ? 'system' : (r0 as ChatMessage['role']);
    name = undefined;
    for (const a of m.attributes.matchAll(ATTRIBUTE)) if (a[1] === 'name' && a[2]!.trim() !== '') name = a[2]!.trim();
  }
  flush();
  return out;
}

/** A message, its `![alt](url)` images as image parts (local files read next to the prompt file). */
function message(r: Reader, role: ChatMessage['role'], content: string, name: string | undefined): ChatMessage {
  const base = { role, ...(name !== undefined ? { name } : {}) };
  if (!content.includes('![')) return { ...base, content };
  const parts: ContentPart[] = [];
  let at = 0;
  for (const m of images(content)) {
    const url = image(r, m.url);
    if (url === undefined) continue;
    const before = content.slice(at, m.index).trim();
    if (before !== '') parts.push({ type: 'text', text: before });
    parts.push({ type: 'image', url, ...(m.alt !== '' ? { alt: m.alt } : {}) });
    at = m.index + m.length;
  }
  if (!parts.some((p) => p.type === 'image')) return { ...base, content };
  const after = content.slice(at).trim();
  if (after !== '') parts.push({ type: 'text', text: after });
  const text = parts.flatMap((p) => (p.type === 'text' ? [p.text] : [])).join('\n');
  return { ...base, content: text, parts };
}

function image(r: Reader, ref: string): string | undefined {
  if (/^(https?:|data:)/i.test(ref)) return ref;
  const bytes = r.context.readFile?.(ref);
  if (bytes === undefined || isRefusal(bytes)) {
    r.warn(`the image ${ref} cannot be read next to the prompt file${bytes ? ` (${bytes.refused})` : ''}: sent as text`, r.lineOf(ref));
    return undefined;
  }
  const ext = /\.(\w+)$/.exec(ref)?.[1]?.toLowerCase() ?? '';
  return `data:${MIME[ext] ?? 'application/octet-stream'};base64,${Buffer.from(bytes).toString('base64')}`;
}

/** Splices a `thread` input's messages where the template placed it (its text before and after kept, in the same role). */
function spliceThreads(r: Reader, m: ChatMessage, threads: readonly string[], values: ReadonlyMap<string, unknown>): ChatMessage[] {
  for (const t of threads) {
    const mark = THREAD_MARK(t);
    const at = m.content.indexOf(mark);
    if (at < 0) continue;
    const before = m.content.slice(0, at).trim();
    const after = m.content.slice(at + mark.length).trim();
    // the text around the marker stays in the message's role (as text: the marker stands in a text part)
    const around = (content: string): ChatMessage => ({ role: m.role, content, ...(m.name !== undefined ? { name: m.name } : {}) });
    return [
      ...(before !== '' ? [around(before)] : []),
      ...threadMessages(r, t, values.get(t)),
      ...(after !== '' ? spliceThreads(r, around(after), threads, values) : []),
    ];
  }
  return [m];
}

function threadMessages(r: Reader, name: string, v: unknown): ChatMessage[] {
  if (v === undefined) return [];
  const list = typeof v === 'string' ? parseJson(v) : v;
  if (!Array.isArray(list)) {
    r.warn(`the thread input ${name} must be a list of { role, content }: left out`);
    return [];
  }
  return list.flatMap((x) => {
    if (!isObject(x) || typeof x.content !== 'string') return [];
    const role = (scalarText(x.role) ?? '').toLowerCase();
    return role === 'user' || role === 'assistant' || role === 'system' ? [{ role, content: x.content } as ChatMessage] : [];
  });
}
