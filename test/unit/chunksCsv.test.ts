// chunksToCsv: one RFC 4180 row per chunk, its times checked by hand and against the run file.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chunksToCsv as chunksToCsvOf, CHUNK_CSV_COLUMNS } from '../../src/engine/files/chunksCsv';
import { Scrubber, scrubRun } from '../../src/engine/core/redact';
import { fixtureRun, fixtureWhereRun } from '../support/fixtureRuns';
import { parseCsv } from '../support/csv';
import type { RequestRecord, RunFile } from '../../src/engine/core/types';

/** The chunk CSV of a run, scrubbed as every export is (no secret known here). */
const chunksToCsv = (r: RunFile): string => chunksToCsvOf(scrubRun(r, new Scrubber()));

function run(requests: RequestRecord[]): RunFile {
  const base = fixtureRun({ requests: 1, warmup: 0, errorRate: 0 });
  return { ...base, requests };
}


test('a row per chunk: index, number, ms after sentAt, epoch ms, the gap, and the cause of a stall the chunk ended', () => {
  const csv = chunksToCsv(run([
    {
      index: 0, warmup: false, scheduledAt: 1764687845123.4, sentAt: 1764687845123.5, ttftMs: 12.25, e2eMs: 340.5, outputTokens: 3, tokenSource: 'usage',
      chunkTimesMs: [12.25, 26.1, 340.5], stalls: [{ atChunk: 2, gapMs: 314.4, cause: 'prefill', culprits: [1] }],
    },
    { index: 1, warmup: true, scheduledAt: 1764687845200, sentAt: 1764687845200.25, ttftMs: 5, e2eMs: 5, outputTokens: 1, tokenSource: 'chunks', chunkTimesMs: [5] },
    { index: 2, warmup: false, scheduledAt: 1764687845300, sentAt: 1764687845300, outputTokens: 0, tokenSource: 'chunks', chunkTimesMs: [], httpStatus: 500, error: { kind: 'http', status: 500, message: 'boom' } },
  ]));
  const lines = csv.split('\r\n');
  assert.equal(lines[0], 'requestIndex,warmup,chunk,atMs,epochMs,gapMs,stallCause');
  assert.equal(lines[1], '0,false,0,12.25,1764687845135.75,,');
  assert.equal(lines[2], '0,false,1,26.1,1764687845149.6,13.85,', 'the gap to the µs, without binary-fraction noise');
  assert.equal(lines[3], '0,false,2,340.5,1764687845464,314.4,prefill');
  assert.equal(lines[4], '1,true,0,5,1764687845205.25,,');
  assert.equal(lines.length, 6, 'a failed request without chunks has no row; the text ends with CRLF');
  assert.equal(lines[5], '');
});

test('the rows of a realistic run: one per chunk time, each agreeing with the run file, RFC 4180 throughout', () => {
  const r = fixtureWhereRun({ seed: 5, requests: 30 });
  const rows = parseCsv(chunksToCsv(r));
  assert.deepEqual(rows[0], [...CHUNK_CSV_COLUMNS]);
  const body = rows.slice(1);
  assert.equal(body.length, r.requests.reduce((n, q) => n + q.chunkTimesMs.length, 0));
  const stalls = r.requests.reduce((n, q) => n + (q.stalls?.length ?? 0), 0);
  assert.ok(stalls > 0, 'the fixture has stalls to mark');
  assert.equal(body.filter((row) => row[6] !== '').length, stalls, 'each stall marked once, on the chunk that ended it');
  const byIndex = new Map(r.requests.map((q) => [q.index, q]));
  for (const row of body) {
    assert.equal(row.length, CHUNK_CSV_COLUMNS.length);
    const q = byIndex.get(Number(row[0]))!;
    const k = Number(row[2]);
    assert.equal(row[1], String(q.warmup));
    assert.equal(Number(row[3]), q.chunkTimesMs[k]);
    assert.ok(Math.abs(Number(row[4]) - (q.sentAt + q.chunkTimesMs[k]!)) <= 0.001, 'epoch ms = sentAt + atMs, to the µs (a double holds epoch ms to about 0.25 µs)');
    if (k === 0) assert.equal(row[5], '');
    else assert.ok(Math.abs(Number(row[5]) - (q.chunkTimesMs[k]! - q.chunkTimesMs[k - 1]!)) < 0.0006);
    const stall = q.stalls?.find((s) => s.atChunk === k);
    assert.equal(row[6], stall?.cause ?? '');
  }
});
