// Two VS Code windows writing one run store at once (two windows without a folder share the global
// storage's runs/) lose nothing: two node processes, each with the extension's real RunStore over one
// real folder (test/support/runStoreWriter.ts), save runs, list, delete and save the same run id at
// the same time. The store is one file per run, each written to a temporary name of its own process
// and renamed into place, with no index or other file that two writers read, change and write back:
// afterwards every run saved and not deleted is there, whole, and nothing else; no listing ever saw a
// half-written file; the run both saved is whole and one of theirs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runFileName } from '../../src/engine/core/runId';
import { readRunFile, writeRunFile } from '../../src/engine/files/runFile';
import { Scrubber, scrubRun } from '../../src/engine/core/redact';
import { RunStore } from '../../src/extension/runStore';
import { fixtureRun } from '../support/fixtureRuns';

interface WriterReport {
  readonly saved: string[];
  readonly deleted: string[];
  readonly problems: string[];
  readonly startedAt: number;
  readonly endedAt: number;
}

/** A writer process; resolves `ready` once it waits for the start, `done` with its report. */
function startWriter(dir: string, tag: string, count: number): { ready: Promise<void>; done: Promise<WriterReport> } {
  const child = spawn(process.execPath, ['--import', 'tsx', join(__dirname, '../support/runStoreWriter.ts'), dir, tag, String(count)], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  let onReady!: () => void;
  const ready = new Promise<void>((resolve) => (onReady = resolve));
  child.stdout.on('data', (b: Buffer) => {
    out += b.toString();
    if (out.startsWith('ready\n')) onReady();
  });
  child.stderr.on('data', (b: Buffer) => (err += b.toString()));
  const done = new Promise<WriterReport>((resolve, reject) => {
    child.on('close', (code) => {
      if (code !== 0) reject(new Error(`writer ${tag} exited ${code}: ${err}`));
      else resolve(JSON.parse(out.split('\n')[1]!) as WriterReport);
    });
  });
  return { ready, done };
}

test('two processes writing one run store at once: every run kept, whole, none half-seen, none lost', async () => {
  const base = mkdtempSync(join(tmpdir(), 'runstore-two-'));
  const dir = join(base, 'runs');
  try {
    const a = startWriter(dir, 'window A', 60);
    const b = startWriter(dir, 'window B', 60);
    await Promise.all([a.ready, b.ready]);
    writeFileSync(join(base, 'go'), '');
    const [ra, rb] = await Promise.all([a.done, b.done]);
    const overlap = Math.min(ra.endedAt, rb.endedAt) - Math.max(ra.startedAt, rb.startedAt);
    console.log(`# the two writers overlapped for ${overlap} ms (A ${ra.endedAt - ra.startedAt} ms, B ${rb.endedAt - rb.startedAt} ms)`);
    assert.ok(overlap > 0.5 * Math.min(ra.endedAt - ra.startedAt, rb.endedAt - rb.startedAt), 'the writers ran at the same time');

    assert.deepEqual([...ra.problems, ...rb.problems], [], 'no listing saw a file it could not read');
    const kept = [...ra.saved, ...rb.saved].filter((id) => ![...ra.deleted, ...rb.deleted].includes(id));
    assert.equal(new Set([...ra.saved, ...rb.saved]).size, 120, 'every run its own id');
    const { runs, problems } = await new RunStore(dir).list();
    assert.deepEqual(problems, []);
    assert.deepEqual(runs.map((r) => r.id).sort(), [...kept, 'shared'].sort(), 'every run saved and not deleted, and no other');
    assert.deepEqual(readdirSync(dir).sort(), [...kept, 'shared'].map(runFileName).sort(), 'no temporary file left');
    for (const r of runs.filter((x) => x.id !== 'shared')) assert.equal(r.endpointName, ra.saved.includes(r.id) ? 'window A' : 'window B');
    const shared = await readRunFile(join(dir, runFileName('shared')));
    const m = /^window [AB] (\d+)$/.exec(shared.endpoint.name ?? '');
    assert.ok(m, `the run both saved is one of theirs: ${shared.endpoint.name}`);
    const theirs = fixtureRun({ seed: 1000 + Number(m[1]), requests: 30, id: 'shared' }).requests;
    assert.deepEqual(shared.requests, JSON.parse(JSON.stringify(theirs)), 'and whole');
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
});

test('a run the other window deletes between the listing and the read is gone, not a problem', async () => {
  const base = mkdtempSync(join(tmpdir(), 'runstore-race-'));
  try {
    const dir = join(base, 'runs');
    const writer = new RunStore(dir, { readRunFile, writeRunFile: (p, r) => writeRunFile(p, r) });
    const kept = await writer.save(scrubRun(fixtureRun({ seed: 1, id: 'kept' }), new Scrubber()));
    const doomed = await writer.save(scrubRun(fixtureRun({ seed: 2, id: 'doomed' }), new Scrubber()));
    // this window's reader, with the other window's delete landing just before it opens the file
    const reader = new RunStore(dir, {
      readRunFile: (p) => {
        if (p === doomed) unlinkSync(p);
        return readRunFile(p);
      },
      writeRunFile: (p, r) => writeRunFile(p, r),
    });
    const { runs, problems } = await reader.list();
    assert.deepEqual(problems, [], 'no "cannot be read" for a run that was deleted');
    assert.deepEqual(runs.map((r) => r.path), [kept]);
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
});
