// Runs test files with node:test's run() in the order given (scripts/test.mjs puts the longest
// first), N files at a time, each in its own process as `node --test` does: the spec reporter on
// stdout, and every finished test's duration in a JSON-lines file (written whole at the end) that
// `npm run test:slowest` reads. Started with `--import tsx`, which each file's process inherits.
//   node --import tsx scripts/runTests.mjs --concurrency 2 --durations FILE -- FILE...
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, relative } from 'node:path';
import { run } from 'node:test';
import { spec } from 'node:test/reporters';

function parseArgs(argv) {
  const sep = argv.indexOf('--');
  const flags = argv.slice(0, sep < 0 ? argv.length : sep);
  const files = sep < 0 ? [] : argv.slice(sep + 1);
  const value = (name, fallback) => {
    const i = flags.indexOf(name);
    return i < 0 ? fallback : flags[i + 1];
  };
  return { concurrency: Number(value('--concurrency', '1')), durations: value('--durations', undefined), files };
}

/** One JSON line per finished test: its file, name, depth, duration; whether it passed, and when it ended. */
function durationLine(data, ok) {
  const d = data.details ?? {};
  return `${JSON.stringify({
    file: data.file ? relative(process.cwd(), data.file) : undefined,
    name: data.name,
    nesting: data.nesting,
    suite: d.type === 'suite',
    ms: Math.round((d.duration_ms ?? 0) * 10) / 10,
    ok,
    at: Date.now(),
  })}\n`;
}

const { concurrency, durations, files } = parseArgs(process.argv.slice(2));
if (!files.length) {
  console.error('runTests: no test files given');
  process.exit(2);
}
let failed = 0;
const lines = [];
const stream = run({ files, concurrency });
stream.on('test:pass', (data) => lines.push(durationLine(data, true)));
stream.on('test:fail', (data) => {
  // a todo test that fails does not fail the run, as with `node --test`
  if (!data.todo) failed++;
  lines.push(durationLine(data, false));
});
stream.compose(new spec()).pipe(process.stdout);
stream.on('end', () => {
  process.exitCode = failed ? 1 : 0;
  if (!durations) return;
  // whole, under its name at once: a run beside this one never reads or leaves half a file
  mkdirSync(dirname(durations), { recursive: true });
  writeFileSync(`${durations}.${process.pid}`, lines.join(''));
  renameSync(`${durations}.${process.pid}`, durations);
});
