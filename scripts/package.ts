// `npm run package`: the VSIXs and the CLI's npm tarball, as a release makes them.
//
//  - one VSIX per platform node-llama-cpp ships a prebuilt CPU binary for
//    (llm-profiler-<target>-<version>.vsix, as vsce names them), each carrying node-llama-cpp's
//    runtime (its JavaScript and its dependencies, pruned) and that one platform's binary package;
//  - a universal VSIX (llm-profiler-<version>.vsix) without native parts, for every other platform,
//    where the local server says it is not bundled and offers the llama-server backend;
//  - the CLI as an npm tarball (llm-profiler-<version>.tgz): node-llama-cpp's runtime bundled in it,
//    each platform's CPU binary package an optional dependency that npm installs only where it fits.
//
// Each is built from a production build (minified, no source maps) in a staging folder that holds
// only what ships, so the checkout's dist/ is left alone. The binary package for this machine comes
// from node_modules; another platform's is fetched for packaging with `npm pack` (cached under the
// cache root), never at run time.
//
//   node --import tsx scripts/package.ts [--target T ...] [--universal] [--cli] [--out DIR]
//   (no flag: every target, the universal VSIX and the CLI tarball)
import { spawnSync } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { inflateRawSync } from 'node:zlib';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { build } from 'esbuild';
import { nodeLlamaCppVersion } from '../src/localServer/nodeLlamaCpp';
import { cacheRoot } from '../src/localServer/paths';

export const ROOT = resolve(__dirname, '..');

/** A vsce target and the node-llama-cpp package holding its prebuilt binary (the CPU one; Metal where that is the only one). */
export interface Platform {
  readonly target: string;
  readonly binary: string;
  readonly platform: NodeJS.Platform;
  readonly arch: string;
}

/**
 * node-llama-cpp's prebuilt packages that VS Code has a target for. Not here: linux-riscv64 (no VS
 * Code target), Alpine (musl; the binaries link glibc), and the CUDA and Vulkan variants (not CPU).
 */
export const PLATFORMS: readonly Platform[] = [
  { target: 'linux-x64', binary: 'linux-x64', platform: 'linux', arch: 'x64' },
  { target: 'linux-arm64', binary: 'linux-arm64', platform: 'linux', arch: 'arm64' },
  { target: 'linux-armhf', binary: 'linux-armv7l', platform: 'linux', arch: 'arm' },
  { target: 'darwin-arm64', binary: 'mac-arm64-metal', platform: 'darwin', arch: 'arm64' },
  { target: 'darwin-x64', binary: 'mac-x64', platform: 'darwin', arch: 'x64' },
  { target: 'win32-x64', binary: 'win-x64', platform: 'win32', arch: 'x64' },
  { target: 'win32-arm64', binary: 'win-arm64', platform: 'win32', arch: 'arm64' },
];

/** The platform this machine is, where node-llama-cpp ships a binary for it. */
export function hostPlatform(): Platform | undefined {
  return PLATFORMS.find((p) => p.platform === process.platform && p.arch === process.arch);
}

interface Manifest {
  name: string;
  version: string;
  [k: string]: unknown;
}

export const manifest = (): Manifest => JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as Manifest;

/** The production build (what esbuild.mjs --production makes) into `dir`/dist. */
export async function buildProduction(dir: string): Promise<void> {
  // esbuild.mjs has top-level await: imported, not required
  const { targets, optionsFor } = await import('../esbuild.mjs');
  for (const t of targets) {
    await build({ ...optionsFor(t, { production: true }), absWorkingDir: ROOT, outfile: join(dir, t.outfile!) });
  }
}

function readPkg(dir: string): { name: string; version: string; dependencies?: Record<string, string> } {
  return JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name: string; version: string; dependencies?: Record<string, string> };
}

/** Where Node would find `name` from package folder `from`, looking no higher than `root`. */
function resolvePackage(root: string, from: string, name: string): string | undefined {
  for (let dir = from; ; dir = dirname(dir)) {
    const p = join(dir, 'node_modules', name);
    if (existsSync(join(p, 'package.json'))) return p;
    if (dir === root || !dir.startsWith(root)) return undefined;
  }
}

/**
 * node-llama-cpp and everything it needs to run: its `dependencies`, transitively, as installed
 * under `root`/node_modules (folders relative to `root`). Optional dependencies stay out: the
 * platform binaries are added per target, and the others (@reflink's native copy helper for
 * downloads) are loaded lazily by code the server never runs.
 */
export function runtimePackages(root: string = ROOT): string[] {
  const seen = new Set<string>();
  const queue = [join(root, 'node_modules', 'node-llama-cpp')];
  while (queue.length) {
    const dir = queue.shift()!;
    if (seen.has(dir)) continue;
    seen.add(dir);
    for (const name of Object.keys(readPkg(dir).dependencies ?? {})) {
      const found = resolvePackage(root, dir, name);
      if (!found) throw new Error(`${relative(root, dir)} needs ${name}, which is not installed (run npm ci)`);
      queue.push(found);
    }
  }
  return [...seen].map((d) => relative(root, d)).sort();
}

/** Files of a runtime package that never ship: sources (TypeScript, C/C++, build files), maps, types and docs (licences stay). */
const PRUNE_FILE = /\.(map|ts|mts|cts|md|markdown|c|cc|cpp|h|hpp|cs|gyp|gypi|tsbuildinfo)$|(^|\/)(\.[^/]+|tsconfig\.json)$/i;
const KEEP_FILE = /(^|\/)(licen[cs]e|notice|copying)[^/]*$/i;
/** Folders that never ship: tests, docs, examples; node-llama-cpp's llama.cpp source (34 MB) and build inputs, and its `init` templates. */
const PRUNE_DIR: readonly RegExp[] = [
  /(^|\/)(test|tests|__tests__|docs?|examples?|\.[^/]+)$/,
  /^node_modules\/node-llama-cpp\/llama\/(?!grammars$)[^/]+$/,
  /^node_modules\/node-llama-cpp\/templates$/,
];
const PRUNE_EXACT = new Set(['node_modules/node-llama-cpp/llama/gitRelease.bundle', 'node_modules/node-llama-cpp/llama/CMakeLists.txt']);

/** Whether a path (relative to the package being made, node_modules/…) ships. */
export function ships(rel: string, isDir: boolean): boolean {
  if (isDir) return !PRUNE_DIR.some((re) => re.test(rel));
  if (PRUNE_EXACT.has(rel)) return false;
  return KEEP_FILE.test(rel) || !PRUNE_FILE.test(rel);
}

/** Copies a package folder, pruned; `rel` is its path as it will sit in the package (node_modules/…). */
function copyPackage(from: string, to: string, rel: string): void {
  cpSync(from, to, {
    recursive: true,
    dereference: true,
    filter: (src) => src === from || ships(join(rel, relative(from, src)).replace(/\\/g, '/'), statSync(src).isDirectory()),
  });
}

/** The node-llama-cpp package holding `binary`'s prebuilt files: this machine's from node_modules, another's fetched with `npm pack` (cached). */
export function binaryPackage(binary: string, version: string = nodeLlamaCppVersion(ROOT)): string {
  const installed = join(ROOT, 'node_modules', '@node-llama-cpp', binary);
  if (existsSync(join(installed, 'package.json'))) {
    const pkg = readPkg(installed);
    if (pkg.name === `@node-llama-cpp/${binary}` && pkg.version === version) return installed;
  }
  const cache = join(cacheRoot(), 'packaging', `node-llama-cpp-${version}`);
  const dir = join(cache, binary);
  if (existsSync(join(dir, 'package.json'))) return dir;
  mkdirSync(cache, { recursive: true });
  const spec = `@node-llama-cpp/${binary}@${version}`;
  console.log(`fetching ${spec} for packaging (npm pack)`);
  const tmp = mkdtempSync(join(cache, '.fetch-'));
  try {
    const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
    const p = spawnSync(npm, ['pack', spec, '--pack-destination', tmp, '--silent'], { encoding: 'utf8' });
    if (p.status !== 0) throw new Error(`npm pack ${spec} failed (exit ${p.status}): ${p.stderr.trim()}`);
    const tgz = readdirSync(tmp).find((f) => f.endsWith('.tgz'));
    if (!tgz) throw new Error(`npm pack ${spec} made no tarball`);
    const x = spawnSync('tar', ['-xzf', join(tmp, tgz), '-C', tmp], { encoding: 'utf8' });
    if (x.status !== 0) throw new Error(`unpacking ${tgz} failed: ${x.stderr.trim()}`);
    renameSync(join(tmp, 'package'), dir);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  return dir;
}

/** node-llama-cpp's runtime into `dir`/node_modules, with `binary`'s prebuilt package when given. */
export function stageRuntime(dir: string, binary: string | undefined): void {
  for (const rel of runtimePackages()) copyPackage(join(ROOT, rel), join(dir, rel), rel);
  // The staged node-llama-cpp neither lists every platform's binary (CUDA and Vulkan ones too: 600 MB
  // on linux-x64) nor builds llama.cpp from source at install: the package that carries it names the
  // one binary it needs (the VSIX holds it, the npm package lists the CPU ones as optional).
  const nlcManifest = join(dir, 'node_modules', 'node-llama-cpp', 'package.json');
  const nlc = JSON.parse(readFileSync(nlcManifest, 'utf8')) as { optionalDependencies?: unknown; scripts?: Record<string, string> };
  delete nlc.optionalDependencies;
  if (nlc.scripts) for (const k of ['preinstall', 'install', 'postinstall']) delete nlc.scripts[k];
  writeFileSync(nlcManifest, JSON.stringify(nlc, null, 2));
  if (binary) {
    const rel = `node_modules/@node-llama-cpp/${binary}`;
    copyPackage(binaryPackage(binary), join(dir, rel), rel);
  }
}

const DOCS = ['README.md', 'CHANGELOG.md', 'LICENSE'];

/**
 * The extension's manifest as it ships: no scripts or development dependencies; its one dependency
 * node-llama-cpp where it carries it (the rest is bundled into dist/ by esbuild).
 */
function extensionManifest(withRuntime: boolean): Manifest {
  const m = manifest();
  delete m.scripts;
  delete m.devDependencies;
  if (withRuntime) m.dependencies = { 'node-llama-cpp': nodeLlamaCppVersion(ROOT) };
  else delete m.dependencies;
  return m;
}

export interface PackageResult {
  readonly path: string;
  readonly bytes: number;
  readonly files: readonly string[];
}

const vsceBin = () => join(ROOT, 'node_modules', '@vscode', 'vsce', 'vsce');

/**
 * One VSIX: `target` (a Platform) carries node-llama-cpp and that platform's binary; none: the
 * universal one. `built`: a folder holding a production dist/ (built once for all targets).
 */
export function packageVsix(built: string, platform: Platform | undefined, outDir: string = ROOT): PackageResult {
  const version = manifest().version;
  const stage = mkdtempSync(join(tmpdir(), `llmp-vsix-${platform?.target ?? 'universal'}-`));
  try {
    cpSync(join(built, 'dist'), join(stage, 'dist'), { recursive: true });
    cpSync(join(ROOT, 'media'), join(stage, 'media'), { recursive: true });
    for (const f of DOCS) copyFileSync(join(ROOT, f), join(stage, f));
    writeFileSync(join(stage, 'package.json'), JSON.stringify(extensionManifest(platform !== undefined), null, 2));
    // The project's list of what ships, and the staged runtime.
    writeFileSync(join(stage, '.vscodeignore'), `${readFileSync(join(ROOT, '.vscodeignore'), 'utf8').trimEnd()}\n!node_modules/**\n`);
    if (platform) stageRuntime(stage, platform.binary);
    const name = platform ? `llm-profiler-${platform.target}-${version}.vsix` : `llm-profiler-${version}.vsix`;
    const out = join(outDir, name);
    // node_modules holds only the pruned runtime staged above: vsce takes it as the package's
    // dependencies (npm list), where --no-dependencies would leave it out.
    const args = [vsceBin(), 'package', '-o', out, ...(platform ? ['--target', platform.target] : ['--no-dependencies'])];
    const p = spawnSync(process.execPath, args, { cwd: stage, encoding: 'utf8' });
    if (p.status !== 0) throw new Error(`vsce package ${platform?.target ?? '(universal)'} failed (exit ${p.status}):\n${p.stdout}\n${p.stderr}`);
    return { path: out, bytes: statSync(out).size, files: zipEntries(out) };
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
}

/** A zip's entries from its central directory (no unzip binary needed on a fresh machine). */
function centralDirectory(file: string): { buf: Buffer; entries: { name: string; method: number; size: number; local: number }[] } {
  const buf = readFileSync(file);
  let eocd = -1;
  for (let i = buf.length - 22; i >= Math.max(0, buf.length - 65_557); i--) {
    if (buf.readUInt32LE(i) === 0x06054b50) { eocd = i; break; }
  }
  if (eocd < 0) throw new Error(`${file}: not a zip file (no end of central directory)`);
  const count = buf.readUInt16LE(eocd + 10);
  let at = buf.readUInt32LE(eocd + 16);
  const entries: { name: string; method: number; size: number; local: number }[] = [];
  for (let n = 0; n < count; n++) {
    if (buf.readUInt32LE(at) !== 0x02014b50) throw new Error(`${file}: damaged central directory`);
    const nameLen = buf.readUInt16LE(at + 28);
    const extraLen = buf.readUInt16LE(at + 30);
    const commentLen = buf.readUInt16LE(at + 32);
    entries.push({ name: buf.toString('utf8', at + 46, at + 46 + nameLen), method: buf.readUInt16LE(at + 10), size: buf.readUInt32LE(at + 20), local: buf.readUInt32LE(at + 42) });
    at += 46 + nameLen + extraLen + commentLen;
  }
  return { buf, entries };
}

/** The names in a zip. */
export function zipEntries(file: string): string[] {
  return centralDirectory(file).entries.map((e) => e.name);
}

function entryData(buf: Buffer, e: { method: number; size: number; local: number }): Buffer {
  const start = e.local + 30 + buf.readUInt16LE(e.local + 26) + buf.readUInt16LE(e.local + 28);
  const data = buf.subarray(start, start + e.size);
  return e.method === 8 ? inflateRawSync(data) : data;
}

/** One file of a zip, by name. */
export function zipFile(file: string, name: string): Buffer {
  const { buf, entries } = centralDirectory(file);
  const e = entries.find((x) => x.name === name);
  if (!e) throw new Error(`${file} has no ${name}`);
  return entryData(buf, e);
}

/** Unpacks a zip (stored or deflated entries, as vsce writes them) into `dir`, as a user's unzip would. */
export function extractZip(file: string, dir: string): void {
  const { buf, entries } = centralDirectory(file);
  for (const e of entries) {
    if (e.name.endsWith('/')) continue;
    const to = resolve(dir, e.name);
    if (!to.startsWith(resolve(dir) + '/')) throw new Error(`${file}: entry ${e.name} points outside the folder`);
    mkdirSync(dirname(to), { recursive: true });
    writeFileSync(to, entryData(buf, e));
  }
}

/**
 * The CLI's npm tarball: dist/cli.js and the server bundle, node-llama-cpp's runtime bundled
 * (bundleDependencies), and each platform's CPU binary package as an optional dependency, which
 * npm installs only on the platform its `os` and `cpu` name.
 */
export function packageCli(built: string, outDir: string = ROOT): PackageResult {
  const m = manifest();
  const nlc = nodeLlamaCppVersion(ROOT);
  const stage = mkdtempSync(join(tmpdir(), 'llmp-npm-'));
  try {
    mkdirSync(join(stage, 'dist'));
    for (const f of ['cli.js', 'worker.js', 'localServer.mjs']) copyFileSync(join(built, 'dist', f), join(stage, 'dist', f));
    for (const f of DOCS) copyFileSync(join(ROOT, f), join(stage, f));
    stageRuntime(stage, undefined);
    const pkg = {
      name: m.name,
      version: m.version,
      description: m.description,
      license: m.license,
      keywords: m.keywords,
      homepage: m.homepage,
      repository: m.repository,
      bugs: m.bugs,
      engines: { node: (m.engines as { node: string }).node },
      bin: { 'llm-profiler': 'dist/cli.js' },
      files: ['dist/cli.js', 'dist/worker.js', 'dist/localServer.mjs'],
      dependencies: { 'node-llama-cpp': nlc },
      bundleDependencies: ['node-llama-cpp'],
      optionalDependencies: Object.fromEntries(PLATFORMS.map((p) => [`@node-llama-cpp/${p.binary}`, nlc])),
    };
    writeFileSync(join(stage, 'package.json'), JSON.stringify(pkg, null, 2));
    const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
    const p = spawnSync(npm, ['pack', '--pack-destination', outDir, '--json', '--ignore-scripts'], { cwd: stage, encoding: 'utf8' });
    if (p.status !== 0) throw new Error(`npm pack failed (exit ${p.status}):\n${p.stderr}`);
    const info = (JSON.parse(p.stdout) as { filename: string; files: { path: string }[] }[])[0]!;
    const out = join(outDir, basename(info.filename));
    return { path: out, bytes: statSync(out).size, files: info.files.map((f) => f.path) };
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
}

const mb = (b: number) => `${(b / 1024 / 1024).toFixed(1)} MB`;

async function main(argv: string[]): Promise<number> {
  const wanted: string[] = [];
  let universal = false;
  let cli = false;
  let outDir = ROOT;
  for (let i = 0; i < argv.length; i++) {
    const f = argv[i];
    if (f === '--target') wanted.push(argv[++i] ?? '');
    else if (f === '--universal') universal = true;
    else if (f === '--cli') cli = true;
    else if (f === '--out') outDir = resolve(argv[++i] ?? '.');
    else throw new Error(`unknown flag ${f} (--target T, --universal, --cli, --out DIR)`);
  }
  const all = !wanted.length && !universal && !cli;
  const platforms = all ? PLATFORMS : wanted.map((t) => {
    const p = PLATFORMS.find((x) => x.target === t);
    if (!p) throw new Error(`no prebuilt node-llama-cpp binary for target ${t} (targets: ${PLATFORMS.map((x) => x.target).join(', ')}; others get the universal VSIX)`);
    return p;
  });
  mkdirSync(outDir, { recursive: true });
  const built = mkdtempSync(join(tmpdir(), 'llmp-build-'));
  const rows: [string, number][] = [];
  try {
    await buildProduction(built);
    for (const p of platforms) { const r = packageVsix(built, p, outDir); rows.push([basename(r.path), r.bytes]); }
    if (all || universal) { const r = packageVsix(built, undefined, outDir); rows.push([basename(r.path), r.bytes]); }
    if (all || cli) { const r = packageCli(built, outDir); rows.push([basename(r.path), r.bytes]); }
  } finally {
    rmSync(built, { recursive: true, force: true });
  }
  const w = Math.max(...rows.map(([n]) => n.length));
  console.log(`\npackages in ${outDir}:`);
  for (const [n, b] of rows) console.log(`  ${n.padEnd(w)}  ${mb(b).padStart(8)}`);
  return 0;
}

if (require.main === module) {
  main(process.argv.slice(2)).then((c) => process.exit(c), (e: unknown) => {
    console.error(`package: ${e instanceof Error ? e.message : String(e)}`);
    process.exit(1);
  });
}
