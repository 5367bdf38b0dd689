// Planning a run: which prompt request k sends, with what (sentWith.ts), kept cold or not, and whether
// it repeats an earlier one; the options a run is given and the client's options it implies. Shared
// by the runner on one thread and by each worker thread (workers/workerRun.ts).
import { randomInt } from 'node:crypto';
import type { CacheBust, ClientOptions, EndpointSpec, NetworkSpec, Progress, Prompt, PromptRecord, RequestRecord, RequestSpec, WorkloadSpec } from '../core/types';
import { sessionSource } from '../prompts/conversations';
import type { SessionSource } from '../prompts/conversations';
import { cacheBustFor, sentPrompt } from '../transport/adapters/cacheBust';
import type { EndpointAdapter } from '../transport/adapters/adapter';
import { adapterFor } from '../transport/adapters/registry';
import { groupPrompt, syntheticPrompt } from '../prompts/syntheticPrompts';
import { readTrace, traceSource } from '../prompts/traces';
import type { Trace } from '../prompts/traces';
import { readPrompts } from '../prompts/promptSource';
import { promptRecord, PromptRecords, recordsPrompt, resolveSampling } from '../core/sentWith';
import type { SentParams } from '../core/sentWith';
import { connectionsFor, isSessions } from '../core/workload';
import type { SizingCache } from './sizing';

export interface RunOptions {
  /** Sent as a bearer token; never written to the run file, and scrubbed from error texts. */
  readonly apiKey?: string;
  /** Proxy and certificates; holds the proxy's credentials, so never written either (the run file gets networkRecord's view). */
  readonly network?: NetworkSpec;
  /** Aborting stops the run within 100 ms: in-flight requests are aborted, finished ones kept, the run returned with `cancelled: true`. */
  readonly signal?: AbortSignal;
  /** The first at once, then at most every 100 ms, and a last one at the end. */
  onProgress?(p: Progress): void;
  /** With onProgress: carry the streams in flight (Progress.streams) for a live view. Off for the CLI: no chunk time is kept twice. */
  readonly streams?: boolean;
  /** Each finished request, warmup ones included (marked `warmup: true`). */
  onRecord?(r: RequestRecord): void;
  /** Prompts to cycle through instead of the workload's prompt source. */
  readonly prompts?: readonly Prompt[];
  /** Prompts for the warmup requests, cycled (default: the same as the measured ones). */
  readonly warmupPrompts?: readonly Prompt[];
  readonly runId?: string;
  /** Recorded in the run file when the API kind was detected (`--api auto`). */
  readonly detectedApi?: boolean;
  /** A passing state worth a line while the run waits on it ("sizing 256-token prompts with the server's tokenizer…"). */
  onStatus?(message: string): void;
  /** (a sweep's points) What sizing synthetic prompts found at earlier points (sizing.ts). */
  readonly sizingCache?: SizingCache;
}

/**
 * Where each request's prompt comes from (measured request k cycles from the first prompt again),
 * and which prompt it is: the same key for the same text, so that a repeat is known without keeping
 * every text sent. Synthetic prompts have no key: each is unique from its first word.
 */
interface PromptSource {
  promptFor(index: number, warmup: boolean, k: number): { readonly prompt: Prompt; readonly key?: number; readonly tags?: RecordTags };
  /** (trace) The trace the requests replay: their times (the runner's schedule) and lines. */
  readonly trace?: Trace;
  /** (multi-turn) The conversations the sessions send (sessions.ts); promptFor then gives the warmup's single requests only. */
  readonly sessions?: SessionSource;
  /** (synthetic) The words each prompt is given: sizing (promptLength.ts) changes them before and after the warmup. */
  readonly size?: { words: number };
}

/** The same text: every message's role and content. */
function promptIdentity(p: Prompt): string {
  return p.messages.map((m) => `${m.role}\u0000${m.content}`).join('\u0001');
}

/** Cycles finite lists (measured, and warmup when given apart), keyed by the first position of each text. */
function listSource(measured: readonly Prompt[], warmup: readonly Prompt[] | undefined): PromptSource {
  const all = warmup && warmup.length > 0 ? [...measured, ...warmup] : measured;
  const firstOf = new Map<string, number>();
  const keys = all.map((p, i) => {
    const id = promptIdentity(p);
    const first = firstOf.get(id);
    if (first !== undefined) return first;
    firstOf.set(id, i);
    return i;
  });
  const warmups = all.length - measured.length;
  return {
    promptFor: (_index, isWarmup, k) => {
      const i = isWarmup && warmups > 0 ? measured.length + (k % warmups) : k % measured.length;
      return { prompt: all[i]!, key: keys[i]! };
    },
  };
}

export async function promptSource(w: WorkloadSpec, given: readonly Prompt[] | undefined, warmup: readonly Prompt[] | undefined): Promise<PromptSource> {
  // sessions send their conversations (a multi-turn dataset's `given` are its conversations as whole prompts, for sizing)
  if (isSessions(w)) {
    const sessions = await sessionSource(w);
    const list = warmup && warmup.length > 0 ? listSource(warmup, undefined) : undefined;
    return { sessions, promptFor: (index, _warmup, k) => (list ? list.promptFor(index, false, k) : { prompt: sessions.warmupPrompt(k) }) };
  }
  if (given && given.length > 0) return listSource(given, warmup);
  const src = w.prompt;
  if (src.kind === 'synthetic') {
    const g = src.groups;
    const size = { words: src.words ?? src.tokens };
    const synthetic: PromptSource = {
      size,
      // SGLang's generated shared prefix: request k is of group k mod the groups' count
      promptFor: (index, _warmup, k) => ({ prompt: g ? groupPrompt(index, k % g.count, size.words, g.prefixTokens, w.seed, src.tokens) : syntheticPrompt(index, size.words, { seed: w.seed, sharedPrefix: src.sharedPrefix, estimatedTokens: src.tokens }) }),
    };
    if (!warmup || warmup.length === 0) return synthetic;
    const list = listSource(warmup, undefined);
    return { size, promptFor: (index, isWarmup, k) => (isWarmup ? list.promptFor(index, false, k) : synthetic.promptFor(index, false, k)) };
  }
  if (src.kind === 'trace') return traceSource(await readTrace(src.path, src.format), w.seed);
  if (src.kind === 'chat') throw new Error('a chat workload sends sessions'); // isSessions above: never here
  const { prompts } = await readPrompts(src);
  return listSource(prompts, warmup);
}

/**
 * Digits only, of fixed width: a nonce then counts the same tokens for every request of a run and
 * every run (each digit a token, or three to a token, in the common tokenizers), so that a length
 * sized on one request holds for all (promptLength.ts). 6 digits to a request's index: a run of up to
 * a million requests, the rest a digit longer.
 */
const NONCE_DIGITS = 6;

/** Random digits: the run's part of every nonce (unique across runs, sweeps' points included). */
function nonceBase(): string {
  return String(randomInt(10 ** NONCE_DIGITS)).padStart(NONCE_DIGITS, '0');
}

/** The nonce of request `index` in a run whose part is `base`: "[482917-000042] " leads its prompt. */
function nonceOf(base: string, index: number): string {
  return `${base}-${String(index).padStart(NONCE_DIGITS, '0')}`;
}

/** The client options for a workload: one warmed connection per concurrent request. */
export function clientOptions(w: WorkloadSpec, apiKey: string | undefined, network: NetworkSpec | undefined): ClientOptions {
  return {
    connections: connectionsFor(w),
    // An open loop (or a trace) is never capped unless --max-concurrency says so: a capped one turns into a closed loop.
    ...(w.mode.kind !== 'closed' && w.mode.maxConcurrency === undefined ? { maxConnections: null } : {}),
    timeoutMs: w.timeoutMs,
    idleTimeoutMs: w.idleTimeoutMs,
    ...(w.respectRetryAfter ? { respectRetryAfter: true } : {}),
    ...(apiKey !== undefined ? { apiKey } : {}),
    ...(network !== undefined ? { network } : {}),
  };
}

/** A request as planned: its spec, and the earlier request that sent the same prompt, if one did. */
export interface Planned {
  readonly spec: RequestSpec;
  readonly repeatOf?: number;
  /** What the request's record carries beside what the client measured (a session's turn, a trace's line). */
  readonly tags?: RecordTags;
}

/** Fields a planned request's record is given by the sender, as planned. */
export type RecordTags = Partial<Pick<RequestRecord, 'session' | 'turn' | 'historyTokens' | 'traceLine'>>;

/** What a prompt is sent with, worked out once per prompt object: the values, and its index in RunFile.prompts when it has a record. */
interface SentWith {
  readonly sent: SentParams;
  readonly ref?: number;
}

/**
 * Turns request k of a phase into its spec: the prompt from the source, sent with the values the
 * precedence gives (sentWith.ts: the workload's explicit values, else the prompt file's, else the
 * workload's defaults), kept cold the API's way when the workload says so (workload.prefixCache;
 * absent: warm, as runs were before it existed), and whether it repeats a prompt sent earlier.
 * Records what each prompt-file prompt was sent with (`prompts`), in the order first sent.
 */
export class Planner {
  readonly #w: WorkloadSpec;
  readonly #source: PromptSource;
  readonly #endpoint: EndpointSpec;
  readonly #adapter: EndpointAdapter;
  readonly #cacheBust: CacheBust | undefined;
  readonly #nonceBase = nonceBase();
  /** Prompt key → the index of the first request that sent it. */
  readonly #firstSent = new Map<number, number>();
  readonly #sentWith = new WeakMap<Prompt, SentWith>();
  readonly #records = new PromptRecords();
  /** The run sends its workload more than once (`run --repeat`): synthetic prompts are tracked too. */
  readonly #repeats: boolean;

  constructor(w: WorkloadSpec, source: PromptSource, endpoint: EndpointSpec, repeats = false) {
    this.#w = w;
    this.#repeats = repeats;
    this.#source = source;
    this.#endpoint = endpoint;
    this.#adapter = adapterFor(endpoint.api);
    this.#cacheBust = w.prefixCache === 'cold' ? cacheBustFor(endpoint.api) : undefined;
  }

  /** (multi-turn) The conversations the sessions send, when the workload sends sessions. */
  get sessions(): SessionSource | undefined {
    return this.#source.sessions;
  }

  /** (trace) The trace the measured requests replay. */
  get trace(): Trace | undefined {
    return this.#source.trace;
  }

  /** (synthetic) The words each prompt is given now. */
  get words(): number | undefined {
    return this.#source.size?.words;
  }

  /** (synthetic) Gives later prompts `words` words (sizing: promptLength.ts). */
  resize(words: number): void {
    if (this.#source.size) this.#source.size.words = Math.max(1, Math.floor(words));
  }

  /** The prompt measured request `index` (workload position k) would send, as the server gets it (its nonce included); nothing recorded. */
  sentPromptFor(index: number, k: number): Prompt {
    const { prompt } = this.#source.promptFor(index, false, k);
    return sentPrompt(this.#specOf(index, false, prompt, this.#w.seed + index, 0));
  }

  /** RunFile.prompts so far: what each prompt-file (or caller's) prompt was sent with, in the order first sent. */
  get prompts(): readonly PromptRecord[] {
    return this.#records.list;
  }

  /**
   * `identity`: the workload position whose request this one repeats (a later repetition of `run
   * --repeat` sends what the first sent, its prompt and seed; default: its own index). The nonce
   * that keeps a request cold follows `index`, so a repeated request is never served warm by it.
   */
  plan(index: number, warmup: boolean, k: number, scheduledAt: number, identity = index): Planned {
    const w = this.#w;
    const { prompt, key: listKey, tags } = this.#source.promptFor(identity, warmup, k);
    const spec = this.#specOf(index, warmup, prompt, w.seed + identity, scheduledAt);
    const planned: Planned = tags ? { spec, tags } : { spec };
    // A synthetic prompt has no key: it repeats only where the run sends the same workload again (a
    // repetition), where its workload position keys it (negative: apart from a list's positions).
    const key = listKey ?? (this.#repeats ? -1 - identity : undefined);
    if (key === undefined) return planned;
    const first = this.#firstSent.get(key);
    if (first === undefined) {
      this.#firstSent.set(key, index);
      return planned;
    }
    return { ...planned, repeatOf: first };
  }

  /**
   * A request of a prompt built as the run goes (a session's turn: its history and its new user
   * turn), sent with what the precedence gives, as plan's; measured, never a repeat. `keepReply`: the
   * client keeps the reply's text (SentRecord.reply) for the next turn.
   */
  planPrompt(index: number, prompt: Prompt, scheduledAt: number, options: { readonly keepReply?: boolean; readonly tags?: RecordTags } = {}): Planned {
    const spec = this.#specOf(index, false, prompt, this.#w.seed + index, scheduledAt);
    return { spec: options.keepReply ? { ...spec, keepReply: true } : spec, ...(options.tags ? { tags: options.tags } : {}) };
  }

  #specOf(index: number, warmup: boolean, prompt: Prompt, seed: number, scheduledAt: number): RequestSpec {
    const { sent, ref } = this.#sentWithOf(prompt);
    const bust = this.#cacheBust;
    return {
      index,
      warmup,
      prompt,
      ...sent,
      seed,
      ignoreEos: this.#w.ignoreEos,
      ...(ref !== undefined ? { promptRef: ref } : {}),
      scheduledAt,
      ...(bust !== undefined ? { cacheBust: bust } : {}),
      ...(bust === 'nonce' ? { nonce: nonceOf(this.#nonceBase, index) } : {}),
    };
  }

  #sentWithOf(prompt: Prompt): SentWith {
    const known = this.#sentWith.get(prompt);
    if (known !== undefined) return known;
    const resolved = resolveSampling(this.#w, prompt);
    const ref = recordsPrompt(this.#w, prompt) ? this.#records.add(promptRecord(prompt, resolved, this.#notes(prompt, resolved.sent))) : undefined;
    const out: SentWith = ref !== undefined ? { sent: resolved.sent, ref } : { sent: resolved.sent };
    this.#sentWith.set(prompt, out);
    return out;
  }

  /** What the API cannot take of this prompt (images on a text-only API, a response format it has no field for): from the adapter that builds the body, once per prompt. */
  #notes(prompt: Prompt, sent: SentParams): readonly string[] | undefined {
    try {
      const spec: RequestSpec = { index: 0, warmup: false, prompt, ...sent, seed: 0, ignoreEos: this.#w.ignoreEos, scheduledAt: 0 };
      return this.#adapter.buildRequest(spec, this.#endpoint).notes;
    } catch {
      return undefined; // a request that cannot be built fails when sent, with its own error
    }
  }
}

/** The planner a run of `w` against `endpoint` uses (for tests: what each request would send). */
export async function createPlanner(w: WorkloadSpec, endpoint: EndpointSpec, prompts?: readonly Prompt[], warmupPrompts?: readonly Prompt[]): Promise<Planner> {
  return new Planner(w, await promptSource(w, prompts, warmupPrompts), endpoint);
}

/**
 * RunFile.prompts as a run of `w` with these prompts will record it, before anything is sent (the
 * live report's first frame): the planner's own order, the warmup requests then the measured ones,
 * each going through the list at most once.
 */
export function plannedPrompts(w: WorkloadSpec, endpoint: EndpointSpec, prompts: readonly Prompt[] | undefined): readonly PromptRecord[] {
  if (!prompts || prompts.length === 0) return [];
  const planner = new Planner(w, listSource(prompts, undefined), endpoint);
  for (let k = 0; k < Math.min(w.warmup, prompts.length); k++) planner.plan(k, true, k, 0);
  for (let k = 0; k < Math.min(w.requests ?? prompts.length, prompts.length); k++) planner.plan(w.warmup + k, false, k, 0);
  return planner.prompts;
}
