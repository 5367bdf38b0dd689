// The first-run walkthrough (package.json contributes.walkthroughs, its pages in media/walkthrough/):
// start the local server, profile it, open a prompt file, add your endpoint. Here: the command that
// opens it (LLM Profiler: Get started, and the sidebar's link under an empty run list), New prompt
// file (an example to try ▶ Profile on), and the context keys its steps complete on.
import * as vscode from 'vscode';
import { Command } from './commands';
import { registerCommand } from './commands/register';
import { isBuiltInPromptFile } from './promptFileKinds';
import type { Services } from './services';

/** The walkthrough's id in package.json; VS Code names it `<publisher>.<name>#<id>`. */
export const WALKTHROUGH_ID = 'gettingStarted';

/** What New prompt file opens: a prompt with one variable, as VS Code's own prompt files are written (the front matter is optional). */
const EXAMPLE_PROMPT = [
  'Explain in two sentences what ${input:term:a term, e.g. time to first token} means, for someone who has never measured it.',
  '',
].join('\n');

/** Whether a file is there (VS Code refuses an untitled document over an existing file). */
async function exists(uri: vscode.Uri): Promise<boolean> {
  try {
    await vscode.workspace.fs.stat(uri);
    return true;
  } catch {
    return false;
  }
}

/** An example prompt file, untitled (saved where the user says): example.prompt.md in the first workspace folder, or example-2.prompt.md… when that is taken. */
async function newPromptFile(): Promise<void> {
  const folder = vscode.workspace.workspaceFolders?.find((f) => f.uri.scheme === 'file')?.uri;
  let uri = vscode.Uri.from({ scheme: 'untitled', path: 'example.prompt.md' });
  for (let n = 1; folder && n < 100; n++) {
    const file = vscode.Uri.joinPath(folder, n === 1 ? 'example.prompt.md' : `example-${n}.prompt.md`);
    if (await exists(file)) continue;
    uri = file.with({ scheme: 'untitled' });
    break;
  }
  const doc = await vscode.workspace.openTextDocument(uri);
  const editor = await vscode.window.showTextDocument(doc, { preview: false });
  if (doc.getText() === '') await editor.edit((b) => b.insert(new vscode.Position(0, 0), EXAMPLE_PROMPT));
}

/**
 * The context keys the steps complete on: the local server running, a run stored, a prompt file seen
 * in an editor. VS Code ticks a step when its key turns true while its walkthroughs are loaded, never
 * for a key already true when they load (on first use: opening the walkthrough); so `around` sets each
 * key false while the walkthrough opens, then says it again.
 */
function trackSteps(s: Services): (open: () => Thenable<unknown>) => Promise<void> {
  const set = (key: string, value: boolean) => vscode.commands.executeCommand('setContext', key, value);
  let promptFileSeen = false;
  const values = (): [string, boolean][] => [
    ['llmProfiler.localServerRunning', s.localServer.state === 'running'],
    ['llmProfiler.hasRuns', s.runs.runs.length > 0],
    ['llmProfiler.promptFileOpened', promptFileSeen],
  ];
  const sync = () => { for (const [key, value] of values()) void set(key, value); };
  const seen = (e: vscode.TextEditor | undefined) => {
    if (promptFileSeen || !e || !isBuiltInPromptFile(e.document.fileName)) return;
    promptFileSeen = true;
    void set('llmProfiler.promptFileOpened', true);
  };
  s.context.subscriptions.push(s.localServer.onDidChange(sync), s.runs.onDidChange(sync), vscode.window.onDidChangeActiveTextEditor(seen));
  sync();
  seen(vscode.window.activeTextEditor);
  return async (open) => {
    for (const [key] of values()) await set(key, false);
    try {
      await open();
    } finally {
      for (const [key, value] of values()) await set(key, value);
    }
  };
}

export function registerWalkthrough(s: Services): void {
  const around = trackSteps(s);
  registerCommand(s.context, Command.GetStarted, () => around(() => vscode.commands.executeCommand('workbench.action.openWalkthrough', `${s.context.extension.id}#${WALKTHROUGH_ID}`, false)));
  registerCommand(s.context, Command.NewPromptFile, () => newPromptFile());
}
