import { test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { createEndpointClient } from '../../src/engine/transport/client';
import type { RequestSpec } from '../../src/engine/core/types';
import { startStepServer, startStepServerProcess } from '../support/stepServer';

/** A raw streaming request: the body text as it came. */
function stream(url: string, body: Record<string, unknown>): Promise<{ status: number; text: string }> {
  const { hostname, port } = new URL(url);
  const payload = JSON.stringify({ messages: [{ role: 'user', content: 'hi' }], stream: true, ...body });
  return new Promise((resolve, reject) => {
    const req = request({ host: hostname, port: Number(port), method: 'POST', path: '/v1/chat/completions', headers: { 'content-type': 'application/json' } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (s: string) => (text += s));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('error', reject);
    req.end(payload);
  });
}

test('the step server writes one token to every stream per step, back to back, steps stepMs apart', async () => {
  const stepMs = 15;
  const ttftMs = 25;
  const server = await startStepServer({ stepMs, ttftMs });
  try {
    // Six streams at once, then two more a little later: they join the batch that is already running.
    const first = Array.from({ length: 6 }, (_, i) => stream(server.url, { max_tokens: 6, seed: i }));
    await new Promise((r) => setTimeout(r, 40));
    const later = Array.from({ length: 2 }, (_, i) => stream(server.url, { max_tokens: 4, seed: 10 + i, stream_options: { include_usage: true } }));
    const replies = await Promise.all([...first, ...later]);
    for (const r of replies) assert.equal(r.status, 200);
    assert.equal(server.log.length, 8);

    const byStep = new Map<number, number[]>();
    for (const e of server.log) {
      const tokens = e.writes.filter((w) => w.tokens > 0);
      assert.equal(tokens.length, e.seed! < 10 ? 6 : 4, `seed ${e.seed}: one token chunk per max_tokens`);
      // Queue + prefill before the first token, then one token in each consecutive step.
      assert.ok(tokens[0]!.at >= e.receivedAt + ttftMs - 1, `seed ${e.seed}: first token ${tokens[0]!.at - e.receivedAt} ms after arrival`);
      tokens.forEach((w, i) => {
        assert.equal(w.step, tokens[0]!.step! + i, `seed ${e.seed}: token ${i} in the next step`);
        byStep.set(w.step!, [...(byStep.get(w.step!) ?? []), w.at]);
      });
      const kinds = e.writes.map((w) => w.kind);
      assert.deepEqual(kinds.slice(-3), e.seed! < 10 ? ['content', 'final', 'done'] : ['final', 'usage', 'done']);
      assert.equal(kinds[0], 'role');
    }
    // The later streams joined steps the first ones were in: a step wrote to all of them together.
    assert.ok([...byStep.values()].some((ats) => ats.length === 8), 'a step with all eight streams');
    const steps = [...byStep.keys()].sort((a, b) => a - b);
    const spreads: number[] = [];
    for (let k = 1; k < steps.length; k++) {
      const prev = byStep.get(steps[k - 1]!)!;
      const cur = byStep.get(steps[k]!)!;
      // Never early: a step begins at least stepMs after the one before (a loaded machine makes it
      // later). Seen here as the steps' first writes, each stamped after its write returned: less a
      // write's own time.
      const gap = Math.min(...cur) - Math.min(...prev);
      assert.ok(gap >= (steps[k]! - steps[k - 1]!) * stepMs - 0.5, `step ${steps[k]} began ${gap} ms after step ${steps[k - 1]}`);
      spreads.push(Math.max(...cur) - Math.min(...cur));
    }
    // Back to back: a step's writes (up to 8 small ones) take far less than a step; the median, so one
    // step preempted on a busy machine does not decide.
    spreads.sort((a, b) => a - b);
    assert.ok(spreads[spreads.length >> 1]! < stepMs / 3, `median spread of a step's writes ${spreads[spreads.length >> 1]} ms`);
    // The SSE itself: the role chunk, the tokens in order, the finish reason, usage when asked, [DONE].
    const text = replies[6]!.text;
    assert.match(text, /^data: \{"id":"chatcmpl-\d+".*"delta":\{"role":"assistant","content":""\}/);
    assert.deepEqual([...text.matchAll(/"content":"(tok\d+ )"/g)].map((m) => m[1]), ['tok0 ', 'tok1 ', 'tok2 ', 'tok3 ']);
    assert.match(text, /"finish_reason":"length"/);
    assert.match(text, /"usage":\{"prompt_tokens":8,"completion_tokens":4,"total_tokens":12\}/);
    assert.ok(text.endsWith('data: [DONE]\n\n'));
    assert.equal(server.maxBatch, 8);
  } finally {
    await server.close();
  }
});

test('the step server in its own process: the client measures its bursts against its write log', async () => {
  const server = await startStepServerProcess({ stepMs: 10, ttftMs: 20 });
  let alive = true;
  try {
    assert.notEqual(server.pid, process.pid);
    const client = createEndpointClient({ url: server.url, api: 'openai-chat', model: 'scripted-model' }, { connections: 16, timeoutMs: 10_000, idleTimeoutMs: 5000 });
    try {
      await client.warm();
      const spec = (i: number): RequestSpec => ({ index: i, warmup: false, prompt: { messages: [{ role: 'user', content: `s${i}` }] }, maxTokens: 8, seed: i, ignoreEos: true, scheduledAt: 0 });
      const records = await Promise.all(Array.from({ length: 16 }, (_, i) => client.send(spec(i), new AbortController().signal)));
      const log = await server.fetchLog();
      const steps = new Set<number>();
      const errors: number[] = [];
      for (const r of records) {
        assert.equal(r.error, undefined);
        assert.equal(r.chunkTimesMs.length, 8);
        const e = log.find((x) => x.streamId === r.responseId);
        assert.ok(e, `log entry for ${r.responseId}`);
        const writes = e.writes.filter((w) => w.tokens > 0);
        writes.forEach((w) => steps.add(w.step!));
        // Across processes, one epoch clock (each process's origin to within about half a ms): every
        // chunk arrives after it was written.
        r.chunkTimesMs.forEach((t, i) => {
          const err = r.sentAt + t - writes[i]!.at;
          assert.ok(err > -1, `${r.responseId} chunk ${i}: ${err} ms`);
          errors.push(err);
        });
      }
      // And soon after: the median (a busy machine's preemptions land in the tail).
      errors.sort((a, b) => a - b);
      assert.ok(errors[errors.length >> 1]! < 20, `median arrival − write ${errors[errors.length >> 1]} ms`);
      // Sixteen streams sent together share their steps: far fewer steps than chunks.
      assert.ok(steps.size < 8 * 4, `${steps.size} steps for 128 chunks`);
      await server.clearLog();
      assert.equal((await server.fetchLog()).length, 0);
    } finally {
      await client.close();
    }
    await server.close();
    alive = false;
    assert.throws(() => process.kill(server.pid, 0), /ESRCH/, 'the process is gone');
  } finally {
    if (alive) await server.close();
  }
});
