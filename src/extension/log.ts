// The "LLM Profiler" output channel. Every line passes through redaction of the keys this session
// has seen, so a key can never reach the log even inside an error message from a server.
import * as vscode from 'vscode';

export class Log implements vscode.Disposable {
  readonly #channel: vscode.LogOutputChannel;
  readonly #secrets = new Set<string>();

  constructor() {
    this.#channel = vscode.window.createOutputChannel('LLM Profiler', { log: true });
  }

  /** Remember a secret so it is masked wherever it would appear. */
  addSecret(secret: string | undefined): void {
    if (secret && secret.length >= 4) this.#secrets.add(secret);
  }

  redact(text: string): string {
    let out = text;
    for (const s of this.#secrets) out = out.split(s).join('***');
    // Bearer tokens from anywhere else (e.g. an echoed request) are masked too.
    return out.replace(/(Bearer\s+)[A-Za-z0-9._~+/=-]{6,}/gi, '$1***');
  }

  info(message: string): void { this.#channel.info(this.redact(message)); }
  warn(message: string): void { this.#channel.warn(this.redact(message)); }
  error(message: string): void { this.#channel.error(this.redact(message)); }
  show(): void { this.#channel.show(true); }
  dispose(): void { this.#channel.dispose(); }
}
