// A small GGUF v2/v3 reader (header, metadata, tensor table) and writer, enough to validate a
// user's model file before starting anything and to write synthetic models. Spec:
// https://github.com/ggml-org/ggml/blob/master/docs/gguf.md
import { open, stat } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';

export const enum GgufType {
  Uint8 = 0,
  Int8 = 1,
  Uint16 = 2,
  Int16 = 3,
  Uint32 = 4,
  Int32 = 5,
  Float32 = 6,
  Bool = 7,
  String = 8,
  Array = 9,
  Uint64 = 10,
  Int64 = 11,
  Float64 = 12,
}

/** ggml tensor types we write or size. Others are sized from GGML_TYPE_SIZES when known. */
export const enum GgmlType {
  F32 = 0,
  F16 = 1,
  Q8_0 = 8,
}

/** [block size in elements, bytes per block] per ggml type id (ggml.c type_traits). */
const GGML_TYPE_SIZES: Readonly<Record<number, readonly [number, number]>> = {
  0: [1, 4], // F32
  1: [1, 2], // F16
  2: [32, 18], // Q4_0
  3: [32, 20], // Q4_1
  6: [32, 22], // Q5_0
  7: [32, 24], // Q5_1
  8: [32, 34], // Q8_0
  9: [32, 36], // Q8_1
  10: [256, 84], // Q2_K
  11: [256, 110], // Q3_K
  12: [256, 144], // Q4_K
  13: [256, 176], // Q5_K
  14: [256, 210], // Q6_K
  15: [256, 292], // Q8_K
  16: [256, 66], // IQ2_XXS
  17: [256, 74], // IQ2_XS
  18: [256, 98], // IQ3_XXS
  19: [256, 50], // IQ1_S
  20: [32, 18], // IQ4_NL
  21: [256, 110], // IQ3_S
  22: [256, 82], // IQ2_S
  23: [256, 136], // IQ4_XS
  24: [1, 1], // I8
  25: [1, 2], // I16
  26: [1, 4], // I32
  27: [1, 8], // I64
  28: [1, 8], // F64
  29: [256, 56], // IQ1_M
  30: [1, 2], // BF16
  34: [256, 54], // TQ1_0
  35: [256, 66], // TQ2_0
  39: [32, 17], // MXFP4
};

export type GgufValue = string | number | bigint | boolean | readonly GgufValue[];

/** A metadata value with its declared type, as the writer needs it. */
export type GgufEntry =
  | { readonly type: GgufType.String; readonly value: string }
  | { readonly type: GgufType.Uint32 | GgufType.Int32 | GgufType.Float32 | GgufType.Uint8 | GgufType.Int8 | GgufType.Uint16 | GgufType.Int16 | GgufType.Float64; readonly value: number }
  | { readonly type: GgufType.Uint64 | GgufType.Int64; readonly value: bigint }
  | { readonly type: GgufType.Bool; readonly value: boolean }
  | { readonly type: GgufType.Array; readonly itemType: GgufType.String; readonly value: readonly string[] }
  | { readonly type: GgufType.Array; readonly itemType: GgufType.Float32 | GgufType.Int32 | GgufType.Uint32; readonly value: ArrayLike<number> };

export interface GgufTensorInfo {
  readonly name: string;
  /** ne0 first (the innermost, contiguous dimension), as in ggml. */
  readonly dims: readonly number[];
  readonly type: number;
  /** Offset from the start of the data section. */
  readonly offset: number;
  /** Bytes, or undefined for a type this reader does not know. */
  readonly size?: number;
}

export interface GgufHeader {
  readonly version: number;
  readonly metadata: ReadonlyMap<string, GgufValue>;
  readonly tensors: readonly GgufTensorInfo[];
  /** Absolute file offset of the data section. */
  readonly dataOffset: number;
  /** The file size the tensor table needs; larger than fileSize means truncated. */
  readonly expectedSize: number;
  readonly fileSize: number;
}

/** A problem with a model file; the message names the file and what is wrong. */
export class GgufError extends Error {
  override readonly name = 'GgufError';
  constructor(
    readonly path: string,
    readonly reason: string,
  ) {
    super(`${path}: ${reason}`);
  }
}

export function tensorBytes(type: number, dims: readonly number[]): number | undefined {
  const t = GGML_TYPE_SIZES[type];
  if (!t) return undefined;
  const n = dims.reduce((a, b) => a * b, 1);
  return Math.ceil(n / t[0]) * t[1];
}

const MAX_STRING = 64 * 1024 * 1024;
const MAX_ARRAY = 64 * 1024 * 1024;
const MAX_KV = 1_000_000;
const MAX_TENSORS = 1_000_000;

class Truncated extends Error {}

/** Reads the header through a growing window, so a 10 GB model costs only its header's bytes. */
class HeaderReader {
  #buf = Buffer.alloc(0);
  #bufStart = 0;
  pos = 0;
  constructor(
    readonly fd: FileHandle,
    readonly fileSize: number,
  ) {}

  async #ensure(n: number): Promise<void> {
    const end = this.pos + n;
    if (end > this.fileSize) throw new Truncated();
    if (this.pos >= this.#bufStart && end <= this.#bufStart + this.#buf.length) return;
    const want = Math.min(this.fileSize - this.pos, Math.max(n, 1 << 20));
    const buf = Buffer.alloc(want);
    const { bytesRead } = await this.fd.read(buf, 0, want, this.pos);
    if (bytesRead < n) throw new Truncated();
    this.#buf = buf.subarray(0, bytesRead);
    this.#bufStart = this.pos;
  }
  #at(): number {
    return this.pos - this.#bufStart;
  }
  /** The next `n` bytes, as `read` takes them from the window at their offset. */
  async #take<T>(n: number, read: (buf: Buffer, at: number) => T): Promise<T> {
    await this.#ensure(n);
    const v = read(this.#buf, this.#at());
    this.pos += n;
    return v;
  }
  u8(): Promise<number> {
    return this.#take(1, (b, at) => b.readUInt8(at));
  }
  u32(): Promise<number> {
    return this.#take(4, (b, at) => b.readUInt32LE(at));
  }
  u64(): Promise<bigint> {
    return this.#take(8, (b, at) => b.readBigUInt64LE(at));
  }
  bytes(n: number): Promise<Buffer> {
    return this.#take(n, (b, at) => b.subarray(at, at + n));
  }
  async string(): Promise<string> {
    const len = await this.u64();
    if (len > BigInt(MAX_STRING)) throw new Error(`a string of ${len} bytes in the header (corrupt file?)`);
    return (await this.bytes(Number(len))).toString('utf8');
  }
  async value(type: number): Promise<GgufValue> {
    switch (type) {
      case GgufType.Uint8: return this.u8();
      case GgufType.Int8: return this.#take(1, (b, at) => b.readInt8(at));
      case GgufType.Uint16: return this.#take(2, (b, at) => b.readUInt16LE(at));
      case GgufType.Int16: return this.#take(2, (b, at) => b.readInt16LE(at));
      case GgufType.Uint32: return this.u32();
      case GgufType.Int32: return this.#take(4, (b, at) => b.readInt32LE(at));
      case GgufType.Float32: return this.#take(4, (b, at) => b.readFloatLE(at));
      case GgufType.Bool: return (await this.u8()) !== 0;
      case GgufType.String: return this.string();
      case GgufType.Uint64: return this.u64();
      case GgufType.Int64: return this.#take(8, (b, at) => b.readBigInt64LE(at));
      case GgufType.Float64: return this.#take(8, (b, at) => b.readDoubleLE(at));
      case GgufType.Array: {
        const itemType = await this.u32();
        const count = await this.u64();
        if (count > BigInt(MAX_ARRAY)) throw new Error(`an array of ${count} items in the header (corrupt file?)`);
        const out: GgufValue[] = [];
        for (let i = 0; i < Number(count); i++) out.push(await this.value(itemType));
        return out;
      }
      default:
        throw new Error(`unknown metadata value type ${type} at byte ${this.pos} (corrupt file?)`);
    }
  }
}

/**
 * Reads and checks a GGUF file's header. Throws GgufError naming the file and the problem: missing,
 * not a GGUF file, an unsupported version, a corrupt header, or truncated tensor data.
 */
export async function readGgufHeader(path: string): Promise<GgufHeader> {
  let fileSize: number;
  try {
    const s = await stat(path);
    if (!s.isFile()) throw new GgufError(path, 'not a file');
    fileSize = s.size;
  } catch (e) {
    if (e instanceof GgufError) throw e;
    const code = (e as NodeJS.ErrnoException).code;
    throw new GgufError(path, code === 'ENOENT' ? 'model file not found' : `cannot read the model file (${code ?? (e as Error).message})`);
  }
  let fd: FileHandle;
  try {
    fd = await open(path, 'r');
  } catch (e) {
    throw new GgufError(path, `cannot open the model file (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  try {
    const r = new HeaderReader(fd, fileSize);
    if (fileSize < 4) throw new GgufError(path, `not a GGUF file (${fileSize} bytes)`);
    const magic = (await r.bytes(4)).toString('latin1');
    if (magic !== 'GGUF') {
      const hint = magic.startsWith('PK') ? ' (a zip archive?)' : magic.startsWith('{') ? ' (a JSON file?)' : magic === 'ggjt' || magic === 'tjgg' ? ' (an old GGML file: convert it to GGUF)' : '';
      throw new GgufError(path, `not a GGUF file: it starts with ${JSON.stringify(magic)} instead of "GGUF"${hint}`);
    }
    const version = await r.u32();
    if (version !== 2 && version !== 3) throw new GgufError(path, `unsupported GGUF version ${version} (2 and 3 are supported)`);
    const tensorCount = Number(await r.u64());
    const kvCount = Number(await r.u64());
    if (tensorCount > MAX_TENSORS || kvCount > MAX_KV) throw new GgufError(path, `corrupt header (${tensorCount} tensors, ${kvCount} metadata keys)`);
    const metadata = new Map<string, GgufValue>();
    for (let i = 0; i < kvCount; i++) {
      const key = await r.string();
      const type = await r.u32();
      metadata.set(key, await r.value(type));
    }
    const tensors: GgufTensorInfo[] = [];
    for (let i = 0; i < tensorCount; i++) {
      const name = await r.string();
      const nDims = await r.u32();
      if (nDims > 8) throw new GgufError(path, `corrupt tensor table (tensor ${name} has ${nDims} dimensions)`);
      const dims: number[] = [];
      for (let d = 0; d < nDims; d++) dims.push(Number(await r.u64()));
      const type = await r.u32();
      const offset = Number(await r.u64());
      tensors.push({ name, dims, type, offset, size: tensorBytes(type, dims) });
    }
    const alignment = Number(metadata.get('general.alignment') ?? 32) || 32;
    const dataOffset = Math.ceil(r.pos / alignment) * alignment;
    let expectedSize = dataOffset;
    for (const t of tensors) if (t.size !== undefined) expectedSize = Math.max(expectedSize, dataOffset + t.offset + t.size);
    if (expectedSize > fileSize) {
      throw new GgufError(path, `truncated: the tensor data needs ${expectedSize} bytes but the file has ${fileSize} (an interrupted download or copy?)`);
    }
    if (tensorCount === 0) throw new GgufError(path, 'the file holds no tensors (a vocabulary-only GGUF?)');
    return { version, metadata, tensors, dataOffset, expectedSize, fileSize };
  } catch (e) {
    if (e instanceof GgufError) throw e;
    if (e instanceof Truncated) throw new GgufError(path, `truncated: the file ends inside the GGUF header (${fileSize} bytes)`);
    throw new GgufError(path, `corrupt GGUF header: ${(e as Error).message}`);
  } finally {
    await fd.close();
  }
}

// ---- Writer ----

export interface GgufTensorSpec {
  readonly name: string;
  readonly dims: readonly number[];
  readonly type: GgmlType;
  /** The tensor's bytes (exactly tensorBytes(type, dims)), in pieces. */
  readonly data: () => Iterable<Uint8Array>;
}

function encodeString(s: string): Buffer {
  const b = Buffer.from(s, 'utf8');
  const out = Buffer.alloc(8 + b.length);
  out.writeBigUInt64LE(BigInt(b.length), 0);
  b.copy(out, 8);
  return out;
}

/** `n` bytes as `write` fills them. */
function filled(n: number, write: (b: Buffer) => unknown): Buffer {
  const b = Buffer.alloc(n);
  write(b);
  return b;
}

function encodeScalar(type: GgufType, value: number | bigint | boolean): Buffer {
  switch (type) {
    case GgufType.Uint8: return filled(1, (b) => b.writeUInt8(value as number));
    case GgufType.Int8: return filled(1, (b) => b.writeInt8(value as number));
    case GgufType.Uint16: return filled(2, (b) => b.writeUInt16LE(value as number));
    case GgufType.Int16: return filled(2, (b) => b.writeInt16LE(value as number));
    case GgufType.Uint32: return filled(4, (b) => b.writeUInt32LE(value as number));
    case GgufType.Int32: return filled(4, (b) => b.writeInt32LE(value as number));
    case GgufType.Float32: return filled(4, (b) => b.writeFloatLE(value as number));
    case GgufType.Float64: return filled(8, (b) => b.writeDoubleLE(value as number));
    case GgufType.Uint64: return filled(8, (b) => b.writeBigUInt64LE(value as bigint));
    case GgufType.Int64: return filled(8, (b) => b.writeBigInt64LE(value as bigint));
    case GgufType.Bool: return Buffer.from([value ? 1 : 0]);
    default: throw new Error(`not a scalar GGUF type: ${type}`);
  }
}

function encodeEntry(key: string, e: GgufEntry): Buffer[] {
  const parts: Buffer[] = [encodeString(key), encodeScalar(GgufType.Uint32, e.type)];
  if (e.type === GgufType.String) parts.push(encodeString(e.value));
  else if (e.type === GgufType.Array) {
    parts.push(encodeScalar(GgufType.Uint32, e.itemType), encodeScalar(GgufType.Uint64, BigInt(e.value.length)));
    if (e.itemType === GgufType.String) for (const s of e.value as readonly string[]) parts.push(encodeString(s));
    else {
      const arr = e.value as ArrayLike<number>;
      const b = Buffer.alloc(arr.length * 4);
      for (let i = 0; i < arr.length; i++) {
        if (e.itemType === GgufType.Float32) b.writeFloatLE(arr[i]!, i * 4);
        else if (e.itemType === GgufType.Int32) b.writeInt32LE(arr[i]!, i * 4);
        else b.writeUInt32LE(arr[i]!, i * 4);
      }
      parts.push(b);
    }
  } else parts.push(encodeScalar(e.type, e.value));
  return parts;
}

/**
 * Writes a GGUF v3 file through `sink` (header, tensor table, aligned data). Returns the bytes written.
 * The caller provides each tensor's data as a callback so nothing large is held in memory.
 */
export async function writeGguf(
  metadata: ReadonlyMap<string, GgufEntry>,
  tensors: readonly GgufTensorSpec[],
  sink: (chunk: Uint8Array) => Promise<void> | void,
  alignment = 32,
): Promise<number> {
  let written = 0;
  const put = async (b: Uint8Array) => {
    if (b.length === 0) return;
    await sink(b);
    written += b.length;
  };
  const head: Buffer[] = [Buffer.from('GGUF', 'latin1'), encodeScalar(GgufType.Uint32, 3), encodeScalar(GgufType.Uint64, BigInt(tensors.length)), encodeScalar(GgufType.Uint64, BigInt(metadata.size))];
  for (const [k, v] of metadata) head.push(...encodeEntry(k, v));
  let offset = 0;
  const sizes: number[] = [];
  for (const t of tensors) {
    const size = tensorBytes(t.type, t.dims);
    if (size === undefined) throw new Error(`cannot size tensor ${t.name}`);
    sizes.push(size);
    head.push(encodeString(t.name), encodeScalar(GgufType.Uint32, t.dims.length));
    for (const d of t.dims) head.push(encodeScalar(GgufType.Uint64, BigInt(d)));
    head.push(encodeScalar(GgufType.Uint32, t.type), encodeScalar(GgufType.Uint64, BigInt(offset)));
    offset += Math.ceil(size / alignment) * alignment;
  }
  const headBuf = Buffer.concat(head);
  await put(headBuf);
  await put(Buffer.alloc(Math.ceil(headBuf.length / alignment) * alignment - headBuf.length));
  for (const [i, t] of tensors.entries()) {
    let n = 0;
    for (const chunk of t.data()) {
      n += chunk.length;
      await put(chunk);
    }
    if (n !== sizes[i]) throw new Error(`tensor ${t.name}: wrote ${n} bytes, expected ${sizes[i]}`);
    await put(Buffer.alloc(Math.ceil(n / alignment) * alignment - n));
  }
  return written;
}
