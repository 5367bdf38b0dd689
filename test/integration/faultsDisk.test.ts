// Faults around a run's --out, met for real: the CLI from its bundle against a real step server on
// 127.0.0.1, writing onto a real full disk (a tmpfs of a few KiB), a read-only one, a folder this user
// may not write (the CLI run as nobody, uid 65534: root passes every permission check), one made
// unwritable during the run, and one removed during the run. Each time: a clear error naming the
// path and the cause in words, a non-zero exit, never a run file at --out that reads as whole when it
// is not (no file, or the old one untouched), and every request the server finished kept: in the
// journal, which `llm-profiler recover` turns into the run, or in the run file written into the
// journal home ($LLM_PROFILER_STATE/journals).
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseRunFile } from '../../src/engine/files/runFile';
import type { RunFile } from '../../src/engine/core/types';
import { buildCli, runCliProcess } from '../support/cli';
import type { CliProcessOptions, CliProcessResult } from '../support/cli';
import { startStepServer } from '../support/stepServer';
import type { StepServer } from '../support/stepServer';

const NOBODY = 65534;
const isRoot = process.getuid?.() === 0;

/** Why a tmpfs cannot be mounted here (not root, no CAP_SYS_ADMIN in this container), or false when it can. */
function mountRefused(): string | false {
  const dir = mkdtempSync(join(tmpdir(), 'faults-probe-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=16k', 'tmpfs', dir], { stdio: 'pipe' });
    execFileSync('umount', [dir], { stdio: 'pipe' });
    return false;
  } catch (e) {
    return `mounting a tmpfs is refused here (${((e as { stderr?: Buffer }).stderr?.toString() ?? String(e)).trim()}): a full or read-only disk needs one`;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const NO_MOUNT = mountRefused();
const NOT_ROOT = isRoot ? false : 'runs as root, to run the CLI as another user (uid 65534) and take a folder from it';

before(buildCli);

interface Place {
  /** A fresh folder: the journal home goes in it (state/), and what is recovered. */
  readonly base: string;
  /** Where --out goes (a mount point when mounted). */
  readonly dir: string;
  readonly env: Record<string, string>;
}

/** A fresh folder with `dir` in it, a tmpfs of `size` when given (unmounted afterwards, whatever happened). */
async function inPlace(size: string | undefined, fn: (p: Place) => Promise<void>): Promise<void> {
  const base = mkdtempSync(join(tmpdir(), 'faults-disk-'));
  chmodSync(base, 0o755);
  const dir = join(base, 'out');
  mkdirSync(dir);
  let mounted = false;
  try {
    if (size !== undefined) {
      execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size},mode=0755`, 'tmpfs', dir]);
      mounted = true;
    }
    await fn({ base, dir, env: { LLM_PROFILER_STATE: join(base, 'state') } });
  } finally {
    if (mounted) {
      try {
        execFileSync('umount', [dir], { stdio: 'pipe' });
      } catch {
        execFileSync('umount', ['-l', dir], { stdio: 'pipe' });
      }
    }
    rmSync(base, { recursive: true, force: true });
  }
}

async function withStepServer(fn: (s: StepServer) => Promise<void>): Promise<void> {
  const s = await startStepServer({ stepMs: 2, ttftMs: 5 });
  try {
    await fn(s);
  } finally {
    await s.close();
  }
}

function runTo(s: StepServer, out: string, requests: number, options: CliProcessOptions & { maxTokens?: number }): Promise<CliProcessResult> {
  return runCliProcess(['run', '--url', s.url, '--api', 'openai-chat', '--requests', String(requests), '--concurrency', '4', '--max-tokens', String(options.maxTokens ?? 20), '--warmup', '0', '--out', out], options);
}

/** Every request the server finished is in the run, once, by its response id. */
function hasEveryFinished(run: RunFile, s: StepServer, requests: number): void {
  const finished = s.log.filter((l) => l.path === '/v1/chat/completions' && l.endedAt !== undefined).map((l) => l.streamId!);
  assert.equal(finished.length, requests, 'the server finished every request');
  const ids = run.requests.map((r) => r.responseId).sort();
  assert.deepEqual(ids, [...finished].sort(), 'the run holds each finished request once');
}

/** Resolves once the server has finished `n` requests. */
async function finishedAtLeast(s: StepServer, n: number): Promise<void> {
  while (s.log.filter((l) => l.endedAt !== undefined).length < n) await new Promise((r) => setTimeout(r, 10));
}

const journalsIn = (dir: string): string[] => readdirSync(dir).filter((n) => n.endsWith('.journal.jsonl'));

/** `recover JOURNAL --out F`: the run, read back; the journal is gone. */
async function recoverFrom(journal: string, out: string): Promise<RunFile> {
  const r = await runCliProcess(['recover', journal, '--out', out]);
  assert.equal(r.code, 0, r.stderr);
  assert.ok(!existsSync(journal), 'the journal goes once its run is written');
  return parseRunFile(readFileSync(out, 'utf8'));
}

/** The run the CLI wrote into the journal home, named on stderr. */
function fallbackRun(r: CliProcessResult, p: Place): RunFile {
  const m = /the run is kept in (\S+\.json)\n/.exec(r.stderr);
  assert.ok(m, `the run's place is named; stderr:\n${r.stderr}`);
  assert.ok(m[1]!.startsWith(join(p.base, 'state', 'journals')), m[1]);
  return parseRunFile(readFileSync(m[1]!, 'utf8'));
}

test('full disk, the journal fits: ENOSPC said with the path, the old run file untouched, the journal kept and recovered whole', { skip: NO_MOUNT }, async () => {
  await withStepServer((s) => inPlace('64k', async (p) => {
    const out = join(p.dir, 'run.json');
    const old = `${JSON.stringify({ format: 'an earlier run', filler: 'x'.repeat(3000) })}\n`;
    writeFileSync(out, old);
    // ≈ 46 KB of journal fits in 64 KiB beside the old file; the run file (≈ 62 KB, indented) does not fit beside them
    const r = await runTo(s, out, 90, { env: p.env });
    assert.equal(r.code, 1, r.stderr);
    assert.ok(r.stderr.includes(`could not write the run file ${out}: the disk is full (ENOSPC)`), r.stderr);
    assert.equal(readFileSync(out, 'utf8'), old, 'the old run file is untouched');
    const journals = journalsIn(p.dir);
    assert.equal(journals.length, 1, `left in the folder: ${readdirSync(p.dir).join(', ')}`);
    assert.deepEqual(readdirSync(p.dir).sort(), ['run.json', journals[0]!].sort(), 'no half-written temporary file left');
    const journal = join(p.dir, journals[0]!);
    assert.ok(r.stderr.includes(`every finished request is in the journal ${journal}: llm-profiler recover ${journal}`), r.stderr);
    hasEveryFinished(await recoverFrom(journal, join(p.base, 'recovered.json')), s, 90);
  }));
});

test('full disk, the journal fills too: the run is written into the journal home, said, with every finished request', { skip: NO_MOUNT }, async () => {
  await withStepServer((s) => inPlace('12k', async (p) => {
    const out = join(p.dir, 'run.json');
    const r = await runTo(s, out, 60, { env: p.env });
    assert.equal(r.code, 1, r.stderr);
    assert.ok(r.stderr.includes(`could not write the run file ${out}: the disk is full (ENOSPC)`), r.stderr);
    assert.match(r.stderr, /the journal .* could not be written \(ENOSPC|disk is full/);
    hasEveryFinished(fallbackRun(r, p), s, 60);
    assert.deepEqual(readdirSync(p.dir), [], 'nothing left at --out: no run file, no temporary file, no journal that lacks lines');
  }));
});

test('read-only disk: refused before the run, with the folder and the cause; nothing sent', { skip: NO_MOUNT }, async () => {
  await withStepServer((s) => inPlace('64k', async (p) => {
    execFileSync('mount', ['-o', 'remount,ro', p.dir]);
    const r = await runTo(s, join(p.dir, 'run.json'), 10, { env: p.env });
    assert.equal(r.code, 2, r.stderr);
    assert.ok(r.stderr.includes(`--out: the folder ${p.dir} cannot be written: the file system is read-only (EROFS)`), r.stderr);
    assert.equal(s.log.length, 0, 'no request was sent');
  }));
});

test('a folder this user may not write: refused before the run', { skip: NOT_ROOT }, async () => {
  await withStepServer((s) => inPlace(undefined, async (p) => {
    chmodSync(p.dir, 0o755);
    const r = await runTo(s, join(p.dir, 'run.json'), 10, { env: p.env, uid: NOBODY, gid: NOBODY });
    assert.equal(r.code, 2, r.stderr);
    assert.ok(r.stderr.includes(`--out: the folder ${p.dir} cannot be written: permission denied (EACCES)`), r.stderr);
    assert.equal(s.log.length, 0);
  }));
});

test('the folder made unwritable during the run: EACCES said, the journal kept and recovered whole', { skip: NOT_ROOT }, async () => {
  await withStepServer((s) => inPlace(undefined, async (p) => {
    chownSync(p.dir, NOBODY, NOBODY);
    mkdirSync(join(p.base, 'state'));
    chownSync(join(p.base, 'state'), NOBODY, NOBODY);
    const out = join(p.dir, 'run.json');
    const running = runTo(s, out, 60, { env: p.env, uid: NOBODY, gid: NOBODY, maxTokens: 40 });
    await finishedAtLeast(s, 8);
    chownSync(p.dir, 0, 0);
    const r = await running;
    assert.equal(r.code, 1, r.stderr);
    assert.ok(r.stderr.includes(`could not write the run file ${out}: permission denied (EACCES)`), r.stderr);
    assert.ok(!existsSync(out));
    const journals = journalsIn(p.dir);
    assert.equal(journals.length, 1, readdirSync(p.dir).join(', '));
    hasEveryFinished(await recoverFrom(join(p.dir, journals[0]!), join(p.base, 'recovered.json')), s, 60);
  }));
});

test('the folder removed during the run: said, not made again, the run written into the journal home whole', async () => {
  await withStepServer((s) => inPlace(undefined, async (p) => {
    const out = join(p.dir, 'run.json');
    const running = runTo(s, out, 60, { env: p.env, maxTokens: 40 });
    await finishedAtLeast(s, 8);
    rmSync(p.dir, { recursive: true, force: true });
    const r = await running;
    assert.equal(r.code, 1, r.stderr);
    assert.ok(r.stderr.includes(`could not write the run file ${out}: the folder ${p.dir} no longer exists (ENOENT)`), r.stderr);
    assert.ok(!existsSync(p.dir), 'the folder is not made again');
    assert.doesNotMatch(r.stderr, /every finished request is in the journal/, 'no journal named that no name reaches');
    hasEveryFinished(fallbackRun(r, p), s, 60);
  }));
});
