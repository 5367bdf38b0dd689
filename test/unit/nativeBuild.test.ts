// The native CPU backend's bookkeeping (src/localServer/nativeBuild.ts, cpuBackend.ts): when a cached
// build may be loaded, which backend a process runs (from its maps), the environment's choice, and a
// build that refuses clearly without its tools. The build itself (minutes) is not run here.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cpuBackendChoice, cpuBackendInUse, CPU_BACKEND_ENV } from '../../src/localServer/cpuBackend';
import { buildNativeCpuBackend, findNativeCpuBackend, NATIVE_CPU_LIB, nativeCmakeArgs, nativeCpuDir, NativeBuildError, parseCpuInfo } from '../../src/localServer/nativeBuild';
import type { NativeCpuInfo } from '../../src/localServer/nativeBuild';
import { llamaCppRelease, packageRoot } from '../../src/localServer/paths';

const CPUINFO = 'processor\t: 0\nmodel name\t: AMD EPYC\nflags\t\t: fpu sse avx2 avx512f avx512bw\n\nprocessor\t: 1\nflags\t\t: fpu\n';
const ROOT = packageRoot();
const NLC_VERSION = (JSON.parse(readFileSync(join(ROOT, 'node_modules', 'node-llama-cpp', 'package.json'), 'utf8')) as { version: string }).version;

/** Runs `fn` with the cache root in a fresh temporary folder. */
async function withCache<T>(fn: (cache: string) => T | Promise<T>): Promise<T> {
  const cache = mkdtempSync(join(tmpdir(), 'llmp-native-'));
  const before = process.env.LLM_PROFILER_CACHE;
  process.env.LLM_PROFILER_CACHE = cache;
  try {
    return await fn(cache);
  } finally {
    if (before === undefined) delete process.env.LLM_PROFILER_CACHE;
    else process.env.LLM_PROFILER_CACHE = before;
    rmSync(cache, { recursive: true, force: true });
  }
}

function fakeBuild(info: Partial<NativeCpuInfo> = {}): string {
  const dir = nativeCpuDir(ROOT);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, NATIVE_CPU_LIB), 'not really a library');
  const full: NativeCpuInfo = { tag: llamaCppRelease(ROOT).tag, nodeLlamaCpp: NLC_VERSION, cpuFlags: ['avx2', 'avx512f'], cpuModel: 'AMD EPYC', compiler: 'c++ 12', builtAt: '2026-01-01T00:00:00Z', buildSeconds: 1, ...info };
  writeFileSync(join(dir, 'info.json'), JSON.stringify(full));
  return dir;
}

test('parseCpuInfo reads the first processor: its flags (sorted) and model name', () => {
  assert.deepEqual(parseCpuInfo(CPUINFO), { flags: ['avx2', 'avx512bw', 'avx512f', 'fpu', 'sse'], model: 'AMD EPYC' });
  assert.deepEqual(parseCpuInfo(''), { flags: [], model: '' });
});

test('the native build lives in the cache root, named by the llama.cpp release', async () => {
  await withCache((cache) => {
    assert.equal(nativeCpuDir(ROOT), join(cache, `ggml-cpu-native-${llamaCppRelease(ROOT).tag}`));
  });
});

test('findNativeCpuBackend: used only when built for this release, this node-llama-cpp and a CPU this one covers', async () => {
  await withCache(() => {
    const none = findNativeCpuBackend({ root: ROOT, cpuinfo: CPUINFO, platform: 'linux', arch: 'x64' });
    assert.equal(none.ok, false);
    assert.match(!none.ok ? none.why : '', /not built \(llm-profiler serve --build native\)/);

    const dir = fakeBuild();
    const good = findNativeCpuBackend({ root: ROOT, cpuinfo: CPUINFO, platform: 'linux', arch: 'x64' });
    assert.equal(good.ok, true);
    assert.equal(good.ok && good.lib, join(dir, NATIVE_CPU_LIB));

    fakeBuild({ cpuFlags: ['avx2', 'avx512f', 'avx512_bf16', 'amx_tile'] });
    const otherCpu = findNativeCpuBackend({ root: ROOT, cpuinfo: CPUINFO, platform: 'linux', arch: 'x64' });
    assert.equal(otherCpu.ok, false);
    assert.match(!otherCpu.ok ? otherCpu.why : '', /avx512_bf16, amx_tile, which this one lacks: rebuild/);

    fakeBuild({ tag: 'b0001' });
    const oldTag = findNativeCpuBackend({ root: ROOT, cpuinfo: CPUINFO, platform: 'linux', arch: 'x64' });
    assert.match(!oldTag.ok ? oldTag.why : '', /built for llama\.cpp b0001/);

    fakeBuild({ nodeLlamaCpp: '0.0.1' });
    const oldNlc = findNativeCpuBackend({ root: ROOT, cpuinfo: CPUINFO, platform: 'linux', arch: 'x64' });
    assert.match(!oldNlc.ok ? oldNlc.why : '', /built against node-llama-cpp 0\.0\.1/);

    fakeBuild();
    const mac = findNativeCpuBackend({ root: ROOT, cpuinfo: CPUINFO, platform: 'darwin', arch: 'arm64' });
    assert.match(!mac.ok ? mac.why : '', /only built on Linux x64 \(this is darwin arm64\)/);
  });
});

test('cpuBackendInUse names the CPU module a process has mapped', () => {
  const line = (p: string) => `7f0000000000-7f0000001000 r-xp 00000000 08:01 1234                       ${p}`;
  const prebuilt = cpuBackendInUse([line('/x/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64/libggml-cpu-zen4.so'), line('/x/libggml-base.so')].join('\n'));
  assert.deepEqual(prebuilt, { kind: 'prebuilt', path: '/x/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64/libggml-cpu-zen4.so', variant: 'zen4' });
  const native = cpuBackendInUse([line(`/home/u/.cache/llm-profiler/ggml-cpu-native-v1/${NATIVE_CPU_LIB}`), line(`/home/u/.cache/llm-profiler/ggml-cpu-native-v1/${NATIVE_CPU_LIB}`)].join('\n'));
  assert.deepEqual(native, { kind: 'native', path: `/home/u/.cache/llm-profiler/ggml-cpu-native-v1/${NATIVE_CPU_LIB}`, variant: 'native' });
  assert.equal(cpuBackendInUse(line('/usr/lib/libc.so.6')).kind, 'unknown');
  assert.equal(cpuBackendInUse([line('/a/libggml-cpu-zen4.so'), line(`/b/${NATIVE_CPU_LIB}`)].join('\n')).variant, 'several');
});

test(`${CPU_BACKEND_ENV} chooses auto (default), native or prebuilt; anything else is an error naming it`, () => {
  assert.equal(cpuBackendChoice({}), 'auto');
  assert.equal(cpuBackendChoice({ [CPU_BACKEND_ENV]: 'Prebuilt' }), 'prebuilt');
  assert.equal(cpuBackendChoice({ [CPU_BACKEND_ENV]: 'native' }), 'native');
  assert.throws(() => cpuBackendChoice({ [CPU_BACKEND_ENV]: 'fast' }), /LLM_PROFILER_CPU_BACKEND must be auto, native, prebuilt \(got "fast"\)/);
});

test('the cmake line builds a loadable ggml-cpu for this CPU and downloads nothing', () => {
  const args = nativeCmakeArgs('/s', '/b');
  for (const a of ['-DGGML_BACKEND_DL=ON', '-DGGML_NATIVE=OFF', '-DCMAKE_C_FLAGS=-march=native', '-DCMAKE_CXX_FLAGS=-march=native', '-DCMAKE_PLATFORM_NO_VERSIONED_SONAME=ON', '-DLLAMA_USE_PREBUILT_UI=OFF', '-DGGML_OPENMP=OFF']) {
    assert.ok(args.includes(a), `${a} in ${args.join(' ')}`);
  }
});

test('the build refuses clearly when its tools are missing, and leaves nothing behind', { skip: process.platform !== 'linux' || process.arch !== 'x64' ? 'Linux x64 only' : false }, async () => {
  await withCache(async (cache) => {
    const empty = mkdtempSync(join(tmpdir(), 'llmp-nopath-'));
    try {
      await assert.rejects(
        buildNativeCpuBackend({ root: ROOT, env: { ...process.env, PATH: empty } }),
        (e: unknown) => e instanceof NativeBuildError && /git is needed to build the native CPU backend and was not found on PATH \(on Debian\/Ubuntu: apt-get install cmake g\+\+ git\)/.test((e as Error).message),
      );
      // git there, cmake not
      const git = spawnSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).stdout.trim();
      if (git) {
        symlinkSync(git, join(empty, 'git'));
        await assert.rejects(buildNativeCpuBackend({ root: ROOT, env: { ...process.env, PATH: empty } }), /cmake is needed to build the native CPU backend/);
      }
      const dir = nativeCpuDir(ROOT);
      assert.ok(!existsSync(dir) || readdirSync(dir).length === 0, 'no half-built files');
      assert.equal(readdirSync(cache).filter((f) => f.startsWith('ggml-cpu-native')).every((f) => readdirSync(join(cache, f)).length === 0), true);
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });
});

test('serve --build takes only "native", and not with --backend llama-server (exit 2, nothing built or started)', async () => {
  const { PassThrough } = await import('node:stream');
  const { serveCommand } = await import('../../src/cli/serve');
  const run = async (argv: string[]) => {
    const out = new PassThrough();
    const err = new PassThrough();
    let text = '';
    err.on('data', (b: Buffer) => (text += b.toString('utf8')));
    const code = await serveCommand(argv, { stdout: out, stderr: err, env: process.env, cwd: process.cwd() });
    return { code, text };
  };
  const bad = await run(['--build', 'fast']);
  assert.equal(bad.code, 2);
  assert.match(bad.text, /--build/);
  const withLlamaServer = await run(['--build', 'native', '--backend', 'llama-server']);
  assert.equal(withLlamaServer.code, 2);
  assert.match(withLlamaServer.text, /--build native builds the bundled server's CPU backend: it cannot be used with --backend llama-server/);
});
