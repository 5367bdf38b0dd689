// Builds what the host needs: the extension (the project's esbuild.mjs) and the in-host suite as
// one CommonJS file the extension host can require (out/host/suite.js, `vscode` left external).
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { build } from 'esbuild';

export const ROOT = join(__dirname, '..', '..');
export const SUITE_JS = join(ROOT, 'out', 'host', 'suite.js');

export async function buildForHost(): Promise<void> {
  // scripts/test.mjs has just built dist/ (LLMP_DIST_BUILT): only the suite is left to build
  if (process.env.LLMP_DIST_BUILT !== '1') {
    const r = spawnSync(process.execPath, ['esbuild.mjs'], { cwd: ROOT, stdio: 'inherit' });
    if (r.status !== 0) throw new Error(`npm run build failed (exit ${r.status})`);
  }
  await build({
    entryPoints: [join(ROOT, 'test', 'host', 'suite', 'index.ts')],
    outfile: SUITE_JS,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    // `proxy` (test/support/forwardProxy.ts) is ESM that reads its package.json through import.meta.url:
    // bundled into CommonJS it cannot; required from node_modules at run time (Node ≥ 20.19 requires ESM).
    external: ['vscode', 'node-llama-cpp', 'proxy'],
    sourcemap: 'inline',
    logLevel: 'warning',
  });
}
