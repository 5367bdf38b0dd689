// The runs of one workspace: one run file per run in a folder (the extension passes
// `storageUri/runs`, or `globalStorageUri/runs` without a folder). No `vscode` import: tested in node.
// A corrupt file is reported and skipped, never fatal. Summaries are cached by mtime and size so the
// sidebar can list often without re-reading every file.
import { mkdir, readdir, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { ScrubbedRun } from '../engine/core/redact';
import type { RunFile } from '../engine/core/types';
import { runFileName } from '../engine/core/runId';
import { networkShort } from '../present/endpointText';
import { importedNameParts } from '../present/importText';
import { runWhat } from '../present/runText';
import { sentLine } from '../present/sentText';
import { promptWords } from '../present/workloadText';
import { loadFiles } from './lazy';

/** Where a run came from when it was started from a prompt file's CodeLens. */
export interface PromptRef {
  readonly file: string;
  readonly startLine: number;
  readonly name?: string;
}

/** Stored in the run file under this extra key (RunFile allows extra fields). */
export const PROMPT_REF_KEY = 'promptRef';

export interface RunIndexEntry {
  readonly id: string;
  readonly path: string;
  readonly startedAt: string;
  readonly endpointName: string;
  readonly url: string;
  readonly model?: string;
  readonly completed: number;
  readonly failed: number;
  readonly cancelled: boolean;
  /** Recovered from the journal of a run whose process died (RunFile.interrupted). */
  readonly interrupted?: boolean;
  readonly ttftP50Ms?: number;
  readonly ttftP99Ms?: number;
  readonly tpotP50Ms?: number;
  /** The p99s an SLO is judged at (the CodeLens verdict). */
  readonly tpotP99Ms?: number;
  readonly itlP99Ms?: number;
  readonly e2eP99Ms?: number;
  readonly promptRef?: PromptRef;
  /** The prompt file the run sent (the CodeLens's file, or the workload's): what a baseline of a prompt file is keyed by. */
  readonly promptFile?: string;
  /** How the endpoint was reached when that changed what was measured: "via proxy http://p:3128" (networkShort). */
  readonly network?: readonly string[];
  /** What ran, for the run's name (runText.ts runWhat): "c=8 · 64 req", "sweep rate 1–8/s", "greet.prompt.md". */
  readonly what: string;
  /** What a prompt file's prompts were sent with ("max 256 tokens (from the file)"), when the run records it (RunFile.prompts). */
  readonly sent?: string;
  /** Synthetic prompts' length as the server counted it (present/workloadText.ts promptWords). */
  readonly prompt?: string;
  /** An imported run: the file it was imported from (opening that file again replaces this run, not a second copy). */
  readonly importedFile?: string;
}

export interface RunIo {
  readRunFile(path: string): Promise<RunFile>;
  writeRunFile(path: string, run: ScrubbedRun): Promise<void>;
}

const loadFilesIo = async (): Promise<RunIo> => {
  const m = await loadFiles();
  return { readRunFile: m.readRunFile, writeRunFile: m.writeRunFile };
};

function finite(n: unknown): number | undefined {
  return typeof n === 'number' && Number.isFinite(n) ? n : undefined;
}

export function indexEntry(run: RunFile, path: string): RunIndexEntry {
  const s = run.summary;
  const ref = run[PROMPT_REF_KEY] as PromptRef | undefined;
  // another tool's result: named for the tool and its file (present/importText.ts)
  const imported = importedNameParts(run);
  return {
    id: run.id,
    path,
    startedAt: run.startedAt,
    endpointName: imported?.endpointName ?? run.endpoint.name ?? run.endpoint.url,
    url: run.endpoint.url,
    model: run.endpoint.model,
    completed: s?.completed ?? 0,
    failed: s?.failed ?? 0,
    cancelled: Boolean(run.cancelled),
    ...(run.interrupted ? { interrupted: true } : {}),
    ttftP50Ms: s?.ttftMs?.count ? finite(s.ttftMs.p50) : undefined,
    ttftP99Ms: s?.ttftMs?.count ? finite(s.ttftMs.p99) : undefined,
    tpotP50Ms: s?.tpotMs?.count ? finite(s.tpotMs.p50) : undefined,
    tpotP99Ms: s?.tpotMs?.count ? finite(s.tpotMs.p99) : undefined,
    itlP99Ms: s?.itlMs?.count ? finite(s.itlMs.p99) : undefined,
    e2eP99Ms: s?.e2eMs?.count ? finite(s.e2eMs.p99) : undefined,
    promptRef: ref && typeof ref.file === 'string' && typeof ref.startLine === 'number' ? ref : undefined,
    ...promptFileOf(run, ref),
    what: imported?.what ?? runWhat(run),
    ...(networkShort(run.endpoint).length ? { network: networkShort(run.endpoint) } : {}),
    ...(run.prompts?.length && run.workload ? { sent: sentLine(run) } : {}),
    ...(run.workload?.prompt?.kind === 'synthetic' && !run.sweep && Array.isArray(run.requests) ? { prompt: promptWords(run, true) } : {}),
    ...(run.importedFrom ? { importedFile: run.importedFrom.file } : {}),
  };
}

function promptFileOf(run: RunFile, ref: PromptRef | undefined): { promptFile?: string } {
  if (ref && typeof ref.file === 'string') return { promptFile: ref.file };
  const p = run.workload?.prompt;
  return p?.kind === 'file' ? { promptFile: p.path } : {};
}

/**
 * The newest run measured here on `url` (the list is newest first): the sidebar's and the picker's
 * "last TTFT". A prompt's run measured one prompt; an imported run was measured by another tool,
 * another client, maybe last week: neither is "the last time you profiled this endpoint".
 */
export function latestMeasuredOn(runs: readonly RunIndexEntry[], url: string): RunIndexEntry | undefined {
  return runs.find((r) => r.url === url && !r.promptRef && r.importedFile === undefined);
}


/** The file is no longer there (the reader's error wraps the ENOENT in words). */
const gone = (path: string): Promise<boolean> => stat(path).then(() => false, (e: NodeJS.ErrnoException) => e.code === 'ENOENT');

export class RunStore {
  readonly dir: string;
  #io: RunIo | undefined;
  readonly #ioFactory: () => Promise<RunIo>;
  readonly #cache = new Map<string, { mtimeMs: number; size: number; entry: RunIndexEntry } | { mtimeMs: number; size: number; problem: string }>();

  constructor(dir: string, io?: RunIo | (() => Promise<RunIo>)) {
    this.dir = dir;
    if (typeof io === 'function') this.#ioFactory = io;
    else if (io) { this.#io = io; this.#ioFactory = async () => io; }
    else this.#ioFactory = loadFilesIo;
  }

  async #getIo(): Promise<RunIo> {
    this.#io ??= await this.#ioFactory();
    return this.#io;
  }

  /** Newest first. Problems name the file and what is wrong with it. */
  async list(): Promise<{ runs: RunIndexEntry[]; problems: { path: string; message: string }[] }> {
    const io = await this.#getIo();
    let names: string[];
    try {
      names = (await readdir(this.dir)).filter((n) => n.endsWith('.json'));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { runs: [], problems: [] };
      throw err;
    }
    const runs: RunIndexEntry[] = [];
    const problems: { path: string; message: string }[] = [];
    const seen = new Set<string>();
    for (const name of names) {
      const path = join(this.dir, name);
      seen.add(path);
      try {
        const st = await stat(path);
        const cached = this.#cache.get(path);
        // A file read once, well or badly, is not read again until it changes.
        if (cached && cached.mtimeMs === st.mtimeMs && cached.size === st.size) {
          if ('entry' in cached) runs.push(cached.entry);
          else problems.push({ path, message: cached.problem });
          continue;
        }
        try {
          const entry = indexEntry(await io.readRunFile(path), path);
          this.#cache.set(path, { mtimeMs: st.mtimeMs, size: st.size, entry });
          runs.push(entry);
        } catch (err) {
          // removed between the listing and the read (another window deleted it): not a problem
          if ((err as NodeJS.ErrnoException).code === 'ENOENT' || (await gone(path))) continue;
          this.#cache.set(path, { mtimeMs: st.mtimeMs, size: st.size, problem: (err as Error).message });
          problems.push({ path, message: (err as Error).message });
        }
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') continue; // deleted while listing
        problems.push({ path, message: (err as Error).message });
      }
    }
    for (const p of this.#cache.keys()) if (!seen.has(p)) this.#cache.delete(p);
    runs.sort((a, b) => (a.startedAt < b.startedAt ? 1 : a.startedAt > b.startedAt ? -1 : 0));
    return { runs, problems };
  }

  async save(run: ScrubbedRun): Promise<string> {
    const io = await this.#getIo();
    await mkdir(this.dir, { recursive: true });
    const path = join(this.dir, runFileName(run.id));
    await io.writeRunFile(path, run);
    return path;
  }

  async load(idOrPath: string): Promise<RunFile> {
    const io = await this.#getIo();
    const path = idOrPath.endsWith('.json') ? idOrPath : join(this.dir, runFileName(idOrPath));
    return io.readRunFile(path);
  }

  async delete(id: string): Promise<void> {
    const path = join(this.dir, runFileName(id));
    await unlink(path).catch((err: NodeJS.ErrnoException) => { if (err.code !== 'ENOENT') throw err; });
    this.#cache.delete(path);
  }

  /** The newest run started from this prompt (file + first line), if any. */
  async latestForPrompt(file: string, startLine: number): Promise<RunIndexEntry | undefined> {
    const { runs } = await this.list();
    return runs.find((r) => r.promptRef?.file === file && r.promptRef.startLine === startLine);
  }
}
