// Everything the extension takes from the engine and the local server launcher, behind one module
// loaded on first use (engineLoader.ts). Built as its own bundle where esbuild.mjs splits it out, so
// the extension's own bundle stays small (undici alone is ~650 KB of code to compile at activation).
export { runWorkload } from '../engine/runner';
export { defaultWorkload } from '../engine/workload';
export { detectApi } from '../engine/detect';
export { summarize } from '../engine/metrics';
export { readRunFile, writeRunFile, requestsToCsv } from '../engine/runFile';
export { parsePromptFile } from '../engine/promptFiles';
export { startLocalServer } from '../localServer/launcher';
export { runSweep, runPrefillDial, defaultConcurrencies, pointLabel } from '../engine/sweep';
