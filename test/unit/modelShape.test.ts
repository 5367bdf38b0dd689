import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseShapeSpec, presetShape, PRESETS } from '../../src/localServer/synthetic';
import { isSyntheticPreset, SYNTHETIC_PRESETS } from '../../src/localServer/presets';
import type { SyntheticPreset } from '../../src/localServer/presets';

test('a custom shape: given keys over the base preset, validated', () => {
  assert.deepEqual(parseShapeSpec('shape:layers=2,width=128,heads=2,kv-heads=1,ffn=256,vocab=2048,type=q8_0'),
    { ...PRESETS.tiny, layers: 2, width: 128, heads: 2, kvHeads: 1, ffn: 256, vocab: 2048, type: 'q8_0' });
  assert.deepEqual(parseShapeSpec('shape:base=small,layers=4'), { ...PRESETS.small, layers: 4 });
  assert.deepEqual(parseShapeSpec('shape:'), PRESETS.tiny);
});

test('a bad custom shape names the bad part', () => {
  assert.throws(() => parseShapeSpec('shape:layers=two'), /layers must be a whole number \(got two\)/);
  assert.throws(() => parseShapeSpec('shape:depth=3'), /unknown key "depth"/);
  assert.throws(() => parseShapeSpec('shape:heads=3'), /width 256 is not a multiple of heads 3/);
  assert.throws(() => parseShapeSpec('shape:type=q4'), /type must be f16 or q8_0/);
  assert.throws(() => parseShapeSpec('shape:base=huge'), /base must be tiny, small or medium/);
  assert.throws(() => parseShapeSpec('shape:layers'), /use key=value/);
});

test('one list of presets: every preset has a shape, and only a listed name is a preset', () => {
  assert.deepEqual(Object.keys(PRESETS), [...SYNTHETIC_PRESETS]);
  for (const p of SYNTHETIC_PRESETS) assert.equal(presetShape(p), PRESETS[p]);
  assert.equal(isSyntheticPreset('small'), true);
  for (const name of ['huge', 'toString', '__proto__', '']) {
    assert.equal(isSyntheticPreset(name), false, name);
    assert.throws(() => presetShape(name as SyntheticPreset), /unknown preset .*\(tiny, small or medium\)/);
  }
  assert.throws(() => parseShapeSpec('shape:base=toString'), /base must be tiny, small or medium/);
});
