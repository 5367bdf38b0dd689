// Without --url the bundled server's slots hold the job's longest prompt: a prompt file of about
// 3,000 tokens by the synthetic model's count (about half that by the client's estimate), built by
// the CLI's job builder and profiled on the real server (tiny preset); the server's own report of
// its slots and of each prompt's tokens is checked against the sizing. And the HTTP 400 a slot too
// small gives names the flags that fix it, which `run` takes without --url.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseCommandLine } from '../../src/cli/parse';
import { buildRunJob } from '../../src/jobs/build';
import { executeJob } from '../../src/jobs/execute';
import type { LocalServerRequest, RunJob } from '../../src/jobs/job';
import { loadPrompts } from '../../src/jobs/jobPrompts';
import { SLOT_SLACK } from '../../src/jobs/slotContext';
import { startLocalServer } from '../../src/localServer/launcher';
import { syntheticChatCounter } from '../../src/localServer/tokenCount';
import { PRESETS } from '../../src/localServer/synthetic';
import type { LocalServerHandle, LocalServerOptions } from '../../src/localServer/types';
import { buildCli } from '../support/cli';

const MAX_TOKENS = 16;
let dir: string;
let file: string;
/** The prompt's tokens as the tiny model counts them. */
let tokens: number;
const started: LocalServerHandle[] = [];

before(async () => {
  buildCli(); // dist/localServer.mjs
  dir = mkdtempSync(join(tmpdir(), 'slot-context-'));
  file = join(dir, 'review.prompt.md');
  // Markdown with code names, as real prompt files are: the synthetic vocabulary splits it finely.
  const count = syntheticChatCounter(PRESETS.tiny.vocab);
  const lines: string[] = ['Review the handlers below and list three risks.', ''];
  for (let i = 0; ; i++) {
    lines.push(`- \`handler${i}()\` in src/server.ts: retries on timeout, then logs the configuration it used.`);
    writeFileSync(file, `---\ndescription: review\n---\n${lines.join('\n')}\n`);
    const p = (await loadPrompts({ kind: 'file', path: file })).prompts![0]!;
    tokens = count(p.messages);
    if (tokens >= 3000) break;
  }
});

after(async () => {
  await Promise.all(started.map((h) => h.stop().catch(() => undefined)));
  rmSync(dir, { recursive: true, force: true });
});

/** Builds `run` from flags as the CLI does and runs it on the bundled server, keeping what the server said. */
async function runLocal(argv: string[]) {
  const { job } = await buildRunJob(parseCommandLine('run', ['--prompt-file', file, '--warmup', '0', '--max-tokens', String(MAX_TOKENS), ...argv]));
  assert.equal(job.target.kind, 'local', 'no --url: the local server');
  const server = (job.target as { server: LocalServerRequest }).server;
  const log: string[] = [];
  let options: LocalServerOptions | undefined;
  let handle: LocalServerHandle | undefined;
  const run = await executeJob(job, {
    onLog: (line) => log.push(line),
    startLocalServer: async (o) => {
      options = o;
      handle = await startLocalServer(o);
      started.push(handle);
      return handle;
    },
  });
  // "model loaded in 812 ms; 2 slots of 4608 tokens; listening on …": the server's own report
  const m = log.map((l) => /(\d+) slots of (\d+) tokens/.exec(l)).find(Boolean);
  assert.ok(m, `the server reports its slots:\n${log.join('\n')}`);
  return { job: job as RunJob, server, run, log, options: options!, handle: handle!, slots: Number(m[1]), slotTokens: Number(m[2]) };
}

test('a ~3,000-token prompt file without --url: each slot holds it and its max tokens, every request is served', async () => {
  const r = await runLocal(['--requests', '3']);
  const p = (await loadPrompts({ kind: 'file', path: file })).prompts![0]!;
  assert.ok(p.estimatedTokens! < tokens * 0.75, `the estimate (${p.estimatedTokens}) is well under the model's count (${tokens}): the count sized it`);
  assert.ok(r.server.slotContext! >= tokens + MAX_TOKENS, `slot ${r.server.slotContext} ≥ ${tokens} + ${MAX_TOKENS}`);
  assert.equal(r.server.slotContext! % 256, 0, 'rounded up to 256');
  assert.equal(r.options.slotContext, r.server.slotContext, 'the launcher was asked for it');
  assert.equal(r.slots, 1);
  assert.equal(r.slotTokens, r.server.slotContext, 'the server made its slot that size');
  assert.equal(r.handle.slotContext, r.slotTokens);
  assert.equal(r.run.summary.failed, 0, JSON.stringify(r.run.summary.errorsByKind));
  const measured = r.run.requests.filter((q) => !q.warmup);
  assert.equal(measured.length, 3);
  for (const q of measured) {
    assert.equal(q.error, undefined);
    assert.equal(q.outputTokens, MAX_TOKENS);
    assert.ok(q.promptTokens !== undefined && !q.promptTokensEstimated, 'the server reported the prompt tokens');
    // the server's count: the model's count plus the cold-cache nonce, within the slack
    assert.ok(q.promptTokens >= tokens && q.promptTokens <= tokens + SLOT_SLACK, `server ${q.promptTokens}, counted ${tokens}`);
    assert.ok(q.promptTokens + MAX_TOKENS <= r.slotTokens, `${q.promptTokens} + ${MAX_TOKENS} fit in ${r.slotTokens}`);
  }
});

test('--parallel, --ctx-size and --batch-size without --url reach the server run starts', async () => {
  const r = await runLocal(['--requests', '2', '--concurrency', '2', '--parallel', '2', '--ctx-size', '9216', '--batch-size', '128']);
  assert.deepEqual([r.options.parallel, r.options.ctxSize, r.options.batchSize], [2, 9216, 128]);
  assert.ok(r.log.some((l) => /\(parallel 2, batch 128, threads \d+, ctx 9216\)/.test(l)), r.log.join('\n'));
  assert.deepEqual([r.slots, r.slotTokens], [2, 4608]);
  assert.equal(r.run.summary.failed, 0, JSON.stringify(r.run.summary.errorsByKind));
});

test("the 400 of a prompt longer than a slot names the server's flags and a --ctx-size that would serve it, which run takes", async () => {
  // The old default: 2048 a slot
  const h = await startLocalServer({ model: { kind: 'preset', preset: 'tiny' }, parallel: 1 });
  started.push(h);
  assert.equal(h.slotContext, 2048);
  const p = (await loadPrompts({ kind: 'file', path: file })).prompts![0]!;
  const res = await fetch(`${h.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: h.model, messages: p.messages, max_tokens: MAX_TOKENS, stream: true }),
  });
  assert.equal(res.status, 400);
  const message = ((await res.json()) as { error: { message: string } }).error.message;
  const m = /^the prompt has (\d+) tokens, more than a slot holds: 2048 tokens \(this server's --ctx-size 2048 over --parallel 1\); start it with --ctx-size (\d+) or more \(or fewer --parallel slots\)$/.exec(message);
  assert.ok(m, message);
  assert.equal(Number(m[1]), tokens, "the server counts the prompt as the sizing does");
  const hinted = Number(m[2]);
  assert.ok(hinted >= tokens + MAX_TOKENS);
  await h.stop();
  // The hint's flag, given to run without --url, is taken and kept
  const { job } = await buildRunJob(parseCommandLine('run', ['--prompt-file', file, '--max-tokens', String(MAX_TOKENS), '--ctx-size', String(hinted)]));
  assert.deepEqual(job.target.kind === 'local' ? [job.target.server.ctxSize, job.target.server.slotContext] : [], [hinted, undefined]);
});
