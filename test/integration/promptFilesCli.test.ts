// Prompt files through the CLI's own code against a real server that logs what it received (issue 11):
// the messages a .prompty / .prompt.md / .prompt.yml becomes, --var and --vars, and `run` and `sweep`
// saying the same things with the same exit codes.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runJobCommand } from '../support/cli';
import type { ScriptedServer } from '../support/scriptedServer';
import { withServer } from '../support/withServer';

const dir = mkdtempSync(join(tmpdir(), 'prompt-files-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, text: string | Buffer): string {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
}

const SERVER = { ttftMs: 2, itlMs: 1, apis: ['openai-chat' as const] };

const run = (command: 'run' | 'sweep', args: readonly string[], env: NodeJS.ProcessEnv = {}) => runJobCommand(command, args, { env, cwd: dir });
const common = (s: ScriptedServer, f: string) => ['--url', s.url, '--api', 'openai-chat', '--requests', '1', '--warmup', '0', '--max-tokens', '2', '--prefix-cache', 'warm', '--prompt-file', f];
const sentMessages = (s: ScriptedServer) => s.log.map((l) => l.body.messages as { role: string; content: string }[]);

const CHAT = `---
name: Contoso
inputs:
  customer:
    type: object
    sample: \${file:customer.json}
  question:
    type: string
  history:
    type: array
    sample: []
model:
  parameters:
    max_tokens: 64
---
system:
You help {{ customer.firstName }} ({{ customer.orders | length }} orders) in {{ region }}.
{% for m in history %}
{{ m.role }}:
{{ m.content }}
{% endfor %}
user:
{{ question }}
`;

test('a .prompty is rendered as Prompty renders it, with ${file:}, ${env:}-free inputs, --vars JSON and --var', async () => {
  file('customer.json', JSON.stringify({ firstName: 'Sally', orders: [1, 2, 3] }));
  const f = file('chat.prompty', CHAT);
  const vars = file('vars.json', JSON.stringify({ history: [{ role: 'user', content: 'earlier' }, { role: 'assistant', content: 'reply' }], region: 'EU' }));
  await withServer(SERVER, async (s) => {
    const r = await run('run', [...common(s, f), '--vars', vars, '--var', 'question=Which tent?', '--var', 'region=Nordics']);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(sentMessages(s)[0], [
      { role: 'system', content: 'You help Sally (3 orders) in Nordics.' },
      { role: 'user', content: 'earlier' },
      { role: 'assistant', content: 'reply' },
      { role: 'user', content: 'Which tent?' },
    ]);
    assert.doesNotMatch(r.stderr, /has no value/);
    // without the values: each unfilled variable is listed once, at its line, and the run goes on
    const bare = await run('run', common(s, f));
    assert.equal(bare.code, 0, bare.stderr);
    const lines = bare.stderr.split('\n').filter((l) => l.includes('has no value'));
    assert.deepEqual(lines.map((l) => /chat\.prompty:(\d+): (\{\{\w+\}\})/.exec(l)!.slice(1)), [['17', '{{region}}'], ['23', '{{question}}']]);
    assert.match(lines[0]!, /sent empty, as its own tool renders it; give it with --var region=VALUE/);
  });
});

test('a .prompt.md gets ${input:…} and ${selection} from --var; unfilled ones are sent as written and listed', async () => {
  const f = file('review.prompt.md', '---\nagent: agent\n---\nReview for ${input:focus:what to look for}:\n\n${selection}\n');
  await withServer(SERVER, async (s) => {
    const r = await run('run', [...common(s, f), '--var', 'focus=races', '--var', 'selection=let x = 1;']);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(sentMessages(s)[0], [{ role: 'user', content: 'Review for races:\n\nlet x = 1;' }]);
    const bare = await run('run', common(s, f));
    assert.deepEqual(sentMessages(s)[1], [{ role: 'user', content: 'Review for ${input:focus:what to look for}:\n\n${selection}' }]);
    assert.match(bare.stderr, /review\.prompt\.md:4: \$\{input:focus\} \(what to look for\) has no value: sent as written; give it with --var focus=VALUE/);
    assert.match(bare.stderr, /review\.prompt\.md:6: \$\{selection\} has no value/);
  });
});

test('run and sweep read prompt files alike: the same warnings, the same refusals, exit 2 for both', async () => {
  const warned = file('warned.prompty', '---\nmodel:\n  parameters:\n    seed: 4\n    tools: []\n---\nuser:\nHi {{who}}\n');
  const broken = file('broken.prompty', '---\nname: x\nmodel: [a\n---\nuser:\nHi\n');
  const brokenYml = file('broken.prompt.yml', 'messages:\n  - role: user\n    content: "open\n');
  const binary = file('photo.prompt.md', Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 131) % 256)));
  await withServer(SERVER, async (s) => {
    const warnings = (stderr: string) => stderr.split('\n').filter((l) => l.includes('warning:'));
    const a = await run('run', common(s, warned));
    const b = await run('sweep', [...common(s, warned), '--concurrency', '1']);
    assert.equal(a.code, 0, a.stderr);
    assert.equal(b.code, 0, b.stderr);
    assert.equal(warnings(a.stderr).length, 3, a.stderr);
    assert.deepEqual(warnings(b.stderr), warnings(a.stderr));
    for (const [f, re] of [
      [broken, /broken\.prompty:3: the front matter is not valid YAML \(line 3, column \d+\)/],
      [brokenYml, /broken\.prompt\.yml:4: the file is not valid YAML \(line 4, column 1\): Missing closing "quote/],
      [binary, /photo\.prompt\.md:1: this (is a binary file|file is not UTF-8 text)/],
    ] as const) {
      const before = s.log.length;
      for (const command of ['run', 'sweep'] as const) {
        const r = await run(command, common(s, f));
        assert.equal(r.code, 2, `${command} ${f}: ${r.stderr}`);
        assert.match(r.stderr, re);
        assert.match(r.stderr, new RegExp(`${command}: --prompt-file: `));
      }
      assert.equal(s.log.length, before, 'nothing is sent for a refused file');
    }
  });
});

test('--var needs --prompt-file and NAME=VALUE; --vars must be a JSON object', async () => {
  await withServer(SERVER, async (s) => {
    const noFile = await run('run', ['--url', s.url, '--var', 'a=b']);
    assert.equal(noFile.code, 2);
    assert.match(noFile.stderr, /--var .*--prompt-file/);
    const f = file('p.prompt.md', 'Hi ${input:a}');
    const bad = await run('run', [...common(s, f), '--var', 'novalue']);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--var must be NAME=VALUE/);
    const notObject = await run('run', [...common(s, f), '--vars', file('v.json', '[1]')]);
    assert.equal(notObject.code, 2);
    assert.match(notObject.stderr, /--vars: .*must hold a JSON object/);
  });
});
