// The hot loop: bytes off the socket → one parsed JSON value per stream event. The caller stamps the
// arrival time of each network chunk before feeding it here; nothing in this file reads the clock.
// SSE framing is eventsource-parser's (well kept, spec-complete); NDJSON framing is ours, written in
// the same spirit: partial lines kept as a list of fragments (joined once, when the line ends), a fast
// path for the common one-line chunk, named char codes, and a maximum buffer size. The third framing,
// 'json', is a response that is not streamed at all (one JSON document from a server that ignored
// `stream: true`): its fragments are kept and parsed once, at the end.
import { createParser } from 'eventsource-parser';
import type { EventSourceParser } from 'eventsource-parser';

const LF = 10;
const CR = 13;
const BOM = 0xfeff;

/** The default cap on buffered, not yet terminated text per stream (characters). */
export const DEFAULT_MAX_BUFFER = 8 * 1024 * 1024;

export interface JsonStreamHandlers {
  /** One parsed JSON value per SSE event / NDJSON line. `eventType` is the SSE `event:` field, if any. */
  onValue(value: unknown, eventType: string | undefined): void;
  /** The OpenAI `data: [DONE]` sentinel. Later events are still parsed (a caller may ignore them). */
  onDone?(): void;
  /** An event that could not be understood; the stream goes on. Counted in `malformed` as well. */
  onMalformed?(raw: string, reason: string): void;
  /** The stream can no longer be parsed (buffer limit exceeded); nothing more will be delivered. */
  onFatal?(message: string): void;
}

export interface JsonStreamParser {
  /** Feeds raw bytes (decoded as streaming UTF-8, so a character split across chunks is kept whole). */
  feedBytes(bytes: Uint8Array): void;
  /** Feeds already-decoded text. */
  feed(text: string): void;
  /** End of input: parses a last line/event that had no terminator. */
  end(): void;
  /** Malformed events skipped so far. */
  readonly malformed: number;
  /** True once a parse became impossible (see onFatal). */
  readonly failed: boolean;
}

export type Framing = 'sse' | 'ndjson' | 'json';

export function createJsonStreamParser(framing: Framing, handlers: JsonStreamHandlers, options: { maxBufferSize?: number } = {}): JsonStreamParser {
  switch (framing) {
    case 'sse':
      return createSseJsonParser(handlers, options);
    case 'ndjson':
      return createNdjsonParser(handlers, options);
    case 'json':
      return createWholeJsonParser(handlers, options);
  }
}

/** Shared between the framings: UTF-8 decoding, BOM, JSON.parse with malformed counting. */
abstract class JsonStreamBase implements JsonStreamParser {
  // fatal: false replaces bad bytes with U+FFFD instead of throwing: a bad byte spoils one event, not the stream.
  // ignoreBOM: false strips a BOM at the start of the byte stream.
  #decoder = new TextDecoder('utf-8', { fatal: false, ignoreBOM: false });
  #sawText = false;
  #sawBytes = false;
  #decoderMayHoldBytes = false;
  #malformed = 0;
  #failed = false;
  protected readonly handlers: JsonStreamHandlers;
  protected readonly maxBufferSize: number;

  constructor(handlers: JsonStreamHandlers, options: { maxBufferSize?: number }) {
    this.handlers = handlers;
    this.maxBufferSize = options.maxBufferSize ?? DEFAULT_MAX_BUFFER;
  }

  get malformed(): number {
    return this.#malformed;
  }
  get failed(): boolean {
    return this.#failed;
  }

  feedBytes(bytes: Uint8Array): void {
    if (this.#failed || bytes.length === 0) return;
    let text: string;
    // Fast path (a TextDecoder call costs ~2 µs, a native slice a fraction): when the decoder holds
    // no partial character and this chunk ends on an ASCII byte, it cannot end inside a multibyte
    // character, so it decodes on its own. The first chunk always takes the decoder (it strips a BOM).
    if (!this.#decoderMayHoldBytes && this.#sawBytes && bytes[bytes.length - 1]! < 0x80) {
      text = (Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length)).toString('utf8');
    } else {
      text = this.#decoder.decode(bytes, { stream: true });
      // Bytes ≥ 0x80 at the end may be a character still incomplete, kept inside the decoder.
      this.#decoderMayHoldBytes = bytes[bytes.length - 1]! >= 0x80;
    }
    this.#sawBytes = true;
    if (text.length > 0) this.feed(text);
  }

  feed(text: string): void {
    if (this.#failed) return;
    if (!this.#sawText) {
      if (text.length === 0) return;
      this.#sawText = true;
      // Text fed directly (not through feedBytes) may still start with a BOM.
      if (text.charCodeAt(0) === BOM) text = text.slice(1);
      if (text.length === 0) return;
    }
    this.feedText(text);
  }

  end(): void {
    if (this.#failed) return;
    const rest = this.#decoder.decode();
    if (rest.length > 0) this.feed(rest);
    // The flushed rest (a U+FFFD for a cut character) can tip the buffer over its limit: then there is
    // nothing left to end, and eventsource-parser throws if fed after that.
    if (this.#failed) return;
    this.endText();
  }

  protected abstract feedText(text: string): void;
  protected abstract endText(): void;

  protected parseJson(raw: string, eventType: string | undefined): void {
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch (err) {
      this.malformedEvent(raw, `invalid JSON: ${(err as Error).message}`);
      return;
    }
    this.handlers.onValue(value, eventType);
  }

  protected malformedEvent(raw: string, reason: string): void {
    this.#malformed++;
    this.handlers.onMalformed?.(raw.length > 200 ? `${raw.slice(0, 200)}…` : raw, reason);
  }

  protected fail(message: string): void {
    this.#failed = true;
    this.handlers.onFatal?.(message);
  }
}

class SseJsonParser extends JsonStreamBase {
  #parser: EventSourceParser;

  constructor(handlers: JsonStreamHandlers, options: { maxBufferSize?: number }) {
    super(handlers, options);
    this.#parser = createParser({
      maxBufferSize: this.maxBufferSize,
      onEvent: (event) => {
        const data = event.data;
        // The OpenAI sentinel; compared by char codes first since nearly every event starts with '{'.
        if (data.charCodeAt(0) === 91 /* [ */ && data === '[DONE]') {
          this.handlers.onDone?.();
          return;
        }
        if (data.length === 0) return; // a keep-alive `data:` with nothing in it
        this.parseJson(data, event.event);
      },
      onError: (err) => {
        if (err.type === 'max-buffer-size-exceeded') this.fail(err.message);
        // A line that is no SSE field at all (e.g. bare JSON without `data:`) is the server's mistake:
        // count it. An invalid `retry:` is harmless to a one-shot stream.
        else if (err.type === 'unknown-field') this.malformedEvent(err.line ?? err.field ?? '', err.message);
      },
    });
    this.#skipMojibakeBom();
  }

  /**
   * eventsource-parser drops a UTF-8 BOM read as Latin-1 ("ï»¿") only when it comes whole in its first
   * chunk, so whether those three characters count would depend on where the network split the bytes.
   * Our text is decoded as UTF-8 (a real BOM is gone already): an empty first chunk turns that off.
   */
  #skipMojibakeBom(): void {
    this.#parser.feed('');
  }

  protected feedText(text: string): void {
    this.#parser.feed(text);
  }

  protected endText(): void {
    // A last event without its blank line: take it as ended (servers that close right after `data: …\n`).
    // Two line ends finish a partial line and then the event; on a cleanly ended stream they are no-ops.
    this.#parser.feed('\n\n');
    this.#parser.reset();
    this.#skipMojibakeBom();
  }
}

class NdjsonParser extends JsonStreamBase {
  #fragments: string[] = [];
  #fragmentsLength = 0;

  protected feedText(chunk: string): void {
    let lf = chunk.indexOf('\n');
    if (lf === -1) {
      // No line end yet: keep the fragment, join later (no per-chunk concatenation).
      this.#fragments.push(chunk);
      this.#fragmentsLength += chunk.length;
      if (this.#fragmentsLength > this.maxBufferSize) {
        this.#fragments.length = 0;
        this.#fragmentsLength = 0;
        this.fail(`Buffered data exceeded max buffer size of ${this.maxBufferSize} characters`);
      }
      return;
    }
    let start = 0;
    if (this.#fragments.length > 0) {
      this.#fragments.push(chunk.slice(0, lf));
      const line = this.#fragments.join('');
      this.#fragments.length = 0;
      this.#fragmentsLength = 0;
      this.#line(line, 0, line.length);
      start = lf + 1;
      lf = chunk.indexOf('\n', start);
    }
    while (lf !== -1) {
      this.#line(chunk, start, lf);
      start = lf + 1;
      lf = chunk.indexOf('\n', start);
    }
    if (start < chunk.length) {
      const rest = start === 0 ? chunk : chunk.slice(start);
      this.#fragments.push(rest);
      this.#fragmentsLength = rest.length;
      if (this.#fragmentsLength > this.maxBufferSize) {
        this.#fragments.length = 0;
        this.#fragmentsLength = 0;
        this.fail(`Buffered data exceeded max buffer size of ${this.maxBufferSize} characters`);
      }
    }
  }

  protected endText(): void {
    if (this.#fragments.length === 0) return;
    const line = this.#fragments.join('');
    this.#fragments.length = 0;
    this.#fragmentsLength = 0;
    this.#line(line, 0, line.length);
  }

  /** One line in text[start, end); a trailing CR (CRLF endings) and blank lines are dropped. */
  #line(text: string, start: number, end: number): void {
    if (end > start && text.charCodeAt(end - 1) === CR) end--;
    while (start < end && isSpace(text.charCodeAt(start))) start++;
    if (start === end) return;
    this.parseJson(start === 0 && end === text.length ? text : text.slice(start, end), undefined);
  }
}

/** A server that ignored `stream: true` and sent one JSON document: parsed once, at the end. */
class WholeJsonParser extends JsonStreamBase {
  #fragments: string[] = [];
  #length = 0;

  protected feedText(text: string): void {
    this.#fragments.push(text);
    this.#length += text.length;
    if (this.#length > this.maxBufferSize) {
      this.#fragments.length = 0;
      this.fail(`Buffered data exceeded max buffer size of ${this.maxBufferSize} characters`);
    }
  }

  protected endText(): void {
    const text = this.#fragments.join('');
    this.#fragments.length = 0;
    if (text.trim().length > 0) this.parseJson(text, undefined);
  }
}

function isSpace(code: number): boolean {
  return code === 32 || code === 9 || code === LF || code === CR;
}

export function createSseJsonParser(handlers: JsonStreamHandlers, options: { maxBufferSize?: number } = {}): JsonStreamParser {
  return new SseJsonParser(handlers, options);
}

export function createNdjsonParser(handlers: JsonStreamHandlers, options: { maxBufferSize?: number } = {}): JsonStreamParser {
  return new NdjsonParser(handlers, options);
}

function createWholeJsonParser(handlers: JsonStreamHandlers, options: { maxBufferSize?: number } = {}): JsonStreamParser {
  return new WholeJsonParser(handlers, options);
}
