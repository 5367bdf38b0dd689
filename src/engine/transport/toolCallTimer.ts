// The tool calls of one streamed reply, timed apart from its text: the client (client.ts StreamState)
// hands over each event's tool-call pieces with the event's arrival (ms after the request was sent),
// and gets back whether the event carried any (a name or argument text: then it is an output chunk
// like a text one, so TTFT, ITL and TPOT count it and a reply that only calls a tool is not empty).
// At the end, each call's timing (RequestRecord.toolCalls). The clock is the client's: nothing here reads one.
import type { ToolCallTiming } from '../core/types';
import type { ToolCallDelta } from './adapters/adapter';

/** Calls kept per reply: a server that streams more is not timed past them (their pieces still count as chunks). */
const MAX_CALLS = 128;

interface Call {
  name?: string;
  firstDeltaMs?: number;
  lastDeltaMs?: number;
  argDeltas: number;
  argChars: number;
}

export class ToolCallTimer {
  readonly #calls: Call[] = [];
  readonly #byIndex = new Map<number, Call>();
  /** Server text made safe to keep (the client's scrubber), for names. */
  readonly #clean: (text: string) => string;

  constructor(clean: (text: string) => string) {
    this.#clean = clean;
  }

  /** The call a piece belongs to: by its index; without one, a new call when it names a function, else the latest call. */
  #callOf(d: ToolCallDelta): Call | undefined {
    if (d.index !== undefined) {
      const known = this.#byIndex.get(d.index);
      if (known !== undefined) return known;
      const call = this.#open();
      if (call !== undefined) this.#byIndex.set(d.index, call);
      return call;
    }
    if (d.name === undefined && this.#calls.length > 0) return this.#calls[this.#calls.length - 1];
    return this.#open();
  }

  #open(): Call | undefined {
    if (this.#calls.length >= MAX_CALLS) return undefined;
    const call: Call = { argDeltas: 0, argChars: 0 };
    this.#calls.push(call);
    return call;
  }

  /** One event's pieces, arrived `at` ms after the send: true when any carried a name or argument text. */
  add(pieces: readonly ToolCallDelta[], at: number): boolean {
    let carried = false;
    for (const d of pieces) {
      const named = d.name !== undefined && d.name !== '';
      const args = d.args !== undefined && d.args !== '';
      if (!named && !args) {
        this.#callOf(d); // an id alone: the call exists, nothing of it streamed yet
        continue;
      }
      carried = true;
      const call = this.#callOf(d);
      if (call === undefined) continue;
      if (named && call.name === undefined) call.name = this.#clean(d.name!);
      call.firstDeltaMs ??= at;
      if (args) {
        call.argDeltas++;
        call.argChars += d.args!.length;
        call.lastDeltaMs = at;
      }
    }
    return carried;
  }

  /**
   * Each call that streamed something, in the order they began. Argument tokens: the server's output
   * count less the text's tokens when it reported one and the reply made one call (the rest of the
   * output is that call's), else one per argument piece.
   */
  timings(usageOutputTokens: number | undefined, textTokens: number): ToolCallTiming[] | undefined {
    const calls = this.#calls.filter((c) => c.firstDeltaMs !== undefined);
    if (calls.length === 0) return undefined;
    const fromUsage = usageOutputTokens !== undefined && calls.length === 1 ? usageOutputTokens - textTokens : undefined;
    return calls.map((c) => ({
      ...(c.name !== undefined ? { name: c.name } : {}),
      firstDeltaMs: c.firstDeltaMs!,
      lastDeltaMs: c.lastDeltaMs ?? c.firstDeltaMs!,
      argDeltas: c.argDeltas,
      argChars: c.argChars,
      argTokens: fromUsage !== undefined && fromUsage > 0 ? fromUsage : c.argDeltas,
    }));
  }
}
