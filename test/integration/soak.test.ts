// The soak's short form (`npm run bench:soak` is the hour): `llm-profiler run`'s own path, journal on,
// for 45 s at 32 streams against a step server in its own process, by the bench's own code
// (bench/soakRun.ts). Memory after warm-up grows by what the kept records need and no more, that
// need is what a record's numbers take (its chunk times unboxed), and the journal holds each record
// once.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runSoak, SAMPLE_HEADER, sampleRow, soakFigures, summaryText } from '../../bench/soakRun';

test('45 s at 32 streams: heap beyond the kept records flat, a record as small as its numbers, the journal one line a record', async (t) => {
  const r = await runSoak({ minutes: 0.75, streams: 32, sampleMs: 5000, tokens: 128 });
  const f = soakFigures(r);
  const report = `\n${SAMPLE_HEADER}\n${r.samples.map(sampleRow).join('\n')}\n${summaryText(r, f)}`;
  for (const line of report.split('\n')) t.diagnostic(line);
  assert.equal(r.failed, 0, report);
  assert.ok(r.stored, `the run file was written${report}`);
  assert.ok(r.requests >= 300 && f.fitted >= 6, `enough requests and samples to fit${report}`);
  const chunksPerRequest = r.chunks / r.requests;
  // 8 bytes a chunk time at the least; the rest of a record (its fields, ids) is far under a kilobyte
  assert.ok(f.needBytesPerRequest >= 8 * chunksPerRequest, `the records' need is measured${report}`);
  assert.ok(f.needBytesPerRequest <= 16 * chunksPerRequest + 1024, `a kept record holds its chunk times as unboxed doubles (boxed, each takes three times the heap)${report}`);
  // retained twice, or a part of each request kept besides its record, grows the heap beyond the need
  // (the heap without its code: in a measurement this short, the JIT's code still grows as functions
  // get hot, and its feedback with it, up to a few tenths of the need)
  assert.ok(f.beyondSlope <= 0.3 * f.needSlope + 1, `heap beyond the kept records' need: ${f.beyondSlope.toFixed(2)} MB per 10 minutes, the need ${f.needSlope.toFixed(2)}${report}`);
  assert.ok(f.beyondSlope >= -0.2 * f.needSlope - 1, `the records' need is not overstated${report}`);
  // the journal is its record lines (each once), the head and a progress line a second at most
  assert.ok(f.journalOverRecords >= 0.999 && f.journalOverRecords <= 1.05, `journal bytes ${r.journalBytes} against the record lines ${r.recordLineBytes}${report}`);
});
