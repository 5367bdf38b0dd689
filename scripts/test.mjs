// `npm test`: every stage, in order, stopping at the first failure. A stage whose folder holds no
// test file yet is skipped with a line saying so.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';

const only = process.argv.slice(2);
const has = (dir) => existsSync(dir) && readdirSync(dir).some((f) => f.endsWith('.test.ts'));
const stages = [
  // Debian packages the browser and VS Code host stages need (a no-op when present; root or sudo on a fresh machine).
  ['system', 'bash .ci/setup-system', true],
  ['build', 'npm run build', true],
  ['typecheck', 'npm run typecheck', true],
  ['lint', 'npm run lint', true],
  ['unit', 'npm run test:unit', has('test/unit')],
  ['integration', 'npm run test:integration', has('test/integration')],
  ['e2e', 'npm run test:e2e', has('test/e2e')],
  ['host', 'npm run test:host', existsSync('test/host/runInCodeServer.ts')],
];
for (const [name, cmd, present] of stages) {
  if (only.length && !only.includes(name)) continue;
  if (!present) { console.log(`-- ${name}: no tests yet, skipped`); continue; }
  console.log(`\n== ${name}: ${cmd}`);
  const r = spawnSync(cmd, { stdio: 'inherit', shell: true });
  if (r.status !== 0) { console.error(`\n${name} failed (exit ${r.status})`); process.exit(r.status || 1); }
}
