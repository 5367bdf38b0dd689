// package.json's extension manifest against the code: command ids, settings, light activation.
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { ALL_COMMANDS } from '../../src/extension/commands';
import { CONFIG_KEYS } from '../../src/extension/configModel';

const root = join(__dirname, '..', '..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));

test('every command is contributed once, with the category, and the enum lists them all', () => {
  const ids = pkg.contributes.commands.map((c: { command: string }) => c.command);
  assert.deepEqual([...ids].sort(), [...ALL_COMMANDS].sort());
  for (const c of pkg.contributes.commands) {
    assert.equal(c.category, 'LLM Profiler', c.command);
    assert.match(c.command, /^llmProfiler\./);
  }
  const src = readFileSync(join(root, 'src/extension/commands.ts'), 'utf8');
  for (const id of ids) assert.ok(src.includes(`'${id}'`), `${id} in the Command enum`);
});

test('every setting is read by the config snapshot and nothing else is', () => {
  const props = Object.keys(pkg.contributes.configuration.properties).map((k) => k.replace(/^llmProfiler\./, ''));
  assert.deepEqual(props.filter((p) => p !== 'endpoints').sort(), [...CONFIG_KEYS].sort());
});

test('activation is light: no "*", no onStartupFinished, engine and runtime not imported statically', () => {
  const events: string[] = pkg.activationEvents;
  assert.ok(!events.includes('*') && !events.includes('onStartupFinished'));
  assert.ok(events.every((e) => /^(workspaceContains|onLanguage|onWebviewPanel):/.test(e)), events.join());
  assert.match(pkg.engines.vscode, /^\^1\.(\d|[1-9]\d|100)\.\d+$/);
  const heavy = /^(\.\.\/engine\/(runner|detect|client|runFile|promptFiles|workload|metrics)|\.\.\/localServer\/launcher|node-llama-cpp|undici|yaml|chart\.js)$/;
  const staticImport = /^\s*import\s+(?!type\b)[^'"]*?from\s+['"]([^'"]+)['"]/gm;
  for (const f of readdirSync(join(root, 'src/extension')).filter((n) => n.endsWith('.ts'))) {
    const text = readFileSync(join(root, 'src/extension', f), 'utf8');
    for (const m of text.matchAll(staticImport)) assert.ok(!heavy.test(m[1]!), `${f} imports ${m[1]} at load time`);
  }
  assert.ok(existsSync(join(root, pkg.contributes.viewsContainers.activitybar[0].icon)));
  assert.equal(pkg.capabilities.untrustedWorkspaces.supported, 'limited');
});
