// Running the CLI in tests: as a real process (node dist/cli.js, built once per test file by
// `buildCli`) or in this process through jobCommand with its own streams and environment.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { jobCommand } from '../../src/cli/jobCommand';
import type { JobCommandName } from '../../src/cli/jobCommand';
import type { CliIo } from '../../src/cli/io';

export const ROOT = join(__dirname, '../..');
export const CLI = join(ROOT, 'dist/cli.js');

/**
 * Builds dist/ (the CLI among it), for a test file's `before`; not when scripts/test.mjs has just
 * built it (LLMP_DIST_BUILT), where another test file may be running dist/ while this one starts.
 */
export function buildCli(): void {
  if (process.env.LLMP_DIST_BUILT === '1' && existsSync(CLI)) return;
  const r = spawnSync(process.execPath, ['esbuild.mjs'], { cwd: ROOT, encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  assert.ok(existsSync(CLI));
}

export interface CliProcessResult {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly ms: number;
}

export interface CliProcessOptions {
  /** Added to this process's environment. */
  readonly env?: Record<string, string>;
  /** Killed (SIGKILL) after this long: a hang shows as code null (default 60 s). */
  readonly killMs?: number;
  /** Called once the child runs, with a way to signal it (Ctrl+C tests). */
  readonly onSpawn?: (kill: (s: NodeJS.Signals) => void) => void;
  /** Run as this user and group (a test run as root showing what another user meets). */
  readonly uid?: number;
  readonly gid?: number;
}

/** `node dist/cli.js …args` from the repository root. */
export function runCliProcess(args: readonly string[], options: CliProcessOptions = {}): Promise<CliProcessResult> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const ids = { ...(options.uid !== undefined ? { uid: options.uid } : {}), ...(options.gid !== undefined ? { gid: options.gid } : {}) };
    const child = spawn(process.execPath, [CLI, ...args], { cwd: ROOT, env: { ...process.env, ...options.env }, stdio: ['ignore', 'pipe', 'pipe'], ...ids });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    child.on('error', reject);
    const timer = setTimeout(() => child.kill('SIGKILL'), options.killMs ?? 60_000);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr, ms: performance.now() - t0 });
    });
    options.onSpawn?.((s) => child.kill(s));
  });
}

export interface CliResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** A CLI command run in this process with its output captured: `call` gets the io (stdout, stderr, env, folder). */
export async function captureCli(call: (io: CliIo) => Promise<number>, options: { env: NodeJS.ProcessEnv; cwd: string }): Promise<CliResult> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (b: Buffer) => (out += b.toString()));
  stderr.on('data', (b: Buffer) => (err += b.toString()));
  const code = await call({ stdout, stderr, env: options.env, cwd: options.cwd });
  return { code, stdout: out, stderr: err };
}

/** `llm-profiler <command> …argv` in this process (the CLI's own code), with the given environment and folder. */
export function runJobCommand(command: JobCommandName, argv: readonly string[], options: { env: NodeJS.ProcessEnv; cwd: string }): Promise<CliResult> {
  return captureCli((io) => jobCommand(command, argv, io), options);
}
