// `npm run test:slowest`: the 20 slowest tests of the last runs, with their files and durations, then
// the slowest files, from test-artifacts/durations-*.jsonl (written by every stage of `npm test` that
// runs tests: scripts/runTests.mjs, and test/host for the VS Code host). With none there yet, it runs
// the unit and integration stages first. `--top N` lists N instead of 20.
import { spawnSync } from 'node:child_process';
import { fileSeconds, readDurations } from './testPlan.mjs';

const argTop = process.argv.indexOf('--top');
const TOP = argTop > 0 ? Number(process.argv[argTop + 1]) : 20;

if (!readDurations().length) {
  console.log('No durations yet: running the unit and integration stages first (node scripts/test.mjs unit integration).');
  spawnSync(process.execPath, ['scripts/test.mjs', 'unit', 'integration'], { stdio: 'inherit' });
}
const tests = readDurations();
const leaves = tests.filter((t) => !t.suite);
if (!leaves.length) {
  console.log('No test durations recorded.');
  process.exit(1);
}

const seconds = (s) => `${s.toFixed(1).padStart(6)} s`;
const cut = (s, n) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);
const day = (ms) => new Date(ms).toISOString().slice(0, 16).replace('T', ' ');
const ats = leaves.map((t) => t.at);

console.log(`The ${Math.min(TOP, leaves.length)} slowest of ${leaves.length} tests (run between ${day(Math.min(...ats))} and ${day(Math.max(...ats))} UTC):`);
for (const t of [...leaves].sort((a, b) => b.ms - a.ms).slice(0, TOP)) {
  console.log(`${seconds(t.ms / 1000)}  ${t.ok ? '' : '(failed) '}${t.file ?? '?'}  ${cut(t.name, 110)}`);
}
const files = Object.entries(fileSeconds(tests)).sort((a, b) => b[1] - a[1]).slice(0, 10);
console.log(`\nThe ${files.length} slowest files (their top-level tests added up):`);
for (const [file, s] of files) console.log(`${seconds(s)}  ${file}`);
