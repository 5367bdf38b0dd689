// One read of a prompt file in the editor, as data that crosses to the prompt reader's worker thread
// (main.ts) and back: what is asked (the document's text, the caller's values, what the file may pull
// in) and the one function that answers it, run by the worker on its thread, or by the host on its own
// for a small document when the thread cannot start (client.ts). No `vscode`: a worker thread has none.
import type { parsePromptFile } from '../../engine/prompts/promptFiles';
import type { PromptFileParse } from '../../engine/prompts/formats/types';
import type { anyPulledIn, promptAccess } from '../../engine/prompts/siblingFiles';
import type { PromptPulledIn } from '../../engine/core/types';
import { parserFileName } from '../promptFileKinds';
import { documentAccessOptions } from '../promptModel';

/** A prompt file read in the editor, with what it pulled in (files, environment variables). Plain data: it crosses threads. */
export interface DocumentParse extends PromptFileParse {
  readonly pulledIn?: PromptPulledIn;
}

/** What a document on disk may pull in, as data (promptModel.ts `documentAccessOptions` makes the rule of it on the reading thread). */
export interface DocumentAccess {
  readonly promptPath: string;
  readonly trusted: boolean;
  readonly workspaceFolders: readonly string[];
  /** The host's environment for `${env:…}`: sent only when trusted (the worker's own is empty). */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

export interface ParseRequest {
  /** The document's file name (promptFileKinds.ts `parserFileName` picks the reader). */
  readonly fileName: string;
  readonly text: string;
  /** The caller's values: remembered answers, the editor's variables. */
  readonly vars?: Readonly<Record<string, unknown>>;
  /** Absent for a document not on disk (untitled): nothing is pulled in. */
  readonly access?: DocumentAccess;
}

/** Host → worker. */
export interface ToPromptWorker {
  readonly id: number;
  readonly request: ParseRequest;
}

/** Worker → host: `ready` once its code has loaded (a thread that fails before it never started), then one answer per request. */
export type FromPromptWorker = { readonly ready: true } | { readonly id: number; readonly parse: DocumentParse };

/** The engine's parts a read needs: imported by the worker's bundle, or the extension's lazily loaded dist/files.js. */
export interface ReaderParts {
  readonly parsePromptFile: typeof parsePromptFile;
  readonly promptAccess: typeof promptAccess;
  readonly anyPulledIn: typeof anyPulledIn;
}

/** A read that yields no prompt, for this reason (shown as the CodeLens's first lens). */
export function refusedParse(message: string): DocumentParse {
  return { kind: 'text', prompts: [], refusal: { message, line: 0 }, warnings: [], variables: [] };
}

/** Reads a document with the engine's reader, confined as promptModel.ts says. Never throws. */
export function readDocument(parts: ReaderParts, req: ParseRequest): DocumentParse {
  try {
    const a = req.access;
    const access = a ? parts.promptAccess(documentAccessOptions(a.promptPath, a.trusted, a.workspaceFolders, a.env ?? {})) : undefined;
    const parsed = parts.parsePromptFile(parserFileName(req.fileName), req.text, {
      ...(req.vars ? { vars: req.vars } : {}),
      ...(access ? { readFile: access.readFile, readEnv: access.readEnv } : {}),
    });
    const pulledIn = parts.anyPulledIn(access?.pulledIn());
    return pulledIn ? { ...parsed, pulledIn } : parsed;
  } catch (err) {
    return refusedParse(`could not read this prompt file: ${(err as Error).message}`);
  }
}
