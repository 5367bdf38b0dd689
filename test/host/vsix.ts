// The VSIXs as a release makes them (scripts/package.ts: one production build, then the universal
// VSIX and this machine's platform VSIX), each checked for what it must hold and nothing else. The
// UI tests then run on them installed into code-server.
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { buildProduction, hostPlatform, manifest, packageVsix, ROOT, runtimePackages, zipFile, type Platform } from '../../scripts/package';

export interface VsixResult {
  readonly path: string;
  readonly bytes: number;
  readonly files: readonly string[];
  readonly problems: readonly string[];
}

/** The Marketplace budget for a platform VSIX. */
export const PLATFORM_VSIX_BUDGET = 30 * 1024 * 1024;

/** What must be inside every VSIX (paths under extension/). */
const REQUIRED = ['package.json', 'dist/extension.js', 'dist/engine.js', 'dist/files.js', 'dist/promptWorker.js', 'dist/cli.js', 'dist/localServer.mjs', 'dist/webview/sidebar.js', 'dist/webview/report.js', 'media/icon.svg', 'media/icon.png', 'media/sidebar.css',
  // the first-run walkthrough's pages (package.json contributes.walkthroughs)
  'media/walkthrough/localServer.md', 'media/walkthrough/profile.md', 'media/walkthrough/promptFile.md', 'media/walkthrough/endpoint.md'];
/** What must never be, in any VSIX. */
const FORBIDDEN: readonly [RegExp, string][] = [
  [/\.map$/, 'a source map'],
  [/\.[cm]?ts$/, 'a TypeScript source or declaration'],
  [/\.(c|cc|cpp|h|hpp|gyp|gypi)$/, 'a C/C++ source or build file'],
  [/^extension\/(src|test|webview|scripts|bench|docs|\.ci)\//, 'sources or tests'],
  [/(^|\/)\.(env|git|vscode|github)(\/|$)/, 'a dot folder or file'],
  [/\.vsix$/, 'another VSIX'],
  [/^extension\/test-artifacts\//, 'test artifacts'],
  [/gitRelease\.bundle$/, 'llama.cpp\'s source'],
];

function check(path: string, files: readonly string[], platform: Platform | undefined): VsixResult {
  const problems: string[] = [];
  const bytes = statSync(path).size;
  for (const r of REQUIRED) if (!files.includes(`extension/${r}`)) problems.push(`missing extension/${r}`);
  for (const f of files) for (const [re, what] of FORBIDDEN) if (re.test(f)) problems.push(`${f}: ${what}`);
  // the Marketplace page renders the README from the VSIX: every image an https URL of a file in the repository
  const repo = String((manifest().repository as { url?: string } | undefined)?.url ?? '').replace(/\.git$/, '');
  const readme = zipFile(path, 'extension/readme.md').toString('utf8');
  for (const [, url] of readme.matchAll(/!\[[^\]]*\]\(([^)\s]+)/g)) {
    const inRepo = url!.startsWith(`${repo}/raw/HEAD/`) ? url!.slice(`${repo}/raw/HEAD/`.length) : undefined;
    if (!url!.startsWith('https://')) problems.push(`README image ${url}: not an https URL (the Marketplace shows no relative image)`);
    else if (inRepo !== undefined && !existsSync(`${ROOT}/${inRepo}`)) problems.push(`README image ${url}: no such file in the repository (${inRepo})`);
  }
  const modules = files.filter((f) => f.startsWith('extension/node_modules/'));
  if (!platform) {
    if (modules.length) problems.push(`the universal VSIX holds node_modules (${modules.length} files, e.g. ${modules[0]})`);
  } else {
    // node-llama-cpp's runtime and this platform's binary package, nothing else (no CUDA or Vulkan variants)
    const allowed = [...runtimePackages(), `node_modules/@node-llama-cpp/${platform.binary}`].map((p) => `extension/${p}/`);
    for (const f of modules) if (!allowed.some((a) => f.startsWith(a))) problems.push(`${f}: not part of node-llama-cpp's runtime or the ${platform.binary} binary`);
    const bins = `extension/node_modules/@node-llama-cpp/${platform.binary}/bins/`;
    if (!files.some((f) => f.startsWith(bins) && f.endsWith('.node'))) problems.push(`no native addon under ${bins}`);
    if (!files.includes('extension/node_modules/node-llama-cpp/package.json')) problems.push('missing extension/node_modules/node-llama-cpp');
    if (bytes > PLATFORM_VSIX_BUDGET) problems.push(`${(bytes / 1024 / 1024).toFixed(1)} MB: over the ${PLATFORM_VSIX_BUDGET / 1024 / 1024} MB budget`);
  }
  return { path, bytes, files, problems };
}

/** The universal VSIX and, where node-llama-cpp ships a binary for this machine, its platform VSIX, into `dir`. */
export async function packageVsixes(dir: string): Promise<{ universal: VsixResult; platform?: VsixResult & { platform: Platform } }> {
  const built = join(dir, 'build');
  await buildProduction(built);
  const u = packageVsix(built, undefined, dir);
  const universal = check(u.path, u.files, undefined);
  const host = hostPlatform();
  if (!host) return { universal };
  const p = packageVsix(built, host, dir);
  return { universal, platform: { ...check(p.path, p.files, host), platform: host } };
}
