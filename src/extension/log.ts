// The "LLM Profiler" output channel, and the one scrubber of the extension: every line logged, every
// error shown and every message posted to a webview passes through it, so a key this session has
// seen (stored, from the environment, or in an endpoint's URL) never appears, even inside a server's
// error message. Control characters a server may have sent are removed from log lines.
import * as vscode from 'vscode';
import { printable, Scrubber } from '../engine/core/redact';

export class Log implements vscode.Disposable {
  readonly #channel: vscode.LogOutputChannel;
  #scrubber = new Scrubber();
  #tap: unknown[] | undefined;

  constructor() {
    this.#channel = vscode.window.createOutputChannel('LLM Profiler', { log: true });
  }

  /** Remember a secret so it is masked wherever it would appear. */
  addSecret(secret: string | undefined): void {
    this.addSecrets([secret]);
  }

  addSecrets(secrets: Iterable<string | undefined>): void {
    this.#scrubber = this.#scrubber.with(secrets);
  }

  get scrubber(): Scrubber {
    return this.#scrubber;
  }

  /**
   * A message or state for a webview, with every secret this session knows scrubbed. Every post to a
   * page goes through here; under the extension test runner the result is also kept (see `tapWebview`).
   */
  forWebview<T>(value: T): T {
    const out = this.#scrubber.scrubValue(value);
    this.#tap?.push(out);
    return out;
  }

  /** Test mode only: from now on, every value passed to a webview is also kept in the returned list. */
  tapWebview(): unknown[] {
    return (this.#tap ??= []);
  }

  redact(text: string): string {
    const out = this.#scrubber.scrub(printable(text));
    // Bearer tokens from anywhere else (e.g. an echoed request) are masked too.
    return out.replace(/(Bearer\s+)[A-Za-z0-9._~+/=-]{6,}/gi, '$1***');
  }

  info(message: string): void { this.#channel.info(this.redact(message)); }
  warn(message: string): void { this.#channel.warn(this.redact(message)); }
  error(message: string): void { this.#channel.error(this.redact(message)); }
  show(): void { this.#channel.show(true); }
  dispose(): void { this.#channel.dispose(); }
}
