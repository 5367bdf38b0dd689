// Function definitions (tools) as every source gives them: a --tools file, a prompt file's `tools`,
// a dataset line's. One reader, so that each source refuses the same things in the same words. Pure.
import { isObject } from './json';
import type { ToolDefinition } from './types';

/** The names OpenAI, Anthropic and Gemini all take: letters, digits, _ . - (Gemini also :), at most 64. */
const TOOL_NAME = /^[A-Za-z0-9_.-]{1,64}$/;

/** One function definition, in OpenAI's form (`{"type":"function","function":{…}}`) or bare (`{name, description, parameters}`); a problem is a message naming `where`. */
export function toolDefinition(x: unknown, where: string): ToolDefinition | string {
  const fn = isObject(x) && x.type === 'function' && isObject(x.function) ? x.function : x;
  if (!isObject(fn) || typeof fn.name !== 'string' || !TOOL_NAME.test(fn.name)) return `${where}: a tool needs a name of letters, digits, _ . - (at most 64)`;
  if (fn.description !== undefined && typeof fn.description !== 'string') return `${where}: ${fn.name}'s description must be text`;
  if (fn.parameters !== undefined && !isObject(fn.parameters)) return `${where}: ${fn.name}'s parameters must be a JSON schema object`;
  return {
    type: 'function',
    function: { name: fn.name, ...(typeof fn.description === 'string' ? { description: fn.description } : {}), ...(isObject(fn.parameters) ? { parameters: fn.parameters } : {}) },
  };
}

/** A list of function definitions (`[…]`, or `{"tools": […]}`): the definitions, or the first problem. An empty list is a problem: nothing would be sent. */
export function toolDefinitions(x: unknown, where: string): readonly ToolDefinition[] | string {
  const list = Array.isArray(x) ? x : isObject(x) && Array.isArray(x.tools) ? x.tools : undefined;
  if (!list || list.length === 0) return `${where} must be a non-empty list of function definitions`;
  const out: ToolDefinition[] = [];
  for (const [i, item] of list.entries()) {
    const t = toolDefinition(item, `${where} tool ${i + 1}`);
    if (typeof t === 'string') return t;
    out.push(t);
  }
  return out;
}

/** The tools' names, for the words every surface shows ("get_weather, search"). */
export function toolNames(tools: readonly ToolDefinition[]): string {
  return tools.map((t) => t.function.name).join(', ');
}
