// Files a prompt names, and the prompt files and datasets themselves, read as untrusted (issue 27):
// real links to secrets outside the project, to /proc/self/environ and to /dev/zero, a real FIFO, a
// linked folder, `..` and absolute paths; `${env:…}` only when allowed. Each case once through the
// engine's readers (readPrompts, loadDataset: what the CLI uses) and once through the extension's
// rules (documentAccessOptions), trusted and not.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadDataset } from '../../src/engine/prompts/dataset';
import { parsePromptFile } from '../../src/engine/prompts/promptFiles';
import { readPrompts } from '../../src/engine/prompts/promptSource';
import { projectRoot, promptAccess } from '../../src/engine/prompts/siblingFiles';
import { readUntrustedFile, readUntrustedFileSync, UntrustedFileError } from '../../src/engine/files/untrustedFile';
import { documentAccessOptions } from '../../src/extension/promptModel';

const base = realpathSync(mkdtempSync(join(tmpdir(), 'untrusted-')));
after(() => rmSync(base, { recursive: true, force: true }));

const SECRET = 'ssh-ed25519 AAAA-THE-PRIVATE-KEY';
// outside every project: stands for ~/.ssh/id_rsa
const home = join(base, 'home');
mkdirSync(join(home, '.ssh'), { recursive: true });
writeFileSync(join(home, '.ssh', 'id_rsa'), SECRET);
writeFileSync(join(home, 'x.png'), SECRET);
// a repository: its .git marks the prompt's project
const repo = join(base, 'repo');
mkdirSync(join(repo, '.git'), { recursive: true });
mkdirSync(join(repo, 'prompts'));
mkdirSync(join(repo, 'shared'));
writeFileSync(join(repo, 'shared', 'facts.txt'), 'facts from the project');
writeFileSync(join(repo, 'prompts', 'cat.png'), 'PNGDATA');
symlinkSync(join(home, '.ssh', 'id_rsa'), join(repo, 'prompts', 'notes.txt'));
symlinkSync(join(home, '.ssh'), join(repo, 'prompts', 'linked'));
symlinkSync('/proc/self/environ', join(repo, 'prompts', 'env.txt'));
symlinkSync('/dev/zero', join(repo, 'prompts', 'zero.txt'));
symlinkSync(join(repo, 'shared', 'facts.txt'), join(repo, 'prompts', 'facts-link.txt'));
execFileSync('mkfifo', [join(repo, 'prompts', 'pipe.txt')]);

/** Settles within `ms` or fails: a FIFO or /dev/zero read without care never does. */
async function soon<T>(p: Promise<T>, ms = 5000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`still reading after ${ms} ms`)), ms)));
  try {
    return await Promise.race([p, late]);
  } finally {
    clearTimeout(timer);
  }
}

const PROMPTY = `---
name: leak
inputs:
  a: \${file:notes.txt}
  b: \${file:linked/id_rsa}
  c: \${file:env.txt}
  d: \${file:../../home/.ssh/id_rsa}
  e: \${file:${join(home, '.ssh', 'id_rsa')}}
  f: \${file:zero.txt}
  g: \${file:pipe.txt}
  h: \${file:../shared/facts.txt}
  i: \${file:facts-link.txt}
  k: \${env:UNTRUSTED_TEST_SECRET}
  l: \${env:UNTRUSTED_TEST_OTHER:fallback}
---
user:
a={{a}} b={{b}} c={{c}} d={{d}} e={{e}} f={{f}} g={{g}} h={{h}} i={{i}} k={{k}} l={{l}}
![cat](cat.png) ![key](../../home/x.png)
`;

test('a prompty pulls in only its project\'s files, by real path; every refusal says why; ${env:} only when allowed', async () => {
  const path = join(repo, 'prompts', 'leak.prompty');
  writeFileSync(path, PROMPTY);
  process.env.UNTRUSTED_TEST_SECRET = 'AWS-SECRET-VALUE';
  process.env.UNTRUSTED_TEST_OTHER = 'OTHER-VALUE';
  try {
    const read = await soon(readPrompts({ kind: 'file', path }));
    const sent = JSON.stringify(read.prompts);
    for (const leaked of [SECRET, 'AWS-SECRET-VALUE', 'OTHER-VALUE', 'UNTRUSTED_TEST_SECRET=', 'PATH=']) assert.ok(!sent.includes(leaked), `${leaked} was sent: ${sent}`);
    assert.match(sent, /h=facts from the project i=facts from the project/);
    assert.match(sent, /l=fallback/);
    const why = (key: string) => read.warnings.find((w) => w.includes(`inputs.${key}: `)) ?? '';
    assert.match(why('a'), /cannot read notes\.txt .*: outside the prompt's project \(.*\/repo\): pass --allow-read DIR/);
    assert.match(why('b'), /outside the prompt's project/);
    assert.match(why('c'), /a link to \/proc \(\/proc\/\d+\/environ\): files under \/proc, \/sys and \/dev are never read/);
    assert.match(why('d'), /outside the prompt's project/);
    assert.match(why('e'), /outside the prompt's project/);
    assert.match(why('f'), /a link to \/dev/);
    assert.match(why('g'), /not a regular file \(a FIFO\)/);
    assert.match(why('k'), /\$\{env:UNTRUSTED_TEST_SECRET\} was not read: environment variables are sent only when allowed: pass --allow-env UNTRUSTED_TEST_SECRET/);
    assert.match(why('l'), /was not read: .*; its default was used/);
    assert.ok(read.warnings.some((w) => /the image \.\.\/\.\.\/home\/x\.png cannot be read next to the prompt file \(outside the prompt's project/.test(w)), read.warnings.join('\n'));
    assert.deepEqual(read.pulledIn, { files: [join(repo, 'shared', 'facts.txt'), join(repo, 'prompts', 'cat.png')], env: [] });

    // widened on purpose: --allow-read the folder, --allow-env the name
    const allowed = await soon(readPrompts({ kind: 'file', path, allowRead: [home], allowEnv: ['UNTRUSTED_TEST_SECRET'] }));
    const sentAllowed = JSON.stringify(allowed.prompts);
    assert.match(sentAllowed, /a=ssh-ed25519 AAAA-THE-PRIVATE-KEY b=ssh-ed25519/);
    assert.match(sentAllowed, /k=AWS-SECRET-VALUE l=fallback/);
    assert.ok(!sentAllowed.includes('PATH='), '/proc stays refused whatever is allowed');
    assert.deepEqual(allowed.pulledIn?.env, ['UNTRUSTED_TEST_SECRET']);
    assert.ok(allowed.pulledIn?.files.includes(join(home, '.ssh', 'id_rsa')));
  } finally {
    delete process.env.UNTRUSTED_TEST_SECRET;
    delete process.env.UNTRUSTED_TEST_OTHER;
  }
});

test('--prompt-file and --dataset: a link to /dev/zero, a FIFO, a folder and a link to /proc/self/environ are refused at once', async () => {
  const cases: [string, RegExp][] = [
    ['zero.txt', /not a regular file \(a character device\)|a link to \/dev/],
    ['pipe.txt', /not a regular file \(a FIFO\)/],
    ['linked', /not a regular file \(a folder\)/],
    ['env.txt', /a link to \/proc/],
  ];
  for (const [name, re] of cases) {
    const path = join(repo, 'prompts', name);
    await assert.rejects(soon(readPrompts({ kind: 'file', path })), (e: Error) => re.test(e.message) && e.message.includes(path), `prompt file ${name}`);
    await assert.rejects(soon(loadDataset(path)), (e: Error) => re.test(e.message) && e.message.includes(`cannot read dataset ${path}`), `dataset ${name}`);
  }
});

test('a device node outside /dev is refused as not a regular file (where mknod is allowed: root)', async (t) => {
  const node = join(base, 'zero-node');
  try {
    execFileSync('mknod', [node, 'c', '1', '5'], { stdio: 'ignore' });
  } catch {
    t.skip('mknod is not allowed here');
    return;
  }
  const notRegular = (e: unknown) => e instanceof UntrustedFileError && e.message === 'not a regular file (a character device)';
  assert.throws(() => readUntrustedFileSync(node, { maxBytes: 1024 }), notRegular);
  await assert.rejects(soon(readUntrustedFile(node, { maxBytes: 1024 })), notRegular);
});

test('the byte cap counts bytes read: at the cap is read, one more is refused, sync and async alike', async () => {
  const f = join(base, 'cap.txt');
  writeFileSync(f, 'x'.repeat(100));
  assert.equal(readUntrustedFileSync(f, { maxBytes: 100 }).length, 100);
  assert.equal((await readUntrustedFile(f, { maxBytes: 100 })).length, 100);
  const tooBig = (e: unknown) => e instanceof UntrustedFileError && e.reason === 'too-large' && /larger than 99 bytes/.test(e.message);
  assert.throws(() => readUntrustedFileSync(f, { maxBytes: 99 }), tooBig);
  await assert.rejects(readUntrustedFile(f, { maxBytes: 99 }), tooBig);
  // a dataset over its cap
  writeFileSync(join(base, 'd.jsonl'), '{"prompt": "hi"}\n'.repeat(10));
  await assert.rejects(loadDataset(join(base, 'd.jsonl'), 100), /larger than 100 bytes \(split it into smaller files\)/);
  assert.equal((await loadDataset(join(base, 'd.jsonl'), 170)).length, 10);
});

test('the prompt\'s project is the nearest folder above it holding .git, else its own folder', () => {
  assert.equal(projectRoot(join(repo, 'prompts', 'leak.prompty')), repo);
  const loose = join(base, 'loose');
  mkdirSync(loose, { recursive: true });
  assert.equal(projectRoot(join(loose, 'p.prompty')), loose);
});

test('the editor: trusted or not, files by real path inside the workspace or the project; ${env:} only when trusted', () => {
  const path = join(repo, 'prompts', 'leak.prompty');
  process.env.UNTRUSTED_TEST_SECRET = 'AWS-SECRET-VALUE';
  try {
    for (const trusted of [true, false]) {
      const access = promptAccess(documentAccessOptions(path, trusted, [join(repo, 'prompts')], process.env));
      const parse = parsePromptFile(path, PROMPTY, { readFile: access.readFile, readEnv: access.readEnv });
      const sent = JSON.stringify(parse.prompts);
      assert.ok(!sent.includes(SECRET), `trusted ${trusted}: the key was sent`);
      assert.ok(!sent.includes('PATH='), `trusted ${trusted}: the environment was sent`);
      assert.match(sent, /h=facts from the project/);
      const a = parse.warnings.find((w) => w.message.startsWith('inputs.a: '))?.message ?? '';
      assert.match(a, /outside the workspace folders and the prompt's project \(.*\/repo\): add its folder to the workspace/);
      const k = parse.warnings.find((w) => w.message.startsWith('inputs.k: '))?.message;
      if (trusted) {
        assert.match(sent, /k=AWS-SECRET-VALUE/, 'a trusted workspace reads the environment as before');
        assert.deepEqual(access.pulledIn().env, ['UNTRUSTED_TEST_SECRET']);
      } else {
        assert.match(k ?? '', /was not read: the workspace is not trusted/);
        assert.deepEqual(access.pulledIn().env, []);
      }
    }
    // a workspace folder outside the project is allowed, by its real path
    const access = promptAccess(documentAccessOptions(path, false, [join(home, '.ssh')], {}));
    assert.ok(access.readFile('linked/id_rsa') instanceof Uint8Array);
  } finally {
    delete process.env.UNTRUSTED_TEST_SECRET;
  }
});
