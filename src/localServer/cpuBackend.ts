// Which llama.cpp CPU backend the bundled server runs: the native build (nativeBuild.ts) when it is in
// the cache, else the prebuilt variant node-llama-cpp picks for this CPU. Chosen with
// LLM_PROFILER_CPU_BACKEND=auto|native|prebuilt (default auto), which reaches the server process
// through its environment. No `vscode` import.
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, join } from 'node:path';
import { findNativeCpuBackend, NATIVE_CPU_LIB } from './nativeBuild';
import { ownNodeLlamaCppEntry } from './nodeLlamaCpp';
import { packageRoot } from './paths';

export const CPU_BACKEND_ENV = 'LLM_PROFILER_CPU_BACKEND';
const CPU_BACKEND_CHOICES = ['auto', 'native', 'prebuilt'] as const;
export type CpuBackendChoice = (typeof CPU_BACKEND_CHOICES)[number];

/** The choice in the environment; a bad value is an error naming the variable. */
export function cpuBackendChoice(env: NodeJS.ProcessEnv = process.env): CpuBackendChoice {
  const v = (env[CPU_BACKEND_ENV] ?? '').trim().toLowerCase();
  if (v === '') return 'auto';
  if ((CPU_BACKEND_CHOICES as readonly string[]).includes(v)) return v as CpuBackendChoice;
  throw new Error(`${CPU_BACKEND_ENV} must be ${CPU_BACKEND_CHOICES.join(', ')} (got ${JSON.stringify(env[CPU_BACKEND_ENV])})`);
}

/** The CPU backend a process runs, from the libraries it has mapped. */
export interface CpuBackendInUse {
  readonly kind: 'native' | 'prebuilt' | 'unknown';
  /** The module's path (several, comma-separated, when more than one is loaded). */
  readonly path: string;
  /** The prebuilt variant (zen4, haswell, …) or 'native'. */
  readonly variant: string;
}

/** Reads /proc/self/maps (or the given text) for libggml-cpu*.so. */
export function cpuBackendInUse(maps?: string): CpuBackendInUse {
  let text = maps;
  if (text === undefined) {
    try {
      text = readFileSync('/proc/self/maps', 'utf8');
    } catch {
      text = '';
    }
  }
  const paths = [...new Set(text.split('\n').flatMap((l) => {
    const p = l.trim().split(/\s+/).slice(5).join(' ');
    return /\/libggml-cpu[^/]*\.(so|dylib|dll)$/.test(p) ? [p] : [];
  }))];
  if (paths.length !== 1) return { kind: 'unknown', path: paths.join(', '), variant: paths.length ? 'several' : 'unknown' };
  const path = paths[0]!;
  const file = basename(path);
  if (file === NATIVE_CPU_LIB) return { kind: 'native', path, variant: 'native' };
  return { kind: 'prebuilt', path, variant: /^libggml-cpu-?(.*)\.[a-z]+$/.exec(file)?.[1] || 'default' };
}

/**
 * node-llama-cpp's prebuilt addon for this platform (the one `getLlama({ build: 'never' })` loads):
 * its binary package resolved from node-llama-cpp's own folder, as node-llama-cpp resolves it.
 */
function prebuiltAddonPath(root: string): string | undefined {
  const pkg = `@node-llama-cpp/${process.platform}-${process.arch}`;
  const nlc = ownNodeLlamaCppEntry(root);
  if (!nlc) return undefined;
  try {
    const entry = createRequire(nlc).resolve(pkg); // <pkg>/dist/index.js
    const addon = join(dirname(entry), '..', 'bins', `${process.platform}-${process.arch}`, 'llama-addon.node');
    return existsSync(addon) ? addon : undefined;
  } catch {
    return undefined;
  }
}

/** What `prepareCpuBackend` decided: the native module registered, or why the prebuilt one will load. */
export type CpuBackendPlan = { readonly native: true; readonly path: string } | { readonly native: false; readonly why: string };

let prepared: CpuBackendPlan | undefined;

/**
 * Registers the native CPU backend with ggml before node-llama-cpp initialises (call it before the
 * first `getLlama` of the process): the addon then finds a CPU backend registered and does not load
 * its prebuilt variants. Once per process; `choice` 'native' throws when the native build cannot be used.
 */
export function prepareCpuBackend(choice: CpuBackendChoice, root: string = packageRoot()): CpuBackendPlan {
  if (prepared) return prepared;
  const done = (plan: CpuBackendPlan): CpuBackendPlan => (prepared = plan);
  if (choice === 'prebuilt') return done({ native: false, why: `${CPU_BACKEND_ENV}=prebuilt` });
  const found = findNativeCpuBackend({ root });
  if (!found.ok) {
    if (choice === 'native') throw new Error(`${CPU_BACKEND_ENV}=native, but the native CPU backend in ${found.dir} cannot be used: ${found.why}`);
    return done({ native: false, why: found.why });
  }
  // A CPU backend already loaded in this process (an engine started before) stays the one in use.
  const already = cpuBackendInUse();
  if (already.kind !== 'unknown' || already.path) {
    if (choice === 'native' && already.kind !== 'native') throw new Error(`${CPU_BACKEND_ENV}=native, but this process already loaded ${already.path}`);
    return done(already.kind === 'native' ? { native: true, path: already.path } : { native: false, why: `this process already loaded ${already.path}` });
  }
  const addon = prebuiltAddonPath(root);
  if (!addon) {
    if (choice === 'native') throw new Error(`${CPU_BACKEND_ENV}=native, but node-llama-cpp's prebuilt addon for ${process.platform}-${process.arch} was not found`);
    return done({ native: false, why: "node-llama-cpp's prebuilt addon was not found" });
  }
  // node-llama-cpp requires the same file: ggml's backend registry is one per process, so what is
  // registered here is what its Llama finds.
  const bindings = createRequire(addon)(addon) as { loadBackends?(dir?: string): void };
  if (typeof bindings.loadBackends !== 'function') {
    if (choice === 'native') throw new Error(`${CPU_BACKEND_ENV}=native, but this node-llama-cpp addon cannot load backends from a folder`);
    return done({ native: false, why: 'this node-llama-cpp addon cannot load backends from a folder' });
  }
  bindings.loadBackends(found.dir);
  const now = cpuBackendInUse();
  if (now.kind !== 'native') {
    if (choice === 'native') throw new Error(`${CPU_BACKEND_ENV}=native, but ${found.lib} did not load`);
    return done({ native: false, why: `${found.lib} did not load` });
  }
  return done({ native: true, path: now.path });
}
