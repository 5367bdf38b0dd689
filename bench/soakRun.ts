// The soak: `llm-profiler run`'s own path (parse → buildRunJob → the journal beside --out →
// executeJob → scrub → the run file written → the journal settled) in this process, for minutes at
// S concurrent streams against a step server in its own process (its memory is not ours), sampling
// this process each interval: RSS and heap (after a full collection, so garbage does not read as
// growth), event-loop delay (monitorEventLoopDelay: p50, p99, max over the interval; the bench's own
// collection is left out), requests finished and the journal's bytes. When the run ends, what the
// kept records need is measured, not assumed: the run file is written and the journal settled, then
// everything but the records is let go (heap A), then the records too (heap B); (A − B) / records is
// the heap one kept request needs. Memory beyond that need is what the soak looks for.
// Shared by bench/soak.ts (`npm run bench:soak`) and test/integration/soak.test.ts.
import { mkdtempSync, rmSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { getHeapCodeStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { Writable } from 'node:stream';
import { scrubRun } from '../src/engine/core/redact';
import { newRunId } from '../src/engine/core/runId';
import type { RequestRecord, RunFile } from '../src/engine/core/types';
import { buildRunJob } from '../src/jobs/build';
import { executeJob } from '../src/jobs/execute';
import type { JobJournal } from '../src/jobs/journal';
import { parseCommandLine } from '../src/cli/parse';
import { journalFor, settleJournal } from '../src/cli/journals';
import { LiveLine, Printer, writeOut } from '../src/cli/jobCommand';
import type { CliIo } from '../src/cli/io';
import { formatProgressLine } from '../src/present/runText';
import { startStepServerProcess } from '../test/support/stepServer';

export interface SoakOptions {
  readonly minutes: number;
  readonly streams: number;
  /** The step server's engine step (one token per stream per step), ms. */
  readonly stepMs?: number;
  readonly ttftMs?: number;
  /** max_tokens of each request (the server sends that many). */
  readonly tokens?: number;
  /** How often this process is sampled, ms (60 000: each minute). */
  readonly sampleMs?: number;
  /** Where --out and its journal go (default: a fresh folder under the system's temp, removed after). */
  readonly dir?: string;
  onSample?(s: SoakSample): void;
}

export interface SoakSample {
  /** Seconds since the run started. */
  readonly atS: number;
  readonly rssMB: number;
  /** After a full collection. */
  readonly heapMB: number;
  /** Of that, compiled code and bytecode with their metadata (the JIT's, growing as more code gets hot; bounded by the program). */
  readonly codeMB?: number;
  /** Event-loop delay over the interval (how late a 10 ms timer fired), ms. */
  readonly eld: { readonly p50: number; readonly p99: number; readonly max: number };
  /** Requests finished so far (warmup included). */
  readonly requests: number;
  readonly journalBytes: number;
  /** The machine's load average over the last minute (a shared machine's other work shows in the delay). */
  readonly load?: number;
}

export interface SoakResult {
  readonly options: Required<Omit<SoakOptions, 'dir' | 'onSample'>>;
  readonly samples: readonly SoakSample[];
  /** Heap before the run, MB (after a full collection). */
  readonly heapBeforeMB: number;
  /** The run file held (its records, summary, prompts), everything else of the run let go, MB. */
  readonly heapRunMB: number;
  /** The run's records alone held, as the run kept them while it went, MB. */
  readonly heapRecordsMB: number;
  /** Nothing of the run held, MB. */
  readonly heapAfterMB: number;
  readonly requests: number;
  readonly failed: number;
  readonly chunks: number;
  readonly durationS: number;
  /** The journal when the run ended (flushed), bytes. */
  readonly journalBytes: number;
  readonly runFileBytes: number;
  /** The records as the journal writes them: JSON of each `{"t":"request","r":…}` line and its newline, summed. */
  readonly recordLineBytes: number;
  readonly stored: boolean;
  /** What the CLI printed on stderr at the end (not the progress line). */
  readonly said: string;
}

const MB = 1024 * 1024;
/** The delay monitor's timer, ms: it records each interval between its fires, so the delay is that less the timer's own. */
const ELD_RESOLUTION_MS = 10;

/** The full collector, for the samples: V8's `gc`, exposed at run time. */
function collector(): () => void {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}

/** What the CLI's stderr would show: the progress line dropped (it rewrites itself), the rest kept (small). */
class Sink extends Writable {
  text = '';
  readonly isTTY: boolean;
  constructor(tty: boolean) {
    super();
    this.isTTY = tty;
  }
  override _write(chunk: Buffer | string, _enc: BufferEncoding, done: () => void): void {
    const s = chunk.toString();
    if (!s.startsWith('\x1b[2K\r') && this.text.length < 64 * 1024) this.text += s;
    done();
  }
}

/** Heap used once what was let go is collected, MB: a turn of the loop first (a value just dropped can still be held by the turn that dropped it). */
async function settledHeapMB(gc: () => void): Promise<number> {
  await new Promise((r) => setTimeout(r, 50));
  gc();
  return process.memoryUsage().heapUsed / MB;
}

const sizeOf = (path: string): Promise<number> => stat(path).then((s) => s.size, () => 0);

/** Samples this process every `sampleMs` while the run goes. */
class Sampler {
  readonly samples: SoakSample[] = [];
  readonly #eld = monitorEventLoopDelay({ resolution: ELD_RESOLUTION_MS });
  readonly #t0 = performance.now();
  #timer: NodeJS.Timeout | undefined;
  #busy = false;
  requests = 0;

  constructor(private readonly gc: () => void, private readonly journal: () => string | undefined, private readonly o: { sampleMs: number; onSample?: (s: SoakSample) => void; clearServerLog: () => Promise<void> }) {
    this.#eld.enable();
    this.#timer = setInterval(() => void this.#take(), o.sampleMs);
  }

  async #take(): Promise<void> {
    if (this.#busy) return;
    this.#busy = true;
    const late = (ns: number): number => Math.max(0, ns / 1e6 - ELD_RESOLUTION_MS);
    const eld = { p50: late(this.#eld.percentile(50)), p99: late(this.#eld.percentile(99)), max: late(this.#eld.max) };
    // the collection is the bench's, not the profiler's: the monitor is off while it runs
    this.#eld.disable();
    this.gc();
    const m = process.memoryUsage();
    const code = getHeapCodeStatistics();
    this.#eld.reset();
    this.#eld.enable();
    const path = this.journal();
    const s: SoakSample = { atS: (performance.now() - this.#t0) / 1000, rssMB: m.rss / MB, heapMB: m.heapUsed / MB, codeMB: (code.code_and_metadata_size + code.bytecode_and_metadata_size) / MB, eld, requests: this.requests, journalBytes: path ? await sizeOf(path) : 0, load: loadavg()[0]! };
    this.samples.push(s);
    try { this.o.onSample?.(s); } catch { /* a printer must not stop the soak */ }
    // the server's log of every write would grow for the hour: it is not ours to keep
    await this.o.clearServerLog().catch(() => undefined);
    this.#busy = false;
  }

  stop(): void {
    clearInterval(this.#timer);
    this.#eld.disable();
  }
}

/** `llm-profiler run`'s arguments for the soak: a closed loop of `streams` for `minutes`, written to `out`. */
function soakArgs(url: string, o: SoakResult['options'], out: string): string[] {
  return ['--url', url, '--api', 'openai-chat', '--model', 'scripted-model', '--concurrency', String(o.streams), '--duration', String(o.minutes * 60),
    '--max-tokens', String(o.tokens), '--prompt-tokens', '16', '--out', out];
}

/** Runs the soak (see the top of this file). */
export async function runSoak(options: SoakOptions): Promise<SoakResult> {
  const o = { minutes: options.minutes, streams: options.streams, stepMs: options.stepMs ?? 10, ttftMs: options.ttftMs ?? 20, tokens: options.tokens ?? 128, sampleMs: options.sampleMs ?? 60_000 };
  const gc = collector();
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), 'llmp-soak-'));
  const server = await startStepServerProcess({ stepMs: o.stepMs, ttftMs: o.ttftMs });
  try {
    const out = join(dir, 'soak.json');
    const stderr = new Sink(true);
    // a terminal's stderr: the live progress line is formatted at every report, as a user at a terminal sees it
    const io: CliIo = { stdout: new Sink(false), stderr, env: { ...process.env, LLM_PROFILER_STATE: dir }, cwd: dir };
    const printer = new Printer(io);
    const { job } = await buildRunJob(parseCommandLine('run', soakArgs(server.url, o, out)), { cwd: dir, env: io.env });
    if (job.target.kind !== 'endpoint') throw new Error('the soak runs against the step server');
    const runId = newRunId();
    const heapBeforeMB = await settledHeapMB(gc);
    let journal: JobJournal | undefined = await journalFor(job, runId, out, io, printer);
    if (!journal) throw new Error(`no journal: ${stderr.text}`);
    const journalPath = journal.path;
    const live = new LiveLine(printer, true);
    const sampler = new Sampler(gc, () => journalPath, { sampleMs: o.sampleMs, ...(options.onSample ? { onSample: options.onSample } : {}), clearServerLog: () => server.clearLog() });
    let raw: RunFile | undefined;
    // the records as the run keeps them while it goes (the run file's are annotated copies, made at its end): one more reference each, 8 bytes
    let kept: RequestRecord[] = [];
    try {
      raw = await executeJob(job, { runId, journal, onProgress: (p) => live.show(formatProgressLine(p)), onRecord: (r) => { sampler.requests++; kept.push(r); } });
    } finally {
      sampler.stop();
      live.stop();
    }
    const end = await settle(raw, journal, out, io, printer);
    journal = undefined;
    const heapRunMB = await settledHeapMB(gc);
    const durationS = raw.summary.durationS;
    raw = undefined;
    const heapRecordsMB = await settledHeapMB(gc);
    const requests = kept.length;
    const failed = kept.filter((r) => r.error).length;
    const chunks = kept.reduce((n, r) => n + r.chunkTimesMs.length, 0);
    // the lines the journal must hold: each record as it was handed over (the run file's are annotated copies)
    let recordLineBytes = 0;
    for (const r of kept) recordLineBytes += Buffer.byteLength(JSON.stringify({ t: 'request', r })) + 1;
    kept = [];
    const heapAfterMB = await settledHeapMB(gc);
    return { options: o, samples: sampler.samples, heapBeforeMB, heapRunMB, heapRecordsMB, heapAfterMB, requests, failed, chunks, durationS, recordLineBytes, ...end, said: stderr.text };
  } finally {
    await server.close();
    if (options.dir === undefined) rmSync(dir, { recursive: true, force: true });
  }
}

/** The CLI's end of a run: scrubbed, written to --out, the journal settled (its bytes read first). */
async function settle(raw: RunFile, journal: JobJournal, out: string, io: CliIo, printer: Printer): Promise<{ journalBytes: number; runFileBytes: number; stored: boolean }> {
  const run = scrubRun(raw, printer.scrubber);
  const stored = await writeOut(out, run, io, printer);
  await journal.whole();
  const journalBytes = await sizeOf(journal.path);
  await settleJournal(journal, run, stored, io, printer);
  return { journalBytes, runFileBytes: await sizeOf(out), stored };
}

// ---- Figures ----

/** Least squares slope and intercept of y over x. */
export function fitLine(xs: readonly number[], ys: readonly number[]): { slope: number; intercept: number } {
  const n = xs.length;
  if (n < 2) return { slope: Number.NaN, intercept: Number.NaN };
  const mx = xs.reduce((a, b) => a + b, 0) / n;
  const my = ys.reduce((a, b) => a + b, 0) / n;
  let sxy = 0;
  let sxx = 0;
  for (let i = 0; i < n; i++) {
    sxy += (xs[i]! - mx) * (ys[i]! - my);
    sxx += (xs[i]! - mx) ** 2;
  }
  return { slope: sxy / sxx, intercept: my - (sxy / sxx) * mx };
}

export interface SoakFigures {
  /** Samples fitted: those at or after the warm-up (the second interval on). */
  readonly fitted: number;
  /** Heap one kept request needs, bytes: (heap with the records alone − heap without them) / requests. */
  readonly needBytesPerRequest: number;
  /**
   * Slopes after warm-up, MB per 10 minutes: heap, of which code (compiled code and bytecode), RSS,
   * the records' need (need × the requests' slope); beyond that need: the heap without its code
   * (`beyondSlope`: what the run keeps), the whole heap, RSS.
   */
  readonly heapSlope: number;
  readonly codeSlope: number;
  readonly rssSlope: number;
  readonly needSlope: number;
  readonly beyondSlope: number;
  readonly heapBeyondSlope: number;
  readonly rssBeyondSlope: number;
  /** Heap held at the run's last sample beyond the records (what the run itself holds: connections, buffers), MB. */
  readonly runStateMB: number;
  /** Heap left once nothing of the run is held, against before it, MB. */
  readonly leftAfterMB: number;
  readonly requestsPerMinute: number;
  readonly journalBytesPerRequest: number;
  /** The journal's bytes against the record lines it must hold (1 = nothing more; the head and progress lines are the rest). */
  readonly journalOverRecords: number;
  readonly runFileBytesPerRequest: number;
  readonly eldP99First: number;
  readonly eldP99Last: number;
  /** Event-loop delay p99's slope after warm-up, ms per 10 minutes. */
  readonly eldP99Slope: number;
}

export function soakFigures(r: SoakResult): SoakFigures {
  const per10 = 600; // a slope per second, per 10 minutes
  // after warm-up: the samples from the second interval on (minutes ≥ 2 at one a minute)
  const warm = r.samples.slice(1);
  const t = warm.map((s) => s.atS);
  const need = r.requests > 0 ? ((r.heapRecordsMB - r.heapAfterMB) * MB) / r.requests : Number.NaN;
  const heapSlope = fitLine(t, warm.map((s) => s.heapMB)).slope * per10;
  const codeSlope = fitLine(t, warm.map((s) => s.codeMB ?? 0)).slope * per10;
  const rssSlope = fitLine(t, warm.map((s) => s.rssMB)).slope * per10;
  const reqSlope = fitLine(t, warm.map((s) => s.requests)).slope;
  const needSlope = (reqSlope * per10 * need) / MB;
  const last = r.samples[r.samples.length - 1];
  return {
    fitted: warm.length,
    needBytesPerRequest: need,
    heapSlope,
    codeSlope,
    rssSlope,
    needSlope,
    beyondSlope: heapSlope - codeSlope - needSlope,
    heapBeyondSlope: heapSlope - needSlope,
    rssBeyondSlope: rssSlope - needSlope,
    runStateMB: last ? last.heapMB - r.heapAfterMB - (last.requests * need) / MB : Number.NaN,
    leftAfterMB: r.heapAfterMB - r.heapBeforeMB,
    requestsPerMinute: warm.length >= 2 ? reqSlope * 60 : r.requests / (r.durationS / 60),
    journalBytesPerRequest: r.journalBytes / r.requests,
    journalOverRecords: r.journalBytes / r.recordLineBytes,
    runFileBytesPerRequest: r.runFileBytes / r.requests,
    eldP99First: r.samples[0]?.eld.p99 ?? Number.NaN,
    eldP99Last: last?.eld.p99 ?? Number.NaN,
    eldP99Slope: fitLine(t, warm.map((s) => s.eld.p99)).slope * per10,
  };
}

const n1 = (x: number, w = 8): string => (Number.isFinite(x) ? x.toFixed(1) : 'n/a').padStart(w);
const n2 = (x: number, w = 8): string => (Number.isFinite(x) ? x.toFixed(2) : 'n/a').padStart(w);

export const SAMPLE_HEADER = '  at (min)   RSS MB  heap MB  code MB  ELD p50  ELD p99  ELD max  requests  journal MB  load';

export function sampleRow(s: SoakSample): string {
  return `${n2(s.atS / 60, 10)} ${n1(s.rssMB)} ${n1(s.heapMB)} ${n2(s.codeMB ?? Number.NaN)} ${n2(s.eld.p50)} ${n2(s.eld.p99)} ${n2(s.eld.max)} ${String(s.requests).padStart(9)} ${n1(s.journalBytes / MB, 11)} ${n2(s.load ?? Number.NaN, 5)}`;
}

export function summaryText(r: SoakResult, f: SoakFigures): string {
  const o = r.options;
  return [
    `${r.requests} requests (${r.failed} failed), ${r.chunks} chunks in ${(r.durationS / 60).toFixed(1)} min at ${o.streams} streams: ${f.requestsPerMinute.toFixed(0)} requests a minute`,
    `heap one kept request needs: ${f.needBytesPerRequest.toFixed(0)} bytes (heap with the records alone ${r.heapRecordsMB.toFixed(1)} MB, without them ${r.heapAfterMB.toFixed(1)} MB); ` +
      `the finished run file holds ${(((r.heapRunMB - r.heapAfterMB) * MB) / r.requests).toFixed(0)} bytes a request (${r.heapRunMB.toFixed(1)} MB)`,
    `slopes after warm-up (${f.fitted} samples), MB per 10 minutes: heap ${f.heapSlope.toFixed(2)} (of which code ${f.codeSlope.toFixed(2)}), RSS ${f.rssSlope.toFixed(2)}; the kept records' need ${f.needSlope.toFixed(2)}`,
    `beyond the records' need, MB per 10 minutes (goal: under 1): heap without code ${f.beyondSlope.toFixed(2)}, the whole heap ${f.heapBeyondSlope.toFixed(2)}, RSS ${f.rssBeyondSlope.toFixed(2)}`,
    `the run's own state at its last sample (heap beyond the records): ${f.runStateMB.toFixed(1)} MB; left once the run is let go: ${f.leftAfterMB.toFixed(2)} MB`,
    `journal: ${r.journalBytes} bytes, ${f.journalBytesPerRequest.toFixed(0)} per request (${f.journalOverRecords.toFixed(3)}× the record lines it must hold); ` +
      `run file: ${r.runFileBytes} bytes, ${f.runFileBytesPerRequest.toFixed(0)} per request${r.stored ? '' : ' (NOT written)'}`,
    `event-loop delay p99: first interval ${f.eldP99First.toFixed(2)} ms, last ${f.eldP99Last.toFixed(2)} ms, slope after warm-up ${f.eldP99Slope.toFixed(2)} ms per 10 minutes`,
  ].join('\n');
}
