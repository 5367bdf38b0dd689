// Untrusted prompt files cannot keep the reader busy (issue 27, item 3): the CodeLens parses a prompt
// file on the extension host's thread as soon as it is opened, untrusted workspaces included. Every
// hostile template here is refused, as the file's refusal with its line and the reason, within a
// second (the render's budget is 250 ms; the bound here is generous for a loaded machine). The
// readers' own patterns (role lines, images, VS Code's variables) run in linear time.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parsePromptFile } from '../../src/engine/prompts/promptFiles';
import type { PromptFileParse } from '../../src/engine/prompts/formats/types';
import { MAX_TEMPLATE_CHARS, renderJinja, renderMustache, TemplateError } from '../../src/engine/prompts/formats/templates';
import { RENDER_LIMITS } from '../../src/engine/prompts/formats/renderBudget';

const SECOND = 1000;

/** Parses and times; returns the parse and the milliseconds it took. */
function timed(fileName: string, text: string, vars?: Record<string, unknown>): { parse: PromptFileParse; ms: number } {
  const t0 = performance.now();
  const parse = parsePromptFile(fileName, text, vars ? { vars } : {});
  return { parse, ms: performance.now() - t0 };
}

const prompty = (body: string, front = '') => `---\nname: hostile\n${front}---\nuser:\n${body}\n`;
const mustache = (body: string, sample: string) => prompty(body, `template: mustache\nsample:\n${sample}`);
const nested = (depth: number, open: string, close: string, inner: string) => open.repeat(depth) + inner + close.repeat(depth);
const list20 = `  l: [${Array.from({ length: 20 }, (_, i) => i).join(', ')}]\n`;
const laughs = ['a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]', ...'bcdefg'.split('').map((k, i) => `${k}: &${k} [${Array(9).fill(`*${'abcdefg'[i]}`).join(', ')}]`)].join('\n');

const HOSTILE: readonly (readonly [string, string, string, RegExp])[] = [
  ['nested range()', 'a.prompty', prompty(nested(3, '{% for i in range(100000) %}', '{% endfor %}', 'x')), /ms to render|steps/],
  ['nested range() with empty bodies', 'a.prompty', prompty(`hi ${nested(2, '{% for i in range(100000) %}', '{% endfor %}', '')}`), /ms to render|steps/],
  ['range(10**9)', 'a.prompty', prompty('{% for i in range(10**9) %}x{% endfor %}'), /range\(\) makes more than 100,000 numbers/],
  ['a macro calling itself twice', 'a.prompty', prompty('{% macro f(g, n) %}{% if n > 0 %}{{ g(g, n - 1) }}{{ g(g, n - 1) }}{% else %}x{% endif %}{% endmacro %}{{ f(f, 60) }}'), /ms to render|steps|characters/],
  ['a macro calling itself for ever', 'a.prompty', prompty('{% macro f(g) %}{{ g(g) }}{% endmacro %}{{ f(f) }}'), /recurses too deeply|ms to render|steps/],
  ["'a' * 10**9 (the engine has no string repetition)", 'a.prompty', prompty("{{ 'a' * 10**9 }}"), /Unknown operator/],
  ['a string doubled 60 times', 'a.prompty', prompty("{% set ns = namespace(s='ab') %}{% for i in range(60) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ ns.s }}"), /characters/],
  ['a list doubled 60 times, printed', 'a.prompty', prompty('{% set ns = namespace(a=[1]) %}{% for i in range(60) %}{% set ns.a = [ns.a, ns.a] %}{% endfor %}{{ ns.a }}'), /characters|steps/],
  ['a list doubled 60 times, as JSON', 'a.prompty', prompty('{% set ns = namespace(a=[1]) %}{% for i in range(60) %}{% set ns.a = [ns.a, ns.a] %}{% endfor %}{{ ns.a | tojson }}'), /characters|steps/],
  ['a list doubled 60 times, joined to text', 'a.prompty', prompty("{% set ns = namespace(a=[1]) %}{% for i in range(60) %}{% set ns.a = [ns.a, ns.a] %}{% endfor %}{{ 'x' ~ ns.a }}"), /characters|steps/],
  ['indent by 10**8', 'a.prompty', prompty("{{ 'a\\nb' | indent(10**8) }}"), /characters/],
  ['join with a long separator', 'a.prompty', prompty("{% set ns = namespace(s='ab') %}{% for i in range(21) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ range(100000) | join(ns.s) }}"), /characters/],
  ['replace every gap with a long text', 'a.prompty', prompty("{% set ns = namespace(s='ab') %}{% for i in range(20) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ ns.s.replace('', ns.s) }}"), /characters/],
  ['split into a million pieces', 'a.prompty', prompty("{% set ns = namespace(s='a,') %}{% for i in range(21) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ ns.s.split(',') | length }}"), /items/],
  ['tojson with a huge indent', 'a.prompty', prompty("{{ [[[[1]]]] | tojson(indent=10**8) }}"), /characters/],
  ['a long value written a million times', 'a.prompty', prompty('{% for i in range(100000) %}{% for j in range(10) %}{{ big }}{% endfor %}{% endfor %}'), /characters|ms to render|steps/],
  ['mustache sections nested over a list', 'a.prompty', mustache(nested(10, '{{#l}}', '{{/l}}', 'x'), list20), /ms to render|steps/],
  ['mustache sections nested over a list, empty', 'a.prompty', mustache(`hi ${nested(10, '{{#l}}', '{{/l}}', '')}`, list20), /ms to render|steps/],
  ['mustache writing a long value many times', 'a.prompty', mustache(nested(4, '{{#l}}', '{{/l}}', '{{big}}'), list20), /characters|ms to render|steps/],
  ['YAML billion laughs (.prompt.yml)', 'a.prompt.yml', `${laughs}\nmessages:\n  - role: user\n    content: hi\n`, /resource exhaustion/],
  ['YAML billion laughs (Prompty front matter)', 'a.prompty', `---\n${laughs}\n---\nuser:\nhi\n`, /resource exhaustion/],
  ['YAML billion laughs (.prompt.md front matter)', 'a.prompt.md', `---\n${laughs}\n---\nhi\n`, /resource exhaustion/],
  ['a prompt.yml whose rows multiply a long message', 'a.prompt.yml', `messages:\n  - role: user\n    content: "${'x'.repeat(200_000)} {{a}}"\ntestData:\n${'  - a: 1\n'.repeat(400)}`, /testData rows fill the messages into more than/],
];

const big = 'x'.repeat(1_000_000);

for (const [name, file, text, reason] of HOSTILE) {
  test(`refused within a second: ${name}`, () => {
    const { parse, ms } = timed(file, text, { big });
    assert.equal(parse.prompts.length, 0, `${name}: no prompt`);
    assert.ok(parse.refusal, `${name}: refused`);
    assert.match(parse.refusal.message, reason);
    assert.equal(typeof parse.refusal.line, 'number', 'the refusal has its line, for the CodeLens');
    assert.ok(ms < SECOND, `${name}: refused in ${ms.toFixed(0)} ms`);
  });
}

test("a YAML file a Prompty pulls in is read with the same alias bound", () => {
  const laughsFile = new TextEncoder().encode(laughs);
  const t0 = performance.now();
  const r = parsePromptFile('a.prompty', prompty('{{ a }}', 'sample: ${file:l.yaml}\n'), { readFile: () => laughsFile });
  assert.ok(performance.now() - t0 < SECOND);
  assert.ok(r.warnings.some((w) => /l\.yaml is not valid YAML: .*resource exhaustion/.test(w.message)), JSON.stringify(r.warnings));
});

test('a budget refusal points at the loop, in the file, with the reason', () => {
  const r = parsePromptFile('a.prompty', prompty(`line one\n${nested(3, '{% for i in range(100000) %}', '{% endfor %}', 'x')}`));
  // the front matter is lines 0-2, `user:` line 3, the loop line 5
  assert.equal(r.refusal!.line, 5);
  assert.match(r.refusal!.message, /^the Jinja2 template cannot be rendered \(line 6\): it takes more than .* refused$/);
  const m = parsePromptFile('a.prompty', mustache(`one\n${nested(10, '{{#l}}', '{{/l}}', 'x')}`, list20));
  // the front matter is 3 lines longer (template, sample and its list)
  assert.equal(m.refusal!.line, 8);
  assert.match(m.refusal!.message, /^the mustache template cannot be rendered \(line 9\): .* refused$/);
});

test('the step and size bounds are exact and deterministic (small limits)', () => {
  const limits = { ...RENDER_LIMITS, steps: 5_000, ms: 60_000 };
  assert.throws(() => renderJinja('{% for i in range(10000) %}{{ i }}{% endfor %}', {}, limits), (e: unknown) => e instanceof TemplateError && /more than 5,000 steps/.test(e.message));
  assert.equal(renderJinja('{% for i in range(100) %}{{ i }}{% endfor %}', {}, limits).text.length, 190);
  const chars = { ...RENDER_LIMITS, chars: 1_000 };
  assert.throws(() => renderJinja('{{ x ~ x }}', { x: 'y'.repeat(600) }, chars), /more than 1,000 characters/);
  assert.equal(renderJinja('{{ x }}', { x: 'y'.repeat(600) }, chars).text.length, 600);
  assert.throws(() => renderMustache('{{#l}}{{x}}{{/l}}', { l: [1, 2, 3, 4], x: 'y'.repeat(600) }, chars), /characters/);
  assert.throws(() => renderMustache('{{#l}}{{#l}}{{#l}}x{{/l}}{{/l}}{{/l}}', { l: Array(100).fill(1) }, limits), /more than 5,000 steps/);
  assert.throws(() => renderJinja("{{ 'a,b,c'.split(',') }}", {}, { ...RENDER_LIMITS, items: 2 }), /more than 2 items/);
});

test('legitimate templates still render: loops of thousands, a long value, each well within the budget', () => {
  const loop = timed('a.prompty', prompty('{% for i in range(20000) %}{{ i }},{% endfor %}'));
  assert.equal(loop.parse.refusal, undefined);
  assert.ok(loop.parse.prompts[0]!.prompt.messages[0]!.content.startsWith('0,1,2,'));
  const long = timed('a.prompty', prompty('{{ big | upper }} and {{ big | length }}'), { big });
  assert.equal(long.parse.refusal, undefined);
  assert.equal(long.parse.prompts[0]!.prompt.messages[0]!.content.length, 1_000_000 + ' and 1000000'.length);
  const sections = timed('a.prompty', mustache('{{#l}}{{#l}}{{.}}{{/l}}{{/l}}', list20));
  assert.equal(sections.parse.refusal, undefined);
  for (const t of [loop, long, sections]) assert.ok(t.ms < SECOND / 2, `rendered in ${t.ms.toFixed(0)} ms`);
});

test('a template longer than the renderers read quickly is refused; text without tags is sent as written', () => {
  const tags = timed('a.prompty', prompty(`{{ x }}${' y'.repeat(MAX_TEMPLATE_CHARS)}`));
  assert.match(tags.parse.refusal!.message, /the template is [\d,]+ characters long; the profiler renders templates of up to 262,144/);
  const plain = timed('a.prompty', prompty('plain text '.repeat(700_000)));
  assert.equal(plain.parse.refusal, undefined);
  assert.ok(plain.parse.prompts[0]!.prompt.messages[0]!.content === 'plain text '.repeat(700_000), 'sent as written');
  for (const t of [tags, plain]) assert.ok(t.ms < SECOND, `${t.ms.toFixed(0)} ms`);
});

test("the Jinja library's {% generation %} pass is skipped: long whitespace is read in linear time, and the tag is refused as Jinja2 refuses it", () => {
  const spaces = timed('a.prompty', prompty(`{{ x }}${' '.repeat(200_000)}y`), { x: 1 });
  assert.equal(spaces.parse.refusal, undefined);
  assert.ok(spaces.ms < SECOND, `${spaces.ms.toFixed(0)} ms`);
  const tag = parsePromptFile('a.prompty', prompty('{% generation %}hi{% endgeneration %}'));
  assert.match(tag.refusal!.message, /generation/);
});

test("the readers' own patterns run in linear time: role lines, images, VS Code's variables", () => {
  // Prompty's role-line expression backtracks exponentially on this line (30 pairs: minutes)
  const role = timed('a.prompty', `---\nname: x\n---\nuser:\n${`user[${'a= '.repeat(30)}x\n`.repeat(1000)}`);
  assert.equal(role.parse.refusal, undefined);
  assert.equal(role.parse.prompts[0]!.prompt.messages.length, 1);
  // every failed `![` start of the image expression read to the end: quadratic
  const img = timed('a.prompty', `---\nname: x\n---\nuser:\nsee ${'![](!['.repeat(100_000)}`);
  assert.equal(img.parse.refusal, undefined);
  // and so did every `${input:` without its `}`
  const md = timed('a.prompt.md', `hi ${'${input:a:'.repeat(200_000)}`);
  assert.equal(md.parse.refusal, undefined);
  for (const [name, t] of [['role', role], ['image', img], ['input', md]] as const) assert.ok(t.ms < SECOND, `${name}: ${t.ms.toFixed(0)} ms`);
  // what they find is unchanged
  const named = parsePromptFile('a.prompty', '---\nname: x\n---\nsystem:\nbe brief\n# User[name = "Ann", x=1]:\nhi ![cat](https://x/c.png "t") ok\n');
  assert.deepEqual(named.prompts[0]!.prompt.messages.map((m) => [m.role, m.name, m.content, m.parts?.length]), [['system', undefined, 'be brief', undefined], ['user', 'Ann', 'hi\nok', 3]]);
  const vars = parsePromptFile('a.prompt.md', 'a ${input:topic:the topic} b ${selection} c ${input:x}', { vars: { topic: 'cats' } });
  assert.equal(vars.prompts[0]!.prompt.messages[0]!.content, 'a cats b ${selection} c ${input:x}');
});

test('many distinct variables and warnings cost linear time, not the square of the file', () => {
  const names = Array.from({ length: 50_000 }, (_, i) => `{{v${i}}}`).join('\n');
  const yml = timed('a.prompt.yml', `messages:\n  - role: user\n    content: |\n${names.split('\n').map((l) => `      ${l}`).join('\n')}\n`);
  assert.equal(yml.parse.refusal, undefined);
  assert.equal(yml.parse.variables.length, 50_000);
  const spaced = timed('a.prompt.yml', `messages:\n  - role: user\n    content: |\n${Array.from({ length: 50_000 }, (_, i) => `      {{ v${i} }}`).join('\n')}\n`);
  assert.equal(spaced.parse.warnings.length, 50_000);
  for (const t of [yml, spaced]) assert.ok(t.ms < 3 * SECOND, `${t.ms.toFixed(0)} ms`);
});
