// The CLI killed with SIGKILL at a random moment of a run, a sweep and a repeated run, many times:
// `llm-profiler recover` then gives a run holding every request the step server logged as complete
// more than two seconds before the kill (matched by response id), none twice, none the server did not
// finish. The kill times are drawn at random and printed, so a failure names the moment to try again.
import { strict as assert } from 'node:assert';
import { mkdir, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { RunFile } from '../../src/engine/core/types';
import { parseRunFile } from '../../src/engine/files/runFile';
import { buildCli, runCliProcess } from '../support/cli';
import { startStepServer } from '../support/stepServer';
import type { StepServer } from '../support/stepServer';

/** The margin the journal is promised to keep: it is flushed every second. */
const MARGIN_MS = 2000;
const TRIALS_PER_KIND = 4;

let server: StepServer;
let home: string;
before(async () => {
  buildCli();
  server = await startStepServer({ stepMs: 10, ttftMs: 20, tokens: 12 });
  home = await mkdtemp(join(tmpdir(), 'llmp-kill-'));
});
after(async () => {
  await server.close();
  await rm(home, { recursive: true, force: true });
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Kind {
  readonly name: string;
  readonly args: (out: string) => string[];
}

const url = () => `${server.url}/v1`;
const KINDS: readonly Kind[] = [
  { name: 'run', args: (out) => ['run', '--url', url(), '-n', '2000', '-c', '8', '--warmup', '0', '--out', out] },
  { name: 'sweep', args: (out) => ['sweep', '--url', url(), '--concurrency', '2,4,8,16', '-n', '48', '--warmup', '0', '--out', out] },
  { name: 'repeat', args: (out) => ['run', '--url', url(), '--repeat', '20', '-n', '24', '-c', '6', '--warmup', '0', '--out', out] },
];

/** Starts the CLI, kills it `delayMs` after the server saw its first request; the epoch ms of the kill. */
async function killed(args: string[], delayMs: number, env: Record<string, string>): Promise<number> {
  let kill: ((s: NodeJS.Signals) => void) | undefined;
  const seen = server.log.length;
  const done = runCliProcess(args, { env, killMs: 60_000, onSpawn: (k) => (kill = k) });
  const t0 = Date.now();
  while (server.log.length === seen) {
    assert.ok(Date.now() - t0 < 20_000, 'the CLI sent a request within 20 s');
    await sleep(5);
  }
  await sleep(delayMs);
  const killAt = Date.now();
  kill!('SIGKILL');
  const r = await done;
  assert.equal(r.signal, 'SIGKILL', `killed while running (it ended first: ${r.stderr.slice(-300)})`);
  return killAt;
}

/** Each recovered point's indexes name its own requests (run at its concurrency), no two points share one. */
function checkPoints(run: RunFile, why: string): void {
  const byIndex = new Map(run.requests.map((r) => [r.index, r]));
  const seen = new Set<number>();
  for (const p of run.sweep?.points ?? []) {
    for (const i of p.requestIndexes) {
      assert.ok(!seen.has(i), `${why}: request ${i} in two points`);
      seen.add(i);
      assert.ok(byIndex.has(i), `${why}: point ${p.label} names request ${i}, which is in the run`);
    }
    assert.equal(p.requestIndexes.length, 48, `${why}: point ${p.label} finished with its 48 requests`);
  }
}

/** Every repetition but the one cut short holds its 24 requests; the cut one is named. */
function checkRepetitions(run: RunFile, why: string): void {
  const reps = run.repeats ?? [];
  assert.ok(reps.length >= 1, `${why}: repetitions kept`);
  const cut = run.interrupted?.unfinishedRepetition;
  for (const r of reps) {
    if (r.index === cut) assert.ok(r.requestIndexes.length < 24, `${why}: the cut repetition ${r.index} lacks requests`);
    else assert.equal(r.requestIndexes.length, 24, `${why}: repetition ${r.index} holds its 24 requests`);
  }
}

async function trial(kind: Kind, k: number): Promise<void> {
  const dir = join(home, `${kind.name}-${k}`);
  const env = { LLM_PROFILER_STATE: join(home, 'state') };
  const delayMs = Math.round(1500 + Math.random() * 4500);
  const first = server.log.length;
  await mkdir(dir);
  const killAt = await killed(kind.args(join(dir, 'r.json')), delayMs, env);
  const why = `${kind.name} killed ${delayMs} ms after its first request`;
  const journals = (await readdir(dir)).filter((n) => n.endsWith('.journal.jsonl'));
  assert.equal(journals.length, 1, `${why}: one journal beside --out (${journals.join(', ')})`);

  const rec = await runCliProcess(['recover', join(dir, 'r.json')], { env });
  assert.equal(rec.code, 0, `${why}: recover exits 0: ${rec.stderr}`);
  assert.match(rec.stdout, /Interrupted: the process stopped/);
  const run: RunFile = parseRunFile(await readFile(join(dir, 'r.json'), 'utf8'));
  assert.deepEqual((await readdir(dir)).filter((n) => n.endsWith('.journal.jsonl')), [], `${why}: the journal is gone once the run file is in place`);
  assert.ok(run.interrupted, `${why}: marked interrupted`);

  const ids = run.requests.map((r) => r.responseId);
  assert.equal(new Set(ids).size, ids.length, `${why}: no request twice`);
  const logged = server.log.slice(first);
  const complete = new Set(logged.filter((e) => e.endedAt !== undefined && !e.clientClosed).map((e) => e.streamId));
  for (const id of ids) assert.ok(complete.has(id), `${why}: ${id} was completed by the server`);
  const due = logged.filter((e) => e.endedAt !== undefined && !e.clientClosed && e.endedAt < killAt - MARGIN_MS).map((e) => e.streamId!);
  const have = new Set(ids);
  const missing = due.filter((id) => !have.has(id));
  assert.deepEqual(missing, [], `${why}: ${missing.length} of ${due.length} requests completed > 2 s before the kill are missing`);
  if (kind.name === 'sweep') checkPoints(run, why);
  if (kind.name === 'repeat') checkRepetitions(run, why);
  console.log(`${why}: ${ids.length} recovered, ${due.length} due, in flight ${run.interrupted.inFlight}`);
}

for (const kind of KINDS) {
  test(`SIGKILL at random moments of a ${kind.name}: recover keeps every request finished 2 s before, once`, async () => {
    for (let k = 0; k < TRIALS_PER_KIND; k++) await trial(kind, k);
  });
}

test('a run with --out where a killed run left its journal says so, and how to recover it', async () => {
  const dir = join(home, 'again');
  const env = { LLM_PROFILER_STATE: join(home, 'state-again') };
  await mkdir(dir);
  await killed(KINDS[0]!.args(join(dir, 'r.json')), 1500, env);
  const r = await runCliProcess(['run', '--url', url(), '-n', '2', '--out', join(dir, 'r.json')], { env });
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, /A run against http:\/\/127\.0\.0\.1:\d+\/v1 stopped at .* with \d+ of 2000 requests\. Its journal: llm-profiler recover .*r\.json\.[^ ]+\.journal\.jsonl/);
});
