// One worker thread as the main thread sees it (coordinator.ts): the messages it sends, kept by kind
// until asked for; what it has in flight (the requests it sent whose records have not come back) and
// the open-loop arrivals it was given and has not sent; and its death. A thread that dies before it is
// told to stop (a crash, process.exit, out of memory) is reported once, after every message it posted
// has been read (Node drains a worker's port before its 'exit' event), so that what it had in flight
// is known exactly: coordinator.ts records those requests as lost and hands its arrivals on.
import { Worker } from 'node:worker_threads';
import type { ConnectionInfo } from '../../core/types';
import type { Batch, FromWorker, ShareSetup, ToWorker } from './protocol';

/** How a thread's worker is started: a bundled file, or a snippet that loads the sources through tsx. */
export interface WorkerEntry {
  readonly file: string;
  readonly eval: boolean;
  readonly execArgv: string[];
}

/** A request a thread sent: whether it was a warmup one, when it was sent and when it was due (epoch ms). */
export interface InFlight {
  readonly warmup: boolean;
  readonly sentAt: number;
  readonly scheduledAt: number;
}

export interface ThreadEvents {
  /** Requests it sent (protocol.ts `sent`, flat). */
  sent(s: readonly number[]): void;
  batch(b: Batch): void;
  /** It stopped before it was told to: `why` in words ("worker thread 2 of 2 exited (code 70)"). */
  died(thread: Thread, why: string): void;
}

export class Thread {
  readonly id: number;
  readonly #worker: Worker;
  #warmup: number;
  readonly #waiting = new Map<string, ((m: FromWorker | undefined) => void)[]>();
  readonly #early = new Map<string, FromWorker[]>();
  #settling: (() => void)[] = [];
  #gone = false;
  #failure: string | undefined;
  /** Requests it sent whose records have not come back, by index. */
  readonly inFlight = new Map<number, InFlight>();
  /** Open-loop arrivals given to it and not sent yet: k → due (epoch ms). */
  readonly given = new Map<number, number>();
  /** Its connections, as it last reported them (warmed, then done). */
  connection?: ConnectionInfo;
  /** It has said `done` (its share ended, every record sent back). */
  done = false;
  /** Open loop: `end`s told and `done`s said since. */
  ends = 0;
  dones = 0;
  /** Told to stop: its exit is no death. */
  stopping = false;
  /** Why it stopped, when it stopped before its end. */
  error?: string;

  constructor(setup: ShareSetup, threads: number, entry: WorkerEntry, on: ThreadEvents) {
    this.id = setup.id;
    this.#warmup = setup.workload.warmup;
    const name = `worker thread ${setup.id + 1} of ${threads}`;
    this.#worker = new Worker(entry.file, { workerData: setup, execArgv: entry.execArgv, eval: entry.eval });
    this.#worker.on('message', (m: FromWorker) => this.#message(m, on));
    this.#worker.on('error', (e) => {
      this.#failure ??= `${name} failed (${e instanceof Error ? e.message : String(e)})`;
    });
    this.#worker.on('exit', (code) => {
      if (this.#gone) return;
      const why = this.#failure ?? `${name} exited (code ${code})`;
      this.#gone = true;
      this.error = why;
      if (!this.stopping) on.died(this, why);
      for (const list of this.#waiting.values()) for (const r of list.splice(0)) r(undefined);
      for (const r of this.#settling.splice(0)) r();
      if (!this.#early.has('failed')) this.#early.set('failed', [{ t: 'failed', message: why, preflight: false }]);
    });
  }

  get alive(): boolean {
    return !this.#gone;
  }

  #message(m: FromWorker, on: ThreadEvents): void {
    if (m.t === 'batch') {
      for (const r of m.records) this.inFlight.delete(r.index);
      on.batch(m);
      return;
    }
    if (m.t === 'sent') {
      const s = m.s;
      for (let i = 0; i + 3 < s.length; i += 4) {
        const warmup = s[i + 1] === 1;
        this.inFlight.set(s[i]!, { warmup, sentAt: s[i + 2]!, scheduledAt: s[i + 3]! });
        if (!warmup) this.given.delete(s[i]! - this.#warmup);
      }
      on.sent(s);
      return;
    }
    if ((m.t === 'warmed' || m.t === 'done') && m.connection) this.connection = m.connection;
    if (m.t === 'done') {
      this.done = true;
      this.dones++;
      for (const r of this.#settling.splice(0)) r();
    }
    this.#deliver(m);
  }

  post(m: ToWorker): void {
    if (!this.#gone) this.#worker.postMessage(m);
  }

  /** The measured requests' words (prompt sizing) and the warmup's count as sent, which their indexes follow. */
  sized(words: number, warmup: number): void {
    this.#warmup = warmup;
    this.post({ t: 'sized', words, warmup });
  }

  /** Open-loop arrivals (k and due, in order): sent to the thread and kept until it says it sent them. */
  give(ks: readonly number[], dues: readonly number[]): void {
    for (let i = 0; i < ks.length; i++) this.given.set(ks[i]!, dues[i]!);
    this.post({ t: 'arrivals', ks, dues });
  }

  /** Open loop: no more arrivals for now; it says `done` once those given have ended. */
  end(): void {
    this.ends++;
    this.post({ t: 'end' });
  }

  /** Resolves at its next `done`, or when it is gone. */
  settled(): Promise<void> {
    if (this.#gone) return Promise.resolve();
    return new Promise((resolve) => this.#settling.push(resolve));
  }

  /** Resolves with the next message of kind `kind` (or undefined when the thread is gone). */
  next(kind: FromWorker['t']): Promise<FromWorker | undefined> {
    const kept = this.#early.get(kind);
    if (kept && kept.length > 0) return Promise.resolve(kept.shift());
    if (this.#gone) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      const list = this.#waiting.get(kind) ?? [];
      list.push(resolve);
      this.#waiting.set(kind, list);
    });
  }

  async terminate(): Promise<void> {
    this.stopping = true;
    await this.#worker.terminate().catch(() => undefined);
  }

  #deliver(m: FromWorker): void {
    const r = this.#waiting.get(m.t)?.shift();
    if (r) r(m);
    else this.#early.set(m.t, [...(this.#early.get(m.t) ?? []), m]);
  }
}
