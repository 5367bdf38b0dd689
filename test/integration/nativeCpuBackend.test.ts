// The bundled server picks its llama.cpp CPU backend: the native build when the cache holds one
// (`llm-profiler serve --build native`), node-llama-cpp's prebuilt variant otherwise, and it refuses
// to start when LLM_PROFILER_CPU_BACKEND=native and there is none. /stats says which one runs.
// The native case copies a real build from the user's cache; without one it is skipped.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CPU_BACKEND_ENV } from '../../src/localServer/cpuBackend';
import { startLocalServer, LocalServerError } from '../../src/localServer/launcher';
import { findNativeCpuBackend, NATIVE_CPU_LIB, nativeCpuDir } from '../../src/localServer/nativeBuild';
import { ensureSyntheticModel, PRESETS } from '../../src/localServer/synthetic';
import { ensureServerBundle } from '../support/serverBundle';

const ROOT = join(__dirname, '..', '..');
let modelPath: string;
let cache: string;
/** The user's native build, found before the cache root moves to a temporary folder. */
let realNative: ReturnType<typeof findNativeCpuBackend>;

/** Runs `fn` with the given environment changes, which the server process inherits at its start. */
async function withEnv<T>(vars: Record<string, string | undefined>, fn: () => Promise<T>): Promise<T> {
  const saved = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
  const set = (vs: Record<string, string | undefined>) => {
    for (const [k, v] of Object.entries(vs)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  };
  set(vars);
  try {
    return await fn();
  } finally {
    set(saved);
  }
}

async function cpuOf(vars: Record<string, string | undefined>): Promise<{ kind: string; path: string; text: string }> {
  return withEnv(vars, async () => {
    const h = await startLocalServer({ model: { kind: 'file', path: modelPath }, parallel: 2, ctxSize: 1024 });
    try {
      const stats = (await (await fetch(`${h.url}/stats`)).json()) as { cpuBackend: { kind: string; path: string } };
      const res = await fetch(`${h.url}/v1/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ prompt: 'hello', max_tokens: 8, ignore_eos: true, temperature: 0 }) });
      assert.equal(res.status, 200);
      const body = (await res.json()) as { usage: { completion_tokens: number }; choices: { text: string }[] };
      assert.equal(body.usage.completion_tokens, 8, 'it decodes');
      return { ...stats.cpuBackend, text: body.choices[0]!.text };
    } finally {
      await h.stop();
    }
  });
}

before(async () => {
  ensureServerBundle();
  modelPath = await ensureSyntheticModel(PRESETS.tiny);
  realNative = findNativeCpuBackend();
  cache = mkdtempSync(join(tmpdir(), 'llmp-cpu-'));
});

after(() => {
  rmSync(cache, { recursive: true, force: true });
});

test('without a native build the bundled server runs the prebuilt CPU backend, and says so in /stats', { skip: process.platform !== 'linux' || process.arch !== 'x64' ? 'Linux x64 only' : false }, async () => {
  const cpu = await cpuOf({ LLM_PROFILER_CACHE: cache, [CPU_BACKEND_ENV]: undefined });
  assert.equal(cpu.kind, 'prebuilt');
  assert.match(cpu.path, /@node-llama-cpp\/linux-x64\/bins\/linux-x64\/libggml-cpu-[\w.]+\.so$/);
});

test(`${CPU_BACKEND_ENV}=native without a native build: the server refuses to start, saying how to build one`, { skip: process.platform !== 'linux' || process.arch !== 'x64' ? 'Linux x64 only' : false }, async () => {
  await withEnv({ LLM_PROFILER_CACHE: cache, [CPU_BACKEND_ENV]: 'native' }, () =>
    assert.rejects(startLocalServer({ model: { kind: 'file', path: modelPath }, parallel: 1, ctxSize: 512 }), (e: unknown) => {
      assert.ok(e instanceof LocalServerError);
      assert.match(e.message, /LLM_PROFILER_CPU_BACKEND=native, but the native CPU backend in .* cannot be used: not built \(llm-profiler serve --build native\)/);
      return true;
    }),
  );
});

test('with a native build in the cache the bundled server loads it (auto), unless told prebuilt; both decode', async (t) => {
  if (!realNative.ok) {
    t.skip(`no native CPU backend built here (${realNative.why})`);
    return;
  }
  const dir = (() => {
    const saved = process.env.LLM_PROFILER_CACHE;
    process.env.LLM_PROFILER_CACHE = cache;
    try {
      return nativeCpuDir(ROOT);
    } finally {
      if (saved === undefined) delete process.env.LLM_PROFILER_CACHE;
      else process.env.LLM_PROFILER_CACHE = saved;
    }
  })();
  mkdirSync(dir, { recursive: true });
  copyFileSync(realNative.lib, join(dir, NATIVE_CPU_LIB));
  copyFileSync(join(realNative.dir, 'info.json'), join(dir, 'info.json'));
  const native = await cpuOf({ LLM_PROFILER_CACHE: cache, [CPU_BACKEND_ENV]: undefined });
  assert.equal(native.kind, 'native');
  assert.equal(native.path, join(dir, NATIVE_CPU_LIB));
  const prebuilt = await cpuOf({ LLM_PROFILER_CACHE: cache, [CPU_BACKEND_ENV]: 'prebuilt' });
  assert.equal(prebuilt.kind, 'prebuilt');
  assert.ok(native.text.length > 0 && prebuilt.text.length > 0, 'both produce text');
});
