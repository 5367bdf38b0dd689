// `--workers N` measured (issue 15 §3): the real CLI (`node dist/cli.js run`, its own process)
// against a step server in its own process (test/support/stepServer.ts: one engine loop writing every
// stream's chunk back to back each step), with one event loop (--workers 1) and with N worker
// threads, at each level of concurrent streams, in interleaved rounds (the order swapped every round,
// so drift on a shared machine falls on both). Printed per level and round, then the medians:
//   TTFT error  client first-token arrival − server first-token write (epoch ms on both sides)
//   ITL error   client gap − server gap, every pair of consecutive chunks
//   CPU         the CLI process's CPU, every thread (/usr/bin/time), over the whole run (its start,
//               the threads' start and the warmup included), s per million tokens received
// and the criterion: TTFT error p99 at 1024 streams with N threads within 2× of the 16-stream figure.
// Run alone: `npm run build && node --import tsx bench/workers.ts`; or at the end of `npm run bench:engine`.
// Options (named apart from bench/engine.ts's): --workers-levels 16,256,1024,4096 --workers N (default:
//          the cores, at least 2) --workers-tokens 64 --workers-step 10 --workers-ttft 20
//          --workers-rounds 2 --workers-per-slot 1 --json; bench/engine.ts skips it with --no-workers.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RequestRecord, RunFile } from '../src/engine/core/types';
import type { ScriptedRequestLog, ScriptedServerProcess } from '../test/support/scriptedServer';
import { startStepServerProcess } from '../test/support/stepServer';
import { median, summarize } from './summary';
import type { Summary } from './summary';

const CLI = join(__dirname, '..', 'dist', 'cli.js');

export interface WorkersBenchOptions {
  readonly levels: readonly number[];
  /** Threads of the "N workers" side. */
  readonly workers: number;
  readonly tokens: number;
  readonly stepMs: number;
  readonly ttftMs: number;
  readonly rounds: number;
  readonly perSlot: number;
}

export interface WorkersMeasured {
  readonly threads: number;
  readonly requests: number;
  readonly failed: number;
  readonly tokens: number;
  readonly ttftError: Summary;
  readonly itlError: Summary;
  readonly cpuSecondsPerMillionTokens: number;
  readonly wallS: number;
}

export interface WorkersLevel {
  readonly streams: number;
  readonly one: WorkersMeasured[];
  readonly many: WorkersMeasured[];
}


/**
 * One run of `streams` concurrent streams on `threads` threads: the real CLI from its bundle (`node
 * dist/cli.js run … --workers T --out`, its threads from dist/worker.js), CPU by /usr/bin/time (every
 * thread, the process's start included: the same for both sides), matched against the server's log
 * by stream id.
 */
async function level(server: ScriptedServerProcess, o: WorkersBenchOptions, streams: number, threads: number): Promise<WorkersMeasured> {
  await server.clearLog();
  const perSlot = Math.max(o.perSlot, Math.ceil(16 / streams));
  const dir = mkdtempSync(join(tmpdir(), 'llmp-workers-'));
  try {
    const out = join(dir, 'run.json');
    const times = join(dir, 'time.txt');
    const args = ['-f', '%U %S', '-o', times, process.execPath, CLI, 'run', '--url', server.url, '--api', 'openai-chat', '--model', 'scripted-model',
      '--concurrency', String(streams), '--requests', String(streams * perSlot), '--warmup', String(Math.min(streams, 64)), '--max-tokens', String(o.tokens),
      '--prompt-tokens', '16', '--workers', String(threads), '--out', out];
    const t0 = performance.now();
    let stderr = '';
    const code = await new Promise<number | null>((resolve) => {
      const child = spawn('/usr/bin/time', args, { stdio: ['ignore', 'ignore', 'pipe'] });
      child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
      child.on('exit', (c) => resolve(c));
    });
    const wallS = (performance.now() - t0) / 1000;
    if (code !== 0) throw new Error(`dist/cli.js run exited with ${code}: ${stderr.slice(-500)}`);
    const [user, system] = readFileSync(times, 'utf8').trim().split('\n').pop()!.split(' ').map(Number);
    const run = JSON.parse(readFileSync(out, 'utf8')) as RunFile;
    if (threads > 1 && run.workload.workers !== threads) throw new Error(`asked for ${threads} threads, the run says ${run.workload.workers ?? 1}`);
    const log = await server.fetchLog();
    const byId = new Map<string, ScriptedRequestLog>();
    for (const e of log) if (e.streamId) byId.set(e.streamId, e);
    return measure(run.requests, byId, { user: user! * 1e6, system: system! * 1e6 }, wallS, threads);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function measure(records: readonly RequestRecord[], byId: ReadonlyMap<string, ScriptedRequestLog>, cpu: NodeJS.CpuUsage, wallS: number, threads: number): WorkersMeasured {
  const ttft: number[] = [];
  const itl: number[] = [];
  let failed = 0;
  let allTokens = 0;
  let tokens = 0;
  for (const r of records) {
    allTokens += r.chunkTimesMs.length;
    if (r.warmup) continue;
    if (r.error) {
      failed++;
      continue;
    }
    const e = byId.get(r.responseId ?? '');
    if (!e) throw new Error(`no server log entry for ${r.responseId}`);
    const writes = e.writes.filter((w) => w.tokens > 0).map((w) => w.at);
    const arrivals = r.chunkTimesMs.map((t) => r.sentAt + t);
    if (arrivals.length !== writes.length) throw new Error(`${arrivals.length} chunks seen, ${writes.length} written`);
    if (arrivals.length === 0) continue;
    tokens += arrivals.length;
    ttft.push(arrivals[0]! - writes[0]!);
    for (let i = 1; i < arrivals.length; i++) itl.push(arrivals[i]! - arrivals[i - 1]! - (writes[i]! - writes[i - 1]!));
  }
  return {
    threads,
    requests: records.filter((r) => !r.warmup).length,
    failed,
    tokens,
    ttftError: summarize(ttft),
    itlError: summarize(itl),
    cpuSecondsPerMillionTokens: (cpu.user + cpu.system) / Math.max(1, allTokens),
    wallS,
  };
}

const f = (n: number) => (Number.isFinite(n) ? n.toFixed(2).padStart(8) : '     n/a');

function row(streams: number, round: number, m: WorkersMeasured): string {
  return `${String(streams).padStart(7)} ${String(round).padStart(2)} ${String(m.threads).padStart(7)} ${String(m.requests).padStart(6)} ${String(m.tokens).padStart(8)} |${f(m.ttftError.p50)} ${f(m.ttftError.p99)} |${f(m.itlError.p50)} ${f(m.itlError.p99)} |${f(m.cpuSecondsPerMillionTokens)} ${f(m.wallS)}${m.failed ? `  ${m.failed} FAILED` : ''}`;
}

/** Runs every level, 1 thread and N threads in turn (swapped every round), printing as it goes; returns the levels. */
export async function benchWorkers(o: WorkersBenchOptions, print: (line: string) => void = console.log): Promise<WorkersLevel[]> {
  if (!existsSync(join(__dirname, '..', 'dist', 'worker.js'))) throw new Error('dist/cli.js and dist/worker.js are missing: run `npm run build` first');
  const server = await startStepServerProcess({ stepMs: o.stepMs, ttftMs: o.ttftMs });
  const out: WorkersLevel[] = [];
  try {
    print(`workers bench: 1 thread vs ${o.workers} worker threads; openai-chat, ${o.tokens} tokens/request, step ${o.stepMs} ms, TTFT ${o.ttftMs} ms; step server in its own process (pid ${server.pid})`);
    print(`machine: ${cpus().length} cores (available parallelism ${availableParallelism()}), load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}; ${o.rounds} rounds, order swapped each round`);
    print('timing errors in ms (client arrival − server write); CPU: the CLI process, every thread, s per million tokens; wall s');
    print('streams  r threads   reqs   tokens |TTFT p50 TTFT p99 | ITL p50  ITL p99 |   CPU/Mt   wall s');
    for (const streams of o.levels) {
      const one: WorkersMeasured[] = [];
      const many: WorkersMeasured[] = [];
      for (let r = 0; r < o.rounds; r++) {
        const order = r % 2 === 0 ? [1, o.workers] : [o.workers, 1];
        for (const threads of order) {
          const m = await level(server, o, streams, threads);
          (threads === 1 ? one : many).push(m);
          print(row(streams, r + 1, m));
        }
      }
      out.push({ streams, one, many });
    }
  } finally {
    await server.close();
  }
  print('');
  print(`medians over rounds                1 thread                           | ${o.workers} threads`);
  print('streams | TTFT p99  ITL p99   CPU/Mt | TTFT p99  ITL p99   CPU/Mt');
  const med = (ms: WorkersMeasured[], pick: (m: WorkersMeasured) => number) => median(ms.map(pick));
  for (const l of out) {
    print(
      `${String(l.streams).padStart(7)} |${f(med(l.one, (m) => m.ttftError.p99))} ${f(med(l.one, (m) => m.itlError.p99))} ${f(med(l.one, (m) => m.cpuSecondsPerMillionTokens))} |${f(med(l.many, (m) => m.ttftError.p99))} ${f(med(l.many, (m) => m.itlError.p99))} ${f(med(l.many, (m) => m.cpuSecondsPerMillionTokens))}`,
    );
  }
  const base = out.find((l) => l.streams === 16);
  const at1024 = out.find((l) => l.streams === 1024);
  if (base && at1024) {
    const b = med(base.one, (m) => m.ttftError.p99);
    const n = med(at1024.many, (m) => m.ttftError.p99);
    const one = med(at1024.one, (m) => m.ttftError.p99);
    print(`criterion: TTFT error p99 at 1024 streams with ${o.workers} threads ${n.toFixed(2)} ms vs ${b.toFixed(2)} ms at 16 streams (one loop): ${(n / b).toFixed(2)}× (target ≤ 2×: ${n <= 2 * b ? 'met' : 'NOT met'}); one loop at 1024: ${one.toFixed(2)} ms`);
  }
  print(`load average at the end: ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  return out;
}

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i !== -1 && process.argv[i + 1] !== undefined ? process.argv[i + 1]! : fallback;
}

/**
 * The options from the command line, each flag named apart from bench/engine.ts's (which calls this
 * at its end): --workers-levels 16,256,1024,4096 --workers N (default: the cores, at least 2)
 * --workers-tokens 64 --workers-step 10 --workers-ttft 20 --workers-rounds 2 --workers-per-slot 1.
 */
export function workersBenchOptions(): WorkersBenchOptions {
  return {
    levels: arg('workers-levels', '16,256,1024,4096').split(',').map(Number),
    workers: Number(arg('workers', String(Math.max(2, availableParallelism())))),
    tokens: Number(arg('workers-tokens', '64')),
    stepMs: Number(arg('workers-step', '10')),
    ttftMs: Number(arg('workers-ttft', '20')),
    rounds: Number(arg('workers-rounds', '2')),
    perSlot: Number(arg('workers-per-slot', '1')),
  };
}

if (require.main === module) {
  const o = workersBenchOptions();
  benchWorkers(o, process.argv.includes('--json') ? () => undefined : console.log)
    .then((levels) => {
      if (process.argv.includes('--json')) console.log(JSON.stringify({ options: o, levels }, null, 2));
    })
    .catch((err: unknown) => {
      console.error(err);
      process.exitCode = 1;
    });
}
