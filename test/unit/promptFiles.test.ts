// The prompt-file reader, format by format, against what each format's own tool does (issue 11):
// Prompty's Python runtime (Jinja2, chevron mustache, its role-line parser), gh-models' {{var}}
// substitution, VS Code's prompt-file variables; and the failures users saw, each once.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parsePromptFile, promptFileKind } from '../../src/engine/prompts/promptFiles';
import type { PromptFileContext } from '../../src/engine/prompts/formats/types';

const files = (map: Record<string, string | Uint8Array>): PromptFileContext['readFile'] => (rel) => {
  const v = map[rel];
  return v === undefined ? undefined : typeof v === 'string' ? new TextEncoder().encode(v) : v;
};
const texts = (p: ReturnType<typeof parsePromptFile>, i = 0) => p.prompts[i]!.prompt.messages.map((m) => `${m.role}${m.name ? `(${m.name})` : ''}: ${m.content}`);

test('kinds by file name', () => {
  assert.equal(promptFileKind('/a/b/review.prompt.md'), 'prompt.md');
  assert.equal(promptFileKind('x.PROMPTY'), 'prompty');
  assert.equal(promptFileKind('x.prompt.yml'), 'prompt.yml');
  assert.equal(promptFileKind('x.prompt.yaml'), 'prompt.yml');
  assert.equal(promptFileKind('notes.md'), 'text');
});

test('plain text: the whole file is one user prompt; an empty one is refused', () => {
  const r = parsePromptFile('ask.txt', 'Explain\nTCP slow start.\n\n');
  assert.equal(r.refusal, undefined);
  assert.deepEqual(r.prompts[0]!.prompt.messages, [{ role: 'user', content: 'Explain\nTCP slow start.' }]);
  assert.deepEqual(r.prompts[0]!.range, { startLine: 0, endLine: 1 });
  const empty = parsePromptFile('e.txt', '  \n');
  assert.equal(empty.prompts.length, 0);
  assert.match(empty.refusal!.message, /empty/);
});

// ---- Prompty ----

const CHAT = `---
name: Contoso Chat
model:
  api: chat
  configuration:
    azure_deployment: gpt-4o
  parameters:
    max_tokens: 256
    temperature: 0.2
    top_p: 0.9
    response_format: { type: json_object }
inputs:
  customer:
    type: object
  question:
    type: string
    default: Which tent is best?
  chat_history:
    type: array
sample:
  customer: { firstName: Sally, orders: [{ name: TrailMaster }, { name: Rainguard }] }
  chat_history:
    - { role: user, content: hi }
    - { role: assistant, content: hello }
---
system:
You help {{customer.firstName | upper}}.
{% if customer.orders %}
Orders: {% for o in customer.orders %}{{ o.name }}{% if not loop.last %}, {% endif %}{% endfor %}
{% endif %}

{% for item in chat_history %}
{{item.role}}:
{{item.content}}
{% endfor %}

user:
{{question}}
`;

test('Prompty: Jinja2 is rendered first (loops, if, filters, dotted names), then split on the role lines the loop emits', () => {
  const r = parsePromptFile('chat.prompty', CHAT);
  assert.equal(r.refusal, undefined, JSON.stringify(r.refusal));
  assert.deepEqual(texts(r), ['system: You help SALLY.\n\nOrders: TrailMaster, Rainguard', 'user: hi', 'assistant: hello', 'user: Which tent is best?']);
  const p = r.prompts[0]!.prompt;
  assert.equal(p.maxTokens, 256);
  assert.equal(p.temperature, 0.2);
  assert.equal(p.topP, 0.9);
  assert.deepEqual(p.responseFormat, { type: 'json_object' });
  assert.equal(r.model, 'gpt-4o');
  assert.deepEqual(r.warnings, []);
  // the caller's values beat the file's
  const mine = parsePromptFile('chat.prompty', CHAT, { vars: { question: 'And boots?', chat_history: [] } });
  assert.deepEqual(texts(mine), ['system: You help SALLY.\n\nOrders: TrailMaster, Rainguard', 'user: And boots?']);
});

test('Prompty: mustache when the file says so (sections, comments, chevron\'s escaping)', () => {
  const text = `---
template: mustache
inputs:
  history: { type: array, sample: [{ role: user, content: "a < b" }] }
  name: { sample: "Tom & Jerry" }
---
system:
{{! not sent }}Hello {{name}} / {{{name}}}
{{#history}}
{{role}}:
{{content}}
{{/history}}
`;
  const r = parsePromptFile('m.prompty', text);
  assert.equal(r.refusal, undefined);
  assert.deepEqual(texts(r), ['system: Hello Tom &amp; Jerry / Tom & Jerry', 'user: a &lt; b']);
  const dict = parsePromptFile('m.prompty', text.replace('template: mustache', 'template: { format: { kind: mustache } }'));
  assert.deepEqual(texts(dict), texts(r));
  const other = parsePromptFile('m.prompty', text.replace('template: mustache', 'template: handlebars'));
  assert.match(other.refusal!.message, /template "handlebars" is not one the profiler renders/);
  assert.equal(other.refusal!.line, 1);
});

test('Prompty inputs: mapping with sample/default, scalar shorthand, the list form, inputSchema, ${file:} and ${env:}', () => {
  const body = '---\n{FM}\n---\nuser:\n{{a}} {{b}} {{c}}\n';
  const cases: [string, PromptFileContext, string][] = [
    ['inputs:\n  a: { type: string, sample: A1, default: A0 }\n  b: { default: B }\n  c: C', {}, 'A1 B C'],
    ['inputs:\n  - name: a\n    default: A\n  - name: b\n    sample: B\n  - { name: c, example: C }', {}, 'A B C'],
    ['inputSchema:\n  properties:\n    - { name: a, kind: string, default: A }\n    - { name: b, default: B }\n    - { name: c, default: C }', {}, 'A B C'],
    ['sample: ${file:sample.json}', { readFile: files({ 'sample.json': '{"a":"A","b":"B","c":"C"}' }) }, 'A B C'],
    ['sample: ${file:sample.yaml}', { readFile: files({ 'sample.yaml': 'a: A\nb: B\nc: C\n' }) }, 'A B C'],
    ['inputs:\n  a: ${env:PA}\n  b: ${env:PB:fallback}\n  c: { default: "${env:PC}" }', { env: { PA: 'from env', PC: 'C' } }, 'from env fallback C'],
  ];
  for (const [fm, ctx, want] of cases) {
    const r = parsePromptFile('i.prompty', body.replace('{FM}', fm), ctx);
    assert.equal(r.refusal, undefined, fm);
    assert.deepEqual(texts(r), [`user: ${want}`], fm);
    assert.ok(r.variables.every((v) => v.filled), fm);
  }
  const unset = parsePromptFile('i.prompty', body.replace('{FM}', 'inputs:\n  a: ${env:NOPE}\nsample: ${file:gone.json}'), { env: {}, readFile: files({}) });
  assert.deepEqual(unset.warnings.map((w) => [w.line, w.message]), [
    [2, 'inputs.a: the environment variable NOPE is not set (${env:NOPE})'],
    [3, 'sample: cannot read gone.json next to the prompt file (${file:gone.json})'],
  ]);
  // every unfilled variable is listed once, at its first use, and Prompty renders it empty
  assert.deepEqual(unset.variables.map((v) => [v.name, v.line, v.filled, v.sentAs]), [['a', 6, false, 'empty'], ['b', 6, false, 'empty'], ['c', 6, false, 'empty']]);
  assert.equal(unset.prompts.length, 0);
  assert.equal(unset.refusal!.message, 'the prompt renders to no text: {{a}}, {{b}}, {{c}} have no value');
});

test('Prompty role lines: a system preamble without user:, # headings, developer:, attributes, any case', () => {
  const noUser = parsePromptFile('s.prompty', '---\nname: s\n---\nYou are terse.\nAnswer in one line.\n');
  assert.equal(noUser.refusal, undefined);
  assert.deepEqual(texts(noUser), ['system: You are terse.\nAnswer in one line.']);
  const forms = parsePromptFile('f.prompty', '---\nname: f\n---\nPreamble.\n# User:\nFirst.\nDEVELOPER:\nRules.\nuser[name="Alice"]:\nHi from Alice.\n  assistant :  \nHello.\nuser: not a role line\n');
  assert.deepEqual(texts(forms), ['system: Preamble.', 'user: First.', 'system: Rules.', 'user(Alice): Hi from Alice.', 'assistant: Hello.\nuser: not a role line']);
});

test('Prompty images: ![](…) become image parts, local files read next to the prompt file', () => {
  const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47]);
  const text = '---\nname: img\n---\nuser:\nWhat is this?\n![a cat](cat.png)\nAnd ![](https://example.com/b.jpg "title") too.\n![gone](missing.jpg)\n';
  const r = parsePromptFile('img.prompty', text, { readFile: files({ 'cat.png': png }) });
  const m = r.prompts[0]!.prompt.messages[0]!;
  assert.deepEqual(m.parts, [
    { type: 'text', text: 'What is this?' },
    { type: 'image', url: 'data:image/png;base64,iVBORw==', alt: 'a cat' },
    { type: 'text', text: 'And' },
    { type: 'image', url: 'https://example.com/b.jpg' },
    { type: 'text', text: 'too.\n![gone](missing.jpg)' },
  ]);
  assert.equal(m.content, 'What is this?\nAnd\ntoo.\n![gone](missing.jpg)');
  assert.deepEqual(r.warnings.map((w) => [w.line, w.message]), [[7, 'the image missing.jpg cannot be read next to the prompt file: sent as text']]);
});

test('Prompty model.options (the current spec) and settings that are not sent are named', () => {
  const r = parsePromptFile('o.prompty', '---\nmodel:\n  id: gpt-4o\n  options:\n    maxOutputTokens: 300\n    topP: 0.5\n    stopSequences: ["END"]\n    seed: 7\n    additionalProperties:\n      response_format: { type: json_schema, json_schema: { name: w, schema: { type: object } } }\n---\nuser:\nHi\n');
  const p = r.prompts[0]!.prompt;
  assert.equal(p.maxTokens, 300);
  assert.equal(p.topP, 0.5);
  assert.deepEqual(p.stop, ['END']);
  assert.deepEqual(p.responseFormat, { type: 'json_schema', json_schema: { name: 'w', schema: { type: 'object' } } });
  assert.deepEqual(r.warnings.map((w) => [w.line, w.message]), [[7, 'model.options.seed is not sent: the profiler sends its own seed per request (--seed)']]);
  const bad = parsePromptFile('z.prompty', '---\nmodel:\n  parameters:\n    max_tokens: lots\n---\nuser:\nHi\n');
  assert.deepEqual(bad.warnings.map((w) => [w.line, w.message]), [[3, 'model.parameters.max_tokens must be a number, got "lots": not sent']]);
});

test('Prompty refusals come first: broken front matter (line and column), a template that cannot render, nothing to send', () => {
  const broken = parsePromptFile('b.prompty', '---\nname: b\nmodel:\n  parameters:\n    max_tokens: [1\n---\nuser:\nHi {{x}}\n');
  assert.equal(broken.prompts.length, 0);
  assert.equal(broken.refusal!.line, 4);
  assert.match(broken.refusal!.message, /^the front matter is not valid YAML \(line \d+, column \d+\)/);
  const tpl = parsePromptFile('t.prompty', '---\nname: t\n---\nuser:\n{% for x in %}\n');
  assert.equal(tpl.prompts.length, 0);
  assert.match(tpl.refusal!.message, /^the Jinja2 template cannot be rendered/);
  const empty = parsePromptFile('e.prompty', '---\nname: e\n---\n\n');
  assert.match(empty.refusal!.message, /body is empty/);
});

// ---- GitHub Models ----

const PROMPT_YML = `name: Summarizer
model: openai/gpt-4o-mini
modelParameters:
  maxTokens: 64
  temperature: 0.5
  topP: 0.8
responseFormat: json_schema
jsonSchema:
  name: summary
  schema: { type: object, properties: { text: { type: string } } }
llmProfiler:
  slo: { tpot: 40 }
messages:
  - role: system
    content: You summarize.
  - role: user
    content: 'Summarize: {{input}} for {{ reader }} in {{tone}}'
testData:
  - input: The quick brown fox.
    tone: haiku
  - input: >-
      A long
      folded text.
`;

test('.prompt.yml: filled as gh-models fills it, one prompt per testData row, its settings', () => {
  const r = parsePromptFile('sum.prompt.yml', PROMPT_YML);
  assert.equal(r.refusal, undefined);
  assert.equal(r.prompts.length, 2);
  assert.deepEqual(r.prompts.map((p) => p.range), [{ startLine: 18, endLine: 19 }, { startLine: 20, endLine: 22 }]);
  // `{{ reader }}` (spaces) is not a gh-models variable: sent as written, with a warning
  assert.deepEqual(texts(r, 0), ['system: You summarize.', 'user: Summarize: The quick brown fox. for {{ reader }} in haiku']);
  assert.deepEqual(texts(r, 1), ['system: You summarize.', 'user: Summarize: A long folded text. for {{ reader }} in {{tone}}']);
  assert.deepEqual(r.warnings.map((w) => [w.line, w.message]), [[16, '{{ reader }} has spaces inside the braces: gh-models fills only {{reader}}, so it is sent as written']]);
  const p = r.prompts[0]!.prompt;
  assert.deepEqual([p.maxTokens, p.temperature, p.topP], [64, 0.5, 0.8]);
  assert.deepEqual(p.responseFormat, { type: 'json_schema', json_schema: { name: 'summary', schema: { type: 'object', properties: { text: { type: 'string' } } } } });
  // the caller's values beat the rows'
  const mine = parsePromptFile('sum.prompt.yml', PROMPT_YML, { vars: { tone: 'prose' } });
  assert.match(texts(mine, 1)[1]!, /in prose$/);
});

test('.prompt.yml: snake_case parameters are named, not sent; broken files are refused with line and column', () => {
  const snake = parsePromptFile('s.prompt.yml', 'modelParameters:\n  max_tokens: 9\nmessages:\n  - role: user\n    content: hi\n');
  assert.equal(snake.prompts[0]!.prompt.maxTokens, undefined);
  assert.deepEqual(snake.warnings.map((w) => [w.line, w.message]), [[1, 'modelParameters.max_tokens is not sent: gh-models reads maxTokens']]);
  const syntax = parsePromptFile('a.prompt.yml', 'name: x\nmessages:\n  - role: user\n    content: "unclosed\n');
  assert.equal(syntax.prompts.length, 0);
  assert.match(syntax.refusal!.message, /^the file is not valid YAML \(line \d+, column \d+\)/);
  const noMessages = parsePromptFile('b.prompt.yml', 'name: x\nmodel: y\n');
  assert.match(noMessages.refusal!.message, /no messages/);
  const badRole = parsePromptFile('c.prompt.yml', 'messages:\n  - role: user\n    content: hi\n  - role: robot\n    content: x\n');
  assert.equal(badRole.refusal!.line, 3);
  assert.match(badRole.refusal!.message, /messages\[1\]\.role must be/);
});

// ---- VS Code prompt files ----

const PROMPT_MD = `---
agent: agent
model: GPT-4o
description: Review the diff
tools: ['codebase']
llmProfiler:
  slo: { ttft: 500, tpot: 50 }
---
Review \${file} for \${input:focus:security issues}.

Selected code:
\${selection}
In \${workspaceFolderBasename}, by \${input:author}.
`;

test('.prompt.md: the body is the user\'s request; ${input:…} and the editor\'s variables are filled or listed', () => {
  const bare = parsePromptFile('review.prompt.md', PROMPT_MD);
  assert.equal(bare.refusal, undefined);
  assert.deepEqual(bare.slo, { ttftMs: 500, tpotMs: 50 });
  assert.equal(bare.model, 'GPT-4o');
  assert.equal(bare.prompts[0]!.name, 'review');
  // nothing filled: every variable listed once, at its line, and sent as written
  assert.deepEqual(bare.variables.map((v) => [v.name, v.kind, v.line, v.filled, v.placeholder ?? '', v.written]), [
    ['file', 'editor', 8, false, '', '${file}'],
    ['focus', 'input', 8, false, 'security issues', '${input:focus}'],
    ['selection', 'editor', 11, false, '', '${selection}'],
    ['workspaceFolderBasename', 'editor', 12, false, '', '${workspaceFolderBasename}'],
    ['author', 'input', 12, false, '', '${input:author}'],
  ]);
  assert.match(texts(bare)[0]!, /^user: Review \$\{file\} for \$\{input:focus:security issues\}\./);
  const filled = parsePromptFile('review.prompt.md', PROMPT_MD, { vars: { file: '/w/a.ts', focus: 'races', selection: 'let x = 1;', workspaceFolderBasename: 'w', author: 'Ann' } });
  assert.deepEqual(texts(filled), ['user: Review /w/a.ts for races.\n\nSelected code:\nlet x = 1;\nIn w, by Ann.']);
  assert.ok(filled.variables.every((v) => v.filled));
});

test('.prompt.md: broken front matter and empty bodies are refused', () => {
  const unclosed = parsePromptFile('a.prompt.md', '---\nagent: agent\nHello');
  assert.match(unclosed.refusal!.message, /not closed/);
  const badYaml = parsePromptFile('b.prompt.md', '---\nagent: agent\ntools: [a, b\n---\nHello');
  assert.equal(badYaml.prompts.length, 0);
  assert.match(badYaml.refusal!.message, /^the front matter is not valid YAML/);
  const empty = parsePromptFile('c.prompt.md', '---\nagent: ask\n---\n\n');
  assert.match(empty.refusal!.message, /body is empty/);
});

// ---- every format ----

test('binary files are refused in every format, not sent as replacement characters', () => {
  const bytes = new Uint8Array(4096).map((_, i) => (i * 37) % 256);
  const text = new TextDecoder().decode(bytes);
  for (const name of ['x.prompt.md', 'x.prompty', 'x.prompt.yml', 'x.txt']) {
    const r = parsePromptFile(name, text);
    assert.equal(r.prompts.length, 0, name);
    assert.match(r.refusal!.message, /binary file|not UTF-8/, name);
  }
});

test('a refusal is the reason the file yields no prompt, not the first warning in file order', () => {
  const r = parsePromptFile('w.prompty', '---\nmodel:\n  parameters:\n    seed: 1\ntemplate: liquid\n---\nuser:\nHi\n');
  assert.match(r.refusal!.message, /template "liquid"/);
  assert.equal(r.refusal!.line, 4);
});

test('never throws, whatever the text', () => {
  const junk = ['', '---', '---\n---', ':\n:\n', '- a\n- b', '---\n[\n---\nx', 'messages: [', '{{', 'system:\nuser:\n', '{% if %}', '{{#a}}', '${input:}'];
  for (const name of ['a.txt', 'a.prompt.md', 'a.prompty', 'a.prompt.yml']) {
    for (const t of junk) {
      const r = parsePromptFile(name, t);
      assert.ok(r.prompts.length > 0 || r.refusal !== undefined, `${name}: ${JSON.stringify(t)} gives a prompt or a refusal`);
      assert.equal(r.prompts.length > 0, r.refusal === undefined);
    }
  }
});
