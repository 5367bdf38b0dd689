// Tools and structured output, part by part: the tool-call timer the client feeds (pieces joined by
// index, Gemini's whole calls, argument tokens), the run's tool-call summary (hand-computed), the
// words (the run table's line, what a schema costs in an A/B), every source of tools (a --tools file's
// definitions, a prompt file's, a dataset line's; VS Code's tool names refused), `none` against a
// prompt file's own, the comparison's rule, and `ab` sides that differ in their response format.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ToolCallTimer } from '../../src/engine/transport/toolCallTimer';
import { summarizeToolCalls } from '../../src/engine/analysis/toolCalls';
import { toolDefinitions } from '../../src/engine/core/toolDefinitions';
import { resolveSampling } from '../../src/engine/core/sentWith';
import { comparability } from '../../src/engine/analysis/comparable';
import type { CompareRow, Comparison } from '../../src/engine/analysis/compare';
import { parsePromptFile } from '../../src/engine/prompts/promptFiles';
import { DatasetError, parseDataset } from '../../src/engine/prompts/dataset';
import { structuredCostLine, structuredDifference, structuredSide, structuredText, toolCallLine } from '../../src/present/toolText';
import { buildAbJob } from '../../src/jobs/ab';
import { parseCommandLine } from '../../src/cli/parse';
import { UsageError } from '../../src/jobs/errors';
import type { RequestRecord, RunFile, ToolDefinition } from '../../src/engine/core/types';
import { fixtureRun } from '../support/fixtureRuns';

const F = (name: string, parameters?: Record<string, unknown>): ToolDefinition => ({ type: 'function', function: { name, ...(parameters ? { parameters } : {}) } });

test('the timer joins pieces by index, opens a call per named piece without one (Gemini), and counts only pieces that carry something', () => {
  const t = new ToolCallTimer((s) => s.toUpperCase());
  assert.equal(t.add([{ index: 0, id: 'c1' }], 5), false, 'an id alone carries nothing: no chunk');
  assert.equal(t.add([{ index: 0, name: 'f' }], 10), true);
  assert.equal(t.add([{ index: 0, args: '{"a"' }, { index: 1, name: 'g', args: '{' }], 20), true);
  assert.equal(t.add([{ index: 0, args: ':1}' }], 30), true);
  assert.equal(t.add([{ index: 1, args: '}' }], 45), true);
  assert.equal(t.add([{ index: 1, args: '' }], 50), false);
  assert.deepEqual(t.timings(undefined, 0), [
    { name: 'F', firstDeltaMs: 10, lastDeltaMs: 30, argDeltas: 2, argChars: 7, argTokens: 2 },
    { name: 'G', firstDeltaMs: 20, lastDeltaMs: 45, argDeltas: 2, argChars: 2, argTokens: 2 },
  ], 'names through the cleaner; two calls: a token a piece, whatever the usage');
  assert.equal(t.timings(40, 3)![0]!.argTokens, 2, 'usage is not split over several calls');

  const g = new ToolCallTimer((s) => s);
  g.add([{ name: 'a', args: '{}' }, { name: 'b', args: '{"x":1}' }], 7);
  g.add([{ args: ',"y":2}' }], 9); // no name, no index: the latest call's continuation
  assert.deepEqual(g.timings(undefined, 0)!.map((c) => [c.name, c.firstDeltaMs, c.lastDeltaMs, c.argDeltas, c.argChars]), [['a', 7, 7, 1, 2], ['b', 7, 9, 2, 14]]);

  const one = new ToolCallTimer((s) => s);
  one.add([{ index: 0, name: 'f' }], 1);
  one.add([{ index: 0, args: '{"q":"' }], 2);
  one.add([{ index: 0, args: 'x"}' }], 3);
  assert.equal(one.timings(25, 5)![0]!.argTokens, 20, 'one call and usage: the output less the text\'s tokens');
  assert.equal(one.timings(5, 5)![0]!.argTokens, 2, 'nothing left for the call: a token a piece');
  assert.equal(new ToolCallTimer((s) => s).timings(10, 0), undefined);

  const many = new ToolCallTimer((s) => s);
  for (let i = 0; i < 500; i++) many.add([{ index: i, name: 'f', args: '{}' }], i);
  assert.equal(many.timings(undefined, 0)!.length, 128, 'calls kept per reply are bounded');
  assert.equal(many.add([{ index: 999, name: 'late', args: '{}' }], 600), true, 'past the bound a piece is still a chunk');
});

test('the run\'s tool calls: requests with one, calls, time to the first piece, argument tokens per second over calls in 2+ pieces', () => {
  const rec = (toolCalls: RequestRecord['toolCalls']): RequestRecord => ({ index: 0, warmup: false, scheduledAt: 0, sentAt: 0, outputTokens: 1, tokenSource: 'chunks', chunkTimesMs: [1], e2eMs: 1, ...(toolCalls ? { toolCalls } : {}) });
  const s = summarizeToolCalls([
    rec([{ name: 'f', firstDeltaMs: 100, lastDeltaMs: 300, argDeltas: 10, argChars: 40, argTokens: 20 }]),
    rec([{ firstDeltaMs: 50, lastDeltaMs: 80, argDeltas: 1, argChars: 5, argTokens: 1 }, { firstDeltaMs: 150, lastDeltaMs: 250, argDeltas: 4, argChars: 9, argTokens: 5 }]),
    rec(undefined),
    rec([]),
  ], [50, 99])!;
  assert.equal(s.requests, 2);
  assert.equal(s.calls, 3);
  assert.deepEqual([s.firstDeltaMs.count, s.firstDeltaMs.mean, s.firstDeltaMs.p50], [3, 100, 100]);
  // 20 tokens over 0.2 s, 5 over 0.1 s; the call with one argument piece (after its name) is left out
  assert.deepEqual([s.argTokensPerS!.count, s.argTokensPerS!.mean, s.argTokensPerS!.p50], [2, 75, 75]);
  assert.equal(summarizeToolCalls([rec(undefined)], [50]), undefined);
});

test('words: the run table\'s line, what each side sends, and what a schema costs from either side of an A/B', () => {
  const run = fixtureRun({ seed: 3, requests: 10 });
  assert.equal(toolCallLine(run), undefined, 'no tools, no line');
  assert.equal(toolCallLine({ ...run, workload: { ...run.workload, tools: [F('f')] } }), 'Tool calls: none streamed, though the requests carried tools');
  assert.equal(toolCallLine({ ...run, endpoint: { ...run.endpoint, api: 'llamacpp' }, workload: { ...run.workload, tools: [F('f')] } }), 'Tool calls: none: the llamacpp API takes no function definitions, so the tools were not sent');
  const stats = (p50: number, p99: number, count: number) => ({ count, mean: p50, std: 0, min: p50, max: p99, p50, p99 });
  const withCalls = { ...run, summary: { ...run.summary, completed: 10, toolCalls: { requests: 9, calls: 12, firstDeltaMs: stats(312, 450, 12), argTokensPerS: stats(85.2, 120, 7) } } };
  assert.equal(toolCallLine(withCalls), 'Tool calls: 12 in 9 of 10 requests · first piece p50 312 ms, p99 450 ms · arguments p50 85.2 tok/s (7 calls in 2+ pieces)');

  const schema = { type: 'json_schema' as const, json_schema: { name: 'answer', schema: {} } };
  assert.equal(structuredText({ responseFormat: schema, tools: [F('a'), F('b')] }), 'response format JSON schema "answer", tools a, b');
  assert.equal(structuredText({ responseFormat: { type: 'text' } }), 'no response format, no tools');
  assert.equal(structuredDifference({ responseFormat: schema }, {}), 'the response format');
  assert.equal(structuredDifference({ tools: [F('a')] }, { tools: [] }), 'the tools');
  assert.equal(structuredDifference({ responseFormat: schema, tools: [F('a')] }, {}), 'the response format and tools');
  assert.equal(structuredDifference({ responseFormat: { type: 'text' } }, {}), undefined, 'text is no constraint');
  assert.equal(structuredSide({ responseFormat: schema }, {}), 'A');
  assert.equal(structuredSide({}, { tools: [F('a')] }), 'B');
  assert.equal(structuredSide({ responseFormat: schema }, { responseFormat: { type: 'json_object' } }), undefined, 'both send one: no side is "without"');

  // BASE = A with the schema at 80 ms, NEW = B without at 20 ms: the schema costs +60 ms, slower with it
  const row = (key: CompareRow['key'], base: number, next: number, ci: [number, number], verdict: CompareRow['verdict']): CompareRow =>
    ({ key, metric: key.split('.')[0] as CompareRow['metric'], stat: 'p50', unit: 'ms', base, next, diff: next - base, diffPct: ((next - base) / base) * 100, ci, verdict, samples: { base: 20, next: 20 } });
  const c = { rows: [row('ttft.p50', 80, 20, [-62, -58], 'faster'), row('tpot.p50', 4, 4.1, [-0.2, 0.3], 'no-difference')] } as unknown as Comparison;
  assert.equal(structuredCostLine(c, 'the response format', 'A'),
    'What the response format costs (A sends it, B does not): TTFT p50 +60 ms (+300%), 95% CI +58 ms to +62 ms: slower with it; TPOT p50 −0.1 ms (−2.44%), 95% CI −0.3 ms to +0.2 ms: no difference we can detect');
  // the same runs the other way round: B sends it
  const flipped = { rows: [row('ttft.p50', 20, 80, [58, 62], 'slower'), row('tpot.p50', 4.1, 4, [-0.3, 0.2], 'no-difference')] } as unknown as Comparison;
  assert.match(structuredCostLine(flipped, 'the tools', 'B'), /^What the tools cost \(/, 'plural: cost');
  assert.match(structuredCostLine(flipped, 'the tools', 'B'), /\(B sends it, A does not\): TTFT p50 \+60 ms \(\+300%\), 95% CI \+58 ms to \+62 ms: slower with it/);
});

test('function definitions: OpenAI\'s form or bare, refused with the place and the reason', () => {
  assert.deepEqual(toolDefinitions([{ name: 'a', description: 'd', parameters: { type: 'object' } }, F('b')], 'x'), [{ type: 'function', function: { name: 'a', description: 'd', parameters: { type: 'object' } } }, F('b')]);
  assert.deepEqual(toolDefinitions({ tools: [F('c')] }, 'x'), [F('c')]);
  assert.equal(toolDefinitions([], 'tools.json'), 'tools.json must be a non-empty list of function definitions');
  assert.equal(toolDefinitions([F('ok'), { name: 'has space' }], 'tools.json'), 'tools.json tool 2: a tool needs a name of letters, digits, _ . - (at most 64)');
  assert.equal(toolDefinitions([{ name: 'p', parameters: 'string' }], 'x'), "x tool 1: p's parameters must be a JSON schema object");
});

test('prompt files: tools from a .prompt.yml and a .prompty\'s model.parameters; tool_choice and VS Code\'s tool names named as not sent', () => {
  const yml = parsePromptFile('a.prompt.yml', 'messages:\n  - role: user\n    content: hi\ntools:\n  - type: function\n    function: { name: get_weather, parameters: { type: object } }\n');
  assert.deepEqual(yml.prompts[0]!.prompt.tools, [F('get_weather', { type: 'object' })]);
  assert.deepEqual(yml.warnings, []);
  const badYml = parsePromptFile('b.prompt.yml', 'messages:\n  - role: user\n    content: hi\ntools: [{ description: no name }]\n');
  assert.equal(badYml.prompts[0]!.prompt.tools, undefined);
  assert.deepEqual(badYml.warnings, [{ message: 'tools tool 1: a tool needs a name of letters, digits, _ . - (at most 64): not sent', line: 3 }]);

  const prompty = parsePromptFile('a.prompty', '---\nname: t\nmodel:\n  api: chat\n  parameters:\n    tools:\n      - type: function\n        function:\n          name: lookup\n    tool_choice: auto\n---\nuser:\nhi\n');
  assert.deepEqual(prompty.prompts[0]!.prompt.tools, [F('lookup')]);
  assert.deepEqual(prompty.warnings.map((w) => w.message), ['model.parameters.tool_choice is not sent: the profiler sends the tools and leaves the choice to the model (auto)']);
  const badPrompty = parsePromptFile('b.prompty', '---\nmodel:\n  parameters:\n    tools: []\ntools:\n  - name: search\n    kind: function\n---\nhi\n');
  assert.deepEqual(badPrompty.warnings.map((w) => [w.message, w.line]), [
    ['model.parameters.tools is not a list of function definitions (must be a non-empty list of function definitions): not sent', 3],
    ["tools (Prompty's own tool list) is not sent: give OpenAI function definitions in model.parameters.tools", 4],
  ]);

  const md = parsePromptFile('r.prompt.md', "---\nagent: agent\ntools: ['codebase', 'fetch']\n---\nReview this.\n");
  assert.equal(md.prompts[0]!.prompt.tools, undefined);
  assert.deepEqual(md.warnings, [{ message: "tools (codebase, fetch) names VS Code's own tools, which the editor runs, not function definitions an endpoint takes: not sent (give definitions with --tools)", line: 2 }]);
});

test('a dataset line\'s own tools; a bad list refused naming the line', () => {
  const [a, b] = parseDataset('{"messages": [{"role": "user", "content": "weather?"}], "tools": [{"type": "function", "function": {"name": "get_weather"}}]}\n{"prompt": "hi", "tools": [{"name": "now"}]}\n', 'd.jsonl');
  assert.deepEqual(a!.tools, [F('get_weather')]);
  assert.deepEqual(b!.tools, [F('now')]);
  assert.throws(() => parseDataset('{"prompt": "a"}\n{"prompt": "b", "tools": {"name": 1}}\n', 'd.jsonl'), (e: unknown) => e instanceof DatasetError && e.line === 2 && e.message === 'd.jsonl:2: "tools" must be a non-empty list of function definitions');
});

test('`none` set on purpose beats a prompt file\'s own response format and tools; a value beats it as before', () => {
  const own = { tools: [F('file')], responseFormat: { type: 'json_object' as const } };
  const base = { maxTokens: 8 };
  assert.deepEqual(resolveSampling(base, own).sent, { maxTokens: 8, tools: own.tools, responseFormat: own.responseFormat });
  assert.deepEqual(resolveSampling({ ...base, explicit: ['tools', 'responseFormat'] }, own).sent, { maxTokens: 8 }, '--tools none --response-format none');
  const mine = resolveSampling({ ...base, tools: [F('mine')], explicit: ['tools'] }, own);
  assert.deepEqual(mine.sent.tools, [F('mine')]);
  assert.equal(mine.from.tools, 'workload');
  assert.equal(mine.sent.responseFormat, own.responseFormat);
});

test('comparability: a response format or tools on one side only is an A/B\'s question (said), a different experiment elsewhere (refused)', () => {
  const a = fixtureRun({ seed: 1, requests: 30 });
  const b: RunFile = { ...a, workload: { ...a.workload, responseFormat: { type: 'json_schema', json_schema: { name: 'answer', schema: {} } } } };
  const plain = comparability(a, b).filter((p) => p.kind === 'structured');
  assert.deepEqual(plain.map((p) => [p.severity, p.message]), [['refuse', 'what every request is sent with differs: BASE no response format, no tools, NEW the JSON schema "answer", no tools']]);
  const ab = comparability(a, b, { sameRequests: true }).filter((p) => p.kind === 'structured');
  assert.deepEqual(ab.map((p) => p.severity), ['warn']);
  assert.deepEqual(comparability(a, { ...a, workload: { ...a.workload, tools: [] } }).filter((p) => p.kind === 'structured'), [], 'an empty list is none');
  const other: RunFile = { ...b, workload: { ...b.workload, responseFormat: { type: 'json_schema', json_schema: { name: 'answer', schema: { type: 'object' } } } } };
  assert.match(comparability(b, other)[0]!.message, /\(not the same definitions\)$/);
});

test('ab: --response-format and --tools twice give each side its own workload; the same twice, or nothing apart, is refused', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'ab-structured-'));
  try {
    writeFileSync(join(dir, 's.json'), JSON.stringify({ type: 'object', properties: { a: { type: 'string' } } }));
    writeFileSync(join(dir, 't.json'), JSON.stringify([{ name: 'f' }]));
    const ctx = { cwd: dir };
    const job = (await buildAbJob(parseCommandLine('ab', ['--url', 'http://a:1', '--response-format', 's.json', '--response-format', 'none', '-n', '20', '--blocks', '2']), ctx)).job;
    assert.deepEqual(job.targets.map((t) => t.kind === 'endpoint' && t.url), ['http://a:1', 'http://a:1']);
    const [wa, wb] = job.workloads!;
    assert.deepEqual(wa.responseFormat, { type: 'json_schema', json_schema: { name: 'response', schema: { type: 'object', properties: { a: { type: 'string' } } } } });
    assert.equal(wb.responseFormat, undefined);
    assert.deepEqual(wb.explicit, ['responseFormat'], 'B\'s none is set on purpose: a prompt file\'s own is not sent either');
    assert.deepEqual({ ...wa, responseFormat: undefined }, { ...wb, responseFormat: undefined }, 'nothing else differs');
    assert.equal(job.workload, wa);
    const tools = (await buildAbJob(parseCommandLine('ab', ['--url', 'http://a:1', '--tools', 'none', '--tools', 't.json', '-n', '20', '--blocks', '2']), ctx)).job;
    assert.deepEqual(tools.workloads!.map((w) => w.tools), [undefined, [F('f')]]);
    // given once: both sides send it, no per-side workloads; two endpoints still differ
    const once = (await buildAbJob(parseCommandLine('ab', ['--url', 'http://a:1', '--url', 'http://b:1', '--tools', 't.json', '-n', '20', '--blocks', '2']), ctx)).job;
    assert.equal(once.workloads, undefined);
    assert.deepEqual(once.workload.tools, [F('f')]);
    for (const argv of [['--response-format', 's.json'], ['--response-format', 's.json', '--response-format', './s.json'], ['--tools', 'none', '--tools', 'none']]) {
      await assert.rejects(buildAbJob(parseCommandLine('ab', ['--url', 'http://a:1', ...argv, '-n', '20', '--blocks', '2']), ctx), (e: unknown) => e instanceof UsageError && /the two sides are the same/.test(e.message), argv.join(' '));
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
