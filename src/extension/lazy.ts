// The two doors to the heavy parts, opened on first use and never at activation. No `vscode` import.
// In the built extension each is its own file (esbuild.mjs maps these requires to ./engine.js and
// ./files.js); run from the sources (tests), they are the modules themselves.
import type * as EngineParts from './engineBundle';
import type * as FileParts from './filesBundle';

export type EngineModule = typeof EngineParts;
export type FilesModule = typeof FileParts;

let engine: Promise<EngineModule> | undefined;
let files: Promise<FilesModule> | undefined;

/** Jobs: the runner, undici, the local server launcher. */
export function loadEngine(): Promise<EngineModule> {
  // A plain require, not import(): esbuild must leave it as a path to the separate file, loaded synchronously.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  engine ??= Promise.resolve().then(() => require('./engineBundle') as EngineModule);
  return engine;
}

/** Run files and prompt files. */
export function loadFiles(): Promise<FilesModule> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  files ??= Promise.resolve().then(() => require('./filesBundle') as FilesModule);
  return files;
}
