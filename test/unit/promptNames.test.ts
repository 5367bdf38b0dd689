// Names from a prompt file or its caller are never Object's (issue 27, item 10): `{{constructor}}` is
// an unfilled variable, not `function Object()…`; `sample: {__proto__: …}` and a JSON `"__proto__"`
// are keys like any other, changing no object's prototype. Across every format and template language,
// the --vars/--var values and the extension's remembered answers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parsePromptFile } from '../../src/engine/prompts/promptFiles';
import type { PromptFileParse } from '../../src/engine/prompts/formats/types';
import { loadVars } from '../../src/jobs/jobPrompts';
import { applicableAnswers, answersToRemember, editorValues, initialAnswer, variablesToAsk } from '../../src/extension/promptModel';

const NAMES = ['constructor', 'toString', '__proto__', 'hasOwnProperty', 'valueOf', '__defineGetter__'] as const;
const text = (p: PromptFileParse) => p.prompts.flatMap((e) => e.prompt.messages.map((m) => m.content)).join('\n');
/** What an inherited member would have printed as. */
const INHERITED = /function|native code|\[object|polluted|^1$/;

function assertNoPrototypeChanged(): void {
  assert.equal(({} as Record<string, unknown>).polluted, undefined, 'Object.prototype unchanged');
  assert.equal(Object.getPrototypeOf({}), Object.prototype);
}

test('{{name}} in a .prompt.yml: an inherited name is an unfilled variable, sent as written', () => {
  for (const name of NAMES) {
    const r = parsePromptFile('a.prompt.yml', `messages:\n  - role: user\n    content: "say {{${name}}}"\n`, { vars: { x: 'y' } });
    assert.equal(text(r), `say {{${name}}}`, name);
    assert.deepEqual(r.variables.map((v) => [v.name, v.filled]), [[name, false]]);
    const rows = parsePromptFile('a.prompt.yml', `messages:\n  - role: user\n    content: "say {{${name}}}"\ntestData:\n  - other: 1\n`);
    assert.equal(text(rows), `say {{${name}}}`, `${name} with a testData row`);
  }
  // a role named after one is not a role
  const role = parsePromptFile('a.prompt.yml', 'messages:\n  - role: constructor\n    content: hi\n');
  assert.match(role.refusal!.message, /role must be system, user or assistant/);
});

test('${input:name} in a .prompt.md: an inherited name is unfilled, sent as written', () => {
  for (const name of NAMES) {
    const r = parsePromptFile('a.prompt.md', `say \${input:${name}}`, { vars: { x: 'y' } });
    assert.equal(text(r), `say \${input:${name}}`, name);
    assert.equal(r.variables[0]!.filled, false);
  }
});

test('Prompty, Jinja2 and mustache: an inherited name renders empty and is listed as unfilled', () => {
  for (const name of NAMES) {
    for (const front of ['', 'template: mustache\n']) {
      const what = `${name} (${front ? 'mustache' : 'jinja2'})`;
      const r = parsePromptFile('a.prompty', `---\nname: x\n${front}---\nuser:\n[{{${name}}}] and {{x}}\n`, { vars: { x: 'y' } });
      assert.equal(r.refusal, undefined, what);
      assert.doesNotMatch(text(r), INHERITED, what);
      assert.equal(text(r), '[] and y', what);
      assert.deepEqual(r.variables.filter((v) => v.name === name).map((v) => v.filled), [false], what);
    }
  }
  // dotted names (mustache) and members (Jinja2) of a value are its own too
  const m = parsePromptFile('a.prompty', '---\nname: x\ntemplate: mustache\nsample:\n  o: {a: 1}\n  l: [1]\n---\nuser:\n[{{o.constructor}}{{o.a.toString}}{{l.constructor}}{{#l}}{{constructor}}{{/l}}{{o.a}}]\n');
  assert.equal(text(m), '[1]');
  const j = parsePromptFile('a.prompty', '---\nname: x\nsample:\n  o: {a: 1}\n---\nuser:\n[{{ o.constructor }}{{ o.__proto__ }}{{ o.a }}]\n');
  assert.equal(text(j), '[1]');
});

test('sample: {__proto__: {polluted: 1}} (YAML, a JSON file, --vars) is a key, and changes no prototype', () => {
  const yaml = parsePromptFile('a.prompty', '---\nname: x\nsample:\n  __proto__: {polluted: 1}\n  a: 2\n---\nuser:\n[{{ polluted }}][{{ a }}]\n');
  assert.equal(text(yaml), '[][2]');
  assert.deepEqual(yaml.variables.filter((v) => v.name === 'polluted').map((v) => v.filled), [false]);
  const inputs = parsePromptFile('a.prompty', '---\nname: x\ninputs:\n  __proto__: {polluted: 1}\n---\nuser:\n[{{ polluted }}]\n');
  assert.equal(text(inputs), '[]');
  // an input of that name is not given the value the sample's __proto__ would have lent it
  for (const front of ['', 'template: mustache\n']) {
    const declared = parsePromptFile('a.prompty', `---\nname: x\n${front}inputs:\n  polluted: {type: string}\nsample:\n  __proto__: {polluted: 1}\n---\nuser:\n[{{polluted}}]\n`);
    assert.equal(text(declared), '[]');
    assert.deepEqual(declared.variables.map((v) => [v.name, v.filled]), [['polluted', false]]);
  }
  const json = new TextEncoder().encode('{"__proto__": {"polluted": 1}, "a": 3}');
  const file = parsePromptFile('a.prompty', '---\nname: x\nsample: ${file:s.json}\n---\nuser:\n[{{ polluted }}][{{ a }}]\n', { readFile: () => json });
  assert.equal(text(file), '[][3]');
  const mustache = parsePromptFile('a.prompty', '---\nname: x\ntemplate: mustache\nsample:\n  __proto__: {polluted: 1}\n---\nuser:\n[{{polluted}}]\n');
  assert.equal(text(mustache), '[]');
  const callerVars = JSON.parse('{"__proto__": {"polluted": 1}, "a": 4}') as Record<string, unknown>;
  const caller = parsePromptFile('a.prompty', '---\nname: x\n---\nuser:\n[{{ polluted }}][{{ a }}]\n', { vars: callerVars });
  assert.equal(text(caller), '[][4]');
  const gh = parsePromptFile('a.prompt.yml', 'messages:\n  - role: user\n    content: "[{{polluted}}]"\ntestData:\n  - __proto__: {polluted: 1}\n');
  assert.equal(text(gh), '[{{polluted}}]');
  assertNoPrototypeChanged();
});

test('sampling settings named after inherited members are unknown settings, not a crash', () => {
  const r = parsePromptFile('a.prompty', '---\nname: x\nmodel:\n  parameters: {constructor: 1, toString: 2, max_tokens: 5}\noutputs:\n  - {name: o, kind: constructor}\n---\nuser:\nhi\n');
  assert.equal(r.refusal, undefined);
  assert.equal(r.prompts[0]!.prompt.maxTokens, 5);
  assert.deepEqual(r.warnings.map((w) => w.message).filter((m) => /constructor|toString/.test(m)).sort(), [
    'model.parameters.constructor is not sent: the profiler does not know this setting',
    'model.parameters.toString is not sent: the profiler does not know this setting',
  ]);
  const gh = parsePromptFile('a.prompt.yml', 'messages:\n  - role: user\n    content: hi\nmodelParameters: {constructor: 1}\n');
  assert.deepEqual(gh.warnings.map((w) => w.message), ['modelParameters.constructor is not sent: the profiler does not know this setting']);
});

test('--vars and --var: __proto__ and constructor are names like any other', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'llmp-vars-'));
  try {
    const file = join(dir, 'vars.json');
    writeFileSync(file, '{"__proto__": {"polluted": 1}, "a": "1"}');
    const vars = (await loadVars(['constructor=c', 'toString=t'], file))!;
    assert.equal(Object.getPrototypeOf(vars), null);
    assert.deepEqual(Object.keys(vars).sort(), ['__proto__', 'a', 'constructor', 'toString']);
    assert.equal(vars.polluted, undefined);
    const r = parsePromptFile('a.prompt.yml', 'messages:\n  - role: user\n    content: "{{constructor}} {{toString}} {{polluted}} {{a}}"\n', { vars });
    assert.equal(text(r), 'c t {{polluted}} 1');
    assertNoPrototypeChanged();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("the extension's answers: a variable named constructor has no remembered answer until one is given", () => {
  const unfilled = parsePromptFile('a.prompt.yml', 'messages:\n  - role: user\n    content: "{{constructor}} {{__proto__}}"\n').variables;
  assert.deepEqual(applicableAnswers(unfilled, {}), {});
  assert.deepEqual(variablesToAsk(unfilled, {}, 'missing').map((v) => v.name), ['constructor', '__proto__']);
  assert.equal(initialAnswer(unfilled[0]!, {}), '');
  const remembered = answersToRemember({}, JSON.parse('{"__proto__": "p", "constructor": "c"}') as Record<string, string>);
  assert.deepEqual(Object.entries(remembered), [['__proto__', 'p'], ['constructor', 'c']]);
  assert.deepEqual(Object.entries(applicableAnswers(unfilled, remembered)), [['constructor', 'c'], ['__proto__', 'p']]);
  assert.deepEqual(editorValues({ file: '/a/b.ts' }, ['constructor', 'file']), { file: '/a/b.ts' });
  assertNoPrototypeChanged();
});
