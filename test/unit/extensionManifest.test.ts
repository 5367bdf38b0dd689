// package.json's extension manifest against the code: command ids, settings, light activation.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { build } from 'esbuild';
import { API_TABLE } from '../../src/engine/core/apis';
import { CONFIG_KEYS } from '../../src/extension/configModel';
import { defaultOf, settingBounds, settingOptions } from '../../src/jobs/options';

const root = join(__dirname, '..', '..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));

test('every command is contributed once, with the category, and the enum lists them all', () => {
  const ids = pkg.contributes.commands.map((c: { command: string }) => c.command);
  const src = readFileSync(join(root, 'src/extension/commands.ts'), 'utf8');
  const enumBody = /enum Command \{([^}]*)\}/.exec(src)?.[1] ?? '';
  const enumIds = [...enumBody.matchAll(/=\s*'([^']+)'/g)].map((m) => m[1]);
  assert.ok(enumIds.length >= 10, `the Command enum read from commands.ts: ${enumIds.length} ids`);
  assert.deepEqual([...ids].sort(), [...enumIds].sort());
  for (const c of pkg.contributes.commands) {
    assert.equal(c.category, 'LLM Profiler', c.command);
    assert.match(c.command, /^llmProfiler\./);
  }

});

test('every setting is read by the config snapshot and nothing else is', () => {
  const props = Object.keys(pkg.contributes.configuration.properties).map((k) => k.replace(/^llmProfiler\./, ''));
  assert.deepEqual(props.filter((p) => p !== 'endpoints').sort(), [...CONFIG_KEYS].sort());
});

test('every setting that mirrors an option has its default, bounds and choices from the options table', () => {
  const props = pkg.contributes.configuration.properties;
  for (const o of settingOptions()) {
    const p = props[`llmProfiler.${o.setting!.key}`];
    assert.ok(p, `package.json contributes llmProfiler.${o.setting!.key}`);
    const scale = o.setting!.scale ?? 1;
    const d = defaultOf<number | string>(o.key, 'settings');
    if (d !== undefined) assert.equal(p.default, typeof d === 'number' ? d * scale : d, `${o.setting!.key} default`);
    const { min, max } = settingBounds(o);
    if (p.type === 'integer' || p.type === 'number') {
      assert.equal(p.minimum, min, `${o.setting!.key} minimum`);
      assert.equal(p.maximum, max, `${o.setting!.key} maximum`);
    }
    if (o.kind === 'enum') assert.deepEqual(p.enum, o.choices, `${o.setting!.key} enum`);
  }
});

test('an endpoint setting\'s API choices are the API table\'s rows: auto, then each id with its label', () => {
  const api = pkg.contributes.configuration.properties['llmProfiler.endpoints'].items.properties.api;
  assert.deepEqual(api.enum, ['auto', ...API_TABLE.map((r) => r.id)], 'package.json lists every API of src/engine/core/apis.ts, in its order');
  assert.equal(api.enumDescriptions.length, api.enum.length);
  assert.match(api.enumDescriptions[0], /^Detect it/);
  assert.deepEqual(api.enumDescriptions.slice(1), API_TABLE.map((r) => r.label), 'each API described by its row\'s label');
});

test('activation is light: no "*", no onStartupFinished, and the extension bundle holds neither the engine nor the file parsers', async () => {
  const events: string[] = pkg.activationEvents;
  assert.ok(!events.includes('*') && !events.includes('onStartupFinished'));
  assert.ok(events.every((e) => /^(workspaceContains|onLanguage|onWebviewPanel):/.test(e)), events.join());
  assert.match(pkg.engines.vscode, /^\^1\.(\d|[1-9]\d|100)\.\d+$/);
  // the real build of dist/extension.js (esbuild.mjs's own options), with the list of what went into it
  const { targets, optionsFor } = await import('../../esbuild.mjs');
  const target = targets.find((t) => t.outfile === 'dist/extension.js')!;
  const r = await build({ ...optionsFor(target), absWorkingDir: root, write: false, metafile: true, logLevel: 'silent' });
  const inputs = Object.keys(r.metafile!.inputs);
  const heavy = /node_modules\/(undici|yaml|valibot|chart\.js|node-llama-cpp)\/|src\/engine\/(runner|client|detect|runFile|promptFiles|sweep)\.ts|src\/localServer\/launcher\.ts|src\/extension\/promptWorker\/main\.ts|src\/jobs\/(execute|build|resolve)\.ts/;
  assert.deepEqual(inputs.filter((i) => heavy.test(i)), [], 'loaded on first use, not at activation');
  assert.ok(existsSync(join(root, pkg.contributes.viewsContainers.activitybar[0].icon)));
  assert.equal(pkg.capabilities.untrustedWorkspaces.supported, 'limited');
});
