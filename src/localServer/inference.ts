// The bundled server's inference engine: node-llama-cpp (CPU only: its prebuilt binary, with the
// native CPU backend of cpuBackend.ts when one is built), one context
// with `parallel` sequences (slots), continuous batching with a FIFO queue beyond the slots.
//
// Two things node-llama-cpp 3.21.1 does not do on its own, done here through its internals
// (checked at start; without them the engine still works, with the upstream behaviour):
// 1. Full batches. Its dispatch loop decides whether to loop again a few microtasks after a batch
//    resolves, before every sequence has sampled and queued its next token, so with 2 sequences the
//    batches alternate (1 token each). We yield once (setImmediate) after each batch, in the
//    per-sequence `afterBatchAction` hook that the loop awaits, so all sequences queue first.
// 2. Reusing a slot while others decode. Erasing a sequence's KV cells takes the context lock, which
//    the dispatch loop holds for as long as any sequence has work, so a new request would wait for
//    every other stream to end. We clear the slot between two batches from the same hook instead
//    (the loop holds the lock then, and no decode is in flight), or under the lock when idle.
import type { Llama, LlamaContext, LlamaContextSequence, LlamaModel, Token, TokenBias } from 'node-llama-cpp';
import { Rng } from '../engine/core/random';
import { cpuBackendChoice, cpuBackendInUse, prepareCpuBackend } from './cpuBackend';
import type { CpuBackendChoice, CpuBackendInUse } from './cpuBackend';
import { SYNTHETIC_NAME_PREFIX } from './synthetic';
import { loadNodeLlamaCpp } from './nodeLlamaCpp';

/** What decoding produced: tokens, when the first came (0: none), why it stopped, the text. */
interface Decoded {
  count: number;
  tFirst: number;
  finish: GenerateResult['finishReason'];
  text: string;
}

/** Token to text, holding back a multi-byte character split over byte tokens until it is whole (at most 4 tokens). */
class TextAssembler {
  readonly #model: LlamaModel;
  readonly #pending: Token[] = [];
  readonly #recent: Token[] = [];

  constructor(model: LlamaModel) {
    this.#model = model;
  }

  /** The text this token completes ('' while a character is still split). */
  push(token: Token): string {
    this.#pending.push(token);
    const piece = this.#model.detokenize(this.#pending, false, this.#recent);
    if (piece.endsWith('\uFFFD') && this.#pending.length < 4) return '';
    for (const t of this.#pending) this.#recent.push(t);
    if (this.#recent.length > 8) this.#recent.splice(0, this.#recent.length - 8);
    this.#pending.length = 0;
    return piece;
  }
}

/** A chat in ChatML, ending where the assistant's reply begins: the synthetic models' template. */
export function chatML(messages: readonly { role: string; content: string }[]): string {
  let text = '';
  for (const m of messages) text += `<|im_start|>${m.role}\n${m.content}<|im_end|>\n`;
  return `${text}<|im_start|>assistant\n`;
}

export interface EngineOptions {
  readonly modelPath: string;
  readonly parallel: number;
  /** Prefill chunk: the most tokens in one engine step. */
  readonly batchSize: number;
  readonly threads: number;
  /** Total context over all slots (each slot gets ctxSize / parallel), as llama-server's -c. */
  readonly ctxSize: number;
  /** Off only to show the upstream behaviour (the stats endpoint then reports split batches). */
  readonly fullBatches?: boolean;
  /** The llama.cpp CPU backend: the native build when cached (auto), or insist on one. Default: $LLM_PROFILER_CPU_BACKEND, else auto. */
  readonly cpuBackend?: CpuBackendChoice;
  readonly log?: (line: string) => void;
}

export interface GenerateRequest {
  readonly tokens: readonly Token[];
  /** undefined: until end of generation or the slot's context is full. */
  readonly maxTokens?: number;
  readonly ignoreEos: boolean;
  readonly seed?: number;
  readonly temperature: number;
  readonly topK: number;
  readonly topP: number;
  readonly minP: number;
  readonly stop: readonly string[];
  /** Reuse the slot's cached prompt prefix (llama-server's cache_prompt). Off: every prompt token is evaluated, so a seed reproduces exactly. */
  readonly cachePrompt?: boolean;
  readonly signal: AbortSignal;
  /** Called with each piece of text as it is generated (a token's text). */
  onText?(text: string): void;
}

export interface GenerateResult {
  readonly promptTokens: number;
  /** Prompt tokens actually evaluated (the rest came from the slot's cached prefix). */
  readonly evaluatedPromptTokens: number;
  readonly completionTokens: number;
  readonly finishReason: 'stop' | 'length' | 'aborted';
  readonly text: string;
  readonly promptMs: number;
  readonly predictedMs: number;
  readonly queuedMs: number;
  readonly slot: number;
}

export interface StepStat {
  /** Tokens in the batch. */
  readonly tokens: number;
  /** Sequences in the batch. */
  readonly sequences: number;
  /** Slots that had work (prefill or decode) when the batch was built. */
  readonly busySlots: number;
  readonly ms: number;
}

/**
 * Totals since the engine started, as llama.cpp's server keeps them for its /metrics (never reset by
 * /stats?reset): prompt tokens count when their prefill ends, generated ones when the request ends.
 */
export interface EngineTotals {
  /** Prompt tokens evaluated (those taken from a slot's cached prefix are not). */
  readonly promptTokens: number;
  readonly promptMs: number;
  readonly predictedTokens: number;
  readonly predictedMs: number;
  /** Engine steps (llama_decode calls). */
  readonly decodes: number;
  /** Busy slots summed over the steps. */
  readonly busySlots: number;
  /** The most tokens a slot has held. */
  readonly maxSlotTokens: number;
}

export interface EngineStats {
  readonly steps: number;
  /** Steps whose batch held every busy slot. */
  readonly fullSteps: number;
  readonly tokens: number;
  /** Count of steps by number of sequences in the batch. */
  readonly sequencesPerStep: Readonly<Record<string, number>>;
  /** The last steps, oldest first. */
  readonly recent: readonly StepStat[];
  readonly fullBatchesEnabled: boolean;
}

type SlotPhase = 'idle' | 'starting' | 'prefill' | 'decode';

interface Slot {
  readonly id: number;
  readonly seq: LlamaContextSequence;
  phase: SlotPhase;
  requestStartedAt: number;
}

interface QueuedJob {
  readonly req: GenerateRequest;
  readonly enqueuedAt: number;
  start(slot: Slot): void;
  fail(e: unknown): void;
}

/** The node-llama-cpp 3.21.1 internals the engine reaches into (see the file comment). */
interface SeqInternals {
  _sequenceId: number;
  _contextTokens: Token[];
  _nextTokenIndex: number;
  _takeIntervalCheckpointIfNeededAfterBatch: (len: number) => unknown;
  _checkpoints?: { pruneFromEndToIndex?(i: number): void };
}
interface NativeCtx {
  initBatch(size: number): unknown;
  addToBatch(...args: unknown[]): unknown;
  decodeBatch(): Promise<unknown>;
  removeTokenCellsFromSequence(seqId: number, start: number, end: number): boolean;
  disposeSequence(seqId: number): void;
}

const RECENT_STEPS = 512;

/**
 * How one engine step's token budget (the batch size) is shared, as llama-server does it: every
 * sequence with work gets one token first (so decoding streams advance every step), then the rest
 * goes to prompts in queue order: a long prompt is prefilled in chunks of what is left.
 * (node-llama-cpp 3.21.1's "maximumParallelism" hands a long prompt more than the batch holds, and
 * the batch fitter then drops the decoding sequences: every decode stalls for the whole prefill.)
 *
 * The result is emitted in sequence-id order: llama.cpp splits a batch over several sequences (a
 * non-unified KV cache, as node-llama-cpp always makes) into one ubatch per run of consecutive,
 * increasing ids (`split_equal`), so 8 sequences queued in arrival order cost up to 8 decodes.
 */
export function decodeFirstStrategy<T extends { readonly tokens: readonly unknown[] }>(
  { items, size }: { readonly items: readonly T[]; readonly size: number },
  sequenceIdOf: (item: T) => number = () => 0,
): { item: T; processAmount: number }[] {
  let left = size;
  const out = items.map((item) => ({ item, processAmount: 0 }));
  for (const r of out) {
    if (left === 0) break;
    if (r.item.tokens.length === 0) continue;
    r.processAmount = 1;
    left--;
  }
  for (const r of out) {
    if (left === 0) break;
    const more = Math.min(r.item.tokens.length - r.processAmount, left);
    r.processAmount += more;
    left -= more;
  }
  // node-llama-cpp treats 0 as 1: items that get nothing this step are left out.
  return out.filter((r) => r.processAmount > 0).sort((a, b) => sequenceIdOf(a.item) - sequenceIdOf(b.item));
}

export class LlamaEngine {
  readonly #llama: Llama;
  readonly #model: LlamaModel;
  readonly #context: LlamaContext;
  readonly #slots: Slot[];
  readonly #queue: QueuedJob[] = [];
  readonly #opts: EngineOptions;
  readonly #neverBias: TokenBias | undefined;
  readonly #sampleable: Token[];
  readonly #synthetic: boolean;
  readonly #slotContext: number;
  readonly #cpuBackend: CpuBackendInUse;
  #internals = false;
  #pendingClears: { slot: Slot; keep: number; done: boolean; resolve(): void }[] = [];
  #yieldPromise: Promise<void> | undefined;
  #stats = { steps: 0, fullSteps: 0, tokens: 0, perStep: new Map<number, number>(), recent: [] as StepStat[] };
  #totals = { promptTokens: 0, promptMs: 0, predictedTokens: 0, predictedMs: 0, decodes: 0, busySlots: 0, maxSlotTokens: 0 };
  #disposed = false;

  private constructor(llama: Llama, model: LlamaModel, context: LlamaContext, opts: EngineOptions, neverBias: TokenBias | undefined, sampleable: Token[], cpuBackend: CpuBackendInUse) {
    this.#cpuBackend = cpuBackend;
    this.#llama = llama;
    this.#model = model;
    this.#context = context;
    this.#opts = opts;
    this.#neverBias = neverBias;
    this.#sampleable = sampleable;
    this.#synthetic = neverBias !== undefined;
    this.#slotContext = context.contextSize;
    this.#slots = [];
    for (let i = 0; i < opts.parallel; i++) this.#slots.push({ id: i, seq: context.getSequence(), phase: 'idle', requestStartedAt: 0 });
    this.#patch();
  }

  static async create(opts: EngineOptions): Promise<LlamaEngine> {
    const nlc = await loadNodeLlamaCpp();
    const log = opts.log ?? (() => undefined);
    // Before node-llama-cpp initialises: the native CPU backend, when built, replaces the prebuilt one.
    const plan = prepareCpuBackend(opts.cpuBackend ?? cpuBackendChoice());
    const llama = await nlc.getLlama({
      gpu: false,
      build: 'never', // never download or compile: the prebuilt CPU binary only
      usePrebuiltBinaries: true,
      skipDownload: true,
      progressLogs: false,
      maxThreads: opts.threads,
      logLevel: nlc.LlamaLogLevel.warn,
      logger: (level, message) => log(`llama.cpp ${level}: ${message.trimEnd()}`),
    });
    const cpu = cpuBackendInUse();
    log(cpu.kind === 'native'
      ? `CPU backend: native, built for this CPU (${cpu.path})`
      : `CPU backend: ${cpu.kind} ${cpu.variant} (${cpu.path || 'not found in the process maps'})${plan.native ? '' : `; native build: ${plan.why}`}`);
    const model = await llama.loadModel({ modelPath: opts.modelPath, gpuLayers: 0 });
    const perSlot = Math.max(64, Math.floor(opts.ctxSize / opts.parallel));
    // A synthetic model's context_length is only a number synthetic.ts wrote (random weights, never
    // trained to a length): its slots get what was asked. A real model's stop at its trained context.
    const synthetic = String(model.fileInfo.metadata?.general?.name ?? '').startsWith(SYNTHETIC_NAME_PREFIX);
    // The batching strategy needs the context, which only exists once createContext returns.
    const created: { context?: LlamaContext } = {};
    const context = await model.createContext({
      sequences: opts.parallel,
      contextSize: synthetic ? perSlot : Math.min(perSlot, model.trainContextSize || perSlot),
      batchSize: opts.batchSize,
      threads: { ideal: opts.threads, min: opts.threads },
      batching: {
        dispatchSchedule: 'nextCycle',
        // A batch item carries its queued decode's token array: that finds the item's sequence id.
        itemPrioritizationStrategy: (options) =>
          decodeFirstStrategy(options, (item) => {
            const queue = (created.context as unknown as { _queuedDecodes?: { tokens: unknown; sequenceId: number }[] } | undefined)?._queuedDecodes;
            return queue?.find((q) => q.tokens === item.tokens)?.sequenceId ?? 0;
          }),
      },
      flashAttention: 'auto', // as llama-server's default (-fa auto)
      failedCreationRemedy: false,
    });
    created.context = context;
    let neverBias: TokenBias | undefined;
    const sampleable: Token[] = [];
    // A synthetic model's byte-fallback and control tokens are never sampled, so its text stays
    // readable; a user's model samples what it samples.
    const types = (model.fileInfo.metadata as { tokenizer?: { ggml?: { token_type?: readonly number[] } } }).tokenizer?.ggml?.token_type;
    if (synthetic && types) {
      neverBias = new nlc.TokenBias(model.tokenizer);
      types.forEach((t, i) => {
        const tok = i as Token;
        if (t === 1) sampleable.push(tok);
        else if (!model.isEogToken(tok)) neverBias!.set(tok, 'never');
      });
    }
    return new LlamaEngine(llama, model, context, opts, neverBias, sampleable, cpu);
  }

  /** The llama.cpp CPU backend this process runs (native build or prebuilt variant). */
  get cpuBackend(): CpuBackendInUse {
    return this.#cpuBackend;
  }
  get modelName(): string {
    return String(this.#model.fileInfo.metadata?.general?.name ?? 'model');
  }
  get slotContextSize(): number {
    return this.#slotContext;
  }
  get parallel(): number {
    return this.#slots.length;
  }
  get queued(): number {
    return this.#queue.length;
  }
  get fullBatchesActive(): boolean {
    return this.#internals && this.#opts.fullBatches !== false;
  }

  tokenize(text: string, addBos: boolean, specialTokens: boolean): Token[] {
    const toks = this.#model.tokenize(text, specialTokens);
    const bos = this.#model.tokens.bos;
    if (addBos && bos != null && this.#model.tokens.shouldPrependBosToken && toks[0] !== bos) return [bos, ...toks];
    return toks;
  }

  /**
   * The chat prompt as text, as llama.cpp's `/apply-template` gives it: ChatML for synthetic models
   * (what chatTokens tokenizes), the model's own template's tokens written out otherwise.
   */
  async templateText(messages: readonly { role: string; content: string }[]): Promise<string> {
    if (this.#synthetic) return chatML(messages);
    return this.#model.detokenize(await this.chatTokens(messages), true);
  }

  /** The chat prompt as tokens: ChatML for synthetic models, the model's own template otherwise. */
  async chatTokens(messages: readonly { role: string; content: string }[]): Promise<Token[]> {
    if (this.#synthetic) return this.tokenize(chatML(messages), true, true);
    const nlc = await loadNodeLlamaCpp();
    const wrapper = nlc.resolveChatWrapper(this.#model);
    type Item = Parameters<typeof wrapper.generateContextState>[0]['chatHistory'][number];
    const history: Item[] = [];
    for (const m of messages) {
      if (m.role === 'system') history.push({ type: 'system', text: m.content });
      else if (m.role === 'assistant') history.push({ type: 'model', response: [m.content] });
      else history.push({ type: 'user', text: m.content });
    }
    history.push({ type: 'model', response: [] });
    const { contextText } = wrapper.generateContextState({ chatHistory: history });
    return contextText.tokenize(this.#model.tokenizer);
  }

  slots(): { id: number; phase: SlotPhase; tokens: number }[] {
    return this.#slots.map((s) => ({ id: s.id, phase: s.phase, tokens: s.seq.nextTokenIndex }));
  }

  stats(reset = false): EngineStats {
    const s = this.#stats;
    const out: EngineStats = {
      steps: s.steps,
      fullSteps: s.fullSteps,
      tokens: s.tokens,
      sequencesPerStep: Object.fromEntries([...s.perStep].sort((a, b) => a[0] - b[0])),
      recent: s.recent.slice(),
      fullBatchesEnabled: this.fullBatchesActive,
    };
    if (reset) this.#stats = { steps: 0, fullSteps: 0, tokens: 0, perStep: new Map(), recent: [] };
    return out;
  }

  totals(): EngineTotals {
    return { ...this.#totals };
  }

  /** Runs one request: waits for a free slot (FIFO), then prefill and decode. Rejects only on engine errors. */
  generate(req: GenerateRequest): Promise<GenerateResult> {
    if (this.#disposed) return Promise.reject(new Error('the engine is shut down'));
    const maxPrompt = this.#slotContext - 1;
    if (req.tokens.length === 0) return Promise.reject(new RequestError('the prompt is empty'));
    if (req.tokens.length >= maxPrompt) {
      return Promise.reject(new RequestError(this.#tooLong(req)));
    }
    return new Promise<GenerateResult>((resolve, reject) => {
      const job: QueuedJob = {
        req,
        enqueuedAt: performance.now(),
        start: (slot) => {
          this.#run(slot, req, job.enqueuedAt).then(resolve, reject).finally(() => this.#release(slot));
        },
        fail: reject,
      };
      const free = this.#slots.find((s) => s.phase === 'idle');
      if (free) {
        free.phase = 'starting';
        job.start(free);
        return;
      }
      this.#queue.push(job);
      req.signal.addEventListener(
        'abort',
        () => {
          const i = this.#queue.indexOf(job);
          if (i >= 0) {
            this.#queue.splice(i, 1);
            resolve({ promptTokens: req.tokens.length, evaluatedPromptTokens: 0, completionTokens: 0, finishReason: 'aborted', text: '', promptMs: 0, predictedMs: 0, queuedMs: performance.now() - job.enqueuedAt, slot: -1 });
          }
        },
        { once: true },
      );
    });
  }

  /** Why a prompt cannot be served, with the server's own flags and the --ctx-size that would serve it. */
  #tooLong(req: GenerateRequest): string {
    const slots = this.#slots.length;
    const total = this.#slotContext * slots;
    const want = Math.ceil((req.tokens.length + (req.maxTokens !== undefined && req.maxTokens > 0 ? Math.min(req.maxTokens, 4096) : 256) + 64) / 256) * 256;
    return `the prompt has ${req.tokens.length} tokens, more than a slot holds: ${this.#slotContext} tokens (this server's --ctx-size ${total} over --parallel ${slots}); ` +
      `start it with --ctx-size ${want * slots} or more (or fewer --parallel slots)`;
  }

  async dispose(): Promise<void> {
    if (this.#disposed) return;
    this.#disposed = true;
    for (const j of this.#queue.splice(0)) j.fail(new Error('the server is shutting down'));
    await this.#context.dispose().catch(() => undefined);
    await this.#model.dispose().catch(() => undefined);
    await this.#llama.dispose().catch(() => undefined);
  }

  #release(slot: Slot): void {
    slot.phase = 'idle';
    const next = this.#queue.shift();
    if (next && !this.#disposed) {
      slot.phase = 'starting';
      next.start(slot);
    }
  }

  async #run(slot: Slot, req: GenerateRequest, enqueuedAt: number): Promise<GenerateResult> {
    const started = performance.now();
    slot.requestStartedAt = started;
    const prompt = req.tokens;
    // Keep the slot's cached prefix (as llama-server's cache_prompt); at least one token is evaluated.
    const cached = slot.seq.contextTokens;
    let keep = 0;
    if (req.cachePrompt !== false) while (keep < cached.length && keep < prompt.length - 1 && cached[keep] === prompt[keep]) keep++;
    await this.#clearSlot(slot, keep);
    keep = slot.seq.nextTokenIndex;
    const base = { promptTokens: prompt.length, evaluatedPromptTokens: prompt.length - keep, slot: slot.id, queuedMs: started - enqueuedAt };
    if (req.signal.aborted) return { ...base, evaluatedPromptTokens: 0, completionTokens: 0, finishReason: 'aborted', text: '', promptMs: 0, predictedMs: 0 };

    slot.phase = 'prefill';
    const tPrompt = performance.now();
    const it = slot.seq.evaluate(prompt.slice(keep), {
      temperature: req.temperature,
      topK: req.topK,
      topP: req.topP,
      minP: req.minP,
      seed: req.seed,
      tokenBias: this.#neverBias,
      yieldEogToken: true, // we decide when to stop: exact max_tokens, ignore_eos
    });
    let out: Decoded;
    const onFirstToken = (at: number) => {
      this.#totals.promptTokens += base.evaluatedPromptTokens;
      this.#totals.promptMs += at - tPrompt;
    };
    try {
      out = await this.#decode(slot, req, it, onFirstToken);
    } finally {
      // Not busy from here: the batch statistics must not wait for this slot.
      slot.phase = 'starting';
      await it.return(undefined).catch(() => undefined);
    }
    const tEnd = performance.now();
    const tFirst = out.tFirst;
    this.#totals.predictedTokens += out.count;
    if (tFirst) this.#totals.predictedMs += tEnd - tFirst;
    this.#totals.maxSlotTokens = Math.max(this.#totals.maxSlotTokens, slot.seq.nextTokenIndex);
    return { ...base, completionTokens: out.count, finishReason: out.finish, text: out.text, promptMs: (tFirst || tEnd) - tPrompt, predictedMs: tFirst ? tEnd - tFirst : 0 };
  }

  /** Takes tokens from the sequence until a stop: end of generation, a stop string, max_tokens, a full slot or an abort. */
  async #decode(slot: Slot, req: GenerateRequest, it: AsyncGenerator<Token, void, Token | undefined>, onFirstToken: (at: number) => void): Promise<Decoded> {
    const out: Decoded = { count: 0, tFirst: 0, finish: 'length', text: '' };
    const text = new TextAssembler(this.#model);
    let replacement: Token | undefined;
    // ignore_eos replacements are seeded like the request, so a seed reproduces the text
    const rng = new Rng(req.seed ?? Math.floor(Math.random() * 2 ** 31));
    for (;;) {
      const r = await it.next(replacement);
      replacement = undefined;
      if (r.done) return { ...out, finish: 'stop' };
      if (out.count === 0) {
        out.tFirst = performance.now();
        slot.phase = 'decode';
        onFirstToken(out.tFirst);
      }
      let token = r.value;
      if (this.#model.isEogToken(token)) {
        if (!req.ignoreEos) return { ...out, count: out.count + 1, finish: 'stop' };
        // As llama-server's ignore_eos (EOG banned): feed and show a normal token in its place.
        token = this.#pickReplacement(rng.nextU32());
        replacement = token;
      }
      out.count++;
      const piece = text.push(token);
      if (piece) {
        out.text += piece;
        req.onText?.(piece);
        if (req.stop.length && req.stop.some((s) => s && out.text.includes(s))) return { ...out, finish: 'stop' };
      }
      if (req.maxTokens !== undefined && out.count >= req.maxTokens) return { ...out, finish: 'length' };
      if (slot.seq.nextTokenIndex + 1 >= this.#slotContext) return { ...out, finish: 'length' };
      if (req.signal.aborted) return { ...out, finish: 'aborted' };
    }
  }

  #pickReplacement(r: number): Token {
    if (this.#sampleable.length) return this.#sampleable[r % this.#sampleable.length]!;
    // A user's model: any token that is not end-of-generation.
    const vocab = (this.#model.fileInfo.metadata as { tokenizer?: { ggml?: { tokens?: readonly unknown[] } } }).tokenizer?.ggml?.tokens?.length ?? 256;
    for (let i = 0; i < 64; i++) {
      const t = ((r + i * 7919) % Math.max(1, vocab)) as Token;
      if (!this.#model.isEogToken(t)) return t;
    }
    return 0 as Token;
  }

  /** Erases the slot's KV cells from `keep` on, without waiting for other slots to finish (file comment, 2). */
  async #clearSlot(slot: Slot, keep: number): Promise<void> {
    if (slot.seq.nextTokenIndex <= keep) return;
    if (!this.#internals) {
      await slot.seq.eraseContextTokenRanges([{ start: keep, end: slot.seq.nextTokenIndex }]);
      return;
    }
    await new Promise<void>((resolve) => {
      const job = { slot, keep, done: false, resolve };
      this.#pendingClears.push(job);
      // When no batch is running, the hook will not come: take the context lock through the public
      // API, with ranges resolved only once the lock is held (the hook may have done the work by then).
      const lazy = [{ start: 0, end: 0 }] as { start: number; end: number }[];
      (lazy as unknown as { map: unknown }).map = (fn: (r: { start: number; end: number }) => unknown) => {
        if (job.done) return [];
        job.done = true;
        this.#pendingClears = this.#pendingClears.filter((j) => j !== job);
        return [fn({ start: keep, end: slot.seq.nextTokenIndex })];
      };
      slot.seq.eraseContextTokenRanges(lazy).then(
        () => resolve(),
        () => resolve(),
      );
    });
  }

  /** Runs pending slot clears; only between batches (inside the dispatch loop) or under the lock. */
  #runClears(native: NativeCtx): void {
    if (this.#pendingClears.length === 0) return;
    const jobs = this.#pendingClears.splice(0);
    for (const job of jobs) {
      if (job.done) continue;
      job.done = true;
      const s = job.slot.seq as unknown as SeqInternals;
      const end = s._nextTokenIndex;
      if (end > job.keep) {
        const ok = native.removeTokenCellsFromSequence(s._sequenceId, job.keep, end);
        if (ok) {
          s._contextTokens.splice(job.keep);
          s._nextTokenIndex = job.keep;
        } else {
          // Some caches (sliding-window) cannot drop a tail: drop the whole sequence.
          native.disposeSequence(s._sequenceId);
          s._contextTokens.length = 0;
          s._nextTokenIndex = 0;
        }
        s._checkpoints?.pruneFromEndToIndex?.(s._contextTokens.length - 1);
      }
      job.resolve();
    }
  }

  #patch(): void {
    const ctx = this.#context as unknown as { _ctx?: NativeCtx };
    const native = ctx._ctx;
    const seqs = this.#slots.map((s) => s.seq as unknown as SeqInternals);
    const ok =
      native != null &&
      typeof native.initBatch === 'function' &&
      typeof native.addToBatch === 'function' &&
      typeof native.decodeBatch === 'function' &&
      typeof native.removeTokenCellsFromSequence === 'function' &&
      seqs.every((s) => typeof s._takeIntervalCheckpointIfNeededAfterBatch === 'function' && Array.isArray(s._contextTokens) && typeof s._sequenceId === 'number');
    if (!ok) {
      this.#opts.log?.('warning: node-llama-cpp internals not as expected (not 3.21.1?): batches may be split and a new request may wait for running ones');
      return;
    }
    this.#internals = true;
    // Batch statistics: one entry per engine step.
    let cur = { tokens: 0, sequences: 0, busySlots: 0 };
    const init = native.initBatch.bind(native);
    const add = native.addToBatch.bind(native);
    const decode = native.decodeBatch.bind(native);
    // The addon's methods are read-only on its prototype: shadow them on the instance.
    const override = (name: keyof NativeCtx, fn: unknown) => Object.defineProperty(native, name, { value: fn, configurable: true, writable: true });
    override('initBatch', (size: number) => {
      cur = { tokens: size, sequences: 0, busySlots: this.#slots.filter((s) => s.phase === 'prefill' || s.phase === 'decode').length };
      return init(size);
    });
    override('addToBatch', (...args: unknown[]) => {
      cur.sequences++;
      return add(...args);
    });
    override('decodeBatch', async () => {
      const step = cur;
      const t0 = performance.now();
      try {
        return await decode();
      } finally {
        this.#record({ ...step, ms: performance.now() - t0 });
      }
    });
    const fullBatches = this.#opts.fullBatches !== false;
    const yieldOnce = (): Promise<void> =>
      (this.#yieldPromise ??= new Promise<void>((resolve) =>
        setImmediate(() => {
          this.#yieldPromise = undefined;
          this.#runClears(native);
          resolve();
        }),
      ));
    for (const s of seqs) {
      const original = s._takeIntervalCheckpointIfNeededAfterBatch;
      s._takeIntervalCheckpointIfNeededAfterBatch = (len: number) => {
        const r = original(len);
        this.#runClears(native);
        if (!fullBatches) return r;
        return r instanceof Promise ? r.then(yieldOnce) : yieldOnce();
      };
    }
  }

  #record(step: StepStat): void {
    this.#totals.decodes++;
    this.#totals.busySlots += step.busySlots;
    const s = this.#stats;
    s.steps++;
    s.tokens += step.tokens;
    if (step.sequences >= step.busySlots) s.fullSteps++;
    s.perStep.set(step.sequences, (s.perStep.get(step.sequences) ?? 0) + 1);
    s.recent.push(step);
    if (s.recent.length > RECENT_STEPS) s.recent.splice(0, s.recent.length - RECENT_STEPS);
  }
}

/** A request the engine cannot serve as asked (HTTP 400). */
export class RequestError extends Error {
  override readonly name = 'RequestError';
}
