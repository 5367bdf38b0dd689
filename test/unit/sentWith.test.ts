// The precedence between a workload and a prompt's own sampling settings, as the runner's planner
// applies it (an explicit workload value beats the file, the file beats the defaults), what it
// records (RunFile.prompts, promptRef), and the words every surface shows for it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { withLead } from '../../src/engine/transport/adapters/cacheBust';
import { variantOf } from '../../src/engine/run/cacheCheck';
import { createPlanner, plannedPrompts } from '../../src/engine/run/plan';
import type { Planned } from '../../src/engine/run/plan';
import { asRunFile } from '../../src/engine/core/runSchema';
import { resolveSampling } from '../../src/engine/core/sentWith';
import type { Prompt, RunFile, WorkloadSpec } from '../../src/engine/core/types';
import type { ApiKind } from '../../src/engine/core/apis';
import { defaultWorkload } from '../../src/engine/core/workload';
import { indexEntry } from '../../src/extension/runStore';
import { describeJob } from '../../src/present/jobText';
import { sentLine, sentNotes, sentPerPromptLines, sentWithRows } from '../../src/present/sentText';

const FILE = { kind: 'file', path: 'ask.prompty' } as const;
const IMAGE = 'data:image/png;base64,iVBORw0KGgo=';

const filePrompt = (over: Partial<Prompt> = {}): Prompt => ({ messages: [{ role: 'user', content: 'Why is the sky blue?' }], source: 'ask.prompty', name: 'ask', ...over });

async function plan(w: WorkloadSpec, prompts?: readonly Prompt[], api: ApiKind = 'openai-chat'): Promise<{ planned: Planned[]; prompts: RunFile['prompts'] }> {
  const planner = await createPlanner(w, { url: 'http://127.0.0.1:8000', api }, prompts);
  const planned: Planned[] = [];
  for (let k = 0; k < w.warmup; k++) planned.push(planner.plan(k, true, k, 0));
  for (let k = 0; k < (w.requests ?? 0); k++) planned.push(planner.plan(w.warmup + k, false, k, 0));
  return { planned, prompts: planner.prompts };
}

test('precedence, key by key: explicit workload value > the prompt file > the workload default', () => {
  const own = { maxTokens: 256, temperature: 0.2, topP: 0.9, stop: ['###'], responseFormat: { type: 'json_object' } } as const;
  // no flag: the file wins wherever it has a value; the workload's max tokens is only a default
  assert.deepEqual(resolveSampling({ maxTokens: 64, temperature: 1 }, own), {
    sent: { maxTokens: 256, temperature: 0.2, topP: 0.9, stop: ['###'], responseFormat: { type: 'json_object' } },
    from: { maxTokens: 'file', temperature: 'file', topP: 'file', stop: 'file', responseFormat: 'file' },
  });
  // --max-tokens and --top-p given: they beat the file; the rest stays the file's
  const flags = resolveSampling({ maxTokens: 64, topP: 0.5, explicit: ['maxTokens', 'topP'] }, own);
  assert.deepEqual(flags.sent, { maxTokens: 64, temperature: 0.2, topP: 0.5, stop: ['###'], responseFormat: { type: 'json_object' } });
  assert.deepEqual(flags.from, { maxTokens: 'workload', temperature: 'file', topP: 'workload', stop: 'file', responseFormat: 'file' });
  // explicit, but the workload has no value of it: the file's (a setting cannot beat with nothing)
  assert.deepEqual(resolveSampling({ maxTokens: 64, explicit: ['temperature'] }, { temperature: 0.3 }).from, { maxTokens: 'default', temperature: 'file' });
  // neither: the workload's max tokens, its temperature when set, nothing else
  assert.deepEqual(resolveSampling({ maxTokens: 64, temperature: 0.7 }, {}), { sent: { maxTokens: 64, temperature: 0.7 }, from: { maxTokens: 'default', temperature: 'default' } });
  assert.deepEqual(resolveSampling({ maxTokens: 64 }, {}), { sent: { maxTokens: 64 }, from: { maxTokens: 'default' } });
});

test('the planner builds each request with the resolved values and a promptRef; one record per prompt, in the order first sent', async () => {
  const a = filePrompt({ name: 'a', maxTokens: 256, temperature: 0.2 });
  const b = filePrompt({ name: 'b', messages: [{ role: 'user', content: 'other' }], topP: 0.8 });
  const w = defaultWorkload({ requests: 4, warmup: 1, maxTokens: 64, temperature: 1, explicit: ['temperature'], prompt: FILE });
  const { planned, prompts } = await plan(w, [a, b]);
  assert.deepEqual(planned.map((p) => [p.spec.maxTokens, p.spec.temperature, p.spec.topP, p.spec.promptRef]), [
    [256, 1, undefined, 0], // warmup: a
    [256, 1, undefined, 0],
    [64, 1, 0.8, 1],
    [256, 1, undefined, 0],
    [64, 1, 0.8, 1],
  ]);
  assert.deepEqual(prompts, [
    { source: 'ask.prompty', name: 'a', sent: { maxTokens: 256, temperature: 1 }, from: { maxTokens: 'file', temperature: 'workload' } },
    { source: 'ask.prompty', name: 'b', sent: { maxTokens: 64, temperature: 1, topP: 0.8 }, from: { maxTokens: 'default', temperature: 'workload', topP: 'file' } },
  ]);
  // the live report's first frame knows the same list before anything is sent
  assert.deepEqual(plannedPrompts(w, { url: 'http://h', api: 'openai-chat' }, [a, b]), prompts);
  // the cache-bust lead keeps the spec's values (a cold run is the default)
  assert.ok(planned.every((p) => p.spec.cacheBust === 'nonce'));
});

test('records: synthetic and dataset prompts have none; equal records are one; the API notes what it cannot take', async () => {
  const synthetic = await plan(defaultWorkload({ requests: 3, warmup: 0, maxTokens: 9 }));
  assert.deepEqual(synthetic.prompts, []);
  assert.ok(synthetic.planned.every((p) => p.spec.promptRef === undefined && p.spec.maxTokens === 9));
  // a dataset line's max_tokens is still its own (and beaten by --max-tokens), but not recorded
  const dataset = await plan(defaultWorkload({ requests: 2, warmup: 0, maxTokens: 9, prompt: { kind: 'dataset', path: 'd.jsonl' } }), [filePrompt({ source: 'd.jsonl:1', maxTokens: 40 })]);
  assert.deepEqual(dataset.prompts, []);
  assert.deepEqual(dataset.planned.map((p) => p.spec.maxTokens), [40, 40]);
  // the cache check's leads and variants: other texts, the same settings, one record
  const base = filePrompt({ maxTokens: 30 });
  const check = await plan(defaultWorkload({ requests: 3, warmup: 0, prompt: FILE }), [withLead(base, '[t-1] '), withLead(base, '[t-1] '), variantOf(withLead(base, '[t-1] '), 0)]);
  assert.equal(check.prompts?.length, 1);
  assert.deepEqual(check.planned.map((p) => p.spec.promptRef), [0, 0, 0]);
  // images to a text-only API: sent as text, noted once on the prompt's record
  const withImage = filePrompt({ messages: [{ role: 'user', content: 'What is this?', parts: [{ type: 'text', text: 'What is this?' }, { type: 'image', url: IMAGE }] }] });
  const completions = await plan(defaultWorkload({ requests: 2, warmup: 0, prompt: FILE }), [withImage], 'openai-completions');
  assert.deepEqual(completions.prompts?.[0]?.notes, ['images are not sent: the openai-completions API takes text only']);
  const chat = await plan(defaultWorkload({ requests: 2, warmup: 0, prompt: FILE }), [withImage], 'openai-chat');
  assert.equal(chat.prompts?.[0]?.notes, undefined, 'OpenAI chat takes the image');
});

test('the cache-bust lead and the cache check variant keep a message\'s images and name', () => {
  const p = filePrompt({ messages: [{ role: 'user', name: 'Alice', content: 'Look.\n\nWhat now?', parts: [{ type: 'text', text: 'Look.' }, { type: 'image', url: IMAGE }, { type: 'text', text: 'What now?' }] }] });
  const led = withLead(p, '[n-1] ').messages[0]!;
  assert.equal(led.name, 'Alice');
  assert.equal(led.content, '[n-1] Look.\n\nWhat now?');
  assert.deepEqual(led.parts, [{ type: 'text', text: '[n-1] Look.' }, { type: 'image', url: IMAGE }, { type: 'text', text: 'What now?' }]);
  const imageFirst = withLead(filePrompt({ messages: [{ role: 'user', content: '', parts: [{ type: 'image', url: IMAGE }] }] }), '[n-2] ').messages[0]!;
  assert.deepEqual(imageFirst.parts, [{ type: 'text', text: '[n-2] ' }, { type: 'image', url: IMAGE }]);
  const varied = variantOf(p, 0).messages[0]!;
  assert.equal(varied.name, 'Alice');
  assert.deepEqual(varied.parts?.slice(0, 2), p.messages[0]!.parts!.slice(0, 2));
  assert.notEqual((varied.parts![2] as { text: string }).text, 'What now?');
  assert.equal(varied.content, `Look.\n\n${(varied.parts![2] as { text: string }).text}`);
});

test('the words: one line from what was sent, per-prompt rows, notes once; the job line before the run', async () => {
  const w = defaultWorkload({ requests: 2, warmup: 0, maxTokens: 64, prompt: FILE });
  assert.equal(sentLine({ workload: w }), 'max 64 tokens', 'no records: the workload, as before');
  assert.equal(sentLine({ workload: { ...w, temperature: 0.5, topP: 0.9 } }), 'max 64 tokens, temperature 0.5, top_p 0.9');
  const dataset = defaultWorkload({ maxTokens: 64, prompt: { kind: 'dataset', path: 'd.jsonl' } });
  assert.equal(sentLine({ workload: dataset }), 'max tokens per dataset line, else 64', 'a line\'s own max_tokens is sent: not hidden behind the default');
  assert.equal(sentLine({ workload: { ...dataset, explicit: ['maxTokens'] } }), 'max 64 tokens', '--max-tokens beats every line');
  const one = { workload: w, prompts: [{ name: 'ask', sent: { maxTokens: 256, temperature: 0.2 }, from: { maxTokens: 'file', temperature: 'workload' } }] } as const;
  assert.equal(sentLine(one), 'max 256 tokens (from the file), temperature 0.2 (set by you)');
  const two = {
    workload: w,
    prompts: [
      { name: 'a', sent: { maxTokens: 256 }, from: { maxTokens: 'file' }, notes: ['images are not sent: the llamacpp API takes text only'] },
      { name: 'b', sent: { maxTokens: 64, responseFormat: { type: 'json_object' } }, from: { maxTokens: 'default', responseFormat: 'file' }, notes: ['images are not sent: the llamacpp API takes text only'] },
    ],
  } as const;
  assert.equal(sentLine(two), 'max 64–256 tokens (per prompt), JSON output (per prompt)');
  assert.deepEqual(sentPerPromptLines(two), ['a: max 256 tokens (from the file)', 'b: max 64 tokens (default), JSON output (from the file)']);
  assert.deepEqual(sentPerPromptLines(one), [], 'one prompt: the line says it all');
  assert.deepEqual(sentNotes(two), ['images are not sent: the llamacpp API takes text only'], 'once per run');
  assert.deepEqual(sentWithRows(one), [{ name: 'ask', settings: [
    { key: 'maxTokens', label: 'max tokens', value: '256', from: 'from the file' },
    { key: 'temperature', label: 'temperature', value: '0.2', from: 'set by you' },
  ] }]);
  // before the run: the job carries its prompts, and the line says what they will be sent with
  const job = { kind: 'run', target: { kind: 'endpoint', url: 'http://h', api: 'openai-chat' }, workload: w, prompts: [filePrompt({ maxTokens: 256 })], failOnSlo: false } as const;
  assert.equal(describeJob(job), 'http://h (openai-chat): 2 requests at concurrency 1, max 256 tokens (from the file)');
  assert.equal(describeJob({ ...job, prompts: undefined, workload: defaultWorkload({ requests: 2, maxTokens: 64 }) }), 'http://h (openai-chat): 2 requests at concurrency 1, max 64 tokens');
});

test('the run file schema reads the new fields, and an old run file without them', () => {
  const base = {
    format: 'llm-profiler.run', version: 1, id: 'r1', startedAt: '2025-01-01T00:00:00.000Z', tool: { name: 'llm-profiler', version: '0' },
    endpoint: { url: 'http://h', api: 'openai-chat' },
    workload: defaultWorkload({ requests: 1, prompt: FILE }),
    requests: [{ index: 0, warmup: false, scheduledAt: 0, sentAt: 0, outputTokens: 1, tokenSource: 'chunks', chunkTimesMs: [1] }],
    summary: JSON.parse(JSON.stringify(emptySummary())),
  };
  assert.ok('run' in asRunFile(base), 'an old run file still reads');
  const now = {
    ...base,
    workload: { ...base.workload, topP: 0.9, explicit: ['maxTokens'], prompt: { kind: 'file', path: 'ask.prompty', vars: { topic: 'x', n: 2 } } },
    prompts: [{ source: 'ask.prompty', name: 'ask', sent: { maxTokens: 256, stop: ['###'], responseFormat: { type: 'json_schema', json_schema: { name: 'a', schema: {} } } }, from: { maxTokens: 'file', stop: 'file', responseFormat: 'file' }, notes: ['n'] }],
    requests: [{ ...base.requests[0], promptRef: 0 }],
  };
  const read = asRunFile(now);
  assert.ok('run' in read, JSON.stringify('problem' in read ? read.problem : ''));
  // the run list (sidebar) says what was sent, from the same words
  if ('run' in read) assert.equal(indexEntry(read.run, 'r1.json').sent, 'max 256 tokens (from the file), JSON schema "a" output (from the file)');
  assert.equal(indexEntry(base as unknown as RunFile, 'r0.json').sent, undefined, 'an old run: nothing more than before');
  const bad = asRunFile({ ...now, prompts: [{ sent: { maxTokens: 1 }, from: { maxTokens: 'flag' } }] });
  assert.ok('problem' in bad && bad.problem.kind === 'field' && bad.problem.path === 'prompts[0].from.maxTokens');
});

function emptySummary(): RunFile['summary'] {
  const stats = { count: 0, mean: 0, std: 0, min: 0, max: 0, p50: 0, p90: 0, p95: 0, p99: 0 };
  return {
    completed: 1, failed: 0, errorsByKind: {}, durationS: 1, totalInputTokens: 0, totalOutputTokens: 1, requestsPerSecond: 1, outputTokensPerSecond: 1, totalTokensPerSecond: 1,
    ttftMs: stats, tpotMs: stats, itlMs: stats, e2eMs: stats,
    stalls: { count: 0, totalMs: 0, shareOfDecode: 0, worst: [], factor: 3, floorMs: 50 },
    malformedEvents: 0, tokenSource: 'chunks', multiTokenChunks: 0,
  };
}
