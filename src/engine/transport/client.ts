// The streaming client: one undici Pool per endpoint, one request per keep-alive connection
// (pipelining 1), connections opened and warmed before the measured phase.
//
// Clock discipline. undici calls the handler's onData once per body piece it cuts out of a socket
// read. That callback reads the clock once, first thing, and queues (stream, bytes, time); nothing is
// parsed there. The queue is drained in a setImmediate, i.e. in the event loop's check phase, after
// the poll phase has delivered every socket that was readable in this turn: when 256 streams deliver
// in the same tick, all 256 are stamped before the first JSON.parse runs. While polls keep bringing
// more (an engine's step: one chunk for every stream, back to back), the parse waits a few more turns
// (at most BURST_DEFER_MS), so the whole burst is stamped first. (A microtask would not do:
// Node drains microtasks after each socket's callback, so stream 2 would be stamped after stream 1's
// parse.) Times are kept as performance.now() values and turned into epoch ms with
// performance.timeOrigin only when a record is built: the same clock, read once.
import type { Dispatcher } from 'undici';
import type {
  ClientOptions,
  ConnectionInfo,
  EndpointClient,
  EndpointSpec,
  Handshake,
  NetworkSpec,
  RequestError,
  RequestRecord,
  SentRecord,
  RequestSpec,
  ServerTimings,
  StreamObserver,
} from '../core/types';
import { MAX_SERVER_MS, maxTokensOf, requestPath, splitBaseUrl, withDefaultHeaders } from './adapters/adapter';
import { adapterFor, keyHeaderFor } from './adapters/registry';
import type { EventInfo, RegisteredAdapter, SplitUrl } from './adapters/adapter';
import { INTERMEDIARY_HEADERS } from '../analysis/buffering';
import { cannotConnect, connectionFailure, createDispatcher } from './connections';
import { createJsonStreamParser } from './streamParsers';
import { ToolCallTimer } from './toolCallTimer';
import type { Framing, JsonStreamParser } from './streamParsers';
import { PreflightError } from './detect';
import { retryAfterSeconds, sendWithRetries } from './retry';
import type { Attempt, RetryAfterHeaders } from './retry';
import { tpotOf } from '../analysis/metrics';
import { authHeaders, displayUrl, fromServer, Scrubber, secretsOf } from '../core/redact';

/** How much of an error body is kept. */
const ERROR_BODY_BYTES = 500;

/**
 * A server that ignores max_tokens can stream without end: past this many token chunks the client
 * stops reading and fails the request (kind 'overlong'), so memory stays bounded. Well past the
 * request: tokenizers and chunkers differ, and reasoning may come on top.
 */
function chunkCapFor(maxTokens: number): number {
  return 4 * Math.max(1, maxTokens) + 1024;
}

/** A successful reply longer than this is flagged (`exceedsMaxTokens`): the server ignored max_tokens. */
function overMaxTokens(outputTokens: number, maxTokens: number): boolean {
  return outputTokens > Math.ceil(1.5 * maxTokens) + 16;
}

/** Connections opened after warming whose set-up is kept in the run file. */
const MAX_REOPENED = 1000;

/** How long warming may wait for its GETs when the run's own --timeout is longer (or off). */
const WARM_TIMEOUT_MS = 30_000;

/** TGI's per-request timing headers (whole ms or counts). */
const TGI_HEADERS: ReadonlySet<string> = new Set(['x-queue-time', 'x-inference-time', 'x-total-time', 'x-prompt-tokens', 'x-generated-tokens']);

const CONNECT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'EHOSTDOWN', 'UND_ERR_CONNECT_TIMEOUT', 'ERR_TLS_CERT_ALTNAME_INVALID', 'DEPTH_ZERO_SELF_SIGNED_CERT', 'UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'CERT_HAS_EXPIRED']);
const RESET_CODES = new Set(['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET', 'ECONNABORTED', 'UND_ERR_CLOSED']);

// Queue entry kinds.
const K_HEADERS = 0;
const K_DATA = 1;
const K_END = 2;
const K_ERROR = 3;
const K_FAIL = 4;

type Payload = Buffer | Buffer[] | Error | RequestError | null;

/** The longest a queued chunk waits for the rest of its burst before it is parsed (ArrivalQueue), ms. */
const BURST_DEFER_MS = 4;
/** The most entries queued before they are parsed, burst or not. */
const MAX_DEFERRED = 8192;

const round3 = (ms: number): number => Math.round(ms * 1000) / 1000;

/**
 * The arrival queue shared by all streams of one client: parallel arrays, so queuing a chunk
 * allocates nothing but the array slots.
 */
class ArrivalQueue {
  #streams: StreamState[] = [];
  #kinds: number[] = [];
  #payloads: Payload[] = [];
  #times: number[] = [];
  #scheduled = false;
  /** Entries queued when the check phase last looked. */
  #seen = 0;
  readonly #check = (): void => this.#onCheck();

  push(stream: StreamState, kind: number, payload: Payload, time: number): void {
    this.#streams.push(stream);
    this.#kinds.push(kind);
    this.#payloads.push(payload);
    this.#times.push(time);
    if (!this.#scheduled) {
      this.#scheduled = true;
      this.#seen = 0;
      setImmediate(this.#check);
    }
  }

  /**
   * The check phase after a poll phase that queued something. An engine writes one chunk to every
   * stream back to back each step, and a burst can come in over several polls: parsing its first
   * chunks here would hold the loop while the rest wait to be stamped (at 256 streams on the step
   * server, 17 µs per chunk of a burst against undici's own 12.6; 13.6 with this: bench/engine.ts).
   * So while the last poll brought more, wait a turn (a poll with an immediate pending does not
   * block); parse once a poll brought nothing, or the oldest entry has waited BURST_DEFER_MS.
   */
  #onCheck(): void {
    const n = this.#streams.length;
    if (n > this.#seen && n < MAX_DEFERRED && performance.now() - this.#times[0]! < BURST_DEFER_MS) {
      this.#seen = n;
      setImmediate(this.#check);
      return;
    }
    this.drain();
  }

  drain(): void {
    this.#scheduled = false;
    // Entries queued while draining (an observer that starts a request) are handled in this pass.
    for (let i = 0; i < this.#streams.length; i++) {
      const stream = this.#streams[i]!;
      const payload = this.#payloads[i]!;
      this.#payloads[i] = null;
      try {
        stream.process(this.#kinds[i]!, payload, this.#times[i]!);
      } catch (err) {
        // Never let one stream's surprise escape into the event loop: that request fails, the rest go on.
        stream.failNow({ kind: 'other', message: `internal error while reading the stream: ${(err as Error).message}` });
      }
    }
    this.#streams.length = 0;
    this.#kinds.length = 0;
    this.#payloads.length = 0;
    this.#times.length = 0;
  }
}

/**
 * One abort listener per signal (per client), fanned out to its requests: a runner shares one
 * signal among hundreds of streams, and a listener each would trip Node's MaxListeners warning.
 */
class AbortFanout {
  #bySignal = new WeakMap<AbortSignal, Set<StreamState>>();

  add(signal: AbortSignal, state: StreamState): void {
    let set = this.#bySignal.get(signal);
    if (set === undefined) {
      const members = new Set<StreamState>();
      set = members;
      this.#bySignal.set(signal, members);
      signal.addEventListener(
        'abort',
        () => {
          for (const s of [...members]) s.abort();
          members.clear();
        },
        { once: true },
      );
    }
    set.add(state);
  }

  remove(signal: AbortSignal, state: StreamState): void {
    this.#bySignal.get(signal)?.delete(state);
  }
}

/**
 * One request in flight: the undici handler (legacy callback form, the one that has onRequestSent)
 * and the record being built. Handler callbacks only stamp and queue; `process` does the work.
 */
class StreamState implements Dispatcher.DispatchHandler {
  readonly #spec: RequestSpec;
  readonly #adapter: RegisteredAdapter;
  readonly #observer: StreamObserver | undefined;
  readonly #queue: ArrivalQueue;
  readonly #resolve: (r: SentRecord) => void;
  readonly #signal: AbortSignal;
  readonly #aborts: AbortFanout;
  readonly #timeoutMs: number;
  readonly #idleTimeoutMs: number;
  readonly #scrubber: Scrubber;
  readonly #maxTokens: number;
  readonly #chunkCap: number;
  readonly #endpointUrl: string;
  readonly #network: NetworkSpec | undefined;

  readonly #dispatchPerf: number;
  #sentPerf: number | undefined;
  #lastActivity: number;
  #undiciAbort: ((err: Error) => void) | undefined;
  #failed = false; // a failure was queued (abort, timeout): later callbacks are ignored
  #finished = false;
  #timeoutTimer: NodeJS.Timeout | undefined;
  #idleTimer: NodeJS.Timeout | undefined;

  #status: number | undefined;
  #headersMs: number | undefined;
  #headerRequestId: string | undefined;
  #location: string | undefined;
  #retryAfter: { -readonly [K in keyof RetryAfterHeaders]: RetryAfterHeaders[K] } | undefined; // an error's Retry-After (and Date)
  #responseStarted = false;
  #contentType = '';
  #contentEncoding = '';
  #overlong = false;
  #parser: JsonStreamParser | undefined;
  #errorBody: Buffer[] | undefined;
  #errorBodyBytes = 0;
  #now = 0; // arrival time of the chunk being parsed

  #firstChunkMs: number | undefined;
  #lastDataPerf: number | undefined; // arrival of the latest body piece
  #ttftMs: number | undefined;
  #ttfoMs: number | undefined;
  readonly #chunkTimesMs: number[] = [];
  #chunkTokens = 0;
  #multiTokenChunks = 0;
  #lastCumulative = 0;
  #responseId: string | undefined;
  #promptTokens: number | undefined;
  #completionTokens: number | undefined;
  #reasoningTokens: number | undefined;
  #serverTimings: ServerTimings | undefined;
  #ignoredTimings: string[] | undefined;
  #intermediaries: Record<string, string> | undefined;
  #serverError: string | undefined;
  /** The content as streamed, when the spec asks to keep it (RequestSpec.keepReply). */
  readonly #reply: string[] | undefined;
  /** The reply's tool calls, from the first piece of one. */
  #toolCalls: ToolCallTimer | undefined;
  /** Tokens of the chunks that carried text (content or reasoning): the output less these is a lone tool call's. */
  #textTokens = 0;
  #ended = false; // [DONE], done/stop, or an error event: later events are not part of the answer

  constructor(
    spec: RequestSpec,
    adapter: RegisteredAdapter,
    observer: StreamObserver | undefined,
    queue: ArrivalQueue,
    signal: AbortSignal,
    aborts: AbortFanout,
    options: ClientOptions,
    scrubber: Scrubber,
    endpointUrl: string,
    resolve: (r: SentRecord) => void,
  ) {
    this.#spec = spec;
    this.#adapter = adapter;
    this.#observer = observer;
    this.#queue = queue;
    this.#signal = signal;
    this.#aborts = aborts;
    this.#resolve = resolve;
    this.#reply = spec.keepReply ? [] : undefined;
    this.#timeoutMs = options.timeoutMs;
    this.#idleTimeoutMs = options.idleTimeoutMs;
    this.#scrubber = scrubber;
    this.#endpointUrl = endpointUrl;
    this.#network = options.network;
    this.#maxTokens = maxTokensOf(spec);
    this.#chunkCap = chunkCapFor(this.#maxTokens);
    this.#dispatchPerf = performance.now();
    this.#lastActivity = this.#dispatchPerf;
    if (!signal.aborted) aborts.add(signal, this);
    if (this.#timeoutMs > 0) this.#timeoutTimer = setTimeout(this.#onTimeout, this.#timeoutMs);
    if (this.#idleTimeoutMs > 0) this.#idleTimer = setTimeout(this.#checkIdle, this.#idleTimeoutMs);
  }

  // ---- undici handler: stamp, queue, return ----

  onConnect(abort: (err?: Error) => void): void {
    this.#undiciAbort = abort;
    if (this.#failed) abort(new Error('aborted'));
  }

  onRequestSent(): void {
    // undici calls this once the request (headers and body) has been written to the socket.
    this.#sentPerf = performance.now();
    this.#lastActivity = this.#sentPerf;
  }

  onResponseStarted(): void {
    // undici calls this at the first byte of the response (llhttp's message begin), before its headers
    // are whole: from here on the request is the server's to answer, and is never sent again (retry.ts).
    this.#responseStarted = true;
  }

  /** Whether any byte of the response arrived. */
  get responseStarted(): boolean {
    return this.#responseStarted;
  }

  onHeaders(statusCode: number, rawHeaders: Buffer[], _resume: () => void, _statusText: string): boolean {
    const t = performance.now();
    this.#lastActivity = t;
    if (this.#failed) return true;
    this.#status = statusCode;
    this.#queue.push(this, K_HEADERS, rawHeaders, t);
    return true;
  }

  onData(chunk: Buffer): boolean {
    const t = performance.now(); // the one clock read for this piece of the stream
    this.#lastActivity = t;
    if (!this.#failed) this.#queue.push(this, K_DATA, chunk, t);
    return true;
  }

  onComplete(): void {
    const t = performance.now();
    if (!this.#failed) this.#queue.push(this, K_END, null, t);
  }

  onError(err: Error): void {
    const t = performance.now();
    if (!this.#failed) {
      this.#failed = true;
      this.#queue.push(this, K_ERROR, err, t);
    }
  }

  // ---- failures started on our side ----

  abort(): void {
    this.#fail({ kind: 'aborted', message: 'cancelled' });
  }

  readonly #onTimeout = (): void => {
    this.#timeoutTimer = undefined;
    this.#fail({ kind: 'timeout', message: `no complete response within ${this.#timeoutMs} ms (timeout)` });
  };

  // One timer per request, re-armed for the remaining time when it fires early, instead of a timer
  // reset on every chunk: the data callback stays a clock read and a push.
  readonly #checkIdle = (): void => {
    this.#idleTimer = undefined;
    if (this.#finished || this.#failed) return;
    if (this.#sentPerf === undefined) {
      // Still waiting for a free connection: not idle on the wire (the whole-request timeout still runs).
      this.#idleTimer = setTimeout(this.#checkIdle, this.#idleTimeoutMs);
      return;
    }
    const idle = performance.now() - this.#lastActivity;
    if (idle >= this.#idleTimeoutMs) {
      this.#fail({ kind: 'idle-timeout', message: `nothing received for ${Math.round(idle)} ms (idle timeout ${this.#idleTimeoutMs} ms)` });
    } else {
      this.#idleTimer = setTimeout(this.#checkIdle, this.#idleTimeoutMs - idle);
    }
  };

  #fail(error: RequestError): void {
    if (this.#failed || this.#finished) return;
    this.#failed = true;
    const t = performance.now();
    this.#queue.push(this, K_FAIL, error, t);
    // Stop the socket now; undici's own onError that follows is ignored.
    try {
      this.#undiciAbort?.(new Error(error.message));
    } catch {
      // the request already ended inside undici; nothing to stop
    }
  }

  /** A request that never reached undici (dispatch threw, or the signal was already aborted). */
  failNow(error: RequestError): void {
    this.#failed = true;
    this.#finish(error, performance.now());
    try {
      this.#undiciAbort?.(new Error(error.message));
    } catch {
      // already ended inside undici
    }
  }

  // ---- processing, outside the data callback ----

  process(kind: number, payload: Payload, t: number): void {
    if (this.#finished) return;
    switch (kind) {
      case K_HEADERS:
        this.#onHeadersProcessed(payload as Buffer[], t);
        return;
      case K_DATA:
        this.#onDataProcessed(payload as Buffer, t);
        return;
      case K_END:
        this.#onEnd(t);
        return;
      case K_ERROR:
        this.#finish(this.#classify(payload as Error), t);
        return;
      case K_FAIL:
        this.#finish(payload as RequestError, t);
        return;
    }
  }

  #sent(): number {
    return this.#sentPerf ?? this.#dispatchPerf;
  }

  #onHeadersProcessed(rawHeaders: Buffer[], t: number): void {
    this.#headersMs = round3(t - this.#sent());
    for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
      const name = rawHeaders[i]!.toString('latin1').toLowerCase();
      const value = (): string => rawHeaders[i + 1]!.toString('latin1');
      if (name === 'x-request-id') this.#headerRequestId = this.#said(value(), 200);
      else if (name === 'content-type') this.#contentType = this.#said(value(), 100).toLowerCase();
      else if (name === 'content-encoding') this.#contentEncoding = this.#said(value(), 100).toLowerCase();
      else if (name === 'location') this.#location = this.#said(displayUrl(value()), 300);
      else if ((name === 'retry-after' || name === 'retry-after-ms' || name === 'date') && (this.#status ?? 0) >= 400) this.#keepRetryAfter(name, value());
      else if (TGI_HEADERS.has(name)) this.#tgiHeader(name, value());
      if (INTERMEDIARY_HEADERS.has(name)) (this.#intermediaries ??= {})[name] = this.#said(value(), 200);
    }
    const contentType = this.#contentType;
    const status = this.#status ?? 0;
    if (status < 200 || status >= 300) {
      this.#errorBody = [];
      return;
    }
    // A server that ignored stream:true sends one JSON document.
    let framing: Framing = this.#adapter.framing;
    if (framing === 'sse' && contentType.startsWith('application/json')) framing = 'json';
    this.#parser = createJsonStreamParser(framing, {
      onValue: (value) => this.#onEvent(this.#adapter.interpret(value)),
      onDone: () => {
        this.#ended = true;
      },
      onFatal: () => {
        this.#ended = true;
      },
    });
  }

  #onDataProcessed(chunk: Buffer, t: number): void {
    if (this.#firstChunkMs === undefined) this.#firstChunkMs = round3(t - this.#sent());
    this.#lastDataPerf = t;
    if (this.#errorBody !== undefined) {
      if (this.#errorBodyBytes < ERROR_BODY_BYTES) {
        const piece = chunk.subarray(0, ERROR_BODY_BYTES - this.#errorBodyBytes);
        this.#errorBody.push(Buffer.from(piece)); // a copy: keep 500 bytes, not the whole socket read
        this.#errorBodyBytes += piece.length;
      }
      return;
    }
    if (this.#parser === undefined) return;
    this.#now = t;
    this.#parser.feedBytes(chunk);
  }

  /**
   * TGI's timing headers (router/src/server.rs: whole ms, truncated; set only on replies that are
   * not streamed, since a stream's headers leave before its first token). x-inference-time is
   * prefill and decode together, and x-time-per-token is that over the tokens (prefill included, so
   * not an ITL): kept as inferenceMs, the latter not at all.
   */
  #tgiHeader(name: string, raw: string): void {
    const text = raw.trim();
    const n = /^\d{1,12}$/.test(text) ? Number(text) : undefined;
    if (n === undefined || (!name.endsWith('-tokens') && n > MAX_SERVER_MS)) {
      this.#ignore(`header ${name}: ${JSON.stringify(this.#said(text, 40))}`);
      return;
    }
    const t: { -readonly [K in keyof ServerTimings]: ServerTimings[K] } = { ...this.#serverTimings, source: 'tgi' };
    if (name === 'x-queue-time') t.queueMs = n;
    else if (name === 'x-inference-time') t.inferenceMs = n;
    else if (name === 'x-total-time') t.totalMs = n;
    else if (name === 'x-prompt-tokens') t.promptTokens = n;
    else if (name === 'x-generated-tokens') t.predictedTokens = n;
    this.#serverTimings = t;
  }

  #keepRetryAfter(name: string, value: string): void {
    const h = (this.#retryAfter ??= {});
    const v = value.slice(0, 100);
    if (name === 'retry-after') h.retryAfter = v;
    else if (name === 'retry-after-ms') h.retryAfterMs = v;
    else h.date = v;
  }

  #ignore(note: string): void {
    const list = (this.#ignoredTimings ??= []);
    if (list.length < 10) list.push(note);
  }

  /** Text a server said, safe to keep and show (no control characters, no known secret, capped); one line unless `oneLine` is false. */
  #said(text: string, max?: number, oneLine = true): string {
    return fromServer(text, this.#scrubber, max, oneLine);
  }

  #onEvent(info: EventInfo): void {
    if (this.#ended || this.#overlong) return;
    if (info.responseId !== undefined && this.#responseId === undefined) this.#responseId = this.#said(info.responseId, 200);
    if (info.error !== undefined) {
      this.#serverError = this.#said(info.error);
      this.#ended = true;
      return;
    }
    const usage = info.usage;
    const content = info.content;
    const reasoning = info.reasoning;
    // the arrival, read only for an event that carries output (most events of a stream do; usage and role chunks do not)
    const at = content || reasoning || info.toolCalls !== undefined ? round3(this.#now - this.#sent()) : 0;
    // a tool call's piece (its name, its arguments) is output too: a chunk, kept apart in toolCalls
    const tool = info.toolCalls !== undefined && (this.#toolCalls ??= new ToolCallTimer((t) => this.#said(t, 64))).add(info.toolCalls, at);
    if (content || reasoning || tool) {
      this.#chunkTimesMs.push(at);
      if (this.#ttftMs === undefined) {
        this.#ttftMs = at;
        this.#notify(0, at);
      }
      if (content && this.#ttfoMs === undefined) this.#ttfoMs = at;
      if (content && this.#reply) this.#reply.push(content);
      let tokens = info.tokens;
      // Usage on every chunk (vLLM's continuous_usage_stats) is cumulative: the difference is this chunk's count.
      if (tokens === undefined && usage?.completionTokens !== undefined) {
        const delta = usage.completionTokens - this.#lastCumulative;
        if (delta > 0) tokens = delta;
      }
      this.#chunkTokens += tokens ?? 1;
      if (content || reasoning) this.#textTokens += tokens ?? 1;
      if (tokens !== undefined && tokens > 1) this.#multiTokenChunks++;
      this.#notify(1, at);
      if (this.#chunkTimesMs.length >= this.#chunkCap) this.#stopOverlong();
    }
    if (usage !== undefined) {
      if (usage.promptTokens !== undefined) this.#promptTokens = usage.promptTokens;
      if (usage.completionTokens !== undefined) {
        this.#completionTokens = usage.completionTokens;
        this.#lastCumulative = usage.completionTokens;
      }
      if (usage.reasoningTokens !== undefined) this.#reasoningTokens = usage.reasoningTokens;
    }
    if (info.serverTimings !== undefined) this.#serverTimings = { ...this.#serverTimings, ...info.serverTimings };
    if (info.ignoredTimings !== undefined) for (const note of info.ignoredTimings) this.#ignore(this.#said(note, 120));
    if (info.done) this.#ended = true;
  }

  /** Far more chunks than max_tokens asked for: stop reading, keep what came, fail the request. */
  #stopOverlong(): void {
    this.#overlong = true;
    this.#fail({ kind: 'overlong', message: `the server sent ${this.#chunkTimesMs.length} token chunks for max_tokens ${this.#maxTokens} and was still going: reading stopped (it ignores max_tokens)` });
  }

  /** Observer calls are the caller's code: an exception there must not cost the measurement. */
  #notify(which: 0 | 1, at: number): void {
    const o = this.#observer;
    if (o === undefined) return;
    try {
      if (which === 0) o.onFirstToken?.(this.#spec.index, at);
      else o.onChunk?.(this.#spec.index, at);
    } catch {
      // ignored on purpose: live display is best effort
    }
  }

  #onEnd(t: number): void {
    const status = this.#status ?? 0;
    if (this.#errorBody !== undefined) {
      const body = this.#said(Buffer.concat(this.#errorBody).toString('utf8'), ERROR_BODY_BYTES, false);
      const where = this.#location !== undefined && status >= 300 && status < 400 ? ` redirect to ${this.#location}, not followed (a request never follows a redirect: use that URL if you trust it)` : '';
      const retryAfterS = this.#retryAfter === undefined ? undefined : retryAfterSeconds(this.#retryAfter, performance.timeOrigin + t);
      this.#finish({ kind: 'http', status, message: `HTTP ${status}${httpReason(status)}${where}${where ? '' : this.#said(bodyHint(body), 300)}`, body, ...(retryAfterS !== undefined ? { retryAfterS } : {}) }, t);
      return;
    }
    const parser = this.#parser;
    if (parser !== undefined) {
      this.#now = t;
      parser.end();
    }
    if (this.#serverError !== undefined) {
      this.#finish({ kind: 'server', message: this.#serverError }, t);
    } else if (parser?.failed) {
      this.#finish({ kind: 'malformed', message: 'the stream could not be parsed (an event exceeded the buffer limit)' }, t);
    } else if (parser !== undefined && parser.malformed > 0 && this.#chunkTimesMs.length === 0 && this.#completionTokens === undefined) {
      this.#finish({ kind: 'malformed', message: `the stream could not be understood (${parser.malformed} malformed event${parser.malformed === 1 ? '' : 's'}, no tokens)${this.#notAStream()}` }, t);
    } else if (this.#chunkTimesMs.length === 0) {
      // As vLLM's request functions do ("Never received a valid chunk to calculate TTFT"): a reply
      // with no token has no TTFT and must not count as a completed request in the throughputs.
      this.#finish({ kind: 'empty', message: `the response ended without a single token${this.#notAStream()}` }, t);
    } else {
      this.#finish(undefined, t);
    }
  }

  /** Why a body could not be a stream, when its headers say: an HTML page, a compressed body. */
  #notAStream(): string {
    if (this.#contentEncoding !== '' && this.#contentEncoding !== 'identity') {
      return `: the reply is compressed (content-encoding: ${this.#contentEncoding}), which a stream must not be; a proxy or gateway in between may be compressing it`;
    }
    if (this.#contentType.startsWith('text/html')) return ': the server answered with an HTML page (content-type: text/html), not a stream: is the URL the API\'s, not a web page or a login portal?';
    return this.#contentType !== '' && !/event-stream|json|ndjson/.test(this.#contentType) ? ` (content-type: ${this.#contentType})` : '';
  }

  #classify(err: Error): RequestError {
    const code = (err as { code?: string }).code ?? '';
    const cause = (err as { cause?: { code?: string } }).cause?.code;
    const c = code || cause || '';
    const said = this.#said(err.message, 300);
    // Refused, unreachable, a certificate, the proxy: said by network.ts, naming what failed.
    const failure = connectionFailure(err, this.#endpointUrl, this.#network);
    if (failure !== undefined) return { kind: 'connect', message: this.#said(failure.message, 400) };
    if (CONNECT_CODES.has(c) || CONNECT_CODES.has(cause ?? '')) {
      return { kind: 'connect', message: `cannot connect (${c}): ${said}` };
    }
    if (RESET_CODES.has(c)) {
      const n = this.#chunkTimesMs.length;
      const where = this.#status === undefined ? 'before the response' : `after ${n} chunk${n === 1 ? '' : 's'}`;
      return { kind: 'reset', message: `connection closed ${where} (${c}: ${said})` };
    }
    return { kind: 'other', message: c ? `${said} (${this.#said(c, 60)})` : said };
  }

  #finish(error: RequestError | undefined, t: number): void {
    if (this.#finished) return;
    this.#finished = true;
    this.#failed = true;
    if (this.#timeoutTimer) clearTimeout(this.#timeoutTimer);
    if (this.#idleTimer) clearTimeout(this.#idleTimer);
    this.#aborts.remove(this.#signal, this);
    const sent = this.#sent();
    const endMs = round3(t - sent);
    const times = this.#chunkTimesMs;
    // As vLLM: a successful request ends at its last token chunk; what follows (finish reason, usage,
    // [DONE]) is the last byte, kept apart. A failed one ends when it failed, for timelines.
    const e2eMs = error === undefined && times.length > 0 ? times[times.length - 1]! : endMs;
    const lastByteMs = error === undefined ? endMs : this.#lastDataPerf !== undefined ? round3(this.#lastDataPerf - sent) : undefined;
    const usageCount = this.#completionTokens;
    const outputTokens = usageCount ?? this.#chunkTokens;
    const ttftMs = this.#ttftMs;
    const record: {
      -readonly [K in keyof RequestRecord]: RequestRecord[K];
    } = {
      index: this.#spec.index,
      warmup: this.#spec.warmup,
      scheduledAt: this.#spec.scheduledAt,
      sentAt: performance.timeOrigin + sent,
      outputTokens,
      tokenSource: usageCount !== undefined ? 'usage' : 'chunks',
      chunkTimesMs: times,
      e2eMs,
    };
    const responseId = this.#responseId ?? this.#headerRequestId;
    if (responseId !== undefined) record.responseId = responseId;
    if (this.#headersMs !== undefined) record.headersMs = this.#headersMs;
    if (this.#firstChunkMs !== undefined) record.firstChunkMs = this.#firstChunkMs;
    if (ttftMs !== undefined) record.ttftMs = ttftMs;
    if (this.#ttfoMs !== undefined) record.ttfoMs = this.#ttfoMs;
    if (lastByteMs !== undefined) record.lastByteMs = lastByteMs;
    if (error === undefined) {
      const tpot = tpotOf(record);
      if (tpot !== undefined) record.tpotMs = round3(tpot);
      // By what was counted or what was streamed, whichever is more: a server's usage can be wrong too.
      if (overMaxTokens(Math.max(outputTokens, this.#chunkTokens), this.#maxTokens)) record.exceedsMaxTokens = true;
    }
    if (this.#promptTokens !== undefined) record.promptTokens = this.#promptTokens;
    if (this.#reasoningTokens !== undefined) record.reasoningTokens = this.#reasoningTokens;
    if (this.#multiTokenChunks > 0) record.multiTokenChunks = this.#multiTokenChunks;
    const toolCalls = this.#toolCalls?.timings(usageCount, this.#textTokens);
    if (toolCalls !== undefined) record.toolCalls = toolCalls;
    if (this.#serverTimings !== undefined) record.serverTimings = this.#serverTimings;
    if (this.#ignoredTimings !== undefined) record.ignoredServerFields = this.#ignoredTimings;
    if (this.#intermediaries !== undefined) record.intermediaries = this.#intermediaries;
    if (this.#spec.cacheBust !== undefined) record.cacheBust = this.#spec.cacheBust;
    const malformed = this.#parser?.malformed ?? 0;
    if (malformed > 0) record.malformedEvents = malformed;
    if (this.#status !== undefined) record.httpStatus = this.#status;
    if (error !== undefined) record.error = error;
    this.#resolve(this.#reply ? { ...record, reply: this.#reply.join('') } : record);
  }
}

function httpReason(status: number): string {
  switch (status) {
    case 400: return ' Bad Request';
    case 401: return ' Unauthorized (API key missing or wrong)';
    case 403: return ' Forbidden';
    case 404: return ' Not Found';
    case 408: return ' Request Timeout';
    case 413: return ' Payload Too Large';
    case 422: return ' Unprocessable Entity';
    case 429: return ' Too Many Requests';
    case 500: return ' Internal Server Error';
    case 502: return ' Bad Gateway';
    case 503: return ' Service Unavailable';
    case 504: return ' Gateway Timeout';
    case 529: return ' Overloaded'; // Anthropic's
    default: return '';
  }
}

/** The server's own words, when the error body is JSON with a message. */
function bodyHint(body: string): string {
  try {
    const v = JSON.parse(body) as { error?: unknown; message?: unknown; detail?: unknown };
    const e = v.error;
    const m = typeof e === 'string' ? e : typeof e === 'object' && e !== null && typeof (e as { message?: unknown }).message === 'string' ? (e as { message: string }).message : typeof v.message === 'string' ? v.message : typeof v.detail === 'string' ? v.detail : undefined;
    return m ? `: ${m.length > 200 ? `${m.slice(0, 200)}…` : m}` : '';
  } catch {
    const line = body.split('\n', 1)[0]!.trim();
    return line ? `: ${line.length > 200 ? `${line.slice(0, 200)}…` : line}` : '';
  }
}

export function createEndpointClient(endpoint: EndpointSpec, options: ClientOptions): EndpointClient {
  return new PooledClient(endpoint, options);
}

/** The dispatcher for an endpoint (network.ts: direct or through the proxy): keep-alive, one request per connection, our own timeouts. */
function newPool(origin: string, options: ClientOptions, connections: number, onHandshake: (h: Handshake) => void): Dispatcher {
  return createDispatcher(
    origin,
    options.network,
    {
      connections: options.maxConnections === null ? null : Math.max(connections, Math.floor(options.maxConnections ?? connections)),
      pipelining: 1,
      keepAliveTimeout: 60_000,
      keepAliveMaxTimeout: 600_000,
      // Our own timeouts (whole request, idle between chunks) replace undici's.
      headersTimeout: 0,
      bodyTimeout: 0,
      connectTimeout: Math.min(options.timeoutMs > 0 ? options.timeoutMs : 10_000, 10_000),
    },
    onHandshake,
  );
}

/** Warming got no complete answer in time. */
class WarmTimeout extends Error {
  readonly code = 'TIMEOUT';
}

/**
 * One probe GET on a connection of its own; resolves with the time until it was connected, ms
 * after `start`. Bounded: a server that accepts the connection and never finishes its answer fails
 * the probe after `timeoutMs`, and the request is stopped.
 */
function probe(pool: Dispatcher, options: Dispatcher.DispatchOptions, start: number, timeoutMs: number): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    let connectedAt: number | undefined;
    let abort: ((err: Error) => void) | undefined;
    let done = false;
    const settle = (fn: () => void): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      fn();
    };
    const timer = setTimeout(() => {
      const err = new WarmTimeout(`no answer within ${timeoutMs} ms`);
      settle(() => reject(err));
      try {
        abort?.(err);
      } catch {
        // already ended inside undici
      }
    }, timeoutMs);
    try {
      pool.dispatch(options, {
        onConnect(a: (err?: Error) => void) {
          abort = a;
          if (done) a(new Error('warming timed out'));
          connectedAt = performance.now();
        },
        onHeaders() {
          return true;
        },
        onData() {
          return true;
        },
        onComplete() {
          settle(() => resolve((connectedAt ?? performance.now()) - start));
        },
        onError(err: Error) {
          settle(() => reject(err));
        },
      });
    } catch (err) {
      settle(() => reject(err as Error));
    }
  });
}

class PooledClient implements EndpointClient {
  readonly #endpoint: EndpointSpec;
  readonly #options: ClientOptions;
  readonly #adapter: RegisteredAdapter;
  readonly #split: SplitUrl;
  readonly #connections: number;
  readonly #pool: Dispatcher;
  /** Connections set up during warming, then those opened later (at most MAX_REOPENED kept). */
  readonly #handshakes: Handshake[] = [];
  readonly #reopened: Handshake[] = [];
  #warmed = false;
  #connection: ConnectionInfo | undefined;
  readonly #queue = new ArrivalQueue();
  readonly #aborts = new AbortFanout();
  readonly #auth: Record<string, string>;
  readonly #scrubber: Scrubber;
  #closed = false;

  constructor(endpoint: EndpointSpec, options: ClientOptions) {
    this.#endpoint = endpoint;
    this.#options = options;
    this.#adapter = adapterFor(endpoint.api);
    this.#split = splitBaseUrl(endpoint.url);
    this.#connections = Math.max(1, Math.floor(options.connections));
    this.#pool = newPool(this.#split.origin, options, this.#connections, (h) => {
      if (!this.#warmed) this.#handshakes.push(h);
      else if (this.#reopened.length < MAX_REOPENED) this.#reopened.push(h);
    });
    this.#auth = authHeaders(options.apiKey, keyHeaderFor(endpoint));
    this.#scrubber = new Scrubber(secretsOf(endpoint, options.apiKey));
  }

  async warm(): Promise<ConnectionInfo> {
    const start = performance.now();
    const request: Dispatcher.DispatchOptions = {
      origin: this.#split.origin,
      // The API's own probe, as preflight sends it (Gemini's /v1beta not doubled, Anthropic's version header).
      path: requestPath(splitBaseUrl(this.#adapter.probeBaseUrl?.(this.#endpoint.url) ?? this.#endpoint.url), this.#adapter.probePath),
      method: 'GET',
      headers: { ...withDefaultHeaders(this.#endpoint.headers, this.#adapter.probeHeaders), ...this.#auth },
      reset: false,
      blocking: true,
    };
    // All N at once, so each lands on its own socket (pipelining 1: a busy connection takes no second request).
    const timeoutMs = this.#options.timeoutMs > 0 ? Math.min(this.#options.timeoutMs, WARM_TIMEOUT_MS) : WARM_TIMEOUT_MS;
    const settled = await Promise.allSettled(Array.from({ length: this.#connections }, () => probe(this.#pool, request, start, timeoutMs)));
    const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
    this.#warmed = true;
    if (failed) {
      const url = displayUrl(this.#endpoint.url);
      if (failed.reason instanceof WarmTimeout) {
        throw new PreflightError(`no answer from ${url} to the connection-warming request (GET ${this.#adapter.probePath}) within ${timeoutMs} ms`);
      }
      const err = failed.reason as Error & { code?: string };
      const known = connectionFailure(err, this.#endpoint.url, this.#options.network);
      if (known !== undefined) throw new PreflightError(fromServer(known.message, this.#scrubber, 400, true));
      const code = err.code ?? (err as { cause?: { code?: string } }).cause?.code ?? err.message;
      throw new PreflightError(cannotConnect(url, fromServer(code, this.#scrubber, 120, true)));
    }
    this.#connection = {
      connections: this.#connections,
      connectMs: settled.map((s) => round3((s as PromiseFulfilledResult<number>).value)),
      ...(this.#handshakes.length > 0 ? { handshakes: this.#handshakes } : {}),
    };
    return this.#connection;
  }

  connection(): ConnectionInfo | undefined {
    const c = this.#connection;
    return c !== undefined && this.#reopened.length > 0 ? { ...c, reopened: [...this.#reopened] } : c;
  }

  send(spec: RequestSpec, signal: AbortSignal, observer?: StreamObserver): Promise<RequestRecord> {
    // Sent again, and recorded, when its connection closed before any response byte, or when a rate
    // limit's Retry-After is respected (retry.ts).
    const policy = { respectRetryAfter: this.#options.respectRetryAfter === true, timeoutMs: this.#options.timeoutMs };
    return sendWithRetries((timeoutMs) => this.#attempt(spec, signal, observer, timeoutMs), signal, policy);
  }

  /** One attempt of a request, on whichever connection the pool gives it; `timeoutMs`: what is left of its --timeout. */
  #attempt(spec: RequestSpec, signal: AbortSignal, observer: StreamObserver | undefined, timeoutMs: number): Promise<Attempt> {
    return new Promise<Attempt>((done) => {
      let started = (): boolean => false;
      const resolve = (record: RequestRecord): void => done({ record, responseStarted: started() });
      const options = timeoutMs === this.#options.timeoutMs ? this.#options : { ...this.#options, timeoutMs };
      let state: StreamState;
      try {
        state = new StreamState(spec, this.#adapter, observer, this.#queue, signal, this.#aborts, options, this.#scrubber, this.#endpoint.url, resolve);
      } catch (err) {
        const t = performance.timeOrigin + performance.now();
        resolve({ index: spec.index, warmup: spec.warmup, scheduledAt: spec.scheduledAt, sentAt: t, outputTokens: 0, tokenSource: 'chunks', chunkTimesMs: [], error: { kind: 'other', message: `could not start the request: ${(err as Error).message}` } });
        return;
      }
      started = () => state.responseStarted;
      if (signal.aborted) {
        state.failNow({ kind: 'aborted', message: 'cancelled before it was sent' });
        return;
      }
      if (this.#closed) {
        state.failNow({ kind: 'other', message: 'the client is closed' });
        return;
      }
      try {
        const built = this.#adapter.buildRequest(spec, this.#endpoint);
        this.#pool.dispatch(
          { origin: this.#split.origin, path: built.path, method: built.method, headers: { ...built.headers, ...this.#auth }, body: built.body, reset: false, idempotent: false, blocking: true },
          state,
        );
      } catch (err) {
        state.failNow({ kind: 'other', message: `could not send the request: ${(err as Error).message}` });
      }
    });
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#queue.drain();
    // Graceful first; a stuck request must not hold the process.
    let timer: NodeJS.Timeout | undefined;
    const graceful = this.#pool.close().then(() => true, () => true);
    const late = new Promise<boolean>((r) => {
      timer = setTimeout(() => r(false), 2000);
    });
    const ok = await Promise.race([graceful, late]);
    clearTimeout(timer);
    if (!ok) await this.#pool.destroy().catch(() => undefined);
  }
}
