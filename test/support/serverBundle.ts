// dist/localServer.mjs, built (the project's esbuild.mjs) when a source of the local server is newer,
// unless scripts/test.mjs has just built dist/ (LLMP_DIST_BUILT): the tests that start the bundled
// server run it as users do, from the bundle.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');

export function ensureServerBundle(): void {
  const bundle = join(ROOT, 'dist', 'localServer.mjs');
  const newest = Math.max(...readdirSync(join(ROOT, 'src', 'localServer')).map((f) => statSync(join(ROOT, 'src', 'localServer', f)).mtimeMs));
  if (existsSync(bundle) && (process.env.LLMP_DIST_BUILT === '1' || statSync(bundle).mtimeMs >= newest)) return;
  const r = spawnSync(process.execPath, ['esbuild.mjs'], { cwd: ROOT, stdio: 'inherit' });
  assert.equal(r.status, 0, 'the build succeeds');
}
