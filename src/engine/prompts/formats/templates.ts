// The template languages prompt files are written in, rendered as their own tools render them:
// - Jinja2 (Prompty's default): @huggingface/jinja's interpreter, with Python Jinja2's defaults rather
//   than the chat-template ones the library's `Template` uses (no trim_blocks/lstrip_blocks), values
//   printed as Python prints them (True, None, {'a': 1}), and every top-level name the template reads
//   without a value recorded, so that it can be reported once with its line (Jinja2 renders it empty).
// - mustache (Prompty's `template: mustache`): the `mustache` package, escaping as Python's chevron does.
// - gh-models' `{{name}}` (.prompt.yml): plain substitution.
// Templates are untrusted (the CodeLens renders them as a file opens): each render spends a budget of
// steps, characters and time (renderBudget.ts, jinjaLimits.ts) and is refused, with the reason, past it;
// names are looked up as the values' own (`{{constructor}}` is not Object's).
import { Environment, Interpreter, parse, tokenize } from '@huggingface/jinja';
import Mustache from 'mustache';
import { RenderBudget, RenderLimitError, type RenderLimits } from './renderBudget';
import { guardFilter, guardMethod, guardWhole, isContainer, type RuntimeValueLike } from './jinjaLimits';

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

type Args = [RuntimeValueLike[], Map<string, RuntimeValueLike>];

// The library declares the methods overridden here private; they are plain prototype methods (pinned version).
interface InterpreterLike {
  run(program: unknown): RuntimeValueLike;
  evaluate(node: Statement, environment: EnvironmentLike): RuntimeValueLike;
  evaluateBlock(statements: readonly Statement[], environment: EnvironmentLike): RuntimeValueLike;
  evaluateFor(node: Statement, environment: EnvironmentLike): RuntimeValueLike;
  evaluateArguments(args: readonly Statement[], environment: EnvironmentLike): Args;
  evaluateBinaryExpression(node: BinaryNode, environment: EnvironmentLike): RuntimeValueLike;
  evaluateCallExpression(node: CallNode, environment: EnvironmentLike): RuntimeValueLike;
  applyFilter(operand: RuntimeValueLike, filter: FilterNode, environment: EnvironmentLike): RuntimeValueLike;
}
interface EnvironmentLike {
  readonly variables: Map<string, unknown>;
  set(name: string, value: unknown): unknown;
  resolve(name: string): EnvironmentLike;
}
interface BinaryNode extends Statement {
  readonly operator: { readonly value: string };
  readonly left: Statement;
  readonly right: Statement;
}
interface CallNode extends Statement {
  readonly callee: Statement & { readonly value?: string; readonly object?: Statement; readonly property?: Statement & { readonly value?: unknown }; readonly computed?: boolean };
  readonly args: readonly Statement[];
}
type FilterNode = (Statement & { readonly value?: string }) | CallNode;
const BaseInterpreter = Interpreter as unknown as new (env: EnvironmentLike) => InterpreterLike;
const BaseEnvironment = Environment as unknown as new (parent?: EnvironmentLike) => EnvironmentLike;

/** What prints a None: an expression statement ({{ x }}), not a tag ({% set %} evaluates to one too). */
const EXPRESSIONS = new Set(['Identifier', 'MemberExpression', 'CallExpression', 'FilterExpression', 'TestExpression', 'Ternary', 'TernaryExpression', 'NullLiteral']);
/** Statements whose text is their blocks' text, already counted as written there. */
const BLOCKS = new Set(['For', 'If', 'CallStatement', 'Macro', 'Set']);
/** Filters that serialise their operand whole. */
const SERIALISING = new Set(['tojson', 'string', 'join', 'indent', 'replace']);

/** A value already evaluated, handed back to the library as a node (so that nothing is evaluated twice). */
const HELD = '\u0000held';
interface Held extends Statement {
  readonly held: RuntimeValueLike;
}
const hold = (held: RuntimeValueLike): Held => ({ type: HELD, held });
function heldArgs([args, kwargs]: Args): Statement[] {
  return [...args.map(hold), ...[...kwargs].map(([k, v]) => ({ type: 'KeywordArgumentExpression', key: { type: 'Identifier', value: k }, value: hold(v) }))];
}

/** A node that makes a new value (its size is paid for), not one that reads a value already there. */
function makes(node: Statement): boolean {
  if (node.type === 'Identifier') return false;
  return node.type !== 'MemberExpression' || (node as CallNode['callee']).property?.type === 'SliceExpression';
}

/**
 * Prints output the way Python's Jinja2 does (the library prints JSON-ish and skips None), and spends
 * the render's budget: a step per node, the size of what each node makes, and the checks before the
 * operations that cost more than a step (jinjaLimits.ts).
 */
class PythonInterpreter extends BaseInterpreter {
  constructor(env: EnvironmentLike, readonly budget: RenderBudget) {
    super(env);
  }

  override evaluate(node: Statement, environment: EnvironmentLike): RuntimeValueLike {
    if (node?.type === HELD) return (node as Held).held;
    this.budget.step();
    const v = super.evaluate(node, environment);
    if (typeof v.value === 'string') {
      this.budget.chars(v.value.length);
      if (node && makes(node)) this.budget.step(v.value.length >> 6);
    } else if (Array.isArray(v.value)) {
      this.budget.items(v.value.length);
      if (node && makes(node)) this.budget.step(v.value.length >> 4);
    }
    return v;
  }

  override evaluateFor(node: Statement, environment: EnvironmentLike): RuntimeValueLike {
    if (forOverUndefined(this, node, environment)) return super.evaluateBlock([], environment);
    return super.evaluateFor(node, environment);
  }

  override evaluateBlock(statements: readonly Statement[], environment: EnvironmentLike): RuntimeValueLike {
    this.budget.step();
    let out = '';
    for (const statement of statements) {
      const v = this.evaluate(statement, environment);
      if (v.type === 'UndefinedValue') continue;
      if (v.type === 'NullValue') {
        if (EXPRESSIONS.has(statement.type)) out += 'None';
        continue;
      }
      if (isContainer(v)) guardWhole(this.budget, v);
      const piece = pyStr(v, false);
      if (!BLOCKS.has(statement.type)) this.budget.write(piece.length);
      out += piece;
      this.budget.chars(out.length);
    }
    // the library's own string value, emptied and refilled (its class is not exported)
    const result = super.evaluateBlock([], environment);
    (result as { value: unknown }).value = out;
    return result;
  }

  /** `~` and `+` write a list or mapping as text: weighed first. */
  override evaluateBinaryExpression(node: BinaryNode, environment: EnvironmentLike): RuntimeValueLike {
    const op = node.operator.value;
    if (op !== '~' && op !== '+') return super.evaluateBinaryExpression(node, environment);
    const left = this.evaluate(node.left, environment);
    const right = this.evaluate(node.right, environment);
    for (const v of [left, right]) if (isContainer(v)) guardWhole(this.budget, v);
    return super.evaluateBinaryExpression({ ...node, left: hold(left), right: hold(right) } as BinaryNode, environment);
  }

  override applyFilter(operand: RuntimeValueLike, filter: FilterNode, environment: EnvironmentLike): RuntimeValueLike {
    const name = 'callee' in filter ? filter.callee.value : filter.value;
    if (name === undefined || !SERIALISING.has(name)) return super.applyFilter(operand, filter, environment);
    if (!('callee' in filter)) {
      if (isContainer(operand)) guardWhole(this.budget, operand);
      return super.applyFilter(operand, filter, environment);
    }
    const args = this.evaluateArguments(filter.args, environment);
    guardFilter(this.budget, name, operand, ...args);
    return super.applyFilter(operand, { ...filter, args: heldArgs(args) } as CallNode, environment);
  }

  /** A string's `replace` and `split`: checked with their arguments before they run. */
  override evaluateCallExpression(node: CallNode, environment: EnvironmentLike): RuntimeValueLike {
    const callee = node.callee;
    const method = callee.type === 'MemberExpression' && !callee.computed ? callee.property?.value : undefined;
    if ((method !== 'replace' && method !== 'split') || !callee.object) return super.evaluateCallExpression(node, environment);
    const object = this.evaluate(callee.object, environment);
    const args = this.evaluateArguments(node.args, environment);
    if (typeof object.value === 'string') guardMethod(this.budget, method, object.value, ...args);
    return super.evaluateCallExpression({ ...node, callee: { ...callee, object: hold(object) }, args: heldArgs(args) } as CallNode, environment);
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

const MAX_RANGE = 100_000;

/** Python's range(), its numbers paid for before they are made. */
function jinjaRange(budget: RenderBudget, args: readonly number[]): number[] {
  const [start, stop, step] = args.length === 1 ? [0, args[0]!, 1] : [args[0]!, args[1]!, args[2] ?? 1];
  if (step === 0) throw new Error('range() arg 3 must not be zero');
  const n = Math.ceil((stop - start) / step);
  if (n > MAX_RANGE) throw new RenderLimitError(`range() makes more than ${MAX_RANGE.toLocaleString('en-US')} numbers: refused`);
  if (n > 0) budget.step(n);
  const out: number[] = [];
  for (let i = start; (step > 0 ? i < stop : i > stop) && out.length < MAX_RANGE; i += step) out.push(i);
  return out;
}

/** The 0-based line of the first occurrence of `needle` in `template`, when there is one. */
function lineOf(template: string, needle: string | RegExp | undefined): number | undefined {
  if (!needle) return undefined;
  const at = typeof needle === 'string' ? template.indexOf(needle) : (needle.exec(template)?.index ?? -1);
  return at < 0 ? undefined : template.slice(0, at).split('\n').length - 1;
}

/** Where a template's work multiplies: its first loop, macro or call block. */
const LOOP_TAG = /\{%-?\s*(?:for|macro|call)\b/;
/** The engine's own limits, met by a template without bounds: reported as the budget's are. */
const ENGINE_LIMITS: Readonly<Record<string, string>> = {
  'Maximum call stack size exceeded': 'it nests or recurses too deeply to render: refused',
  'Invalid string length': 'it renders more text than a string can hold: refused',
};

function jinjaError(template: string, e: unknown): TemplateError {
  const message = (e as Error).message ?? String(e);
  const limit = e instanceof RenderLimitError ? message : e instanceof RangeError ? ENGINE_LIMITS[message] : undefined;
  if (limit !== undefined) return new TemplateError(limit, lineOf(template, message.startsWith('range()') ? 'range(' : LOOP_TAG));
  // the library names what it could not handle ("Unknown StringValue filter: reverse", "Unknown operator \"%\" …")
  const subject = /filter: (\w+)/.exec(message)?.[1] ?? /Unknown (?:operator|statement type|node type)[: ]+"?([^"\s]+)"?/.exec(message)?.[1];
  return new TemplateError(message.replace(/\.$/, ''), lineOf(template, subject));
}

/**
 * Templates with tags longer than this are not rendered: the libraries' parsers read 3 to 6 characters
 * a microsecond (mustache's makes a token of each character of text), all before a step is counted.
 * A prompt's long text belongs in an input's value (its sample, a `${file:…}`).
 */
export const MAX_TEMPLATE_CHARS = 256 * 1024;

function checkLength(template: string): void {
  if (template.length <= MAX_TEMPLATE_CHARS) return;
  throw new TemplateError(`the template is ${template.length.toLocaleString('en-US')} characters long; the profiler renders templates of up to ${MAX_TEMPLATE_CHARS.toLocaleString('en-US')} (put long text in an input's sample or a \${file:…}): refused`, 0);
}

/**
 * The library's tokens of a template. Its tokenize() first runs a pass for Hugging Face's
 * `{% generation %}` tags, /(\s*){%…generation…%}(\s*)/gs over the whole template, which reads a long
 * run of whitespace in quadratic time (100,000 spaces: 6 s). Python's Jinja2 has no such tag (it
 * refuses it, as the profiler now does), so the pass is skipped: tokenize() is handed the template
 * with its last newline dropped, as that pass would, through the two calls it makes (pinned version).
 */
function jinjaTokens(template: string): ReturnType<typeof tokenize> {
  const src = template.endsWith('\n') ? template.slice(0, -1) : template;
  const prepared = { endsWith: () => false, replace: () => src };
  return tokenize(prepared as unknown as string, {});
}

/** Text with no tag renders as itself, less one trailing newline (Jinja2's keep_trailing_newline=False). */
const JINJA_TAG = /\{[{%#]/;

/** Renders a Jinja2 template as Python's `jinja2.Environment().from_string(t).render(**values)`, within `limits`. */
export function renderJinja(template: string, values: Readonly<Record<string, unknown>>, limits?: RenderLimits): Rendered {
  if (!JINJA_TAG.test(template)) return { text: template.endsWith('\n') ? template.slice(0, -1) : template, missing: [] };
  checkLength(template);
  const budget = new RenderBudget(limits);
  let program: ReturnType<typeof parse>;
  try {
    program = parse(jinjaTokens(template));
  } catch (e) {
    throw jinjaError(template, e);
  }
  const env = new RecordingEnvironment();
  const set = (k: string, v: unknown) => {
    if (env.variables.has(k)) env.variables.delete(k);
    env.set(k, v);
  };
  try {
    for (const [k, v] of Object.entries(JINJA_GLOBALS)) set(k, v);
    set('range', (...args: number[]) => jinjaRange(budget, args));
    for (const [k, v] of Object.entries(values)) set(k, v === undefined ? null : v);
    env.missing.length = 0;
    const out = new PythonInterpreter(env, budget).run(program);
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

/** Python chevron's escaping of `{{x}}`, which Prompty's mustache renderer uses: & " < > (not '), of the value as Python prints it (a number or a boolean too). */
function chevronEscape(v: unknown): string {
  const s = typeof v === 'boolean' ? (v ? 'True' : 'False') : String(v);
  return s.replace(/[&"<>]/g, (c) => CHEVRON_ESCAPES[c]!);
}

/** `view[name]` when `view` has it as its own (a template's `{{constructor}}` is not Object's). */
function own(view: unknown, name: string): { value: unknown } | undefined {
  if (view === null || view === undefined || !Object.hasOwn(Object(view), name)) return undefined;
  return { value: (view as Record<string, unknown>)[name] };
}

/**
 * mustache.js's lookup (the context stack, dotted names, a plain name only in an object view) over
 * own properties only, and values as data: a function is never called (mustache calls it as a lambda).
 */
class OwnContext extends Mustache.Context {
  override push(view: unknown): Mustache.Context {
    return new OwnContext(view, this);
  }

  override lookup(name: string): unknown {
    return ownLookup(this, name);
  }
}

function ownLookup(context: Mustache.Context, name: string): unknown {
  if (name === '.') return typeof context.view === 'function' ? undefined : context.view;
  const names = name.split('.');
  for (let c: Mustache.Context | undefined = context; c; c = c.parent) {
    if (names.length === 1 && typeof c.view !== 'object') continue;
    let hit: { value: unknown } | undefined = { value: c.view };
    for (const n of names) hit = hit && own(hit.value, n);
    if (hit) return typeof hit.value === 'function' ? undefined : hit.value;
  }
  return undefined;
}

type MustacheToken = Parameters<Mustache.Writer['rawValue']>[0];

/** mustache.js's writer, spending a render's budget: steps per token rendered, every character written. */
class BudgetWriter extends Mustache.Writer {
  constructor(readonly budget: RenderBudget) {
    super();
  }

  override renderTokens(tokens: MustacheToken[], context: Mustache.Context, partials?: Mustache.PartialsOrLookupFn, originalTemplate?: string, config?: Mustache.RenderOptions): string {
    this.budget.step(tokens.length + 1);
    const out = super.renderTokens(tokens, context, partials, originalTemplate, config);
    this.budget.chars(out.length);
    return out;
  }

  override escapedValue(token: MustacheToken, context: Mustache.Context, config?: Mustache.RenderOptions): string {
    return this.#written(super.escapedValue(token, context, config));
  }

  override unescapedValue(token: MustacheToken, context: Mustache.Context): string {
    return this.#written(super.unescapedValue(token, context));
  }

  override rawValue(token: MustacheToken): string {
    return this.#written(super.rawValue(token));
  }

  #written(v: string): string {
    if (v !== undefined && v !== null) this.budget.write(typeof v === 'string' ? v.length : 1);
    return v;
  }
}

/** Renders a mustache template as Prompty does (Python chevron): `{{x}}` HTML-escaped as chevron escapes, `{{{x}}}` and `{{& x}}` not. */
export function renderMustache(template: string, values: Readonly<Record<string, unknown>>, limits?: RenderLimits): Rendered {
  if (!template.includes('{{')) return { text: template, missing: [] };
  checkLength(template);
  try {
    // a writer per render: mustache's shared one would keep every template it was given
    const writer = new BudgetWriter(new RenderBudget(limits));
    const names = new Set<string>();
    mustacheNames(writer.parse(template), names, 0);
    const text = writer.render(template, new OwnContext(values), undefined, { escape: chevronEscape });
    return { text, missing: [...names].filter((n) => n !== '.' && (own(values, n)?.value ?? null) === null) };
  } catch (e) {
    const message = (e as Error).message;
    const limit = e instanceof RenderLimitError ? message : e instanceof RangeError ? ENGINE_LIMITS[message] : undefined;
    if (limit !== undefined) throw new TemplateError(limit, lineOf(template, '{{#'));
    const at = /at (\d+)/.exec(message);
    throw new TemplateError(message.replace(/\.$/, ''), at ? template.slice(0, Number(at[1])).split('\n').length - 1 : undefined);
  }
}
