// What a release ships, used as a user would, outside the checkout: this machine's platform VSIX
// unzipped and its dist/cli.js run with no --url (the bundled server from the VSIX's own files),
// the same with node-llama-cpp taken out (a clear refusal, not a crash), and the CLI's npm tarball
// installed into an empty prefix and run as `llm-profiler`. The model cache is the user's (the
// synthetic model is made once); everything else lives in a temporary folder with no node_modules
// above it.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, sep } from 'node:path';
import { buildProduction, extractZip, hostPlatform, packageCli, packageVsix, zipEntries } from '../../scripts/package';
import { processesMentioning } from '../support/processes';

const host = hostPlatform();
let dir: string;
let built: string;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'llmp-packaging-'));
  assert.equal(existsSync(join(tmpdir(), 'node_modules')), false, `${tmpdir()} has a node_modules folder: the test would not show the package's own`);
  built = join(dir, 'build');
  await buildProduction(built);
});

after(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** `node <cli> run` against the bundled server: a short job, its output and exit code. */
function runCli(cmd: string, args: readonly string[], cwd: string): { status: number | null; out: string } {
  const r = spawnSync(cmd, [...args, 'run', '--requests', '2', '--warmup', '0', '--max-tokens', '8', '--prompt-tokens', '32'],
    { cwd, encoding: 'utf8', timeout: 180_000, env: { ...process.env, NODE_PATH: '' } });
  return { status: r.status, out: `${r.stdout}\n${r.stderr}` };
}

test('the platform VSIX\'s dist/cli.js, unzipped alone, starts the bundled server from the VSIX\'s own files and profiles it', { skip: host ? false : `node-llama-cpp ships no binary for ${process.platform}-${process.arch}` }, () => {
  const vsix = packageVsix(built, host!, dir);
  const names = zipEntries(vsix.path);
  assert.ok(names.some((n) => n.startsWith(`extension/node_modules/@node-llama-cpp/${host!.binary}/bins/`)), 'the VSIX carries the binary');
  const unzipped = join(dir, 'unzipped');
  extractZip(vsix.path, unzipped);
  const ext = join(unzipped, 'extension');
  const r = runCli(process.execPath, [join(ext, 'dist', 'cli.js')], dir);
  assert.equal(r.status, 0, r.out);
  assert.match(r.out, /starting the bundled llama\.cpp server/);
  assert.match(r.out, /Successful requests:\s+2/);
  assert.match(r.out, /^TTFT\s+\d/m);
  assert.deepEqual(processesMentioning(`${ext}${sep}dist${sep}localServer.mjs`), [], 'no server process is left');

  // the same files without node-llama-cpp: the universal VSIX's case, said plainly
  const bare = join(dir, 'bare');
  cpSync(ext, bare, { recursive: true, filter: (src) => !src.startsWith(join(ext, 'node_modules')) });
  const b = runCli(process.execPath, [join(bare, 'dist', 'cli.js')], dir);
  assert.notEqual(b.status, 0);
  assert.match(b.out, new RegExp(`Cannot find node-llama-cpp in ${join(bare, 'node_modules').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
  assert.doesNotMatch(b.out, /\n\s+at /, 'a message, not a stack trace');
});

test('the CLI\'s npm tarball installs into an empty prefix and runs as `llm-profiler` with its bundled server', { skip: host ? false : `node-llama-cpp ships no binary for ${process.platform}-${process.arch}` }, () => {
  const tgz = packageCli(built, dir);
  assert.ok(tgz.files.includes('node_modules/node-llama-cpp/package.json'), 'node-llama-cpp is bundled');
  assert.ok(!tgz.files.some((f) => f.startsWith('node_modules/@node-llama-cpp/')), 'no binary inside: each platform\'s comes as an optional dependency');
  const prefix = join(dir, 'prefix');
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const i = spawnSync(npm, ['install', '--global', '--prefix', prefix, '--prefer-offline', '--no-audit', '--no-fund', tgz.path], { cwd: dir, encoding: 'utf8', timeout: 300_000 });
  assert.equal(i.status, 0, `npm install -g failed:\n${i.stdout}\n${i.stderr}`);
  const installed = join(prefix, 'lib', 'node_modules', 'llm-profiler');
  const binary = JSON.parse(readFileSync(join(installed, 'node_modules', '@node-llama-cpp', host!.binary, 'package.json'), 'utf8')) as { name: string };
  assert.equal(binary.name, `@node-llama-cpp/${host!.binary}`, 'npm installed this platform\'s binary package');
  for (const gpu of ['linux-x64-cuda', 'linux-x64-cuda-ext', 'linux-x64-vulkan']) {
    assert.equal(existsSync(join(installed, 'node_modules', '@node-llama-cpp', gpu)), false, `no ${gpu} (GPU variants are not the CPU server's)`);
  }
  const bin = join(prefix, 'bin', 'llm-profiler');
  const v = spawnSync(bin, ['--version'], { encoding: 'utf8' });
  assert.equal(v.status, 0, v.stderr);
  assert.match(v.stdout, /\d+\.\d+\.\d+/);
  const r = runCli(bin, [], dir);
  assert.equal(r.status, 0, r.out);
  assert.match(r.out, /Successful requests:\s+2/);
  assert.match(r.out, /^TTFT\s+\d/m);
  assert.deepEqual(processesMentioning(join(installed, 'dist', 'localServer.mjs')), [], 'no server process is left');
});
