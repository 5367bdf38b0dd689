// The workspace the in-host tests open: one prompt file of each kind with known prompt lines, a
// malformed one, and nothing else. Written fresh for every run into a temporary folder.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const PROMPT_FILES: Readonly<Record<string, string>> = {
  'greet.prompt.md': [
    '---',
    'mode: ask',
    'description: Say hello',
    '---',
    'Say hello to the user in one short sentence.',
    '',
  ].join('\n'),
  'summarize.prompty': [
    '---',
    'name: Summarize',
    'model:',
    '  api: chat',
    '  parameters:',
    '    max_tokens: 32',
    'sample:',
    '  topic: profiling',
    '---',
    'system:',
    'You are terse.',
    '',
    'user:',
    'Summarize {{topic}} in one line.',
    '',
  ].join('\n'),
  'rows.prompt.yml': [
    'name: Rows',
    'model: openai/gpt-4o-mini',
    'modelParameters:',
    '  max_tokens: 24',
    'messages:',
    '  - role: system',
    '    content: You answer briefly.',
    '  - role: user',
    "    content: 'Tell me about {{thing}}'",
    'testData:',
    '  - thing: caches',
    '  - thing: queues',
    '',
  ].join('\n'),
  'single.prompt.yaml': [
    'name: Single',
    'messages:',
    '  - role: user',
    '    content: What is TTFT?',
    '',
  ].join('\n'),
  'broken.prompt.yml': [
    'name: Broken',
    'messages: [ {role: user, content: "unterminated',
    '',
  ].join('\n'),
};

/** Writes the workspace; returns its path. */
export function writeWorkspace(dir: string): string {
  mkdirSync(join(dir, 'prompts'), { recursive: true });
  for (const [name, text] of Object.entries(PROMPT_FILES)) writeFileSync(join(dir, 'prompts', name), text);
  writeFileSync(join(dir, 'README.md'), '# host test workspace\n');
  return dir;
}
