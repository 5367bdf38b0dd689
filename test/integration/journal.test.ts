// A run's journal against a real step server: what a run, a repeated run and a sweep write as they go
// is what their run files hold, and a journal cut anywhere (a torn last line, a point not finished)
// still recovers every request written whole, once.
import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import { appendFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { comparability } from '../../src/engine/analysis/comparable';
import { defaultWorkload } from '../../src/engine/core/workload';
import type { RunFile } from '../../src/engine/core/types';
import { JournalError, readJournal, readJournalHead, writerState } from '../../src/engine/files/journal';
import { parseRunFile, writeRunFile } from '../../src/engine/files/runFile';
import { recoverRun } from '../../src/engine/run/recover';
import { executeJob } from '../../src/jobs/execute';
import type { RunJob, SweepJob } from '../../src/jobs/job';
import { JobJournal } from '../../src/jobs/journal';
import { leftJournals } from '../../src/jobs/recovery';
import { leftLine } from '../../src/present/recoverText';
import { runFileName } from '../../src/engine/core/runId';
import { Scrubber, scrubRun } from '../../src/engine/core/redact';
import { startStepServer } from '../support/stepServer';
import type { StepServer } from '../support/stepServer';

let server: StepServer;
let dir: string;
before(async () => {
  server = await startStepServer({ stepMs: 5, ttftMs: 5 });
  dir = await mkdtemp(join(tmpdir(), 'llmp-journal-'));
});
after(async () => {
  await server.close();
  await rm(dir, { recursive: true, force: true });
});

const workload = (requests: number, concurrency = 3) =>
  defaultWorkload({ mode: { kind: 'closed', concurrency }, requests, warmup: 1, maxTokens: 6, prompt: { kind: 'synthetic', tokens: 16, sharedPrefix: false } });
const target = (): RunJob['target'] => ({ kind: 'endpoint', url: `${server.url}/v1`, api: 'openai-chat', model: 'scripted-model' });

let n = 0;
/** Runs a job with a journal left in place (as a killed run leaves it), and returns both. */
async function journaled(job: RunJob | SweepJob): Promise<{ run: RunFile; path: string }> {
  const journal = new JobJournal({ path: join(dir, `j${n++}.journal.jsonl`) });
  const run = await executeJob(job, { journal });
  await journal.abandon();
  return { run, path: journal.path };
}

const ids = (run: RunFile) => run.requests.map((r) => `${r.index}:${r.responseId}`).sort();

/** A recovered run read back as a run file, through the schema every run file passes. */
const roundTrip = (run: RunFile) => parseRunFile(JSON.stringify(run));

test('a run: the journal holds every request, and recovers to the run file it wrote, marked interrupted', async () => {
  const { run, path } = await journaled({ kind: 'run', failOnSlo: false, target: target(), workload: workload(12) });
  const j = await readJournal(path);
  assert.equal(j.head.id, run.id);
  assert.equal(j.skipped, 0);
  assert.equal(writerState(j.head), 'running', 'this process wrote it');
  const back = roundTrip(recoverRun(j, new Date('2030-01-01T00:00:00Z')));
  assert.deepEqual(ids(back), ids(run));
  assert.equal(back.summary.completed, 12);
  assert.equal(back.summary.ttftMs.p50, run.summary.ttftMs.p50);
  assert.equal(back.summary.tpotMs.p99, run.summary.tpotMs.p99);
  assert.ok(back.interrupted, 'marked interrupted');
  assert.equal(back.interrupted.finished, 12);
  assert.equal(back.interrupted.total, 12);
  assert.equal(back.interrupted.recoveredAt, '2030-01-01T00:00:00.000Z');
  const last = Math.max(...run.requests.map((r) => r.sentAt + (r.e2eMs ?? 0)));
  assert.equal(Date.parse(back.interrupted.lastRecordAt!), Math.floor(last));
  // it compares like any run, the interruption said first
  const said = comparability(run, back).find((p) => p.kind === 'interrupted');
  assert.match(said?.message ?? '', /NEW stopped mid-run \(recovered from its journal\)/);
  // A kept journal (the run ended, its file could not be written) is not interrupted.
  await appendFile(path, `${JSON.stringify({ t: 'end', at: Date.now(), cancelled: false })}\n`);
  assert.equal(recoverRun(await readJournal(path)).interrupted, undefined);
});

test('a journal cut by a kill: a torn last line is skipped, a line written twice counts once', async () => {
  const { run, path } = await journaled({ kind: 'run', failOnSlo: false, target: target(), workload: workload(8, 2) });
  const lines = (await readFile(path, 'utf8')).trimEnd().split('\n');
  const firstRequest = lines.find((l) => l.startsWith('{"t":"request"'))!;
  await writeFile(path, [...lines, firstRequest, firstRequest.slice(0, 40)].join('\n'));
  const j = await readJournal(path);
  assert.equal(j.skipped, 1, 'the torn line');
  const back = recoverRun(j);
  assert.deepEqual(ids(back), ids(run));
  assert.equal(back.interrupted?.skippedLines, 1);
});

test('a repeated run recovers its repetitions; a sweep its finished points, fitted, and names the one cut short', async () => {
  const rep = await journaled({ kind: 'run', failOnSlo: false, target: target(), workload: workload(6, 2), repeat: 3 });
  const r = roundTrip(recoverRun(await readJournal(rep.path)));
  assert.deepEqual(ids(r), ids(rep.run));
  assert.deepEqual(r.repeats?.map((s) => s.index), [0, 1, 2]);
  assert.deepEqual(r.requests.filter((x) => !x.warmup).map((x) => x.repeat), rep.run.requests.filter((x) => !x.warmup).map((x) => x.repeat));

  const sweep: SweepJob = { kind: 'sweep', failOnSlo: false, target: target(), dimension: 'concurrency', values: [1, 2, 4], workload: workload(8), stopOnSaturation: false };
  const sw = await journaled(sweep);
  const whole = roundTrip(recoverRun(await readJournal(sw.path)));
  assert.deepEqual(ids(whole), ids(sw.run));
  assert.deepEqual(whole.sweep?.points.map((p) => p.requestIndexes), sw.run.sweep?.points.map((p) => p.requestIndexes));
  assert.equal(whole.sweep?.fit?.kMs, sw.run.sweep?.fit?.kMs);
  assert.equal(whole.interrupted?.unfinishedPoint, undefined);

  // Cut inside the third point: two points kept and fitted, the third's finished requests kept too.
  const lines = (await readFile(sw.path, 'utf8')).trimEnd().split('\n');
  const second = lines.findIndex((l) => l.startsWith('{"t":"point","i":1'));
  const third = lines.slice(second + 1).filter((l) => l.startsWith('{"t":"request"')).slice(0, 3);
  await writeFile(sw.path, `${[...lines.slice(0, second + 1), ...third].join('\n')}\n`);
  const cut = roundTrip(recoverRun(await readJournal(sw.path)));
  assert.equal(cut.sweep?.points.length, 2);
  assert.equal(cut.interrupted?.unfinishedPoint, 'c=4');
  assert.equal(cut.requests.length, sw.run.sweep!.points[0]!.requestIndexes.length + sw.run.sweep!.points[1]!.requestIndexes.length + 3);
});

test('what is not a journal is refused plainly; a journal whose writer died reads as gone', async () => {
  const bad = join(dir, 'bad.journal.jsonl');
  await writeFile(bad, '{"format":"llm-profiler.run","version":1}\n');
  await assert.rejects(readJournal(bad), (e: Error) => e instanceof JournalError && /not an llm-profiler journal/.test(e.message));
  await assert.rejects(readJournal(join(dir, 'none.journal.jsonl')), /no such file/);
  const { path } = await journaled({ kind: 'run', failOnSlo: false, target: target(), workload: workload(2, 1) });
  const head = await readJournalHead(path);
  const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
  assert.equal(writerState({ ...head, pid: Number(dead.stdout) }), 'gone');
  assert.equal(writerState({ ...head, host: `${head.host}-elsewhere` }), 'elsewhere');
  // a pid alive again after a reboot (or in another container) is not the writer
  assert.equal(writerState({ ...head, pid: process.pid, proc: 'another-boot:1' }), 'gone');
});

test('a left journal is offered once its writer is gone; one whose run file is in place is stale and removed', async () => {
  const { run, path } = await journaled({ kind: 'run', failOnSlo: false, target: target(), workload: workload(4, 2) });
  const [headLine, ...rest] = (await readFile(path, 'utf8')).split('\n');
  const dead = Number(spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' }).stdout);
  await writeFile(path, [JSON.stringify({ ...JSON.parse(headLine!), pid: dead }), ...rest].join('\n'));
  const left = await leftJournals(dir);
  const mine = left.find((l) => l.path === path);
  assert.ok(mine, 'offered');
  assert.equal(mine.finished, 4);
  assert.equal(mine.total, 4);
  assert.match(leftLine(mine), /^A run against http:\/\/127\.0\.0\.1:\d+\/v1 stopped at .+ with 4 of 4 requests\.$/);
  // the run file written, the journal not yet removed (the process stopped in between): stale
  await writeRunFile(join(dir, runFileName(run.id)), scrubRun(run, new Scrubber()));
  const stale: string[] = [];
  assert.equal((await leftJournals(dir, { onStale: (p) => stale.push(p) })).some((l) => l.path === path), false);
  assert.deepEqual(stale, [path]);
  await assert.rejects(readFile(path), /ENOENT/);
});
