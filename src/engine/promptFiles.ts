// Prompt files, parsed to prompts with their line ranges. A PURE function over the text: the CLI
// uses it for --prompt-file and the extension's CodeLens uses it to place lenses, so it must never
// throw: a malformed file comes back with `errors` (0-based lines) for a lens to show.
//
// Kinds, by file name:
//   *.prompt.md            VS Code prompt files: optional YAML front matter (mode, model, description,
//                          tools, …) between `---` lines; the markdown body is the user prompt.
//   *.prompty              Prompty: front matter (name, model.configuration, model.parameters
//                          {max_tokens, temperature}, sample {vars}, inputs); the body in
//                          `system:` / `user:` / `assistant:` sections; `{{var}}` filled from sample.
//   *.prompt.yml / .yaml   GitHub Models: name, model, modelParameters {max_tokens|maxTokens,
//                          temperature}, messages [{role, content}], testData [{vars}]: one prompt
//                          per testData row with `{{var}}` filled, else one prompt.
//   anything else          plain text: the whole file is one user prompt.
//
// SLOs (issue 6): one documented form in every YAML kind, an `llmProfiler` block:
//   llmProfiler:
//     slo: { ttft: 500, tpot: 50, itl: 100, e2e: 20000 }   # milliseconds
import { LineCounter, parseDocument, isMap, isScalar, isSeq } from 'yaml';
import type { Document, Node as YamlNode, Pair } from 'yaml';
import type { ChatMessage, Prompt, SloSpec } from './types';
import { estimatePromptTokens } from './prompts';
import { sloFromObject } from './slo';
import { isObject } from './json';

export type PromptFileKind = 'text' | 'prompt.md' | 'prompty' | 'prompt.yml';

export interface PromptFileRange {
  /** 0-based, inclusive. */
  readonly startLine: number;
  readonly endLine: number;
}

export interface PromptFileEntry {
  readonly prompt: Prompt;
  readonly name?: string;
  readonly range: PromptFileRange;
}

export interface PromptFileParse {
  readonly kind?: PromptFileKind;
  readonly prompts: PromptFileEntry[];
  readonly slo?: SloSpec;
  readonly errors: { message: string; line?: number }[];
  /** The model the file names, if any (informational: the endpoint decides). */
  readonly model?: string;
}

export function promptFileKind(fileName: string): PromptFileKind {
  const n = fileName.toLowerCase();
  if (n.endsWith('.prompt.md')) return 'prompt.md';
  if (n.endsWith('.prompty')) return 'prompty';
  if (n.endsWith('.prompt.yml') || n.endsWith('.prompt.yaml')) return 'prompt.yml';
  return 'text';
}

function baseName(fileName: string): string {
  const parts = fileName.split(/[\\/]/);
  return parts[parts.length - 1] ?? fileName;
}

interface Ctx {
  readonly fileName: string;
  readonly lines: readonly string[];
  readonly errors: { message: string; line?: number }[];
}

function lastLine(lines: readonly string[]): number {
  let n = lines.length - 1;
  while (n > 0 && lines[n]!.trim() === '') n--;
  return Math.max(0, n);
}

/** Parses a prompt file. Never throws. */
export function parsePromptFile(fileName: string, text: string): PromptFileParse {
  const kind = promptFileKind(fileName);
  const src = text.replace(/^\uFEFF/, '');
  const ctx: Ctx = { fileName, lines: src.split(/\r?\n/), errors: [] };
  try {
    switch (kind) {
      case 'prompt.md':
        return { kind, ...parsePromptMd(ctx, src), errors: ctx.errors };
      case 'prompty':
        return { kind, ...parsePrompty(ctx, src), errors: ctx.errors };
      case 'prompt.yml':
        return { kind, ...parsePromptYml(ctx, src), errors: ctx.errors };
      default:
        return { kind, ...parseText(ctx, src), errors: ctx.errors };
    }
  } catch (e) {
    // A bug here must not take the editor down with it: report it where the lens would be.
    return { kind, prompts: [], errors: [...ctx.errors, { message: `could not parse ${baseName(fileName)}: ${(e as Error).message}`, line: 0 }] };
  }
}

type Body = Omit<PromptFileParse, 'errors' | 'kind'>;

function makePrompt(ctx: Ctx, messages: ChatMessage[], extra: { maxTokens?: number; temperature?: number }): Prompt {
  return {
    messages,
    source: ctx.fileName,
    estimatedTokens: estimatePromptTokens(messages),
    ...(extra.maxTokens !== undefined ? { maxTokens: extra.maxTokens } : {}),
    ...(extra.temperature !== undefined ? { temperature: extra.temperature } : {}),
  };
}

function parseText(ctx: Ctx, src: string): Body {
  if (src.trim() === '') {
    ctx.errors.push({ message: 'the file is empty: write the prompt in it', line: 0 });
    return { prompts: [] };
  }
  return {
    prompts: [{ prompt: makePrompt(ctx, [{ role: 'user', content: src.trim() }], {}), name: baseName(ctx.fileName), range: { startLine: 0, endLine: lastLine(ctx.lines) } }],
  };
}

// ---- YAML helpers ----

interface Yaml {
  readonly doc: Document.Parsed;
  readonly value: Record<string, unknown> | undefined;
  /** 0-based line of an offset into the YAML text, in file lines. */
  line(offset: number): number;
}

/** Parses YAML that starts at file line `lineOffset`; syntax errors go to ctx.errors with their file line. */
function parseYaml(ctx: Ctx, yamlText: string, lineOffset: number, what: string): Yaml {
  const lc = new LineCounter();
  const doc = parseDocument(yamlText, { lineCounter: lc, prettyErrors: false, uniqueKeys: false });
  const line = (offset: number) => lc.linePos(Math.max(0, Math.min(offset, yamlText.length))).line - 1 + lineOffset;
  for (const e of doc.errors) {
    const first = e.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '');
    ctx.errors.push({ message: `${what}: ${first}`, line: line(e.pos[0]) });
  }
  if (doc.errors.length > 0) return { doc, value: undefined, line };
  let js: unknown;
  try {
    js = doc.toJS({ maxAliasCount: 100 });
  } catch (e) {
    ctx.errors.push({ message: `${what}: ${(e as Error).message}`, line: lineOffset });
    return { doc, value: undefined, line };
  }
  if (js === null || js === undefined) return { doc, value: {}, line };
  if (typeof js !== 'object' || Array.isArray(js)) {
    ctx.errors.push({ message: `${what} must be a mapping of keys to values`, line: lineOffset });
    return { doc, value: undefined, line };
  }
  return { doc, value: js as Record<string, unknown>, line };
}

function pairOf(doc: Document.Parsed, path: readonly string[]): Pair | undefined {
  let node: unknown = doc.contents;
  let pair: Pair | undefined;
  for (const key of path) {
    if (!isMap(node)) return undefined;
    pair = node.items.find((p) => (isScalar(p.key) ? p.key.value : p.key) === key) as Pair | undefined;
    if (!pair) return undefined;
    node = pair.value;
  }
  return pair;
}

/** The file line of a key (or of the document start when absent). */
function keyLine(y: Yaml, path: readonly string[], fallback: number): number {
  const p = pairOf(y.doc, path);
  const k = p?.key as YamlNode | undefined;
  return k?.range ? y.line(k.range[0]) : fallback;
}

function nodeRange(y: Yaml, node: YamlNode | undefined, fallback: PromptFileRange): PromptFileRange {
  if (!node?.range) return fallback;
  const start = y.line(node.range[0]);
  const end = y.line(Math.max(node.range[0], node.range[1] - 1));
  return { startLine: start, endLine: Math.max(start, end) };
}

interface FrontMatter {
  readonly yaml?: Yaml;
  /** First body line (0-based). */
  readonly bodyStart: number;
}

/** Splits `---` front matter from the body. */
function frontMatter(ctx: Ctx): FrontMatter {
  const lines = ctx.lines;
  if (lines.length === 0 || lines[0]!.trim() !== '---') return { bodyStart: 0 };
  let close = -1;
  for (let i = 1; i < lines.length; i++) {
    const t = lines[i]!.trim();
    if (t === '---' || t === '...') {
      close = i;
      break;
    }
  }
  if (close < 0) {
    ctx.errors.push({ message: 'front matter is not closed: add a line with --- after it', line: 0 });
    return { bodyStart: lines.length };
  }
  const yaml = parseYaml(ctx, lines.slice(1, close).join('\n'), 1, 'front matter');
  return { yaml, bodyStart: close + 1 };
}

function sloOf(ctx: Ctx, y: Yaml | undefined): SloSpec | undefined {
  const block = y?.value?.llmProfiler;
  if (block === undefined || y === undefined) return undefined;
  const line = keyLine(y, ['llmProfiler'], 0);
  if (!isObject(block)) {
    ctx.errors.push({ message: 'llmProfiler must be a mapping, e.g. llmProfiler: { slo: { ttft: 500 } }', line });
    return undefined;
  }
  const raw = (block as Record<string, unknown>).slo;
  if (raw === undefined) return undefined;
  const { slo, problems } = sloFromObject(raw);
  const sloLine = keyLine(y, ['llmProfiler', 'slo'], line);
  for (const p of problems) ctx.errors.push({ message: `llmProfiler.slo: ${p}`, line: sloLine });
  return slo;
}

function numberParam(ctx: Ctx, value: unknown, name: string, line: number, integer: boolean): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || (integer && (!Number.isInteger(value) || value < 1))) {
    ctx.errors.push({ message: `${name} must be ${integer ? 'a whole number ≥ 1' : 'a number ≥ 0'}, got ${JSON.stringify(value)}`, line });
    return undefined;
  }
  return value;
}

const VAR_RE = /\{\{\s*([A-Za-z_][\w.-]*)\s*\}\}/g;

/** Fills `{{var}}` from vars; returns the names that had no value (left as they were). */
function fillVars(text: string, vars: Readonly<Record<string, unknown>>): { text: string; missing: string[] } {
  const missing: string[] = [];
  const out = text.replace(VAR_RE, (whole, name: string) => {
    const v = vars[name];
    if (v === undefined || v === null) {
      if (!missing.includes(name)) missing.push(name);
      return whole;
    }
    return typeof v === 'string' ? v : JSON.stringify(v);
  });
  return { text: out, missing };
}

function str(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value : undefined;
}

// ---- *.prompt.md ----

function parsePromptMd(ctx: Ctx, _src: string): Body {
  const fm = frontMatter(ctx);
  const meta = fm.yaml?.value ?? {};
  const body = ctx.lines.slice(fm.bodyStart).join('\n').trim();
  const slo = sloOf(ctx, fm.yaml);
  const model = str(meta.model);
  if (body === '') {
    if (fm.bodyStart < ctx.lines.length || ctx.errors.length === 0) ctx.errors.push({ message: 'the prompt body is empty: write the prompt below the front matter', line: Math.min(fm.bodyStart, ctx.lines.length - 1) });
    return { prompts: [], ...(slo ? { slo } : {}), ...(model ? { model } : {}) };
  }
  // VS Code input variables: ${input:name} / ${input:name:placeholder} become the placeholder (or name).
  const content = body.replace(/\$\{input:([^}:]+)(?::([^}]*))?\}/g, (_w, name: string, placeholder?: string) => (placeholder ?? name).trim());
  const name = str(meta.name) ?? str(meta.description) ?? baseName(ctx.fileName).replace(/\.prompt\.md$/i, '');
  return {
    prompts: [{ prompt: makePrompt(ctx, [{ role: 'user', content }], {}), name, range: { startLine: 0, endLine: lastLine(ctx.lines) } }],
    ...(slo ? { slo } : {}),
    ...(model ? { model } : {}),
  };
}

// ---- *.prompty ----

const ROLE_LINE = /^\s*#?\s*(system|user|assistant)\s*:\s*$/i;

function parsePrompty(ctx: Ctx, _src: string): Body {
  const fm = frontMatter(ctx);
  const y = fm.yaml;
  const meta = y?.value ?? {};
  const slo = sloOf(ctx, y);
  const modelBlock = (meta.model && typeof meta.model === 'object' ? meta.model : {}) as Record<string, unknown>;
  const params = (modelBlock.parameters && typeof modelBlock.parameters === 'object' ? modelBlock.parameters : {}) as Record<string, unknown>;
  const paramsLine = y ? keyLine(y, ['model', 'parameters'], 0) : 0;
  const maxTokens = numberParam(ctx, params.max_tokens ?? params.maxTokens, 'model.parameters.max_tokens', paramsLine, true);
  const temperature = numberParam(ctx, params.temperature, 'model.parameters.temperature', paramsLine, false);
  const configuration = (modelBlock.configuration && typeof modelBlock.configuration === 'object' ? modelBlock.configuration : {}) as Record<string, unknown>;
  const model = str(configuration.azure_deployment) ?? str(configuration.model) ?? str(configuration.name);

  const vars: Record<string, unknown> = {};
  if (isObject(meta.inputs)) {
    for (const [k, v] of Object.entries(meta.inputs)) {
      if (isObject(v)) {
        const d = v.default ?? v.sample;
        if (d !== undefined) vars[k] = d;
      }
    }
  }
  if (meta.sample !== undefined) {
    if (isObject(meta.sample)) Object.assign(vars, meta.sample);
    else ctx.errors.push({ message: 'sample must be a mapping of variable names to values (a sample file reference is not supported)', line: y ? keyLine(y, ['sample'], 0) : 0 });
  }

  // Sections: a line "system:" / "user:" / "assistant:" starts one; text before the first is system (as Prompty does).
  const messages: ChatMessage[] = [];
  let role: ChatMessage['role'] = 'system';
  let buf: string[] = [];
  let bufStart = fm.bodyStart;
  const flush = () => {
    const raw = buf.join('\n').trim();
    if (raw !== '') {
      const { text, missing } = fillVars(raw, vars);
      for (const name of missing) {
        const at = buf.findIndex((l) => new RegExp(`\\{\\{\\s*${name.replace(/[.-]/g, '\\$&')}\\s*\\}\\}`).test(l));
        ctx.errors.push({ message: `{{${name}}} has no value: add it under sample: in the front matter`, line: bufStart + Math.max(0, at) });
      }
      messages.push({ role, content: text });
    }
    buf = [];
  };
  for (let i = fm.bodyStart; i < ctx.lines.length; i++) {
    const line = ctx.lines[i]!;
    const m = ROLE_LINE.exec(line);
    if (m) {
      flush();
      role = m[1]!.toLowerCase() as ChatMessage['role'];
      bufStart = i + 1;
    } else {
      buf.push(line);
    }
  }
  flush();
  const name = str(meta.name) ?? baseName(ctx.fileName).replace(/\.prompty$/i, '');
  if (!messages.some((m) => m.role === 'user')) {
    ctx.errors.push({ message: 'no user: section: add a line "user:" followed by the prompt', line: Math.min(fm.bodyStart, ctx.lines.length - 1) });
    return { prompts: [], ...(slo ? { slo } : {}), ...(model ? { model } : {}) };
  }
  return {
    prompts: [{ prompt: makePrompt(ctx, messages, { maxTokens, temperature }), name, range: { startLine: 0, endLine: lastLine(ctx.lines) } }],
    ...(slo ? { slo } : {}),
    ...(model ? { model } : {}),
  };
}

// ---- *.prompt.yml (GitHub Models) ----

/** The `messages` of a .prompt.yml as chat messages (with {{variables}} still in them); undefined, with the errors noted, when unusable. */
function ymlMessages(ctx: Ctx, y: Yaml, messages: unknown, pair: ReturnType<typeof pairOf>, whole: PromptFileRange): ChatMessage[] | undefined {
  if (!Array.isArray(messages) || messages.length === 0) {
    ctx.errors.push({ message: 'messages must be a list of { role, content }', line: keyLine(y, ['messages'], 0) });
    return undefined;
  }
  const seq = isSeq(pair?.value) ? pair!.value : undefined;
  const template: ChatMessage[] = [];
  let bad = false;
  messages.forEach((m: unknown, i: number) => {
    const line = nodeRange(y, seq?.items[i] as YamlNode | undefined, whole).startLine;
    const problem = ymlMessageProblem(m, i);
    if (problem !== undefined) {
      ctx.errors.push({ message: problem, line });
      bad = true;
      return;
    }
    const mm = m as { role: string; content: string };
    template.push({ role: mm.role === 'developer' ? 'system' : (mm.role as ChatMessage['role']), content: mm.content });
  });
  if (bad) return undefined;
  if (!template.some((m) => m.role === 'user')) {
    ctx.errors.push({ message: 'messages has no user message', line: keyLine(y, ['messages'], 0) });
    return undefined;
  }
  return template;
}

function ymlMessageProblem(m: unknown, i: number): string | undefined {
  if (!isObject(m)) return `messages[${i}] must be a mapping with role and content`;
  const role = m.role === 'developer' ? 'system' : m.role;
  if (role !== 'system' && role !== 'user' && role !== 'assistant') return `messages[${i}].role must be system, user or assistant, got ${JSON.stringify(m.role)}`;
  if (typeof m.content !== 'string') return `messages[${i}].content must be text`;
  return undefined;
}

function parsePromptYml(ctx: Ctx, src: string): Body {
  const y = parseYaml(ctx, src, 0, 'YAML');
  const whole: PromptFileRange = { startLine: 0, endLine: lastLine(ctx.lines) };
  if (!y.value) return { prompts: [] };
  const meta = y.value;
  const slo = sloOf(ctx, y);
  const model = str(meta.model);
  const params = (meta.modelParameters && typeof meta.modelParameters === 'object' ? meta.modelParameters : {}) as Record<string, unknown>;
  const paramsLine = keyLine(y, ['modelParameters'], 0);
  const maxTokens = numberParam(ctx, params.max_tokens ?? params.maxTokens ?? params.max_completion_tokens, 'modelParameters.max_tokens', paramsLine, true);
  const temperature = numberParam(ctx, params.temperature, 'modelParameters.temperature', paramsLine, false);
  const base = { ...(slo ? { slo } : {}), ...(model ? { model } : {}) };

  const messagesPair = pairOf(y.doc, ['messages']);
  const template = ymlMessages(ctx, y, meta.messages, messagesPair, whole);
  if (template === undefined) return { prompts: [], ...base };
  const name = str(meta.name) ?? baseName(ctx.fileName).replace(/\.prompt\.ya?ml$/i, '');
  const extra = { maxTokens, temperature };
  const messagesRange: PromptFileRange = messagesPair?.key
    ? { startLine: y.line((messagesPair.key as YamlNode).range![0]), endLine: nodeRange(y, messagesPair.value as YamlNode, whole).endLine }
    : whole;

  const fill = (vars: Record<string, unknown>, line: number, label: string): ChatMessage[] =>
    template.map((m) => {
      const { text, missing } = fillVars(m.content, vars);
      for (const n of missing) ctx.errors.push({ message: `${label}: {{${n}}} has no value`, line });
      return { role: m.role, content: text };
    });

  if (meta.testData === undefined) {
    return { prompts: [{ prompt: makePrompt(ctx, fill({}, messagesRange.startLine, 'messages'), extra), name, range: messagesRange }], ...base };
  }
  const tdPair = pairOf(y.doc, ['testData']);
  const tdLine = keyLine(y, ['testData'], 0);
  if (!Array.isArray(meta.testData)) {
    ctx.errors.push({ message: 'testData must be a list of variable mappings', line: tdLine });
    return { prompts: [], ...base };
  }
  const tdSeq = isSeq(tdPair?.value) ? tdPair!.value : undefined;
  const prompts: PromptFileEntry[] = [];
  meta.testData.forEach((row: unknown, i: number) => {
    const range = nodeRange(y, tdSeq?.items[i] as YamlNode | undefined, { startLine: tdLine, endLine: tdLine });
    if (!isObject(row)) {
      ctx.errors.push({ message: `testData[${i}] must be a mapping of variables`, line: range.startLine });
      return;
    }
    prompts.push({ prompt: makePrompt(ctx, fill(row, range.startLine, `testData[${i}]`), extra), name: `${name} · row ${i + 1}`, range });
  });
  if (prompts.length === 0 && meta.testData.length === 0) {
    prompts.push({ prompt: makePrompt(ctx, fill({}, messagesRange.startLine, 'messages'), extra), name, range: messagesRange });
  }
  return { prompts, ...base };
}
