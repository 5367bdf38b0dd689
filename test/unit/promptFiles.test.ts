import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parsePromptFile, promptFileKind } from '../../src/engine/promptFiles';

test('kinds by file name', () => {
  assert.equal(promptFileKind('/a/b/review.prompt.md'), 'prompt.md');
  assert.equal(promptFileKind('x.PROMPTY'), 'prompty');
  assert.equal(promptFileKind('x.prompt.yml'), 'prompt.yml');
  assert.equal(promptFileKind('x.prompt.yaml'), 'prompt.yml');
  assert.equal(promptFileKind('notes.md'), 'text');
  assert.equal(promptFileKind('prompt.txt'), 'text');
});

test('plain text: the whole file is one user prompt', () => {
  const r = parsePromptFile('ask.txt', 'Explain\nTCP slow start.\n\n');
  assert.deepEqual(r.errors, []);
  assert.equal(r.prompts.length, 1);
  assert.deepEqual(r.prompts[0]!.prompt.messages, [{ role: 'user', content: 'Explain\nTCP slow start.' }]);
  assert.deepEqual(r.prompts[0]!.range, { startLine: 0, endLine: 1 });
  assert.equal(r.prompts[0]!.prompt.source, 'ask.txt');
  const empty = parsePromptFile('e.txt', '  \n');
  assert.equal(empty.prompts.length, 0);
  assert.match(empty.errors[0]!.message, /empty/);
});

const PROMPT_MD = `---
mode: agent
model: GPT-4o
description: Review the diff
tools: ['codebase']
llmProfiler:
  slo: { ttft: 500, tpot: 50 }
---
Review this change for \${input:focus:security issues}.

Be specific.
`;

test('*.prompt.md: front matter, body as the user prompt, the SLO block', () => {
  const r = parsePromptFile('review.prompt.md', PROMPT_MD);
  assert.deepEqual(r.errors, []);
  assert.equal(r.kind, 'prompt.md');
  assert.equal(r.prompts.length, 1);
  const e = r.prompts[0]!;
  assert.equal(e.name, 'Review the diff');
  assert.deepEqual(e.prompt.messages, [{ role: 'user', content: 'Review this change for security issues.\n\nBe specific.' }]);
  assert.deepEqual(e.range, { startLine: 0, endLine: 10 });
  assert.deepEqual(r.slo, { ttftMs: 500, tpotMs: 50 });
  assert.equal(r.model, 'GPT-4o');
  // no front matter at all is fine too
  assert.deepEqual(parsePromptFile('x.prompt.md', 'Just this').prompts[0]!.prompt.messages, [{ role: 'user', content: 'Just this' }]);
});

test('*.prompt.md: malformed front matter and empty bodies are errors with lines, never throws', () => {
  const unclosed = parsePromptFile('a.prompt.md', '---\nmode: agent\nHello');
  assert.equal(unclosed.prompts.length, 0);
  assert.deepEqual(unclosed.errors.map((e) => e.line), [0]);
  assert.match(unclosed.errors[0]!.message, /not closed/);
  const badYaml = parsePromptFile('b.prompt.md', '---\nmode: agent\ntools: [a, b\n---\nHello');
  assert.ok(badYaml.errors.length >= 1);
  assert.match(badYaml.errors[0]!.message, /^front matter: /);
  assert.ok(badYaml.errors[0]!.line! >= 1 && badYaml.errors[0]!.line! <= 3, `line ${badYaml.errors[0]!.line}`);
  const empty = parsePromptFile('c.prompt.md', '---\nmode: ask\n---\n\n');
  assert.equal(empty.prompts.length, 0);
  assert.match(empty.errors[0]!.message, /body is empty/);
  const badSlo = parsePromptFile('d.prompt.md', '---\nllmProfiler:\n  slo:\n    ttft: fast\n---\nHi');
  assert.equal(badSlo.prompts.length, 1);
  assert.equal(badSlo.slo, undefined);
  assert.deepEqual(badSlo.errors.map((e) => e.line), [2]);
  assert.match(badSlo.errors[0]!.message, /llmProfiler\.slo: SLO "ttft" must be a positive number/);
});

const PROMPTY = `---
name: Basic Prompt
description: A basic prompt
model:
  api: chat
  configuration:
    type: azure_openai
    azure_deployment: gpt-35-turbo
  parameters:
    max_tokens: 300
    temperature: 0.2
sample:
  firstName: Jane
  question: What is a latency SLO?
llmProfiler:
  slo:
    ttft: 800
    e2e: 15000
---
system:
You are an AI assistant who helps people find information.
Address the customer as {{firstName}}.

user:
{{ question }}
`;

test('*.prompty: role sections, {{var}} from sample, parameters, SLO', () => {
  const r = parsePromptFile('basic.prompty', PROMPTY);
  assert.deepEqual(r.errors, []);
  assert.equal(r.prompts.length, 1);
  const e = r.prompts[0]!;
  assert.equal(e.name, 'Basic Prompt');
  assert.deepEqual(e.prompt.messages, [
    { role: 'system', content: 'You are an AI assistant who helps people find information.\nAddress the customer as Jane.' },
    { role: 'user', content: 'What is a latency SLO?' },
  ]);
  assert.equal(e.prompt.maxTokens, 300);
  assert.equal(e.prompt.temperature, 0.2);
  assert.deepEqual(e.range, { startLine: 0, endLine: 24 });
  assert.deepEqual(r.slo, { ttftMs: 800, e2eMs: 15000 });
  assert.equal(r.model, 'gpt-35-turbo');
});

test('*.prompty: a missing variable and a missing user section are reported on their lines', () => {
  const r = parsePromptFile('x.prompty', '---\nname: x\n---\nsystem:\nBe nice.\nuser:\nHi {{who}}\n');
  assert.equal(r.prompts.length, 1);
  assert.deepEqual(r.errors, [{ message: '{{who}} has no value: add it under sample: in the front matter', line: 6 }]);
  const noUser = parsePromptFile('y.prompty', '---\nname: y\n---\nJust a system text\n');
  assert.equal(noUser.prompts.length, 0);
  assert.match(noUser.errors[0]!.message, /no user: section/);
  const badParam = parsePromptFile('z.prompty', '---\nmodel:\n  parameters:\n    max_tokens: lots\n---\nuser:\nHi\n');
  assert.deepEqual(badParam.errors.map((e) => e.line), [2]);
  assert.match(badParam.errors[0]!.message, /max_tokens must be a whole number/);
});

const PROMPT_YML = `name: Summarizer
description: Summarizes text
model: openai/gpt-4o-mini
modelParameters:
  max_tokens: 64
  temperature: 0.5
llmProfiler:
  slo: { tpot: 40 }
messages:
  - role: system
    content: You summarize.
  - role: user
    content: 'Summarize: {{input}}'
testData:
  - input: The quick brown fox.
    expected: Fox.
  - input: >-
      A long
      folded text.
evaluators:
  - name: has words
    string: { contains: ' ' }
`;

test('*.prompt.yml: one prompt per testData row, its range, vars filled, parameters', () => {
  const r = parsePromptFile('sum.prompt.yml', PROMPT_YML);
  assert.deepEqual(r.errors, []);
  assert.equal(r.prompts.length, 2);
  assert.deepEqual(r.prompts.map((p) => p.range), [{ startLine: 14, endLine: 15 }, { startLine: 16, endLine: 18 }]);
  assert.deepEqual(r.prompts[0]!.prompt.messages, [{ role: 'system', content: 'You summarize.' }, { role: 'user', content: 'Summarize: The quick brown fox.' }]);
  assert.equal(r.prompts[1]!.prompt.messages[1]!.content, 'Summarize: A long folded text.');
  assert.equal(r.prompts[0]!.name, 'Summarizer · row 1');
  assert.equal(r.prompts[0]!.prompt.maxTokens, 64);
  assert.equal(r.prompts[0]!.prompt.temperature, 0.5);
  assert.deepEqual(r.slo, { tpotMs: 40 });
  assert.equal(r.model, 'openai/gpt-4o-mini');
});

test('*.prompt.yml without testData: one prompt over the messages block; maxTokens spelling', () => {
  const text = 'name: x\nmodelParameters:\n  maxTokens: 12\nmessages:\n  - role: user\n    content: Hello\n\nevaluators: []\n';
  const r = parsePromptFile('x.prompt.yaml', text);
  assert.deepEqual(r.errors, []);
  assert.equal(r.prompts.length, 1);
  assert.deepEqual(r.prompts[0]!.range, { startLine: 3, endLine: 5 });
  assert.equal(r.prompts[0]!.prompt.maxTokens, 12);
});

test('*.prompt.yml: malformed files give errors with lines', () => {
  const syntax = parsePromptFile('a.prompt.yml', 'name: x\nmessages:\n  - role: user\n    content: "unclosed\n');
  assert.equal(syntax.prompts.length, 0);
  assert.ok(syntax.errors.length >= 1 && syntax.errors[0]!.line !== undefined);
  assert.match(syntax.errors[0]!.message, /^YAML: /);
  const noMessages = parsePromptFile('b.prompt.yml', 'name: x\nmodel: y\n');
  assert.deepEqual(noMessages.errors, [{ message: 'messages must be a list of { role, content }', line: 0 }]);
  const badRole = parsePromptFile('c.prompt.yml', 'messages:\n  - role: user\n    content: hi\n  - role: robot\n    content: x\n');
  assert.deepEqual(badRole.errors.map((e) => e.line), [3]);
  assert.match(badRole.errors[0]!.message, /messages\[1\]\.role must be/);
  const missingVar = parsePromptFile('d.prompt.yml', 'messages:\n  - role: user\n    content: "{{a}} {{b}}"\ntestData:\n  - a: 1\n');
  assert.equal(missingVar.prompts.length, 1);
  assert.deepEqual(missingVar.errors, [{ message: 'testData[0]: {{b}} has no value', line: 4 }]);
  assert.equal(missingVar.prompts[0]!.prompt.messages[0]!.content, '1 {{b}}');
  const scalar = parsePromptFile('e.prompt.yml', 'just a string');
  assert.match(scalar.errors[0]!.message, /must be a mapping/);
  const badTd = parsePromptFile('f.prompt.yml', 'messages:\n  - role: user\n    content: x\ntestData: 3\n');
  assert.deepEqual(badTd.errors, [{ message: 'testData must be a list of variable mappings', line: 3 }]);
});

test('never throws, whatever the text', () => {
  const junk = ['', '---', '---\n---', ':\n:\n', '- a\n- b', '\u0000\u0001', '---\n[\n---\nx', 'messages: [', '{{', 'system:\nuser:\n'];
  for (const name of ['a.txt', 'a.prompt.md', 'a.prompty', 'a.prompt.yml']) {
    for (const t of junk) {
      const r = parsePromptFile(name, t);
      assert.ok(Array.isArray(r.prompts) && Array.isArray(r.errors), `${name}: ${JSON.stringify(t)}`);
      assert.ok(r.prompts.length > 0 || r.errors.length > 0, `${name}: ${JSON.stringify(t)} gives a prompt or an error`);
    }
  }
});
