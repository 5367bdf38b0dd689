// Where the local server keeps what it makes (synthetic models, a built llama-server, the native
// CPU backend) and how it finds its own files. Everything lives outside the repository, under one
// cache root. The cache holds code the server loads and runs, so no path here depends on the current
// folder: a relative variable or PATH entry would let the repository a command runs in supply it.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { homedir, userInfo } from 'node:os';
import { delimiter, dirname, isAbsolute, join, resolve } from 'node:path';

type Env = Readonly<Record<string, string | undefined>>;

/** The home folder, absolute: $HOME when it is, else the account's (a relative $HOME is ignored like a relative XDG_CACHE_HOME). */
function homeFolder(env: Env): string {
  const home = env.HOME !== undefined ? env.HOME : homedir();
  if (home && isAbsolute(home)) return home;
  try {
    return userInfo().homedir;
  } catch {
    throw new Error(`no absolute home folder (HOME is ${JSON.stringify(home)}): set HOME, XDG_CACHE_HOME or LLM_PROFILER_CACHE to an absolute path`);
  }
}

/** The user's cache folder: $XDG_CACHE_HOME when absolute (the XDG spec: a relative one is invalid and ignored), else ~/.cache. */
export function userCacheHome(env: Env = process.env): string {
  const xdg = env.XDG_CACHE_HOME;
  return xdg && isAbsolute(xdg) ? resolve(xdg) : join(homeFolder(env), '.cache');
}

/** The user's state folder (what outlives a process but is no cache): $XDG_STATE_HOME when absolute, else ~/.local/state. */
export function userStateHome(env: Env = process.env): string {
  const xdg = env.XDG_STATE_HOME;
  return xdg && isAbsolute(xdg) ? resolve(xdg) : join(homeFolder(env), '.local', 'state');
}

/**
 * The cache root: $LLM_PROFILER_CACHE, else $XDG_CACHE_HOME/llm-profiler, else ~/.cache/llm-profiler.
 * A relative LLM_PROFILER_CACHE is refused (an error naming it), not ignored: it is this tool's own
 * setting, and quietly using another folder would hide a build or a model where nobody looks.
 */
export function cacheRoot(env: Env = process.env): string {
  const own = env.LLM_PROFILER_CACHE;
  if (own) {
    if (!isAbsolute(own)) throw new Error(`LLM_PROFILER_CACHE must be an absolute path (got ${JSON.stringify(own)}): a relative one would name a different folder in every folder a command runs in`);
    return resolve(own);
  }
  return join(userCacheHome(env), 'llm-profiler');
}

/** A PATH value's absolute entries only: an empty or relative entry means the current folder to a program lookup. */
export function absolutePath(path: string | undefined): string {
  return (path ?? '').split(delimiter).filter((dir) => dir !== '' && isAbsolute(dir)).join(delimiter);
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

/**
 * A llama-server binary: the given path, else one in an absolute folder on PATH (an empty or relative
 * entry is the current folder: skipped), else the one `npm run build:llama-server` made.
 */
export function findLlamaServer(explicit?: string): string | undefined {
  if (explicit) return isExecutableFile(explicit) ? resolve(explicit) : undefined;
  for (const dir of absolutePath(process.env.PATH).split(delimiter)) {
    if (!dir) continue;
    const p = join(dir, 'llama-server');
    if (isExecutableFile(p)) return p;
  }
  const built = join(llamaServerCacheDir(), 'bin', 'llama-server');
  return isExecutableFile(built) ? built : undefined;
}
