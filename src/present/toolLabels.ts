// The benchmark tools a run can be imported from, as their makers spell them (its own module so that
// runText.ts can name them without importing importText.ts, which imports runText.ts).
import type { ImportTool } from '../engine/core/types';

export const IMPORT_TOOL_LABELS: Readonly<Record<ImportTool, string>> = { vllm: 'vLLM', guidellm: 'GuideLLM', aiperf: 'AIPerf' };

export function importToolLabel(tool: string): string {
  return (IMPORT_TOOL_LABELS as Record<string, string>)[tool] ?? tool;
}
