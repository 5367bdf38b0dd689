// One "window" writing a run store, for test/integration/runStoreConcurrent.test.ts:
//   node --import tsx test/support/runStoreWriter.ts DIR TAG COUNT
// Prints `ready`, waits for DIR/../go, then through the real RunStore (the extension's, with the run
// files' own reader and writer) saves COUNT runs with fresh run ids, lists the store after each save
// (noting any problem it reports), deletes every third run it saved, and saves the run "shared" (the
// id both writers use, as two windows recovering one journal do) with its own content each time. Prints
// one JSON line: { saved, deleted, problems, startedAt, endedAt }.
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Scrubber, scrubRun } from '../../src/engine/core/redact';
import { newRunId } from '../../src/engine/core/runId';
import { readRunFile, writeRunFile } from '../../src/engine/files/runFile';
import { RunStore } from '../../src/extension/runStore';
import { fixtureRun } from './fixtureRuns';

async function main(): Promise<void> {
  const [dir, tag, countText] = process.argv.slice(2) as [string, string, string];
  const count = Number(countText);
  const store = new RunStore(dir, { readRunFile, writeRunFile: (path, run) => writeRunFile(path, run) });
  const scrubber = new Scrubber();
  const go = join(dirname(dir), 'go');
  process.stdout.write('ready\n');
  while (!existsSync(go)) await new Promise((r) => setTimeout(r, 2));
  const startedAt = Date.now();
  const saved: string[] = [];
  const deleted: string[] = [];
  const problems: string[] = [];
  for (let i = 0; i < count; i++) {
    const run = fixtureRun({ seed: i + 1, requests: 40, id: newRunId(), startedAt: new Date(startedAt + i).toISOString() });
    await store.save(scrubRun({ ...run, endpoint: { ...run.endpoint, name: tag } }, scrubber));
    saved.push(run.id);
    await store.save(scrubRun({ ...fixtureRun({ seed: 1000 + i, requests: 30, id: 'shared' }), endpoint: { ...run.endpoint, name: `${tag} ${i}` } }, scrubber));
    for (const p of (await store.list()).problems) problems.push(`${p.path}: ${p.message}`);
    if (i % 3 === 2) {
      const id = saved[i - 1]!;
      await store.delete(id);
      deleted.push(id);
    }
  }
  process.stdout.write(`${JSON.stringify({ saved, deleted, problems, startedAt, endedAt: Date.now() })}\n`);
}

void main();
