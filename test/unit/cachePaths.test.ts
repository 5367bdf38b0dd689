// Where the local server's code comes from never depends on the current folder (src/localServer/paths.ts):
// a relative XDG_CACHE_HOME is ignored (the XDG spec), a relative LLM_PROFILER_CACHE refused, and an
// empty or relative PATH entry (the current folder, to a program lookup) skipped when llama-server
// is looked for and when the native build runs git, cmake and the compiler. Each test runs in a
// folder that plays a repository with planted files.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { buildNativeCpuBackend, NativeBuildError } from '../../src/localServer/nativeBuild';
import { absolutePath, cacheRoot, findLlamaServer, packageRoot, userCacheHome } from '../../src/localServer/paths';

/** Runs `fn` inside a fresh folder (the "repository"), with process.env changes undone after. */
async function inRepo(fn: (repo: string) => void | Promise<void>): Promise<void> {
  const repo = realpathSync(mkdtempSync(join(tmpdir(), 'llmp-repo-')));
  const cwd = process.cwd();
  const env = { ...process.env };
  process.chdir(repo);
  try {
    await fn(repo);
  } finally {
    process.chdir(cwd);
    for (const k of Object.keys(process.env)) if (!(k in env)) delete process.env[k];
    Object.assign(process.env, env);
    rmSync(repo, { recursive: true, force: true });
  }
}

/** An executable script at `path` that leaves `marker` behind when run. */
function plant(path: string, marker: string): void {
  writeFileSync(path, `#!/bin/sh\ntouch '${marker}'\necho planted\nexit 0\n`);
  chmodSync(path, 0o755);
}

test('cacheRoot: a relative XDG_CACHE_HOME is ignored, an absolute one used; a relative HOME does not count either', () => {
  const home = homedir();
  assert.equal(cacheRoot({ HOME: home, XDG_CACHE_HOME: '.cache' }), join(home, '.cache', 'llm-profiler'));
  assert.equal(cacheRoot({ HOME: home, XDG_CACHE_HOME: 'x/../cache' }), join(home, '.cache', 'llm-profiler'));
  assert.equal(cacheRoot({ HOME: home, XDG_CACHE_HOME: '/var/cache/me' }), '/var/cache/me/llm-profiler');
  assert.equal(cacheRoot({ HOME: home, XDG_CACHE_HOME: '' }), join(home, '.cache', 'llm-profiler'));
  const fromPasswd = userCacheHome({ HOME: 'relative-home' });
  assert.ok(fromPasswd.startsWith('/') && !fromPasswd.includes('relative-home'), fromPasswd);
});

test('cacheRoot: an absolute LLM_PROFILER_CACHE is used as it is, a relative one is refused with its name', () => {
  assert.equal(cacheRoot({ LLM_PROFILER_CACHE: '/opt/llmp-cache/', XDG_CACHE_HOME: '/x' }), '/opt/llmp-cache');
  for (const v of ['cache', './cache', '../cache', '~/cache']) {
    assert.throws(() => cacheRoot({ LLM_PROFILER_CACHE: v }), new RegExp(`LLM_PROFILER_CACHE must be an absolute path \\(got "${v.replace(/[.]/g, '\\.')}"\\)`));
  }
});

test('the process environment: a relative XDG_CACHE_HOME never puts the cache in the current folder', async () => {
  await inRepo((repo) => {
    delete process.env.LLM_PROFILER_CACHE;
    process.env.XDG_CACHE_HOME = '.cache';
    assert.ok(!cacheRoot().startsWith(repo), cacheRoot());
    process.env.LLM_PROFILER_CACHE = 'cache';
    assert.throws(() => cacheRoot(), /LLM_PROFILER_CACHE must be an absolute path/);
  });
});

test('absolutePath keeps only absolute PATH entries', () => {
  assert.equal(absolutePath(['', '/usr/bin', '.', 'bin', './x', '/opt/b', ''].join(delimiter)), ['/usr/bin', '/opt/b'].join(delimiter));
  assert.equal(absolutePath(undefined), '');
});

test('findLlamaServer: a llama-server in the current folder is not found through an empty or relative PATH entry', async () => {
  await inRepo((repo) => {
    const marker = join(repo, 'ran');
    mkdirSync(join(repo, 'bin'));
    plant(join(repo, 'llama-server'), marker);
    plant(join(repo, 'bin', 'llama-server'), marker);
    const cache = join(repo, '..', `${repo.split('/').pop()}-cache`);
    process.env.LLM_PROFILER_CACHE = cache; // no built binary there
    try {
      const real = mkdtempSync(join(tmpdir(), 'llmp-bin-'));
      for (const path of ['', '.', 'bin', `${delimiter}/usr/bin`, `.${delimiter}bin${delimiter}./bin`]) {
        process.env.PATH = path;
        assert.equal(findLlamaServer(), undefined, `PATH=${JSON.stringify(path)}`);
      }
      plant(join(real, 'llama-server'), marker);
      process.env.PATH = ['', '.', real].join(delimiter);
      assert.equal(findLlamaServer(), join(real, 'llama-server'));
      rmSync(real, { recursive: true, force: true });
    } finally {
      rmSync(cache, { recursive: true, force: true });
    }
  });
});

test('the native build never runs a git, cmake or c++ from the current folder', { skip: process.platform !== 'linux' || process.arch !== 'x64' ? 'Linux x64 only' : false }, async () => {
  await inRepo(async (repo) => {
    const marker = join(repo, 'ran');
    for (const tool of ['git', 'cmake', 'c++']) plant(join(repo, tool), marker);
    const empty = mkdtempSync(join(tmpdir(), 'llmp-nopath-'));
    const cache = mkdtempSync(join(tmpdir(), 'llmp-cache-'));
    process.env.LLM_PROFILER_CACHE = cache;
    try {
      for (const path of [`${delimiter}${empty}`, `.${delimiter}${empty}`, `${empty}${delimiter}`]) {
        await assert.rejects(buildNativeCpuBackend({ root: packageRoot(), env: { ...process.env, PATH: path } }), (e: unknown) => e instanceof NativeBuildError && /git is needed/.test((e as Error).message), path);
        assert.equal(existsSync(marker), false, `a planted tool ran with PATH=${JSON.stringify(path)}`);
      }
    } finally {
      rmSync(empty, { recursive: true, force: true });
      rmSync(cache, { recursive: true, force: true });
    }
  });
});
