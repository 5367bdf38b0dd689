// Turning LocalServerOptions.model into a checked GGUF file: a synthetic preset (made and cached on
// first use) or the user's own file, validated before anything starts.
import { freemem, totalmem } from 'node:os';
import { basename, resolve } from 'node:path';
import { GgufError, readGgufHeader } from './gguf';
import type { GgufHeader } from './gguf';
import { ensureSyntheticModel, presetShape, shapeKey, SYNTHETIC_NAME_PREFIX, validateShape } from './synthetic';
import { DEFAULT_PRESET, SYNTHETIC_SLOT_CONTEXT_LIMIT } from './defaults';
import { syntheticChatCounter } from './tokenCount';
import type { ChatCounter } from './tokenCount';
import type { LocalServerOptions } from './types';

export interface ResolvedModel {
  readonly path: string;
  /** The id the server answers to in /v1/models and responses. */
  readonly alias: string;
  readonly header: GgufHeader;
  /** Made by synthetic.ts (a preset, or such a file given by path): known by its general.name. */
  readonly synthetic: boolean;
}

export async function resolveModel(model: LocalServerOptions['model']): Promise<ResolvedModel> {
  const m = model ?? { kind: 'preset', preset: DEFAULT_PRESET };
  if (m.kind === 'preset') {
    const path = await ensureSyntheticModel(presetShape(m.preset));
    return { path, alias: `synthetic-${m.preset}`, header: await readGgufHeader(path), synthetic: true };
  }
  if (m.kind === 'shape') {
    validateShape(m.shape);
    const path = await ensureSyntheticModel(m.shape);
    return { path, alias: `synthetic-${shapeKey(m.shape)}`, header: await readGgufHeader(path), synthetic: true };
  }
  const path = resolve(m.path);
  const header = await readGgufHeader(path); // throws GgufError naming the file and the problem
  const synthetic = String(header.metadata.get('general.name') ?? '').startsWith(SYNTHETIC_NAME_PREFIX);
  return { path, alias: basename(path).replace(/\.gguf$/i, ''), header, synthetic };
}

function metaNumber(h: GgufHeader, key: string): number | undefined {
  const v = h.metadata.get(key);
  return typeof v === 'number' ? v : typeof v === 'bigint' ? Number(v) : undefined;
}

/** What sizing the slots must know of a model before the server starts: how much a slot may hold, and how to count a prompt. */
export interface ModelContext {
  /** As messages name it: "synthetic-tiny", the file's name. */
  readonly name: string;
  /** The most context per slot: a file's trained context (`<arch>.context_length`), SYNTHETIC_SLOT_CONTEXT_LIMIT for a synthetic model; undefined when a file does not say. */
  readonly limit: number | undefined;
  readonly synthetic: boolean;
  /** Counts a chat prompt as the bundled server tokenizes it (synthetic models); absent: only an estimate is possible. */
  readonly count?: ChatCounter;
}

/**
 * The model's context, without making or loading it (a preset's or shape's figures, a file's header).
 * Throws GgufError for a file that cannot be read as GGUF.
 */
export async function modelContext(model: LocalServerOptions['model']): Promise<ModelContext> {
  const m = model ?? { kind: 'preset', preset: DEFAULT_PRESET };
  if (m.kind !== 'file') {
    const shape = m.kind === 'preset' ? presetShape(m.preset) : m.shape;
    return { name: m.kind === 'preset' ? `synthetic-${m.preset}` : `synthetic-${shapeKey(shape)}`, limit: SYNTHETIC_SLOT_CONTEXT_LIMIT, synthetic: true, count: syntheticChatCounter(shape.vocab) };
  }
  const path = resolve(m.path);
  const h = await readGgufHeader(path);
  const name = basename(path);
  if (String(h.metadata.get('general.name') ?? '').startsWith(SYNTHETIC_NAME_PREFIX)) {
    const tokens = h.metadata.get('tokenizer.ggml.tokens');
    const vocab = Array.isArray(tokens) && tokens.every((t) => typeof t === 'string') ? (tokens as string[]) : undefined;
    return { name, limit: SYNTHETIC_SLOT_CONTEXT_LIMIT, synthetic: true, ...(vocab ? { count: syntheticChatCounter(vocab) } : {}) };
  }
  const arch = String(h.metadata.get('general.architecture') ?? 'llama');
  return { name, limit: metaNumber(h, `${arch}.context_length`), synthetic: false };
}

/** Weights plus an f16 KV cache for `ctxSize` tokens, in bytes: what the server will need. */
export function estimateMemory(h: GgufHeader, ctxSize: number): { weights: number; kvCache: number; total: number } {
  const arch = String(h.metadata.get('general.architecture') ?? 'llama');
  const layers = metaNumber(h, `${arch}.block_count`) ?? 0;
  const width = metaNumber(h, `${arch}.embedding_length`) ?? 0;
  const heads = metaNumber(h, `${arch}.attention.head_count`) ?? 1;
  const kvHeads = metaNumber(h, `${arch}.attention.head_count_kv`) ?? heads;
  const headDim = metaNumber(h, `${arch}.attention.key_length`) ?? (heads ? width / heads : 0);
  const kvCache = 2 * layers * ctxSize * kvHeads * headDim * 2;
  const weights = h.fileSize - h.dataOffset;
  // Compute buffers and the runtime: a fixed margin.
  const total = weights + kvCache + 64 * 1024 * 1024;
  return { weights, kvCache, total };
}

const mib = (n: number) => `${Math.round(n / (1024 * 1024))} MiB`;

/**
 * Refuses, with the numbers, a model that cannot fit in the memory available now. The KV cache grows
 * with the context (slots × tokens per slot), so the message names what sets each (the CLI's flag,
 * the extension's setting) besides the model.
 */
export function checkMemory(path: string, h: GgufHeader, ctxSize: number, free: number = freemem(), parallel?: number): void {
  const need = estimateMemory(h, ctxSize);
  if (need.total > free) {
    const slots = parallel !== undefined && parallel > 0 ? `${parallel} slot${parallel === 1 ? '' : 's'} of ${Math.floor(ctxSize / parallel)} tokens` : `${ctxSize} tokens`;
    throw new GgufError(
      path,
      `too large for the memory available: it needs about ${mib(need.total)} (weights ${mib(need.weights)}, KV cache ${mib(need.kvCache)} for ${slots}) but only ${mib(free)} of ${mib(totalmem())} is free; ` +
        'pick a smaller model (--preset / --model-file; llmProfiler.localServer.preset / modelPath), fewer slots (--parallel, --concurrency; llmProfiler.localServer.parallel) ' +
        'or less context per slot (a smaller --ctx-size; without it a slot holds the longest prompt and its max tokens, so a shorter prompt or a lower --max-tokens)',
    );
  }
}
