// A sweep of the real bundled llama.cpp server (tiny synthetic model) over concurrency 1–8 with 8
// parallel slots: TPOT rises with the batch and throughput saturates far below linear scaling.
// Bounds are loose on purpose: the machine is small and shared.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startLocalServer } from '../../src/localServer/launcher';
import { runSweep } from '../../src/engine/run/sweep';
import { defaultWorkload } from '../../src/engine/core/workload';

test('the local server swept over parallel 1–8: TPOT rises, throughput saturates, batches fill', { timeout: 300_000 }, async () => {
  const server = await startLocalServer({ model: { kind: 'preset', preset: 'tiny' }, port: 0, parallel: 8 });
  try {
    const run = await runSweep(
      { url: server.url, api: 'openai-chat', model: server.model },
      {
        dimension: 'concurrency',
        values: [1, 2, 4, 8],
        workload: defaultWorkload({ requests: 8, warmup: 1, maxTokens: 16, prompt: { kind: 'synthetic', tokens: 32, sharedPrefix: false } }),
        stopOnSaturation: false,
      },
    );
    const sw = run.sweep!;
    assert.equal(sw.points.length, 4);
    for (const p of sw.points) {
      assert.equal(p.summary.failed, 0, `${p.label}: ${JSON.stringify(p.summary.errorsByKind)}`);
      assert.equal(p.summary.completed, 8);
      // ignore_eos: exactly max_tokens each
      assert.equal(p.summary.totalOutputTokens, 8 * 16);
    }
    const [c1, , , c8] = sw.points;
    // the streams really shared the batch
    assert.ok(c8!.meanBatch! > 4, `mean decoding batch at c=8: ${c8!.meanBatch}`);
    // TPOT rises with the batch
    assert.ok(c8!.summary.tpotMs.mean > c1!.summary.tpotMs.mean * 1.3, `TPOT ${c1!.summary.tpotMs.mean} → ${c8!.summary.tpotMs.mean}`);
    // throughput saturates: 8× the streams buy far less than 8× the tokens/s
    assert.ok(c8!.summary.outputTokensPerSecond < c1!.summary.outputTokensPerSecond * 4, `tok/s ${c1!.summary.outputTokensPerSecond} → ${c8!.summary.outputTokensPerSecond}`);
    // a fit was made over the measured batch, with a slope
    assert.equal(sw.fitX, 'meanBatch');
    assert.ok(sw.residuals!.length === 4);
    assert.ok(sw.fit === undefined || sw.fit.kMs > 0);
  } finally {
    await server.stop();
  }
  assert.equal(await server.exited.then(() => true), true);
});
