// The run file's schema (src/engine/runSchema.ts): what it accepts, how a problem is named (with
// its path) by the engine and by the report panel, and its fast check agreeing with valibot's own.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as v from 'valibot';
import { compiledCheck, RunFileSchema, runFileProblem } from '../../src/engine/runSchema';
import { parseRunFile, RunFileError, serializeRunFile } from '../../src/engine/runFile';
import type { RunFile } from '../../src/engine/types';
import { runProblem } from '../../webview/report/validate';
import { fixtureRun, fixtureSweepRun } from '../support/fixtureRuns';

function dialRun(): RunFile {
  const base = fixtureRun({ seed: 5, requests: 4, warmup: 0, chunksPerRequest: 4 });
  const { summary } = base;
  const config = (batchSize: number) => ({ batchSize, label: `batch ${batchSize}`, decode: { summary, requestIndexes: [0, 1] }, long: { summary, requestIndexes: [2, 3] } });
  return {
    ...base,
    prefillDial: { configs: [config(64), config(512)], decodeStreams: 2, shortPromptTokens: 32, shortMaxTokens: 16, longPromptTokens: 2000, longMaxTokens: 4, longRate: 0.5, durationS: 5 },
  };
}

const json = (run: RunFile): unknown => JSON.parse(serializeRunFile(run));

test('the schema accepts every kind of run: plain, sweep with its analysis, prefill dial, unknown extra keys', () => {
  const sweep = fixtureSweepRun();
  const analysed: RunFile = {
    ...sweep,
    sweep: {
      ...sweep.sweep!,
      fitX: 'meanBatch',
      residuals: [{ label: 'c=1', batch: 1, tpotMs: 20, predictedMs: 21, residualMs: -1 }],
      sloBatch: 6.5,
      knee: { index: 2, label: 'c=4', gainPerDoubling: 0.1, threshold: 0.15 },
      operatingPoint: { index: 1, label: 'c=2', goodput: 3, outputTokensPerSecond: 100 },
      maxThroughputPoint: { index: 3, label: 'c=8', outputTokensPerSecond: 300 },
      prefillFit: { aMs: 50, bMsPerToken: 0.2, prefillTokensPerSecond: 5000, r2: 0.99, residualsMs: [1, -1] },
      verdicts: [{ kind: 'no-slo', message: 'no SLO given' }],
      slo: { tpotMs: 50 },
      stoppedEarly: { afterLabel: 'c=8', reason: 'saturated' },
      someFutureField: { x: 1 },
    },
  };
  for (const run of [fixtureRun(), analysed, dialRun(), { ...fixtureRun({ seed: 2 }), addedLater: [1, 'a'] }]) {
    assert.equal(runFileProblem(run), undefined);
    assert.equal(runFileProblem(json(run)), undefined);
    assert.equal(v.is(RunFileSchema, json(run)), true);
  }
  const extra = { ...fixtureRun({ requests: 2 }), note: 'kept' };
  assert.equal(parseRunFile(serializeRunFile(extra as RunFile)).note, 'kept', 'unknown keys are kept, not stripped');
});

test('a problem names the path of the failing field, in the engine and in the panel', () => {
  const cases: [(r: Record<string, any>) => void, RegExp, RegExp][] = [
    [(r) => { r.requests[1].chunkTimesMs[2] = 'x'; }, /requests\[1\] lacks a valid "chunkTimesMs" \(requests\[1\]\.chunkTimesMs: expected a list of numbers; item 2 is "x"\)/, /requests\[1\]\.chunkTimesMs is not valid/],
    [(r) => { delete r.requests[0].sentAt; }, /requests\[0\]\.sentAt is missing/, /incomplete: requests\[0\]\.sentAt is missing/],
    [(r) => { r.workload.mode.kind = 'bursty'; }, /workload\.mode/, /workload\.mode/],
    [(r) => { r.summary.stalls.worst = [{ requestIndex: 0, startMs: 1, startAt: 1, gapMs: null, medianItlMs: 1 }]; }, /summary\.stalls\.worst\[0\] lacks a valid "gapMs" \(summary\.stalls\.worst\[0\]\.gapMs: expected number, got null\)/, /summary\.stalls\.worst\[0\]\.gapMs/],
    [(r) => { r.summary.ttftMs.p99 = '1'; }, /summary lacks a valid "ttftMs" \(summary\.ttftMs: expected statistics/, /summary\.ttftMs is not valid/],
    [(r) => { r.endpoint.api = 'grpc'; }, /endpoint lacks a valid "api" \(endpoint\.api: expected .*"openai-chat".*, got "grpc"\)/, /endpoint\.api/],
    [(r) => { r.requests[0].error = { kind: 'gremlins', message: 'x' }; }, /requests\[0\]\.error/, /requests\[0\]\.error\.kind/],
    [(r) => { r.id = ''; }, /"id" is not valid/, /"id"|\bid\b/],
    [(r) => { delete r.tool; }, /missing "tool"/, /it has no "tool"/],
  ];
  for (const [damage, engine, panel] of cases) {
    const value = json(fixtureRun({ seed: 4, requests: 3 })) as Record<string, any>;
    damage(value);
    assert.throws(() => parseRunFile(JSON.stringify(value), 'x.json'), (e: unknown) => e instanceof RunFileError && engine.test((e as Error).message) && (e as Error).message.startsWith('x.json: not a valid run file: '), `${engine.source}`);
    assert.match(runProblem(value) ?? '', panel);
  }
});

/** The path of every value in a JSON tree (arrays: their first two items stand for the rest). */
function paths(node: unknown, at: (string | number)[] = []): (string | number)[][] {
  const out: (string | number)[][] = [];
  const keys: (string | number)[] = Array.isArray(node) ? [0, 1].filter((i) => i < node.length) : node && typeof node === 'object' ? Object.keys(node) : [];
  for (const k of keys) {
    const p = [...at, k];
    out.push(p, ...paths((node as Record<string | number, unknown>)[k], p));
  }
  return out;
}

test('the fast check says yes exactly when valibot does, under every damage at every place', () => {
  const check = compiledCheck(RunFileSchema);
  const runs = [fixtureRun({ seed: 9, requests: 2, warmup: 1, chunksPerRequest: 3, errorRate: 0.5 }), fixtureSweepRun(), dialRun()];
  const damages: ((parent: any, key: string | number) => void)[] = [
    (p, k) => { delete p[k]; },
    (p, k) => { p[k] = undefined; },
    (p, k) => { p[k] = null; },
    (p, k) => { p[k] = 'text'; },
    (p, k) => { p[k] = 7; },
    (p, k) => { p[k] = NaN; },
    (p, k) => { p[k] = true; },
    (p, k) => { p[k] = []; },
    (p, k) => { p[k] = {}; },
    (p, k) => { p[k] = ''; },
  ];
  let tried = 0;
  let refused = 0;
  for (const run of runs) {
    const text = JSON.stringify(run);
    for (const path of paths(JSON.parse(text))) {
      for (const [d, damage] of damages.entries()) {
        const value = JSON.parse(text);
        let parent = value;
        for (const k of path.slice(0, -1)) parent = parent[k];
        damage(parent, path[path.length - 1]!);
        const fast = check(value);
        assert.equal(fast, v.is(RunFileSchema, value), `${path.join('.')}, damage ${d}`);
        tried++;
        if (!fast) refused++;
      }
    }
  }
  assert.ok(tried > 5000 && refused > tried / 3, `${tried} damaged runs, ${refused} refused`);
});
