// What the CLI prints: every line through the job's one scrubber (its key, its URL's secrets) and
// stripped of control characters, so no server text or secret reaches the terminal as it came.
import { printable, Scrubber } from '../engine/core/redact';
import type { CliIo } from './io';

/**
 * Everything a command prints passes here: control characters are removed (a server's model name,
 * id or error could otherwise move the cursor, clear the screen or retitle the window) and every
 * secret the job holds is scrubbed. The live line's own escape is the only one written.
 */
export class Printer {
  #scrubber = new Scrubber();
  constructor(private readonly io: CliIo) {}

  /** The secrets of this job (the key, the URL's secret parts), once they are known. */
  know(secrets: readonly string[]): void {
    this.#scrubber = this.#scrubber.with(secrets);
  }

  get scrubber(): Scrubber {
    return this.#scrubber;
  }

  clean(text: string): string {
    return this.#scrubber.scrub(printable(text));
  }

  out(text: string): void {
    this.io.stdout.write(this.clean(text));
  }

  err(text: string): void {
    this.io.stderr.write(this.clean(text));
  }

  /** Rewrites the terminal's current line (erase line, carriage return): the one escape of ours. */
  rewrite(text: string): void {
    this.io.stderr.write(`\x1b[2K\r${this.clean(text)}`);
  }
}
