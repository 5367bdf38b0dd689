// The bundled server at native speed: llama.cpp's CPU backend (ggml-cpu) compiled for this machine's
// CPU (-march=native) from the source node-llama-cpp ships (node_modules/node-llama-cpp/llama/
// gitRelease.bundle), once, into the cache beside the models. The engine loads it in place of the
// prebuilt variant when it is there (see `prepareCpuBackend` in cpuBackend.ts).
//
// Why only ggml-cpu: node-llama-cpp's Linux x64 binary loads its CPU backend at run time, the best of
// libggml-cpu-{x64,haswell,…,zen4}.so that the CPU supports (GGML_BACKEND_DL). Those are built with
// feature flags (-mavx512f …) by an older compiler, without this CPU's tuning; the decode step of the
// small model took ~40% longer in the prebuilt zen4 variant than in the same source built natively
// (docs/local-server.md, "Why the prebuilt binary is slower"). One shared module, built against the prebuilt libggml-base.so's
// ABI (same llama.cpp release, unversioned soname), replaces it; the addon, libllama and libggml stay.
//
// Nothing is downloaded: the source is a git bundle in node_modules, the compiler and cmake are the
// system's. No `vscode` import.
import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { nodeLlamaCppVersion } from './nodeLlamaCpp';
import { absolutePath, cacheRoot, llamaCppRelease, packageRoot } from './paths';

/** The module's file name: ggml's loader takes `libggml-cpu-*.so` from the folder it is given. */
export const NATIVE_CPU_LIB = 'libggml-cpu-native.so';

/** What info.json beside the module records: the ABI it was built for and the CPU it was built on. */
export interface NativeCpuInfo {
  /** llama.cpp release (node_modules/node-llama-cpp/llama/llama.cpp.info.json). */
  readonly tag: string;
  /** node-llama-cpp's version: its prebuilt libggml-base.so is the ABI the module links against. */
  readonly nodeLlamaCpp: string;
  /** /proc/cpuinfo flags of the CPU it was built on: a CPU that lacks one of them must not load it. */
  readonly cpuFlags: readonly string[];
  readonly cpuModel: string;
  readonly compiler: string;
  readonly builtAt: string;
  readonly buildSeconds: number;
}

export type NativeCpuLookup =
  | { readonly ok: true; readonly dir: string; readonly lib: string; readonly info: NativeCpuInfo }
  | { readonly ok: false; readonly dir: string; readonly why: string };

/** The folder of the native CPU backend: <cache root>/ggml-cpu-native-<llama.cpp release>. */
export function nativeCpuDir(root: string = packageRoot()): string {
  return join(cacheRoot(), `ggml-cpu-native-${llamaCppRelease(root).tag.replace(/[^\w.-]/g, '_')}`);
}

/** The first processor's flags and model name in /proc/cpuinfo text. */
export function parseCpuInfo(text: string): { flags: string[]; model: string } {
  const field = (name: string) => new RegExp(`^${name}\\s*:\\s*(.*)$`, 'm').exec(text)?.[1]?.trim() ?? '';
  return { flags: field('flags').split(/\s+/).filter(Boolean).sort(), model: field('model name') };
}

function readCpuInfo(): string {
  try {
    return readFileSync('/proc/cpuinfo', 'utf8');
  } catch {
    return '';
  }
}

/** Why this platform cannot use a native CPU backend (undefined: it can). */
function unsupportedPlatform(platform: string = process.platform, arch: string = process.arch): string | undefined {
  // Only there does node-llama-cpp's prebuilt binary load its CPU backend as a separate module.
  if (platform !== 'linux' || arch !== 'x64') return `a native CPU backend is only built on Linux x64 (this is ${platform} ${arch})`;
  return undefined;
}

/**
 * The native CPU backend if it is built and safe to load here: same llama.cpp release and
 * node-llama-cpp version as installed, and this CPU has every flag of the CPU it was built on.
 */
export function findNativeCpuBackend(opts: { root?: string; cpuinfo?: string; platform?: string; arch?: string } = {}): NativeCpuLookup {
  const root = opts.root ?? packageRoot();
  const dir = nativeCpuDir(root);
  const bad = unsupportedPlatform(opts.platform, opts.arch);
  if (bad) return { ok: false, dir, why: bad };
  const lib = join(dir, NATIVE_CPU_LIB);
  if (!existsSync(lib)) return { ok: false, dir, why: 'not built (llm-profiler serve --build native)' };
  let info: NativeCpuInfo;
  try {
    info = JSON.parse(readFileSync(join(dir, 'info.json'), 'utf8')) as NativeCpuInfo;
  } catch {
    return { ok: false, dir, why: `${join(dir, 'info.json')} is missing or unreadable: rebuild with llm-profiler serve --build native` };
  }
  const tag = llamaCppRelease(root).tag;
  if (info.tag !== tag) return { ok: false, dir, why: `built for llama.cpp ${info.tag}, node-llama-cpp ships ${tag}: rebuild with llm-profiler serve --build native` };
  const nlc = nodeLlamaCppVersion(root);
  if (info.nodeLlamaCpp !== nlc) return { ok: false, dir, why: `built against node-llama-cpp ${info.nodeLlamaCpp}, ${nlc} is installed: rebuild with llm-profiler serve --build native` };
  const here = new Set(parseCpuInfo(opts.cpuinfo ?? readCpuInfo()).flags);
  const missing = (info.cpuFlags ?? []).filter((f) => !here.has(f));
  if (missing.length) return { ok: false, dir, why: `built on a CPU with ${missing.slice(0, 6).join(', ')}${missing.length > 6 ? ', …' : ''}, which this one lacks: rebuild with llm-profiler serve --build native` };
  return { ok: true, dir, lib, info };
}

export class NativeBuildError extends Error {
  override readonly name = 'NativeBuildError';
}

export interface NativeBuildOptions {
  readonly root?: string;
  /** Rebuild even when a usable build is there. */
  readonly force?: boolean;
  /** Progress and compiler output, line by line. */
  readonly log?: (line: string) => void;
  /** The tools' environment (PATH): tests point it at a folder without cmake. */
  readonly env?: NodeJS.ProcessEnv;
  readonly jobs?: number;
}

export interface NativeBuildResult {
  readonly dir: string;
  readonly lib: string;
  readonly info: NativeCpuInfo;
  /** false: it was already built. */
  readonly built: boolean;
}

/** The tool's first line of `--version`, or an error naming what to install. */
function need(tool: string, env: NodeJS.ProcessEnv): string {
  const r = spawnSync(tool, ['--version'], { env, encoding: 'utf8' });
  if (r.error || r.status !== 0) {
    throw new NativeBuildError(`${tool} is needed to build the native CPU backend and was not found on PATH (on Debian/Ubuntu: apt-get install cmake g++ git); the prebuilt backend keeps working without it`);
  }
  return r.stdout.split('\n')[0]!.trim();
}

function run(cmd: string, args: readonly string[], env: NodeJS.ProcessEnv, log: (line: string) => void): Promise<void> {
  log(`$ ${cmd} ${args.join(' ')}`);
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    // Progress lines only ([ 42%] …, cmake's summary); the compiler's warnings are kept for a failure.
    const tail: string[] = [];
    const onData = (buf: Buffer) => {
      for (const line of buf.toString('utf8').split('\n')) {
        if (!line.trim()) continue;
        if (/^\[\s*\d+%\]|^-- (Configuring|Generating|Build files)/.test(line)) log(line);
        tail.push(line);
        if (tail.length > 40) tail.shift();
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('error', (e) => reject(new NativeBuildError(`${cmd} could not start: ${e.message}`)));
    child.on('close', (code, signal) => {
      if (code === 0) resolve();
      else reject(new NativeBuildError(`${cmd} ${args[0] ?? ''} failed (exit ${code ?? signal}):\n${tail.join('\n')}`));
    });
  });
}

/**
 * The cmake options: ggml's CPU backend as a loadable module (GGML_BACKEND_DL) for this CPU. ggml
 * refuses GGML_NATIVE with GGML_BACKEND_DL (its loader's feature score is built from the explicit
 * flags), so -march=native comes through the compiler flags, on top of ggml's AVX2-level defaults
 * that the score checks. An unversioned soname, so that the module's `libggml-base.so` need is met by
 * the prebuilt one already loaded; no OpenMP, as the prebuilt (the addon has no OpenMP runtime).
 */
export function nativeCmakeArgs(src: string, build: string): string[] {
  return [
    '-S', src, '-B', build,
    '-DCMAKE_BUILD_TYPE=Release',
    '-DBUILD_SHARED_LIBS=ON', '-DGGML_BACKEND_DL=ON',
    '-DGGML_NATIVE=OFF', '-DGGML_CPU_ALL_VARIANTS=OFF',
    '-DCMAKE_C_FLAGS=-march=native', '-DCMAKE_CXX_FLAGS=-march=native',
    '-DGGML_OPENMP=OFF', '-DGGML_CCACHE=OFF',
    '-DCMAKE_PLATFORM_NO_VERSIONED_SONAME=ON', '-DCMAKE_SKIP_RPATH=ON',
    '-DLLAMA_BUILD_COMMON=OFF', '-DLLAMA_BUILD_TOOLS=OFF', '-DLLAMA_BUILD_SERVER=OFF',
    '-DLLAMA_BUILD_TESTS=OFF', '-DLLAMA_BUILD_EXAMPLES=OFF',
    '-DLLAMA_OPENSSL=OFF', '-DLLAMA_USE_PREBUILT_UI=OFF', '-DLLAMA_BUILD_UI=OFF', // nothing downloaded
  ];
}

/** Builds the native CPU backend into the cache (a few minutes on 2 cores), unless a usable one is there. */
export async function buildNativeCpuBackend(opts: NativeBuildOptions = {}): Promise<NativeBuildResult> {
  const root = opts.root ?? packageRoot();
  const log = opts.log ?? (() => undefined);
  // git, cmake and the compiler are looked up in PATH's absolute folders only: an empty or relative
  // entry would run whatever the current folder (a repository) has under those names.
  const given = opts.env ?? process.env;
  const env = { ...given, PATH: absolutePath(given.PATH) };
  const bad = unsupportedPlatform();
  if (bad) throw new NativeBuildError(bad);
  const existing = findNativeCpuBackend({ root });
  if (existing.ok && !opts.force) return { dir: existing.dir, lib: existing.lib, info: existing.info, built: false };
  const { tag, bundle } = llamaCppRelease(root);
  if (!existsSync(bundle)) {
    // The VSIXs and the npm package leave llama.cpp's source (34 MB) out; a build made from a checkout
    // of the same release lands in the same cache folder and serves every install of it.
    throw new NativeBuildError(existsSync(join(root, 'node_modules', 'node-llama-cpp', 'package.json'))
      ? `this installed package does not carry llama.cpp's source (${bundle} is left out of the VSIX and the npm package): ` +
        `run \`llm-profiler serve --build native\` from a checkout of LLM Profiler after \`npm ci\`; its build goes to ${nativeCpuDir(root)} and every install of llama.cpp ${tag} uses it`
      : `llama.cpp source bundle not found: ${bundle} (is node-llama-cpp installed?)`);
  }
  need('git', env);
  need('cmake', env);
  const compiler = need('c++', env);

  const t0 = performance.now();
  const dir = nativeCpuDir(root);
  const work = join(dir, `work-${process.pid}`);
  const src = join(work, 'src');
  const build = join(work, 'build');
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  try {
    await run('git', ['-c', 'advice.detachedHead=false', 'clone', '--quiet', bundle, src], env, log);
    await run('cmake', nativeCmakeArgs(src, build), env, log);
    const jobs = String(opts.jobs ?? Math.max(1, availableParallelism()));
    await run('cmake', ['--build', build, '--config', 'Release', '--target', 'ggml-cpu', '-j', jobs], env, log);
    const built = [join(build, 'bin', 'libggml-cpu.so'), join(build, 'ggml', 'src', 'libggml-cpu.so')].find((p) => existsSync(p));
    if (!built) throw new NativeBuildError(`the build finished but libggml-cpu.so is missing under ${build}`);
    const lib = join(dir, NATIVE_CPU_LIB);
    copyFileSync(built, `${lib}.tmp`);
    renameSync(`${lib}.tmp`, lib);
    const cpu = parseCpuInfo(readCpuInfo());
    const info: NativeCpuInfo = {
      tag,
      nodeLlamaCpp: nodeLlamaCppVersion(root),
      cpuFlags: cpu.flags,
      cpuModel: cpu.model,
      compiler,
      builtAt: new Date().toISOString(),
      buildSeconds: Math.round((performance.now() - t0) / 1000),
    };
    writeFileSync(join(dir, 'info.json'), `${JSON.stringify(info, null, 2)}\n`);
    return { dir, lib, info, built: true };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
