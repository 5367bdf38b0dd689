// Sizing a run's synthetic prompts as the run goes (the arithmetic is promptLength.ts'): with the
// server's tokenizer before anything is sent, at most SIZING_DEADLINE_MS in all and stopped by the
// run's Cancel (no POST after the run returns, its pool destroyed); then from the warmup's usage, with
// one more warmup request at a second length when one length cannot tell the template from the words.
// A sweep sizes once per endpoint and length (SizingCache): its later points start from what an
// earlier one found, and a tokenizer that did not answer is not asked again.
import type { EndpointSpec, NetworkSpec, Prompt, RequestRecord, WorkloadSpec } from '../core/types';
import { serverCounted } from '../core/promptTokens';
import { mayTokenize, tokenCounter } from '../transport/tokenize';
import { correctFromUsage, fitWords, withWords } from './promptLength';
import type { Counted, Sizing } from './promptLength';

/** The tokenizer's part of sizing, every POST of it together: the run starts by then. */
export const SIZING_DEADLINE_MS = 10_000;

/** What a sweep's points learnt of sizing, shared by them: the sizing per endpoint and length, and the endpoints whose tokenizer did not answer. */
export class SizingCache {
  readonly #sizes = new Map<string, Sizing>();
  readonly #noTokenizer = new Set<string>();

  get(key: string): Sizing | undefined {
    return this.#sizes.get(key);
  }

  set(key: string, sizing: Sizing): void {
    const { addedWarmup: _added, ...kept } = sizing;
    this.#sizes.set(key, kept);
  }

  tokenizerAbsent(endpointKey: string): boolean {
    return this.#noTokenizer.has(endpointKey);
  }

  markTokenizerAbsent(endpointKey: string): void {
    this.#noTokenizer.add(endpointKey);
  }
}

export interface SizerOptions {
  readonly apiKey?: string;
  readonly network?: NetworkSpec;
  readonly signal?: AbortSignal;
  /** A line for the user while the run waits on sizing ("sizing 256-token prompts with the server's tokenizer…"). */
  readonly onStatus?: (message: string) => void;
  readonly cache?: SizingCache;
  /** The warmup sends other prompts (RunOptions.warmupPrompts): its usage does not count these. */
  readonly warmupOther?: boolean;
  /** The tokenizer's limit in all (default SIZING_DEADLINE_MS). */
  readonly deadlineMs?: number;
}

function endpointKey(e: EndpointSpec): string {
  return JSON.stringify([e.url, e.api, e.model ?? null, e.headers ?? null]);
}

/** What a prompt's count depends on besides the endpoint: the length, the words (seed, shared prefix, groups), the nonce. */
function lengthKey(e: EndpointSpec, w: WorkloadSpec, asked: number): string {
  const p = w.prompt.kind === 'synthetic' ? w.prompt : undefined;
  return JSON.stringify([endpointKey(e), asked, w.seed, w.prefixCache ?? null, p?.sharedPrefix ?? null, p?.groups ?? null]);
}

/** Warmup requests added at most, each at a length nearer the one asked (a run without a tokenizer whose count is not met at once). */
export const MAX_ADDED_WARMUP = 3;

/** One run's sizing: before it (the tokenizer, or the cache), after its warmup (usage), and the run file's workload as sent. */
export class RunSizer {
  readonly asked: number;
  sizing: Sizing;
  readonly #key: string;
  readonly #options: SizerOptions;
  /** The sizing before the warmup, and the words the workload's warmup was sent with. */
  readonly #before: Sizing;
  /** The warmup requests added: index → words. */
  readonly #added = new Map<number, number>();

  private constructor(asked: number, sizing: Sizing, key: string, options: SizerOptions) {
    this.asked = asked;
    this.sizing = sizing;
    this.#before = sizing;
    this.#key = key;
    this.#options = options;
  }

  /**
   * Sizes before the run: a sweep's earlier point's sizing, else the server's tokenizer (mayTokenize)
   * within the deadline, counts at `sample(words)` (a measured request's prompt as sent, its nonce
   * included), else the words asked (method 'estimate', for the warmup's usage to correct).
   */
  static async start(endpoint: EndpointSpec, w: WorkloadSpec, asked: number, sample: (words: number) => Prompt, options: SizerOptions): Promise<RunSizer> {
    const key = lengthKey(endpoint, w, asked);
    const cached = options.cache?.get(key);
    if (cached) return new RunSizer(asked, cached, key, options);
    const estimate: Sizing = { words: asked, method: 'estimate' };
    const ek = endpointKey(endpoint);
    if (!mayTokenize(endpoint) || options.cache?.tokenizerAbsent(ek) || options.signal?.aborted) return new RunSizer(asked, estimate, key, options);
    const deadlineMs = options.deadlineMs ?? SIZING_DEADLINE_MS;
    options.onStatus?.(`sizing ${asked}-token prompts with the server's tokenizer (at most ${deadlineMs / 1000} s)…`);
    const deadline = AbortSignal.timeout(deadlineMs);
    const signal = options.signal ? AbortSignal.any([options.signal, deadline]) : deadline;
    const net = { ...(options.apiKey !== undefined ? { apiKey: options.apiKey } : {}), ...(options.network ? { network: options.network } : {}), signal, timeoutMs: Math.min(5000, deadlineMs) };
    const counter = await tokenCounter(endpoint, sample(asked), net);
    let sizing = estimate;
    try {
      const fit = counter ? await fitWords(asked, (words) => counter.count(sample(words)), [{ words: asked, count: counter.sampleCount }]) : undefined;
      if (counter && fit) sizing = { words: fit.words, method: 'tokenize', tokenizer: counter.kind, tokensPerWord: fit.tokensPerWord, counted: fit.counted, ...(fit.shortest ? { shortest: true } : {}) };
    } finally {
      await counter?.close();
    }
    // a tokenizer that did not answer (or not in time) is not asked again at a sweep's later points
    if (sizing.method === 'estimate' && !options.signal?.aborted) options.cache?.markTokenizerAbsent(ek);
    if (sizing.method === 'tokenize') options.cache?.set(key, sizing);
    return new RunSizer(asked, sizing, key, options);
  }

  /** The warmup's usage counts (the added requests' too), each at the words its request was sent with. */
  #counted(records: readonly RequestRecord[]): Counted[] {
    const out: Counted[] = [];
    for (const r of records) {
      const count = r.warmup ? serverCounted(r) : undefined;
      if (count !== undefined) out.push({ words: this.#added.get(r.index) ?? this.#before.words, count });
    }
    return out;
  }

  /**
   * Once the workload's warmup is in (sent at the words sized before it), and again after each
   * request added: the words of the next warmup request to add (index `next`), or undefined when the
   * sizing is settled (this.sizing, from the usage counted so far).
   */
  nextWarmup(records: readonly RequestRecord[], next: number): number | undefined {
    if (this.#options.warmupOther) return undefined;
    const canAskMore = this.#added.size < MAX_ADDED_WARMUP && this.#options.signal?.aborted !== true;
    const { sizing, more } = correctFromUsage(this.#before, this.asked, this.#counted(records), canAskMore);
    const added = (n: number) => (n > 0 ? { addedWarmup: n } : {});
    if (more === undefined) {
      this.sizing = { ...sizing, ...added(this.#added.size) };
      this.#options.cache?.set(this.#key, this.sizing);
      return undefined;
    }
    // counted now: the request is sent, and is in the run's warmup even when the run is cancelled before its reply
    this.#added.set(next, more);
    this.sizing = { ...sizing, ...added(this.#added.size) };
    this.#options.onStatus?.(`sizing ${this.asked}-token prompts from the warmup's usage: one more warmup request, at ${more} words`);
    return more;
  }

  /** The workload as sent: its prompts' words, and its warmup with the requests added. */
  workload(w: WorkloadSpec): WorkloadSpec {
    const sized = withWords(w, this.sizing.words);
    return this.sizing.addedWarmup ? { ...sized, warmup: sized.warmup + this.sizing.addedWarmup } : sized;
  }
}
