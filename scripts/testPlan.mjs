// Which test files run beside others and which run alone, and in what order. A file runs alone
// when an assertion of it measures time tightly enough that another test's load could fail it
// (the reason is given for each); every other file shares the machine with one more, the longest
// first, so that no long file starts last. Durations come from the previous run's
// test-artifacts/durations-*.jsonl (scripts/runTests.mjs), else from the rough figures below.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export const ARTIFACTS = 'test-artifacts';

/**
 * Test files that run with no other test file beside them, and why. `light`: one process, little CPU,
 * no threads of its own: with LLMP_TIMING_CONCURRENCY=2 (scripts/test.mjs) these run two at a time
 * among themselves, on the machine's two cores, before the others, which always run one at a time.
 */
export const ALONE = {
  'test/unit/promptWorker.test.ts': { why: "this thread is held < 200 ms while the prompt reader's thread reads 6 MB" },
  'test/unit/compareThread.test.ts': { why: 'this thread is held < 200 ms while the comparison thread compares two runs of 4,000 requests' },
  'test/e2e/compareVerdicts.test.ts': { why: "the report's thread is held < 200 ms while its worker compares two runs of 10,000 requests" },
  'test/integration/cacheCheck.test.ts': { why: 'a warm TTFT under 0.7 of a cold one, on the cost model and on llama.cpp' },
  'test/integration/ciGate.test.ts': { why: "the example CI job: a step server's 50% longer step fails its 10% gate, through the installed CLI" },
  'test/integration/client.test.ts': { why: "chunk arrival against the server's write times, to a few ms", light: true },
  'test/integration/compareCli.test.ts': { why: 'two runs of one step server within a 10% regression gate (A/A), and another twice as slow called slower' },
  'test/integration/detect.test.ts': { why: 'a preflight gives up within 1.5 s', light: true },
  'test/integration/keepAlive.test.ts': { why: 'a closed connection fails within 200 ms', light: true },
  'test/integration/keepAliveLlamaServer.test.ts': { why: "llama-server's close 0.2 to 8 ms after the last chunk" },
  'test/integration/localServer.test.ts': { why: 'TPOT rises with parallel sequences on llama.cpp; a queued request starts within 5 s' },
  'test/integration/localServerLlamaServer.test.ts': { why: 'llama-server and its supervisor exit within 5 s' },
  'test/integration/newApi.test.ts': { why: "TTFT at least the server's 40 ms hold, to 1 ms (the client stamps sentAt on its own event loop)" },
  'test/integration/network.test.ts': { why: "TTFT through a TLS proxy within 150 ms of the server's 40 ms" },
  'test/integration/promptSizingBounds.test.ts': { why: "a run starts within prompt sizing's 10 s deadline (2.5 s slack) against a tokenizer that hangs or answers slowly; Cancel returns within 500 ms", light: true },
  'test/integration/providers.test.ts': { why: "TTFO against the fake's pacing, to 6 ms", light: true },
  'test/integration/rateLimit.test.ts': { why: "each retry waits what its 429 said, by the server's receipt times", light: true },
  'test/integration/repeatAb.test.ts': { why: "an A/B's blocks take turns without overlapping, and a 50% slower TPOT clears a 5% regression gate", light: true },
  'test/integration/runner.test.ts': { why: "an open loop's sends follow the seeded schedule", light: true },
  'test/integration/scriptedServer.test.ts': { why: 'chunks arrive within 50 ms of the other process writing them', light: true },
  'test/integration/sessions.test.ts': { why: 'TTFT by turn flat within 20% with the prefix cache on; a turn sent its think time after the last reply', light: true },
  'test/integration/soak.test.ts': { why: "45 s at 32 streams: the heap's growth against the kept records' need, fitted over samples a load beside it would thin" },
  'test/integration/serverMetrics.test.ts': { why: 'gauges sampled about once a second; the llama.cpp server' },
  'test/integration/stepServer.test.ts': { why: "a step's writes within a third of a step", light: true },
  'test/integration/sweep.test.ts': { why: 'the fitted base and k within 5 % of the cost model', light: true },
  'test/integration/sweepLocalServer.test.ts': { why: 'TPOT rises and throughput saturates on llama.cpp' },
  'test/integration/toolCalls.test.ts': { why: "tool-call pieces read within 150 ms of the fake writing them; an A/B's schema cost within 15 ms of the server's own", light: true },
  'test/integration/trace.test.ts': { why: "a 200-request trace sent at its timestamps with p99 lag within 5 ms, the CLI in its own process" },
  'test/integration/truthServer.test.ts': { why: 'queue times under 5 ms and over 100 ms', light: true },
  'test/integration/whereTime.test.ts': { why: 'prefill stalls found from chunk gaps', light: true },
  'test/integration/workers.test.ts': { why: 'sends on time across worker threads, one time base' },
};

/** Rough seconds of the longest files that share the machine, for a run with no durations yet. */
const HINTS = {
  'test/e2e/a11y.test.ts': 35,
  'test/integration/hostile.test.ts': 25,
  'test/integration/importLarge.test.ts': 18,
  'test/integration/packaging.test.ts': 16,
  'test/integration/cli.test.ts': 15,
  'test/integration/localServerLifecycle.test.ts': 14,
  'test/integration/localServerContext.test.ts': 11,
  'test/e2e/reportA11y.test.ts': 10,
  'test/e2e/whereTime.test.ts': 10,
  'test/e2e/report.test.ts': 10,
  'test/e2e/liveLanes.test.ts': 9,
  'test/integration/localServerPort.test.ts': 8,
  'test/e2e/imported.test.ts': 7,
  'test/e2e/sidebar.test.ts': 7,
  'test/unit/fuzz.test.ts': 6,
};

/** The test files of a stage's folder (test/<stage>/*.test.ts), sorted. */
export function stageFiles(stage) {
  const dir = join('test', stage);
  if (!existsSync(dir)) return [];
  return readdirSync(dir).filter((f) => f.endsWith('.test.ts')).sort().map((f) => `${dir}/${f}`);
}

/** The tests of the last runs (test-artifacts/durations-*.jsonl), each once: its latest record. */
export function readDurations() {
  const latest = new Map();
  if (!existsSync(ARTIFACTS)) return [];
  for (const f of readdirSync(ARTIFACTS).filter((n) => /^durations-.*\.jsonl$/.test(n))) {
    for (const line of readFileSync(join(ARTIFACTS, f), 'utf8').split('\n')) {
      if (!line) continue;
      const t = JSON.parse(line);
      const key = `${t.file}\0${t.nesting}\0${t.name}`;
      if (!latest.has(key) || latest.get(key).at < t.at) latest.set(key, t);
    }
  }
  return [...latest.values()];
}

/** Seconds each file's tests took in the last runs (its top-level tests added up). */
export function fileSeconds(tests = readDurations()) {
  const seconds = {};
  for (const t of tests) if (t.file && t.nesting === 0) seconds[t.file] = (seconds[t.file] ?? 0) + t.ms / 1000;
  return seconds;
}

/** The files, longest first (unknown files by their hint, else as if short). */
export function longestFirst(files, seconds = fileSeconds()) {
  const cost = (f) => seconds[f] ?? HINTS[f] ?? 0;
  return [...files].sort((a, b) => cost(b) - cost(a) || a.localeCompare(b));
}
