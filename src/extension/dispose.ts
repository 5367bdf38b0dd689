// The disposable base of VS Code's markdown preview: whatever a class registers, it owns.
import type * as vscode from 'vscode';

export abstract class Disposable {
  #disposed = false;
  readonly #owned: vscode.Disposable[] = [];

  get isDisposed(): boolean {
    return this.#disposed;
  }

  protected _register<T extends vscode.Disposable>(d: T): T {
    if (this.#disposed) d.dispose();
    else this.#owned.push(d);
    return d;
  }

  dispose(): void {
    if (this.#disposed) return;
    this.#disposed = true;
    while (this.#owned.length) {
      try { this.#owned.pop()!.dispose(); } catch { /* keep disposing the rest */ }
    }
  }
}
