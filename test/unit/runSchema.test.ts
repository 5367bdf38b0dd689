// The run file's schema (src/engine/core/runSchema.ts): what it accepts, how a problem is named (with
// its path) by the engine and by the report panel, and its fast check agreeing with valibot's own.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as v from 'valibot';
import { compiledCheck, RunFileSchema, runFileProblem } from '../../src/engine/core/runSchema';
import { parseRunFile, RunFileError, serializeRunFile } from '../../src/engine/files/runFile';
import type { RunFile } from '../../src/engine/core/types';
import { asRun } from '../../webview/report/validate';

/** The panel's sentence for a run it cannot draw (what asRun gives it), or undefined. */
const runProblem = (value: unknown): string | undefined => {
  const checked = asRun(value);
  return 'error' in checked ? checked.error : undefined;
};
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

type Container = Record<string | number, unknown>;
const DELETE = Symbol('delete');

/** Sets (or deletes) the value at a path in a JSON tree. */
function damageAt(root: unknown, path: readonly (string | number)[], value: unknown): void {
  let parent = root as Container;
  for (const k of path.slice(0, -1)) parent = parent[k] as Container;
  const last = path[path.length - 1]!;
  if (value === DELETE) delete parent[last];
  else parent[last] = value;
}

test('a problem names the path of the failing field, in the engine and in the panel', () => {
  const cases: [(string | number)[], unknown, RegExp, RegExp][] = [
    [['requests', 1, 'chunkTimesMs', 2], 'x', /requests\[1\] lacks a valid "chunkTimesMs" \(requests\[1\]\.chunkTimesMs: expected a list of numbers; item 2 is "x"\)/, /requests\[1\]\.chunkTimesMs is not valid/],
    [['requests', 0, 'sentAt'], DELETE, /requests\[0\]\.sentAt is missing/, /incomplete: requests\[0\]\.sentAt is missing/],
    [['workload', 'mode', 'kind'], 'bursty', /workload\.mode/, /workload\.mode/],
    [['summary', 'stalls', 'worst'], [{ requestIndex: 0, startMs: 1, startAt: 1, gapMs: null, medianItlMs: 1 }], /summary\.stalls\.worst\[0\] lacks a valid "gapMs" \(summary\.stalls\.worst\[0\]\.gapMs: expected number, got null\)/, /summary\.stalls\.worst\[0\]\.gapMs/],
    [['summary', 'ttftMs', 'p99'], '1', /summary lacks a valid "ttftMs" \(summary\.ttftMs: expected statistics/, /summary\.ttftMs is not valid/],
    [['endpoint', 'api'], 'grpc', /endpoint lacks a valid "api" \(endpoint\.api: expected .*"openai-chat".*, got "grpc"\)/, /endpoint\.api/],
    [['requests', 0, 'error'], { kind: 'gremlins', message: 'x' }, /requests\[0\]\.error/, /requests\[0\]\.error\.kind/],
    [['id'], '', /"id" is not valid/, /"id"|\bid\b/],
    [['tool'], DELETE, /missing "tool"/, /it has no "tool"/],
  ];
  for (const [path, value, engine, panel] of cases) {
    const run = json(fixtureRun({ seed: 4, requests: 3 }));
    damageAt(run, path, value);
    assert.throws(() => parseRunFile(JSON.stringify(run), 'x.json'), (e: unknown) => e instanceof RunFileError && engine.test((e as Error).message) && (e as Error).message.startsWith('x.json: not a valid run file: '), `${engine.source}`);
    assert.match(runProblem(run) ?? '', panel);
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
  const damages: unknown[] = [DELETE, undefined, null, 'text', 7, NaN, true, [], {}, ''];
  let tried = 0;
  let refused = 0;
  for (const run of runs) {
    const text = JSON.stringify(run);
    for (const path of paths(JSON.parse(text))) {
      for (const [d, damage] of damages.entries()) {
        const value: unknown = JSON.parse(text);
        damageAt(value, path, damage);
        const fast = check(value);
        assert.equal(fast, v.is(RunFileSchema, value), `${path.join('.')}, damage ${d}`);
        tried++;
        if (!fast) refused++;
      }
    }
  }
  assert.ok(tried > 5000 && refused > tried / 3, `${tried} damaged runs, ${refused} refused`);
});
