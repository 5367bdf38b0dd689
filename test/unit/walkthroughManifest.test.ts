// package.json's first-run walkthrough and the menus issue 32 added: every step's page exists and
// ships in the VSIX (.vscodeignore), each step has a command link and a completion event the
// extension can raise, a .json or .jsonl file in the Explorer offers "Profile with this dataset", and
// the view's title reads "LLM Profiler" (one view in its container, named as the container).
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join, matchesGlob } from 'node:path';
import { test } from 'node:test';

const root = join(__dirname, '..', '..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const extensionSource = ['src/extension/walkthrough.ts', 'src/extension/multilineInput.ts'].map((f) => readFileSync(join(root, f), 'utf8')).join('\n');

/** Whether vsce ships a path under .vscodeignore's rules (the last matching rule wins; `!` includes). */
function shipped(path: string): boolean {
  let out = true;
  for (const line of readFileSync(join(root, '.vscodeignore'), 'utf8').split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#'))) {
    const negated = line.startsWith('!');
    if (matchesGlob(path, negated ? line.slice(1) : line)) out = negated;
  }
  return out;
}

test('the walkthrough: four steps, each a page that exists and ships, a command link and a completion event', () => {
  const [w] = pkg.contributes.walkthroughs;
  assert.equal(w.id, 'gettingStarted');
  assert.deepEqual(w.steps.map((s: { title: string }) => s.title), ['Start the local server', 'Profile it', 'Open a prompt file', 'Add your endpoint']);
  const commands = new Set(pkg.contributes.commands.map((c: { command: string }) => c.command));
  for (const s of w.steps) {
    const page = s.media.markdown as string;
    assert.ok(existsSync(join(root, page)), `${page} exists`);
    assert.ok(shipped(page), `${page} is in the VSIX`);
    const link = /\(command:([\w.]+)\)/.exec(s.description)?.[1];
    assert.ok(link && (commands.has(link) || link.startsWith('workbench.')), `${s.id}: a command link (${link})`);
    assert.ok(s.completionEvents.length > 0, `${s.id}: a completion event`);
    for (const e of s.completionEvents as string[]) {
      const key = /^onContext:([\w.]+)$/.exec(e)?.[1];
      if (key) assert.ok(extensionSource.includes(`'${key}'`), `${s.id}: the extension sets ${key}`);
      else assert.match(e, /^onSettingChanged:llmProfiler\.|^onCommand:llmProfiler\./);
    }
  }
});

test('a .json or .jsonl file in the Explorer offers "Profile with this dataset"; the view\'s title reads "LLM Profiler"', () => {
  const entry = pkg.contributes.menus['explorer/context'].find((m: { command: string }) => m.command === 'llmProfiler.profileDataset');
  assert.ok(entry, 'in the Explorer\'s context menu');
  const re = /resourceExtname =~ \/(.*)\/i/.exec(entry.when)![1]!.replace(/\\\\/g, '\\');
  for (const ext of ['.json', '.jsonl', '.JSONL']) assert.match(ext, new RegExp(re, 'i'));
  assert.doesNotMatch('.yaml', new RegExp(re, 'i'));
  assert.match(entry.when, /!explorerResourceIsFolder/);
  const title = pkg.contributes.commands.find((c: { command: string }) => c.command === 'llmProfiler.profileDataset').title;
  assert.equal(title, 'Profile with this dataset');
  const [container] = pkg.contributes.viewsContainers.activitybar;
  const [view] = pkg.contributes.views[container.id];
  assert.equal(view.name, container.title, 'one view named as its container: the title reads "LLM PROFILER", not "LLM PROFILER: PROFILER"');
});
