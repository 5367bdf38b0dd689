// The template languages prompt files are written in, rendered as their own tools render them:
// - Jinja2 (Prompty's default): @huggingface/jinja's interpreter, with Python Jinja2's defaults rather
//   than the chat-template ones the library's `Template` uses (no trim_blocks/lstrip_blocks), values
//   printed as Python prints them (True, None, {'a': 1}), and every top-level name the template reads
//   without a value recorded, so that it can be reported once with its line (Jinja2 renders it empty).
// - mustache (Prompty's `template: mustache`): the `mustache` package, escaping as Python's chevron does.
// - gh-models' `{{name}}` (.prompt.yml): plain substitution.
import { Environment, Interpreter, parse, tokenize } from '@huggingface/jinja';
import Mustache from 'mustache';

/** A template that could not be rendered, with the 0-based line (of the template) it points at when known. */
export class TemplateError extends Error {
  override readonly name = 'TemplateError';
  constructor(message: string, readonly line?: number) {
    super(message);
  }
}

export interface Rendered {
  readonly text: string;
  /** Top-level names the template read that had no value, in first-use order. */
  readonly missing: readonly string[];
}

// ---- Jinja2 ----

interface RuntimeValueLike {
  readonly type: string;
  readonly value: unknown;
}

const PY_STR_ESCAPES: Readonly<Record<string, string>> = { '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/** Python's repr() of a str. */
function pyStrRepr(s: string): string {
  const quote = s.includes("'") && !s.includes('"') ? '"' : "'";
  const body = s.replace(/[\\\n\r\t]/g, (c) => PY_STR_ESCAPES[c]!);
  return quote + (quote === "'" ? body.replace(/'/g, "\\'") : body) + quote;
}

function pyFloat(n: number): string {
  if (Number.isInteger(n)) return Object.is(n, -0) ? '-0.0' : `${n}.0`;
  if (Number.isNaN(n)) return 'nan';
  if (!Number.isFinite(n)) return n > 0 ? 'inf' : '-inf';
  return String(n).replace(/e\+?/, 'e+').replace('e+-', 'e-');
}

/** How Python's str() prints a value (repr inside containers). */
function pyStr(v: RuntimeValueLike, nested: boolean): string {
  switch (v.type) {
    case 'StringValue':
      return nested ? pyStrRepr(v.value as string) : (v.value as string);
    case 'BooleanValue':
      return v.value ? 'True' : 'False';
    case 'NullValue':
      return 'None';
    case 'UndefinedValue':
      return nested ? 'None' : '';
    case 'IntegerValue':
      return String(v.value);
    case 'FloatValue':
      return pyFloat(v.value as number);
    case 'ArrayValue':
      return `[${(v.value as RuntimeValueLike[]).map((x) => pyStr(x, true)).join(', ')}]`;
    case 'TupleValue': {
      const items = (v.value as RuntimeValueLike[]).map((x) => pyStr(x, true));
      return `(${items.join(', ')}${items.length === 1 ? ',' : ''})`;
    }
    case 'ObjectValue':
    case 'KeywordArgumentsValue':
    case 'NamespaceValue':
      return `{${[...(v.value as Map<string, RuntimeValueLike>)].map(([k, x]) => `${pyStrRepr(k)}: ${pyStr(x, true)}`).join(', ')}}`;
    default:
      return String((v as { toString(): string }).toString());
  }
}

interface Statement {
  readonly type: string;
}

// The library declares the methods overridden here private; they are plain prototype methods (pinned version).
interface InterpreterLike {
  run(program: unknown): RuntimeValueLike;
  evaluate(node: Statement, environment: EnvironmentLike): RuntimeValueLike;
  evaluateBlock(statements: readonly Statement[], environment: EnvironmentLike): RuntimeValueLike;
  evaluateFor(node: Statement, environment: EnvironmentLike): RuntimeValueLike;
}
interface EnvironmentLike {
  readonly variables: Map<string, unknown>;
  set(name: string, value: unknown): unknown;
  resolve(name: string): EnvironmentLike;
}
const BaseInterpreter = Interpreter as unknown as new (env: EnvironmentLike) => InterpreterLike;
const BaseEnvironment = Environment as unknown as new (parent?: EnvironmentLike) => EnvironmentLike;

/** What prints a None: an expression statement ({{ x }}), not a tag ({% set %} evaluates to one too). */
const EXPRESSIONS = new Set(['Identifier', 'MemberExpression', 'CallExpression', 'FilterExpression', 'TestExpression', 'Ternary', 'TernaryExpression', 'NullLiteral']);

/** Prints output the way Python's Jinja2 does (the library prints JSON-ish and skips None). */
class PythonInterpreter extends BaseInterpreter {
  override evaluateFor(node: Statement, environment: EnvironmentLike): RuntimeValueLike {
    if (forOverUndefined(this, node, environment)) return super.evaluateBlock([], environment);
    return super.evaluateFor(node, environment);
  }

  override evaluateBlock(statements: readonly Statement[], environment: EnvironmentLike): RuntimeValueLike {
    let out = '';
    for (const statement of statements) {
      const v = this.evaluate(statement, environment);
      if (v.type === 'UndefinedValue') continue;
      if (v.type === 'NullValue') {
        if (EXPRESSIONS.has(statement.type)) out += 'None';
        continue;
      }
      out += pyStr(v, false);
    }
    // the library's own string value, emptied and refilled (its class is not exported)
    const result = super.evaluateBlock([], environment);
    (result as { value: unknown }).value = out;
    return result;
  }
}

/** Python iterates an undefined name as an empty sequence (`{% for x in missing %}` renders nothing); the library throws. */
function forOverUndefined(interpreter: InterpreterLike, node: Statement & { readonly iterable?: Statement & { readonly lhs?: Statement } }, environment: EnvironmentLike): boolean {
  const iterable = node.iterable?.type === 'SelectExpression' ? node.iterable.lhs : node.iterable;
  return iterable !== undefined && interpreter.evaluate(iterable, environment).type === 'UndefinedValue';
}

/** The root scope: records the names read that have no value (child scopes resolve through it). */
class RecordingEnvironment extends BaseEnvironment {
  readonly missing: string[] = [];

  override resolve(name: string): EnvironmentLike {
    if (!this.variables.has(name) && !this.missing.includes(name)) this.missing.push(name);
    return super.resolve(name);
  }
}

const JINJA_GLOBALS: Readonly<Record<string, unknown>> = { true: true, false: false, none: null, True: true, False: false, None: null };

function jinjaRange(...args: number[]): number[] {
  const [start, stop, step] = args.length === 1 ? [0, args[0]!, 1] : [args[0]!, args[1]!, args[2] ?? 1];
  const out: number[] = [];
  if (step === 0) throw new Error('range() arg 3 must not be zero');
  for (let i = start; step > 0 ? i < stop : i > stop; i += step) {
    out.push(i);
    if (out.length > 100_000) throw new Error('range() is too long');
  }
  return out;
}

/** The 0-based line of the first occurrence of `needle` in `template`, when there is one. */
function lineOf(template: string, needle: string | undefined): number | undefined {
  if (!needle) return undefined;
  const at = template.indexOf(needle);
  return at < 0 ? undefined : template.slice(0, at).split('\n').length - 1;
}

function jinjaError(template: string, e: unknown): TemplateError {
  const message = (e as Error).message ?? String(e);
  // the library names what it could not handle ("Unknown StringValue filter: reverse", "Unknown operator \"%\" …")
  const subject = /filter: (\w+)/.exec(message)?.[1] ?? /Unknown (?:operator|statement type|node type)[: ]+"?([^"\s]+)"?/.exec(message)?.[1];
  return new TemplateError(message.replace(/\.$/, ''), lineOf(template, subject));
}

/** Renders a Jinja2 template as Python's `jinja2.Environment().from_string(t).render(**values)`. */
export function renderJinja(template: string, values: Readonly<Record<string, unknown>>): Rendered {
  let program: ReturnType<typeof parse>;
  try {
    program = parse(tokenize(template, {}));
  } catch (e) {
    throw jinjaError(template, e);
  }
  const env = new RecordingEnvironment();
  const set = (k: string, v: unknown) => {
    if (env.variables.has(k)) env.variables.delete(k);
    env.set(k, v);
  };
  for (const [k, v] of Object.entries(JINJA_GLOBALS)) set(k, v);
  set('range', jinjaRange);
  for (const [k, v] of Object.entries(values)) set(k, v === undefined ? null : v);
  env.missing.length = 0;
  try {
    const out = new PythonInterpreter(env).run(program);
    return { text: out.value as string, missing: [...env.missing] };
  } catch (e) {
    throw jinjaError(template, e);
  }
}

// ---- mustache ----

/** The names a mustache template reads at the top level ({{x}}, {{{x}}}, {{&x}}, {{#x}}, {{^x}}). */
function mustacheNames(tokens: unknown[], out: Set<string>, depth: number): void {
  for (const t of tokens as [string, string, number, number, unknown[]?][]) {
    const [type, name, , , children] = t;
    if ((type === 'name' || type === '&' || type === '#' || type === '^') && depth === 0) out.add(name.split('.')[0]!);
    if ((type === '#' || type === '^') && Array.isArray(children)) mustacheNames(children, out, depth + 1);
  }
}

const CHEVRON_ESCAPES: Readonly<Record<string, string>> = { '&': '&amp;', '"': '&quot;', '<': '&lt;', '>': '&gt;' };

/** Python chevron's escaping of `{{x}}`, which Prompty's mustache renderer uses: & " < > (not '). */
function chevronEscape(s: string): string {
  return s.replace(/[&"<>]/g, (c) => CHEVRON_ESCAPES[c]!);
}

/** Renders a mustache template as Prompty does (Python chevron): `{{x}}` HTML-escaped as chevron escapes, `{{{x}}}` and `{{& x}}` not. */
export function renderMustache(template: string, values: Readonly<Record<string, unknown>>): Rendered {
  try {
    const names = new Set<string>();
    mustacheNames(Mustache.parse(template), names, 0);
    const text = Mustache.render(template, values, undefined, { escape: chevronEscape });
    return { text, missing: [...names].filter((n) => n !== '.' && (values[n] === undefined || values[n] === null)) };
  } catch (e) {
    const message = (e as Error).message;
    const at = /at (\d+)/.exec(message);
    throw new TemplateError(message.replace(/\.$/, ''), at ? template.slice(0, Number(at[1])).split('\n').length - 1 : undefined);
  }
}
