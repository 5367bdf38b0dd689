// A job's journal (engine/files/journal.ts) fed from its hooks: the head once the endpoint is known,
// then each finished request, sweep point and repetition, and the progress. The surface that stores
// the run removes the journal once the run file is in place (`discard`), and keeps it otherwise.
import { fsErrorText } from '../engine/files/fsErrors';
import { JournalWriter } from '../engine/files/journal';
import type { JournalHeadInput, JournalLine } from '../engine/files/journal';
import type { Scrubber } from '../engine/core/redact';
import type { Progress, RequestRecord, RunFile, SweepPoint } from '../engine/core/types';
import type { RunJob, SweepJob } from './job';
import { isAbsolute, join, resolve } from 'node:path';
import { userStateHome } from '../localServer/paths';

/**
 * Where a run's journal goes when it has no --out to sit beside: $LLM_PROFILER_STATE/journals, else
 * $XDG_STATE_HOME/llm-profiler/journals, else ~/.local/state/llm-profiler/journals.
 */
export function journalHome(env: Readonly<Record<string, string | undefined>>): string {
  const own = env.LLM_PROFILER_STATE;
  return join(own && isAbsolute(own) ? resolve(own) : join(userStateHome(env), 'llm-profiler'), 'journals');
}

export interface JournalPlan {
  /** Where the journal is written. */
  readonly path: string;
  /** Where the run file is to be written (recorded in the head, for `recover`). */
  readonly out?: string;
  readonly scrubber?: Scrubber;
  /** A write that failed (said once; the run goes on). */
  onError?(message: string): void;
}

/** The journal of one run or sweep job; every method is safe to call before the file is open, or after it failed. */
export class JobJournal {
  readonly plan: JournalPlan;
  #writer: JournalWriter | undefined;
  #opening: Promise<void> | undefined;
  #early: JournalLine[] = [];
  #progress: Pick<Progress, 'finished' | 'inFlight' | 'total'> | undefined;
  #records = 0;

  constructor(plan: JournalPlan) {
    this.plan = plan;
  }

  get path(): string {
    return this.plan.path;
  }

  /** Opens the journal with what ran: the job and the run file's head as the live view first shows it. */
  start(job: RunJob | SweepJob, skeleton: RunFile): void {
    if (this.#opening) return;
    const head: JournalHeadInput = {
      id: skeleton.id,
      kind: job.kind,
      startedAt: skeleton.startedAt,
      endpoint: skeleton.endpoint,
      workload: job.workload,
      ...(skeleton.prompts?.length ? { prompts: skeleton.prompts } : {}),
      ...(job.kind === 'sweep' ? { sweep: { dimension: job.dimension, values: job.values } } : {}),
      ...(job.kind === 'run' && (job.repeat ?? 1) > 1 ? { repeat: job.repeat } : {}),
      ...(this.plan.out !== undefined ? { out: this.plan.out } : {}),
    };
    const say = (e: NodeJS.ErrnoException) => this.plan.onError?.(`the journal ${this.plan.path} could not be written (${fsErrorText(e)}); the run goes on, and what finishes is kept in memory`);
    this.#opening = JournalWriter.create(this.plan.path, head, { ...(this.plan.scrubber ? { scrubber: this.plan.scrubber } : {}), onError: say }).then(
      (w) => {
        this.#writer = w;
        for (const l of this.#early) w.append(l);
        this.#early = [];
        if (this.#progress) w.progress(this.#progress);
      },
      (e: NodeJS.ErrnoException) => {
        this.#early = [];
        say(e);
      },
    );
  }

  #append(line: JournalLine): void {
    if (this.#writer) this.#writer.append(line);
    else if (this.#opening) this.#early.push(line);
  }

  record(r: RequestRecord): void {
    this.#records++;
    this.#append({ t: 'request', r });
  }

  /** A sweep's finished point: written and synced at once. */
  point(point: SweepPoint, i: number): void {
    this.#append({ t: 'point', i, point });
    void this.#writer?.flush(true);
  }

  repetition(i: number): void {
    this.#append({ t: 'repetition', i, at: Date.now() });
    void this.#writer?.flush(true);
  }

  progress(p: Progress): void {
    this.#progress = { finished: p.finished, inFlight: p.inFlight, ...(p.total !== undefined ? { total: p.total } : {}) };
    this.#writer?.progress(this.#progress);
  }

  /** The run ended but its run file could not be stored: the journal says so and stays, complete. */
  async keep(run: Pick<RunFile, 'cancelled'>): Promise<void> {
    await this.#opening;
    this.#append({ t: 'end', at: Date.now(), cancelled: run.cancelled === true });
    await this.#writer?.close();
  }

  /** Whether the journal holds every line (opened, and no write failed). */
  async whole(): Promise<boolean> {
    await this.#opening;
    await this.#writer?.flush(true);
    return this.#writer !== undefined && this.#writer.caughtUp;
  }

  /** The job failed: a journal that holds no request goes; one that does stays, to be recovered. */
  async abandon(): Promise<void> {
    if (this.#records === 0) await this.discard();
    else {
      await this.#opening;
      await this.#writer?.close();
    }
  }

  /** The run file is in place: the journal goes. */
  async discard(): Promise<void> {
    await this.#opening;
    await this.#writer?.discard();
  }
}
