// What the extension says after it wrote a file the user asked for (an export, a chart): where it is,
// with the ways to it VS Code has here: Open, and Reveal in Explorer (a file in the workspace) or in
// the system's file manager (a desktop window, the file elsewhere).
import * as vscode from 'vscode';

/** VS Code's own names for revealing a file in the system's file manager. */
function revealInOsLabel(): string {
  return process.platform === 'win32' ? 'Reveal in File Explorer' : process.platform === 'darwin' ? 'Reveal in Finder' : 'Open Containing Folder';
}

/** "LLM Profiler: saved /path/file.csv" with Open and a Reveal; the chosen one is done. Never throws. */
export async function saidSaved(message: string, uri: vscode.Uri): Promise<void> {
  const inWorkspace = vscode.workspace.getWorkspaceFolder(uri) !== undefined;
  const onThisMachine = vscode.env.uiKind === vscode.UIKind.Desktop && !vscode.env.remoteName;
  const reveal = inWorkspace ? 'Reveal in Explorer' : onThisMachine ? revealInOsLabel() : undefined;
  const pick = await vscode.window.showInformationMessage(message, 'Open', ...(reveal ? [reveal] : []));
  try {
    if (pick === 'Open') await vscode.commands.executeCommand('vscode.open', uri);
    else if (pick === 'Reveal in Explorer') await vscode.commands.executeCommand('revealInExplorer', uri);
    else if (pick !== undefined) await vscode.commands.executeCommand('revealFileInOS', uri);
  } catch (e) {
    void vscode.window.showErrorMessage(`LLM Profiler: could not ${pick === 'Open' ? 'open' : 'reveal'} ${uri.fsPath}: ${(e as Error).message}`);
  }
}
