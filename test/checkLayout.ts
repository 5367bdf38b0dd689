// The layout rules of STYLE.md, checked on every `npm test`: a violation fails the build.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join, relative } from 'node:path';

const root = join(__dirname, '..');

function* files(dir: string): Generator<string> {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) yield* files(p);
    else if (/\.(ts|tsx|mts|js|mjs)$/.test(name)) yield p;
  }
}

const importRe = /(?:(?:^|\n)\s*(?:import\s+(type\s+)?[^'"]*?from\s+|export\s+[^'"]*?from\s+|import\s+)|\bimport\s*\(\s*|\brequire\s*\(\s*)['"]([^'"]+)['"]/g;

export function importsOf(source: string): { spec: string; typeOnly: boolean }[] {
  const out: { spec: string; typeOnly: boolean }[] = [];
  for (const m of source.matchAll(importRe)) out.push({ spec: m[2]!, typeOnly: Boolean(m[1]) });
  return out;
}

if (require.main === module) main();

function main(): void {
const nodeBuiltins = new Set(builtinModules.flatMap((m) => [m, `node:${m}`]));
const problems: string[] = [];

function check(dir: string, rule: (spec: string, typeOnly: boolean) => string | undefined): void {
  let stat;
  try { stat = statSync(join(root, dir)); } catch { return; }
  if (!stat.isDirectory()) return;
  for (const file of files(join(root, dir))) {
    const src = readFileSync(file, 'utf8');
    for (const { spec, typeOnly } of importsOf(src)) {
      const why = rule(spec, typeOnly);
      if (why) problems.push(`${relative(root, file)}: imports '${spec}': ${why}`);
    }
  }
}

const noVscode = (spec: string) => (spec === 'vscode' ? 'this layer must run without VS Code' : undefined);
check('src/engine', (spec) => noVscode(spec) ?? (spec.includes('/extension/') ? 'the engine may not reach up into the extension' : undefined));
check('src/localServer', (spec) => noVscode(spec) ?? (spec.includes('/extension/') ? 'the local server may not reach into the extension' : undefined));
check('src/cli', noVscode);
check('src/shared', (spec, typeOnly) => (spec === 'vscode' || (nodeBuiltins.has(spec) && !typeOnly) ? 'shared code is imported by the webview too' : undefined));
check('webview', (spec, typeOnly) => {
  if (spec === 'vscode') return 'the webview runs in a browser';
  if (nodeBuiltins.has(spec)) return 'the webview runs in a browser: no node modules';
  if (spec.includes('/src/') && !spec.endsWith('shared/protocol') && !typeOnly && !spec.includes('/src/engine/')) return 'the webview may only import the protocol (and pure engine code)';
  return undefined;
});
// the protocol crosses into the webview as types only
for (const dir of ['src/extension', 'webview']) {
  check(dir, (spec, typeOnly) => (spec.endsWith('shared/protocol') && !typeOnly ? 'import the protocol with `import type`' : undefined));
}

if (problems.length) {
  console.error(`layout check failed:\n  ${problems.join('\n  ')}`);
  process.exit(1);
}
console.log('layout check: ok');
}
