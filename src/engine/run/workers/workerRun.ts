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

/** How long events wait to be sent back together, ms. */
export const BATCH_MS = 20;
/** Records that send a batch at once. */
const BATCH_RECORDS = 256;

/** Gathers events for the next batch. */
class Outbox {
  readonly #post: (m: FromWorker) => void;
  readonly #progress: boolean;
  readonly #streams: boolean;
  #sent: number[] = [];
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
    if (!this.#progress) return;
    this.#sent.push(index, warmup ? 1 : 0, sentAt, scheduledAt);
    this.#soon();
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
    if (!this.#progress) return;
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
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#sent.length === 0 && this.#counts.size === 0 && this.#times.size === 0 && this.#returned === 0 && this.#records.length === 0) return;
    const chunks: number[] = [];
    for (const [index, n] of this.#counts) chunks.push(index, n);
    for (const [index, times] of this.#times) chunks.push(index, times.length, ...times);
    const batch: Batch = { t: 'batch', sent: this.#sent, chunks, returned: this.#returned, records: this.#records };
    this.#sent = [];
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

/** Runs one worker's share until told to close; every message from the main thread goes through `port`. */
export async function runShare(port: MessagePort, s: ShareSetup): Promise<void> {
  const post = (m: FromWorker) => port.postMessage(m);
  const w = s.workload;
  const ctrl = new AbortController();
  const signal = ctrl.signal;
  // every arrival waiting for its time listens to it
  setMaxListeners(0, signal);
  const out = new Outbox(post, s.progress, s.streams);
  const tally = new ForwardingTally(out);
  let planner: Planner;
  let client: EndpointClient;
  try {
    planner = await createPlanner(w, s.endpoint, s.prompts, s.warmupPrompts);
    const maxConnections = w.mode.kind === 'open' ? (w.mode.maxConcurrency ?? null) : s.connections;
    client = createEndpointClient(s.endpoint, { ...clientOptions(w, s.apiKey, s.network), connections: s.connections, maxConnections });
  } catch (e) {
    post({ t: 'failed', message: e instanceof Error ? e.message : String(e), preflight: false });
    return;
  }
  const sender = new Sender(client, tally, { ...(s.apiKey !== undefined ? { apiKey: s.apiKey } : {}), onRecord: (r) => out.record(r) });
  const slots = w.mode.kind === 'open' && w.mode.maxConcurrency !== undefined ? new SharedSlots(s.cells, w.mode.maxConcurrency) : undefined;
  const open: Promise<void>[] = [];
  let ended = false;
  const finish = () => {
    if (ended) return;
    ended = true;
    out.flush();
    const connection = client.connection();
    post(connection ? { t: 'done', connection } : { t: 'done' });
  };

  const closedLoops = async (loops: number, more: (k: number) => boolean, send: (k: number) => Promise<void>, at: number) => {
    const loop = async () => {
      while (!signal.aborted) {
        const k = claim(s.cells, at);
        if (!more(k)) return;
        await send(k);
      }
    };
    await Promise.all(Array.from({ length: loops }, loop));
  };

  const arrival = async (k: number, due: number) => {
    await sleepUntil(due - realClock.origin, signal);
    if (signal.aborted) return;
    if (slots && !(await slots.acquire(k, signal))) return;
    try {
      await sender.send(planner.plan(w.warmup + k, false, k, due));
    } finally {
      slots?.release();
    }
  };

  port.on('message', (m: ToWorker) => {
    switch (m.t) {
      case 'warmup':
        void closedLoops(s.warmupLoops, (k) => k < w.warmup, (k) => sender.send(planner.plan(k, true, k, epochNow())), CELL.warmupNext).then(() => {
          out.flush();
          post({ t: 'warmupDone' });
        });
        break;
      case 'measure': {
        const deadline = m.deadline !== undefined ? m.deadline - realClock.origin : undefined;
        void closedLoops(
          s.measuredLoops,
          (k) => withinPhase(w.requests, deadline, k, realClock.now()),
          (k) => sender.send(planner.plan(w.warmup + k, false, k, epochNow())),
          CELL.measuredNext,
        ).then(finish);
        break;
      }
      case 'arrivals':
        for (let i = 0; i < m.ks.length; i++) open.push(arrival(m.ks[i]!, m.dues[i]!));
        break;
      case 'end':
        void Promise.all(open).then(finish);
        break;
      case 'cancel':
        ctrl.abort();
        void sender.cancel().then(finish);
        break;
      case 'close':
        void client
          .close()
          .catch(() => undefined)
          .then(() => {
            post({ t: 'closed' });
            port.close();
          });
        break;
    }
  });

  try {
    post({ t: 'warmed', connection: await client.warm() });
  } catch (e) {
    post({ t: 'failed', message: e instanceof Error ? e.message : String(e), preflight: e instanceof PreflightError });
  }
}
