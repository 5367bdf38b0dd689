// `npm run build:llama-server`: builds llama.cpp's own llama-server from the source node-llama-cpp
// ships (node_modules/node-llama-cpp/llama/gitRelease.bundle) with the system cmake and C++ compiler,
// into a cache outside the repository (~/.cache/llm-profiler/llama-server-<release>/bin/llama-server).
// Nothing is downloaded. The launcher finds the result on its own (see findLlamaServer).
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, renameSync, rmSync, writeFileSync, chmodSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { llamaCppRelease, llamaServerCacheDir, packageRoot } from '../src/localServer/paths';

function run(cmd: string, args: string[], cwd?: string): void {
  console.log(`$ ${cmd} ${args.join(' ')}`);
  const r = spawnSync(cmd, args, { stdio: 'inherit', cwd });
  if (r.error) throw new Error(`${cmd} could not start: ${r.error.message}`);
  if (r.status !== 0) throw new Error(`${cmd} failed (exit ${r.status ?? r.signal})`);
}

function need(tool: string): void {
  const r = spawnSync(tool, ['--version'], { stdio: 'ignore' });
  if (r.error || r.status !== 0) {
    throw new Error(`${tool} is needed to build llama-server (on Debian/Ubuntu: apt-get install cmake g++ git)`);
  }
}

function main(): number {
  const force = process.argv.includes('--force');
  const root = packageRoot();
  const { tag, bundle } = llamaCppRelease(root);
  if (!existsSync(bundle)) {
    console.error(`llama.cpp source bundle not found: ${bundle} (is node-llama-cpp installed?)`);
    return 1;
  }
  const dest = llamaServerCacheDir(root);
  const bin = join(dest, 'bin', 'llama-server');
  if (existsSync(bin) && !force) {
    console.log(`llama-server already built: ${bin} (--force to rebuild)`);
    return 0;
  }
  for (const t of ['git', 'cmake', 'c++']) need(t);

  const src = join(dest, 'src');
  const build = join(dest, 'build');
  mkdirSync(dest, { recursive: true });
  if (!existsSync(join(src, 'CMakeLists.txt'))) {
    const tmp = `${src}.tmp-${process.pid}`;
    rmSync(tmp, { recursive: true, force: true });
    run('git', ['clone', '--quiet', bundle, tmp]);
    rmSync(src, { recursive: true, force: true });
    renameSync(tmp, src);
  }
  const jobs = String(Math.max(1, availableParallelism()));
  run('cmake', [
    '-S', src, '-B', build,
    '-DCMAKE_BUILD_TYPE=Release',
    '-DBUILD_SHARED_LIBS=OFF', // one self-contained binary that can be copied out of build/
    '-DGGML_NATIVE=ON',
    '-DLLAMA_USE_PREBUILT_UI=OFF', '-DLLAMA_BUILD_UI=OFF', // no download of the web UI
    '-DLLAMA_OPENSSL=OFF',
    '-DLLAMA_BUILD_TESTS=OFF', '-DLLAMA_BUILD_EXAMPLES=OFF',
  ]);
  run('cmake', ['--build', build, '--config', 'Release', '--target', 'llama-server', '-j', jobs]);
  const built = join(build, 'bin', 'llama-server');
  if (!existsSync(built)) {
    console.error(`the build finished but ${built} is missing`);
    return 1;
  }
  mkdirSync(join(dest, 'bin'), { recursive: true });
  copyFileSync(built, `${bin}.tmp`);
  chmodSync(`${bin}.tmp`, 0o755);
  renameSync(`${bin}.tmp`, bin);
  writeFileSync(join(dest, 'info.json'), JSON.stringify({ tag, builtAt: new Date().toISOString() }, null, 2) + '\n');
  console.log(`\nllama-server built: ${bin}`);
  return 0;
}

try {
  process.exitCode = main();
} catch (e) {
  console.error((e as Error).message);
  process.exitCode = 1;
}
