// What the panel checks before drawing a run it was given, so a bad file gets a sentence, not a
// blank page: the run file's schema (src/engine/core/runSchema.ts), the same one the host's parseRunFile
// uses, worded for the panel. It guards the webview's own input (restored state, a message from an
// older host).
import { asRunFile } from '../../src/engine/core/runSchema';
import { RUN_VERSION } from '../../src/engine/core/runFormat';
import type { RunFileProblem } from '../../src/engine/core/runSchema';
import type { RunFile } from '../../src/engine/core/types';

function sentence(p: RunFileProblem): string {
  switch (p.kind) {
    case 'not-object':
      return 'This is not an LLM Profiler run file (expected a JSON object).';
    case 'format':
      return 'This is not an LLM Profiler run file (its "format" is not "llm-profiler.run").';
    case 'version':
      return `This run file has version ${JSON.stringify(p.version)}; this version of LLM Profiler reads version ${RUN_VERSION}. Update the extension to open it.`;
    case 'field':
      if (p.missing) return p.parent === '' ? `The run file is incomplete: it has no "${p.key}".` : `The run file is incomplete: ${p.path} is missing.`;
      return `The run file is damaged: ${p.path} is not valid (${p.detail}).`;
  }
}

export function asRun(value: unknown): { run: RunFile } | { error: string } {
  const checked = asRunFile(value);
  return 'problem' in checked ? { error: sentence(checked.problem) } : checked;
}
