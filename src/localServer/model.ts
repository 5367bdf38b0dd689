// Turning LocalServerOptions.model into a checked GGUF file: a synthetic preset (made and cached on
// first use) or the user's own file, validated before anything starts.
import { freemem, totalmem } from 'node:os';
import { basename, resolve } from 'node:path';
import { GgufError, readGgufHeader } from './gguf';
import type { GgufHeader } from './gguf';
import { ensureSyntheticModel, presetShape, shapeKey, SYNTHETIC_NAME_PREFIX, validateShape } from './synthetic';
import { DEFAULT_PRESET } from './defaults';
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

/** Refuses, with the numbers, a model that cannot fit in the memory available now. */
export function checkMemory(path: string, h: GgufHeader, ctxSize: number, free: number = freemem()): void {
  const need = estimateMemory(h, ctxSize);
  if (need.total > free) {
    throw new GgufError(
      path,
      `too large for the memory available: it needs about ${mib(need.total)} (weights ${mib(need.weights)}, KV cache ${mib(need.kvCache)} for ${ctxSize} tokens) but only ${mib(free)} of ${mib(totalmem())} is free; pick a smaller model or --ctx-size`,
    );
  }
}
