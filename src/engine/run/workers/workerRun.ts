// One worker thread's share of a run: its own EndpointClient (its own undici Pool, its own clock
// reads), its own planner (the same specs as one loop would plan for the same k), and the loops it
// is given: closed loops that claim the next k from the shared counter, or the open-loop arrivals
// the main thread hands it. What happens is sent back in batches (protocol.ts Batch), not per chunk.
import { setMaxListeners } from 'node:events';
import type { MessagePort } from 'node:worker_threads';
import { realClock } from '../../core/clock';
import { createEndpointClient } from '../../transport/client';
import { PreflightError } from '../../transport/detect';
import { Sender } from '../sender';
import { clientOptions, createPlanner } from '../plan';
import type { Planner } from '../plan';
import { RunTally } from '../runTally';
import { sleepUntil, withinPhase } from '../scheduler';
import type { EndpointClient, RequestRecord } from '../../core/types';
import type { Batch, FromWorker, ShareSetup, ToWorker } from './protocol';
import { CELL, claim, SharedSlots } from './sharedCells';
import { FAILPOINT_EXIT_CODE, FAILPOINT_WIRE_MS, failpointAt } from '../failpoints';

/** How long events wait to be sent back together, ms. */
const BATCH_MS = 20;
/** Records that send a batch at once. */
const BATCH_RECORDS = 256;

/**
 * Gathers events for the next batch; the requests sent go back once per event-loop turn that sent any
 * (protocol.ts `sent`: one message for a burst of sends, not one per request), so that what a thread
 * has in flight is known on the main thread when it dies.
 */
class Outbox {
  readonly #post: (m: FromWorker) => void;
  readonly #progress: boolean;
  readonly #streams: boolean;
  #sent: number[] = [];
  #sentSoon = false;
  /** When the latest request was sent, epoch ms. */
  lastSentAt = 0;
  #counts = new Map<number, number>();
  #times = new Map<number, number[]>();
  #returned = 0;
  #records: RequestRecord[] = [];
  #timer: ReturnType<typeof setTimeout> | undefined;

  constructor(post: (m: FromWorker) => void, progress: boolean, streams: boolean) {
    this.#post = post;
    this.#progress = progress;
    this.#streams = streams;
  }

  sent(index: number, warmup: boolean, sentAt: number, scheduledAt: number): void {
    this.#sent.push(index, warmup ? 1 : 0, sentAt, scheduledAt);
    this.lastSentAt = sentAt;
    if (this.#sentSoon) return;
    this.#sentSoon = true;
    setImmediate(() => this.#flushSent());
  }

  #flushSent(): void {
    this.#sentSoon = false;
    if (this.#sent.length === 0) return;
    const s = this.#sent;
    this.#sent = [];
    this.#post({ t: 'sent', s });
  }

  chunk(index: number, atMs: number): void {
    if (!this.#progress) return;
    if (this.#streams) {
      const list = this.#times.get(index);
      if (list) list.push(atMs);
      else this.#times.set(index, [atMs]);
    } else {
      this.#counts.set(index, (this.#counts.get(index) ?? 0) + 1);
    }
    this.#soon();
  }

  returned(): void {
    this.#returned++;
  }

  record(r: RequestRecord): void {
    this.#records.push(r);
    if (this.#records.length >= BATCH_RECORDS) this.flush();
    else this.#soon();
  }

  #soon(): void {
    this.#timer ??= setTimeout(() => this.flush(), BATCH_MS);
  }

  flush(): void {
    this.#flushSent();
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#counts.size === 0 && this.#times.size === 0 && this.#returned === 0 && this.#records.length === 0) return;
    const chunks: number[] = [];
    for (const [index, n] of this.#counts) chunks.push(index, n);
    for (const [index, times] of this.#times) chunks.push(index, times.length, ...times);
    const batch: Batch = { t: 'batch', chunks, returned: this.#returned, records: this.#records };
    this.#counts.clear();
    this.#times.clear();
    this.#returned = 0;
    this.#records = [];
    this.#post(batch);
  }
}

/** The runner's tally, forwarding instead of counting: the main thread's tally counts for the run. */
class ForwardingTally extends RunTally {
  readonly #out: Outbox;
  readonly #finished = new Set<number>();

  constructor(out: Outbox) {
    super('', undefined);
    this.#out = out;
  }

  override sent(index: number, warmup: boolean, sentAt = 0, scheduledAt = sentAt): void {
    this.#out.sent(index, warmup, sentAt, scheduledAt);
  }

  override chunk(index: number, atMs = 0): void {
    this.#out.chunk(index, atMs);
  }

  override returned(): void {
    this.#out.returned();
  }

  override record(r: RequestRecord): boolean {
    if (this.#finished.has(r.index)) return false;
    this.#finished.add(r.index);
    return true;
  }
}

const epochNow = (): number => realClock.origin + realClock.now();


const messageOf = (e: unknown): string => (e instanceof Error ? e.message : String(e));

/** One thread's share once its planner and client are made: what it does on each message from the main thread. */
class Share {
  readonly #s: ShareSetup;
  readonly #port: MessagePort;
  readonly #out: Outbox;
  readonly #planner: Planner;
  readonly #client: EndpointClient;
  readonly #sender: Sender;
  /** The open loop's --max-concurrency, held across every thread. */
  readonly #slots: SharedSlots | undefined;
  readonly #ctrl = new AbortController();
  /** The open-loop arrivals given and not ended yet. */
  readonly #arrivals = new Set<Promise<void>>();
  #ended = false;
  /** The worker-exit failpoint fired: nothing more is sent, and the thread ends in a moment. */
  #dying = false;
  /** The warmup's count as sent (the workload's, or one more after prompt sizing's `calibrate`): measured request k is request warmup + k. */
  #warmupSent: number;

  constructor(port: MessagePort, s: ShareSetup, out: Outbox, tally: RunTally, planner: Planner, client: EndpointClient) {
    this.#s = s;
    this.#port = port;
    this.#out = out;
    this.#planner = planner;
    this.#client = client;
    this.#warmupSent = s.workload.warmup;
    // every arrival waiting for its time listens to it
    setMaxListeners(0, this.#ctrl.signal);
    const exitAfter = failpointAt('worker-exit', String(s.id + 1));
    let finished = 0;
    const onRecord = (r: RequestRecord): void => {
      out.record(r);
      if (++finished === exitAfter) this.#failpointExit();
    };
    this.#sender = new Sender(client, tally, { ...(s.apiKey !== undefined ? { apiKey: s.apiKey } : {}), onRecord });
    const w = s.workload;
    this.#slots = w.mode.kind === 'open' && w.mode.maxConcurrency !== undefined ? new SharedSlots(s.cells, w.mode.maxConcurrency, s.id) : undefined;
  }

  #post(m: FromWorker): void {
    this.#port.postMessage(m);
  }

  handle(m: ToWorker): void {
    switch (m.t) {
      case 'warmup':
        void this.#warmup();
        break;
      case 'measure':
        void this.#measure(m.deadline);
        break;
      case 'arrivals':
        for (let i = 0; i < m.ks.length; i++) {
          const a = this.#arrival(m.ks[i]!, m.dues[i]!).finally(() => this.#arrivals.delete(a));
          this.#arrivals.add(a);
        }
        break;
      case 'end':
        void this.#arrivalsEnded();
        break;
      case 'cancel':
        this.#ctrl.abort();
        void this.#sender.cancel().then(() => this.#finish());
        break;
      case 'close':
        void this.#close();
        break;
      case 'calibrate':
        void this.#calibrate(m.index, m.words);
        break;
      case 'sized':
        this.#planner.resize(m.words);
        this.#warmupSent = m.warmup;
        break;
    }
  }

  /** Warms this thread's connections: `warmed`, or `failed` with why. */
  async warm(): Promise<void> {
    try {
      this.#post({ t: 'warmed', connection: await this.#client.warm() });
    } catch (e) {
      this.#post({ t: 'failed', message: messageOf(e), preflight: e instanceof PreflightError });
    }
  }

  /** Its closed loops, each claiming the next k from the shared cell `at` while `more(k)`. */
  async #closedLoops(loops: number, more: (k: number) => boolean, send: (k: number) => Promise<void>, at: number): Promise<void> {
    const signal = this.#ctrl.signal;
    const loop = async () => {
      while (!signal.aborted && !this.#dying) {
        const k = claim(this.#s.cells, at);
        if (!more(k)) return;
        await send(k);
      }
    };
    await Promise.all(Array.from({ length: loops }, loop));
  }

  async #warmup(): Promise<void> {
    const w = this.#s.workload;
    await this.#closedLoops(this.#s.warmupLoops, (k) => k < w.warmup, (k) => this.#sender.send(this.#planner.plan(k, true, k, epochNow())), CELL.warmupNext);
    this.#out.flush();
    this.#post({ t: 'warmupDone' });
  }

  /** Prompt sizing's one more warmup request, at `words` words: `calibrated` once its record is sent back. */
  async #calibrate(index: number, words: number): Promise<void> {
    this.#planner.resize(words);
    await this.#sender.send(this.#planner.plan(index, true, index, epochNow()));
    this.#out.flush();
    this.#post({ t: 'calibrated' });
  }

  /** A closed loop's measured phase, until the count or the deadline (epoch ms). */
  async #measure(deadlineEpoch: number | undefined): Promise<void> {
    const w = this.#s.workload;
    const deadline = deadlineEpoch !== undefined ? deadlineEpoch - realClock.origin : undefined;
    await this.#closedLoops(
      this.#s.measuredLoops,
      (k) => withinPhase(w.requests, deadline, k, realClock.now()),
      (k) => this.#sender.send(this.#planner.plan(this.#warmupSent + k, false, k, epochNow())),
      CELL.measuredNext,
    );
    this.#finish();
  }

  /** One open-loop arrival: sent when due (epoch ms), within the shared --max-concurrency. */
  async #arrival(k: number, due: number): Promise<void> {
    const signal = this.#ctrl.signal;
    await sleepUntil(due - realClock.origin, signal);
    if (signal.aborted || this.#dying) return;
    if (this.#slots && !(await this.#slots.acquire(k, signal))) return;
    if (this.#dying) {
      // its turn taken, not sent: the main thread hands it on when this thread has ended
      this.#slots?.release();
      return;
    }
    try {
      await this.#sender.send(this.#planner.plan(this.#warmupSent + k, false, k, due));
    } finally {
      this.#slots?.release();
    }
  }

  /**
   * An open loop's `end`: `done` once every arrival given has ended, those given after the `end` too
   * (a thread that died left arrivals the main thread hands to the living ones, and says `end` again).
   */
  async #arrivalsEnded(): Promise<void> {
    while (this.#arrivals.size > 0) await Promise.all(this.#arrivals);
    this.#done();
  }

  /**
   * The worker-exit failpoint (failpoints.ts): nothing more is handed to the client; once the last
   * request sent has had FAILPOINT_WIRE_MS to reach the wire, the records finished so far go back and
   * the thread ends with its other requests in flight, as a crash would end it.
   */
  #failpointExit(): void {
    this.#dying = true;
    setTimeout(() => {
      this.#out.flush();
      process.exit(FAILPOINT_EXIT_CODE);
    }, Math.max(0, this.#out.lastSentAt + FAILPOINT_WIRE_MS - epochNow()));
  }

  /** The measured phase ended (or was cancelled): every record sent back, then `done` once. */
  #finish(): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#done();
  }

  #done(): void {
    this.#out.flush();
    const connection = this.#client.connection();
    this.#post(connection ? { t: 'done', connection } : { t: 'done' });
  }

  async #close(): Promise<void> {
    await this.#client.close().catch(() => undefined);
    this.#post({ t: 'closed' });
    this.#port.close();
  }
}

/** This share's planner and client, or undefined when they cannot be made (`failed` is sent). */
async function openShare(s: ShareSetup, post: (m: FromWorker) => void): Promise<{ planner: Planner; client: EndpointClient } | undefined> {
  const w = s.workload;
  try {
    const planner = await createPlanner(w, s.endpoint, s.prompts, s.warmupPrompts);
    const maxConnections = w.mode.kind === 'open' ? (w.mode.maxConcurrency ?? null) : s.connections;
    const client = createEndpointClient(s.endpoint, { ...clientOptions(w, s.apiKey, s.network), connections: s.connections, maxConnections });
    return { planner, client };
  } catch (e) {
    post({ t: 'failed', message: messageOf(e), preflight: false });
    return undefined;
  }
}

/** Runs one worker's share until told to close; every message from the main thread goes through `port`. */
export async function runShare(port: MessagePort, s: ShareSetup): Promise<void> {
  const post = (m: FromWorker) => port.postMessage(m);
  const out = new Outbox(post, s.progress, s.streams);
  const opened = await openShare(s, post);
  if (!opened) return;
  const share = new Share(port, s, out, new ForwardingTally(out), opened.planner, opened.client);
  port.on('message', (m: ToWorker) => share.handle(m));
  await share.warm();
}
