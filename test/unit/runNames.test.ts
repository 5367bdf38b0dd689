// Run names (src/present/runText.ts): what tells one run from another in a tab title, the sidebar's
// runs list and the quick picks: the workload or the prompt, the endpoint, the start time.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { RunFile } from '../../src/engine/core/types';
import { indexEntry, PROMPT_REF_KEY } from '../../src/extension/runStore';
import { compareName, runLabel, runName, runNameParts, runWhat } from '../../src/present/runText';
import { clockFromAttribute, clockOf, clockTime } from '../../src/present/timeText';
import { fixtureRun } from '../support/fixtureRuns';

// local times, so the test reads the same in any time zone
const at = (day: number, h: number, m: number, s = 0) => new Date(2026, 11, day, h, m, s).toISOString();
/** The start of most runs here, as every surface says a time (in this machine's locale). */
const T = clockTime(at(4, 10, 14));

const base = fixtureRun({ seed: 1 });
type Over = Omit<Partial<RunFile>, 'workload'> & { workload?: Partial<RunFile['workload']>; promptRef?: unknown };
function run(over: Over = {}): RunFile {
  return {
    ...base,
    id: 'r1',
    startedAt: at(4, 10, 14),
    endpoint: { ...base.endpoint, name: 'ui-scripted', model: 'local-tiny' },
    ...over,
    workload: { ...base.workload, mode: { kind: 'closed', concurrency: 8 }, requests: 64, prompt: { kind: 'synthetic', tokens: 256, sharedPrefix: false }, ...over.workload },
  } as RunFile;
}
const name = (r: RunFile) => runName(runNameParts(r));

test('a plain run is named by its load, endpoint and time: two runs of one model with different workloads differ', () => {
  assert.equal(name(run()), `c=8 · 64 req on ui-scripted, ${T}`);
  const open = run({ workload: { mode: { kind: 'open', rate: 4, burstiness: 1 } } });
  assert.equal(name(open), `rate 4/s · 64 req on ui-scripted, ${T}`);
  assert.equal(name(run({ workload: { requests: undefined, durationS: 30 } })), `c=8 · 30 s on ui-scripted, ${T}`);
  assert.notEqual(name(run()), name(open));
  // an endpoint without a name (a URL): its host
  assert.equal(name(run({ endpoint: { url: 'http://127.0.0.1:8080/v1', api: 'openai-chat', model: 'local-tiny' } as RunFile['endpoint'] })), `c=8 · 64 req on 127.0.0.1:8080, ${T}`);
});

test('a run of a prompt is named by the prompt (file and name); the load only when more than one at a time', () => {
  const greet = run({ promptRef: { file: '/w/prompts/greet.prompt.md', startLine: 4 }, workload: { mode: { kind: 'closed', concurrency: 1 }, requests: 5 } });
  const rows = run({ promptRef: { file: '/w/prompts/rows.prompt.yml', startLine: 11, name: 'Rows · row 2' }, workload: { mode: { kind: 'closed', concurrency: 1 }, requests: 5 } });
  assert.equal(name(greet), `greet.prompt.md on ui-scripted, ${T}`);
  assert.equal(name(run({ ...greet, promptRef: { file: '/w/prompts/greet.prompt.md', startLine: 4, name: 'greet' } })), `greet.prompt.md on ui-scripted, ${T}`, 'the name the file\'s name gives is said once');
  assert.equal(name(rows), `rows.prompt.yml: Rows · row 2 on ui-scripted, ${T}`);
  assert.equal(name(run({ promptRef: { file: 'C:\\w\\greet.prompt.md', startLine: 4 } })), `greet.prompt.md · c=8 · 64 req on ui-scripted, ${T}`);
  // the CLI's --prompt-file and --dataset (no promptRef): the file, and the one prompt's name
  assert.equal(runWhat(run({ workload: { prompt: { kind: 'file', path: '/w/a.prompty' }, mode: { kind: 'closed', concurrency: 1 } }, prompts: [{ name: 'Summarize', sent: { maxTokens: 8 }, from: {} }] })), 'a.prompty: Summarize');
  assert.equal(runWhat(run({ workload: { prompt: { kind: 'dataset', path: '/w/sharegpt.jsonl' } } })), 'sharegpt.jsonl · c=8 · 64 req');
});

test('a sweep by what it swept; a cache check; the prefill dial', () => {
  const pts = (key: 'concurrency' | 'rate' | 'promptTokens', values: number[]) => values.map((v) => ({ label: String(v), [key]: v, summary: base.summary, requestIndexes: [] }));
  assert.equal(runWhat(run({ sweep: { dimension: 'concurrency', points: pts('concurrency', [1, 2, 4, 8, 16]) } })), 'sweep c 1–16');
  assert.equal(runWhat(run({ sweep: { dimension: 'rate', points: pts('rate', [1, 2, 4, 8]) } })), 'sweep rate 1–8/s');
  assert.equal(runWhat(run({ sweep: { dimension: 'promptTokens', points: pts('promptTokens', [128, 512, 2048]) } })), 'sweep prompt 128–2048 tok');
  assert.equal(runWhat(run({ sweep: { dimension: 'concurrency', points: pts('concurrency', [4]) } })), 'sweep c 4');
  assert.equal(runWhat(run({ sweep: { dimension: 'rate', points: pts('rate', [1, 2]) }, promptRef: { file: '/w/greet.prompt.md', startLine: 0 } })), 'sweep rate 1–2/s · greet.prompt.md');
  const check = { hit: true, message: 'cached' } as unknown as RunFile['prefixCache'];
  assert.equal(runWhat(run({ prefixCache: check })), 'cache check');
  assert.equal(runWhat(run({ prefixCache: check, promptRef: { file: '/w/greet.prompt.md', startLine: 0 } })), 'cache check · greet.prompt.md');
  const dial = { configs: [{ batchSize: 32 }, { batchSize: 512 }] } as unknown as RunFile['prefillDial'];
  assert.equal(runWhat(run({ prefillDial: dial })), 'prefill dial 32/512');
});

test('times: one form on every surface, the date and the time to the second, in the reader\'s locale', () => {
  const d = new Date(2025, 0, 2, 7, 1, 5);
  assert.equal(clockTime(d.toISOString()), d.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'medium' }));
  const utc = '2025-01-02T07:01:05Z';
  assert.equal(clockTime(utc, { locale: 'en-GB', timeZone: 'UTC' }), '2 Jan 2025, 07:01:05');
  assert.equal(clockTime(utc, { locale: 'en-US', timeZone: 'UTC' }), 'Jan 2, 2025, 7:01:05 AM');
  // the window's zone, not this process's: the host hands it to its pages (src/extension/clock.ts)
  assert.equal(clockTime(utc, { locale: 'en-GB', timeZone: 'Asia/Kolkata' }), '2 Jan 2025, 12:31:05');
  assert.equal(clockTime('not a time'), 'not a time');
  // a zone this runtime does not know: its own, not an exception
  assert.equal(clockTime(utc, { locale: 'en-GB', timeZone: 'Nowhere/Atlantis' }), clockTime(utc));
  // a run of another day or year says its date like any other
  assert.equal(name(run({ startedAt: at(1, 8, 0) })), `c=8 · 64 req on ui-scripted, ${clockTime(at(1, 8, 0))}`);
});

test('a compare names both sides distinctly: the shared endpoint once, ids when the rest is the same', () => {
  const a = { ...runNameParts(run({ workload: { mode: { kind: 'closed', concurrency: 1 }, requests: 5 } })), id: 'a' };
  const b = { ...runNameParts(run({ startedAt: at(4, 10, 20) })), id: 'b' };
  const T20 = clockTime(at(4, 10, 20));
  assert.equal(compareName(a, b), `c=1 · 5 req, ${T} vs c=8 · 64 req, ${T20} on ui-scripted`);
  const other = { ...b, endpointName: 'vllm' };
  assert.equal(compareName(a, other), `c=1 · 5 req on ui-scripted, ${T} vs c=8 · 64 req on vllm, ${T20}`);
  const sameMinute = { ...a, id: 'c', startedAt: at(4, 10, 14, 40) };
  assert.equal(compareName(a, sameMinute), `c=1 · 5 req, ${T} vs c=1 · 5 req, ${clockTime(at(4, 10, 14, 40))} on ui-scripted`);
  assert.equal(compareName(a, { ...a, id: 'd' }), `c=1 · 5 req, ${T} (a) vs c=1 · 5 req, ${T} (d) on ui-scripted`);
});

test('the run list (index entries) and the quick picks use the same names', () => {
  const r = run({ [PROMPT_REF_KEY]: { file: '/w/prompts/greet.prompt.md', startLine: 4 } });
  const entry = indexEntry(r, '/runs/r1.json');
  assert.equal(entry.what, 'greet.prompt.md · c=8 · 64 req');
  assert.equal(runLabel(entry), `greet.prompt.md · c=8 · 64 req on ui-scripted, ${T}`);
  assert.equal(runName(entry), name(r));
  // an odd file without a workload still gets a name
  const odd = indexEntry({ id: 'x', startedAt: at(4, 1, 2), endpoint: { url: 'http://h:1' }, summary: base.summary, requests: [] } as unknown as RunFile, '/x.json');
  assert.equal(runLabel(odd), `run on h:1, ${clockTime(at(4, 1, 2))}`);
});

test('the window\'s clock: VS Code\'s display language, made precise by the system\'s region; the system\'s zone; names say it', () => {
  const gb = { locale: 'en-GB', timeZone: 'Europe/Berlin' } as Intl.ResolvedDateTimeFormatOptions;
  assert.deepEqual(clockOf('en', gb), { locale: 'en-GB', timeZone: 'Europe/Berlin' }, 'the same language: the system\'s region');
  assert.deepEqual(clockOf('de', gb), { locale: 'de', timeZone: 'Europe/Berlin' }, 'another language: the display language');
  assert.deepEqual(clockOf('en-US', gb), { locale: 'en-US', timeZone: 'Europe/Berlin' }, 'a region asked: as asked');
  assert.deepEqual(clockOf(undefined, gb), { locale: 'en-GB', timeZone: 'Europe/Berlin' });
  assert.deepEqual(clockOf('not a tag!', gb), { locale: 'en-GB', timeZone: 'Europe/Berlin' });
  // a run's name in the window's clock: the tab's title and the sidebar's run list
  const clock = { locale: 'de-DE', timeZone: 'America/New_York' };
  const r = run({ startedAt: '2026-12-05T09:14:03.000Z' });
  assert.equal(runName(runNameParts(r), { clock }), 'c=8 · 64 req on ui-scripted, 05.12.2026, 04:14:03');
  assert.equal(runLabel(runNameParts(r), clock), 'c=8 · 64 req on ui-scripted, 05.12.2026, 04:14:03');
  // what a page reads from <body data-clock>
  assert.deepEqual(clockFromAttribute(JSON.stringify(clock)), clock);
  assert.equal(clockFromAttribute('{"locale":1}'), undefined);
  assert.equal(clockFromAttribute('not json'), undefined);
  assert.equal(clockFromAttribute(undefined), undefined);
});
