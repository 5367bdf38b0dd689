import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync, readFileSync, statSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GgmlType, GgufError, GgufType, readGgufHeader, tensorBytes, writeGguf } from '../../src/localServer/gguf';
import type { GgufEntry } from '../../src/localServer/gguf';
import { buildVocabulary, ensureSyntheticModel, PRESETS, shapeKey, validateShape, writeSyntheticModel } from '../../src/localServer/synthetic';
import type { ModelShape } from '../../src/localServer/types';
import { checkMemory, estimateMemory } from '../../src/localServer/model';

const MINI: ModelShape = { layers: 2, width: 64, heads: 4, kvHeads: 2, ffn: 128, vocab: 1024, type: 'f16', contextLength: 256 };

function tempDir(t: { after(fn: () => void): void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'llmp-gguf-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

async function writeToFile(path: string, meta: Map<string, GgufEntry>, tensors: Parameters<typeof writeGguf>[1]): Promise<void> {
  const parts: Uint8Array[] = [];
  await writeGguf(meta, tensors, (c) => {
    parts.push(Buffer.from(c));
  });
  await writeFile(path, Buffer.concat(parts));
}

test('writeGguf and readGgufHeader round-trip metadata of every kind and the tensor table', async (t) => {
  const dir = tempDir(t);
  const meta = new Map<string, GgufEntry>([
    ['general.architecture', { type: GgufType.String, value: 'llama' }],
    ['a.u32', { type: GgufType.Uint32, value: 4000000000 }],
    ['a.i32', { type: GgufType.Int32, value: -7 }],
    ['a.f32', { type: GgufType.Float32, value: 0.5 }],
    ['a.bool', { type: GgufType.Bool, value: true }],
    ['a.u64', { type: GgufType.Uint64, value: 1n << 40n }],
    ['a.strs', { type: GgufType.Array, itemType: GgufType.String, value: ['▁x', '<0x0A>', 'ü'] }],
    ['a.f32s', { type: GgufType.Array, itemType: GgufType.Float32, value: [1, -2.5] }],
  ]);
  const path = join(dir, 'm.gguf');
  await writeToFile(path, meta, [
    { name: 'w', dims: [32, 3], type: GgmlType.F16, data: () => [Buffer.alloc(32 * 3 * 2, 1)] },
    { name: 'q', dims: [64, 2], type: GgmlType.Q8_0, data: () => [Buffer.alloc(4 * 34, 2)] },
    { name: 'n', dims: [5], type: GgmlType.F32, data: () => [Buffer.alloc(20)] },
  ]);
  const h = await readGgufHeader(path);
  assert.equal(h.version, 3);
  assert.equal(h.metadata.get('general.architecture'), 'llama');
  assert.equal(h.metadata.get('a.u32'), 4000000000);
  assert.equal(h.metadata.get('a.i32'), -7);
  assert.equal(h.metadata.get('a.f32'), 0.5);
  assert.equal(h.metadata.get('a.bool'), true);
  assert.equal(h.metadata.get('a.u64'), 1n << 40n);
  assert.deepEqual(h.metadata.get('a.strs'), ['▁x', '<0x0A>', 'ü']);
  assert.deepEqual(h.metadata.get('a.f32s'), [1, -2.5]);
  assert.deepEqual(h.tensors.map((x) => [x.name, x.dims, x.type, x.size]), [
    ['w', [32, 3], 1, 192],
    ['q', [64, 2], 8, 136],
    ['n', [5], 0, 20],
  ]);
  assert.equal(h.dataOffset % 32, 0);
  for (const x of h.tensors) assert.equal(x.offset % 32, 0, `${x.name} is aligned`);
  assert.ok(h.expectedSize <= h.fileSize && h.fileSize - h.expectedSize < 32, 'only alignment padding after the last tensor');
});

test('tensorBytes sizes block-quantized types', () => {
  assert.equal(tensorBytes(GgmlType.Q8_0, [64, 10]), 20 * 34);
  assert.equal(tensorBytes(GgmlType.F16, [7, 3]), 42);
  assert.equal(tensorBytes(12345, [1]), undefined);
});

test('bad model files: a clear error naming the file and what is wrong', async (t) => {
  const dir = tempDir(t);
  const good = join(dir, 'good.gguf');
  await writeSyntheticModel(good, MINI);
  const bytes = readFileSync(good);

  const expectError = async (path: string, pattern: RegExp) => {
    await assert.rejects(readGgufHeader(path), (e: unknown) => {
      assert.ok(e instanceof GgufError, `GgufError for ${path}`);
      assert.ok(e.message.startsWith(path), `the message names the file: ${e.message}`);
      assert.match(e.message, pattern);
      return true;
    });
  };
  await expectError(join(dir, 'missing.gguf'), /not found/);
  const text = join(dir, 'notes.gguf');
  writeFileSync(text, '{"this": "is json"}');
  await expectError(text, /not a GGUF file: it starts with .* instead of "GGUF" \(a JSON file\?\)/);
  const empty = join(dir, 'empty.gguf');
  writeFileSync(empty, '');
  await expectError(empty, /not a GGUF file \(0 bytes\)/);
  const cutData = join(dir, 'cut-data.gguf');
  writeFileSync(cutData, bytes.subarray(0, bytes.length - 1000));
  await expectError(cutData, new RegExp(`truncated: the tensor data needs ${bytes.length} bytes but the file has ${bytes.length - 1000}`));
  const cutHeader = join(dir, 'cut-header.gguf');
  writeFileSync(cutHeader, bytes.subarray(0, 200));
  await expectError(cutHeader, /truncated: the file ends inside the GGUF header/);
  const badVersion = join(dir, 'v9.gguf');
  const v9 = Buffer.from(bytes.subarray(0, 64));
  v9.writeUInt32LE(9, 4);
  writeFileSync(badVersion, v9);
  await expectError(badVersion, /unsupported GGUF version 9/);
  await expectError(dir, /not a file/);
});

test('the synthetic vocabulary is SentencePiece-style: byte fallback, control tokens, prefix-closed words', () => {
  const v = buildVocabulary(8192);
  assert.equal(v.tokens.length, 8192);
  assert.equal(new Set(v.tokens).size, 8192, 'tokens are unique');
  assert.deepEqual(v.tokens.slice(0, 5), ['<unk>', '<s>', '</s>', '<|im_start|>', '<|im_end|>']);
  assert.equal(v.tokens[5 + 0x0a], '<0x0A>');
  assert.equal(v.types.filter((x) => x === 6).length, 256, '256 byte tokens');
  const set = new Set(v.tokens);
  for (const tok of v.tokens) {
    if (tok.startsWith('▁') && tok.length > 2) assert.ok(set.has(tok.slice(0, -1)), `prefix of ${tok} present`);
  }
  assert.ok(set.has('▁the') && set.has('▁model'));
  assert.ok(v.scores[300]! > v.scores[4000]!, 'earlier pieces merge first');
});

test('synthetic model: written in the expected shape, cached by shape, shapes validated', async (t) => {
  const dir = tempDir(t);
  const t0 = performance.now();
  const path = await ensureSyntheticModel(MINI, dir);
  assert.ok(performance.now() - t0 < 10_000);
  assert.ok(path.endsWith(`${shapeKey(MINI)}.gguf`));
  const h = await readGgufHeader(path);
  assert.equal(h.tensors.length, 3 + 9 * MINI.layers);
  // every tensor's bytes, each padded to GGUF's 32-byte alignment, and nothing after them
  assert.equal(h.fileSize, h.dataOffset + h.tensors.reduce((a, x) => a + Math.ceil(x.size! / 32) * 32, 0));
  assert.equal(h.metadata.get('llama.block_count'), 2);
  assert.equal(h.metadata.get('llama.attention.head_count_kv'), 2);
  assert.equal(h.metadata.get('tokenizer.ggml.model'), 'llama');
  assert.match(String(h.metadata.get('tokenizer.chat_template')), /<\|im_start\|>/);
  assert.equal((h.metadata.get('tokenizer.ggml.tokens') as string[]).length, 1024);
  const mtime = statSync(path).mtimeMs;
  assert.equal(await ensureSyntheticModel(MINI, dir), path);
  assert.equal(statSync(path).mtimeMs, mtime, 'the cached file is reused');

  const q8 = await ensureSyntheticModel({ ...MINI, type: 'q8_0' }, dir);
  assert.notEqual(q8, path);
  const hq = await readGgufHeader(q8);
  assert.equal(hq.tensors.find((x) => x.name === 'blk.0.ffn_up.weight')!.type, GgmlType.Q8_0);
  assert.equal(hq.tensors.find((x) => x.name === 'blk.0.attn_norm.weight')!.type, GgmlType.F32);

  assert.throws(() => validateShape({ ...MINI, width: 65 }), /width 65 is not a multiple of heads 4/);
  assert.throws(() => validateShape({ ...MINI, heads: 4, kvHeads: 3 }), /not a multiple of kvHeads/);
  assert.throws(() => validateShape({ ...MINI, layers: 0 }), /layers must be a positive integer/);
  assert.throws(() => validateShape({ ...MINI, type: 'q4' as 'f16' }), /f16 or q8_0/);
});

/** A llama model's parameters: embeddings and output, per layer attention (q, o; k, v), the gated FFN and two norms, the final norm. */
function parameterCount(s: ModelShape): number {
  const headDim = s.width / s.heads;
  const kv = headDim * s.kvHeads;
  const perLayer = 2 * s.width * s.width + 2 * s.width * kv + 3 * s.width * s.ffn + 2 * s.width;
  return 2 * s.vocab * s.width + s.layers * perLayer + s.width;
}

test('presets have the advertised sizes', () => {
  assert.ok(parameterCount(PRESETS.tiny) < 10e6);
  assert.ok(Math.abs(parameterCount(PRESETS.small) - 100e6) < 15e6);
  assert.ok(parameterCount(PRESETS.medium) > 300e6);
  for (const s of Object.values(PRESETS)) validateShape(s);
});

test('a model bigger than free memory is refused with the numbers', async (t) => {
  const dir = tempDir(t);
  const path = await ensureSyntheticModel(MINI, dir);
  const h = await readGgufHeader(path);
  const need = estimateMemory(h, 4096);
  assert.equal(need.kvCache, 2 * 2 * 4096 * 2 * 16 * 2);
  assert.doesNotThrow(() => checkMemory(path, h, 4096, need.total + 1));
  assert.throws(
    () => checkMemory(path, h, 4096, 10 * 1024 * 1024),
    (e: unknown) => e instanceof GgufError && e.message.startsWith(path) && /needs about \d+ MiB .*only 10 MiB/.test(e.message),
  );
});
