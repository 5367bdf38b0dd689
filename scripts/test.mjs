// `npm test`: every stage, stopping at the first failure; `node scripts/test.mjs unit e2e` runs only
// those stages (dist/ is built first whenever a test stage runs). Stages that do not measure time
// share the machine: typecheck beside lint, then the unit, integration and e2e files that may run
// beside each other, two at a time (scripts/testPlan.mjs), then the files that measure time, one at
// a time with nothing else running, then the VS Code host. A stage whose folder holds no test file
// yet is skipped with a line saying so. Each test's duration goes to test-artifacts/durations-*.jsonl
// (`npm run test:slowest` lists the slowest). code-server, which the host stage needs, is set up
// beside the stages before the files that measure time.
import { spawn } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ALONE, ARTIFACTS, longestFirst, stageFiles } from './testPlan.mjs';

const STAGES = ['system', 'build', 'typecheck', 'lint', 'unit', 'integration', 'e2e', 'host'];
const TEST_STAGES = ['unit', 'integration', 'e2e'];
/** Files that share the machine run this many at a time (LLMP_TEST_CONCURRENCY overrides). */
const CONCURRENCY = Number(process.env.LLMP_TEST_CONCURRENCY ?? 2);
/** The light files that measure time (testPlan.mjs ALONE[f].light): one at a time unless LLMP_TIMING_CONCURRENCY says more. */
const TIMING_CONCURRENCY = Number(process.env.LLMP_TIMING_CONCURRENCY ?? 1);

const asked = process.argv.slice(2);
for (const s of asked) if (!STAGES.includes(s)) fail(`unknown stage "${s}" (stages: ${STAGES.join(', ')})`, 2);
const wanted = (s) => !asked.length || asked.includes(s);
const started = Date.now();
const laps = [];

function fail(message, code = 1) {
  console.error(`\n${message}`);
  process.exit(code);
}

/** Runs a command (shell syntax) with the terminal; resolves to its exit status. */
function sh(cmd, env = {}) {
  return new Promise((resolve) => {
    const child = spawn(cmd, { stdio: 'inherit', shell: true, env: { ...process.env, ...env } });
    child.on('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}

/** Runs the named commands side by side; stops the run if any failed. */
async function phase(lap, title, jobs, env = {}) {
  if (!jobs.length) return;
  console.log(`\n== ${lap}: ${title}`);
  const t0 = Date.now();
  const codes = await Promise.all(jobs.map(([, cmd]) => sh(cmd, env)));
  laps.push([lap, Date.now() - t0]);
  const failed = jobs.map(([name], i) => [name, codes[i]]).filter(([, code]) => code !== 0);
  if (failed.length) fail(`${failed.map(([name, code]) => `${name} (exit ${code})`).join(', ')} failed`, failed[0][1]);
}

/** `node --test` over the files through scripts/runTests.mjs, `n` at a time, durations to test-artifacts. */
function testCommand(files, n, group) {
  const durations = join(ARTIFACTS, `durations-${group}.jsonl`);
  return `"${process.execPath}" --import tsx scripts/runTests.mjs --concurrency ${n} --durations ${durations} -- ${files.join(' ')}`;
}

/**
 * code-server for the host stage, installed (scripts/setupCodeServer.ts: a download and a few native
 * builds, a no-op once cached) beside the stages that share the machine; its output to a log file.
 */
function setupCodeServer() {
  const log = join(ARTIFACTS, 'setup-code-server.log');
  mkdirSync(ARTIFACTS, { recursive: true });
  const out = openSync(log, 'w');
  const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/setupCodeServer.ts'], { stdio: ['ignore', out, out] });
  closeSync(out);
  const t0 = Date.now();
  const done = new Promise((resolve) => child.on('exit', (code) => resolve(code ?? 1)));
  return async () => {
    const code = await done;
    laps.push(['code-server setup (beside the stages before it)', Date.now() - t0]);
    if (code !== 0) fail(`code-server setup failed (exit ${code}):\n${readFileSync(log, 'utf8').slice(-4000)}`, code);
  };
}

/** The unit, integration and e2e files: those that share the machine, then those that measure time, alone. */
async function runTests(env, beforeAlone) {
  const stages = TEST_STAGES.filter(wanted);
  for (const s of stages) if (!stageFiles(s).length) console.log(`-- ${s}: no tests yet, skipped`);
  const files = stages.flatMap(stageFiles);
  const beside = longestFirst(files.filter((f) => !(f in ALONE)));
  const alone = files.filter((f) => f in ALONE);
  if (beside.length) {
    await phase(`${stages.join(', ')} (shared)`, `${beside.length} files that share the machine, ${CONCURRENCY} at a time, longest first`,
      [['tests', testCommand(beside, CONCURRENCY, `${stages.join('+')}-shared`)]], env);
  }
  // nothing else runs beside the files that measure time: code-server's setup ends first
  await beforeAlone();
  const paired = TIMING_CONCURRENCY > 1 ? longestFirst(alone.filter((f) => ALONE[f].light)) : [];
  const single = alone.filter((f) => !paired.includes(f));
  if (paired.length) {
    await phase(`${stages.join(', ')} (timing, light)`, `${paired.length} files that measure time on one thread each, ${TIMING_CONCURRENCY} at a time`,
      [['tests', testCommand(paired, TIMING_CONCURRENCY, `${stages.join('+')}-paired`)]], env);
  }
  if (single.length) {
    await phase(`${stages.join(', ')} (alone)`, `${single.length} files that measure time, one at a time (scripts/testPlan.mjs says why)`,
      [['tests', testCommand(single, 1, `${stages.join('+')}-alone`)]], env);
  }
}

async function main() {
  if (wanted('system')) await phase('system', 'Debian packages the browser and host stages need', [['system', 'bash .ci/setup-system']]);
  const host = wanted('host') && existsSync('test/host/runInCodeServer.ts');
  const codeServerReady = host ? setupCodeServer() : async () => undefined;
  if (wanted('build') || [...TEST_STAGES, 'host'].some(wanted)) await phase('build', 'dist/ (esbuild.mjs)', [['build', 'npm run -s build']]);
  // dist/ is fresh: the tests' own build steps (test/support/cli.ts buildCli) skip it, so that no
  // test rebuilds dist/ under another one that is running it
  const env = { LLMP_DIST_BUILT: '1' };
  await phase(['typecheck', 'lint'].filter(wanted).join(' and '), 'side by side',
    [['typecheck', 'npm run -s typecheck'], ['lint', 'npm run -s lint']].filter(([name]) => wanted(name)));
  await runTests(env, codeServerReady);
  if (host) await phase('host', 'VS Code (code-server) in Chromium', [['host', 'node --import tsx test/host/runInCodeServer.ts']], env);
  else if (wanted('host')) console.log('-- host: no tests yet, skipped');
  console.log(`\n${laps.map(([lap, ms]) => `${(ms / 1000).toFixed(0).padStart(5)} s  ${lap}`).join('\n')}`);
  console.log(`${((Date.now() - started) / 1000).toFixed(0).padStart(5)} s  in all`);
}

main().catch((err) => fail(`test: ${err.stack ?? err}`));
