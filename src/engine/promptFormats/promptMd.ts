// *.prompt.md: VS Code prompt files. Optional front matter (description, name, argument-hint,
// agent/mode, model, tools) between `---` lines; the markdown body is the user's request. VS Code's
// variables are filled from the caller's values: `${input:name}` / `${input:name:placeholder}` (what
// VS Code asks the user for) and the editor's `${selection}`, `${file}`, `${workspaceFolder}`, …
// A variable left without a value is sent as written and listed, with its line.
import { asText, str, type Reader } from './reader';
import { frontMatter } from './yamlDoc';
import { sloOf, type FileBody } from './body';

/** VS Code's prompt-file variables that come from the editor (code.visualstudio.com, prompt files: variables). */
export const EDITOR_VARIABLES = [
  'selection',
  'selectedText',
  'file',
  'fileBasename',
  'fileDirname',
  'fileBasenameNoExtension',
  'workspaceFolder',
  'workspaceFolderBasename',
] as const;

const VSCODE_VAR = new RegExp(`\\$\\{(?:input:([^}:]+)(?::([^}]*))?|(${EDITOR_VARIABLES.join('|')}))\\}`, 'g');

export function readPromptMd(r: Reader): FileBody {
  const fm = frontMatter(r);
  if (r.refusal) return { prompts: [] };
  const meta = fm.yaml?.value ?? {};
  const slo = sloOf(r, fm.yaml);
  const model = str(meta.model);
  const base = { ...(slo ? { slo } : {}), ...(model ? { model } : {}) };
  const first = fm.bodyStart;
  const body = r.lines.slice(first).join('\n').trim();
  if (body === '') {
    r.refuse('the prompt body is empty: write the prompt below the front matter', Math.min(first, r.lines.length - 1));
    return { prompts: [], ...base };
  }
  const content = body.replace(VSCODE_VAR, (whole, input: string | undefined, placeholder: string | undefined, editor: string | undefined) => {
    const name = (input ?? editor)!.trim();
    const line = r.lineOf(whole, first);
    const value = r.given(name);
    const filled = value !== undefined;
    const text = filled ? asText(value) : undefined;
    r.variable({
      name,
      kind: input !== undefined ? 'input' : 'editor',
      line,
      filled,
      ...(placeholder !== undefined && placeholder.trim() !== '' ? { placeholder: placeholder.trim() } : {}),
      ...(text !== undefined ? { value: text } : { sentAs: 'as written' }),
      written: input !== undefined ? `\${input:${name}}` : whole,
    });
    return text ?? whole;
  });
  const name = str(meta.name) ?? r.baseName.replace(/\.prompt\.md$/i, '');
  return { prompts: [{ prompt: r.prompt([{ role: 'user', content }], {}, name), name, range: r.whole }], ...base };
}
