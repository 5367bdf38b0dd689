// The name of a tool a run was imported from, as its makers spell it (from the one list of importable
// tools, IMPORT_TOOL_ROWS in engine/core/types.ts); its own module so that runText.ts can name a tool
// without importing importText.ts, which imports runText.ts.
import { IMPORT_TOOL_ROWS } from '../engine/core/types';

/** "GuideLLM" for "guidellm"; an id no row has (a newer file's) as it is. */
export function importToolLabel(tool: string): string {
  return IMPORT_TOOL_ROWS.find((t) => t.id === tool)?.label ?? tool;
}

/** "as GuideLLM counted them": tokens an imported run's tool counted (its usage or its own tokenizer; its file does not say which). */
export function countedByTool(tool: string): string {
  return `as ${importToolLabel(tool)} counted them`;
}
