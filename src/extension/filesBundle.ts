// Run files and prompt files, behind one module loaded when the run list or a CodeLens first needs
// them (lazy.ts `loadFiles`). esbuild.mjs builds it as dist/files.js: reading a run file or a
// prompt file never loads the engine's network code. The same file is the comparison thread's entry
// (compareThread.ts starts it with COMPARE_ROLE; serveComparisons does nothing anywhere else).
import { readRunFile } from '../engine/files/runFile';
import { serveComparisons } from './compareWork';

export { readRunFile, requestsToCsv, writeRunFile } from '../engine/files/runFile';
// the report panel's other exports: a Perfetto trace, a row per chunk
export { traceToJson } from '../engine/files/traceEvents';
export { chunksToCsv } from '../engine/files/chunksCsv';
export { parsePromptFile } from '../engine/prompts/promptFiles';
// what a prompt file may pull in (its project's files, the environment), read by real path
export { anyPulledIn, promptAccess } from '../engine/prompts/siblingFiles';
// another tool's benchmark result as a run ("Open benchmark result…", a file dropped on the report)
export { importBenchmarkFile } from '../engine/files/importers/index';
// two runs compared (the baselines' CodeLens and sidebar marks), here when the comparison thread cannot start
export { compareFiles } from './compareWork';

serveComparisons(readRunFile);
