// The layout of STYLE.md is enforced by eslint.config.mjs (`npm run lint`). These tests prove that each
// boundary rule fails on a violation: a temporary folder mirrors the layout (src/engine, src/extension,
// src/shared, webview/...), holds a copy of the real config and a link to node_modules, and ESLint's
// Node API lints it. Each fixture breaks one rule; the clean ones show the rules let allowed imports by.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { ESLint } from 'eslint';
// @ts-expect-error: the config is JavaScript, without types
import { ENGINE_ROOMS as ROOMS } from '../../engineRooms.mjs';

const ENGINE_ROOMS = ROOMS as Record<string, readonly string[]>;

const repo = join(__dirname, '../..');

const fixtures: Record<string, string> = {
  // modules the fixtures import
  'src/extension/log.ts': `export const log = (s: string): string => s;\n`,
  'src/engine/run/runner.ts': `export const run = (): number => 1;\n`,
  'src/present/units.ts': `export const formatMs = (v: number): string => \`\${v} ms\`;\n`,
  'src/shared/protocol.ts': `export type HostMessage = { readonly type: 'ready' };\nexport const PROTOCOL_VERSION = 1;\n`,

  // violations, one each
  'src/engine/importsVscode.ts': `import * as vscode from 'vscode';\nexport const v = vscode;\n`,
  'src/engine/importsVscodeLater.ts': `export const load = (): Promise<unknown> => import('vscode');\n`,
  'src/engine/importsExtension.ts': `import { log } from '../extension/log';\nexport const x = log('x');\n`,
  'webview/report/importsFs.ts': `import { readFileSync } from 'node:fs';\nexport const read = readFileSync;\n`,
  'webview/report/importsRunner.ts': `import { run } from '../../src/engine/run/runner';\nexport const r = run();\n`,
  'webview/report/protocolValue.ts': `import { PROTOCOL_VERSION } from '../../src/shared/protocol';\nexport const p = PROTOCOL_VERSION;\n`,
  'src/extension/protocolValue.ts': `import { PROTOCOL_VERSION } from '../shared/protocol';\nexport const p = PROTOCOL_VERSION;\n`,
  'src/extension/promptWorker/importsVscode.ts': `import * as vscode from 'vscode';\nexport const v = vscode;\n`,
  'src/extension/promptWorker/protocolValue.ts': `import { PROTOCOL_VERSION } from '../../shared/protocol';\nexport const p = PROTOCOL_VERSION;\n`,
  'src/engine/cycleA.ts': `import { b } from './cycleB';\nexport const a = (): number => b() + 1;\n`,
  'src/engine/cycleB.ts': `import { a } from './cycleA';\nexport const b = (): number => (Math.random() > 2 ? a() : 0);\n`,
  'src/engine/defaultExport.ts': `export default function f(): number {\n  return 1;\n}\n`,
  'src/engine/core/importsNode.ts': `import { randomBytes } from 'node:crypto';\nexport const r = randomBytes;\n`,
  'src/present/importsTransport.ts': `import { send } from '../engine/transport/send';\nexport const s = send;\n`,

  // allowed
  'webview/report/clean.ts':
    `import type { HostMessage } from '../../src/shared/protocol';\n` +
    `import { formatMs } from '../../src/present/units';\n` +
    `export const show = (m: HostMessage): string => m.type + formatMs(1);\n`,
  'webview/report/importsAnalysis.ts': `import { median } from '../../src/engine/analysis/median';\nexport const m = median;\n`,
  // a cycle through `import type` only is no cycle at run time: the rule skips type-only edges
  'src/engine/typeCycleA.ts': `import type { B } from './typeCycleB';\nexport type A = { b?: B };\nexport const a = 1;\n`,
  'src/engine/typeCycleB.ts': `import type { A } from './typeCycleA';\nexport type B = { a?: A };\nexport const b = 2;\n`,
};

/** Every ordered pair of rooms: `src/engine/<from>/uses_<to>.ts` imports `src/engine/<to>/thing.ts`. */
function roomPairs(): [string, string][] {
  const rooms = Object.keys(ENGINE_ROOMS);
  return rooms.flatMap((from) => rooms.map((to): [string, string] => [from, to]));
}
for (const room of Object.keys(ENGINE_ROOMS)) {
  fixtures[`src/engine/${room}/thing.ts`] = `export const thing = 1;\n`;
  fixtures[`src/engine/${room}/usesLoose.ts`] = `import { loose } from '../loose';\nexport const l = loose;\n`;
}
for (const [from, to] of roomPairs()) {
  fixtures[`src/engine/${from}/uses_${to}.ts`] = `import { thing } from '../${to}/thing';\nexport const t = thing;\n`;
}
fixtures['src/engine/loose.ts'] = `export const loose = 1;\n`;
fixtures['src/engine/transport/send.ts'] = `export const send = 1;\n`;
fixtures['src/engine/analysis/median.ts'] = `export const median = 1;\n`;

let dir = '';
/** file (relative to the mirror) → the rules it breaks, and the messages */
const found = new Map<string, { rules: string[]; messages: string[] }>();

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'layout-'));
  for (const f of ['eslint.config.mjs', 'engineRooms.mjs']) copyFileSync(join(repo, f), join(dir, f));
  symlinkSync(join(repo, 'node_modules'), join(dir, 'node_modules'), 'dir');
  for (const [file, text] of Object.entries(fixtures)) {
    mkdirSync(join(dir, dirname(file)), { recursive: true });
    writeFileSync(join(dir, file), text);
  }
  const eslint = new ESLint({ cwd: dir, overrideConfigFile: join(dir, 'eslint.config.mjs') });
  for (const r of await eslint.lintFiles(['src', 'webview'])) {
    found.set(relative(dir, r.filePath), {
      rules: [...new Set(r.messages.map((m) => m.ruleId ?? `fatal: ${m.message}`))].sort(),
      messages: r.messages.map((m) => m.message),
    });
  }
});

after(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function rulesOf(file: string): string[] {
  const r = found.get(file);
  assert.ok(r, `${file} was not linted (linted: ${[...found.keys()].join(', ')})`);
  return r.rules;
}
function messagesOf(file: string): string {
  return found.get(file)?.messages.join('\n') ?? '';
}

test('every fixture was linted', () => {
  assert.deepEqual([...found.keys()].sort(), Object.keys(fixtures).sort());
});

test('the engine may not import vscode, statically or dynamically', () => {
  assert.deepEqual(rulesOf('src/engine/importsVscode.ts'), ['@typescript-eslint/no-restricted-imports']);
  assert.match(messagesOf('src/engine/importsVscode.ts'), /'vscode' import is restricted.*without VS Code/);
  assert.deepEqual(rulesOf('src/engine/importsVscodeLater.ts'), ['no-restricted-syntax']);
  assert.match(messagesOf('src/engine/importsVscodeLater.ts'), /Dynamic import: this layer must run without VS Code/);
});

test('the engine may not import from the extension', () => {
  assert.deepEqual(rulesOf('src/engine/importsExtension.ts'), ['import-x/no-restricted-paths']);
  assert.match(messagesOf('src/engine/importsExtension.ts'), /"\.\.\/extension\/log" imported in restricted zone/);
});

test('the webview may not import node builtins', () => {
  assert.deepEqual(rulesOf('webview/report/importsFs.ts'), ['import-x/no-nodejs-modules']);
  assert.match(messagesOf('webview/report/importsFs.ts'), /node:fs/);
});

test('the webview may not import engine modules other than the pure ones', () => {
  assert.deepEqual(rulesOf('webview/report/importsRunner.ts'), ['import-x/no-restricted-paths']);
  assert.match(messagesOf('webview/report/importsRunner.ts'), /src\/engine\/run\/runner" imported in restricted zone/);
});

test('the protocol is imported with `import type` only, from the webview and the extension', () => {
  for (const file of ['webview/report/protocolValue.ts', 'src/extension/protocolValue.ts']) {
    assert.deepEqual(rulesOf(file), ['@typescript-eslint/no-restricted-imports'], file);
    assert.match(messagesOf(file), /the protocol crosses into the webview as types only/, file);
  }
});

test('the prompt reader\'s worker thread (src/extension/promptWorker) may not import vscode; the protocol rule still holds there', () => {
  assert.deepEqual(rulesOf('src/extension/promptWorker/importsVscode.ts'), ['@typescript-eslint/no-restricted-imports']);
  assert.match(messagesOf('src/extension/promptWorker/importsVscode.ts'), /'vscode' import is restricted.*worker thread, which has no VS Code/);
  assert.deepEqual(rulesOf('src/extension/promptWorker/protocolValue.ts'), ['@typescript-eslint/no-restricted-imports']);
  assert.match(messagesOf('src/extension/promptWorker/protocolValue.ts'), /the protocol crosses into the webview as types only/);
});

test('an import cycle between two modules is reported, one through `import type` is not', () => {
  assert.deepEqual(rulesOf('src/engine/cycleA.ts'), ['import-x/no-cycle']);
  assert.deepEqual(rulesOf('src/engine/cycleB.ts'), ['import-x/no-cycle']);
  assert.deepEqual(rulesOf('src/engine/typeCycleA.ts'), []);
  assert.deepEqual(rulesOf('src/engine/typeCycleB.ts'), []);
});

test('a default export is reported', () => {
  assert.deepEqual(rulesOf('src/engine/defaultExport.ts'), ['import-x/no-default-export']);
});

test('each engine room imports only the rooms ENGINE_ROOMS names for it; a loose file in src/engine is no room', () => {
  for (const [from, to] of roomPairs()) {
    const file = `src/engine/${from}/uses_${to}.ts`;
    if (ENGINE_ROOMS[from].includes(to) || from === to) assert.deepEqual(rulesOf(file), [], file);
    else {
      assert.deepEqual(rulesOf(file), ['import-x/no-restricted-paths'], file);
      assert.match(messagesOf(file), new RegExp(`src/engine/${from} may import only`), file);
    }
  }
  for (const room of Object.keys(ENGINE_ROOMS)) {
    assert.deepEqual(rulesOf(`src/engine/${room}/usesLoose.ts`), ['import-x/no-restricted-paths'], room);
  }
});

test('core and analysis import no node builtin (the webview uses them); src/present imports only core and analysis of the engine', () => {
  assert.deepEqual(rulesOf('src/engine/core/importsNode.ts'), ['import-x/no-nodejs-modules']);
  assert.deepEqual(rulesOf('src/present/importsTransport.ts'), ['import-x/no-restricted-paths']);
  assert.deepEqual(rulesOf('webview/report/importsAnalysis.ts'), []);
});

test('allowed imports pass: the protocol as types, src/present from the webview', () => {
  assert.deepEqual(rulesOf('webview/report/clean.ts'), []);
  for (const file of ['src/extension/log.ts', 'src/engine/run/runner.ts', 'src/present/units.ts', 'src/shared/protocol.ts']) {
    assert.deepEqual(rulesOf(file), [], file);
  }
});

/** The relative imports of every .ts file under src/ and webview/, `import type` and `export … from` included. */
function importGraph(): Map<string, string[]> {
  const files = ['src', 'webview'].flatMap((d) =>
    readdirSync(join(repo, d), { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts')).map((f) => join(repo, d, f)),
  );
  const known = new Set(files);
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const text = readFileSync(file, 'utf8');
    const specs = [...text.matchAll(/(?:^|\n)\s*(?:import|export)\b[^'"]*?from\s*['"](\.{1,2}\/[^'"]+)['"]|(?:import|require)\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)/g)].map((m) => m[1] ?? m[2]);
    const deps = specs
      .map((s) => resolve(dirname(file), s).replace(/\.js$/, ''))
      .map((p) => [`${p}.ts`, `${p}.d.ts`, join(p, 'index.ts')].find((c) => known.has(c)))
      .filter((p): p is string => p !== undefined);
    graph.set(file, deps);
  }
  return graph;
}

/** Strongly connected components of more than one module (Tarjan). */
function circles(graph: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const group: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      group.push(w);
    } while (w !== v);
    if (group.length > 1) found.push(group.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

test('no import circle in src/ or webview/, counting `import type` too (a shared type moves down instead)', () => {
  const graph = importGraph();
  assert.ok(graph.size > 150, `only ${graph.size} modules found`);
  assert.deepEqual(circles(graph).map((g) => g.map((f) => relative(repo, f))), []);
  const demo = new Map([['a', ['b']], ['b', ['a']], ['c', ['a']]]);
  assert.deepEqual(circles(demo), [['a', 'b']], 'the finder itself finds a circle');
});
