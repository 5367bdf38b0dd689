// `llm-profiler compare` as a user runs it: run files made by the built CLI against step servers that
// know the truth (a fixed engine step: 10 ms on A, 20 ms on B, so B's TPOT is twice A's), then
// compared. A/A passes a 10% gate; A/B fails it (exit 1); a bad gate, different workloads and a gated
// figure these runs cannot judge are usage errors (exit 2); --force, --json, --markdown with the step
// summary, --junit, an imported vLLM result and two sweeps point by point.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildCli, ROOT, runCliProcess } from '../support/cli';
import { startStepServer } from '../support/stepServer';
import type { StepServer } from '../support/stepServer';

const dir = mkdtempSync(join(tmpdir(), 'llmp-compare-'));
const file = (name: string) => join(dir, name);
const VLLM = join(ROOT, 'test/fixtures/vllm/concurrency2.json');
let a: StepServer;
let b: StepServer;

/** `run` (or, with concurrencies, `sweep`) of `requests` against a server, its run file written to `out`. */
async function measure(server: StepServer, out: string, o: { requests: number; maxTokens?: number; concurrency?: string }): Promise<void> {
  const command = o.concurrency ? 'sweep' : 'run';
  const args = [command, '--url', server.url, '--requests', String(o.requests), '--max-tokens', String(o.maxTokens ?? 16), '--prompt-tokens', '16', '--warmup', '0'];
  const r = await runCliProcess([...args, '--concurrency', o.concurrency ?? '8', '--out', file(out)]);
  assert.equal(r.code, 0, r.stderr);
}

before(async () => {
  buildCli();
  [a, b] = await Promise.all([startStepServer({ stepMs: 10, ttftMs: 20 }), startStepServer({ stepMs: 20, ttftMs: 20 })]);
  // one run at a time: two at once would load the machine, and A/A's runs would differ by more than their servers
  await measure(a, 'a1.json', { requests: 60 });
  await measure(a, 'a2.json', { requests: 60 });
  await measure(b, 'b.json', { requests: 60 });
  await measure(a, 'a-short.json', { requests: 30, maxTokens: 8 });
  await measure(a, 'sweep-a.json', { requests: 24, concurrency: '4,8' });
  await measure(b, 'sweep-b.json', { requests: 24, concurrency: '4,8' });
});

after(async () => {
  await Promise.all([a?.close(), b?.close()]);
  rmSync(dir, { recursive: true, force: true });
});

const compare = (args: readonly string[], env?: Record<string, string>) => runCliProcess(['compare', ...args], env ? { env } : {});

test('A/A: no figure slower by more than 10%, exit 0; the table has its header, the sides and the method', async () => {
  const r = await compare([file('a1.json'), file('a2.json'), '--fail-on-regression', '10%']);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  const lines = r.stdout.split('\n');
  assert.match(lines[0]!, /^BASE {2}a1\.json: run \S+, started \d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ, 60 requests$/);
  assert.match(lines[1]!, /^NEW {3}a2\.json: run \S+, started .*, 60 requests$/);
  assert.match(r.stdout, /^ +BASE +NEW +Δ +Δ % +95% CI of Δ % +Verdict$/m);
  for (const label of ['TTFT p50', 'TPOT p90', 'ITL p99', 'E2E mean', 'Output tokens/s']) assert.match(r.stdout, new RegExp(`^${label} `, 'm'), label);
  assert.match(r.stdout, /^Method: percentile bootstrap of the difference, 2,000 resamples \(blocks of consecutive requests resampled whole, seed 0\)/m);
  assert.match(r.stdout, /Regression gate \(--fail-on-regression 10%\): passed/);
  // p99 of 60 requests cannot be judged: a gate of every figure leaves it out and says so
  assert.match(r.stdout, /Not gated, as they cannot be judged: TTFT p99, TPOT p99, E2E p99/);
});

test('A/B: TPOT twice as long is slower, the gate fails with exit 1 and names the figures', async () => {
  const r = await compare([file('a1.json'), file('b.json'), '--fail-on-regression', '10%']);
  assert.equal(r.code, 1, r.stdout + r.stderr);
  assert.match(r.stdout, /^TPOT p50 +\S+ ms +\S+ ms +\+\S+ ms +\+\d+\.?\d*% +\+\d+\.?\d*% to \+\d+\.?\d*% +slower$/m);
  assert.match(r.stdout, /^TPOT p50 \d+\.?\d*% slower, 95% CI \d+\.?\d*–\d+\.?\d*%$/m);
  assert.match(r.stdout, /Regression gate \(--fail-on-regression 10%\): FAILED: \d+ of \d+ figures slower by more than the threshold/);
  assert.match(r.stdout, /^ {2}TPOT p50: 95% CI \+\d+\.?\d*% to \+\d+\.?\d*%, above \+10%$/m);
  assert.match(r.stdout, /^ {2}Output tokens\/s: 95% CI −\d\d\.\d% to −\d\d\.\d%, below −10%$/m);
  // the same runs without a gate: the comparison, exit 0
  assert.equal((await compare([file('a1.json'), file('b.json')])).code, 0);
});

test('a bad gate, a gate of a figure that does not exist, --junit without a gate, and wrong files: exit 2 before any work', async () => {
  for (const [args, message] of [
    [['--fail-on-regression', 'fast'], /--fail-on-regression: "fast" is not a percentage/],
    [['--fail-on-regression', 'ttft.p98=5%'], /no figure "ttft\.p98"/],
    [['--junit', file('x.xml')], /--junit writes one test case per figure gated by --fail-on-regression/],
  ] as const) {
    const r = await compare([file('a1.json'), file('b.json'), ...args]);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, message);
    assert.equal(r.stdout, '');
  }
  const none = await compare([]);
  assert.equal(none.code, 2);
  assert.match(none.stderr, /give two run files/);
  const three = await compare([file('a1.json'), file('a2.json'), file('b.json')]);
  assert.equal(three.code, 2);
  assert.match(three.stderr, /give two run files, BASE and NEW; 3 were given/);
  const missing = await compare([file('a1.json'), file('nothing.json')]);
  assert.equal(missing.code, 2);
  assert.match(missing.stderr, /nothing\.json: no such file/);
  writeFileSync(file('other.json'), '{"hello": 1}');
  const other = await compare([file('a1.json'), file('other.json')]);
  assert.equal(other.code, 2);
  assert.match(other.stderr, /other\.json: not a .*result: an object with keys "hello"/);
});

test('different workloads are refused with the reason (exit 2); --force compares them, the difference said first', async () => {
  const refused = await compare([file('a1.json'), file('a-short.json')]);
  assert.equal(refused.code, 2);
  assert.match(refused.stderr, /not the same workload/);
  assert.match(refused.stderr, /max tokens differs: BASE 16, NEW 8/);
  assert.match(refused.stderr, /give --force to compare them anyway/);
  assert.equal(refused.stdout, '');
  const forced = await compare([file('a1.json'), file('a-short.json'), '--force']);
  assert.equal(forced.code, 0, forced.stderr);
  const lines = forced.stdout.split('\n');
  assert.equal(lines[3], 'Not the same workload: max tokens differs: BASE 16, NEW 8');
  assert.ok(lines.findIndex((l) => l.startsWith('TTFT p50')) > 3, 'the difference is said before the figures');
});

test('a figure named in the gate that these runs cannot judge (TTFT p99 of 60 requests) is a usage error that says what to do', async () => {
  const r = await compare([file('a1.json'), file('a2.json'), '--fail-on-regression', 'ttft.p99=10%']);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /--fail-on-regression names ttft\.p99, which cannot be judged: it needs at least 500 requests a side and has 60; measure more \(run --requests 500 or more\)/);
});

test('--json: the comparison, each row with its sentence, the gate and the exit code', async () => {
  const r = await compare([file('a1.json'), file('b.json'), '--json', '--fail-on-regression', 'tpot.p50=10%']);
  assert.equal(r.code, 1);
  const j = JSON.parse(r.stdout) as {
    base: string;
    next: string;
    comparison: { rows: { key: string; verdict: string; sentence: string; ciPct?: number[] }[]; method: { resamples: number } };
    gate: { results: { key: string; outcome: string; reason: string }[] };
    exitCode: number;
  };
  assert.equal(j.base, 'a1.json');
  assert.equal(j.next, 'b.json');
  assert.equal(j.comparison.rows.length, 17);
  const tpot = j.comparison.rows.find((row) => row.key === 'tpot.p50')!;
  assert.equal(tpot.verdict, 'slower');
  assert.ok(tpot.ciPct![0]! > 50 && tpot.ciPct![1]! < 150, `TPOT p50 is twice as long: ${tpot.ciPct}`);
  assert.match(tpot.sentence, /^TPOT p50 \d+\.?\d*% slower/);
  assert.deepEqual(j.gate.results, [{ key: 'tpot.p50', thresholdPct: 10, outcome: 'fail', reason: j.gate.results[0]!.reason }]);
  assert.equal(j.exitCode, 1);
  // the same seed, the same intervals
  const again = JSON.parse((await compare([file('a1.json'), file('b.json'), '--json', '--resamples', '300', '--seed', '3'])).stdout) as typeof j;
  const twice = JSON.parse((await compare([file('a1.json'), file('b.json'), '--json', '--resamples', '300', '--seed', '3'])).stdout) as typeof j;
  assert.equal(again.comparison.method.resamples, 300);
  assert.deepEqual(again.comparison.rows, twice.comparison.rows);
});

test('--markdown prints the table for a pull request and appends it to GITHUB_STEP_SUMMARY; --junit writes the gated figures', async () => {
  writeFileSync(file('summary.md'), 'earlier step\n');
  const r = await compare([file('a1.json'), file('b.json'), '--markdown', '--fail-on-regression', 'tpot.p50=10%,ttft.p50=50%', '--junit', file('junit.xml')], {
    GITHUB_STEP_SUMMARY: file('summary.md'),
  });
  assert.equal(r.code, 1, r.stderr);
  assert.match(r.stdout, /^### Latency: b\.json \(NEW\) vs a1\.json \(BASE\)$/m);
  assert.match(r.stdout, /^❌ Regression gate \(--fail-on-regression tpot\.p50=10%,ttft\.p50=50%\): FAILED: 1 of 2 figures/m);
  assert.match(r.stdout, /^\| Figure \| BASE \| NEW \| Δ \| Δ % \| 95% CI of Δ % \| Verdict \|$/m);
  assert.match(r.stdout, /^\| TPOT p50 \| .* \| \*\*slower\*\* \|$/m);
  assert.equal(readFileSync(file('summary.md'), 'utf8'), `earlier step\n${r.stdout}\n`);
  const xml = readFileSync(file('junit.xml'), 'utf8');
  assert.match(xml, /^<\?xml version="1\.0" encoding="UTF-8"\?>\n<testsuites name="llm-profiler compare" tests="2" failures="1" errors="0" skipped="0">/);
  assert.match(xml, /<testcase classname="llm-profiler\.compare" name="TPOT p50 not slower by more than 10%">\n\s+<failure type="regression" message="TPOT p50 \d+\.?\d*% slower, 95% CI [^"]+">95% CI \+[^<]+, above \+10%<\/failure>/);
  assert.match(xml, /<testcase classname="llm-profiler\.compare" name="TTFT p50 not slower by more than 50%">\n\s+<system-out>/);
  assert.match(r.stderr, /JUnit report written to .*junit\.xml/);
});

test('an imported vLLM result compared with itself: no difference, what the source lacks said first', async () => {
  const r = await compare([VLLM, VLLM, '--fail-on-regression', 'tpot.p50=5%,e2e.mean=5%']);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^Note: BASE was imported from vllm/m);
  assert.match(r.stdout, /^TPOT p50 .* ≈ 0 ms +\+0\.0% .* no difference$/m);
  assert.match(r.stdout, /^Where no difference was detected, a 5% change could have been missed/m);
  assert.match(r.stdout, /passed: none of 2 figures/);
});

test('two sweeps point by point; a sweep and a single run are refused', async () => {
  const r = await compare([file('sweep-a.json'), file('sweep-b.json'), '--fail-on-regression', 'tpot.p50=10%']);
  assert.equal(r.code, 1, r.stderr);
  assert.match(r.stdout, /^BASE {2}sweep-a\.json: run \S+, started .*, a sweep of 2 points$/m);
  assert.match(r.stdout, /^Point c=4 \(24 requests BASE, 24 NEW\)$/m);
  assert.match(r.stdout, /^Point c=8 \(24 requests BASE, 24 NEW\)$/m);
  assert.match(r.stdout, /^ {2}c=4 TPOT p50: 95% CI .*, above \+10%$/m);
  assert.match(r.stdout, /^ {2}c=8 TPOT p50: 95% CI .*, above \+10%$/m);
  const j = JSON.parse((await compare([file('sweep-a.json'), file('sweep-b.json'), '--json'])).stdout) as { points: { label: string; comparison: { rows: { key: string; base: number }[] } }[] };
  assert.deepEqual(j.points.map((p) => p.label), ['c=4', 'c=8']);
  // each point's throughput is its own: its tokens over its own time (not over the whole sweep's), as its summary says
  const run = JSON.parse(readFileSync(file('sweep-a.json'), 'utf8')) as { sweep: { points: { summary: { outputTokensPerSecond: number } }[] } };
  j.points.forEach((p, i) => {
    const compared = p.comparison.rows.find((row) => row.key === 'throughput')!.base;
    const own = run.sweep.points[i]!.summary.outputTokensPerSecond;
    assert.ok(Math.abs(compared - own) < 0.01 * own, `${p.label}: ${compared} tok/s compared, ${own} in its summary`);
  });
  const mixed = await compare([file('sweep-a.json'), file('a1.json')]);
  assert.equal(mixed.code, 2);
  assert.match(mixed.stderr, /BASE is a sweep and NEW a single run/);
});

test('compare --help names the exit codes', async () => {
  const r = await compare(['--help']);
  assert.equal(r.code, 0);
  assert.match(r.stdout, /^Usage: llm-profiler compare BASE NEW/);
  assert.match(r.stdout, /Exit codes: 0 ok .*\n1 a gated figure is slower by more than its threshold/);
});

test('one run: the requests two runs like it need to tell a --detect % change apart, from its own spread', async () => {
  const r = await compare([file('a1.json'), '--detect', '10']);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^a1\.json: 60 requests\.$/m);
  assert.match(r.stdout, /To tell a 10% change from noise .* each run needs about:/);
  assert.match(r.stdout, /^ +p50 +p90 +p99 +mean$/m);
  // p99 never below the 500 it needs to be judged
  assert.match(r.stdout, /^TTFT +[\d,]+ +[\d,]+ +(?:[5-9]\d\d|[\d,]{5,}) +[\d,]+$/m);
  const j = await compare([file('a1.json'), '--json', '--detect', '1']);
  const doc = JSON.parse(j.stdout) as { requests: number; detectPct: number; advice: { key: string; requests?: number }[] };
  assert.equal(doc.requests, 60);
  assert.equal(doc.detectPct, 1);
  const need = (key: string, d: typeof doc) => d.advice.find((a) => a.key === key)!.requests!;
  const loose = JSON.parse((await compare([file('a1.json'), '--json', '--detect', '4'])).stdout) as typeof doc;
  // a change four times smaller needs about sixteen times the requests (the error shrinks as 1/√n), above the floor of 10
  const [tight, wide] = [need('ttft.mean', doc), need('ttft.mean', loose)];
  assert.ok(wide > 10 && tight / wide > 14 && tight / wide < 18, `ttft.mean: ${tight} at 1% vs ${wide} at 4%`);
});
