// The per-workspace run store: save, list newest first, a corrupt file reported and skipped, delete,
// the latest run of a prompt, and a run directory that does not exist yet.
import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { latestMeasuredOn, PROMPT_REF_KEY, RunStore } from '../../src/extension/runStore';
import { runFileName } from '../../src/engine/core/runId';
import { fixtureRun } from '../support/fixtureRuns';
import { readRunFile, serializeRunFile, writeRunFile } from '../../src/engine/files/runFile';
import { Scrubber, scrubRun } from '../../src/engine/core/redact';
import type { RunFile } from '../../src/engine/core/types';

/** The store takes a scrubbed run (RunsModel.save scrubs with the log's scrubber). */
const safe = (run: RunFile) => scrubRun(run, new Scrubber());

test('save, list, corrupt file skipped with a message, delete, prompt lookup', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'llmp-runs-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const store = new RunStore(join(dir, 'runs'));
  assert.deepEqual(await store.list(), { runs: [], problems: [] });

  const a = { ...fixtureRun({ seed: 1 }), id: 'run-a', startedAt: '2026-01-01T00:00:00.000Z' };
  const b = { ...fixtureRun({ seed: 2 }), id: 'run/b', startedAt: '2026-01-02T00:00:00.000Z', [PROMPT_REF_KEY]: { file: '/w/x.prompt.md', startLine: 3, name: 'greet' } };
  const pa = await store.save(safe(a));
  const pb = await store.save(safe(b));
  assert.equal(pb, join(dir, 'runs', 'run_b.json'));
  assert.equal(runFileName('a:b c'), 'a_b_c.json');
  await writeFile(join(dir, 'runs', 'broken.json'), '{"format":"llm-profiler.run","version":1,"id":"x",');

  const { runs, problems } = await store.list();
  assert.deepEqual(runs.map((r) => r.id), ['run/b', 'run-a']);
  assert.equal(runs[1]!.path, pa);
  assert.equal(problems.length, 1);
  assert.match(problems[0]!.path, /broken\.json$/);
  assert.ok(problems[0]!.message.length > 10);
  assert.equal(runs[0]!.completed, b.summary.completed);
  assert.equal(runs[0]!.ttftP50Ms, b.summary.ttftMs.p50);

  assert.equal((await store.latestForPrompt('/w/x.prompt.md', 3))?.id, 'run/b');
  assert.equal(await store.latestForPrompt('/w/x.prompt.md', 4), undefined);
  assert.equal((await store.load('run/b')).id, 'run/b');

  await store.delete('run/b');
  await store.delete('never-existed');
  assert.deepEqual((await store.list()).runs.map((r) => r.id), ['run-a']);
  assert.ok(!(await readdir(join(dir, 'runs'))).some((n) => n.endsWith('.tmp')));
});

test('a file that failed to read is not read again at every listing, until it changes', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'llmp-runs-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const reads: string[] = [];
  const store = new RunStore(dir, { readRunFile: (p) => { reads.push(p); return readRunFile(p); }, writeRunFile });
  await store.save(safe({ ...fixtureRun({ seed: 1 }), id: 'good' }));
  const broken = join(dir, 'broken.json');
  await writeFile(broken, '{"format":"llm-profiler.run",');
  for (let i = 0; i < 3; i++) {
    const { runs, problems } = await store.list();
    assert.deepEqual(runs.map((r) => r.id), ['good']);
    assert.equal(problems.length, 1, 'the problem is still reported each time');
  }
  assert.equal(reads.filter((p) => p === broken).length, 1, 'read once');
  await writeFile(broken, serializeRunFile({ ...fixtureRun({ seed: 2 }), id: 'mended' }));
  assert.deepEqual((await store.list()).runs.map((r) => r.id).sort(), ['good', 'mended']);
  assert.equal(reads.filter((p) => p === broken).length, 2, 'read again once it changed');
});

test('the last run measured on a URL skips a prompt\'s runs and other tools\' imported results, newer or not', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'llmp-runs-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const store = new RunStore(join(dir, 'runs'));
  const base = fixtureRun({ seed: 3 });
  const url = base.endpoint.url;
  await store.save(safe({ ...base, id: 'measured', startedAt: '2026-01-01T00:00:00.000Z' }));
  await store.save(safe({ ...fixtureRun({ seed: 4 }), id: 'prompt', startedAt: '2026-01-02T00:00:00.000Z', [PROMPT_REF_KEY]: { file: '/w/x.prompt.md', startLine: 3, name: 'greet' } }));
  await store.save(safe({ ...fixtureRun({ seed: 5 }), id: 'imported', startedAt: '2026-01-03T00:00:00.000Z', importedFrom: { tool: 'guidellm', file: 'benchmarks.json', startTimes: 'absolute' } }));
  const { runs } = await store.list();
  assert.deepEqual(runs.map((r) => [r.id, r.url]), [['imported', url], ['prompt', url], ['measured', url]], 'all three on one URL, newest first');
  assert.equal(latestMeasuredOn(runs, url)?.id, 'measured');
  assert.equal(latestMeasuredOn(runs.filter((r) => r.id !== 'measured'), url), undefined);
  assert.equal(latestMeasuredOn(runs, 'http://127.0.0.1:1/other'), undefined);
});
