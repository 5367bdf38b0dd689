import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, readdirSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseRunFile, readRunFile, requestsToCsv, RUN_FILE_MAX_BYTES, RunFileError, serializeRunFile, writeRunFile } from '../../src/engine/files/runFile';
import { TOOL_VERSION } from '../../src/engine/core/runFormat';
import { Scrubber, scrubRun } from '../../src/engine/core/redact';
import { newRunId } from '../../src/engine/core/runId';
import { summarize } from '../../src/engine/analysis/metrics';
import { defaultWorkload } from '../../src/engine/core/workload';
import type { RequestRecord, RunFile } from '../../src/engine/core/types';

/** A run as the exports take it (the one scrubber, knowing no secret here). */
const safe = (run: RunFile) => scrubRun(run, new Scrubber());

function sampleRun(): RunFile {
  const workload = defaultWorkload({ requests: 2, warmup: 0 });
  const requests: RequestRecord[] = [
    { index: 0, warmup: false, responseId: 'cmpl-1', scheduledAt: 1764687845123.456, sentAt: 1764687845123.5, ttftMs: 12.25, e2eMs: 40.5, outputTokens: 3, tokenSource: 'usage', chunkTimesMs: [12.25, 26, 40.5], tpotMs: 14.125 },
    { index: 1, warmup: false, scheduledAt: 1764687845200, sentAt: 1764687845200, outputTokens: 0, tokenSource: 'chunks', chunkTimesMs: [], httpStatus: 500, error: { kind: 'http', status: 500, message: 'HTTP 500: "boom", then, a\nnew line' } },
  ];
  return {
    format: 'llm-profiler.run',
    version: 1,
    id: newRunId(new Date('2026-12-02T15:04:05Z')),
    startedAt: '2026-12-02T15:04:05.000Z',
    endedAt: '2026-12-02T15:04:06.000Z',
    tool: { name: 'llm-profiler', version: TOOL_VERSION },
    endpoint: { url: 'http://127.0.0.1:8000', api: 'openai-chat', model: 'm', headers: { 'X-Team': 'perf', Authorization: 'Bearer sk-secret-123' } },
    workload,
    requests,
    summary: summarize(requests, workload),
  };
}

test('run ids sort by time and are unique', () => {
  const a = newRunId(new Date('2026-12-02T15:04:05Z'));
  assert.match(a, /^2026-12-02T15-04-05-[0-9a-z]{6}$/);
  const b = newRunId(new Date('2026-12-02T15:04:06Z'));
  assert.ok(a < b);
  const many = new Set(Array.from({ length: 200 }, () => newRunId()));
  assert.equal(many.size, 200);
});

test('write then read gives the same run; the tool version is the package version', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'runfile-'));
  try {
    const run = sampleRun();
    const path = join(dir, 'run.json');
    await writeRunFile(path, safe(run));
    const back = await readRunFile(path);
    assert.deepEqual(back.requests, run.requests);
    assert.deepEqual(back.summary, JSON.parse(JSON.stringify(run.summary)));
    assert.equal(back.tool.version, JSON.parse(readFileSync(join(__dirname, '../../package.json'), 'utf8')).version);
    // chunk times stay on one line: compact files; text in strings is untouched
    assert.match(readFileSync(path, 'utf8'), /"chunkTimesMs": \[12\.25,26,40\.5\]/);
    const odd = { ...run, note: 'a list [ 1, 2 ] in text', neg: [-1.5e-7, 2] };
    assert.deepEqual(parseRunFile(serializeRunFile(odd as RunFile)).note, 'a list [ 1, 2 ] in text');
    assert.match(serializeRunFile(odd as RunFile), /"neg": \[-1\.5e-7,2\]/);
    assert.deepEqual(readdirSync(dir), ['run.json'], 'no temporary file left behind');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('header values that look like secrets are never written', async () => {
  const text = serializeRunFile(sampleRun());
  assert.ok(!text.includes('sk-secret-123'));
  assert.match(text, /"Authorization": "<redacted>"/);
  assert.match(text, /"X-Team": "perf"/);
});

test('the write is atomic: a failed write leaves the old file whole and no temp file', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'runfile-'));
  try {
    const path = join(dir, 'run.json');
    await writeRunFile(path, safe(sampleRun()));
    const before = readFileSync(path, 'utf8');
    const bad = { ...sampleRun(), cyclic: {} as Record<string, unknown> };
    bad.cyclic.self = bad.cyclic;
    await assert.rejects(writeRunFile(path, bad as unknown as ReturnType<typeof safe>));
    assert.equal(readFileSync(path, 'utf8'), before);
    // a target folder that does not exist: rejected, nothing created
    await assert.rejects(writeRunFile(join(dir, 'missing', 'run.json'), safe(sampleRun())));
    assert.deepEqual(readdirSync(dir), ['run.json']);
    // concurrent writers never interleave: the file is one of the two whole runs
    const r1 = sampleRun();
    const r2 = { ...sampleRun(), id: 'other' };
    await Promise.all([writeRunFile(path, safe(r1)), writeRunFile(path, safe(r2))]);
    assert.ok([r1.id, 'other'].includes(parseRunFile(readFileSync(path, 'utf8')).id));
    assert.deepEqual(readdirSync(dir), ['run.json']);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('every kind of damage gets its own clear RunFileError', () => {
  const good = serializeRunFile(sampleRun());
  const cases: [string, RegExp][] = [
    ['', /empty/],
    [good.slice(0, good.length / 2), /truncated/],
    ['{"format": "llm-profiler.run", ', /truncated/],
    ['not json at all', /not valid JSON/],
    ['[1,2,3]', /not an llm-profiler run file/],
    ['{"name": "package"}', /not an llm-profiler run file \(format is missing/],
    [good.replace('"llm-profiler.run"', '"other.tool"'), /format is "other.tool"/],
    [good.replace('"version": 1', '"version": 2'), /unknown run file version 2 \(written by a newer llm-profiler/],
    [good.replace('"version": 1', '"version": "1"'), /unknown run file version "1"/],
    [good.replace('"id":', '"idx":'), /missing "id"/],
    [good.replace('"endpoint":', '"endpointx":'), /missing "endpoint"/],
    [good.replace('"requests": [', '"requestsx": ['), /missing "requests"/],
    [good.replace('"summary":', '"summaryx":'), /missing "summary"/],
    [good.replace('"ttftMs": {', '"ttftMsx": {'), /summary.ttftMs is missing/],
    [good.replace('"outputTokens": 3', '"outputTokens": "3"'), /requests\[0\] lacks/],
  ];
  for (const [text, re] of cases) {
    assert.throws(() => parseRunFile(text, 'x.json'), (e: unknown) => e instanceof RunFileError && re.test((e as Error).message) && (e as Error).message.startsWith('x.json: '), re.source);
  }
  assert.doesNotThrow(() => parseRunFile('\uFEFF' + good));
});

test('readRunFile of a missing file says so', async () => {
  await assert.rejects(readRunFile('/nonexistent/run.json'), (e: unknown) => e instanceof RunFileError && /no such file/.test((e as Error).message));
  const dir = mkdtempSync(join(tmpdir(), 'runfile-'));
  try {
    writeFileSync(join(dir, 'cut.json'), serializeRunFile(sampleRun()).slice(0, 300));
    await assert.rejects(readRunFile(join(dir, 'cut.json')), /truncated/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a run of millions of chunk times is written and read back whole (no recursion or regex over the array)', () => {
  const run = sampleRun();
  const times = Array.from({ length: 3_000_000 }, (_, i) => i * 0.125);
  const big: RunFile = { ...run, requests: [{ ...run.requests[0]!, chunkTimesMs: times, outputTokens: times.length }, run.requests[1]!] };
  const text = serializeRunFile(big);
  const back = parseRunFile(text);
  assert.equal(back.requests[0]!.chunkTimesMs.length, 3_000_000);
  assert.equal(back.requests[0]!.chunkTimesMs[2_999_999], 2_999_999 * 0.125);
  // A string that looks like the marker is text, not an array to put back.
  const odd = { ...run, note: '\u0000abc:0' } as RunFile;
  assert.equal((parseRunFile(serializeRunFile(odd)) as RunFile & { note: string }).note, '\u0000abc:0');
});

test('a scrubber given to the writer removes every secret it knows, wherever a server put it', () => {
  const run = sampleRun();
  const echoed: RunFile = { ...run, requests: [{ ...run.requests[0]!, responseId: 'chatcmpl-sk-echo-9988' }, { ...run.requests[1]!, error: { kind: 'http', status: 401, message: 'bad key "sk-echo-9988"', body: '{"key":"sk-echo-9988"}' } }] };
  const text = serializeRunFile(echoed, new Scrubber(['sk-echo-9988']));
  assert.ok(!text.includes('sk-echo-9988'));
  assert.equal(parseRunFile(text).requests[0]!.responseId, 'chatcmpl-<redacted>');
});

test('readRunFile refuses a file larger than a run file can be, before reading it', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'runfile-'));
  try {
    const path = join(dir, 'huge.json');
    writeFileSync(path, '');
    truncateSync(path, RUN_FILE_MAX_BYTES + 1); // sparse: no disk used
    const t0 = performance.now();
    await assert.rejects(readRunFile(path), (e: unknown) => e instanceof RunFileError && /huge\.json: the file is 500 MB, more than the 500 MB a run file may be/.test((e as Error).message));
    assert.ok(performance.now() - t0 < 2000, 'refused without reading 500 MB');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('CSV: a header and one row per request, quoted per RFC 4180', () => {
  const csv = requestsToCsv(safe(sampleRun()));
  const lines = csv.split('\r\n');
  assert.equal(lines[0], 'index,warmup,responseId,scheduledAt,sentAt,headersMs,firstChunkMs,ttftMs,ttfoMs,tpotMs,e2eMs,promptTokens,outputTokens,reasoningTokens,tokenSource,chunks,multiTokenChunks,malformedEvents,httpStatus,errorKind,errorMessage');
  assert.equal(lines[1], '0,false,cmpl-1,1764687845123.456,1764687845123.5,,,12.25,,14.125,40.5,,3,,usage,3,,,,,');
  assert.ok(csv.includes('500,http,"HTTP 500: ""boom"", then, a\nnew line"\r\n'));
  assert.ok(csv.endsWith('\r\n'));
});
