// `npm run bench:engine`: how exactly, and how cheaply, the streaming client measures.
// A server in its own process logs when it wrote every chunk; per level of concurrent streams, each
// client streams from it in turn (their order rotated every round, so the drift of a shared machine
// falls on all of them), and each chunk's arrival stamp is compared with the server's write:
//   cli     the CLI's path: runWorkload (runner + scheduler + client), as `llm-profiler run` calls it
//           through executeJob, in this process (so its CPU is read around the call alone); one
//           event loop unless --cli-workers N
//   bare    a bare node:http client (keep-alive agent) that only stamps each `data` event and keeps
//           the bytes; tokens are matched to stamps after the measurement (issue 15's comparison)
//   undici  an undici Pool (the client's settings) whose handler only stamps each onData: undici's
//           parser and dispatch without our handler, queue, parse or runner
//   floor   bare node:net sockets, a hand-written request, each data event stamped: no HTTP parser
//   cliproc (not by default) the real `dist/cli.js run … --out` in its own process, progress on; CPU
//           by /usr/bin/time, the process's start included
// Printed per client, level and round:
//   TTFT error  client first-token arrival − server first-token write (epoch ms, both processes'
//               performance.timeOrigin + performance.now()), one per request
//   ITL error   client gap − server gap, for every pair of consecutive chunks (|error| p99 also shown:
//               one late chunk makes one gap long and the next short, so both tails count)
//   CPU         this process's CPU (user + system) over the client's whole call, warmup included,
//               s per million tokens received (warmup included): also µs per token
//   burst       (step server) per step, (last stamp − first stamp) / (chunks − 1): µs per chunk of a
//               burst, the per-data-event cost on the hot path; the server's own spacing beside it
// then per level the median over rounds of each figure, the ratio cli / bare (issue 15's target:
// TTFT and ITL error p99 ≤ 1.25× the bare client's at 64 and 256 streams), and where the CPU goes.
// Servers (--server): `steps` (default) is test/support/stepServer.ts, an engine loop that writes one
// chunk to every stream back to back each step, as a continuous-batching engine does: the client gets
// a burst of N chunks every step. `timers` is the scripted server, each stream on its own timer.
// Options: --levels 1,16,64,256 --tokens 128 --itl 10 --ttft 20 --rounds 3 --per-slot 2
//          --server steps|timers --clients cli,bare,undici,floor[,cliproc] --cli-workers 1 --json
//          --no-workers (skips bench/workers.ts, which follows)
// `--parse-only`: µs per event of bytes → SSE/NDJSON → JSON → adapter, no network.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request as httpRequest, Agent } from 'node:http';
import { connect } from 'node:net';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'undici';
import type { Dispatcher } from 'undici';
import { adapterFor } from '../src/engine/transport/adapters/registry';
import { runWorkload } from '../src/engine/run/runner';
import { createJsonStreamParser } from '../src/engine/transport/streamParsers';
import { defaultWorkload } from '../src/engine/core/workload';
import type { RequestRecord, RunFile } from '../src/engine/core/types';
import type { ApiKind } from '../src/engine/core/apis';
import { startScriptedServerProcess } from '../test/support/scriptedServer';
import type { ScriptedRequestLog, ScriptedServerProcess } from '../test/support/scriptedServer';
import { startStepServerProcess } from '../test/support/stepServer';
import { median, summarize } from './summary';
import type { Summary } from './summary';

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i !== -1 && process.argv[i + 1] !== undefined ? process.argv[i + 1]! : fallback;
}

const levels = arg('levels', '1,16,64,256').split(',').map(Number);
const tokens = Number(arg('tokens', '128'));
const itlMs = Number(arg('itl', '10'));
const ttftMs = Number(arg('ttft', '20'));
const rounds = Number(arg('rounds', '3'));
const perSlotArg = Number(arg('per-slot', '2'));
const serverKind = arg('server', 'steps');
// The CLI's path on one event loop (what issue 15 §3 compares); more: its worker threads (--workers).
const cliWorkers = Number(arg('cli-workers', '1'));
const clientKinds = arg('clients', 'cli,bare,undici,floor').split(',') as ClientKind[];
const asJson = process.argv.includes('--json');
if (serverKind !== 'steps' && serverKind !== 'timers') throw new Error(`--server must be steps or timers (got ${serverKind})`);
for (const c of clientKinds) if (!['cli', 'cliproc', 'bare', 'undici', 'floor'].includes(c)) throw new Error(`--clients: unknown client ${c} (cli, cliproc, bare, undici, floor)`);

type ClientKind = 'cli' | 'cliproc' | 'bare' | 'undici' | 'floor';

interface Measured {
  requests: number;
  failed: number;
  tokens: number;
  ttftError: Summary;
  itlError: Summary;
  itlAbsError: Summary;
  cpuSecondsPerMillionTokens: number;
  /** Step server: per step, (last stamp − first stamp) / (chunks − 1), µs: the client's cost per chunk of a burst (p50 over steps); the server's own spacing beside it. */
  burstUsPerChunk?: number;
  serverUsPerChunk?: number;
  wallS: number;
}


/** Arrival times (epoch ms) of each token chunk, against the server's write times. */
interface Pair {
  arrivals: number[];
  writes: number[];
  steps: (number | undefined)[];
}

function measure(pairs: Pair[], failed: number, cpu: NodeJS.CpuUsage, cpuTokens: number, wallS: number): Measured {
  const ttft: number[] = [];
  const itl: number[] = [];
  let tokenCount = 0;
  const bursts = new Map<number, { n: number; a0: number; a1: number; w0: number; w1: number }>();
  for (const { arrivals, writes, steps } of pairs) {
    if (arrivals.length !== writes.length) throw new Error(`${arrivals.length} chunks seen, ${writes.length} written`);
    if (arrivals.length === 0) continue;
    tokenCount += arrivals.length;
    for (let i = 0; i < arrivals.length; i++) {
      const k = steps[i];
      if (k === undefined) continue;
      const b = bursts.get(k);
      if (b === undefined) bursts.set(k, { n: 1, a0: arrivals[i]!, a1: arrivals[i]!, w0: writes[i]!, w1: writes[i]! });
      else {
        b.n++;
        b.a0 = Math.min(b.a0, arrivals[i]!);
        b.a1 = Math.max(b.a1, arrivals[i]!);
        b.w0 = Math.min(b.w0, writes[i]!);
        b.w1 = Math.max(b.w1, writes[i]!);
      }
    }
    ttft.push(arrivals[0]! - writes[0]!);
    for (let i = 1; i < arrivals.length; i++) itl.push(arrivals[i]! - arrivals[i - 1]! - (writes[i]! - writes[i - 1]!));
  }
  return {
    requests: pairs.length + failed,
    failed,
    tokens: tokenCount,
    ttftError: summarize(ttft),
    itlError: summarize(itl),
    itlAbsError: summarize(itl.map(Math.abs)),
    cpuSecondsPerMillionTokens: (cpu.user + cpu.system) / Math.max(1, cpuTokens),
    ...burstCosts(bursts),
    wallS,
  };
}

function burstCosts(bursts: Map<number, { n: number; a0: number; a1: number; w0: number; w1: number }>): { burstUsPerChunk?: number; serverUsPerChunk?: number } {
  const client: number[] = [];
  const server: number[] = [];
  for (const b of bursts.values()) {
    if (b.n < 2) continue;
    client.push(((b.a1 - b.a0) * 1000) / (b.n - 1));
    server.push(((b.w1 - b.w0) * 1000) / (b.n - 1));
  }
  return client.length === 0 ? {} : { burstUsPerChunk: median(client), serverUsPerChunk: median(server) };
}

function tokenWrites(e: ScriptedRequestLog): { writes: number[]; steps: (number | undefined)[] } {
  const tw = e.writes.filter((w) => w.tokens > 0);
  return { writes: tw.map((w) => w.at), steps: tw.map((w) => w.step) };
}

/** The CLI's path: runWorkload with the CLI's defaults but the level's concurrency, warmup one request per stream. */
async function cliLevel(server: ScriptedServerProcess, streams: number, perSlot: number): Promise<Measured> {
  await server.clearLog();
  const workload = defaultWorkload({
    mode: { kind: 'closed', concurrency: streams },
    requests: streams * perSlot,
    warmup: streams,
    maxTokens: tokens,
    prompt: { kind: 'synthetic', tokens: 16, sharedPrefix: false },
    workers: cliWorkers,
  });
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  // As the CLI: progress reports on (it prints them), no streams in them.
  const run = await runWorkload({ url: server.url, api: 'openai-chat', model: 'scripted-model' }, workload, { onProgress: () => undefined });
  const wallS = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  return matchRecords(server, run.requests, cpu, wallS);
}

/** Records (warmup ones skipped but counted in the CPU's tokens) against the server's log, by stream id. */
async function matchRecords(server: ScriptedServerProcess, records: readonly RequestRecord[], cpu: NodeJS.CpuUsage, wallS: number): Promise<Measured> {
  const log = await server.fetchLog();
  const byId = new Map<string, ScriptedRequestLog>();
  for (const e of log) if (e.streamId) byId.set(e.streamId, e);
  let failed = 0;
  let allTokens = 0;
  const pairs: Pair[] = [];
  for (const r of records) {
    allTokens += r.chunkTimesMs.length;
    if (r.warmup) continue;
    if (r.error) {
      failed++;
      continue;
    }
    const e = byId.get(r.responseId ?? '');
    if (!e) throw new Error(`no server log entry for ${r.responseId}`);
    pairs.push({ arrivals: r.chunkTimesMs.map((t) => r.sentAt + t), ...tokenWrites(e) });
  }
  return measure(pairs, failed, cpu, allTokens, wallS);
}

/**
 * The real CLI in its own process: `node dist/cli.js run … --out` (built by `npm run bench:engine`),
 * progress lines on its stderr as a user sees them; CPU by /usr/bin/time, process start included.
 */
async function cliProcLevel(server: ScriptedServerProcess, streams: number, perSlot: number): Promise<Measured> {
  await server.clearLog();
  const dir = mkdtempSync(join(tmpdir(), 'llmp-bench-'));
  try {
    const out = join(dir, 'run.json');
    const times = join(dir, 'time.txt');
    const args = ['-f', '%U %S', '-o', times, process.execPath, join(__dirname, '..', 'dist', 'cli.js'), 'run', '--url', server.url, '--api', 'openai-chat', '--model', 'scripted-model',
      '--concurrency', String(streams), '--requests', String(streams * perSlot), '--warmup', String(streams), '--max-tokens', String(tokens), '--prompt-tokens', '16', '--workers', String(cliWorkers), '--out', out];
    const t0 = performance.now();
    const code = await new Promise<number | null>((resolve) => {
      const child = spawn('/usr/bin/time', args, { stdio: ['ignore', 'ignore', 'ignore'] });
      child.on('exit', (c) => resolve(c));
    });
    const wallS = (performance.now() - t0) / 1000;
    if (code !== 0) throw new Error(`dist/cli.js run exited with ${code}`);
    const [user, system] = readFileSync(times, 'utf8').trim().split('\n').pop()!.split(' ').map(Number);
    const run = JSON.parse(readFileSync(out, 'utf8')) as RunFile;
    return matchRecords(server, run.requests, { user: user! * 1e6, system: system! * 1e6 }, wallS);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const NEEDLE = '"delta":{"content":"tok';

/** Stamps of the token chunks in a byte stream: a chunk counts as arrived when its needle is complete. */
function arrivalsOf(chunks: Buffer[], times: number[]): number[] {
  const arrivals: number[] = [];
  let carry = '';
  chunks.forEach((b, k) => {
    const text = carry + b.toString('latin1');
    let from = 0;
    for (let at = text.indexOf(NEEDLE, from); at !== -1; at = text.indexOf(NEEDLE, from)) {
      arrivals.push(times[k]!);
      from = at + NEEDLE.length;
    }
    carry = text.slice(Math.max(from, text.length - NEEDLE.length + 1));
  });
  return arrivals;
}

interface Raw {
  seed: number;
  chunks: Buffer[];
  times: number[];
}

/** Warm rounds, then the closed loop of `perSlot` requests per stream; CPU over both, matched afterwards by seed. */
async function rawLevel(server: ScriptedServerProcess, streams: number, perSlot: number, one: (seed: number) => Promise<Raw>, seedBase: number): Promise<Measured> {
  await server.clearLog();
  const results: Raw[] = [];
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const warm = await Promise.all(Array.from({ length: streams }, (_, i) => one(seedBase + i)));
  await Promise.all(
    Array.from({ length: streams }, async (_, slot) => {
      for (let r = 0; r < perSlot; r++) results.push(await one(seedBase + 100_000 + slot + r * streams));
    }),
  );
  const wallS = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  const log = await server.fetchLog();
  const bySeed = new Map(log.map((e) => [e.seed, e]));
  const pairs = results.map((res) => ({ arrivals: arrivalsOf(res.chunks, res.times), ...tokenWrites(bySeed.get(res.seed)!) }));
  const warmTokens = warm.reduce((n, w) => n + arrivalsOf(w.chunks, w.times).length, 0);
  return measure(pairs, 0, cpu, warmTokens + pairs.reduce((n, p) => n + p.arrivals.length, 0), wallS);
}

const requestBody = (seed: number): string =>
  JSON.stringify({ model: 'scripted-model', messages: [{ role: 'user', content: `bench ${seed}` }], stream: true, max_tokens: tokens, seed });

/** A bare node:http client: keep-alive connections, each `data` event stamped and its bytes kept, nothing else. */
async function bareLevel(server: ScriptedServerProcess, streams: number, perSlot: number): Promise<Measured> {
  const { hostname, port } = new URL(server.url);
  const agent = new Agent({ keepAlive: true, maxSockets: streams });
  const one = (seed: number) =>
    new Promise<Raw>((resolve, reject) => {
      const chunks: Buffer[] = [];
      const times: number[] = [];
      const body = requestBody(seed);
      const req = httpRequest({ agent, host: hostname, port: Number(port), method: 'POST', path: '/v1/chat/completions', headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
        res.on('data', (b: Buffer) => {
          times.push(performance.timeOrigin + performance.now());
          chunks.push(b);
        });
        res.on('end', () => resolve({ seed, chunks, times }));
      });
      req.on('error', reject);
      req.end(body);
    });
  try {
    return await rawLevel(server, streams, perSlot, one, 700_000);
  } finally {
    agent.destroy();
  }
}

/**
 * undici alone: the same Pool settings as the client (one request per keep-alive connection), a
 * handler that only stamps each onData and keeps the bytes: undici's parser without our handler,
 * queue or parse step.
 */
async function undiciLevel(server: ScriptedServerProcess, streams: number, perSlot: number): Promise<Measured> {
  const pool = new Pool(server.url, { connections: streams, pipelining: 1, keepAliveTimeout: 60_000, headersTimeout: 0, bodyTimeout: 0 });
  const one = (seed: number) =>
    new Promise<Raw>((resolve, reject) => {
      const chunks: Buffer[] = [];
      const times: number[] = [];
      const body = requestBody(seed);
      pool.dispatch(
        { path: '/v1/chat/completions', method: 'POST', headers: { 'content-type': 'application/json' }, body, reset: false, blocking: true },
        {
          onConnect: () => undefined,
          onHeaders: () => true,
          onData(b: Buffer) {
            times.push(performance.timeOrigin + performance.now());
            chunks.push(b);
            return true;
          },
          onComplete: () => resolve({ seed, chunks, times }),
          onError: reject,
        } as unknown as Dispatcher.DispatchHandler,
      );
    });
  try {
    return await rawLevel(server, streams, perSlot, one, 600_000);
  } finally {
    await pool.close();
  }
}

/** The floor: bare sockets, a hand-written HTTP/1.1 request (connection: close), each data event stamped. */
async function floorLevel(server: ScriptedServerProcess, streams: number, perSlot: number): Promise<Measured> {
  const { hostname, port } = new URL(server.url);
  const one = (seed: number) =>
    new Promise<Raw>((resolve) => {
      const chunks: Buffer[] = [];
      const times: number[] = [];
      const body = requestBody(seed);
      const socket = connect(Number(port), hostname, () => {
        socket.write(`POST /v1/chat/completions HTTP/1.1\r\nhost: ${hostname}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
      });
      socket.setNoDelay(true);
      socket.on('data', (b: Buffer) => {
        times.push(performance.timeOrigin + performance.now());
        chunks.push(b);
      });
      socket.on('close', () => resolve({ seed, chunks, times }));
      socket.on('error', () => undefined);
    });
  return rawLevel(server, streams, perSlot, one, 800_000);
}

/**
 * The parse path alone (bytes → SSE/NDJSON → JSON → adapter), one event per feed as a server sends
 * them one token per write: µs per event, no network. The part of the CPU figure that is ours.
 */
function parseOnly(kind: ApiKind, events: number): { usPerEvent: number; eventsPerSecond: number } {
  const adapter = adapterFor(kind);
  const payload =
    kind === 'ollama'
      ? (i: number) => `${JSON.stringify({ model: 'scripted-model', created_at: '2025-01-01T00:00:00.000Z', message: { role: 'assistant', content: `tok${i} ` }, done: false })}\n`
      : (i: number) => `data: ${JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'scripted-model', choices: [{ index: 0, delta: { content: `tok${i} ` }, logprobs: null, finish_reason: null }] })}\n\n`;
  const chunks = Array.from({ length: 1000 }, (_, i) => Buffer.from(payload(i)));
  let seen = 0;
  const run = (n: number) => {
    const parser = createJsonStreamParser(adapter.framing, { onValue: (v) => { if (adapter.interpret(v).content) seen++; } });
    for (let i = 0; i < n; i++) parser.feedBytes(chunks[i % 1000]!);
    parser.end();
  };
  run(20_000);
  const t0 = performance.now();
  run(events);
  const ms = performance.now() - t0;
  if (seen < events) throw new Error('parse bench lost events');
  return { usPerEvent: (ms * 1000) / events, eventsPerSecond: events / (ms / 1000) };
}

const f = (n: number) => (Number.isFinite(n) ? n.toFixed(3).padStart(8) : '     n/a');

function row(label: string, streams: number, round: number, m: Measured): string {
  return `${String(streams).padStart(7)} ${String(round).padStart(2)} ${label.padEnd(6)} ${String(m.requests).padStart(5)} ${String(m.tokens).padStart(7)} |${f(m.ttftError.p50)} ${f(m.ttftError.p99)} ${f(m.ttftError.max)} |${f(m.itlError.p50)} ${f(m.itlError.p99)} ${f(m.itlError.max)} ${f(m.itlAbsError.p99)} | ${f(m.cpuSecondsPerMillionTokens)}${m.burstUsPerChunk !== undefined ? ` | burst ${m.burstUsPerChunk.toFixed(1).padStart(5)} µs/chunk (server ${m.serverUsPerChunk!.toFixed(1)})` : ''}${m.failed ? `  ${m.failed} FAILED` : ''}`;
}

interface LevelResult {
  streams: number;
  rounds: Partial<Record<ClientKind, Measured>>[];
  medians: Partial<Record<ClientKind, { ttftP99: number; itlP99: number; itlAbsP99: number; cpu: number; burstUsPerChunk?: number }>>;
  ratio?: { ttftP99: number; itlP99: number; itlAbsP99: number; cpu: number };
}

const RUNNERS: Record<ClientKind, (s: ScriptedServerProcess, streams: number, perSlot: number) => Promise<Measured>> = { cli: cliLevel, cliproc: cliProcLevel, bare: bareLevel, undici: undiciLevel, floor: floorLevel };

async function main(): Promise<void> {
  if (process.argv.includes('--parse-only')) {
    for (const kind of ['openai-chat', 'ollama'] as const) {
      const p = parseOnly(kind, 200_000);
      console.log(`parse only (${kind}): ${p.usPerEvent.toFixed(2)} µs per event, ${Math.round(p.eventsPerSecond).toLocaleString('en-US')} events/s`);
    }
    return;
  }
  const parseUs = parseOnly('openai-chat', 100_000).usPerEvent;
  const server = serverKind === 'steps' ? await startStepServerProcess({ stepMs: itlMs, ttftMs }) : await startScriptedServerProcess({ ttftMs, itlMs, roleChunk: true });
  const results: LevelResult[] = [];
  try {
    if (!asJson) {
      console.log(`engine bench: openai-chat, ${tokens} tokens/request, TTFT ${ttftMs} ms, ITL ${itlMs} ms; ${serverKind === 'steps' ? 'step server (one engine loop: every stream\'s chunk written back to back each step)' : 'scripted server (a timer per stream)'} in its own process (pid ${server.pid})`);
      console.log(`machine: ${cpus().length} cores, load average ${loadavg().map((l) => l.toFixed(2)).join(' ')} at start; clients ${clientKinds.join(', ')}, ${rounds} rounds, order rotated each round`);
      console.log('timing errors in ms, client arrival − server write; CPU in client CPU seconds per million tokens');
      console.log('streams  r who     reqs  tokens |TTFT p50 TTFT p99 TTFT max | ITL p50  ITL p99  ITL max |ITL|p99 |   CPU s/Mtok');
    }
    for (const streams of levels) {
      // At least 16 requests per level, so a p99 means something at low concurrency.
      const perSlot = Math.max(perSlotArg, Math.ceil(16 / streams));
      const level: LevelResult = { streams, rounds: [], medians: {} };
      for (let r = 0; r < rounds; r++) {
        const got: Partial<Record<ClientKind, Measured>> = {};
        for (let i = 0; i < clientKinds.length; i++) {
          const kind = clientKinds[(i + r) % clientKinds.length]!;
          got[kind] = await RUNNERS[kind](server, streams, perSlot);
          if (!asJson) console.log(row(kind, streams, r + 1, got[kind]));
        }
        level.rounds.push(got);
      }
      for (const kind of clientKinds) {
        const ms = level.rounds.map((g) => g[kind]!);
        level.medians[kind] = {
          ttftP99: median(ms.map((m) => m.ttftError.p99)),
          itlP99: median(ms.map((m) => m.itlError.p99)),
          itlAbsP99: median(ms.map((m) => m.itlAbsError.p99)),
          cpu: median(ms.map((m) => m.cpuSecondsPerMillionTokens)),
          ...(ms[0]!.burstUsPerChunk !== undefined ? { burstUsPerChunk: median(ms.map((m) => m.burstUsPerChunk ?? NaN)) } : {}),
        };
      }
      const c = level.medians.cli;
      const b = level.medians.bare;
      if (c && b) level.ratio = { ttftP99: c.ttftP99 / b.ttftP99, itlP99: c.itlP99 / b.itlP99, itlAbsP99: c.itlAbsP99 / b.itlAbsP99, cpu: c.cpu / b.cpu };
      results.push(level);
      if (!asJson) {
        for (const kind of clientKinds) {
          const m = level.medians[kind]!;
          console.log(`${String(streams).padStart(7)} median ${kind.padEnd(7)} TTFT p99 ${f(m.ttftP99)}  ITL p99 ${f(m.itlP99)}  |ITL| p99 ${f(m.itlAbsP99)}  CPU ${f(m.cpu)}${m.burstUsPerChunk !== undefined ? `  burst ${m.burstUsPerChunk.toFixed(1)} µs/chunk` : ''}`);
        }
        const md = level.medians;
        if (md.cli && md.undici && md.floor) {
          // CPU s per million tokens is CPU µs per token: the same figure, read per event.
          console.log(`${String(streams).padStart(7)} where the CPU goes, µs per token (medians): socket reads (floor) ${md.floor.cpu.toFixed(1)}; undici's parser and dispatch +${(md.undici.cpu - md.floor.cpu).toFixed(1)}; our handler, queue, parse and runner +${(md.cli.cpu - md.undici.cpu).toFixed(1)} (the parse alone ${parseUs.toFixed(1)}, --parse-only)`);
        }
        const q = level.ratio;
        if (q) console.log(`${String(streams).padStart(7)} cli/bare      TTFT p99 ${f(q.ttftP99)}× ITL p99 ${f(q.itlP99)}× |ITL| p99 ${f(q.itlAbsP99)}× CPU ${f(q.cpu)}×  ${streams >= 64 ? `(target ≤ 1.25× at 64 and 256 streams: ${q.ttftP99 <= 1.25 && q.itlP99 <= 1.25 ? 'met' : 'NOT met'})` : ''}`);
      }
    }
  } finally {
    await server.close();
  }
  if (asJson) {
    console.log(JSON.stringify({ server: serverKind, tokens, ttftMs, itlMs, rounds, results }, null, 2));
    return;
  }
  console.log(`load average at the end: ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  // --workers N: 1 thread vs N at 16, 256, 1024 and 4096 streams (bench/workers.ts)
  if (!process.argv.includes('--no-workers')) await import('./workers').then(async (m) => { console.log(''); await m.benchWorkers(m.workersBenchOptions()); });
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
