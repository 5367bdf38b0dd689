// The extension's rules over a parsed prompt file (src/extension/promptModel.ts): the lenses, what
// to ask for, what to remember and record, the editor's variables, which settings beat the file.
// Parses are fabricated PromptFileParse values (the reader's API), plus a few from the real reader.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { PromptFileParse, PromptFileVariable } from '../../src/engine/prompts/formats/types';
import { parsePromptFile } from '../../src/engine/prompts/promptFiles';
import {
  answersToRemember, applicableAnswers, askPrompt, askTitle, editorValues, explicitSamplingKeys, fillTitle, initialAnswer,
  lensPlan, looksSecret, setByUser, unfilledEditorNote, varAssignments, variablesToAsk,
} from '../../src/extension/promptModel';

const prompt = (startLine: number, endLine: number) => ({ prompt: { messages: [{ role: 'user' as const, content: 'x' }] }, range: { startLine, endLine } });
const input = (name: string, line: number, extra: Partial<PromptFileVariable> = {}): PromptFileVariable => ({ name, kind: 'input', line, filled: false, written: `\${input:${name}}`, ...extra });
const editorVar = (name: string, line: number): PromptFileVariable => ({ name, kind: 'editor', line, filled: false, written: `\${${name}}`, sentAs: 'as written' });
const parse = (p: Partial<PromptFileParse>): PromptFileParse => ({ kind: 'prompty', prompts: [], warnings: [], variables: [], ...p });

test('a refused parse: the refusal is the first lens, then capped warnings, and no run lens', () => {
  const warnings = Array.from({ length: 8 }, (_, i) => ({ message: `w${i}`, line: i + 2 }));
  const plan = lensPlan(parse({ refusal: { message: 'the front matter is not valid YAML (line 2, column 7): bad', line: 1, column: 6 }, warnings }));
  assert.deepEqual(plan[0], { kind: 'refusal', line: 1, message: 'the front matter is not valid YAML (line 2, column 7): bad' });
  assert.deepEqual(plan.slice(1, 6).map((l) => l.kind === 'warning' && l.message), ['w0', 'w1', 'w2', 'w3', 'w4']);
  const more = plan[6]!;
  assert.equal(more.kind, 'moreWarnings');
  assert.ok(more.kind === 'moreWarnings');
  assert.equal(more.title, '…and 3 more warnings');
  assert.equal(more.line, 7, 'at the first hidden warning');
  assert.deepEqual(more.messages, ['line 8: w5', 'line 9: w6', 'line 10: w7']);
  assert.equal(plan.length, 7);
  assert.ok(!plan.some((l) => l.kind === 'prompt'), 'no ▶ Profile, Profile with… or cache check lens');
  // one more than the cap: singular
  const nine = lensPlan(parse({ refusal: { message: 'r' }, warnings: warnings.slice(0, 6) }));
  const lastOfNine = nine.at(-1)!;
  assert.equal(lastOfNine.kind === 'moreWarnings' && lastOfNine.title, '…and 1 more warning');
  assert.equal(nine[0]!.kind === 'refusal' && nine[0]!.line, 0, 'a refusal without a line sits on the first line');
});

test('a broken .prompty from the real reader: its refusal lens alone, at the YAML error\'s line', () => {
  const p = parsePromptFile('broken.prompty', '---\nname: Broken\nmodel: [unterminated\n---\nuser:\nHello\n');
  assert.ok(p.refusal, 'refused');
  const plan = lensPlan(p);
  assert.equal(plan[0]!.kind, 'refusal');
  assert.equal(plan[0]!.kind === 'refusal' && plan[0]!.message, p.refusal.message);
  assert.ok(!plan.some((l) => l.kind === 'prompt'));
});

test('a refused parse whose inputs lack values still offers to fill them (the way out)', () => {
  const plan = lensPlan(parse({ refusal: { message: 'the prompt renders to no text: {{topic}} has no value', line: 5 }, variables: [input('topic', 6)] }));
  assert.deepEqual(plan.map((l) => l.kind), ['refusal', 'fill']);
  assert.equal(plan[1]!.kind === 'fill' && plan[1]!.line, 6);
});

test('a good parse: warnings, the fill lens on the first prompt, then each prompt', () => {
  const plan = lensPlan(parse({
    prompts: [prompt(3, 9), prompt(10, 12)],
    warnings: [{ message: 'unknown key', line: 1 }],
    variables: [input('topic', 5), editorVar('selection', 6), input('tone', 7), input('done', 8, { filled: true, value: 'x' })],
  }));
  assert.deepEqual(plan, [
    { kind: 'warning', line: 1, message: 'unknown key' },
    { kind: 'fill', line: 3, title: '2 variables to fill: topic, tone', names: ['topic', 'tone'] },
    { kind: 'prompt', index: 0 },
    { kind: 'prompt', index: 1 },
  ]);
  assert.equal(fillTitle(['topic']), '1 variable to fill: topic');
  assert.deepEqual(lensPlan(parse({ prompts: [prompt(0, 2)], variables: [editorVar('file', 1)] })), [{ kind: 'prompt', index: 0 }], 'editor variables need no lens');
});

test('what to ask: ▶ Profile asks only the never-answered inputs; Profile with… asks every unfilled input again', () => {
  const vars = [input('topic', 3, { placeholder: 'a topic' }), editorVar('selection', 4), input('tone', 5), input('sample', 6, { filled: true, value: 'from file' }), input('api_key', 7)];
  const remembered = { topic: 'cats', api_key: 'leaked-before' };
  assert.deepEqual(variablesToAsk(vars, remembered, 'missing').map((v) => v.name), ['tone', 'api_key'], 'secret-looking names are asked every time');
  assert.deepEqual(variablesToAsk(vars, remembered, 'all').map((v) => v.name), ['topic', 'tone', 'api_key']);
  assert.deepEqual(variablesToAsk(vars, {}, 'missing').map((v) => v.name), ['topic', 'tone', 'api_key']);
  assert.equal(initialAnswer(vars[0]!, remembered), 'cats', 'pre-filled with the remembered answer');
  assert.equal(initialAnswer(vars[2]!, remembered), '');
  assert.equal(initialAnswer(vars[3]!, {}), 'from file');
  assert.equal(initialAnswer(vars[4]!, remembered), '', 'a secret is never pre-filled');
  assert.equal(askTitle(vars[0]!, 1, 2), 'LLM Profiler: ${input:topic} (1/2)');
  assert.equal(askTitle(input('x', 0, { written: '{{x}}' }), 1, 1), 'LLM Profiler: {{x}}');
  assert.equal(askPrompt(vars[0]!, '/w/a.prompt.md'), 'a topic');
  assert.equal(askPrompt(vars[2]!, '/w/a.prompt.md'), 'A value for ${input:tone} in a.prompt.md (line 6)');
});

test('remembered answers apply only to inputs the file leaves empty, and never secrets', () => {
  const vars = [input('topic', 3), input('sample', 6, { filled: true, value: 'from file' }), input('token', 7), editorVar('selection', 8)];
  assert.deepEqual(applicableAnswers(vars, { topic: 'cats', sample: 'old answer', token: 't', selection: 'stale', gone: 'x' }), { topic: 'cats' });
});

test('what to remember: new answers over the old, secret-looking names never', () => {
  assert.deepEqual(answersToRemember({ topic: 'cats', tone: 'dry', apiKey: 'old' }, { tone: 'warm', password: 'p', db_secret: 's', topic: 'dogs' }), { topic: 'dogs', tone: 'warm' });
  for (const n of ['api_key', 'apiKey', 'OPENAI_API_KEY', 'token', 'accessToken', 'password', 'db_passwd', 'client_secret', 'auth', 'Authorization', 'bearer', 'credentials', 'session_cookie', 'github_pat', 'apikey', 'x-api-key'])
    assert.ok(looksSecret(n), `${n} looks secret`);
  for (const n of ['topic', 'tone', 'keywords', 'monkey', 'max_tokens', 'maxTokens', 'author', 'authority', 'selection', 'passage', 'compass', 'pinned'])
    assert.ok(!looksSecret(n), `${n} does not look secret`);
});

test('the run file\'s var values: NAME=VALUE, without secrets or names --var refuses', () => {
  assert.deepEqual(varAssignments({ topic: 'a=b', selection: 'line 1\nline 2', api_key: 'sk-1', 'bad name': 'x' }), ['topic=a=b', 'selection=line 1\nline 2']);
  assert.deepEqual(varAssignments({}), []);
});

test('editor variables from the active editor, only those the file uses and only with a value', () => {
  const state = { file: '/w/src/app.prompt.md', selectedText: 'const x = 1;', workspaceFolder: '/w' };
  assert.deepEqual(editorValues(state, ['selection', 'selectedText', 'file', 'fileBasename', 'fileDirname', 'fileBasenameNoExtension', 'fileExtname', 'workspaceFolder', 'workspaceFolderBasename']), {
    selection: 'const x = 1;', selectedText: 'const x = 1;', file: '/w/src/app.prompt.md', fileBasename: 'app.prompt.md', fileDirname: '/w/src',
    fileBasenameNoExtension: 'app.prompt', fileExtname: '.md', workspaceFolder: '/w', workspaceFolderBasename: 'w',
  });
  assert.deepEqual(editorValues(state, ['file']), { file: '/w/src/app.prompt.md' });
  assert.deepEqual(editorValues({ selectedText: '' }, ['selection', 'file', 'workspaceFolder']), {}, 'nothing selected, no editor, no folder: unfilled');
  assert.equal(unfilledEditorNote(editorVar('selection', 4)), '${selection} has no value (nothing is selected in the active editor): sent as written');
  assert.equal(unfilledEditorNote(editorVar('file', 4)), '${file} has no value (no file on disk is open in the active editor): sent as written');
});

test('explicit sampling keys: the user\'s own max tokens beat the prompt file\'s; preset-derived ones do not', () => {
  const unset = { value: 256, setByUser: false };
  const set = (value: number) => ({ value, setByUser: true });
  assert.deepEqual(explicitSamplingKeys('quick', 64, unset, undefined), [], 'the quick check\'s cap of 64 is a default');
  assert.deepEqual(explicitSamplingKeys('quick', 32, set(32), undefined), ['maxTokens'], 'a user setting under the cap is sent as set');
  assert.deepEqual(explicitSamplingKeys('quick', 64, set(1000), undefined), [], 'above the cap the preset\'s 64 is sent: derived, a default');
  assert.deepEqual(explicitSamplingKeys('load', 256, set(256), undefined), ['maxTokens']);
  assert.deepEqual(explicitSamplingKeys('load', 256, unset, undefined), []);
  assert.deepEqual(explicitSamplingKeys('custom', 100, unset, { maxTokens: 100 }), ['maxTokens'], 'a caller\'s workload.maxTokens');
  assert.deepEqual(explicitSamplingKeys('sweep', 100, unset, { maxTokens: 100 }), ['maxTokens']);
  assert.deepEqual(explicitSamplingKeys('quick', 64, unset, { maxTokens: 100 }), [], 'quick ignores a given maxTokens');
  assert.deepEqual(explicitSamplingKeys('cache-check', 8, set(8), { maxTokens: 8 }), [], 'the cache check sets its own');
  assert.equal(setByUser(undefined), false);
  assert.equal(setByUser({ defaultValue: 256 } as never), false);
  assert.equal(setByUser({ globalValue: 10 }), true);
  assert.equal(setByUser({ workspaceValue: 10 }), true);
  assert.equal(setByUser({ workspaceFolderValue: 10 }), true);
});

test('the real reader and these rules agree on a .prompt.md with ${input:…} and ${selection}', () => {
  const text = '---\ndescription: t\n---\nWrite about ${input:topic:a topic}.\n${selection}\n';
  const base = parsePromptFile('t.prompt.md', text);
  assert.deepEqual(variablesToAsk(base.variables, {}, 'missing').map((v) => [v.name, v.placeholder]), [['topic', 'a topic']]);
  const vars = { ...editorValues({ selectedText: 'SEL' }, base.variables.filter((v) => v.kind === 'editor').map((v) => v.name)), topic: 'queues' };
  const full = parsePromptFile('t.prompt.md', text, { vars });
  assert.match(JSON.stringify(full.prompts[0]!.prompt.messages), /Write about queues\.\\nSEL/);
  assert.deepEqual(lensPlan(full).map((l) => l.kind), ['prompt']);
  assert.deepEqual(lensPlan(base).map((l) => l.kind), ['fill', 'prompt']);
});
