// The local server's context per slot, sized to the job (src/jobs/slotContext.ts), the synthetic
// model's token count it uses (src/localServer/tokenCount.ts), and the local-server flags of run,
// sweep and cache-check.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseCommandLine } from '../../src/cli/parse';
import type { Prompt, WorkloadSpec } from '../../src/engine/core/types';
import { defaultWorkload } from '../../src/engine/core/workload';
import { buildCacheCheckJob, buildRunJob, buildSweepJob } from '../../src/jobs/build';
import { UsageError } from '../../src/jobs/errors';
import type { Target } from '../../src/jobs/job';
import type { CommandName } from '../../src/jobs/options';
import { CLI_SLOT_NAMES, ESTIMATE_MARGIN, promptNeeds, SETTING_SLOT_NAMES, sizeSlots, SLOT_SLACK } from '../../src/jobs/slotContext';
import type { PromptNeed, SlotModel } from '../../src/jobs/slotContext';
import { DEFAULT_SLOT_CONTEXT, SYNTHETIC_SLOT_CONTEXT_LIMIT } from '../../src/localServer/defaults';
import { syntheticChatCounter } from '../../src/localServer/tokenCount';

const TINY: SlotModel = { name: 'synthetic-tiny', limit: SYNTHETIC_SLOT_CONTEXT_LIMIT, synthetic: true };
const REAL: SlotModel = { name: 'llama.gguf', limit: 8192, synthetic: false };
const counted = (tokens: number, maxTokens = 128, label = 'review.prompt.md'): PromptNeed => ({ label, tokens, counted: true, maxTokens });
const estimated = (tokens: number, maxTokens = 128, label = 'review.prompt.md'): PromptNeed => ({ label, tokens, counted: false, maxTokens });
const size = (needs: PromptNeed[], model: SlotModel = TINY, more: { parallel?: number; ctxSize?: number } = {}) =>
  sizeSlots(needs, { parallel: more.parallel ?? 1, ...(more.ctxSize !== undefined ? { ctxSize: more.ctxSize } : {}), model, names: CLI_SLOT_NAMES });

test('a slot holds the longest prompt and its max tokens, rounded up to 256, never below 2048', () => {
  assert.equal(size([counted(100, 16)]), undefined, "a short prompt keeps the server's default, 2048");
  assert.equal(size([counted(1900, 64)]), undefined, '1900 + 64 + 64 = 2028: the default holds it');
  // 3000 + 128 + 64 = 3192 → 3328
  assert.equal(size([counted(3000)]), 3328);
  assert.equal(size([counted(3000, 64), counted(1200, 4000)]), 5376, 'the largest need, whichever prompt it is: 1200 + 4000 + 64 → 5376');
  assert.equal(size([]), undefined, 'nothing to size');
  // an estimate gets its margin: 3000 × 1.25 + 128 + 64 = 3942 → 4096
  assert.equal(size([estimated(3000)]), Math.ceil((3000 * ESTIMATE_MARGIN + 128 + SLOT_SLACK) / 256) * 256);
  assert.equal(size([estimated(3000)]), 4096);
});

test("up to the model's limit: an estimate's margin is cut there, a prompt past it is a usage error naming it", () => {
  // needs 7600 + 128 + 64 = 7792 (fits 8192); with the margin it would want 9792: given the limit
  assert.equal(size([estimated(7600)], REAL), 8192);
  assert.throws(
    () => size([estimated(8100, 256, 'docs/review.prompt.md')], REAL),
    (e: unknown) => {
      assert.ok(e instanceof UsageError);
      assert.match(e.message, /^docs\/review\.prompt\.md: the prompt is about 8100 tokens \(estimated\) and is sent with up to 256 max tokens: a slot of the local server would need 8420 tokens, more than llama\.gguf takes \(its trained context: 8192 tokens\)/);
      assert.match(e.message, /shorten the prompt, lower --max-tokens, or use a model with a longer context \(--preset or --model-file\)$/);
      return true;
    },
  );
  assert.throws(
    () => size([counted(200_000, 128, 'a synthetic 200000-token prompt')]),
    /UsageError: a synthetic 200000-token prompt: the prompt is 200000 tokens \(as synthetic-tiny counts them\) .* more than the local server gives a slot of a synthetic model \(131072 tokens\); shorten the prompt or lower --max-tokens$/,
  );
  // the extension names its settings
  assert.throws(
    () => sizeSlots([estimated(8100)], { parallel: 1, model: REAL, names: SETTING_SLOT_NAMES }),
    /lower llmProfiler\.workload\.maxTokens, or use a model with a longer context \(llmProfiler\.localServer\.preset or llmProfiler\.localServer\.modelPath\)$/,
  );
});

test('an explicit --ctx-size wins, but one too small for the longest prompt is refused with the size that would do', () => {
  assert.equal(size([counted(3000)], TINY, { parallel: 2, ctxSize: 8192 }), undefined, '4096 a slot holds 3192: kept as given');
  assert.throws(
    () => size([counted(3000)], TINY, { parallel: 4, ctxSize: 8192 }),
    (e: unknown) => {
      assert.ok(e instanceof UsageError);
      assert.equal(e.flag, '--ctx-size');
      assert.equal(
        e.message,
        '--ctx-size 8192 gives each of the 4 slots (--parallel 4) 2048 tokens: too few for review.prompt.md: the prompt is 3000 tokens (as synthetic-tiny counts them) ' +
          'and is sent with up to 128 max tokens (3192 a slot); give --ctx-size 13312 or more, or leave it out (each slot is then sized to the longest prompt)',
      );
      return true;
    },
  );
  assert.throws(() => size([counted(3000)], TINY, { parallel: 1, ctxSize: 2048 }), /UsageError: --ctx-size 2048 gives the one slot \(--parallel 1\) 2048 tokens: too few/);
});

const prompt = (content: string, extra: Partial<Prompt> = {}): Prompt => ({ messages: [{ role: 'user', content }], source: 'p.prompt.yml', estimatedTokens: 10, ...extra });

test("each prompt is sent with its own max tokens unless the user set them; synthetic prompts with the workload's", () => {
  const w: WorkloadSpec = defaultWorkload({ maxTokens: 64 });
  const prompts = [prompt('a'), prompt('b', { maxTokens: 900 }), prompt('c', { name: 'third' })];
  const needs = promptNeeds(w, prompts, []);
  assert.deepEqual(needs.map((n) => n.maxTokens), [64, 900, 64]);
  assert.deepEqual(needs.map((n) => n.label), ['p.prompt.yml (prompt 1 of 3)', 'p.prompt.yml (prompt 2 of 3)', 'p.prompt.yml ("third")']);
  assert.ok(needs.every((n) => !n.counted && n.tokens === 10), 'no counter: the estimate');
  const explicit = promptNeeds({ ...w, explicit: ['maxTokens'] }, prompts, []);
  assert.deepEqual(explicit.map((n) => n.maxTokens), [64, 64, 64], '--max-tokens beats the file');
  const count = syntheticChatCounter(8192);
  const synthetic = promptNeeds(defaultWorkload({ maxTokens: 32, prompt: { kind: 'synthetic', tokens: 500, sharedPrefix: false } }), undefined, [500, 3000], count);
  assert.deepEqual(synthetic.map((n) => [n.label, n.maxTokens, n.counted]), [['a synthetic 500-token prompt', 32, true], ['a synthetic 3000-token prompt', 32, true]]);
  assert.ok(synthetic[1]!.tokens >= 3000, 'a synthetic prompt is at least a token a word');
});

test("the synthetic model's count: a space starts a vocabulary word, other printable ASCII is a token each, the rest its UTF-8 bytes", () => {
  const count = syntheticChatCounter(8192);
  const n = (content: string) => count([{ role: 'user', content }]);
  const base = n('');
  assert.equal(n(' the'), base + 1, 'a word of the vocabulary after a space: one token');
  assert.equal(n(' the the the'), base + 3);
  assert.equal(n('the'), base + 3, 'a word not after a space: its characters (llama.cpp merges only pieces that start at a space)');
  assert.equal(n(' {}'), base + 3, 'a space, then each printable character');
  assert.equal(n(' 日'), base + 1 + 3, 'a CJK character: three byte tokens');
  assert.equal(n('\n'), base + 1, 'a newline: one byte token');
  const sys = { role: 'system', content: 'Be brief.' };
  const user = { role: 'user', content: 'Review this.' };
  assert.equal(count([sys, user]), count([sys]) + count([user]) - count([]), 'BOS and the assistant header once per prompt, the markers per message');
});

/** What run, sweep and cache-check build for the local server from these flags. */
async function localServerOf(command: CommandName, argv: string[]): Promise<Extract<Target, { kind: 'local' }>['server']> {
  const v = parseCommandLine(command, argv);
  const built = command === 'run' ? await buildRunJob(v) : command === 'sweep' ? await buildSweepJob(v) : await buildCacheCheckJob(v);
  assert.equal(built.job.target.kind, 'local');
  return (built.job.target as Extract<Target, { kind: 'local' }>).server;
}

test('run, sweep and cache-check take --ctx-size, --parallel and --batch-size without --url, and refuse them with it', async () => {
  for (const command of ['run', 'sweep', 'cache-check'] as const) {
    const s = await localServerOf(command, ['--ctx-size', '16384', '--parallel', '2', '--batch-size', '256', '--max-tokens', '8']);
    assert.deepEqual([s.ctxSize, s.parallel, s.batchSize, s.slotContext], [16384, 2, 256, undefined], `${command}: the flags reach the server it starts`);
    const sized = await localServerOf(command, ['--max-tokens', '8']);
    assert.equal(sized.ctxSize, undefined);
    assert.equal(sized.slotContext, undefined, `${command}: a short synthetic prompt keeps the server's default slot`);
    for (const flag of [['--ctx-size', '16384'], ['--parallel', '2'], ['--batch-size', '256']]) {
      assert.throws(
        () => parseCommandLine(command, ['--url', 'http://127.0.0.1:1', ...flag]),
        (e: unknown) => e instanceof UsageError && e.flag === flag[0] && e.message === `${flag[0]} sets up the bundled local server: it cannot be used with --url`,
        `${command} ${flag[0]} with --url`,
      );
    }
  }
});

test('a prompt file sizes the slots by the model\'s own count; a --ctx-size too small for it is refused before anything starts', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'slots-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'review.prompt.md');
  // Markdown and code count about twice the estimate on the synthetic vocabulary
  const body = Array.from({ length: 60 }, (_, i) => `- Check \`handler${i}()\` in src/server.ts: configuration, retries; timeouts.`).join('\n');
  writeFileSync(file, `---\ndescription: review\n---\n${body}\n`);
  const count = syntheticChatCounter(8192);
  const s = await localServerOf('run', ['--prompt-file', file, '--max-tokens', '64']);
  const { loadPrompts } = await import('../../src/jobs/jobPrompts');
  const p = (await loadPrompts({ kind: 'file', path: file })).prompts![0]!;
  const tokens = count(p.messages);
  assert.ok(tokens > 1.5 * p.estimatedTokens!, `the model counts ${tokens}, the estimate ${p.estimatedTokens}`);
  assert.ok(tokens + 64 + SLOT_SLACK > DEFAULT_SLOT_CONTEXT, `${tokens} tokens need more than the default`);
  assert.equal(s.slotContext, Math.ceil((tokens + 64 + SLOT_SLACK) / 256) * 256);
  await assert.rejects(
    localServerOf('sweep', ['--prompt-file', file, '--max-tokens', '64', '--concurrency', '1,2', '--ctx-size', '2048']),
    (e: unknown) => e instanceof UsageError && e.flag === '--ctx-size' && /gives each of the 2 slots \(--parallel 2\) 1024 tokens: too few for .*review\.prompt\.md: the prompt is \d+ tokens \(as synthetic-tiny counts them\)/.test(e.message),
  );
});

test("a trace's longest line and a chat's last turn size the slots (their prompts are made as the run goes)", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'slots-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const trace = join(dir, 't.jsonl');
  writeFileSync(trace, [
    { timestamp: 0, input_length: 300, output_length: 16 },
    { timestamp: 100, input_length: 5000, output_length: 64 },
    { timestamp: 200, input_length: 800, output_length: 900 },
  ].map((l) => JSON.stringify(l)).join('\n'));
  const s = await localServerOf('run', ['--trace', trace]);
  assert.ok(s.slotContext !== undefined && s.slotContext >= 5000 + 64, `the 5,000-token line and its 64 tokens fit a slot: ${s.slotContext}`);
  const chat = await localServerOf('run', ['--chat', 'turns=20,user=200,reply=100']);
  assert.ok(chat.slotContext !== undefined && chat.slotContext >= 20 * 200 + 19 * 100 + 100, `the last turn's history fits a slot: ${chat.slotContext}`);
});
