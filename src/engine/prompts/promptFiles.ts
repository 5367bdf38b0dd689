// Prompt files, read as their own tools read them, into prompts with their line ranges. The CLI
// (--prompt-file), `run`, `sweep` and the extension's CodeLens all read through parsePromptFile, so
// that they send the same prompts and say the same things. It never throws: a file that yields no
// prompt comes back with its `refusal` (the reason, shown first), and everything else that is wrong
// with it as `warnings`, each at its 0-based line.
//
// Kinds, by file name (each format's reader says how it follows its tool):
//   *.prompt.md            VS Code prompt files (promptFormats/promptMd.ts)
//   *.prompty              Prompty (promptFormats/prompty.ts)
//   *.prompt.yml / .yaml   GitHub Models (promptFormats/promptYml.ts)
//   anything else          plain text: the whole file is one user prompt.
// Every YAML-bearing kind may carry `llmProfiler: { slo: { ttft: 500, … } }` (promptFormats/body.ts).
import { Reader } from './formats/reader';
import { readPromptMd } from './formats/promptMd';
import { readPrompty } from './formats/prompty';
import { readPromptYml } from './formats/promptYml';
import type { FileBody } from './formats/body';
import type { PromptFileContext, PromptFileKind, PromptFileParse } from './formats/types';

export function promptFileKind(fileName: string): PromptFileKind {
  const n = fileName.toLowerCase();
  if (n.endsWith('.prompt.md')) return 'prompt.md';
  if (n.endsWith('.prompty')) return 'prompty';
  if (n.endsWith('.prompt.yml') || n.endsWith('.prompt.yaml')) return 'prompt.yml';
  return 'text';
}

/** Prompt files bigger than this are refused: a prompt is text a person wrote, not a data file. */
export const MAX_PROMPT_FILE_BYTES = 8 * 1024 * 1024;

/** Why text is not a prompt file's text (NUL bytes, or bytes that are not UTF-8), when it is not. */
function binaryProblem(text: string): string | undefined {
  const head = text.length > 65_536 ? text.slice(0, 65_536) : text;
  if (head.includes('\u0000')) return 'this is a binary file, not text (it holds NUL bytes): a prompt file is text';
  let bad = 0;
  for (let i = head.indexOf('\uFFFD'); i >= 0; i = head.indexOf('\uFFFD', i + 1)) bad++;
  return bad >= 4 && bad * 200 > head.length ? 'this file is not UTF-8 text (it holds bytes that are not UTF-8): save it as UTF-8' : undefined;
}

/** Parses a prompt file. Never throws. */
export function parsePromptFile(fileName: string, text: string, context: PromptFileContext = {}): PromptFileParse {
  const kind = promptFileKind(fileName);
  const r = new Reader(fileName, text.replace(/^\uFEFF/, ''), context);
  let body: FileBody = { prompts: [] };
  const binary = binaryProblem(r.text);
  if (binary !== undefined) r.refuse(binary, 0);
  else {
    try {
      body = kind === 'prompt.md' ? readPromptMd(r) : kind === 'prompty' ? readPrompty(r) : kind === 'prompt.yml' ? readPromptYml(r) : readText(r);
    } catch (e) {
      // A bug here must not take the editor down with it: report it where the lens would be.
      body = { prompts: [] };
      r.refuse(`could not read ${r.baseName}: ${(e as Error).message}`, 0);
    }
  }
  if (body.prompts.length === 0) r.refuse('no prompt in the file', 0);
  const out = { kind, ...body, warnings: r.warnings, variables: r.variables };
  return body.prompts.length === 0 ? { ...out, prompts: [], refusal: r.refusal! } : out;
}

function readText(r: Reader): FileBody {
  if (r.text.trim() === '') {
    r.refuse('the file is empty: write the prompt in it', 0);
    return { prompts: [] };
  }
  return { prompts: [{ prompt: r.prompt([{ role: 'user', content: r.text.trim() }], {}, r.baseName), name: r.baseName, range: r.whole }] };
}
