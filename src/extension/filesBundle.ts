// Run files and prompt files, behind one module loaded when the run list or a CodeLens first needs
// them (lazy.ts `loadFiles`). esbuild.mjs builds it as dist/files.js: reading a run file or a
// prompt file never loads the engine's network code.
export { readRunFile, requestsToCsv, writeRunFile } from '../engine/runFile';
export { parsePromptFile } from '../engine/promptFiles';
