// The extension host's side of the prompt reader's worker thread (main.ts): one long-lived thread,
// started on the first read, reused, and stopped by dispose (the extension owns the reader). Reads
// wait in a queue here and go to the thread one at a time, each tagged with its id, so that each has
// its own deadline from when it is sent: a read still running after the deadline is refused and the
// thread terminated (a fresh one starts for the next read). A cancelled read leaves the queue, or,
// already sent, its answer is dropped when it comes. When the thread cannot start (its bundle
// missing), small documents are read on this thread and larger ones refused. No `vscode`: tested
// under node with the real bundle (test/unit/promptWorker.test.ts).
import { existsSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { refusedParse, type DocumentParse, type FromPromptWorker, type ParseRequest, type ToPromptWorker } from './request';

/**
 * How long one read may take, ms. Reading YAML costs about a second per MB on a laptop (a 6 MB
 * .prompt.yml: 1.5 s); a file the deadline stops is far past what a prompt needs. The first read
 * includes the thread's start (tens of ms).
 */
const PARSE_DEADLINE_MS = 5000;
/** Without the thread, documents up to this size are read on the host's thread (milliseconds); larger ones are refused. */
export const IN_THREAD_MAX_BYTES = 64 * 1024;

/** A cancellation token (VS Code's CancellationToken is one). */
export interface Cancellation {
  readonly isCancellationRequested: boolean;
  onCancellationRequested(listener: () => void): { dispose(): unknown };
}

export interface PromptReaderOptions {
  /** The worker's bundle: dist/promptWorker.js beside dist/extension.js. */
  readonly workerFile: string;
  /** The same read on this thread (request.ts `readDocument`), for small documents when the thread cannot start. */
  readonly inThread: (request: ParseRequest) => Promise<DocumentParse>;
  /** PARSE_DEADLINE_MS unless a test sets a shorter one. */
  readonly deadlineMs?: number;
  /** Lines for the extension's log: the thread's start and stops. */
  readonly log?: (line: string) => void;
}

interface Job {
  readonly id: number;
  readonly request: ParseRequest;
  /** Answers the caller once (undefined: cancelled); later calls do nothing. */
  readonly settle: (parse: DocumentParse | undefined) => void;
  settled: boolean;
  /** The token's listener, removed once answered. */
  cancellation?: { dispose(): unknown };
  /** The deadline, from when the read was sent to the thread. */
  timer?: NodeJS.Timeout;
}

const seconds = (ms: number) => `${+(ms / 1000).toFixed(3)} s`;
const sizeText = (n: number) => (n >= 1024 * 1024 ? `${+(n / 1024 / 1024).toFixed(1)} MiB` : `${+(n / 1024).toFixed(1)} KiB`);

export class PromptReader {
  readonly #o: PromptReaderOptions;
  readonly #deadlineMs: number;
  readonly #queue: Job[] = [];
  /** The read being done (on the thread or, without one, here); a cancelled one stays until its answer comes. */
  #current: Job | undefined;
  #worker: Worker | undefined;
  #ready = false;
  /** Why the thread cannot start: from then on only small documents are read, on this thread. */
  #cannotStart: string | undefined;
  #nextId = 1;
  #disposed = false;

  constructor(options: PromptReaderOptions) {
    this.#o = options;
    this.#deadlineMs = options.deadlineMs ?? PARSE_DEADLINE_MS;
  }

  /** Reads a document; undefined when the token cancelled it, or the reader was disposed, first. Never rejects. */
  read(request: ParseRequest, token?: Cancellation): Promise<DocumentParse | undefined> {
    if (this.#disposed || token?.isCancellationRequested) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      const job: Job = {
        id: this.#nextId++,
        request,
        settled: false,
        settle: (parse) => {
          if (job.settled) return;
          job.settled = true;
          job.cancellation?.dispose();
          resolve(parse);
        },
      };
      job.cancellation = token?.onCancellationRequested(() => this.#cancel(job));
      if (job.settled) job.cancellation?.dispose();
      else this.#queue.push(job);
      this.#next();
    });
  }

  /** Stops the thread; every read not answered yet resolves undefined. */
  dispose(): void {
    if (this.#disposed) return;
    this.#disposed = true;
    this.#stopThread();
    const current = this.#current;
    this.#current = undefined;
    clearTimeout(current?.timer);
    current?.settle(undefined);
    for (const job of this.#queue.splice(0)) job.settle(undefined);
  }

  #cancel(job: Job): void {
    const at = this.#queue.indexOf(job);
    if (at >= 0) this.#queue.splice(at, 1);
    // one already sent keeps the thread (and its deadline) until its answer, which is then dropped
    job.settle(undefined);
  }

  #next(): void {
    if (this.#current || this.#disposed) return;
    const job = this.#queue.shift();
    if (!job) return;
    this.#current = job;
    const worker = this.#thread();
    if (!worker) {
      void this.#readHere(job);
      return;
    }
    job.timer = setTimeout(() => this.#timedOut(job), this.#deadlineMs);
    try {
      worker.postMessage({ id: job.id, request: job.request } satisfies ToPromptWorker);
    } catch (e) {
      job.settle(refusedParse(`could not read this prompt file: ${(e as Error).message}`));
      this.#finish(job);
    }
  }

  /** The read is over (answered, refused, or its answer dropped): the next one goes. */
  #finish(job: Job): void {
    clearTimeout(job.timer);
    if (this.#current !== job) return;
    this.#current = undefined;
    this.#next();
  }

  /** Without the thread: a small document is read here, a larger one refused. */
  async #readHere(job: Job): Promise<void> {
    const bytes = Buffer.byteLength(job.request.text);
    try {
      if (job.settled) return;
      if (bytes > IN_THREAD_MAX_BYTES) {
        job.settle(refusedParse(`this prompt file (${sizeText(bytes)}) is not read in the editor: the prompt reader's thread could not start (${this.#cannotStart}), and without it only files up to ${sizeText(IN_THREAD_MAX_BYTES)} are read`));
      } else job.settle(await this.#o.inThread(job.request));
    } catch (e) {
      job.settle(refusedParse(`could not read this prompt file: ${(e as Error).message}`));
    } finally {
      this.#finish(job);
    }
  }

  #timedOut(job: Job): void {
    if (this.#current !== job) return;
    this.#stopThread();
    this.#o.log?.(`prompt reader: ${job.request.fileName} took longer than ${seconds(this.#deadlineMs)} to read: its thread was stopped (a new one starts for the next read)`);
    job.settle(refusedParse(`reading this prompt file took longer than ${seconds(this.#deadlineMs)}: stopped, so that the editor stays responsive (the command line reads it without this limit)`));
    this.#finish(job);
  }

  /** The thread, started if need be; undefined when it cannot start. */
  #thread(): Worker | undefined {
    if (this.#worker || this.#cannotStart !== undefined) return this.#worker;
    if (!existsSync(this.#o.workerFile)) {
      this.#couldNotStart(`${this.#o.workerFile} is missing`);
      return undefined;
    }
    const started = performance.now();
    let w: Worker;
    try {
      // An empty environment: what a read may see of the host's comes with the request, when trusted.
      // No execArgv: the bundle is plain JavaScript, whatever flags (a loader, an inspector) the host runs with.
      w = new Worker(this.#o.workerFile, { env: {}, execArgv: [] });
    } catch (e) {
      this.#couldNotStart((e as Error).message);
      return undefined;
    }
    // an idle thread keeps no process alive; a read in flight holds its deadline's timer
    w.unref();
    w.on('message', (m: FromPromptWorker) => this.#onMessage(w, m, started));
    w.on('messageerror', (e) => this.#onUnreadable(w, e.message));
    w.on('error', (e) => this.#onStopped(w, e.message));
    w.on('exit', (code) => this.#onStopped(w, `it exited with code ${code}`));
    this.#worker = w;
    this.#ready = false;
    return w;
  }

  #onMessage(w: Worker, m: FromPromptWorker, started: number): void {
    if (w !== this.#worker) return;
    if ('ready' in m) {
      this.#ready = true;
      this.#o.log?.(`prompt reader: its thread started in ${(performance.now() - started).toFixed(0)} ms`);
      return;
    }
    const job = this.#current;
    // an answer to a read no longer current (stopped by its deadline) is dropped
    if (!job || job.id !== m.id) return;
    job.settle(m.parse);
    this.#finish(job);
  }

  /** An answer that could not be received: the read is refused, the thread kept. */
  #onUnreadable(w: Worker, why: string): void {
    const job = this.#current;
    if (w !== this.#worker || !job) return;
    job.settle(refusedParse(`could not read this prompt file: its reading could not be received (${why})`));
    this.#finish(job);
  }

  /** The thread failed or exited by itself (one stopped here is no longer `#worker`). */
  #onStopped(w: Worker, why: string): void {
    if (w !== this.#worker) return;
    const wasReady = this.#ready;
    this.#stopThread();
    const job = this.#current;
    if (!wasReady) {
      this.#couldNotStart(why);
      if (job) {
        clearTimeout(job.timer);
        void this.#readHere(job);
      }
      return;
    }
    this.#o.log?.(`prompt reader: its thread stopped (${why}); a new one starts for the next read`);
    if (job) {
      job.settle(refusedParse(`could not read this prompt file: the prompt reader's thread stopped (${why})`));
      this.#finish(job);
    }
  }

  #couldNotStart(why: string): void {
    this.#cannotStart = why;
    this.#o.log?.(`prompt reader: its thread could not start (${why}): prompt files up to ${sizeText(IN_THREAD_MAX_BYTES)} are read on the extension host's thread, larger ones are not read`);
  }

  #stopThread(): void {
    const w = this.#worker;
    this.#worker = undefined;
    this.#ready = false;
    void w?.terminate().catch(() => undefined);
  }
}
