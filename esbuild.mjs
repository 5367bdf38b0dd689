// One build script, one bundle per runtime: the extension host (node, cjs, `vscode` external),
// the CLI and the local server (node), and each webview (browser).
import { build, context } from 'esbuild';
import { existsSync, mkdirSync, chmodSync } from 'node:fs';

const watch = process.argv.includes('--watch');
const production = process.argv.includes('--production');

/** @type {import('esbuild').BuildOptions[]} */
const targets = [
  {
    entryPoints: ['src/extension/extension.ts'],
    outfile: 'dist/extension.js',
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    external: ['vscode', 'node-llama-cpp'],
  },
  {
    entryPoints: ['src/cli/main.ts'],
    outfile: 'dist/cli.js',
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    external: ['node-llama-cpp'],
    banner: { js: '#!/usr/bin/env node' },
  },
  {
    // node-llama-cpp is ESM only and native: the server is an ES module and loads it from node_modules.
    entryPoints: ['src/localServer/serverMain.ts'],
    outfile: 'dist/localServer.mjs',
    platform: 'node',
    format: 'esm',
    target: 'node20',
    external: ['node-llama-cpp'],
    banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" },
  },
  {
    entryPoints: ['webview/report/main.ts'],
    outfile: 'dist/webview/report.js',
    platform: 'browser',
    format: 'iife',
    target: 'es2022',
  },
  {
    entryPoints: ['webview/sidebar/main.ts'],
    outfile: 'dist/webview/sidebar.js',
    platform: 'browser',
    format: 'iife',
    target: 'es2022',
  },
];

mkdirSync('dist', { recursive: true });
for (const t of targets) {
  if (!existsSync(t.entryPoints[0])) continue; // a surface not built yet
  const options = {
    bundle: true,
    sourcemap: !production,
    minify: production,
    logLevel: 'warning',
    legalComments: 'none',
    ...t,
  };
  if (watch) {
    const ctx = await context(options);
    await ctx.watch();
  } else {
    await build(options);
  }
}
if (existsSync('dist/cli.js')) chmodSync('dist/cli.js', 0o755);
