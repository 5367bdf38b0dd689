// Packages the VSIX as a release would (a production build: minified, no source maps) in a staging
// folder, so the checkout's dist/ is left alone, and checks that it holds what the extension needs
// and nothing else. The UI tests then run on this VSIX installed into code-server.
import { spawnSync } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, mkdirSync, readFileSync, statSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './build';

export interface VsixResult {
  readonly path: string;
  readonly bytes: number;
  readonly files: readonly string[];
  readonly problems: readonly string[];
}

/** What must be inside (paths under extension/). */
const REQUIRED = ['package.json', 'dist/extension.js', 'dist/engine.js', 'dist/files.js', 'dist/localServer.mjs', 'dist/webview/sidebar.js', 'dist/webview/report.js', 'media/icon.svg', 'media/sidebar.css'];
/** What must never be. */
const FORBIDDEN: readonly [RegExp, string][] = [
  [/\.map$/, 'a source map'],
  [/\.ts$/, 'a TypeScript source'],
  [/^extension\/(src|test|webview|scripts|bench|docs|\.ci)\//, 'sources or tests'],
  [/^extension\/node_modules\//, 'node_modules'],
  [/(^|\/)\.(env|git|vscode)(\/|$)/, 'a dot folder or file'],
  [/\.vsix$/, 'another VSIX'],
  [/^extension\/test-artifacts\//, 'test artifacts'],
];

/** The names in a zip's central directory (no unzip binary needed on a fresh machine). */
export function zipEntries(file: string): string[] {
  const buf = readFileSync(file);
  let eocd = -1;
  for (let i = buf.length - 22; i >= Math.max(0, buf.length - 65_557); i--) {
    if (buf.readUInt32LE(i) === 0x06054b50) { eocd = i; break; }
  }
  if (eocd < 0) throw new Error(`${file}: not a zip file (no end of central directory)`);
  const count = buf.readUInt16LE(eocd + 10);
  let at = buf.readUInt32LE(eocd + 16);
  const names: string[] = [];
  for (let n = 0; n < count; n++) {
    if (buf.readUInt32LE(at) !== 0x02014b50) throw new Error(`${file}: damaged central directory`);
    const nameLen = buf.readUInt16LE(at + 28);
    const extraLen = buf.readUInt16LE(at + 30);
    const commentLen = buf.readUInt16LE(at + 32);
    names.push(buf.toString('utf8', at + 46, at + 46 + nameLen));
    at += 46 + nameLen + extraLen + commentLen;
  }
  return names;
}

export function packageVsix(stage: string): VsixResult {
  mkdirSync(stage, { recursive: true });
  for (const f of ['package.json', 'README.md', 'CHANGELOG.md', 'LICENSE', '.vscodeignore', 'esbuild.mjs', 'tsconfig.json']) {
    if (existsSync(join(ROOT, f))) copyFileSync(join(ROOT, f), join(stage, f));
  }
  // Build inputs are linked; what goes into the package is copied (vsce does not follow links).
  for (const d of ['src', 'webview', 'node_modules']) {
    if (existsSync(join(ROOT, d))) symlinkSync(join(ROOT, d), join(stage, d), 'dir');
  }
  cpSync(join(ROOT, 'media'), join(stage, 'media'), { recursive: true });
  const b = spawnSync(process.execPath, ['esbuild.mjs', '--production'], { cwd: stage, stdio: 'inherit' });
  if (b.status !== 0) throw new Error(`production build failed (exit ${b.status})`);
  const out = join(stage, 'llm-profiler.vsix');
  const vsce = join(ROOT, 'node_modules', '@vscode', 'vsce', 'vsce');
  // The README's relative links stay relative: the package has no repository URL to point them at.
  const p = spawnSync(process.execPath, [vsce, 'package', '--no-dependencies', '--no-rewrite-relative-links', '--allow-missing-repository', '-o', out],
    { cwd: stage, encoding: 'utf8' });
  if (p.status !== 0) throw new Error(`vsce package failed (exit ${p.status}):\n${p.stdout}\n${p.stderr}`);
  const listing = zipEntries(out);
  const problems: string[] = [];
  // every lazy part the extension requires (esbuild.mjs maps them to ./engine.js, ./files.js) must ship
  const lazy = [...readFileSync(join(stage, 'dist', 'extension.js'), 'utf8').matchAll(/require\(["']\.\/([a-z]+\.js)["']\)/g)].map((m) => `dist/${m[1]}`);
  const required = [...new Set([...REQUIRED, ...lazy])];
  for (const r of required) if (!listing.includes(`extension/${r}`)) problems.push(`missing extension/${r}`);
  for (const f of listing) for (const [re, what] of FORBIDDEN) if (re.test(f)) problems.push(`${f}: ${what}`);
  return { path: out, bytes: statSync(out).size, files: listing, problems };
}
