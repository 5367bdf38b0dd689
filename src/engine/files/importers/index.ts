// Opening another benchmark tool's result as a run: the one entry point every surface calls (the
// CLI's `import`, the extension's "Open benchmark result…", a file dropped on the report panel).
// The format is told from the content, not the name; a file that is none of them, of a version not
// known, truncated or too large is refused with an ImportError naming the file and the problem.
import { stat } from 'node:fs/promises';
import { RUN_FORMAT } from '../../core/runFormat';
import { readUntrustedFile, UntrustedFileError } from '../untrustedFile';
import { jsonEndsEarly } from '../../core/json';
import { IMPORT_TOOL_NAMES, type RunFile } from '../../core/types';
import { aiperfAggregateAlone, fromAiperf, isAiperfAggregate, isAiperfRecord } from './aiperf';
import { ImportError, isObj } from './common';
import type { ImportOptions } from './common';
import { fromGuidellm, isGuidellm } from './guidellm';
import { fromVllm, isVllm } from './vllm';


/**
 * The largest file imported, 512 MiB: the text is read whole and parsed, and V8 cannot hold a string
 * much longer (about 2^29 characters). A vLLM result with its generated texts of 100 000 requests
 * is far below it.
 */
export const IMPORT_MAX_BYTES = 512 * 2 ** 20;

const TOOLS = `not a ${IMPORT_TOOL_NAMES} result`;

function sizeText(bytes: number): string {
  return bytes >= 2 ** 30 ? `${(bytes / 2 ** 30).toFixed(1)} GB` : `${Math.round(bytes / 2 ** 20)} MB`;
}


/** A few words on what a parsed document is, for the refusal of one no importer knows. */
function described(doc: unknown): string {
  if (Array.isArray(doc)) return `a list of ${doc.length} item${doc.length === 1 ? '' : 's'}`;
  if (isObj(doc)) {
    const keys = Object.keys(doc);
    if (keys.length === 0) return 'an empty object';
    return `an object with keys ${keys.slice(0, 8).map((k) => `"${k}"`).join(', ')}${keys.length > 8 ? `, … (${keys.length} in all)` : ''}`;
  }
  return `a single ${doc === null ? 'null' : typeof doc}`;
}

/** One parsed JSON or YAML document (not JSON lines): the known tools', or a refusal. */
async function fromDocument(doc: unknown, path: string, text: string, options: ImportOptions, savedAtMs: number): Promise<RunFile> {
  if (isObj(doc) && doc.format === RUN_FORMAT) {
    throw new ImportError(path, 'this is already an llm-profiler run file: open it directly (llm-profiler opens run files as they are; there is nothing to import)');
  }
  if (isVllm(doc)) return fromVllm(doc, path, options, savedAtMs);
  if (isGuidellm(doc)) return fromGuidellm(doc, path, options);
  if (isAiperfAggregate(doc)) throw aiperfAggregateAlone(path);
  // a profile_export.jsonl of a single request is one JSON object
  if (isAiperfRecord(doc)) return fromAiperf(path, text, options);
  throw new ImportError(path, `${TOOLS}: ${described(doc)}`);
}

/** JSON lines: AIPerf's profile_export.jsonl, or vLLM results appended one per line (--append-result). */
async function fromJsonLines(path: string, text: string, options: ImportOptions, savedAtMs: number): Promise<RunFile | undefined> {
  const lines = text.split(/\r?\n/).filter((l) => l.trim() !== '');
  let first: unknown;
  try {
    first = JSON.parse(lines[0]!);
  } catch {
    return undefined;
  }
  if (isAiperfRecord(first)) return fromAiperf(path, text, options);
  if (isVllm(first)) {
    const docs = lines.map((l, i) => {
      try {
        return JSON.parse(l) as unknown;
      } catch (e) {
        throw new ImportError(path, `vLLM results one per line (--append-result): line ${i + 1} is not valid JSON (${(e as Error).message})`);
      }
    });
    return fromVllm(docs, path, options, savedAtMs);
  }
  if (isObj(first) && first.format === RUN_FORMAT) return undefined;
  throw new ImportError(path, `${TOOLS}: JSON lines whose first line is ${described(first)}`);
}

/** The file's text (without a BOM) and when it was written, or an ImportError. Another tool's file is untrusted: read as untrustedFile.ts reads one. */
async function readText(path: string): Promise<{ text: string; savedAtMs: number }> {
  let st;
  try {
    st = await stat(path);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new ImportError(path, code === 'ENOENT' || code === 'ENOTDIR' ? 'no such file' : `cannot read the file (${code ?? (e as Error).message})`);
  }
  if (st.isDirectory()) throw new ImportError(path, 'this is a folder, not a file: give the result file itself (a .json, .yaml or .jsonl)');
  // said before reading, in the size stat gives; the read itself stops at the limit whatever stat said
  if (st.size > IMPORT_MAX_BYTES) throw new ImportError(path, `the file is ${sizeText(st.size)}, more than the ${sizeText(IMPORT_MAX_BYTES)} an import may be`);
  let bytes: Buffer;
  try {
    bytes = await readUntrustedFile(path, { maxBytes: IMPORT_MAX_BYTES });
  } catch (e) {
    if (!(e instanceof UntrustedFileError)) throw e;
    if (e.reason === 'too-large') throw new ImportError(path, `the file grew past the ${sizeText(IMPORT_MAX_BYTES)} an import may be while it was read`);
    // gone since stat, or unreadable (EACCES)
    if (e.reason === 'missing') throw new ImportError(path, (e.cause as NodeJS.ErrnoException | undefined)?.code === 'ENOENT' ? 'no such file' : `the file ${e.message}`);
    // a FIFO, a device, a link into /proc, /sys or /dev
    throw new ImportError(path, `${e.message}: give the result file itself (a .json, .yaml or .jsonl)`);
  }
  try {
    return { text: bytes.toString('utf8').replace(/^\uFEFF/, ''), savedAtMs: st.mtimeMs };
  } catch {
    // V8's longest string is a little under 2^29 characters: a file of more is refused here
    throw new ImportError(path, `the file is ${sizeText(bytes.length)}, too long to be read as text`);
  }
}

/** Reads `path` (and the files beside it that its tool writes) and returns the run, or throws ImportError. Writes nothing. */
export async function importBenchmarkFile(path: string, options: ImportOptions = {}): Promise<RunFile> {
  const { text, savedAtMs } = await readText(path);
  if (text.trim() === '') throw new ImportError(path, 'the file is empty');

  let doc: unknown;
  let jsonError: string | undefined;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    jsonError = (e as Error).message;
  }
  if (jsonError === undefined) return fromDocument(doc, path, text, options, savedAtMs);

  const start = text.trimStart()[0];
  if ((start === '{' || start === '[') && jsonEndsEarly(jsonError, text)) {
    throw new ImportError(path, 'the file is truncated (it ends in the middle of the JSON): was it still being written, or cut short when copied?');
  }
  if (start === '{') {
    const lines = await fromJsonLines(path, text, options, savedAtMs);
    if (lines) return lines;
  }
  if (start === '{' || start === '[') throw new ImportError(path, `not valid JSON (${jsonError})`);

  // YAML (GuideLLM's benchmarks.yaml); loaded only when needed
  const { parse } = await import('yaml');
  let yamlDoc: unknown;
  try {
    yamlDoc = parse(text);
  } catch (e) {
    throw new ImportError(path, `neither JSON nor YAML (as JSON: ${jsonError}; as YAML: ${(e as Error).message.split('\n')[0]})`);
  }
  if (!isObj(yamlDoc) && !Array.isArray(yamlDoc)) {
    throw new ImportError(path, `neither JSON nor YAML of a result: it reads as plain text ("${text.trim().slice(0, 40).replace(/\s+/g, ' ')}${text.trim().length > 40 ? '…' : ''}")`);
  }
  return fromDocument(yamlDoc, path, text, options, savedAtMs);
}
