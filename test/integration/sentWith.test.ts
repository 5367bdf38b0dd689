// What a prompt file's prompts are sent with, end to end: the CLI (in this process, its own code)
// against a real scripted server on 127.0.0.1 that logs every request body it receives. The rule:
// an explicit flag beats the file, the file beats the defaults; the run file records what was
// sent (prompts[], promptRef) and the CLI's table shows it, not the workload's default.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseRunFile } from '../../src/engine/files/runFile';
import { runSweep } from '../../src/engine/run/sweep';
import { defaultWorkload } from '../../src/engine/core/workload';
import type { Prompt, RunFile } from '../../src/engine/core/types';
import { runJobCommand } from '../support/cli';
import type { ScriptedServer } from '../support/scriptedServer';
import { withServer } from '../support/withServer';

const SCHEMA = { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'] };

/** A GitHub Models prompt file with its own sampling settings and a JSON schema response format. */
const PROMPT_YML = [
  'name: answer',
  'model: openai/gpt-4o-mini',
  'modelParameters:',
  '  maxTokens: 256',
  '  temperature: 0.2',
  '  topP: 0.9',
  'responseFormat: json_schema',
  `jsonSchema: '${JSON.stringify({ name: 'answer', schema: SCHEMA })}'`,
  'messages:',
  '  - role: system',
  '    content: Answer in JSON.',
  '  - role: user',
  '    content: What is TTFT?',
  '',
].join('\n');

/** The same without settings: the workload's defaults apply. */
const PLAIN_YML = ['name: plain', 'messages:', '  - role: user', '    content: Say hi.', ''].join('\n');

// a few tokens whatever max_tokens says: the bodies are what this test reads
const SERVER = { tokens: 3, ttftMs: 1, itlMs: 1 };

async function run(s: ScriptedServer, dir: string, file: string, extra: readonly string[]): Promise<{ run: RunFile; stdout: string; bodies: Record<string, unknown>[] }> {
  s.clearLog();
  const out = join(dir, 'run.json');
  const r = await runJobCommand('run', ['--url', s.url, '--api', 'openai-chat', '--requests', '3', '--warmup', '1', '--prompt-file', file, '--out', out, ...extra], { env: {}, cwd: dir });
  assert.equal(r.code, 0, r.stderr + r.stdout);
  const bodies = s.log.filter((l) => l.path === '/v1/chat/completions').map((l) => l.body);
  assert.equal(bodies.length, 4, 'one warmup and three measured requests');
  return { run: parseRunFile(readFileSync(out, 'utf8')), stdout: r.stdout, bodies };
}

test("without flags the prompt file's max tokens, temperature, top_p and response format are sent, recorded and shown", async () => {
  await withServer(SERVER, async (s, { dir }) => {
    const file = join(dir, 'answer.prompt.yml');
    writeFileSync(file, PROMPT_YML);
    const { run: r, stdout, bodies } = await run(s, dir, file, []);
    for (const b of bodies) {
      assert.equal(b.max_tokens, 256, "the file's maxTokens, not the run command's default 128");
      assert.equal(b.temperature, 0.2);
      assert.equal(b.top_p, 0.9);
      assert.deepEqual(b.response_format, { type: 'json_schema', json_schema: { name: 'answer', schema: SCHEMA } });
    }
    assert.equal(r.workload.maxTokens, 128, 'the workload keeps its own default');
    assert.equal(r.workload.explicit, undefined, 'no flag was given');
    assert.equal(r.prompts?.length, 1);
    const p = r.prompts![0]!;
    assert.equal(p.name, 'answer');
    assert.equal(p.source, file);
    assert.deepEqual(p.sent, { maxTokens: 256, temperature: 0.2, topP: 0.9, responseFormat: { type: 'json_schema', json_schema: { name: 'answer', schema: SCHEMA } } });
    assert.deepEqual(p.from, { maxTokens: 'file', temperature: 'file', topP: 'file', responseFormat: 'file' });
    assert.ok(r.requests.length === 4 && r.requests.every((q) => q.promptRef === 0), 'every request, the warmup included, points at its prompt');
    assert.match(stdout, /Sent with:\s+max 256 tokens \(from the file\), temperature 0\.2 \(from the file\), top_p 0\.9 \(from the file\), JSON schema "answer" output \(from the file\)/);
    assert.doesNotMatch(stdout, /max 128 tokens/);
  });
});

test('--max-tokens, --temperature and --top-p beat the file; the run file says so', async () => {
  await withServer(SERVER, async (s, { dir }) => {
    const file = join(dir, 'answer.prompt.yml');
    writeFileSync(file, PROMPT_YML);
    const { run: r, stdout, bodies } = await run(s, dir, file, ['--max-tokens', '16', '--temperature', '0.7', '--top-p', '0.5']);
    for (const b of bodies) {
      assert.equal(b.max_tokens, 16);
      assert.equal(b.temperature, 0.7);
      assert.equal(b.top_p, 0.5);
      assert.equal((b.response_format as { type: string }).type, 'json_schema', 'no flag for it: the file still gives the format');
    }
    assert.deepEqual([...(r.workload.explicit ?? [])].sort(), ['maxTokens', 'temperature', 'topP']);
    const p = r.prompts![0]!;
    assert.deepEqual(p.sent, { maxTokens: 16, temperature: 0.7, topP: 0.5, responseFormat: { type: 'json_schema', json_schema: { name: 'answer', schema: SCHEMA } } });
    assert.deepEqual(p.from, { maxTokens: 'workload', temperature: 'workload', topP: 'workload', responseFormat: 'file' });
    assert.match(stdout, /Sent with:\s+max 16 tokens \(set by you\), temperature 0\.7 \(set by you\), top_p 0\.5 \(set by you\)/);
  });
});

test('one flag beats its own setting only: --temperature alone leaves the file its max tokens', async () => {
  await withServer(SERVER, async (s, { dir }) => {
    const file = join(dir, 'answer.prompt.yml');
    writeFileSync(file, PROMPT_YML);
    const { run: r, bodies } = await run(s, dir, file, ['--temperature', '1']);
    for (const b of bodies) {
      assert.equal(b.max_tokens, 256);
      assert.equal(b.temperature, 1);
    }
    assert.deepEqual(r.prompts![0]!.from, { maxTokens: 'file', temperature: 'workload', topP: 'file', responseFormat: 'file' });
  });
});

test('a file without settings gets the defaults: max tokens from the workload, no temperature, no top_p', async () => {
  await withServer(SERVER, async (s, { dir }) => {
    const file = join(dir, 'plain.prompt.yml');
    writeFileSync(file, PLAIN_YML);
    const { run: r, stdout, bodies } = await run(s, dir, file, []);
    for (const b of bodies) {
      assert.equal(b.max_tokens, 128, "the run command's default");
      assert.equal('temperature' in b, false, "the server's own temperature");
      assert.equal('top_p' in b, false);
      assert.equal('response_format' in b, false);
    }
    assert.deepEqual(r.prompts![0]!, { source: file, name: 'plain', sent: { maxTokens: 128 }, from: { maxTokens: 'default' } });
    assert.match(stdout, /Sent with:\s+max 128 tokens \(default\)\n/);
  });
});

test('a sweep records one prompts list for the run, every point pointing into it', async () => {
  await withServer(SERVER, async (s) => {
    const prompts: Prompt[] = [
      { messages: [{ role: 'user', content: 'first' }], source: 'a.prompt.yml', name: 'first', maxTokens: 7 },
      { messages: [{ role: 'user', content: 'second' }], source: 'a.prompt.yml', name: 'second', temperature: 0.3 },
    ];
    const workload = defaultWorkload({ requests: 2, warmup: 0, maxTokens: 5, prompt: { kind: 'file', path: 'a.prompt.yml' } });
    const sweep = await runSweep({ url: s.url, api: 'openai-chat' }, { dimension: 'concurrency', values: [1, 2], workload, stopOnSaturation: false }, { prompts });
    assert.equal(sweep.sweep?.points.length, 2);
    assert.deepEqual(sweep.prompts?.map((p) => [p.name, p.sent]), [['first', { maxTokens: 7 }], ['second', { maxTokens: 5, temperature: 0.3 }]]);
    const refs = sweep.requests.map((q) => q.promptRef);
    assert.deepEqual(refs, [0, 1, 0, 1], 'both points point into the one list');
    const sent = s.log.filter((l) => l.path === '/v1/chat/completions').map((l) => [l.body.max_tokens, l.body.temperature]);
    assert.deepEqual(sent.slice(0, 2), [[7, undefined], [5, 0.3]]);
  });
});
