// What the panel checks before drawing a run it was given, so a bad file gets a sentence, not a
// blank page. The host parses files with the engine's parseRunFile; this guards the webview's own
// input (restored state, a message from an older host).
import type { RunFile } from '../../src/engine/types';

export function runProblem(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return 'This is not an LLM Profiler run file (expected a JSON object).';
  }
  const v = value as Record<string, unknown>;
  if (v.format !== 'llm-profiler.run') {
    return 'This is not an LLM Profiler run file (its "format" is not "llm-profiler.run").';
  }
  if (v.version !== 1) {
    return `This run file has version ${JSON.stringify(v.version)}; this version of LLM Profiler reads version 1. Update the extension to open it.`;
  }
  if (!Array.isArray(v.requests)) return 'The run file is incomplete: it has no "requests" list.';
  const s = v.summary as Record<string, unknown> | undefined;
  if (typeof s !== 'object' || s === null) return 'The run file is incomplete: it has no "summary".';
  for (const k of ['ttftMs', 'tpotMs', 'itlMs', 'e2eMs', 'stalls'] as const) {
    if (typeof s[k] !== 'object' || s[k] === null) return `The run file is incomplete: its summary has no "${k}".`;
  }
  for (let i = 0; i < v.requests.length; i++) {
    const r = v.requests[i] as Record<string, unknown> | null;
    if (typeof r !== 'object' || r === null || typeof r.sentAt !== 'number' || !Array.isArray(r.chunkTimesMs)) {
      return `The run file is damaged: request ${i} has no "sentAt" or "chunkTimesMs".`;
    }
  }
  return undefined;
}

export function asRun(value: unknown): { run: RunFile } | { error: string } {
  const problem = runProblem(value);
  return problem ? { error: problem } : { run: value as RunFile };
}
