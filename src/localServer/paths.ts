// Where the local server keeps what it makes (synthetic models, a built llama-server) and how it
// finds its own files. Everything lives outside the repository, under one cache root.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, dirname, join, resolve } from 'node:path';

/** The cache root: $LLM_PROFILER_CACHE, else $XDG_CACHE_HOME/llm-profiler, else ~/.cache/llm-profiler. */
export function cacheRoot(): string {
  const env = process.env.LLM_PROFILER_CACHE;
  if (env) return resolve(env);
  const xdg = process.env.XDG_CACHE_HOME;
  return join(xdg ? resolve(xdg) : join(homedir(), '.cache'), 'llm-profiler');
}

export function modelCacheDir(): string {
  return join(cacheRoot(), 'models');
}

/**
 * The folder holding dist/ and node_modules/. Bundles (dist/cli.js, dist/extension.js,
 * dist/localServer.mjs) sit in dist/; under tsx the sources sit in src/localServer/.
 */
export function packageRoot(fromDir: string = currentDir()): string {
  let dir = fromDir;
  for (let i = 0; i < 6; i++) {
    if (existsSync(join(dir, 'package.json'))) {
      try {
        const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: string };
        if (pkg.name === 'llm-profiler') return dir;
      } catch {
        // not ours; keep walking up
      }
    }
    const up = dirname(dir);
    if (up === dir) break;
    dir = up;
  }
  // dist/ bundle without a package.json beside it (unlikely): its parent.
  return dirname(fromDir);
}

/** The bundled server's entry: <package>/dist/localServer.mjs. */
export function serverBundlePath(): string {
  return join(packageRoot(), 'dist', 'localServer.mjs');
}

function currentDir(): string {
  // The cjs bundles and tsx define __dirname; the ESM server bundle is run as `node dist/localServer.mjs`.
  if (typeof __dirname === 'string') return __dirname;
  return dirname(resolve(process.argv[1] ?? '.'));
}

/** The llama.cpp release node-llama-cpp ships, naming the llama-server cache folder. */
export function llamaCppRelease(root: string = packageRoot()): { tag: string; bundle: string } {
  const llamaDir = join(root, 'node_modules', 'node-llama-cpp', 'llama');
  let tag = 'unknown';
  try {
    tag = (JSON.parse(readFileSync(join(llamaDir, 'llama.cpp.info.json'), 'utf8')) as { tag?: string }).tag ?? tag;
  } catch {
    // keep 'unknown'
  }
  return { tag, bundle: join(llamaDir, 'gitRelease.bundle') };
}

export function llamaServerCacheDir(root: string = packageRoot()): string {
  return join(cacheRoot(), `llama-server-${llamaCppRelease(root).tag.replace(/[^\w.-]/g, '_')}`);
}

function isExecutableFile(p: string): boolean {
  try {
    const s = statSync(p);
    return s.isFile() && (s.mode & 0o111) !== 0;
  } catch {
    return false;
  }
}

/** A llama-server binary: the given path, else one on PATH, else the one `npm run build:llama-server` made. */
export function findLlamaServer(explicit?: string): string | undefined {
  if (explicit) return isExecutableFile(explicit) ? resolve(explicit) : undefined;
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    const p = join(dir, 'llama-server');
    if (isExecutableFile(p)) return p;
  }
  const built = join(llamaServerCacheDir(), 'bin', 'llama-server');
  return isExecutableFile(built) ? built : undefined;
}
