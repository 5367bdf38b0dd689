// Sending planned requests: each to the client, its record (any echoed key scrubbed) to the tally and
// onRecord; on cancel, what is still out is recorded as aborted. Shared by the runner and the worker threads.
import type { EndpointClient, RequestError, RequestRecord, RequestSpec, SentRecord, StreamObserver } from '../core/types';
import { realClock } from '../core/clock';
import type { RunTally } from './runTally';
import { sleep } from './scheduler';
import type { Planned, RecordTags, RunOptions } from './plan';

/** How long cancellation waits for aborted requests to come back before recording them itself. */
const ABORT_GRACE_MS = 40;

function scrubText(text: string | undefined, secret: string | undefined): string | undefined {
  if (text === undefined || !secret || secret.length < 4) return text;
  return text.split(secret).join('<redacted>');
}

/** A server may echo a key in an error body (401s often do): it never reaches a run file. */
function scrub(r: RequestRecord, secret: string | undefined): RequestRecord {
  if (!r.error || !secret) return r;
  const message = scrubText(r.error.message, secret)!;
  const body = scrubText(r.error.body, secret);
  if (message === r.error.message && body === r.error.body) return r;
  const error: RequestError = { ...r.error, message, ...(body !== undefined ? { body } : {}) };
  return { ...r, error };
}

function failedRecord(spec: RequestSpec, sentAt: number, kind: RequestError['kind'], message: string): RequestRecord {
  return {
    index: spec.index,
    warmup: spec.warmup,
    scheduledAt: spec.scheduledAt,
    sentAt,
    outputTokens: 0,
    tokenSource: 'chunks',
    chunkTimesMs: [],
    ...(spec.cacheBust !== undefined ? { cacheBust: spec.cacheBust } : {}),
    ...(spec.promptRef !== undefined ? { promptRef: spec.promptRef } : {}),
    error: { kind, message },
  };
}

/** Hands requests to the client and their records to the tally; on cancel, records what is still out. */
export class Sender {
  readonly #client: EndpointClient;
  readonly #tally: RunTally;
  readonly #options: RunOptions;
  readonly #pending = new Map<number, { ctrl: AbortController; spec: RequestSpec; repeatOf: number | undefined; repeat: number | undefined; tags: RecordTags | undefined; sentAt: number; done: Promise<unknown> }>();
  readonly #observer: StreamObserver;
  /** The repetition or block now being sent (`run --repeat`, `ab`): each record sent from now on carries it as `repeat`. */
  segment: number | undefined;

  constructor(client: EndpointClient, tally: RunTally, options: RunOptions) {
    this.#client = client;
    this.#tally = tally;
    this.#options = options;
    this.#observer = { onChunk: (index, atMs) => tally.chunk(index, atMs) };
  }

  /** `n` more measured requests planned (negative: fewer), for the progress's total. */
  expect(n: number): void {
    this.#tally.expect(n);
  }

  /** Sends one request; resolves when its record is in (never rejects). */
  async send(planned: Planned): Promise<void> {
    await this.exchange(planned);
  }

  /** Sends one request; resolves with its record as recorded, and the reply's text when the spec kept it (never rejects). */
  exchange({ spec, repeatOf, tags }: Planned): Promise<SentRecord> {
    const ctrl = new AbortController();
    const sentAt = realClock.origin + realClock.now();
    const repeat = this.segment;
    this.#tally.sent(spec.index, spec.warmup, sentAt, spec.scheduledAt);
    const done = (async (): Promise<SentRecord> => {
      let rec: SentRecord;
      try {
        rec = await this.#client.send(spec, ctrl.signal, this.#observer);
      } catch (e) {
        // The contract says send never rejects; if it does, the run still goes on.
        rec = failedRecord(spec, sentAt, ctrl.signal.aborted ? 'aborted' : 'other', e instanceof Error ? e.message : String(e));
      }
      // Without the server's usage, input tokens are the client's estimate (marked so), as vLLM's
      // benchmark counts them from the prompt rather than leaving total-token throughput short.
      if (rec.promptTokens === undefined && spec.prompt.estimatedTokens !== undefined) {
        rec = { ...rec, promptTokens: spec.prompt.estimatedTokens, promptTokensEstimated: true };
      }
      if (repeatOf !== undefined) rec = { ...rec, repeatOf };
      if (spec.promptRef !== undefined) rec = { ...rec, promptRef: spec.promptRef };
      if (repeat !== undefined) rec = { ...rec, repeat };
      if (tags !== undefined) rec = { ...rec, ...tags };
      this.#tally.returned();
      this.#pending.delete(spec.index);
      // the reply's text goes back to the caller (a session's next turn), never to a run file
      const { reply, ...record } = rec;
      this.#finish(record);
      return reply !== undefined ? { ...record, reply } : record;
    })();
    this.#pending.set(spec.index, { ctrl, spec, repeatOf, repeat, tags, sentAt, done });
    return done;
  }

  /** Aborts what is in flight, waits a moment for it to come back with what it received, then records the rest as aborted. */
  async cancel(): Promise<void> {
    for (const p of this.#pending.values()) p.ctrl.abort();
    await Promise.race([Promise.all([...this.#pending.values()].map((p) => p.done)), sleep(ABORT_GRACE_MS, undefined)]);
    for (const p of [...this.#pending.values()]) {
      const rec = failedRecord(p.spec, p.sentAt, 'aborted', 'cancelled by the user');
      this.#finish({ ...rec, ...(p.repeatOf !== undefined ? { repeatOf: p.repeatOf } : {}), ...(p.repeat !== undefined ? { repeat: p.repeat } : {}), ...p.tags });
    }
  }

  #finish(rec: RequestRecord): void {
    const r = scrub(rec, this.#options.apiKey);
    if (!this.#tally.record(r)) return;
    try {
      this.#options.onRecord?.(r);
    } catch {
      // a throwing listener must not break the run
    }
  }
}
