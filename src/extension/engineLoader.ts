// The one door to the engine: loaded on first use, never at activation. No `vscode` import.
// `require` rather than `import()`: where esbuild.mjs builds engineBundle.ts as its own file
// (dist/engineBundle.js, external to dist/extension.js) this stays a plain CommonJS require.
export type Engine = typeof import('./engineBundle');

let engine: Promise<Engine> | undefined;

export function loadEngine(): Promise<Engine> {
  engine ??= Promise.resolve().then(() => require('./engineBundle.js') as Engine);
  return engine;
}
