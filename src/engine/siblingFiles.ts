// Files a prompt file names next to itself (Prompty's `${file:…}`, local images), read for the
// reader: by a path relative to the prompt file's folder, whole, synchronously, never throwing.
import { readFileSync, statSync } from 'node:fs';
import { resolve } from 'node:path';

export interface SiblingOptions {
  /** Larger files are not read: a prompt is not a data dump. */
  readonly maxBytes: number;
  /** Whether a resolved path may be read (the extension: not outside the workspace when it is untrusted). */
  readonly allowed?: (path: string) => boolean;
}

export function siblingReader(dir: string, options: SiblingOptions): (relativePath: string) => Uint8Array | undefined {
  return (relativePath) => {
    try {
      const path = resolve(dir, relativePath);
      if (options.allowed && !options.allowed(path)) return undefined;
      const st = statSync(path);
      return st.isFile() && st.size <= options.maxBytes ? readFileSync(path) : undefined;
    } catch {
      return undefined;
    }
  };
}
