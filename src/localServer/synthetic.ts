// Synthetic llama-architecture GGUF models with dummy weights (as vLLM's `--load-format dummy`):
// real llama.cpp compute at a chosen shape, without downloading weights. Cached on disk by shape.
import { mkdir, open, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { Rng } from '../engine/core/random';
import { GgmlType, GgufType, writeGguf } from './gguf';
import type { GgufEntry, GgufTensorSpec } from './gguf';
import { modelCacheDir } from './paths';
import { isSyntheticPreset, SYNTHETIC_PRESETS } from './presets';
import type { SyntheticPreset } from './presets';
import type { ModelShape } from './types';

// tiny keeps `npm test` quick on 2 cores; small (~100M params) is the realistic default for
// profiling; medium (~400M) loads a CPU the way a small real model does.
export const PRESETS: Readonly<Record<SyntheticPreset, ModelShape>> = {
  tiny: { layers: 4, width: 256, heads: 4, kvHeads: 2, ffn: 768, vocab: 8192, type: 'f16', contextLength: 4096 },
  small: { layers: 8, width: 768, heads: 12, kvHeads: 4, ffn: 2048, vocab: 32000, type: 'f16', contextLength: 4096 },
  medium: { layers: 24, width: 1024, heads: 16, kvHeads: 4, ffn: 2816, vocab: 32000, type: 'f16', contextLength: 4096 },
};

/** Bumped when the file layout or the vocabulary changes, so old cache entries are not reused. */
const FORMAT_REVISION = 2; // 2: words and weights from the engine's Rng
export const SYNTHETIC_NAME_PREFIX = 'llm-profiler synthetic';

export function validateShape(s: ModelShape): void {
  const bad = (m: string) => {
    throw new Error(`bad model shape: ${m}`);
  };
  for (const k of ['layers', 'width', 'heads', 'kvHeads', 'ffn', 'vocab', 'contextLength'] as const) {
    if (!Number.isInteger(s[k]) || s[k] <= 0) bad(`${k} must be a positive integer (got ${s[k]})`);
  }
  if (s.width % s.heads !== 0) bad(`width ${s.width} is not a multiple of heads ${s.heads}`);
  if (s.heads % s.kvHeads !== 0) bad(`heads ${s.heads} is not a multiple of kvHeads ${s.kvHeads}`);
  if ((s.width / s.heads) % 2 !== 0) bad(`head size ${s.width / s.heads} must be even (rope)`);
  if (s.width % 32 !== 0 || s.ffn % 32 !== 0) bad('width and ffn must be multiples of 32');
  if (s.type !== 'f16' && s.type !== 'q8_0') bad(`type must be f16 or q8_0 (got ${String(s.type)})`);
  if (s.vocab < 1024) bad(`vocab must be at least 1024 (got ${s.vocab})`);
}

export function shapeKey(s: ModelShape): string {
  return `llama-L${s.layers}-E${s.width}-H${s.heads}-KV${s.kvHeads}-F${s.ffn}-V${s.vocab}-C${s.contextLength}-${s.type}-r${FORMAT_REVISION}`;
}

// ---- Vocabulary ----

const enum TokenType {
  Normal = 1,
  Unknown = 2,
  Control = 3,
  Byte = 6,
}

export interface Vocabulary {
  readonly tokens: readonly string[];
  readonly scores: Float32Array;
  readonly types: Int32Array;
  readonly bos: number;
  readonly eos: number;
  readonly unk: number;
}

// Common words first, so prompts in English tokenize into whole words where they can.
const WORDS = (
  'the of and to a in is it you that he was for on are with as I his they be at one have this from or had by hot word but what some we ' +
  'can out other were all there when up use your how said an each she which do their time if will way about many then them write would ' +
  'like so these her long make thing see him two has look more day could go come did number sound no most people my over know water ' +
  'than call first who may down side been now find any new work part take get place made live where after back little only round man ' +
  'year came show every good me give our under name very through just form sentence great think say help low line differ turn cause ' +
  'much mean before move right boy old too same tell does set three want air well also play small end put home read hand port large ' +
  'spell add even land here must big high such follow act why ask men change went light kind off need house picture try us again ' +
  'animal point mother world near build self earth father head stand own page should country found answer school grow study still ' +
  'learn plant cover food sun four between state keep eye never last let thought city tree cross farm hard start might story saw far ' +
  'sea draw left late run while press close night real life few north open seem together next white children begin got walk example ' +
  'ease paper group always music those both mark often letter until mile river car feet care second book carry took science eat room ' +
  'friend began idea fish mountain stop once base hear horse cut sure watch color face wood main enough plain girl usual young ready ' +
  'above ever red list though feel talk bird soon body dog family direct pose leave song measure door product black short numeral ' +
  'class wind question happen complete ship area half rock order fire south problem piece told knew pass since top whole king space ' +
  'heard best hour better true during hundred five remember step early hold west ground interest reach fast verb sing listen six table ' +
  'travel less morning ten simple several vowel toward war lay against pattern slow center love person money serve appear road map ' +
  'rain rule govern pull cold notice voice unit power town fine certain fly fall lead cry dark machine note wait plan figure star box ' +
  'noun field rest correct able pound done beauty drive stood contain front teach week final gave green oh quick develop ocean warm ' +
  'free minute strong special mind behind clear tail produce fact street inch multiply nothing course stay wheel full force blue ' +
  'object decide surface deep moon island foot system busy test record boat common gold possible plane stead dry wonder laugh thousand ' +
  'ago ran check game shape equate miss brought heat snow tire bring yes distant fill east paint language among model server token ' +
  'request stream latency profile prompt batch'
).split(' ');

const CONSONANTS = 'bdfghklmnprstvz';
const VOWELS = 'aeiou';

/** A seeded uniform [0, 1) source (the engine's one generator, random.ts). */
function uniform(seed: number): () => number {
  const rng = new Rng(seed);
  return () => rng.next();
}

/**
 * A SentencePiece-style ("llama") vocabulary: control tokens, ChatML markers, 256 byte-fallback
 * tokens, single characters, then "▁word" pieces with every prefix present so that llama.cpp's SPM
 * merge reaches whole words. Words are English first, then pronounceable syllable words.
 */
export function buildVocabulary(size: number): Vocabulary {
  const tokens: string[] = ['<unk>', '<s>', '</s>', '<|im_start|>', '<|im_end|>'];
  const types: number[] = [TokenType.Unknown, TokenType.Control, TokenType.Control, TokenType.Control, TokenType.Control];
  for (let b = 0; b < 256; b++) {
    tokens.push(`<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`);
    types.push(TokenType.Byte);
  }
  const seen = new Set(tokens);
  const add = (t: string) => {
    if (seen.has(t) || tokens.length >= size) return;
    seen.add(t);
    tokens.push(t);
    types.push(TokenType.Normal);
  };
  add('▁');
  for (let c = 33; c < 127; c++) add(String.fromCharCode(c));
  const addWord = (w: string) => {
    const piece = `▁${w}`;
    for (let i = 2; i <= piece.length; i++) add(piece.slice(0, i));
  };
  for (const w of WORDS) addWord(w);
  for (const w of WORDS) addWord(w[0]!.toUpperCase() + w.slice(1));
  const syllables: string[] = [];
  for (const c of CONSONANTS) for (const v of VOWELS) syllables.push(c + v);
  for (const a of syllables) addWord(a);
  for (const a of syllables) for (const b of syllables) addWord(a + b);
  const rand = uniform(0x5eed);
  while (tokens.length < size) {
    const n = 3 + Math.floor(rand() * 2);
    let w = '';
    for (let i = 0; i < n; i++) w += syllables[Math.floor(rand() * syllables.length)];
    addWord(w);
  }
  const scores = new Float32Array(tokens.length);
  // Earlier (more common) pieces merge first, as in a trained SentencePiece model.
  for (let i = 0; i < tokens.length; i++) scores[i] = types[i] === TokenType.Normal ? -i : 0;
  return { tokens, scores, types: Int32Array.from(types), bos: 1, eos: 2, unk: 0 };
}

const CHATML_TEMPLATE =
  "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}" +
  "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";

// ---- Weights ----

const SIGMA = 0.02;
const F16_PERIOD = 4099; // prime, so rows of any width see different windows of the block
const Q8_PERIOD = 1021; // in 34-byte Q8_0 blocks
const CHUNK_ELEMENTS = 1 << 20;

function f32ToF16(v: number): number {
  const f = new Float32Array([v]);
  const x = new Uint32Array(f.buffer)[0]!;
  const sign = (x >>> 16) & 0x8000;
  const exp = ((x >>> 23) & 0xff) - 127 + 15;
  let mant = x & 0x7fffff;
  if (exp <= 0) {
    if (exp < -10) return sign;
    mant = (mant | 0x800000) >> (1 - exp);
    return sign | ((mant + 0x1000) >> 13);
  }
  if (exp >= 31) return sign | 0x7c00;
  const r = sign | (exp << 10) | (mant >> 13);
  return (mant & 0x1000) !== 0 ? r + 1 : r;
}

function gaussian(rand: () => number): number {
  const u = Math.max(rand(), 1e-12);
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * rand());
}

/** One random block, repeated to fill a buffer long enough to slice any chunk at any phase. */
function makePattern(type: 'f16' | 'q8_0'): { buf: Buffer; unitBytes: number; period: number; unitsPerChunk: number } {
  const rand = uniform(0xc0ffee);
  if (type === 'f16') {
    const block = Buffer.alloc(F16_PERIOD * 2);
    for (let i = 0; i < F16_PERIOD; i++) block.writeUInt16LE(f32ToF16(gaussian(rand) * SIGMA), i * 2);
    const reps = Math.ceil((CHUNK_ELEMENTS + F16_PERIOD) / F16_PERIOD);
    return { buf: Buffer.concat(Array.from({ length: reps }, () => block)), unitBytes: 2, period: F16_PERIOD, unitsPerChunk: CHUNK_ELEMENTS };
  }
  const block = Buffer.alloc(Q8_PERIOD * 34);
  const d = (SIGMA * Math.sqrt(3)) / 127; // uniform q in [-127, 127] has std 127/sqrt(3)
  for (let b = 0; b < Q8_PERIOD; b++) {
    block.writeUInt16LE(f32ToF16(d), b * 34);
    for (let i = 0; i < 32; i++) block.writeInt8(Math.round(rand() * 254) - 127, b * 34 + 2 + i);
  }
  const unitsPerChunk = CHUNK_ELEMENTS / 32;
  const reps = Math.ceil((unitsPerChunk + Q8_PERIOD) / Q8_PERIOD);
  return { buf: Buffer.concat(Array.from({ length: reps }, () => block)), unitBytes: 34, period: Q8_PERIOD, unitsPerChunk };
}

function hash(s: string): number {
  let h = 2166136261;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619);
  return h >>> 0;
}

function buildTensors(s: ModelShape): (Omit<GgufTensorSpec, 'data'> & { fill: 'random' | 'ones' })[] {
  const w = s.width;
  const kv = (w / s.heads) * s.kvHeads;
  const q = s.type === 'f16' ? GgmlType.F16 : GgmlType.Q8_0;
  const out: (Omit<GgufTensorSpec, 'data'> & { fill: 'random' | 'ones' })[] = [
    { name: 'token_embd.weight', dims: [w, s.vocab], type: q, fill: 'random' },
  ];
  for (let i = 0; i < s.layers; i++) {
    const p = `blk.${i}.`;
    out.push(
      { name: `${p}attn_norm.weight`, dims: [w], type: GgmlType.F32, fill: 'ones' },
      { name: `${p}attn_q.weight`, dims: [w, w], type: q, fill: 'random' },
      { name: `${p}attn_k.weight`, dims: [w, kv], type: q, fill: 'random' },
      { name: `${p}attn_v.weight`, dims: [w, kv], type: q, fill: 'random' },
      { name: `${p}attn_output.weight`, dims: [w, w], type: q, fill: 'random' },
      { name: `${p}ffn_norm.weight`, dims: [w], type: GgmlType.F32, fill: 'ones' },
      { name: `${p}ffn_gate.weight`, dims: [w, s.ffn], type: q, fill: 'random' },
      { name: `${p}ffn_up.weight`, dims: [w, s.ffn], type: q, fill: 'random' },
      { name: `${p}ffn_down.weight`, dims: [s.ffn, w], type: q, fill: 'random' },
    );
  }
  out.push({ name: 'output_norm.weight', dims: [w], type: GgmlType.F32, fill: 'ones' });
  out.push({ name: 'output.weight', dims: [w, s.vocab], type: q, fill: 'random' });
  return out;
}

function metadataFor(s: ModelShape, vocab: Vocabulary): Map<string, GgufEntry> {
  const m = new Map<string, GgufEntry>();
  const u32 = (value: number): GgufEntry => ({ type: GgufType.Uint32, value });
  m.set('general.architecture', { type: GgufType.String, value: 'llama' });
  m.set('general.name', { type: GgufType.String, value: `${SYNTHETIC_NAME_PREFIX} ${shapeKey(s)}` });
  m.set('general.file_type', u32(s.type === 'f16' ? 1 : 7));
  m.set('general.alignment', u32(32));
  m.set('llama.context_length', u32(s.contextLength));
  m.set('llama.embedding_length', u32(s.width));
  m.set('llama.block_count', u32(s.layers));
  m.set('llama.feed_forward_length', u32(s.ffn));
  m.set('llama.attention.head_count', u32(s.heads));
  m.set('llama.attention.head_count_kv', u32(s.kvHeads));
  m.set('llama.rope.dimension_count', u32(s.width / s.heads));
  m.set('llama.rope.freq_base', { type: GgufType.Float32, value: 10000 });
  m.set('llama.attention.layer_norm_rms_epsilon', { type: GgufType.Float32, value: 1e-5 });
  m.set('llama.vocab_size', u32(s.vocab));
  m.set('tokenizer.ggml.model', { type: GgufType.String, value: 'llama' });
  m.set('tokenizer.ggml.tokens', { type: GgufType.Array, itemType: GgufType.String, value: vocab.tokens });
  m.set('tokenizer.ggml.scores', { type: GgufType.Array, itemType: GgufType.Float32, value: vocab.scores });
  m.set('tokenizer.ggml.token_type', { type: GgufType.Array, itemType: GgufType.Int32, value: vocab.types });
  m.set('tokenizer.ggml.bos_token_id', u32(vocab.bos));
  m.set('tokenizer.ggml.eos_token_id', u32(vocab.eos));
  m.set('tokenizer.ggml.unknown_token_id', u32(vocab.unk));
  m.set('tokenizer.ggml.padding_token_id', u32(vocab.unk));
  m.set('tokenizer.ggml.add_bos_token', { type: GgufType.Bool, value: true });
  m.set('tokenizer.ggml.add_eos_token', { type: GgufType.Bool, value: false });
  m.set('tokenizer.chat_template', { type: GgufType.String, value: CHATML_TEMPLATE });
  return m;
}

/** Writes a synthetic model to `path` (through a temporary file, so a crash never leaves half a model). */
export async function writeSyntheticModel(path: string, shape: ModelShape): Promise<void> {
  validateShape(shape);
  const vocab = buildVocabulary(shape.vocab);
  if (vocab.tokens.length !== shape.vocab) throw new Error(`vocabulary came out at ${vocab.tokens.length}, not ${shape.vocab}`);
  const pattern = makePattern(shape.type);
  const onesF32 = (n: number) => {
    const b = Buffer.alloc(n * 4);
    for (let i = 0; i < n; i++) b.writeFloatLE(1, i * 4);
    return b;
  };
  const tensors: GgufTensorSpec[] = buildTensors(shape).map((t) => ({
    name: t.name,
    dims: t.dims,
    type: t.type,
    data: function* () {
      if (t.fill === 'ones') {
        yield onesF32(t.dims.reduce((a, b) => a * b, 1));
        return;
      }
      const elements = t.dims.reduce((a, b) => a * b, 1);
      let units = t.type === GgmlType.F16 ? elements : elements / 32;
      let phase = hash(t.name) % pattern.period;
      while (units > 0) {
        const n = Math.min(units, pattern.unitsPerChunk);
        yield pattern.buf.subarray(phase * pattern.unitBytes, (phase + n) * pattern.unitBytes);
        phase = (phase + n) % pattern.period;
        units -= n;
      }
    },
  }));
  const tmp = `${path}.tmp-${process.pid}-${Date.now()}`;
  const fh = await open(tmp, 'w');
  try {
    await writeGguf(metadataFor(shape, vocab), tensors, async (chunk) => {
      await fh.write(chunk);
    });
    await fh.close();
    await rename(tmp, path);
  } catch (e) {
    await fh.close().catch(() => undefined);
    await rm(tmp, { force: true });
    throw e;
  }
}

/** The cached file for a shape, written on first use. Returns its path. */
export async function ensureSyntheticModel(shape: ModelShape, dir: string = modelCacheDir()): Promise<string> {
  validateShape(shape);
  await mkdir(dir, { recursive: true });
  const path = join(dir, `${shapeKey(shape)}.gguf`);
  try {
    const s = await stat(path);
    if (s.isFile() && s.size > 0) return path;
  } catch {
    // not cached yet
  }
  await writeSyntheticModel(path, shape);
  return path;
}

/** "tiny, small or medium". */
function presetNames(): string {
  return `${SYNTHETIC_PRESETS.slice(0, -1).join(', ')} or ${SYNTHETIC_PRESETS[SYNTHETIC_PRESETS.length - 1]}`;
}

export function presetShape(preset: SyntheticPreset): ModelShape {
  if (!isSyntheticPreset(preset)) throw new Error(`unknown preset ${JSON.stringify(preset)} (${presetNames()})`);
  return PRESETS[preset];
}

const SHAPE_KEYS: Readonly<Record<string, keyof ModelShape>> = {
  layers: 'layers', width: 'width', heads: 'heads', 'kv-heads': 'kvHeads', kvheads: 'kvHeads', ffn: 'ffn', vocab: 'vocab', ctx: 'contextLength', type: 'type',
};

/**
 * A custom shape from text such as "shape:layers=12,width=512,heads=8,kv-heads=2,ffn=1536,vocab=16000,type=q8_0":
 * keys not given come from `base=<preset>` (SYNTHETIC_PRESETS; tiny by default). Throws naming the bad part.
 */
export function parseShapeSpec(text: string): ModelShape {
  const body = text.replace(/^shape:/, '');
  const parts = body.split(',').map((p) => p.trim()).filter(Boolean);
  let base: SyntheticPreset = 'tiny';
  const over: Record<string, number | string> = {};
  for (const part of parts) {
    const [k, v] = part.split('=').map((x) => x?.trim());
    if (!k || v === undefined || v === '') throw new Error(`bad model shape part "${part}": use key=value`);
    if (k === 'base') {
      if (!isSyntheticPreset(v)) throw new Error(`bad model shape: base must be ${presetNames()} (got ${v})`);
      base = v;
      continue;
    }
    const key = SHAPE_KEYS[k.toLowerCase()];
    if (!key) throw new Error(`bad model shape: unknown key "${k}" (layers, width, heads, kv-heads, ffn, vocab, ctx, type, base)`);
    if (key === 'type') over[key] = v.toLowerCase();
    else {
      const n = Number(v);
      if (!Number.isInteger(n)) throw new Error(`bad model shape: ${k} must be a whole number (got ${v})`);
      over[key] = n;
    }
  }
  const shape = { ...PRESETS[base], ...over } as ModelShape;
  validateShape(shape);
  return shape;
}
