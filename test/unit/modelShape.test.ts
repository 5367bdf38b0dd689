import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseShapeSpec, PRESETS } from '../../src/localServer/synthetic';

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
