// Another tool's result is untrusted (issue 27, items 6 and 7): every number it holds is held to a
// range and refused, naming its field, when out of it (never a RangeError or a stack trace; never a
// run the run-file reader would refuse), and only a regular file is read (a FIFO must not hang the
// import, a link to /dev/zero must not be read forever), bounded by the bytes actually read.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { importedRun, UNWRITABLE, ImportError } from '../../src/engine/files/importers/common';
import { fromGuidellm } from '../../src/engine/files/importers/guidellm';
import { importBenchmarkFile } from '../../src/engine/files/importers/index';
import { fromVllm } from '../../src/engine/files/importers/vllm';
import { parseRunFile, serializeRunFile } from '../../src/engine/files/runFile';
import type { RunFile } from '../../src/engine/core/types';
import { runToTraceEvents } from '../../src/engine/files/traceEvents';
import { scrubRun, Scrubber } from '../../src/engine/core/redact';
import { defaultWorkload } from '../../src/engine/core/workload';

const FIXTURES = join(__dirname, '../fixtures');
const json = (path: string): Record<string, unknown> => JSON.parse(readFileSync(join(FIXTURES, path), 'utf8')) as Record<string, unknown>;
const vllm = () => json('vllm/burst.json');
const POSIX = process.platform !== 'win32';

let dir: string;
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'import-limits-'));
});
after(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, text: string): string {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
}

/** `read()` throws the importer's own error, whose message is "FILE: problem" with `problem` matching. */
async function refuses(read: () => unknown, problem: RegExp): Promise<void> {
  await assert.rejects(async () => read(), (e: unknown) => {
    assert.ok(e instanceof ImportError, `an ImportError, not ${String((e as Error).stack ?? e)}`);
    assert.match(e.message, problem);
    assert.ok(!e.message.includes(UNWRITABLE), `the range check caught it, not the last line of defence: ${e.message}`);
    return true;
  });
}

/** The run, written and read back as the run file it would be. */
function roundTrip(run: RunFile): RunFile {
  return parseRunFile(serializeRunFile(run));
}

describe('vLLM: every number in its range', () => {
  it('a duration of 1e308 is refused, naming the field (it was a RangeError: Invalid time value)', async () => {
    await refuses(() => fromVllm({ ...vllm(), duration: 1e308 }, 'r.json'), /^r\.json: "duration" is 1e\+308: expected a duration of 0, or from 0\.000001 s to a year \(31536000 s\)$/);
    await refuses(() => fromVllm({ ...vllm(), duration: -5 }, 'r.json'), /"duration" is -5: expected a duration of 0, or from 0\.000001 s/);
  });

  it('a run duration of 5e-324 s is refused (the rates divided by it were infinite: the fuzzer found it in GuideLLM)', async () => {
    await refuses(() => fromVllm({ ...vllm(), duration: 5e-324 }, 'r.json'), /"duration" is 5e-324: expected a duration of 0, or from 0\.000001 s/);
    const doc = json('guidellm/sweep-v1.json') as { benchmarks: Record<string, unknown>[] };
    doc.benchmarks[3]!.duration = 5e-324;
    await refuses(() => fromGuidellm(doc, 'g.json', {}), /^g\.json: benchmark 4: "duration" is 5e-324/);
    assert.equal(roundTrip(fromVllm({ ...vllm(), duration: 0 }, 'r.json')).requests.length, 24);
  });

  it('negative and absurd counts are refused (they made a run the reader refused, or a run with -3 output tokens)', async () => {
    const doc = vllm();
    const n = (doc.ttfts as unknown[]).length;
    await refuses(() => fromVllm({ ...doc, output_lens: Array(n).fill(-3) }, 'r.json'), /"output_lens\[0\]" is -3: expected a whole number from 0 to 1000000000$/);
    await refuses(() => fromVllm({ ...doc, input_lens: Array(n).fill(1e300) }, 'r.json'), /"input_lens\[0\]" is 1e\+300: expected a whole number/);
    await refuses(() => fromVllm({ ...doc, output_lens: Array(n).fill(2.5) }, 'r.json'), /"output_lens\[0\]" is 2\.5: expected a whole number/);
    await refuses(() => fromVllm({ ...doc, max_concurrency: -4 }, 'r.json'), /"max_concurrency" is -4: expected a whole number from 1 to 10000000$/);
    await refuses(() => fromVllm({ ...doc, max_concurrency: 1e308 }, 'r.json'), /"max_concurrency" is 1e\+308/);
    await refuses(() => fromVllm({ ...doc, request_rate: -1 }, 'r.json'), /"request_rate" is -1: expected a rate from 0\.000001 to 1000000000 requests per second$/);
    await refuses(() => fromVllm({ ...doc, request_rate: 4, burstiness: 0 }, 'r.json'), /"burstiness" is 0/);
  });

  it('per-request times out of range name the request (ttfts[i], itls[i][j], start_times[i])', async () => {
    const doc = vllm();
    const at = (key: string, i: number, v: unknown) => ({ ...doc, [key]: (doc[key] as unknown[]).map((x, k) => (k === i ? v : x)) });
    await refuses(() => fromVllm(at('ttfts', 3, 1e308), 'r.json'), /"ttfts\[3\]" is 1e\+308/);
    await refuses(() => fromVllm(at('latencies', 2, -0.5), 'r.json'), /"latencies\[2\]" is -0\.5/);
    await refuses(() => fromVllm(at('itls', 1, [0.01, 1e300]), 'r.json'), /"itls\[1\]\[1\]" is 1e\+300/);
    await refuses(() => fromVllm(at('start_times', 0, 1e308), 'r.json'), /"start_times\[0\]" is 1e\+308: expected a clock reading/);
    await refuses(() => fromVllm(at('start_times', 0, -1e11), 'r.json'), /"start_times" span 100000028360 s from the first to the last: expected the requests of one run, within a year$/);
  });

  it('one of several results (--append-result) is named', async () => {
    await refuses(() => fromVllm([vllm(), { ...vllm(), duration: 1e308 }], 'r.json'), /^r\.json: result 2: "duration" is 1e\+308/);
  });

  it('a date no clock shows is not rolled over into another: the file time is used', () => {
    const run = fromVllm({ ...vllm(), date: '20251399-256199' }, 'r.json', {}, Date.UTC(2025, 0, 2));
    assert.ok(run.startedAt.startsWith('2025-01-0'), run.startedAt);
  });

  it('what is in range still imports, and round-trips through the run file', () => {
    const run = fromVllm({ ...vllm(), duration: 3600 * 24 * 364, max_concurrency: 10_000_000 }, 'r.json');
    assert.equal(roundTrip(run).requests.length, 24);
  });
});

describe('AIPerf and GuideLLM: every number in its range', () => {
  const aiperf = readFileSync(join(FIXTURES, 'aiperf/run-2026/profile_export.jsonl'), 'utf8').trim().split('\n');

  it('an AIPerf start of 1e300 ns is refused, naming the line and the field (it was a RangeError)', async () => {
    const first = JSON.parse(aiperf[0]!) as { metadata: Record<string, unknown>; metrics: Record<string, { value: unknown; unit: string }> };
    first.metadata.request_start_ns = 1e300;
    const p = file('start.jsonl', [JSON.stringify(first), ...aiperf.slice(1)].join('\n'));
    await refuses(() => importBenchmarkFile(p), /: line 1: "metadata\.request_start_ns" is 1e\+300: expected a time in nanoseconds since 1970, before the year 10000$/);
  });

  it('an AIPerf metric out of range names its unit; a negative token count is refused', async () => {
    const line = JSON.parse(aiperf[1]!) as { metrics: Record<string, { value: unknown; unit: string }> };
    line.metrics.time_to_first_token!.value = 1e300;
    await refuses(() => importBenchmarkFile(file('ttft.jsonl', [aiperf[0], JSON.stringify(line), ...aiperf.slice(2)].join('\n'))), /line 2: "metrics\.time_to_first_token\.value" is 1e\+300 ms: expected a duration/);
    const counts = JSON.parse(aiperf[1]!) as { metrics: Record<string, { value: unknown; unit: string }> };
    counts.metrics.output_sequence_length!.value = -1;
    await refuses(() => importBenchmarkFile(file('osl.jsonl', [aiperf[0], JSON.stringify(counts), ...aiperf.slice(2)].join('\n'))), /line 2: "metrics\.output_sequence_length\.value" is -1 tokens: expected a whole number/);
  });

  it('a number out of range in the aggregate beside the records names that file', async () => {
    mkdirSync(join(dir, 'agg'));
    writeFileSync(join(dir, 'agg', 'profile_export.jsonl'), aiperf.join('\n'));
    const agg = json('aiperf/run-2026/profile_export_aiperf.json');
    (agg.input_config as { loadgen: Record<string, unknown> }).loadgen = { concurrency: -2 };
    writeFileSync(join(dir, 'agg', 'profile_export_aiperf.json'), JSON.stringify(agg));
    await refuses(() => importBenchmarkFile(join(dir, 'agg', 'profile_export.jsonl')), /profile_export_aiperf\.json beside it: "input_config\.loadgen\.concurrency" is -2/);
  });

  it('a GuideLLM request start of 1e300 s names the benchmark and the request (it was taken, with a TTFT of -1e303 ms)', async () => {
    const doc = json('guidellm/sweep-v1.json') as { benchmarks: { requests: { successful: Record<string, unknown>[] } }[] };
    doc.benchmarks[1]!.requests.successful[2]!.request_start_time = 1e300;
    await refuses(() => fromGuidellm(doc, 'g.json', {}), /^g\.json: benchmark 2: "requests\.successful\[2\]\.request_start_time" is 1e\+300: expected a time in seconds since 1970/);
  });

  it("GuideLLM's data spec and strategy numbers are held to their ranges (a 400-digit prompt_tokens made a run the reader refused)", async () => {
    const doc = json('guidellm/sweep-v1.json') as { args: Record<string, unknown>; benchmarks: { config: { strategy: Record<string, unknown> } }[] };
    await refuses(() => fromGuidellm({ ...doc, args: { ...doc.args, data: [`prompt_tokens=${'9'.repeat(400)}`] } }, 'g.json', {}), /"the data spec's prompt_tokens" is Infinity/);
    const again = json('guidellm/sweep-v1.json') as typeof doc;
    again.benchmarks[0]!.config.strategy = { type_: 'concurrent', streams: -3 };
    await refuses(() => fromGuidellm(again, 'g.json', {}), /benchmark 1: "strategy\.streams" is -3/);
  });
});

describe('the last line of defence: an imported run is one the run-file reader accepts', () => {
  it('a run with a number JSON cannot write is refused, with the place named', () => {
    const workload = defaultWorkload({ mode: { kind: 'closed', concurrency: 1 }, requests: 1 });
    const request = { warmup: false, scheduledAt: 0, sentAt: 0, ttftMs: Infinity, outputTokens: 1, tokenSource: 'usage' as const, chunkTimesMs: [] };
    assert.throws(
      () => importedRun({ from: { tool: 'vllm', file: 'x.json', startTimes: 'none' }, startedAt: new Date(0).toISOString(), endpoint: { url: '', api: 'openai-chat' }, points: [{ requests: [request], workload }] }),
      (e: unknown) => e instanceof ImportError && e.message.startsWith(`x.json: ${UNWRITABLE}: run.`) && /\.ttftMs\b.* is not a finite number$/.test(e.message),
    );
  });
});

describe('only a regular file is read, bounded by the bytes read', { skip: !POSIX && 'FIFOs and /dev/zero are POSIX' }, () => {
  it('a FIFO is refused at once (reading it waited for a writer for ever)', { timeout: 5000 }, async () => {
    const fifo = join(dir, 'result.json');
    execFileSync('mkfifo', [fifo]);
    const t0 = Date.now();
    try {
      await refuses(() => importBenchmarkFile(fifo), /result\.json: not a regular file \(a FIFO\): give the result file itself/);
    } finally {
      rmSync(fifo);
    }
    assert.ok(Date.now() - t0 < 2000, `refused in ${Date.now() - t0} ms`);
  });

  it('a link to /dev/zero is refused at once (it was read until memory ran out)', { timeout: 5000 }, async () => {
    const link = join(dir, 'zero.json');
    symlinkSync('/dev/zero', link);
    const t0 = Date.now();
    try {
      await refuses(() => importBenchmarkFile(link), /zero\.json: a link to \/dev \(\/dev\/zero\): files under \/proc, \/sys and \/dev are never read/);
    } finally {
      rmSync(link);
    }
    assert.ok(Date.now() - t0 < 2000, `refused in ${Date.now() - t0} ms`);
  });

  it("a FIFO where AIPerf's aggregate would be does not hang the import: it is left out, and said so", { timeout: 5000 }, async () => {
    mkdirSync(join(dir, 'fifo'));
    copyFileSync(join(FIXTURES, 'aiperf/run-2026/profile_export.jsonl'), join(dir, 'fifo', 'profile_export.jsonl'));
    execFileSync('mkfifo', [join(dir, 'fifo', 'profile_export_aiperf.json')]);
    const run = await importBenchmarkFile(join(dir, 'fifo', 'profile_export.jsonl'));
    assert.ok(
      run.importedFrom?.missing?.some((m) => m.startsWith('profile_export_aiperf.json beside the file was not read (not a regular file (a FIFO))')),
      JSON.stringify(run.importedFrom?.missing),
    );
    assert.equal(run.importedFrom?.files, undefined);
  });
});

describe('no spread over a list as long as a large import (Math.min(...xs), push(...xs) overflow the stack past ~120 000)', () => {
  /** A vLLM result of n one-token requests, built in memory. */
  const many = (n: number) => ({
    date: '20251204-161321', backend: 'openai-chat', model_id: 'm', duration: n * 0.004, completed: n,
    ttfts: Array(n).fill(0.1), itls: Array(n).fill([]), input_lens: Array(n).fill(8), output_lens: Array(n).fill(1), errors: Array(n).fill(''),
    latencies: Array(n).fill(0.1), start_times: Array.from({ length: n }, (_, i) => i * 0.004),
  });

  it('vLLM start_times of 150 000 requests (Math.min(...start_times))', { timeout: 30_000 }, () => {
    const run = fromVllm(many(150_000), 'r.json');
    assert.equal(run.requests.length, 150_000);
    assert.equal(run.importedFrom?.startTimes, 'relative');
    // the trace of that run: one track of 150 000 requests' events (events.push(...track))
    assert.ok(runToTraceEvents(scrubRun(run, new Scrubber())).traceEvents.length > 150_000 * 3);
  });
});
