// Writes test/fixtures/promptCorpus/expected.json: what each corpus file's own tool sends, from the
// reference oracle (test/fixtures/promptCorpus/oracle.py: Prompty's Python runtimes with the real
// Jinja2, gh-models' `run --file`), as runs.json says to run it (which runtime the file was written
// for, the environment variables its front matter needs, any values given).
// Run: node scripts/promptCorpusExpected.mjs   (needs python3 with jinja2 and PyYAML)
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const corpus = join(import.meta.dirname, '../test/fixtures/promptCorpus');
const runs = JSON.parse(readFileSync(join(corpus, 'runs.json'), 'utf8'));

/** The oracle's output for one run (its `error` too: a file its runtime refuses). */
export function oracle(run) {
  const args = [join(corpus, 'oracle.py'), join(corpus, run.file)];
  if (run.runtime !== 'gh') args.push('--runtime', run.runtime);
  for (const [k, v] of Object.entries(run.env ?? {})) args.push('--env', `${k}=${v}`);
  for (const [k, v] of Object.entries(run.vars ?? {})) args.push(typeof v === 'string' ? '--var' : '--var-json', `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`);
  try {
    return JSON.parse(execFileSync('python3', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }));
  } catch (e) {
    if (e.stdout) return JSON.parse(e.stdout);
    throw e;
  }
}

if (process.argv[1] === import.meta.filename) {
  const out = {};
  for (const run of runs) if (run.runtime !== 'none') out[run.file] = oracle(run);
  writeFileSync(join(corpus, 'expected.json'), JSON.stringify(out, null, 1) + '\n');
  console.log(`expected.json: ${Object.keys(out).length} files`);
}
