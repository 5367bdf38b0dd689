// *.prompt.md: VS Code prompt files. Optional front matter (description, name, argument-hint,
// agent/mode, model, tools) between `---` lines; the markdown body is the user's request. VS Code's
// variables are filled from the caller's values: `${input:name}` / `${input:name:placeholder}` (what
// VS Code asks the user for) and the editor's `${selection}`, `${file}`, `${workspaceFolder}`, …
// A variable left without a value is sent as written and listed, with its line. Its `tools` names
// VS Code's own tools (codebase, fetch, an MCP server's), which the editor runs: not function
// definitions an endpoint could be sent, so they are not sent, and a warning says so.
import { asText, str, type Reader } from './reader';
import { frontMatter, keyLine } from './yamlDoc';
import { sloOf, type FileBody } from './body';
import { forwardSearch } from './promptyText';

/** VS Code's prompt-file variables that come from the editor (code.visualstudio.com, prompt files: variables). */
const EDITOR_VARIABLES = [
  'selection',
  'selectedText',
  'file',
  'fileBasename',
  'fileDirname',
  'fileBasenameNoExtension',
  'workspaceFolder',
  'workspaceFolderBasename',
] as const;

const EDITOR_CLOSED = EDITOR_VARIABLES.map((n) => `${n}}`);

type Fill = (whole: string, input: string | undefined, placeholder: string | undefined, editor: string | undefined) => string;

/**
 * `text.replace(/\$\{(?:input:([^}:]+)(?::([^}]*))?|(selection|file|…))\}/g, fill)`, in linear time:
 * that expression reads every `${input:` without its `}` to the end of the text (a file of them:
 * quadratic). Its matches are fixed by the next `}` or `:`, so each search resumes where the last stopped.
 */
function replaceVariables(text: string, fill: Fill): string {
  const nameEnd = forwardSearch(text, /[}:]/g);
  const close = forwardSearch(text, /\}/g);
  const out: string[] = [];
  let done = 0;
  for (let i = text.indexOf('${'); i >= 0; ) {
    let end = -1;
    let args: [string | undefined, string | undefined, string | undefined] = [undefined, undefined, undefined];
    if (text.startsWith('input:', i + 2)) {
      const p = nameEnd(i + 8);
      if (p > i + 8) end = text[p] === '}' ? p : close(p + 1);
      if (end >= 0) args = [text.slice(i + 8, p), text[p] === ':' ? text.slice(p + 1, end) : undefined, undefined];
    } else {
      const editor = text.charCodeAt(i + 2) < 0x80 ? EDITOR_CLOSED.find((n) => text.startsWith(n, i + 2))?.slice(0, -1) : undefined;
      if (editor !== undefined) [end, args] = [i + 2 + editor.length, [undefined, undefined, editor]];
    }
    if (end < 0) {
      i = text.indexOf('${', i + 1);
      continue;
    }
    out.push(text.slice(done, i), fill(text.slice(i, end + 1), ...args));
    done = end + 1;
    i = text.indexOf('${', done);
  }
  out.push(text.slice(done));
  return out.join('');
}

export function readPromptMd(r: Reader): FileBody {
  const fm = frontMatter(r);
  if (r.refusal) return { prompts: [] };
  const meta = fm.yaml?.value ?? {};
  const slo = sloOf(r, fm.yaml);
  const model = str(meta.model);
  const base = { ...(slo ? { slo } : {}), ...(model ? { model } : {}) };
  if (meta.tools !== undefined && meta.tools !== null) {
    const names = Array.isArray(meta.tools) ? meta.tools.filter((t): t is string => typeof t === 'string') : [];
    const shown = names.length > 0 ? ` (${names.slice(0, 5).join(', ')}${names.length > 5 ? ', …' : ''})` : '';
    r.warn(`tools${shown} names VS Code's own tools, which the editor runs, not function definitions an endpoint takes: not sent (give definitions with --tools)`, keyLine(fm.yaml, ['tools'], 0));
  }
  const first = fm.bodyStart;
  const body = r.lines.slice(first).join('\n').trim();
  if (body === '') {
    r.refuse('the prompt body is empty: write the prompt below the front matter', Math.min(first, r.lines.length - 1));
    return { prompts: [], ...base };
  }
  const content = replaceVariables(body, (whole, input, placeholder, editor) => {
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
