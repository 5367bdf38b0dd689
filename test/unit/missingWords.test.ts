// The words and rules behind issue 32's "what is missing where a user looks for it", as pure functions:
// a sweep says why it stopped first and names the setting in VS Code (the flag in the CLI), its tiles
// say they pool every point; an export is named for its run; a reachability check in words; which
// variables are asked in an editor; where a prompt file's problem is marked; a list of sweep values.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { RunFile } from '../../src/engine/core/types';
import { analyzeSweep } from '../../src/engine/analysis/fit';
import { parseValueList } from '../../src/jobs/options';
import { parseSweepValues } from '../../src/jobs/presets';
import { reachText } from '../../src/present/endpointText';
import { runFileName, runNameParts } from '../../src/present/runText';
import { formatSweep, pooledNote, sweepFacts } from '../../src/present/sweepText';
import { asksMultiline, problemSpan } from '../../src/extension/promptModel';
import { fixtureRun, fixtureSweepRun } from '../support/fixtureRuns';

/** The fixture sweep cut to its first two points, stopped early out of four, with no SLO. */
function stoppedSweep(): RunFile {
  const run = fixtureSweepRun();
  const points = run.sweep!.points.slice(0, 2);
  const analysis = analyzeSweep('concurrency', points, undefined);
  return {
    ...run,
    workload: { ...run.workload, slo: undefined },
    sweep: { dimension: 'concurrency', points, ...analysis, stoppedEarly: { afterLabel: points[1]!.label, reason: 'throughput rose 2% while e2e p50 rose 80%', asked: 4 } },
  };
}

test('a sweep that stopped early says so first, with how many of the points asked ran', () => {
  const facts = sweepFacts(stoppedSweep());
  assert.equal(facts[0]!.kind, 'stopped');
  assert.equal(facts[0]!.text, 'Stopped early after concurrency 2 (2 of the 4 points asked): throughput rose 2% while e2e p50 rose 80%.');
  // a run file of an older version records no count: the points that ran
  const older = stoppedSweep();
  const { asked: _asked, ...was } = older.sweep!.stoppedEarly!;
  void _asked;
  assert.match(sweepFacts({ ...older, sweep: { ...older.sweep!, stoppedEarly: was } })[0]!.text, /^Stopped early after concurrency 2 \(2 points\): /);
  assert.match(formatSweep(stoppedSweep()), /\n\nStopped early after concurrency 2/);
});

test('"no SLO": the CLI names its flag, VS Code its setting; neither says the other\'s words', () => {
  const run = stoppedSweep();
  const cli = sweepFacts(run, 'cli').find((f) => f.kind === 'verdict-no-slo')!.text;
  const vscode = sweepFacts(run, 'vscode').find((f) => f.kind === 'verdict-no-slo')!.text;
  assert.match(cli, /--slo/);
  assert.doesNotMatch(vscode, /--slo/);
  assert.match(vscode, /set llmProfiler\.slo in the settings/);
  assert.doesNotMatch(cli, /in the settings/);
  // the run file stores the fact alone, naming no surface's control: VS Code reads the same file
  const stored = run.sweep!.verdicts!.find((v) => v.kind === 'no-slo')!.message;
  assert.equal(stored, 'No SLO given: no operating point can be named.');
  // one sentence: each surface says the stored one, then how to give an SLO there
  for (const text of [cli, vscode]) assert.ok(text.startsWith(`⚠ ${stored.slice(0, -1)} (`), text);
});

test('a sweep\'s headline tiles say they pool every point; another run has no such note', () => {
  const run = fixtureSweepRun();
  const requests = run.sweep!.points.reduce((a, p) => a + p.summary.completed + p.summary.failed, 0);
  assert.equal(pooledNote(run), `All 4 points pooled (concurrency 1 to concurrency 8, ${requests} requests): each point's own figures are in the sweep view.`);
  assert.equal(pooledNote(fixtureRun({ seed: 3 })), undefined);
});

test('an export is named for its run, with its full date, and nothing a file system refuses', () => {
  const at = new Date(2026, 11, 5, 10, 14).toISOString();
  assert.equal(runFileName({ what: 'c=8 · 64 req', endpointName: 'vllm', startedAt: at }, '.csv'), 'c=8 · 64 req on vllm 2026-12-05 10-14.csv');
  // a URL's host, its port's colon replaced; slashes and control characters out
  assert.equal(runFileName({ what: 'a/b\u0007"c"', endpointName: 'http://127.0.0.1:8080/v1', startedAt: at }, '.json'), 'a-b -c- on 127.0.0.1-8080 2026-12-05 10-14.json');
  const run = { ...fixtureRun({ seed: 2 }), startedAt: at, endpoint: { url: 'http://h:1', api: 'openai-chat', name: 'vllm' } } as RunFile;
  assert.match(runFileName(runNameParts(run), '.trace.json'), /^c=\d+ · \d+ req on vllm 2026-12-05 10-14\.trace\.json$/);
  assert.ok(runFileName({ what: 'x'.repeat(400), endpointName: 'e', startedAt: at }, '.csv').length <= 154);
});

test('a reachability check in words: the time when it answered, the cause when it did not', () => {
  assert.equal(reachText({ reachable: true, ms: 23.4 }), 'reachable (23.4 ms)');
  // the check's own sentence, a run's words (src/engine/transport/connections.ts cannotConnect); a proxy's failure names the proxy
  const refused = 'cannot connect to http://127.0.0.1:1 (connection refused, nothing listens on that port; ECONNREFUSED)';
  assert.equal(reachText({ reachable: false, code: 'ECONNREFUSED', message: refused }), `not reachable: ${refused}`);
  const proxy = 'cannot connect to the proxy http://127.0.0.1:9 (connection refused, nothing listens on that port; ECONNREFUSED): is it running? (the endpoint was not tried)';
  assert.equal(reachText({ reachable: false, code: 'ECONNREFUSED', message: proxy }), `not reachable: ${proxy}`);
  assert.equal(reachText({ reachable: false, code: 'TIMEOUT', message: 'no answer' }, 3000), 'not reachable: no answer within 3,000 ms');
  const tls = 'the certificate of https://h is signed by a CA this machine does not trust (SELF_SIGNED_CERT_IN_CHAIN)';
  assert.equal(reachText({ reachable: false, code: 'SELF_SIGNED_CERT_IN_CHAIN', message: tls }), `not reachable: ${tls}`);
});

test('a variable whose value may span lines is asked in an editor: by a word of its name or its placeholder; never a secret', () => {
  for (const name of ['diff', 'code', 'text', 'content', 'body', 'prDiff', 'code_snippet', 'documentText', 'stack-trace-log']) {
    assert.equal(asksMultiline({ name }), true, name);
  }
  for (const name of ['topic', 'language', 'name', 'textbookTitle', 'api_key', 'token']) assert.equal(asksMultiline({ name }), false, name);
  assert.equal(asksMultiline({ name: 'change', placeholder: 'paste the diff here' }), true);
  assert.equal(asksMultiline({ name: 'notes', placeholder: 'multi-line notes' }), true);
  assert.equal(asksMultiline({ name: 'topic', placeholder: 'a topic, e.g. caching' }), false);
  // a default that already spans lines
  assert.equal(asksMultiline({ name: 'example', value: 'a\nb' }), true);
  assert.equal(asksMultiline({ name: 'secret_text' }), false, 'secret-looking: typed masked in the input box');
});

test('a prompt file\'s problem is marked at its column to the end of the token, else the line without its indentation', () => {
  assert.deepEqual(problemSpan('messages: [ {role: user, content: "unterminated', 34), { start: 34, end: 47 });
  assert.deepEqual(problemSpan('  role: wizard   ', undefined), { start: 2, end: 14 });
  assert.deepEqual(problemSpan('', undefined), { start: 0, end: 0 });
  assert.deepEqual(problemSpan('abc', 3), { start: 3, end: 3 }, 'a column at the end of the line: an empty span there (VS Code widens it)');
  assert.deepEqual(problemSpan('ab cd', 2), { start: 2, end: 3 }, 'at a space: one character');
});

test('a list of sweep values: each checked as its option, two at least, each once; the pickers and the form read it alike', () => {
  assert.deepEqual(parseValueList('concurrency', '1, 2,4 8'), { values: [1, 2, 4, 8] });
  assert.deepEqual(parseValueList('rate', '0.5, 2'), { values: [0.5, 2] });
  assert.deepEqual(parseValueList('concurrency', '4'), { problem: 'Enter two or more values, separated by commas' });
  assert.deepEqual(parseValueList('concurrency', '1, 1'), { problem: 'Enter each value once' });
  assert.match((parseValueList('concurrency', '1, 2.5') as { problem: string }).problem, /^2\.5: Enter a whole number/);
  assert.equal((parseValueList('rate', '1, 0') as { problem: string }).problem, '0: Enter a number above 0');
  assert.deepEqual(parseSweepValues('promptTokens', '128, 512'), parseValueList('promptTokens', '128, 512'));
});
