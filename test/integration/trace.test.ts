// Replaying a trace through the real CLI (`node dist/cli.js run --trace F`, its own process) against
// the cost-model server with its prefix cache on, whose truth log says what it received and served
// from its cache: a 200-request Mooncake trace over 10 s is sent on schedule (p99 lag ≤ 5 ms), each
// prompt is its stated length as the server counts it, and the cached tokens the server reports are
// exactly the sharing the hash_ids describe; an Azure CSV is sent at its times over the speed. And
// the other shapes of issue 30's traffic through the CLI: shared-prefix groups, a ramp.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildCli, ROOT, runCliProcess } from '../support/cli';
import { startCostModelServer } from '../support/costModelServer';
import type { CostModelServer, TruthRequest } from '../support/costModelServer';
import { readRunFile } from '../../src/engine/files/runFile';
import type { RequestRecord, RunFile } from '../../src/engine/core/types';
import { Rng } from '../../src/engine/core/random';
import { TRACE_BLOCK_TOKENS, TRACE_WORDS } from '../../src/engine/prompts/traces';

const dir = mkdtempSync(join(tmpdir(), 'llmp-trace-'));
before(buildCli);
after(() => rmSync(dir, { recursive: true, force: true }));

interface Line {
  readonly timestamp: number;
  readonly input_length: number;
  readonly output_length: number;
  readonly hash_ids: number[];
}

const CONTEXTS = 10;
const CONTEXT_BLOCKS = 4;

/**
 * 200 requests over 10 s, in bursts (several at the same millisecond) as Mooncake's are: each starts
 * with 1 to 4 blocks of one of 10 shared contexts (ids 0–39) and most end in a block of their own
 * (ids 40 on), cut anywhere; some stop inside a context's block, and a few repeat an earlier request
 * whole. Every id is below the number of words a block's first word is drawn from, so two different
 * blocks part at their first word and the server's word-by-word cache sees block sharing only.
 */
function mooncakeFixture(): Line[] {
  const rng = new Rng(30);
  const times = Array.from({ length: 200 }, () => Math.floor(rng.next() * 10_000)).sort((a, b) => a - b);
  for (let i = 1; i < times.length; i += 17) times[i] = times[i - 1]!; // bursts: the same millisecond
  let nextTail = CONTEXTS * CONTEXT_BLOCKS;
  const lines: Line[] = [];
  for (const t of times) {
    const output = 4 + rng.int(12);
    if (lines.length > 20 && rng.next() < 0.05) {
      const again = lines[rng.int(lines.length)]!;
      lines.push({ ...again, timestamp: t, output_length: output });
      continue;
    }
    const context = rng.int(CONTEXTS);
    const depth = 1 + rng.int(CONTEXT_BLOCKS);
    const ids = Array.from({ length: depth }, (_, b) => context * CONTEXT_BLOCKS + b);
    const cut = 1 + rng.int(TRACE_BLOCK_TOKENS);
    if (rng.next() < 0.8 && nextTail < TRACE_WORDS.length) {
      ids.push(nextTail++);
      lines.push({ timestamp: t, input_length: depth * TRACE_BLOCK_TOKENS + cut, output_length: output, hash_ids: ids });
    } else {
      lines.push({ timestamp: t, input_length: (depth - 1) * TRACE_BLOCK_TOKENS + cut, output_length: output, hash_ids: ids });
    }
  }
  assert.ok(nextTail <= TRACE_WORDS.length);
  return lines;
}

/** A prompt's blocks: the id and how many of its words the prompt holds. */
function blocksOf(l: Line): { id: number; words: number }[] {
  return l.hash_ids.map((id, i) => ({ id, words: Math.min(TRACE_BLOCK_TOKENS, l.input_length - i * TRACE_BLOCK_TOKENS) }));
}

/** Words two prompts share at their start, by their blocks: the same id at the same place is the same text; different ids part at once. */
function sharedWords(a: Line, b: Line): number {
  const x = blocksOf(a);
  const y = blocksOf(b);
  let n = 0;
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    if (x[i]!.id !== y[i]!.id) break;
    n += Math.min(x[i]!.words, y[i]!.words);
    if (x[i]!.words !== y[i]!.words) break;
  }
  return n;
}

/**
 * The tokens the server should have served from its cache for each request, from the hash ids alone:
 * the longest prefix it shares with a prompt the server already holds, where the server holds a
 * prompt once its prefill completed (costModelServer: remembered at the end of its prefill step,
 * looked up when a request is admitted to a step), and at least one token is always evaluated.
 */
function expectedCached(lines: readonly Line[], served: readonly { line: number; truth: TruthRequest }[]): Map<number, number> {
  const out = new Map<number, number>();
  for (const r of served) {
    let best = 0;
    for (const earlier of served) {
      if (earlier === r || earlier.truth.firstTokenAt === undefined || earlier.truth.firstTokenAt > r.truth.admittedAt!) continue;
      best = Math.max(best, sharedWords(lines[earlier.line]!, lines[r.line]!));
    }
    out.set(r.line, Math.min(best, r.truth.promptTokens - 1));
  }
  return out;
}

function truthOf(s: CostModelServer, r: RequestRecord): TruthRequest {
  const t = s.truth.requests.get(r.responseId ?? '');
  assert.ok(t, `the server knows request ${r.index} (${r.responseId})`);
  return t;
}

const measured = (run: RunFile): RequestRecord[] => run.requests.filter((r) => !r.warmup).sort((a, b) => a.index - b.index);

async function withServer(fn: (s: CostModelServer) => Promise<void>): Promise<void> {
  const s = await startCostModelServer({ baseMs: 3, kMs: 0.2, prefillMsPerToken: 0.0005, prefixCache: true });
  try {
    await fn(s);
  } finally {
    await s.close();
  }
}

test('a 200-request Mooncake trace over 10 s: sent on schedule, prompts of the stated lengths, cache hits as the hash_ids share', async (t) => {
  const lines = mooncakeFixture();
  const file = join(dir, 'mooncake_trace.jsonl');
  writeFileSync(file, lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
  await withServer(async (s) => {
    const out = join(dir, 'mooncake.json');
    const r = await runCliProcess(['run', '--url', s.url, '--api', 'openai-chat', '--trace', file, '--out', out], { killMs: 90_000 });
    assert.equal(r.code, 0, r.stderr);
    const run = await readRunFile(out);
    assert.equal(run.workload.prefixCache, 'warm');
    assert.deepEqual(run.workload.prompt, { kind: 'trace', path: file, format: 'mooncake' });
    const reqs = measured(run);
    assert.equal(reqs.length, 200);
    assert.equal(run.summary.completed, 200, JSON.stringify(run.summary.errorsByKind));
    assert.deepEqual(reqs.map((x) => x.traceLine), lines.map((_, i) => i), 'request k is line k (the fixture is in time order)');

    // prompts of the stated lengths as the server counts them (whitespace-separated words), replies too
    for (const x of reqs) {
      const line = lines[x.traceLine!]!;
      const t = truthOf(s, x);
      assert.ok(Math.abs(t.promptTokens - line.input_length) <= 0.02 * line.input_length, `line ${x.traceLine}: ${t.promptTokens} prompt tokens for ${line.input_length}`);
      assert.equal(t.promptTokens, line.input_length, `line ${x.traceLine}: the test server counts every word`);
      assert.equal(t.maxTokens, line.output_length, `line ${x.traceLine}: max_tokens is output_length`);
      assert.equal(x.outputTokens, line.output_length);
    }

    // the cache served what the hash ids share, request by request
    const served = reqs.map((x) => ({ line: x.traceLine!, truth: truthOf(s, x) }));
    const warmup = run.requests.find((x) => x.warmup)!;
    assert.equal(truthOf(s, warmup).cachedTokens, 0, 'the warmup shares nothing with the trace');
    const expected = expectedCached(lines, served);
    let sharedTokens = 0;
    for (const { line, truth } of served) {
      assert.equal(truth.cachedTokens, expected.get(line), `line ${line} (${lines[line]!.hash_ids.join(',')}; ${lines[line]!.input_length} tokens)`);
      sharedTokens += truth.cachedTokens;
    }
    const total = served.reduce((a, x) => a + x.truth.promptTokens, 0);
    assert.ok(sharedTokens > 0.3 * total, `the trace shares much: ${sharedTokens} of ${total} prompt tokens served from the cache`);
    assert.ok(served.some((x) => x.truth.cachedTokens % TRACE_BLOCK_TOKENS !== 0 && x.truth.cachedTokens !== x.truth.promptTokens - 1), 'a partial block shared too');

    // on schedule: each request at its timestamp after the first, and p99 lag within 5 ms
    const t0 = reqs[0]!.scheduledAt;
    for (const x of reqs) assert.ok(Math.abs(x.scheduledAt - t0 - (lines[x.traceLine!]!.timestamp - lines[0]!.timestamp)) < 0.01, `line ${x.traceLine} planned at its time`);
    const sched = run.summary.schedule!;
    assert.ok(sched, 'the run has a schedule summary');
    t.diagnostic(`schedule lag p50 ${sched.lagMs.p50!.toFixed(2)} ms, p99 ${sched.lagMs.p99!.toFixed(2)} ms, max ${sched.lagMs.max.toFixed(2)} ms, ${sched.late} late; ${sharedTokens} of ${total} prompt tokens cached`);
    assert.ok(sched.lagMs.p99! <= 5, `p99 lag ${sched.lagMs.p99} ms (p50 ${sched.lagMs.p50}, max ${sched.lagMs.max}, ${sched.late} late)`);
    assert.equal(sched.kept, true);
    // the server's own receipt agrees: it read each body soon after its due time
    const accepted = reqs.map((x) => truthOf(s, x).acceptedAt - x.scheduledAt).sort((a, b) => a - b);
    assert.ok(accepted[Math.floor(accepted.length * 0.99) - 1]! < 25, `the server had 99% of the bodies within 25 ms of their time (${accepted.slice(-3).map((a) => a.toFixed(1)).join(', ')})`);

    // the table says what was replayed, that it is meant to meet the cache, and how the schedule went
    assert.match(r.stdout, /Workload: +trace replay at ×1/);
    assert.match(r.stdout, /Prompts: +the trace .*mooncake_trace\.jsonl \(Mooncake JSONL\), each prompt built to its stated length; sent warm \(no cache-busting nonce\): blocks the trace shares are meant to meet the prefix cache/);
    assert.match(r.stdout, /Sent with: +max tokens per trace line, else 128/);
    assert.match(r.stdout, /Schedule: kept: lag p50 [\d.]+ (ms|µs), p99 [\d.]+ (ms|µs), max [\d.]+ (ms|µs); \d+ of 200 sent more than 5 ms late/);
  });
});

test('an Azure CSV at twice its speed: each request at its TIMESTAMP over 2 after the first, ContextTokens and GeneratedTokens as stated', async () => {
  const file = join(ROOT, 'test/fixtures/traces/azure_code_head.csv');
  const rows = readFileSync(file, 'utf8').trim().split('\n').slice(1).map((l) => l.split(','));
  // "2023-11-16 18:17:03.9799600": the whole seconds as UTC, then the fraction
  const at = (ts: string) => {
    const [whole, fraction] = ts.split('.');
    return Date.parse(`${whole!.replace(' ', 'T')}Z`) + Number(`0.${fraction}`) * 1000;
  };
  await withServer(async (s) => {
    const out = join(dir, 'azure.json');
    const r = await runCliProcess(['run', '--url', s.url, '--api', 'openai-chat', '--trace', file, '--trace-speed', '2', '--out', out]);
    assert.equal(r.code, 0, r.stderr);
    const run = await readRunFile(out);
    assert.equal(run.workload.prompt.kind === 'trace' && run.workload.prompt.format, 'azure');
    const reqs = measured(run);
    assert.equal(reqs.length, rows.length);
    const first = at(rows[0]![0]!);
    const t0 = reqs[0]!.scheduledAt;
    for (const x of reqs) {
      const [ts, context, generated] = rows[x.traceLine!]!;
      assert.ok(Math.abs(x.scheduledAt - t0 - (at(ts!) - first) / 2) < 0.01, `row ${x.traceLine} planned at half its time`);
      const t = truthOf(s, x);
      assert.equal(t.promptTokens, Number(context));
      assert.equal(x.outputTokens, Number(generated));
      assert.equal(t.cachedTokens, 0, 'without hash ids no two prompts share a word at their start');
    }
    assert.match(r.stdout, /Workload: +trace replay at ×2/);
    assert.match(r.stdout, /\(Azure LLM inference CSV\)/);
  });
});

test('a bad trace line is a usage error naming --trace and the line, before anything is sent', async () => {
  const file = join(dir, 'bad.jsonl');
  writeFileSync(file, `${JSON.stringify({ timestamp: 0, input_length: 10 })}\n${JSON.stringify({ timestamp: 5, input_length: 600, hash_ids: [1] })}\n`);
  await withServer(async (s) => {
    const r = await runCliProcess(['run', '--url', s.url, '--api', 'openai-chat', '--trace', file]);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /--trace: .*bad\.jsonl:2: "hash_ids" has 1 block of 512 tokens for an input_length of 600: it needs 2/);
    assert.equal(s.requests, 0);
  });
});

test('shared-prefix groups through the CLI: request k of group k mod 4, the server serves each group\'s prefix from its cache once it holds it', async () => {
  await withServer(async (s) => {
    const out = join(dir, 'groups.json');
    const r = await runCliProcess(['run', '--url', s.url, '--api', 'openai-chat', '--prefix-groups', '4:150', '--prompt-tokens', '300', '--requests', '12', '--warmup', '0', '--max-tokens', '4', '--out', out]);
    assert.equal(r.code, 0, r.stderr);
    const reqs = measured(await readRunFile(out));
    assert.deepEqual(reqs.map((x) => [truthOf(s, x).promptTokens, truthOf(s, x).cachedTokens]), reqs.map((_, k) => [300, k < 4 ? 0 : 150]));
    assert.match(r.stdout, /Prompts: +300-token prompts, request k in group k mod 4, each group's first 150 tokens shared; sent warm/);
  });
});

test('a linear ramp through the CLI: arrivals quicken from the start rate to the end rate, and their schedule is summarised', async () => {
  await withServer(async (s) => {
    const out = join(dir, 'ramp.json');
    const r = await runCliProcess(['run', '--url', s.url, '--api', 'openai-chat', '--ramp', 'linear:4-40', '--requests', '40', '--prompt-tokens', '50', '--max-tokens', '4', '--out', out]);
    assert.equal(r.code, 0, r.stderr);
    const run = await readRunFile(out);
    const reqs = measured(run);
    assert.equal(reqs.length, 40);
    const gaps = reqs.slice(1).map((x, i) => x.scheduledAt - reqs[i]!.scheduledAt);
    const mean = (xs: number[]) => xs.reduce((a, x) => a + x, 0) / xs.length;
    assert.ok(mean(gaps.slice(0, 10)) > 3 * mean(gaps.slice(-10)), `first gaps ${mean(gaps.slice(0, 10)).toFixed(0)} ms, last ${mean(gaps.slice(-10)).toFixed(0)} ms`);
    assert.equal(run.summary.schedule?.lagMs.count, 40);
    assert.match(r.stdout, /Workload: +open loop, ramp linear 4→40 req\/s, burstiness 1/);
    assert.match(r.stdout, /Schedule: (kept|NOT kept): /);
  });
});
