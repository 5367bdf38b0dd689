// A prompt file from a pull request, run by the real CLI (node dist/cli.js) in "CI" with secrets in its
// environment (issue 27), against a real server that logs every body it receives: what the prompt
// pulls in is confined to its project by real path (links to ~/.ssh, a linked folder, `..`, absolute
// paths, /proc/self/environ refused, each saying why), `${env:…}` is read only with --allow-env, and
// what was pulled in is listed on stderr and in the run file. A --prompt-file or --dataset that is a
// link to /dev/zero, or a FIFO, is refused at once instead of reading without end or hanging.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseRunFile } from '../../src/engine/files/runFile';
import { buildCli, runCliProcess } from '../support/cli';
import { startScriptedServer } from '../support/scriptedServer';
import type { ScriptedServer } from '../support/scriptedServer';

const base = realpathSync(mkdtempSync(join(tmpdir(), 'untrusted-cli-')));
const home = join(base, 'home');
const repo = join(base, 'repo');
const KEY = 'ssh-ed25519 AAAA-CI-DEPLOY-KEY';
const CI_SECRET = 'ci-aws-secret-0123456789';

let s: ScriptedServer;
before(async () => {
  buildCli();
  mkdirSync(join(home, '.ssh'), { recursive: true });
  writeFileSync(join(home, '.ssh', 'id_rsa'), KEY);
  writeFileSync(join(home, 'key.png'), KEY);
  mkdirSync(join(repo, '.git'), { recursive: true });
  mkdirSync(join(repo, 'prompts'));
  writeFileSync(join(repo, 'README.txt'), 'project notes');
  symlinkSync(join(home, '.ssh', 'id_rsa'), join(repo, 'prompts', 'notes.txt'));
  symlinkSync(join(home, '.ssh'), join(repo, 'prompts', 'keys'));
  symlinkSync('/proc/self/environ', join(repo, 'prompts', 'env.txt'));
  symlinkSync('/dev/zero', join(repo, 'prompts', 'zero.txt'));
  execFileSync('mkfifo', [join(repo, 'prompts', 'pipe.jsonl')]);
  s = await startScriptedServer({ tokens: 2, ttftMs: 1, itlMs: 1, apis: ['openai-chat'] });
});
after(async () => {
  await s?.close();
  rmSync(base, { recursive: true, force: true });
});

const PROMPTY = `---
name: pr
inputs:
  a: \${file:notes.txt}
  b: \${file:keys/id_rsa}
  c: \${file:env.txt}
  d: \${file:../../home/.ssh/id_rsa}
  e: \${file:${join(home, '.ssh', 'id_rsa')}}
  f: \${file:../README.txt}
  g: \${env:AWS_SECRET_ACCESS_KEY}
---
user:
a={{a}} b={{b}} c={{c}} d={{d}} e={{e}} f={{f}} g={{g}}
![k](../../home/key.png)
`;

const common = (f: string, out: string) => ['run', '--url', s.url, '--api', 'openai-chat', '--requests', '1', '--warmup', '0', '--max-tokens', '2', '--prompt-file', f, '--out', out];
const sentText = () => JSON.stringify(s.log.map((l) => l.body));

test('a pull request\'s prompt file pulls in only its project, says why for each refusal, and lists what it pulled in', async () => {
  const f = join(repo, 'prompts', 'pr.prompty');
  writeFileSync(f, PROMPTY);
  const out = join(base, 'run.json');
  s.clearLog();
  const r = await runCliProcess(common(f, out), { env: { AWS_SECRET_ACCESS_KEY: CI_SECRET } });
  assert.equal(r.code, 0, r.stderr);
  const sent = sentText();
  for (const leaked of [KEY, CI_SECRET, 'PATH=', Buffer.from(KEY).toString('base64')]) assert.ok(!sent.includes(leaked), `${leaked} reached the server: ${sent}`);
  assert.match(sent, /f=project notes g=\\n/);
  const warn = (key: string) => r.stderr.split('\n').find((l) => l.includes(`inputs.${key}: `)) ?? '';
  for (const k of ['a', 'b', 'd', 'e']) assert.match(warn(k), /^llm-profiler: warning: .*pr\.prompty:\d+: inputs\.\w: cannot read .*: outside the prompt's project \(.*\/repo\): pass --allow-read DIR$/, `inputs.${k}`);
  assert.match(warn('c'), /a link to \/proc/);
  assert.match(warn('g'), /\$\{env:AWS_SECRET_ACCESS_KEY\} was not read: environment variables are sent only when allowed: pass --allow-env AWS_SECRET_ACCESS_KEY/);
  assert.match(r.stderr, /the image \.\.\/\.\.\/home\/key\.png cannot be read next to the prompt file \(outside the prompt's project/);
  assert.match(r.stderr, new RegExp(`llm-profiler: pr\\.prompty pulled in: file ${join(repo, 'README.txt')}\\n`));
  const run = parseRunFile(readFileSync(out, 'utf8'));
  assert.equal(run.workload.prompt.kind, 'file');
  assert.deepEqual(run.workload.prompt.kind === 'file' ? run.workload.prompt.pulledIn : undefined, { files: [join(repo, 'README.txt')], env: [] });
});

test('--allow-read DIR and --allow-env NAME widen it on purpose, and the run file says so', async () => {
  const f = join(repo, 'prompts', 'pr.prompty');
  writeFileSync(f, PROMPTY);
  const out = join(base, 'run-allowed.json');
  s.clearLog();
  const r = await runCliProcess([...common(f, out), '--allow-read', home, '--allow-env', 'AWS_SECRET_ACCESS_KEY'], { env: { AWS_SECRET_ACCESS_KEY: CI_SECRET } });
  assert.equal(r.code, 0, r.stderr);
  const sent = sentText();
  assert.ok(sent.includes(`a=${KEY}`) && sent.includes(`g=${CI_SECRET}`), sent);
  assert.ok(!sent.includes('PATH='), '/proc stays refused');
  assert.match(r.stderr, /pr\.prompty pulled in: files .*id_rsa.*README\.txt.*key\.png; environment variable AWS_SECRET_ACCESS_KEY\n/);
  const run = parseRunFile(readFileSync(out, 'utf8'));
  const p = run.workload.prompt;
  assert.ok(p.kind === 'file');
  assert.deepEqual(p.allowRead, [home]);
  assert.deepEqual(p.allowEnv, ['AWS_SECRET_ACCESS_KEY']);
  assert.deepEqual(p.pulledIn?.env, ['AWS_SECRET_ACCESS_KEY']);
  // a folder that is not there is a usage error naming the flag
  const bad = await runCliProcess([...common(f, out), '--allow-read', join(base, 'nope')]);
  assert.equal(bad.code, 2, bad.stderr);
  assert.match(bad.stderr, /--allow-read: .*nope is not a folder/);
  const badName = await runCliProcess([...common(f, out), '--allow-env', 'A=B']);
  assert.equal(badName.code, 2, badName.stderr);
  assert.match(badName.stderr, /--allow-env takes the NAME of an environment variable/);
});

test('a --prompt-file or --dataset that is a link to /dev/zero or /proc/self/environ, or a FIFO, is refused at once (exit 2)', async () => {
  const cases: [string, string, RegExp][] = [
    ['--prompt-file', join(repo, 'prompts', 'zero.txt'), /--prompt-file: cannot read prompt file .*zero\.txt: a link to \/dev \(\/dev\/zero\)/],
    ['--prompt-file', join(repo, 'prompts', 'pipe.jsonl'), /--prompt-file: cannot read prompt file .*pipe\.jsonl: not a regular file \(a FIFO\)/],
    ['--prompt-file', join(repo, 'prompts', 'env.txt'), /--prompt-file: cannot read prompt file .*env\.txt: a link to \/proc/],
    ['--dataset', join(repo, 'prompts', 'zero.txt'), /--dataset: cannot read dataset .*zero\.txt: a link to \/dev/],
    ['--dataset', join(repo, 'prompts', 'pipe.jsonl'), /--dataset: cannot read dataset .*pipe\.jsonl: not a regular file \(a FIFO\)/],
  ];
  for (const [flag, path, re] of cases) {
    s.clearLog();
    const r = await runCliProcess(['run', '--url', s.url, '--api', 'openai-chat', '--requests', '1', '--warmup', '0', flag, path], { killMs: 20_000 });
    assert.equal(r.code, 2, `${flag} ${path}: code ${r.code} signal ${r.signal} after ${Math.round(r.ms)} ms\n${r.stderr}`);
    assert.match(r.stderr, re);
    assert.equal(s.log.length, 0, 'nothing is sent');
  }
  // --vars too: a FIFO would hang it
  const f = join(repo, 'prompts', 'plain.txt');
  writeFileSync(f, 'Hello');
  const r = await runCliProcess(['run', '--url', s.url, '--api', 'openai-chat', '--prompt-file', f, '--vars', join(repo, 'prompts', 'pipe.jsonl')], { killMs: 20_000 });
  assert.equal(r.code, 2, `--vars FIFO: code ${r.code} signal ${r.signal}\n${r.stderr}`);
  assert.match(r.stderr, /--vars: cannot read .*pipe\.jsonl as JSON \(not a regular file \(a FIFO\)\)/);
});
