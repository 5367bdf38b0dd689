// `npm run bench:local-server`: decode throughput and TPOT at parallel 1, 2, 4, 8 on the small
// synthetic model, on the same load: the engine in this process (no HTTP), the bundled server over
// HTTP with node-llama-cpp's prebuilt CPU backend, the bundled server with the native CPU backend when
// one is built (`llm-profiler serve --build native`), and a real llama-server when one is built
// (`npm run build:llama-server`). Targets: HTTP costs <= 5% against in-process; the bundled server
// with the native backend >= 95% of llama-server's throughput.
//
//   node --import tsx bench/localServer.ts [--preset small] [--parallel 1,2,4,8] [--tokens 128]
//       [--prompt-tokens 64] [--rounds 5] [--threads N] [--no-llama-server] [--no-native]
import { availableParallelism } from 'node:os';
import { LlamaEngine } from '../src/localServer/inference';
import { CPU_BACKEND_ENV } from '../src/localServer/cpuBackend';
import type { CpuBackendChoice } from '../src/localServer/cpuBackend';
import { startLocalServer } from '../src/localServer/launcher';
import { findNativeCpuBackend } from '../src/localServer/nativeBuild';
import { findLlamaServer } from '../src/localServer/paths';
import { buildVocabulary, ensureSyntheticModel, presetShape } from '../src/localServer/synthetic';
import { defaultThreads, DEFAULT_BATCH_SIZE } from '../src/localServer/defaults';
import type { SyntheticPreset } from '../src/localServer/presets';

interface Args {
  preset: SyntheticPreset;
  parallel: number[];
  tokens: number;
  promptTokens: number;
  rounds: number;
  threads: number;
  llamaServer: boolean;
  native: boolean;
}

function parseArgs(argv: string[]): Args {
  const a: Args = { preset: 'small', parallel: [1, 2, 4, 8], tokens: 128, promptTokens: 64, rounds: 5, threads: defaultThreads(), llamaServer: true, native: true };
  for (let i = 0; i < argv.length; i++) {
    const f = argv[i];
    const v = () => argv[++i] ?? '';
    if (f === '--preset') a.preset = v() as SyntheticPreset;
    else if (f === '--parallel') a.parallel = v().split(',').map(Number);
    else if (f === '--tokens') a.tokens = Number(v());
    else if (f === '--prompt-tokens') a.promptTokens = Number(v());
    else if (f === '--rounds') a.rounds = Number(v());
    else if (f === '--threads') a.threads = Number(v());
    else if (f === '--no-llama-server') a.llamaServer = false;
    else if (f === '--no-native') a.native = false;
    else throw new Error(`unknown flag ${f}`);
  }
  return a;
}

interface Point {
  tokensPerSecond: number;
  tpotMs: number;
}

const WORDS = 'the model reads a long prompt and then writes one token after another while we time each step'.split(' ');
function promptText(i: number, words: number): string {
  const out: string[] = [`Request ${i}:`];
  for (let k = 0; out.length < words; k++) out.push(WORDS[(k * 7 + i) % WORDS.length]!);
  return out.join(' ');
}

/** Per request: the times of its content pieces. TPOT = (last - first) / (n - 1); throughput = all tokens / wall. */
function summarize(perRequest: number[][], wallMs: number, tokens: number): Point {
  const tpots = perRequest.map((t) => (t.at(-1)! - t[0]!) / (t.length - 1));
  return { tokensPerSecond: (perRequest.length * tokens * 1000) / wallMs, tpotMs: tpots.reduce((a, b) => a + b, 0) / tpots.length };
}

type Runner = { name: string; cpu: string; once(round: number): Promise<Point>; close(): Promise<void> };

async function inProcess(modelPath: string, parallel: number, a: Args): Promise<Runner> {
  const engine = await LlamaEngine.create({ modelPath, parallel, batchSize: DEFAULT_BATCH_SIZE, threads: a.threads, ctxSize: parallel * 1024 });
  return {
    name: 'in-process',
    cpu: engine.cpuBackend.variant,
    async once(round) {
      const t0 = performance.now();
      const times = await Promise.all(
        Array.from({ length: parallel }, async (_, i) => {
          const t: number[] = [];
          const r = await engine.generate({
            tokens: engine.tokenize(promptText(i + round * 100, a.promptTokens), true, false),
            maxTokens: a.tokens,
            ignoreEos: true,
            temperature: 0.8,
            topK: 40,
            topP: 0.95,
            minP: 0.05,
            stop: [],
            cachePrompt: false,
            signal: new AbortController().signal,
            onText: () => t.push(performance.now()),
          });
          if (r.completionTokens !== a.tokens) throw new Error(`in-process: ${r.completionTokens} tokens, not ${a.tokens}`);
          return t;
        }),
      );
      return summarize(times, performance.now() - t0, a.tokens);
    },
    close: () => engine.dispose(),
  };
}

/**
 * The synthetic vocabulary's byte and control tokens, banned as the bundled server bans them: the same
 * sampling work on both servers, and llama-server's output parser never sees a broken byte sequence.
 */
let banned: [number, false][] = [];

async function overHttp(backend: 'bundled' | 'llama-server', modelPath: string, parallel: number, a: Args, cpuBackend: CpuBackendChoice = 'auto'): Promise<Runner> {
  // The server process reads its CPU backend choice from the environment it is started with.
  const before = process.env[CPU_BACKEND_ENV];
  process.env[CPU_BACKEND_ENV] = cpuBackend;
  let h: Awaited<ReturnType<typeof startLocalServer>>;
  try {
    h = await startLocalServer({ backend, model: { kind: 'file', path: modelPath }, parallel, threads: a.threads, batchSize: DEFAULT_BATCH_SIZE, ctxSize: parallel * 1024 });
  } finally {
    if (before === undefined) delete process.env[CPU_BACKEND_ENV];
    else process.env[CPU_BACKEND_ENV] = before;
  }
  const { url } = h;
  let cpu = 'native -march=native';
  if (backend === 'bundled') {
    const stats = (await (await fetch(`${url}/stats`)).json()) as { cpuBackend?: { variant: string } };
    cpu = stats.cpuBackend?.variant ?? '?';
    if ((cpuBackend === 'native') !== (cpu === 'native') && cpuBackend !== 'auto') throw new Error(`bundled: asked for the ${cpuBackend} CPU backend, runs ${cpu}`);
  }
  return {
    name: backend === 'bundled' ? `bundled (${cpu})` : backend,
    cpu,
    async once(round) {
      const t0 = performance.now();
      const times = await Promise.all(
        Array.from({ length: parallel }, async (_, i) => {
          const res = await fetch(`${h.url}/v1/completions`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ prompt: promptText(i + round * 100, a.promptTokens), max_tokens: a.tokens, ignore_eos: true, stream: true, temperature: 0.8, top_k: 40, top_p: 0.95, min_p: 0.05, cache_prompt: false, logit_bias: banned, stream_options: { include_usage: true } }),
          });
          if (res.status !== 200) throw new Error(`${backend}: HTTP ${res.status} ${await res.text()}`);
          const t: number[] = [];
          const dec = new TextDecoder();
          let buf = '';
          let usage = 0;
          let lastEvent = '';
          for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
            const now = performance.now();
            buf += dec.decode(chunk, { stream: true });
            let k: number;
            while ((k = buf.indexOf('\n\n')) >= 0) {
              const ev = buf.slice(0, k).replace(/^data: /, '');
              buf = buf.slice(k + 2);
              if (ev === '[DONE]') continue;
              lastEvent = ev;
              const obj = JSON.parse(ev) as { choices?: { text?: string; finish_reason?: string | null }[]; usage?: { completion_tokens: number } };
              const c = obj.choices?.[0];
              if (c && !c.finish_reason) t.push(now);
              if (obj.usage) usage = obj.usage.completion_tokens;
            }
          }
          if (usage !== a.tokens) throw new Error(`${backend}: ${usage} tokens, not ${a.tokens}; last event: ${lastEvent.slice(0, 300)}`);
          return t.slice(0, a.tokens);
        }),
      );
      return summarize(times, performance.now() - t0, a.tokens);
    },
    close: () => h.stop(),
  };
}

/** The median round by throughput (the machine is shared: a median, of rounds interleaved with the other runners). */
const median = (ps: Point[]): Point => ps.slice().sort((x, y) => x.tokensPerSecond - y.tokensPerSecond)[Math.floor(ps.length / 2)]!;
const f1 = (n: number) => n.toFixed(1);

async function main(): Promise<void> {
  const a = parseArgs(process.argv.slice(2));
  const shape = presetShape(a.preset);
  const t0 = performance.now();
  const modelPath = await ensureSyntheticModel(shape);
  console.log(`model: ${a.preset} (${modelPath}), ready in ${Math.round(performance.now() - t0)} ms`);
  const vocab = buildVocabulary(shape.vocab);
  banned = [...vocab.types].flatMap((t, i) => (t === 1 ? [] : [[i, false] as [number, false]]));
  const llamaServer = a.llamaServer ? findLlamaServer() : undefined;
  const native = findNativeCpuBackend();
  const withNative = a.native && native.ok;
  console.log(`threads ${a.threads} on ${availableParallelism()} cores; ${a.tokens} tokens per request, prompt ~${a.promptTokens} words; median of ${a.rounds} interleaved rounds after a warm-up`);
  console.log(llamaServer ? `llama-server: ${llamaServer}` : 'llama-server: not built (npm run build:llama-server), skipped');
  console.log(withNative ? `native CPU backend: ${native.ok ? native.lib : ''}` : `native CPU backend: ${a.native ? (native.ok ? '' : native.why) : '--no-native'}, skipped`);
  console.log('note: on a shared, busy machine these figures move from run to run.\n');
  const head = ['parallel', 'in-proc tok/s', 'HTTP cost', 'prebuilt tok/s', 'TPOT ms'];
  if (withNative) head.push('native tok/s', 'TPOT ms');
  if (llamaServer) head.push('llama-server tok/s', 'TPOT ms', 'prebuilt/llama-server');
  if (llamaServer && withNative) head.push('native/llama-server');
  const rows: string[][] = [head];
  for (const p of a.parallel) {
    // All loaded at once and measured in turn, round by round, so a burst of load from elsewhere
    // hits them alike; each one's median round is kept.
    const inProc = await inProcess(modelPath, p, a);
    const runners: Runner[] = [inProc, await overHttp('bundled', modelPath, p, a, 'prebuilt')];
    if (withNative) runners.push(await overHttp('bundled', modelPath, p, a, 'native'));
    if (llamaServer) runners.push(await overHttp('llama-server', modelPath, p, a));
    const results = runners.map(() => [] as Point[]);
    try {
      for (const r of runners) await r.once(-1); // warm-up
      for (let round = 0; round < a.rounds; round++) for (const [i, r] of runners.entries()) results[i]!.push(await r.once(round));
    } finally {
      for (const r of runners) await r.close();
    }
    const m = results.map(median);
    const ip = m[0]!;
    const pre = m[1]!;
    const nat = withNative ? m[2] : undefined;
    const ls = llamaServer ? m.at(-1) : undefined;
    // HTTP cost: the in-process engine against the bundled server on the same CPU backend.
    const same = inProc.cpu === 'native' ? nat : pre;
    const row = [String(p), `${f1(ip.tokensPerSecond)} (${inProc.cpu})`, same ? `${f1((1 - same.tokensPerSecond / ip.tokensPerSecond) * 100)}%` : '-', f1(pre.tokensPerSecond), f1(pre.tpotMs)];
    if (nat) row.push(f1(nat.tokensPerSecond), f1(nat.tpotMs));
    if (ls) row.push(f1(ls.tokensPerSecond), f1(ls.tpotMs), `${f1((pre.tokensPerSecond / ls.tokensPerSecond) * 100)}%`);
    if (ls && nat) row.push(`${f1((nat.tokensPerSecond / ls.tokensPerSecond) * 100)}%`);
    rows.push(row);
    console.log(`${row.join('\t')}\t[rounds tok/s: ${runners.map((r, i) => `${r.name} ${results[i]!.map((x) => x.tokensPerSecond.toFixed(0)).join('/')}`).join('; ')}]`);
  }
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  console.log(`\n${rows.map((r) => r.map((c, i) => c.padStart(widths[i]!)).join('  ')).join('\n')}`);
  console.log('\ntargets: HTTP cost <= 5%; bundled (native CPU backend)/llama-server >= 95%');
}

main().catch((e: unknown) => {
  console.error((e as Error).stack ?? e);
  process.exitCode = 1;
});
