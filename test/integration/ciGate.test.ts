// The example CI job, docs/examples/latency-gate.yml, run here as far as it can be: the workflow is
// parsed (the `yaml` package) and its steps run in order as a runner runs them, each `run:` script in
// `bash --noprofile --norc -eo pipefail` (the workflow's `shell: bash`) with the workflow's env, in a
// temporary folder standing for the checkout, GITHUB_STEP_SUMMARY a temporary file. A step after a
// failed one runs only when its `if:` says so, as on GitHub. What cannot run here is stood in for:
//   actions/checkout         the folder is made by the test: the CLI's npm tarball at LLMP_TARBALL
//                            (packageCli, what `npm run package -- --cli` makes), the baseline when one is wanted
//   actions/setup-node       this Node; the workflow is checked to ask for 20
//   actions/upload-artifact  the files it names are checked to be there
// `npm install --global` of the tarball runs as written, into a temporary prefix (npm_config_prefix),
// from npm's cache (npm_config_prefer_offline), as test/integration/packaging.test.ts installs it.
// The endpoint: the bundled local server as the workflow has it (LLMP_URL empty); for the gate, a step
// server (its step set exactly) through LLMP_URL, as a user points the job at an endpoint: the
// baseline against itself passes (exit 0) and a step 50% longer fails the job (exit 1).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, sep } from 'node:path';
import { parse } from 'yaml';
import { buildProduction, hostPlatform, packageCli } from '../../scripts/package';
import { ROOT } from '../support/cli';
import { processesMentioning } from '../support/processes';
import { startStepServer } from '../support/stepServer';
import type { StepServer } from '../support/stepServer';

const WORKFLOW = join(ROOT, 'docs/examples/latency-gate.yml');

interface Step {
  readonly name?: string;
  readonly uses?: string;
  readonly run?: string;
  readonly if?: string;
  readonly with?: Record<string, unknown>;
  readonly env?: Record<string, string>;
}

interface Workflow {
  readonly on: Record<string, unknown>;
  readonly env?: Record<string, string>;
  readonly defaults?: { readonly run?: { readonly shell?: string } };
  readonly jobs: Record<string, { readonly 'runs-on': string; readonly env?: Record<string, string>; readonly steps: readonly Step[] }>;
}

const workflow = parse(readFileSync(WORKFLOW, 'utf8')) as Workflow;
const [jobName, job] = Object.entries(workflow.jobs)[0]!;
const env0 = { ...workflow.env, ...job.env };

let dir: string;
let tarball: string;
let prefix: string;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'llmp-ci-gate-'));
  const built = join(dir, 'build');
  await buildProduction(built);
  tarball = packageCli(built, dir).path;
  prefix = join(dir, 'prefix');
});

after(() => {
  rmSync(dir, { recursive: true, force: true });
});

interface StepResult {
  readonly step: string;
  readonly code: number;
  readonly out: string;
}

interface Runner {
  /** The checkout's folder. */
  readonly workspace: string;
  readonly summary: string;
}

/** A fresh runner: a checkout holding the tarball at LLMP_TARBALL, an empty step summary. */
function newRunner(name: string): Runner {
  const workspace = join(dir, name);
  const target = join(workspace, env0.LLMP_TARBALL!);
  mkdirSync(dirname(target), { recursive: true });
  copyFileSync(tarball, target);
  const summary = join(dir, `${name}.summary.md`);
  writeFileSync(summary, '');
  return { workspace, summary };
}

function bash(script: string, cwd: string, env: NodeJS.ProcessEnv): Promise<{ code: number; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['--noprofile', '--norc', '-eo', 'pipefail', '-c', script], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (b: Buffer) => (out += b.toString()));
    child.stderr.on('data', (b: Buffer) => (out += b.toString()));
    child.on('error', reject);
    const timer = setTimeout(() => child.kill('SIGKILL'), 240_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? -1, out });
    });
  });
}

/** Whether a step runs, by its `if:` (only the conditions this workflow uses), after a failure or not. */
function runs(step: Step, failed: boolean): boolean {
  if (step.if === undefined) return !failed;
  if (/^\$\{\{\s*(!cancelled\(\)|always\(\))\s*\}\}$/.test(step.if.trim())) return true;
  throw new Error(`the test does not evaluate the condition ${step.if}`);
}

/** A `uses:` step, stood in for (see the file's head); the artifact's files must be there. */
function standIn(step: Step, r: Runner): StepResult {
  const action = step.uses!.split('@')[0];
  if (action === 'actions/checkout' || action === 'actions/setup-node') return { step: action, code: 0, out: '' };
  if (action === 'actions/upload-artifact') {
    const paths = String(step.with?.path ?? '').split('\n').map((p) => p.trim()).filter(Boolean);
    return { step: action, code: 0, out: paths.filter((p) => existsSync(join(r.workspace, p))).join('\n') };
  }
  throw new Error(`the test has no stand-in for ${step.uses}`);
}

/** The job's steps in order (those `pick` keeps), as a runner runs them; the env as the workflow sets it, with `overrides` (an edited value). */
async function runJob(r: Runner, overrides: Record<string, string>, pick: (s: Step) => boolean = () => true): Promise<StepResult[]> {
  // a runner's environment has no npm_* of an `npm test` around it (npm_config_prefix among them)
  const own = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_/i.test(k)));
  const env: NodeJS.ProcessEnv = {
    ...own,
    ...env0,
    ...overrides,
    CI: 'true',
    GITHUB_WORKSPACE: r.workspace,
    GITHUB_STEP_SUMMARY: r.summary,
    RUNNER_TEMP: join(dir, 'runner-temp'),
    npm_config_prefix: prefix,
    npm_config_prefer_offline: 'true',
    PATH: `${join(prefix, 'bin')}:${process.env.PATH}`,
    NODE_PATH: '',
  };
  const results: StepResult[] = [];
  let failed = false;
  for (const step of job.steps.filter(pick)) {
    if (!runs(step, failed)) continue;
    const result = step.uses ? standIn(step, r) : { step: step.name ?? step.run!, ...(await bash(step.run!, r.workspace, { ...env, ...step.env })) };
    results.push(result);
    if (result.code !== 0) failed = true;
  }
  return results;
}

const named = (results: readonly StepResult[], pattern: RegExp): StepResult | undefined => results.find((s) => pattern.test(s.step));

interface XmlElement {
  readonly name: string;
  readonly attrs: Readonly<Record<string, string>>;
  readonly children: XmlElement[];
  text: string;
}

/** A strict reading of the XML JUnit readers take: one root, tags that nest, quoted attributes, the five entities; throws otherwise. */
function parseXml(xml: string): XmlElement {
  const body = xml.replace(/^<\?xml version="1\.0" encoding="UTF-8"\?>\s*/, '');
  const decode = (t: string): string => {
    assert.doesNotMatch(t, /&(?!(amp|lt|gt|quot|apos);)/, `a bare & in ${t}`);
    return t.replace(/&(amp|lt|gt|quot|apos);/g, (_m, e: string) => ({ amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" })[e]!);
  };
  const token = /<!--[\s\S]*?-->|<\/([\w.:-]+)\s*>|<([\w.:-]+)((?:\s+[\w.:-]+="[^"<]*")*)\s*(\/?)>|([^<]+)/y;
  const root: XmlElement = { name: '', attrs: {}, children: [], text: '' };
  const stack = [root];
  let m: RegExpExecArray | null;
  while (token.lastIndex < body.length && (m = token.exec(body)) !== null) {
    const top = stack[stack.length - 1]!;
    if (m[1] !== undefined) {
      assert.equal(m[1], top.name, `</${m[1]}> closes <${top.name}>`);
      stack.pop();
    } else if (m[2] !== undefined) {
      const attrs = Object.fromEntries([...m[3]!.matchAll(/([\w.:-]+)="([^"]*)"/g)].map((a) => [a[1]!, decode(a[2]!)]));
      const el: XmlElement = { name: m[2], attrs, children: [], text: '' };
      top.children.push(el);
      if (m[4] !== '/') stack.push(el);
    } else if (m[5] !== undefined) {
      assert.ok(top !== root || m[5].trim() === '', 'text outside the root');
      top.text += decode(m[5]);
    }
  }
  assert.equal(token.lastIndex, body.length, `not XML at ${token.lastIndex}: ${body.slice(token.lastIndex, token.lastIndex + 40)}`);
  assert.equal(stack.length, 1, `<${stack[stack.length - 1]!.name}> is not closed`);
  assert.equal(root.children.length, 1, 'one root element');
  return root.children[0]!;
}

function testCases(junit: XmlElement): XmlElement[] {
  assert.equal(junit.name, 'testsuites');
  return junit.children.flatMap((suite) => suite.children.filter((c) => c.name === 'testcase'));
}

test('the workflow: on pull requests and main, Node 20, the CLI from its tarball, a run, a compare with the markdown and JUnit, the run kept', () => {
  assert.ok('pull_request' in workflow.on && 'push' in workflow.on);
  assert.equal(workflow.defaults?.run?.shell, 'bash');
  assert.match(job['runs-on'], /^ubuntu-/);
  const uses = job.steps.filter((s) => s.uses).map((s) => s.uses!.split('@')[0]);
  assert.deepEqual(uses, ['actions/checkout', 'actions/setup-node', 'actions/upload-artifact']);
  assert.equal(String(job.steps.find((s) => s.uses?.startsWith('actions/setup-node'))!.with?.['node-version']), '20');
  const scripts = job.steps.filter((s) => s.run).map((s) => s.run!);
  for (const s of scripts) assert.doesNotMatch(s, /\$\{\{/, 'run scripts read env variables, which this test can set, not expressions');
  assert.match(scripts.join('\n'), /npm install --global [^\n]*"\.\/\$LLMP_TARBALL"/);
  assert.match(scripts.join('\n'), /llm-profiler compare "\$LLMP_BASELINE" new\.run\.json --fail-on-regression "\$LLMP_GATE" \\\n\s+--markdown --junit latency\.junit\.xml/);
  const upload = job.steps.find((s) => s.uses?.startsWith('actions/upload-artifact'))!;
  assert.equal(upload.if?.replace(/\s/g, ''), '${{!cancelled()}}', 'the run is kept when the gate fails too');
  assert.match(String(upload.with?.path), /new\.run\.json/);
  assert.equal(env0.LLMP_URL, '', 'the bundled local server by default');
  assert.ok(jobName);
});

test('the job against the bundled local server with no baseline yet: the run is made and kept, the summary says to commit it', { skip: hostPlatform() ? false : `node-llama-cpp ships no binary for ${process.platform}-${process.arch}` }, async () => {
  const r = newRunner('local');
  const results = await runJob(r, {});
  for (const s of results) assert.equal(s.code, 0, `${s.step}:\n${s.out}`);
  const run = JSON.parse(readFileSync(join(r.workspace, 'new.run.json'), 'utf8')) as { format: string; requests: { warmup: boolean; error?: unknown }[]; endpoint: { url: string } };
  assert.equal(run.format, 'llm-profiler.run');
  assert.equal(run.requests.filter((q) => !q.warmup && q.error === undefined).length, 100);
  assert.match(run.endpoint.url, /^http:\/\/127\.0\.0\.1:\d+/);
  assert.match(named(results, /Profile the workload/)!.out, /starting the bundled llama\.cpp server/);
  assert.match(readFileSync(r.summary, 'utf8'), /^No baseline at `perf\/baseline\.run\.json` yet: nothing compared\./);
  assert.equal(named(results, /upload-artifact/)!.out, 'new.run.json');
  assert.deepEqual(processesMentioning(`${prefix}${sep}lib${sep}node_modules${sep}llm-profiler${sep}dist${sep}localServer.mjs`), [], 'no server process is left');
});

let a: StepServer | undefined;
let slow: StepServer | undefined;
after(async () => {
  await Promise.all([a?.close(), slow?.close()]);
});

test('the gate through LLMP_URL: the baseline against itself passes with the step summary and JUnit written; a 50% longer step fails the job', async () => {
  [a, slow] = await Promise.all([startStepServer({ stepMs: 10, ttftMs: 20 }), startStepServer({ stepMs: 15, ttftMs: 20 })]);
  // on main, no baseline yet: the job passes and keeps new.run.json, which is committed as the baseline
  const main = newRunner('main');
  for (const s of await runJob(main, { LLMP_URL: a.url })) assert.equal(s.code, 0, `${s.step}:\n${s.out}`);
  const baseline = join(main.workspace, env0.LLMP_BASELINE!);
  copyFileSync(join(main.workspace, 'new.run.json'), baseline);

  // the compare step again: NEW is the baseline's own run
  writeFileSync(main.summary, '');
  const same = await runJob(main, { LLMP_URL: a.url }, (s) => s.run === undefined || s.run.includes('llm-profiler compare'));
  assert.equal(named(same, /Compare/)!.code, 0, named(same, /Compare/)!.out);
  const summary = readFileSync(main.summary, 'utf8');
  assert.match(summary, /^### Latency: new\.run\.json \(NEW\) vs baseline\.run\.json \(BASE\)/);
  assert.match(summary, /^\|.*\|$/m, 'the markdown table');
  assert.match(summary, /^\| TPOT p50 \|/m);
  const passed = testCases(parseXml(readFileSync(join(main.workspace, 'latency.junit.xml'), 'utf8')));
  assert.ok(passed.length >= 4, `${passed.length} test cases`);
  assert.deepEqual(passed.filter((c) => c.children.some((x) => x.name === 'failure')), []);

  // a pull request whose endpoint's step is 50% longer: a fresh runner, the committed baseline
  const pr = newRunner('pr');
  mkdirSync(dirname(join(pr.workspace, env0.LLMP_BASELINE!)), { recursive: true });
  copyFileSync(baseline, join(pr.workspace, env0.LLMP_BASELINE!));
  const results = await runJob(pr, { LLMP_URL: slow.url });
  const compare = named(results, /Compare/)!;
  assert.equal(compare.code, 1, compare.out);
  assert.match(compare.out, /TPOT p50 \d+(\.\d+)?% slower/);
  assert.equal(named(results, /upload-artifact/)!.out, 'new.run.json\nlatency.junit.xml', 'the run and the report are kept after the failure');
  assert.match(readFileSync(pr.summary, 'utf8'), /^\| TPOT p50 \|.*slower/m);
  const cases = testCases(parseXml(readFileSync(join(pr.workspace, 'latency.junit.xml'), 'utf8')));
  const failures = cases.filter((c) => c.children.some((x) => x.name === 'failure'));
  assert.ok(failures.some((c) => /^TPOT p50 not slower by more than 10%$/.test(c.attrs.name ?? '')), failures.map((c) => c.attrs.name).join(', '));
});
