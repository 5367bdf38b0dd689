// Property-based fuzzing of the prompt readers (issue 27): the real prompt files of the corpus
// (test/fixtures/promptCorpus) mutated with hostile and structural pieces, and prompt files built at
// random, read by parsePromptFile, which must never throw, must answer in bounded time, and must give
// a refusal or prompts, never both, never neither. And the readers' linear-time matchers against the
// regular expressions they stand for, on inputs short enough for those to be quick. Each property runs
// a bounded number of cases from a fixed seed (the file stays within ~10 s). To explore:
// FUZZ_SEED=<n> FUZZ_SCALE=<multiplier of the run counts> node --import tsx --test test/unit/fuzzPromptFiles.test.ts
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import * as fc from 'fast-check';
import { stringify } from 'yaml';
import { parsePromptFile } from '../../src/engine/prompts/promptFiles';
import type { PromptFileContext } from '../../src/engine/prompts/formats/types';
import { estimateTokens } from '../../src/engine/prompts/syntheticPrompts';
import { images, roleLine } from '../../src/engine/prompts/formats/promptyText';
import { renderJinja } from '../../src/engine/prompts/formats/templates';
import { parserFileName } from '../../src/extension/promptFileKinds';

const SEED = process.env.FUZZ_SEED === undefined ? 0x27f1 : Number(process.env.FUZZ_SEED);
const SCALE = process.env.FUZZ_SCALE === undefined ? 1 : Number(process.env.FUZZ_SCALE);

function check<Ts>(property: fc.IProperty<Ts>, numRuns: number): void {
  fc.assert(property, { seed: SEED, numRuns: Math.max(1, Math.round(numRuns * SCALE)) });
}

/** One parse may take this long at most: the render's budget is 250 ms, the rest is generous for a loaded machine. */
const MAX_PARSE_MS = 2000;

// ---- what a parse must always be ------------------------------------------------------------------

const FILES: Readonly<Record<string, string>> = {
  json: '{"a": 1, "__proto__": {"polluted": 1}, "l": [1, 2]}',
  yaml: 'a: &x [1, 2]\nb: *x\n__proto__: {polluted: 1}\n',
  txt: 'some text {{ a }}',
};

/** Files next to the prompt: any name ending in .json, .yaml/.yml, .txt or .png reads as something. */
const context = (vars: boolean): PromptFileContext => ({
  readFile: (rel) => {
    const ext = /\.(\w+)$/.exec(rel)?.[1]?.toLowerCase();
    if (ext === 'png') return new Uint8Array([137, 80, 78, 71]);
    const text = ext === 'yml' ? FILES.yaml : ext !== undefined && Object.hasOwn(FILES, ext) ? FILES[ext] : undefined;
    return text === undefined ? undefined : new TextEncoder().encode(text);
  },
  env: { HOME: '/home/x' },
  ...(vars ? { vars: JSON.parse('{"a": "A", "constructor": "C", "__proto__": {"polluted": 1}, "l": [1, 2, 3]}') as Record<string, unknown> } : {}),
});

function assertWellFormed(fileName: string, text: string, vars: boolean): void {
  const t0 = performance.now();
  let r: ReturnType<typeof parsePromptFile>;
  try {
    r = parsePromptFile(fileName, text, context(vars));
  } catch (e) {
    assert.fail(`parsePromptFile threw on ${fileName}: ${(e as Error).stack}`);
  }
  const ms = performance.now() - t0;
  assert.ok(ms < MAX_PARSE_MS, `${fileName}: ${ms.toFixed(0)} ms`);
  assert.equal(r.refusal === undefined, r.prompts.length > 0, 'a refusal xor prompts');
  if (r.refusal) {
    assert.equal(typeof r.refusal.message, 'string');
    // the reader's catch-all: a reader that threw is a bug, not a refusal
    assert.doesNotMatch(r.refusal.message, /^could not read /, r.refusal.message);
  }
  for (const w of r.warnings) assert.equal(typeof w.message, 'string');
  for (const p of r.prompts) {
    assert.ok(p.prompt.messages.length > 0);
    for (const m of p.prompt.messages) assert.equal(typeof m.content, 'string');
    assert.ok(Number.isFinite(p.prompt.estimatedTokens));
  }
  assert.equal(({} as Record<string, unknown>).polluted, undefined, 'no prototype changed');
}

// ---- the corpus, mutated -------------------------------------------------------------------------

const corpusDir = join(__dirname, '../fixtures/promptCorpus');
function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? walk(path) : [path];
  });
}
const corpus = walk(corpusDir)
  .filter((p) => /\.(prompty|prompt\.md|prompt\.ya?ml|ya?ml)$/i.test(p))
  .map((p) => ({ name: parserFileName(relative(corpusDir, p)), text: readFileSync(p, 'utf8') }));

/** Pieces a mutation inserts: each format's syntax, the hostile forms the readers bound, and the odd character. */
const PIECES = [
  '{{', '}}', '{%', '%}', '{#', '#}', '{{-', '-}}', '{%-', '-%}', '{{ a }}', '{{a}}', '{{ l }}', '{{#l}}', '{{/l}}', '{{^l}}', '{{.}}', '{{{a}}}', '{{& a}}', '{{=<% %>=}}',
  '{% for i in range(30) %}', '{% for x in l %}', '{% endfor %}', '{% if a %}', '{% else %}', '{% endif %}', '{% raw %}', '{% endraw %}',
  '{% set ns = namespace(s="ab") %}', '{% set ns.s = ns.s ~ ns.s %}', '{{ ns.s|length }}', '{{ l|tojson(indent=2) }}', "{{ 'a b'.split(' ') }}", "{{ a.replace('', '-') }}",
  '{{ range(5)|join(", ") }}', "{{ 'x'|indent(4, true) }}", '{% macro m(n) %}{{ n }}{% endmacro %}{{ m(1) }}', '{% generation %}', '{{ constructor }}', '{{ __proto__ }}', '{{toString}}',
  '${input:a}', '${input:topic:the topic}', '${input:', '${selection}', '${file}', '${file:ctx.json}', '${file:ctx.yaml}', '${file:missing.json}', '${env:HOME}', '${env:NOPE:dflt}',
  '\n---\n', '---\n', '\nuser:\n', '\nsystem:\n', '\n# assistant:\n', '\ndeveloper:\n', 'user[name="Ann", x=1]:', 'user[a= a= a= a= a=', '![cat](cat.png)', '![x](https://e/x.png "t")', '![', '](',
  'sample:\n  a: 1\n', 'sample: ${file:s.json}\n', 'inputs:\n  a: {type: string, sample: hi}\n', 'template: mustache\n', 'template: handlebars\n', 'model:\n  parameters: {max_tokens: 5, constructor: 1}\n',
  'messages:\n  - role: user\n    content: "{{a}}"\n', 'testData:\n  - a: 1\n  - a: 2\n', '  - role: constructor\n', 'modelParameters: {temperature: 2}\n', 'llmProfiler: {slo: {ttft: 5}}\n',
  '&a [1, 2]', '*a', '<<: *a', '__proto__: {polluted: 1}\n', 'sample: &c {a: *c}\n', '&d [*d]', '? [a, b]\n: 1\n', '!!binary aGk=', '!!set {a, b}', '!!timestamp 2001-12-14', '!!js/function f', '|\n', '>-\n', '- ', ': ', '"', "'", '[', ']', '{', '}', '\t', '\r\n', '\r', '\u0000', '\uFFFD', '\uFEFF', '😀', '\u202e',
];

type Mutation =
  | { readonly op: 'insert'; readonly at: number; readonly piece: string }
  | { readonly op: 'delete'; readonly at: number; readonly length: number }
  | { readonly op: 'duplicate'; readonly at: number; readonly length: number; readonly to: number }
  | { readonly op: 'splice'; readonly at: number; readonly from: number; readonly start: number; readonly length: number }
  | { readonly op: 'truncate'; readonly at: number };

const at = fc.nat({ max: 1_000_000 });
const mutationArb: fc.Arbitrary<Mutation> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ op: fc.constant('insert' as const), at, piece: fc.oneof({ weight: 5, arbitrary: fc.constantFrom(...PIECES) }, { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 6 }) }) }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('delete' as const), at, length: fc.nat({ max: 40 }) }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('duplicate' as const), at, length: fc.nat({ max: 80 }), to: at }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('splice' as const), at, from: fc.nat(), start: at, length: fc.nat({ max: 200 }) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('truncate' as const), at }) },
);

function mutate(text: string, m: Mutation): string {
  const p = (n: number) => (text.length === 0 ? 0 : n % (text.length + 1));
  switch (m.op) {
    case 'insert':
      return text.slice(0, p(m.at)) + m.piece + text.slice(p(m.at));
    case 'delete':
      return text.slice(0, p(m.at)) + text.slice(p(m.at) + m.length);
    case 'duplicate': {
      const piece = text.slice(p(m.at), p(m.at) + m.length);
      return text.slice(0, p(m.to)) + piece + text.slice(p(m.to));
    }
    case 'splice': {
      const other = corpus[m.from % corpus.length]!.text;
      const start = m.start % (other.length + 1);
      return text.slice(0, p(m.at)) + other.slice(start, start + m.length) + text.slice(p(m.at));
    }
    case 'truncate':
      return text.slice(0, p(m.at));
  }
}

test('the corpus is there to mutate', () => {
  assert.ok(corpus.length >= 30, `${corpus.length} prompt files`);
  assert.ok(corpus.some((f) => f.name.endsWith('.prompty')) && corpus.some((f) => f.name.endsWith('.prompt.md')) && corpus.some((f) => f.name.endsWith('.prompt.yml')));
});

test('every corpus file, mutated: parsePromptFile never throws, answers in bounded time, a refusal xor prompts', () => {
  check(
    fc.property(fc.nat(), fc.array(mutationArb, { minLength: 1, maxLength: 8 }), fc.boolean(), (which, mutations, vars) => {
      const file = corpus[which % corpus.length]!;
      assertWellFormed(file.name, mutations.reduce(mutate, file.text), vars);
    }),
    3000,
  );
});

// ---- files built at random -------------------------------------------------------------------------

const KEYS = ['name', 'description', 'model', 'template', 'sample', 'inputs', 'inputSchema', 'outputs', 'messages', 'testData', 'modelParameters', 'responseFormat', 'jsonSchema', 'llmProfiler', 'constructor', '__proto__', 'toString', 'agent', 'tools'];
const keyArb = fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...KEYS) }, { weight: 1, arbitrary: fc.string({ maxLength: 8 }) });
const valueArb: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { weight: 4, arbitrary: fc.oneof(fc.string({ maxLength: 12 }), fc.constantFrom(...PIECES), fc.integer(), fc.double(), fc.boolean(), fc.constant(null)) },
    { weight: 1, arbitrary: fc.array(tie('value'), { maxLength: 4 }) },
    { weight: 1, arbitrary: fc.dictionary(keyArb, tie('value'), { maxKeys: 4 }) },
  ),
})).value;
const messageArb = fc.record({ role: fc.constantFrom('system', 'user', 'assistant', 'developer', 'constructor', 'tool'), content: fc.oneof(fc.constantFrom(...PIECES), fc.string({ maxLength: 20 }), valueArb) });
const bodyArb = fc.array(fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...PIECES) }, { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 10 }) }), { maxLength: 30 }).map((parts) => parts.join(''));

const randomFileArb = fc.oneof(
  // Prompty and VS Code prompt files: front matter of random keys, a body of pieces
  fc.record({
    ext: fc.constantFrom('prompty', 'prompt.md'),
    front: fc.option(fc.dictionary(keyArb, valueArb, { maxKeys: 6 })),
    mustache: fc.boolean(),
    body: bodyArb,
  }).map(({ ext, front, mustache, body }) => ({
    name: `f.${ext}`,
    text: `${front === null ? '' : `---\n${stringify(mustache ? { ...front, template: 'mustache' } : front)}---\n`}${body}`,
  })),
  // GitHub Models prompt files: messages, rows and settings, some of them wrong
  fc.record({
    messages: fc.array(messageArb, { maxLength: 4 }),
    testData: fc.option(fc.array(fc.dictionary(keyArb, valueArb, { maxKeys: 3 }), { maxLength: 4 })),
    rest: fc.dictionary(keyArb, valueArb, { maxKeys: 3 }),
  }).map(({ messages, testData, rest }) => ({
    name: 'f.prompt.yml',
    text: stringify({ ...rest, messages, ...(testData === null ? {} : { testData }) }),
  })),
);

test('prompt files built at random: never a throw, bounded time, a refusal xor prompts', () => {
  check(
    fc.property(randomFileArb, fc.boolean(), (file, vars) => assertWellFormed(file.name, file.text, vars)),
    3000,
  );
});

// ---- the linear-time matchers, against the expressions they stand for -----------------------------

const ROLE_LINE = /^\s*#?\s*(system|user|assistant|developer)(\[((?:\w+\s*=\s*"?[^"]*"?\s*,?\s*)+)\])?\s*:\s*$/i;
const IMAGE = /(!\[[^\]]*\])\(([^\s)]+)(?:\s+[^)]*)?\)/g;
const VSCODE_VAR = /\$\{(?:input:([^}:]+)(?::([^}]*))?|(selection|selectedText|file|fileBasename|fileDirname|fileBasenameNoExtension|workspaceFolder|workspaceFolderBasename))\}/g;

/** Short strings over the characters that matter to a matcher (long enough to combine, short enough for the expression). */
const over = (alphabet: readonly string[], maxLength: number) => fc.array(fc.constantFrom(...alphabet), { maxLength }).map((a) => a.join(''));

test("role lines: the same as Prompty's expression", () => {
  const line = fc.tuple(fc.constantFrom('user', ' # User', 'system', 'ASSISTANT', 'developer ', 'users', '#'), fc.boolean(), over(['a', 'b', '_', '=', '"', ' ', ',', '\t', ']', '[', ':'], 14), fc.constantFrom(':', ' :', ': ', '', ']:'));
  check(
    fc.property(line, ([head, bracketed, inner, tail]) => {
      const text = bracketed ? `${head}[${inner}]${tail}` : `${head}${inner}${tail}`;
      const m = ROLE_LINE.exec(text);
      const r = roleLine(text);
      assert.deepEqual(r ? [r.role, r.attributes] : null, m ? [m[1], m[3] ?? ''] : null, JSON.stringify(text));
    }),
    3000,
  );
});

test("images: the same matches as Prompty's expression", () => {
  check(
    fc.property(over(['![', '](', ')', '(', ']', '[', '!', ' ', '\n', 'a', 'b.png', '"t"', '![a](b)'], 14), (text) => {
      const expected = [...text.matchAll(IMAGE)].map((m) => [m.index, m[0].length, m[1]!.slice(2, -1), m[2]]);
      assert.deepEqual(images(text).map((m) => [m.index, m.length, m.alt, m.url]), expected, JSON.stringify(text));
    }),
    3000,
  );
});

test("VS Code's variables: the same ones as the expression finds", () => {
  check(
    fc.property(over(['${', 'input:', 'a', 'b', ':', '}', ' ', '\n', 'file', 'selection', '$', '{'], 14), (body) => {
      const text = `x${body}`;
      const expected = [...new Set([...text.matchAll(VSCODE_VAR)].map((m) => (m[1] ?? m[3])!.trim()))].sort();
      const got = parsePromptFile('a.prompt.md', text).variables.map((v) => v.name).sort();
      assert.deepEqual(got, expected, JSON.stringify(text));
    }),
    2000,
  );
});

test('the token estimate: the same count as its expression', () => {
  const old = (text: string) => {
    let n = 0;
    for (const m of text.matchAll(/[A-Za-z]+|\d|[^\sA-Za-z\d]/g)) n += /^[A-Za-z]/.test(m[0]) ? (m[0].length <= 7 ? 1 : Math.ceil(m[0].length / 4)) : 1;
    return n;
  };
  check(fc.property(fc.string({ unit: fc.oneof(fc.constantFrom('a', 'Z', '7', ' ', '\u00a0', '\u3000', '\ufeff', '\u2028', '-', 'é'), fc.string({ unit: 'binary', minLength: 1, maxLength: 1 })), maxLength: 40 }), (text) => {
    assert.equal(estimateTokens(text), old(text), JSON.stringify(text));
  }), 2000);
});

test('Jinja2 text without tags: the fast path renders what the library renders', () => {
  check(
    fc.property(over(['a', ' ', '\n', '\r\n', '{', '}', '%', '#', '-', '{ {', '} }', '%}', '#}', '\t'], 16), (text) => {
      fc.pre(!/\{[{%#]/.test(text));
      // the library's own rendering, forced by a tag that renders nothing
      const viaLibrary = renderJinja(`{{ '' }}${text}`, {}).text;
      assert.equal(renderJinja(text, {}).text, viaLibrary, JSON.stringify(text));
    }),
    1000,
  );
});
