// One build script, one bundle per runtime: the extension host (node, cjs, `vscode` external) with
// its two lazily loaded parts (the engine and the run/prompt files, each its own file so that
// activation compiles neither) and the prompt reader's worker thread, the CLI and the local server (node), and each webview (browser).
import { build, context } from 'esbuild';
import { chmodSync, existsSync, mkdirSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

/** The extension's lazy parts: `require('./engineBundle')` in src/extension/lazy.ts becomes `require('./engine.js')`. */
const LAZY = { './engineBundle': './engine.js', './filesBundle': './files.js' };

/** @type {import('esbuild').Plugin} */
const lazyParts = {
  name: 'lazy-parts',
  setup(b) {
    b.onResolve({ filter: /^\.\/(engine|files)Bundle$/ }, (args) => ({ path: LAZY[args.path], external: true }));
  },
};

/**
 * `import source from 'worker-source:webview/report/compareWorker.ts'`: that file bundled on its own, as
 * a string. The report starts its comparison worker from a blob: of it, so the page needs no fetch (a
 * webview's CSP with connect-src kept some report pages in code-server from loading at all).
 * @type {import('esbuild').Plugin}
 */
const workerSource = {
  name: 'worker-source',
  setup(b) {
    b.onResolve({ filter: /^worker-source:/ }, (args) => ({ path: args.path.slice('worker-source:'.length), namespace: 'worker-source' }));
    b.onLoad({ filter: /.*/, namespace: 'worker-source' }, async (args) => {
      const r = await build({ entryPoints: [args.path], bundle: true, write: false, platform: 'browser', format: 'iife', target: 'es2022', minify: b.initialOptions.minify ?? false, legalComments: 'none' });
      return { contents: `export default ${JSON.stringify(r.outputFiles[0].text)};`, loader: 'js', watchFiles: [args.path] };
    });
  },
};

const node = { platform: 'node', format: 'cjs', target: 'node20' };

/** @type {import('esbuild').BuildOptions[]} */
export const targets = [
  { ...node, entryPoints: ['src/extension/extension.ts'], outfile: 'dist/extension.js', external: ['vscode', 'node-llama-cpp'], plugins: [lazyParts] },
  { ...node, entryPoints: ['src/extension/engineBundle.ts'], outfile: 'dist/engine.js', external: ['vscode', 'node-llama-cpp'] },
  { ...node, entryPoints: ['src/extension/filesBundle.ts'], outfile: 'dist/files.js', external: ['vscode'] },
  // The prompt reader's worker thread (src/extension/promptWorker/client.ts starts it beside dist/extension.js).
  // No `vscode` external: a thread has none, so an import of it anywhere below fails the build.
  { ...node, entryPoints: ['src/extension/promptWorker/main.ts'], outfile: 'dist/promptWorker.js' },
  // The worker threads of a run (--workers): found beside dist/cli.js and dist/engine.js (src/engine/run/workers/coordinator.ts).
  { ...node, entryPoints: ['src/engine/run/workers/workerMain.ts'], outfile: 'dist/worker.js', external: ['node-llama-cpp'] },
  { ...node, entryPoints: ['src/cli/main.ts'], outfile: 'dist/cli.js', external: ['node-llama-cpp'], banner: { js: '#!/usr/bin/env node' } },
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
  // with the report's comparison worker inside it, as a string (webview/report/compareRunner.ts)
  { entryPoints: ['webview/report/main.ts'], outfile: 'dist/webview/report.js', platform: 'browser', format: 'iife', target: 'es2022', plugins: [workerSource] },
  { entryPoints: ['webview/sidebar/main.ts'], outfile: 'dist/webview/sidebar.js', platform: 'browser', format: 'iife', target: 'es2022' },
];

/** The options esbuild is called with for one target. */
export function optionsFor(t, { production = false } = {}) {
  return { bundle: true, sourcemap: !production, minify: production, logLevel: 'warning', legalComments: 'none', ...t };
}

async function main() {
  const watch = process.argv.includes('--watch');
  const production = process.argv.includes('--production');
  mkdirSync('dist', { recursive: true });
  for (const t of targets) {
    const options = optionsFor(t, { production });
    if (watch) await (await context(options)).watch();
    else await build(options);
  }
  if (existsSync('dist/cli.js')) chmodSync('dist/cli.js', 0o755);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await main();
