// *.prompt.yml / *.prompt.yaml: GitHub Models prompt files, filled as gh-models fills them
// (github/gh-models pkg/prompt `TemplateString`): each `{{name}}` written exactly so, without spaces
// inside the braces, is replaced by its value; anything else is sent as written. `gh models run`
// gives `{{input}}` the text typed after the model (empty here) and the --var values; `gh models eval`
// fills the messages once per testData row: so does the profiler, one prompt per row, the caller's
// values beating the row's. A top-level `tools:` (OpenAI's function definitions, as a --tools file
// holds them) is the profiler's own key: gh-models has none and ignores it; the profiler sends them.
import { isSeq } from 'yaml';
import type { Node as YamlNode } from 'yaml';
import type { PromptFileEntry, PromptFileRange } from './types';
import type { ChatMessage, SamplingKey, SamplingParams } from '../../core/types';
import { isObject } from '../../core/json';
import { toolDefinitions } from '../../core/toolDefinitions';
import { asText, ownValue, str, type Reader } from './reader';
import { GH_MODEL_PARAMETERS, readSampling, responseFormat } from './sampling';
import { keyLine, nodeRange, pairOf, parseYaml, type Yaml } from './yamlDoc';
import type { FileBody } from './body';
import { sloOf } from './body';
import { RENDER_LIMITS } from './renderBudget';

const GH_VAR = /\{\{([^{}]*)\}\}/g;
/** The characters all of a file's prompts may hold: its messages filled once per testData row multiply (a long message × many rows). */
const MAX_FILLED_CHARS = 4 * RENDER_LIMITS.chars;
const GH_ROLES: Readonly<Record<string, ChatMessage['role']>> = { system: 'system', user: 'user', assistant: 'assistant', developer: 'system' };

export function readPromptYml(r: Reader): FileBody {
  const y = parseYaml(r, r.text, 0, 'the file');
  if (!y) return { prompts: [] };
  const meta = y.value;
  const slo = sloOf(r, y);
  const model = str(meta.model);
  const base = { ...(slo ? { slo } : {}), ...(model ? { model } : {}) };
  const params = sampling(r, y, meta);
  const messagesPair = pairOf(y.doc, ['messages']);
  const template = messagesOf(r, y, meta.messages);
  if (template === undefined) return { prompts: [], ...base };
  const name = str(meta.name) ?? r.baseName.replace(/\.prompt\.ya?ml$/i, '');
  const messagesRange: PromptFileRange = messagesPair?.key
    ? { startLine: y.line((messagesPair.key as YamlNode).range![0]), endLine: nodeRange(y, messagesPair.value as YamlNode, r.whole).endLine }
    : r.whole;
  const lineOfVar = (text: string) => r.lineOf(text, messagesRange.startLine, messagesRange.endLine);
  const fill = (row: Record<string, unknown>): ChatMessage[] =>
    template.map((m) => ({ ...m, content: fillGh(r, m.content, row, lineOfVar) }));

  if (meta.testData === undefined || (Array.isArray(meta.testData) && meta.testData.length === 0)) {
    return { prompts: [{ prompt: r.prompt(fill({}), params, name), name, range: messagesRange }], ...base };
  }
  const tdLine = keyLine(y, ['testData'], 0);
  if (!Array.isArray(meta.testData)) {
    r.refuse('testData must be a list of variable mappings', tdLine);
    return { prompts: [], ...base };
  }
  const tdPair = pairOf(y.doc, ['testData']);
  const tdSeq = isSeq(tdPair?.value) ? tdPair!.value : undefined;
  const prompts: PromptFileEntry[] = [];
  // each row reads the messages whole and makes them anew
  const templateChars = template.reduce((n, m) => n + m.content.length, 0);
  let filled = 0;
  for (const [i, row] of (meta.testData as unknown[]).entries()) {
    const range = nodeRange(y, tdSeq?.items[i] as YamlNode | undefined, { startLine: tdLine, endLine: tdLine });
    if (!isObject(row)) {
      r.warn(`testData[${i}] must be a mapping of variables: skipped`, range.startLine);
      continue;
    }
    const messages = fill(row);
    filled += templateChars + messages.reduce((n, m) => n + m.content.length, 0);
    if (filled > MAX_FILLED_CHARS) {
      r.refuse(`the testData rows fill the messages into more than ${MAX_FILLED_CHARS.toLocaleString('en-US')} characters: refused`, tdLine);
      return { prompts: [], ...base };
    }
    prompts.push({ prompt: r.prompt(messages, params, `${name} · row ${i + 1}`), name: `${name} · row ${i + 1}`, range });
  }
  if (prompts.length === 0) r.refuse('no testData row is a mapping of variables', tdLine);
  return { prompts, ...base };
}

/** gh-models' substitution: exact `{{name}}` only; the caller's values, then the row's; `input` is empty when not given (as `gh models run`). */
function fillGh(r: Reader, text: string, row: Record<string, unknown>, lineOf: (needle: string) => number): string {
  return text.replace(GH_VAR, (whole, inner: string) => {
    const line = lineOf(whole);
    if (inner !== inner.trim() || !/^[\w.-]+$/.test(inner)) {
      if (/^\s*[\w.-]+\s*$/.test(inner)) r.warn(`${whole} has spaces inside the braces: gh-models fills only {{${inner.trim()}}}, so it is sent as written`, line);
      return whole;
    }
    const given = r.given(inner);
    const value = given ?? ownValue(row, inner);
    const filled = value !== undefined && value !== null;
    r.variable({ name: inner, kind: 'input', line, filled, written: whole, ...(filled ? { value: asText(value) } : { sentAs: inner === 'input' ? 'empty' : 'as written' }) });
    if (filled) return asText(value);
    return inner === 'input' ? '' : whole;
  });
}

function messagesOf(r: Reader, y: Yaml, messages: unknown): ChatMessage[] | undefined {
  const line = keyLine(y, ['messages'], 0);
  if (messages === undefined) {
    r.refuse('the file has no messages: add messages: with a list of { role, content }', 0);
    return undefined;
  }
  if (!Array.isArray(messages) || messages.length === 0) {
    r.refuse('messages must be a list of { role, content }', line);
    return undefined;
  }
  const out: ChatMessage[] = [];
  for (const [i, m] of messages.entries()) {
    const at = keyLine(y, ['messages', i, 'role'], line);
    if (!isObject(m)) {
      r.refuse(`messages[${i}] must be a mapping with role and content`, at);
      return undefined;
    }
    const role = typeof m.role === 'string' ? (ownValue(GH_ROLES, m.role.toLowerCase()) as ChatMessage['role'] | undefined) : undefined;
    if (role === undefined) {
      r.refuse(`messages[${i}].role must be system, user or assistant, got ${JSON.stringify(m.role)}`, at);
      return undefined;
    }
    if (typeof m.content !== 'string' && typeof m.content !== 'number' && typeof m.content !== 'boolean') {
      r.refuse(`messages[${i}].content must be text`, at);
      return undefined;
    }
    out.push({ role, content: String(m.content) });
  }
  return out;
}

function sampling(r: Reader, y: Yaml, meta: Record<string, unknown>): SamplingParams {
  const out: { -readonly [K in SamplingKey]?: SamplingParams[K] } = {};
  if (isObject(meta.modelParameters)) {
    const { max_tokens: _m, top_p: _t, ...rest } = meta.modelParameters;
    for (const [snake, camel] of [['max_tokens', 'maxTokens'], ['top_p', 'topP']] as const) {
      if (meta.modelParameters[snake] !== undefined) r.warn(`modelParameters.${snake} is not sent: gh-models reads ${camel}`, keyLine(y, ['modelParameters', snake], 0));
    }
    readSampling(r, y, rest, ['modelParameters'], GH_MODEL_PARAMETERS, out);
  }
  else if (meta.modelParameters !== undefined && meta.modelParameters !== null) r.warn('modelParameters must be a mapping: ignored', keyLine(y, ['modelParameters'], 0));
  if (meta.responseFormat !== undefined && meta.responseFormat !== null) {
    const read = responseFormat(meta.responseFormat, meta.jsonSchema);
    if (typeof read === 'string') r.warn(`responseFormat ${read}: not sent`, keyLine(y, ['responseFormat'], 0));
    else out.responseFormat = read.value;
  }
  if (meta.tools !== undefined && meta.tools !== null) {
    const tools = toolDefinitions(meta.tools, 'tools');
    if (typeof tools === 'string') r.warn(`${tools}: not sent`, keyLine(y, ['tools'], 0));
    else out.tools = tools;
  }
  return out;
}
