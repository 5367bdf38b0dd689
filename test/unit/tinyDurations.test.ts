// Figures of streams whose chunks arrive in bursts (several in one network read, so most gaps are
// about zero) read as what they are, the same in the CLI and the report: "< 0.01 ms", not "0.00";
// a stall against the floor it crossed, not "86,545× median ITL". And a sweep's workload in words.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fixed, formatMs } from '../../src/present/units';
import { formatRunTable, formatStalls, itlBurstNote, medianItlText, stallSizeText } from '../../src/present/runText';
import { formatSweep, sweepWorkload } from '../../src/present/sweepText';
import { summarize } from '../../src/engine/analysis/metrics';
import { defaultWorkload } from '../../src/engine/core/workload';
import type { RequestRecord, RunFile } from '../../src/engine/core/types';
import { fixtureSweepRun } from '../support/fixtureRuns';

test('a duration above zero but under 0.01 ms says so, in the panel and in the CLI table', () => {
  assert.equal(formatMs(0.004), '< 0.01 ms');
  assert.equal(formatMs(0.0001), '< 0.01 ms');
  assert.equal(formatMs(0), '0 ms', 'nothing at all is still zero');
  assert.equal(formatMs(0.01), '0.01 ms');
  assert.equal(formatMs(0.0123), '0.01 ms');
  assert.equal(fixed(0.003), '<0.01');
  assert.equal(fixed(0.0049), '<0.01');
  assert.equal(fixed(0.005), '0.01');
  assert.equal(fixed(0), '0.00');
  assert.equal(fixed(0.04, 1), '<0.1');
  assert.equal(fixed(12.345), '12.35');
});

test("a stall is measured against the bar it crossed: the stream's median ITL, or the floor when that was higher", () => {
  const rule = { factor: 3, floorMs: 50 };
  assert.equal(stallSizeText({ gapMs: 250, medianItlMs: 20 }, rule), '12.5× median ITL');
  assert.equal(stallSizeText({ gapMs: 120, medianItlMs: 5 }, rule), '2.40× the 50 ms stall floor');
  // a median of ~0 (bursts) once gave "86,545× median ITL"
  assert.equal(stallSizeText({ gapMs: 86.545, medianItlMs: 0.001 }, rule), '1.73× the 50 ms stall floor; median ITL under 0.01 ms (chunks arrive in bursts)');
  assert.equal(stallSizeText({ gapMs: 86.545, medianItlMs: 0 }, rule), '1.73× the 50 ms stall floor; median ITL under 0.01 ms (chunks arrive in bursts)');
  assert.equal(medianItlText(4.2), '4.2 ms');
  assert.equal(medianItlText(0.002), 'under 0.01 ms (chunks arrive in bursts)');
});

function burstRun(): RunFile {
  // each request: chunks in pairs stamped together (one read), 25 ms between reads, one 400 ms pause
  const chunks = (pause: number) => {
    const out: number[] = [];
    let t = 100;
    for (let i = 0; i < 20; i++) {
      out.push(t, t);
      t += i === pause ? 400 : 25;
    }
    return out;
  };
  const requests: RequestRecord[] = [0, 1, 2].map((i) => {
    const c = chunks(8 + i);
    return { index: i, warmup: false, scheduledAt: 0, sentAt: 0, ttftMs: c[0], e2eMs: c[c.length - 1], outputTokens: c.length, tokenSource: 'chunks', chunkTimesMs: c };
  });
  const workload = defaultWorkload({ percentiles: [50, 90, 99] });
  return {
    format: 'llm-profiler.run', version: 1, id: 'bursts', startedAt: '2026-01-01T00:00:00Z', tool: { name: 'llm-profiler', version: '0.0.0' },
    endpoint: { url: 'http://127.0.0.1:8000', api: 'openai-chat', model: 'm' }, workload, requests, summary: summarize(requests, workload, { durationS: 1 }),
  };
}

test('the CLI says why ITL p50 is about zero, and sizes the worst stall against the floor', () => {
  const run = burstRun();
  const s = run.summary;
  assert.ok(s.itlMs.p50! < 0.01, `bursts make the median ITL about zero (${s.itlMs.p50})`);
  assert.ok(s.stalls.count > 0, 'the pauses are stalls');
  assert.match(itlBurstNote(s) ?? '', /^ITL p50 is under 0\.01 ms: chunks arrive in bursts/);
  const table = formatRunTable(run);
  // a median of exactly zero (chunks stamped in the same read) stays 0.00, with the line that says why under the table
  assert.match(table, /^ITL \*?\s+\S+\s+0\.00\s[\s\S]*?\nITL p50 is under 0\.01 ms: chunks arrive in bursts/m);
  const stalls = formatStalls(s);
  assert.match(stalls, /\(\d+(\.\d+)?× the \d+ ms stall floor; median ITL under 0\.01 ms \(chunks arrive in bursts\)\)$/);
  assert.doesNotMatch(stalls, /\d{1,3},\d{3}× median ITL/);
  assert.equal(itlBurstNote({ itlMs: { ...s.itlMs, p50: 12 } }), undefined);
});

test("a sweep's workload names the dimension, its values and the requests per point, not the first point's workload", () => {
  const run = fixtureSweepRun(31);
  const line = sweepWorkload(run);
  assert.match(line, /^sweep over concurrency 1, 2, 4, 8 · 4–32 requests per point · \d+-token prompts$/);
  assert.ok(formatSweep(run).startsWith(`${line}\n`), 'the CLI prints it above the table');
  const same = { ...run, sweep: { ...run.sweep!, points: run.sweep!.points.map((p) => ({ ...p, summary: { ...p.summary, completed: 32, failed: 0 } })) } };
  assert.match(sweepWorkload(same), / · 32 requests per point · /);
  const prompts = { ...run, sweep: { ...run.sweep!, dimension: 'promptTokens' as const, points: run.sweep!.points.map((p, i) => ({ ...p, promptTokens: 256 * 2 ** i })) } };
  assert.match(sweepWorkload(prompts), /^sweep over prompt length \(tokens\) 256, 512, 1024, 2048 · .* · concurrency 1$/);
  assert.equal(sweepWorkload({ ...run, sweep: undefined }), '');
});
