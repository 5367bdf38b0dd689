// The extension's conversations, trace replays and ramps (the sidebar's form, the pickers: src/jobs/presets.ts
// trafficValues) against the CLI's Traffic flags: the values the extension passes are ones the CLI
// accepts as flags (no conflict, no missing partner), and they build the very workload the user's own
// command line builds. Real files for the dataset and the trace.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { buildRunJob } from '../../src/jobs/build';
import { defaultOf, option } from '../../src/jobs/options';
import { chatInput, chatSpec, presetWorkload, rampInput, TRAFFIC_DEFAULTS, trafficValues, trafficWithPromptFile, type TrafficInput, type WorkloadDefaults } from '../../src/jobs/presets';
import { OptionValues, type OptionValue } from '../../src/jobs/values';
import { parseCommandLine } from '../../src/cli/parse';

const dir = mkdtempSync(join(tmpdir(), 'llmp-traffic-input-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** The settings' workload block as the extension reads it (its defaults). */
const SETTINGS: WorkloadDefaults = { concurrency: 4, requests: 20, warmup: 1, maxTokens: 128, promptTokens: 256, timeoutMs: 60_000 };
const target = { kind: 'endpoint', url: 'http://127.0.0.1:9', api: 'openai-chat' } as const;

/** Option values written as the flags a user types (`--chat turns=…`, `--multi-turn`). */
function argvOf(values: Readonly<Record<string, OptionValue | undefined>>): string[] {
  const out: string[] = [];
  for (const [key, v] of Object.entries(values)) {
    if (v === undefined) continue;
    const o = option(key);
    if (o.kind === 'boolean') { if (v === true) out.push(o.flag); continue; }
    out.push(o.flag, Array.isArray(v) ? v.join(',') : String(v));
  }
  return out;
}

/** The extension's values for this traffic (the settings' cold prefix cache, as by default) and, written as flags, what the CLI builds of them. */
async function both(t: TrafficInput, input: { concurrency?: number; requests?: number } = {}) {
  const values = trafficValues(t, presetWorkload('traffic', SETTINGS, { ...input, traffic: t }), 'cold');
  const ext = await buildRunJob(OptionValues.of(values, 'the workload:'), { target });
  const asFlags = await buildRunJob(parseCommandLine('run', argvOf(values)), { target });
  return { values, ext: ext.job.workload, asFlags: asFlags.job.workload };
}

async function cli(argv: readonly string[]) {
  return (await buildRunJob(parseCommandLine('run', argv), { target })).job.workload;
}

test('the traffic inputs start from the CLI\'s own defaults', async () => {
  // what the CLI fills in for a --chat that gives only its turns
  const w = await cli(['--url', 'http://127.0.0.1:1', '--chat', `turns=${TRAFFIC_DEFAULTS.chat.turns}`]);
  assert.deepEqual(w.prompt, { kind: 'chat', turns: TRAFFIC_DEFAULTS.chat.turns, userTokens: TRAFFIC_DEFAULTS.chat.userTokens, replyTokens: TRAFFIC_DEFAULTS.chat.replyTokens });
  assert.equal(w.sessions, TRAFFIC_DEFAULTS.chat.sessions);
  assert.equal(TRAFFIC_DEFAULTS.traceSpeed, defaultOf<number>('traceSpeed', 'run'));
  assert.equal(option('chat').check?.(chatSpec(TRAFFIC_DEFAULTS.chat)), undefined);
  assert.equal(option('ramp').check?.(`${TRAFFIC_DEFAULTS.ramp.shape}:${TRAFFIC_DEFAULTS.ramp.from}-${TRAFFIC_DEFAULTS.ramp.to}`), undefined);
});

test('a typed --chat value and ramp rates, as the CLI reads them', () => {
  assert.deepEqual(chatInput('turns=3'), { turns: 3, userTokens: 64, replyTokens: 64 });
  assert.deepEqual(chatInput(' reply=32 , user=128,turns=2'), { turns: 2, userTokens: 128, replyTokens: 32 });
  assert.equal(chatInput('turns=3,words=4'), undefined);
  assert.equal(chatInput('turns=-1'), undefined);
  assert.deepEqual(rampInput('1-8'), { from: 1, to: 8 });
  assert.deepEqual(rampInput(' 0.5 - 20 '), { from: 0.5, to: 20 });
  assert.equal(rampInput('1..8'), undefined);
  assert.equal(trafficWithPromptFile({ kind: 'ramp', shape: 'linear', from: 1, to: 2 }), undefined);
  assert.match(trafficWithPromptFile({ kind: 'trace', path: '/t.jsonl', speed: 1 })!, /trace/);
  assert.match(trafficWithPromptFile({ kind: 'chat', ...TRAFFIC_DEFAULTS.chat })!, /conversation/);
});

test('the values the extension passes build the same workload as the CLI\'s flags: synthetic conversations', async () => {
  const chat: TrafficInput = { kind: 'chat', turns: 3, userTokens: 48, replyTokens: 16, sessions: 5, thinkTimeMs: 250 };
  const { values, ext, asFlags } = await both(chat, { concurrency: 2 });
  assert.equal(values.prefixCache, undefined, 'sent warm: no --prefix-cache, whatever the setting (cold would be refused)');
  assert.equal(values.requests, undefined, '--chat conflicts with --requests');
  assert.deepEqual(ext, asFlags);
  assert.deepEqual(ext, await cli(['--chat', 'turns=3,user=48,reply=16', '--sessions', '5', '--think-time', '250', '--concurrency', '2', '--warmup', '1', '--timeout', '60']));
  assert.deepEqual(ext.prompt, { kind: 'chat', turns: 3, userTokens: 48, replyTokens: 16 });
  assert.deepEqual([ext.sessions, ext.thinkTimeMs, ext.mode, ext.maxTokens, ext.prefixCache], [5, 250, { kind: 'closed', concurrency: 2 }, 16, 'warm']);
  // no think time: no --think-time, as the CLI user leaves it out
  const none = await both({ ...chat, thinkTimeMs: 0 });
  assert.equal(none.ext.thinkTimeMs, undefined);
  assert.deepEqual(none.ext, await cli(['--chat', 'turns=3,user=48,reply=16', '--sessions', '5', '--concurrency', '4', '--warmup', '1', '--timeout', '60']));
});

test('the values the extension passes build the same workload as the CLI\'s flags: a dataset\'s conversations', async () => {
  const file = join(dir, 'sharegpt.jsonl');
  const convo = (n: number) => JSON.stringify({ conversations: Array.from({ length: 2 * n }, (_, i) => ({ from: i % 2 ? 'gpt' : 'human', value: `turn ${i} of conversation ${n}` })) });
  writeFileSync(file, [convo(2), convo(3), convo(2)].join('\n'));
  const all = await both({ kind: 'dataset', path: file, thinkTimeMs: 0 }, { concurrency: 2 });
  assert.equal(all.values.sessions, undefined, 'every conversation: no --sessions');
  assert.deepEqual(all.ext, all.asFlags);
  assert.equal(all.values.maxTokens, undefined, 'no --max-tokens: the turns\' own reply lengths');
  assert.deepEqual(all.ext, await cli(['--dataset', file, '--multi-turn', '--concurrency', '2', '--warmup', '1', '--timeout', '60']));
  assert.deepEqual(all.ext.prompt, { kind: 'dataset', path: file, multiTurn: true });
  const some = await both({ kind: 'dataset', path: file, sessions: 2, thinkTimeMs: 100 });
  assert.deepEqual(some.ext, await cli(['--dataset', file, '--multi-turn', '--sessions', '2', '--think-time', '100', '--concurrency', '4', '--warmup', '1', '--timeout', '60']));
});

test('the values the extension passes build the same workload as the CLI\'s flags: a trace replay', async () => {
  const file = join(dir, 'mooncake.jsonl');
  writeFileSync(file, [0, 40, 90].map((t, i) => JSON.stringify({ timestamp: t, input_length: 64 + i, output_length: 8, hash_ids: [i] })).join('\n'));
  const { values, ext, asFlags } = await both({ kind: 'trace', path: file, speed: 2 });
  for (const k of ['concurrency', 'rate', 'requests', 'promptTokens', 'prefixCache']) assert.equal(values[k], undefined, `--trace gives the ${k} itself`);
  assert.deepEqual(ext, asFlags);
  assert.deepEqual(ext, await cli(['--trace', file, '--trace-speed', '2', '--warmup', '1', '--timeout', '60']));
  assert.deepEqual(ext.mode, { kind: 'trace', speed: 2 });
  assert.deepEqual(ext.prompt, { kind: 'trace', path: file, format: 'mooncake' });
});

test('the values the extension passes build the same workload as the CLI\'s flags: a ramp', async () => {
  const { values, ext, asFlags } = await both({ kind: 'ramp', shape: 'exponential', from: 0.5, to: 16 }, { requests: 40 });
  assert.equal(values.concurrency, undefined, '--ramp conflicts with --concurrency');
  assert.deepEqual(ext, asFlags);
  assert.deepEqual(ext, await cli(['--ramp', 'exponential:0.5-16', '--requests', '40', '--max-tokens', '128', '--prompt-tokens', '256', '--prefix-cache', 'cold', '--warmup', '1', '--timeout', '60']));
  assert.deepEqual(ext.mode, { kind: 'open', rate: 16, burstiness: 1, ramp: { kind: 'exponential', start: 0.5 } });
});
