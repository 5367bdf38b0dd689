// A prompt file's variable whose value may span lines (a diff, code, a document: promptModel.ts
// `asksMultiline`), asked in an editor: VS Code's input box is one line, and a diff pasted there loses
// its newlines. An untitled editor named for the variable opens beside, holding the last answer
// (selected, so a paste replaces it); "✓ Use this text" (a CodeLens on its first line, the editor's
// title bar, the palette) takes what it holds, newlines and all; "Cancel", or closing the editor,
// gives up. Either way the editor closes without asking to save.
import * as vscode from 'vscode';
import { Command } from './commands';
import { Disposable } from './dispose';

/** The context key the editor's title bar button and the palette entries are shown by. */
const CONTEXT_KEY = 'llmProfiler.multilineInput';

export interface MultilineQuestion {
  /** The variable's name as the file writes it (`${input:diff}`, `{{code}}`): the lens says what the text is for. */
  readonly written: string;
  /** Names the editor ("diff (review.prompt.md)"). */
  readonly editorName: string;
  /** What to type: the placeholder, or where the variable is used. */
  readonly prompt: string;
  readonly value: string;
}

interface Pending {
  readonly doc: vscode.TextDocument;
  readonly question: MultilineQuestion;
  readonly resolve: (value: string | undefined) => void;
}

export class MultilineInput extends Disposable implements vscode.CodeLensProvider {
  readonly #onDidChange = this._register(new vscode.EventEmitter<void>());
  readonly onDidChangeCodeLenses = this.#onDidChange.event;
  #pending: Pending | undefined;
  /** Tells apart the editors of two questions asked one after the other. */
  #seq = 0;

  constructor() {
    super();
    this._register(vscode.languages.registerCodeLensProvider({ scheme: 'untitled' }, this));
    this._register(vscode.commands.registerCommand(Command.FinishMultilineInput, () => this.#finish(true)));
    this._register(vscode.commands.registerCommand(Command.CancelMultilineInput, () => this.#finish(false)));
    this._register(vscode.workspace.onDidCloseTextDocument((d) => { if (d === this.#pending?.doc) this.#end(undefined); }));
    this._register({ dispose: () => this.#end(undefined) });
  }

  /** The text typed for the question, newlines kept; undefined when the user cancelled or closed the editor. */
  async ask(question: MultilineQuestion): Promise<string | undefined> {
    this.#end(undefined);
    const name = `${question.editorName}${++this.#seq > 1 ? ` ${this.#seq}` : ''}`;
    const doc = await vscode.workspace.openTextDocument(vscode.Uri.from({ scheme: 'untitled', path: name }));
    const editor = await vscode.window.showTextDocument(doc, { preview: false, viewColumn: vscode.ViewColumn.Beside });
    if (question.value) {
      await editor.edit((b) => b.insert(new vscode.Position(0, 0), question.value));
      const end = doc.lineAt(doc.lineCount - 1).range.end;
      editor.selection = new vscode.Selection(new vscode.Position(0, 0), end);
    }
    const answer = new Promise<string | undefined>((resolve) => { this.#pending = { doc, question, resolve }; });
    void vscode.commands.executeCommand('setContext', CONTEXT_KEY, true);
    this.#onDidChange.fire();
    return answer;
  }

  provideCodeLenses(doc: vscode.TextDocument): vscode.CodeLens[] {
    const p = this.#pending;
    if (!p || doc !== p.doc) return [];
    const top = new vscode.Range(0, 0, 0, 0);
    return [
      new vscode.CodeLens(top, { title: `✓ Use this text for ${p.question.written}`, tooltip: `${p.question.prompt}\nEvery line below is the value, newlines kept.`, command: Command.FinishMultilineInput }),
      new vscode.CodeLens(top, { title: 'Cancel', tooltip: 'Give up: nothing runs', command: Command.CancelMultilineInput }),
    ];
  }

  /** Done (the text) or Cancel: answers the question, then closes its editor without asking to save. */
  async #finish(use: boolean): Promise<void> {
    const p = this.#pending;
    if (!p) return;
    const text = p.doc.getText();
    this.#end(use ? text : undefined);
    if (p.doc.isClosed) return;
    await vscode.window.showTextDocument(p.doc, { preview: false });
    await vscode.commands.executeCommand('workbench.action.revertAndCloseActiveEditor');
  }

  #end(value: string | undefined): void {
    const p = this.#pending;
    if (!p) return;
    this.#pending = undefined;
    void vscode.commands.executeCommand('setContext', CONTEXT_KEY, false);
    this.#onDidChange.fire();
    p.resolve(value);
  }
}
