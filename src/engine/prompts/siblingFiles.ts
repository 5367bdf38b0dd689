// What a prompt file pulls in from outside its text (Prompty's `${file:…}` and `${env:…}`, local
// images), read for the reader, synchronously, never throwing: a file by a path relative to the prompt
// file's folder, only inside the prompt's project (the nearest folder above it holding `.git`, else its
// own folder) and the folders the caller adds, by real path (untrustedFile.ts: regular files only,
// never /proc, /sys or /dev, bounded); a variable only when the caller allows its name. Everything
// read is recorded (files by real path, variables by name), for the run file and the surfaces to list;
// everything refused comes back with its reason, for the reader's warning.
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { ReadRefusal } from './formats/types';
import type { PromptPulledIn } from '../core/types';
import { readUntrustedFileSync, realPathOf, UntrustedFileError } from '../files/untrustedFile';

/** The prompt's project: the nearest folder at or above the prompt file's (real) folder holding `.git`, else that folder. */
export function projectRoot(promptPath: string): string {
  const start = realPathOf(dirname(resolve(promptPath))) ?? dirname(resolve(promptPath));
  for (let d = start; ; d = dirname(d)) {
    if (existsSync(join(d, '.git'))) return d;
    if (dirname(d) === d) return start;
  }
}

export interface PromptAccessOptions {
  /** The prompt file: relative paths start at its folder; its project may be read. */
  readonly promptPath: string;
  /** Larger files are not read: a prompt is not a data dump. */
  readonly maxBytes: number;
  /** More folders files may be read from (`--allow-read`, the workspace folders). */
  readonly allowRead?: readonly string[];
  /** The reason given for a file outside them all, from the project's folder ("…: pass --allow-read DIR"). */
  readonly outside: (project: string) => string;
  /** Where `${env:…}` values come from. */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** The variables that may be read: by name, or 'all' (a trusted workspace). */
  readonly allowEnv: readonly string[] | 'all';
  /** The reason a variable not allowed is not read ("pass --allow-env NAME"). */
  readonly envRefused: (name: string) => string;
}

export interface PromptAccess {
  readonly readFile: (relativePath: string) => Uint8Array | ReadRefusal;
  readonly readEnv: (name: string) => string | undefined | ReadRefusal;
  /** What was read so far: each file and variable once, in the order first read. */
  pulledIn(): PromptPulledIn;
}

/** The readers a prompt file's context takes (`readFile`, `readEnv`), confined as above, recording what they read. */
export function promptAccess(o: PromptAccessOptions): PromptAccess {
  const dir = dirname(resolve(o.promptPath));
  // found on the first file read: most prompt files name none (the CodeLens reads on every edit)
  let confined: { roots: string[]; outside: string } | undefined;
  const confinement = () => {
    const project = projectRoot(o.promptPath);
    return { roots: [project, ...(o.allowRead ?? []).flatMap((d) => realPathOf(d) ?? [])], outside: o.outside(project) };
  };
  const files = new Set<string>();
  const env = new Set<string>();
  return {
    readFile: (relativePath) => {
      try {
        const path = resolve(dir, relativePath);
        confined ??= confinement();
        const bytes = readUntrustedFileSync(path, { maxBytes: o.maxBytes, ...confined });
        files.add(realPathOf(path) ?? path);
        return bytes;
      } catch (e) {
        return { refused: e instanceof UntrustedFileError ? e.message : (e as Error).message };
      }
    },
    readEnv: (name) => {
      if (o.allowEnv !== 'all' && !o.allowEnv.includes(name)) return { refused: o.envRefused(name) };
      const value = o.env[name];
      if (value !== undefined) env.add(name);
      return value;
    },
    pulledIn: () => ({ files: [...files], env: [...env] }),
  };
}

/** Nothing pulled in: absent, so the run file says nothing. */
export function anyPulledIn(p: PromptPulledIn | undefined): PromptPulledIn | undefined {
  return p && (p.files.length > 0 || p.env.length > 0) ? p : undefined;
}
