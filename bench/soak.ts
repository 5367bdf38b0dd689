// `npm run bench:soak -- --minutes N --streams S [--json F]`: hours, not minutes (issue 31 §3).
// `llm-profiler run`'s own path, journal on, in this process at S concurrent streams for N minutes
// against a step server in its own process (bench/soakRun.ts says how): each minute this process's
// RSS, heap, event-loop delay (p50, p99, max over the minute), requests finished and the journal's
// bytes; at the end the run file's bytes, what one kept request needs in heap (measured), the memory
// slope after warm-up (least squares over minutes ≥ 2, MB per 10 minutes) and that slope beyond the
// kept records' need, the journal's and the run file's bytes per request, and the event-loop delay's
// p99 in the first minute against the last. Goal at 64 streams for 60 minutes: under 1 MB per 10
// minutes beyond the records' need, and no growth in event-loop delay.
// Options: --minutes 60 --streams 64 --step 10 (ms, the server's engine step: one token per stream
//          per step) --ttft 20 --tokens 128 (per request) --sample-s 60 --json F (the samples and
//          figures) --keep DIR (--out and its journal go there and stay) --live [--live-profile: where
//          the updates' time goes at the longest state, by the page's CPU profile]
// `--live`: then the report webview's live view, in Chromium, holding what a run of this size has
// sent after one minute and after N minutes, fed its next live updates: the frame time (message in →
// timeline drawn) after a minute against after N minutes (bench/soakLive.ts), at the soak's measured
// requests a minute and chunks a request. `--live-only --requests-per-minute R [--chunks C]`: that
// alone, at R requests a minute (the 64-stream soak on this machine: about 2,900) of C chunks (128).
import { writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { runSoak, SAMPLE_HEADER, sampleRow, soakFigures, summaryText } from './soakRun';
import { benchLive, LIVE_HEADER, liveRow } from './soakLive';
import type { LiveRow } from './soakLive';

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i !== -1 && process.argv[i + 1] !== undefined ? process.argv[i + 1]! : fallback;
}
const num = (name: string, fallback: string): number => {
  const v = Number(arg(name, fallback));
  if (!(v > 0)) throw new Error(`--${name} must be a positive number (got ${arg(name, fallback)})`);
  return v;
};

async function live(streams: number, minutes: number, requestsPerMinute: number, chunks: number): Promise<LiveRow[]> {
  const at = [...new Set([1, minutes])];
  console.log(`\nlive report (headless Chromium, 1280×900): ${streams} streams, ${requestsPerMinute.toFixed(0)} requests a minute of ${chunks} chunks; the page holds what the host sent by ${at.join(' and ')} min, then gets the next live updates (every 100 ms)`);
  const rows = await benchLive({ streams, requestsPerMinute, chunks, minutes: at, profile: process.argv.includes('--live-profile') }, (line) => console.log(line));
  console.log(LIVE_HEADER);
  for (const r of rows) console.log(liveRow(r));
  const first = rows[0]!;
  const last = rows[rows.length - 1]!;
  console.log(`frame p50 after ${last.minutes} min against after ${first.minutes}: ${(last.frameMs.p50 / first.frameMs.p50).toFixed(2)}×`);
  return rows;
}

async function main(): Promise<void> {
  const minutes = num('minutes', '60');
  const streams = num('streams', '64');
  const json = arg('json', '');
  const keep = arg('keep', '');
  if (process.argv.includes('--live-only')) {
    const rows = await live(streams, minutes, num('requests-per-minute', '2900'), num('chunks', '128'));
    if (json) writeFileSync(json, `${JSON.stringify({ live: rows }, null, 2)}\n`);
    return;
  }
  const o = { minutes, streams, stepMs: num('step', '10'), ttftMs: num('ttft', '20'), tokens: num('tokens', '128'), sampleMs: num('sample-s', '60') * 1000 };
  console.log(`soak: llm-profiler run's path (journal on, --out) at ${streams} streams for ${minutes} min; step server in its own process, step ${o.stepMs} ms, TTFT ${o.ttftMs} ms, ${o.tokens} tokens a request`);
  console.log(`machine: ${cpus().length} × ${cpus()[0]?.model ?? 'CPU'}, load ${loadavg().map((l) => l.toFixed(2)).join(' ')}, node ${process.version}; heap after a full collection; ELD in ms`);
  console.log(SAMPLE_HEADER);
  const r = await runSoak({ ...o, ...(keep ? { dir: keep } : {}), onSample: (s) => console.log(sampleRow(s)) });
  const f = soakFigures(r);
  console.log(summaryText(r, f));
  if (r.said.trim()) console.log(`the CLI said:\n${r.said.trimEnd()}`);
  console.log(`load at the end ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  const rows = process.argv.includes('--live') ? await live(streams, minutes, f.requestsPerMinute, r.chunks / r.requests) : undefined;
  if (json) writeFileSync(json, `${JSON.stringify({ result: { ...r, said: undefined }, figures: f, ...(rows ? { live: rows } : {}) }, null, 2)}\n`);
}

main().catch((e: unknown) => {
  console.error(e instanceof Error ? (e.stack ?? e.message) : String(e));
  process.exitCode = 1;
});
