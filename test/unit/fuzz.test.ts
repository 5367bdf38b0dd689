// Property-based fuzzing of the hot path: the stream parsers (every framing) and the endpoint adapters.
// Each property runs a bounded number of cases from a fixed seed, so a run is reproducible and the file
// stays within ~10 s; a failure message carries the seed and the shrunk counterexample. To explore:
// FUZZ_SEED=<n> FUZZ_SCALE=<multiplier of the run counts> node --import tsx --test test/unit/fuzz.test.ts
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fc from 'fast-check';
import { DEFAULT_MAX_BUFFER, createJsonStreamParser } from '../../src/engine/transport/streamParsers';
import type { Framing, JsonStreamParser } from '../../src/engine/transport/streamParsers';
import { maxTokensOf, promptText, splitSystem } from '../../src/engine/transport/adapters/adapter';
import type { EventInfo } from '../../src/engine/transport/adapters/adapter';
import { adapterFor } from '../../src/engine/transport/adapters/registry';
import { API_KINDS } from '../../src/engine/core/apis';
import type { ChatMessage, EndpointSpec, RequestSpec } from '../../src/engine/core/types';

const SEED = process.env.FUZZ_SEED === undefined ? 0x16f022 : Number(process.env.FUZZ_SEED);
const SCALE = process.env.FUZZ_SCALE === undefined ? 1 : Number(process.env.FUZZ_SCALE);

/** Runs a property from the fixed seed; fast-check's failure message names the seed and the shrink path. */
function check<Ts>(property: fc.IProperty<Ts>, numRuns: number): void {
  fc.assert(property, { seed: SEED, numRuns: Math.max(1, Math.round(numRuns * SCALE)) });
}

const LF = 10;
const CR = 13;
const FRAMINGS: readonly Framing[] = ['sse', 'ndjson', 'json'];

// ---- running a parser -------------------------------------------------------------------------

/** Everything a parser reported, in order, plus its own counters. */
interface Trace {
  readonly log: unknown[];
  values: number;
  done: number;
  malformedCalls: number;
  fatalCalls: number;
  /** A callback arrived after onFatal (must never happen). */
  afterFatal: number;
  parser: JsonStreamParser;
}

function run(framing: Framing, chunks: readonly Uint8Array[], maxBufferSize?: number, afterEach?: (parser: JsonStreamParser, fed: number) => void): Trace {
  const trace: Omit<Trace, 'parser'> = { log: [], values: 0, done: 0, malformedCalls: 0, fatalCalls: 0, afterFatal: 0 };
  const seen = (): void => {
    if (trace.fatalCalls > 0) trace.afterFatal++;
  };
  const parser = createJsonStreamParser(
    framing,
    {
      onValue: (value, eventType) => {
        seen();
        trace.values++;
        trace.log.push(eventType === undefined ? ['value', value] : ['value', value, eventType]);
      },
      onDone: () => {
        seen();
        trace.done++;
        trace.log.push(['done']);
      },
      onMalformed: (raw, reason) => {
        seen();
        assert.equal(typeof raw, 'string');
        assert.equal(typeof reason, 'string');
        assert.ok(raw.length <= 201, 'onMalformed gets a shortened line');
        trace.malformedCalls++;
        trace.log.push(['malformed']);
      },
      onFatal: (message) => {
        seen();
        assert.equal(typeof message, 'string');
        trace.fatalCalls++;
        trace.log.push(['fatal']);
      },
    },
    maxBufferSize === undefined ? {} : { maxBufferSize },
  );
  let fed = 0;
  for (const chunk of chunks) {
    parser.feedBytes(chunk);
    fed += chunk.length;
    afterEach?.(parser, fed);
  }
  parser.end();
  return { ...trace, parser };
}

/** The counters a parser keeps agree with the callbacks it made, whatever the input. */
function assertConsistent(t: Trace): void {
  assert.equal(t.parser.malformed, t.malformedCalls, 'malformed counter = onMalformed calls');
  assert.ok(t.fatalCalls <= 1, 'onFatal at most once');
  assert.equal(t.parser.failed, t.fatalCalls === 1, 'failed ⇔ onFatal was called');
  assert.equal(t.afterFatal, 0, 'nothing is delivered after onFatal');
}

// ---- splitting a byte stream --------------------------------------------------------------------

interface SplitPlan {
  readonly mode: 'whole' | 'random' | 'tricky' | 'bytes';
  readonly cuts: readonly number[];
  /** Plain Uint8Array chunks instead of Buffer views (the parser's other decoding path). */
  readonly plain: boolean;
}

const splitPlanArb: fc.Arbitrary<SplitPlan> = fc.record({
  mode: fc.constantFrom('whole', 'random', 'tricky', 'bytes'),
  cuts: fc.array(fc.nat(), { maxLength: 24, size: 'large' }),
  plain: fc.boolean(),
});

/**
 * Cuts `bytes` into chunks. 'tricky' cuts only where a decoder or a line splitter can go wrong:
 * inside a multibyte UTF-8 character, between CR and LF, right after a line end.
 */
function split(bytes: Uint8Array, plan: SplitPlan): Uint8Array[] {
  let offsets: number[];
  if (plan.mode === 'whole') offsets = [];
  else if (plan.mode === 'bytes') offsets = Array.from({ length: Math.max(0, bytes.length - 1) }, (_, i) => i + 1);
  else {
    let candidates: number[] | undefined;
    if (plan.mode === 'tricky') {
      candidates = [];
      for (let i = 1; i < bytes.length; i++) {
        const b = bytes[i]!;
        const prev = bytes[i - 1]!;
        if ((b & 0xc0) === 0x80 || prev === CR || prev === LF || b === CR || prev === 0xef) candidates.push(i);
      }
    }
    offsets = plan.cuts.map((c) => (candidates !== undefined && candidates.length > 0 ? candidates[c % candidates.length]! : c % (bytes.length + 1)));
    offsets = [...new Set(offsets)].sort((a, b) => a - b);
  }
  const chunks: Uint8Array[] = [];
  let start = 0;
  for (const end of [...offsets, bytes.length]) {
    const view = Buffer.from(bytes.buffer, bytes.byteOffset + start, end - start);
    chunks.push(plan.plain ? new Uint8Array(view) : view);
    start = end;
  }
  return chunks;
}

const utf8 = (text: string): Buffer => Buffer.from(text, 'utf8');

// ---- valid streams -------------------------------------------------------------------------------

/** Any JSON value, with text from the whole of Unicode (astral, combining, RTL: multibyte in UTF-8). */
const jsonArb = fc.jsonValue({ maxDepth: 3, stringUnit: 'binary' });
const eolArb = fc.constantFrom('\n', '\r\n', '\r');
/** What a value reads back as after a round trip through JSON text (-0 comes back as 0). */
const roundTrip = (value: unknown): unknown => JSON.parse(JSON.stringify(value));

type SseEvent =
  | { readonly kind: 'value'; readonly value: unknown; readonly eventType: string | null; readonly pretty: boolean; readonly space: boolean; readonly comment: boolean; readonly id: boolean }
  | { readonly kind: 'done' }
  | { readonly kind: 'keepalive' };

const sseEventArb: fc.Arbitrary<SseEvent> = fc.oneof(
  { weight: 6, arbitrary: fc.record({
    kind: fc.constant('value' as const),
    value: jsonArb,
    eventType: fc.option(fc.string({ unit: 'binary', minLength: 1, maxLength: 12 }).filter((s) => !/[\r\n]/.test(s))),
    pretty: fc.boolean(),
    space: fc.boolean(),
    comment: fc.boolean(),
    id: fc.boolean(),
  }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'done' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'keepalive' as const }) },
);

interface SseStream {
  readonly events: readonly SseEvent[];
  readonly eol: string;
  readonly bom: boolean;
  /** How the stream ends after the last event: blank line, just its line end, or nothing at all. */
  readonly ending: 'blank' | 'eol' | 'none';
}

const sseStreamArb: fc.Arbitrary<SseStream> = fc.record({
  events: fc.array(sseEventArb, { maxLength: 8, size: 'max' }),
  eol: eolArb,
  bom: fc.boolean(),
  ending: fc.constantFrom('blank', 'eol', 'none'),
});

function sseText(s: SseStream): { text: string; expected: unknown[] } {
  const lines: string[][] = [];
  const expected: unknown[] = [];
  for (const e of s.events) {
    const event: string[] = [];
    if (e.kind === 'done') {
      event.push('data: [DONE]');
      expected.push(['done']);
    } else if (e.kind === 'keepalive') {
      event.push('data:');
    } else {
      if (e.comment) event.push(': keep-alive');
      if (e.id) event.push('id: 7');
      if (e.eventType !== null) event.push(`event: ${e.eventType}`);
      // Pretty-printed JSON travels as several `data:` lines, joined back with LF.
      const json = JSON.stringify(e.value, null, e.pretty ? 1 : undefined);
      for (const line of json.split('\n')) event.push(`data:${e.space ? ' ' : ''}${line}`);
      const value = roundTrip(e.value);
      expected.push(e.eventType === null ? ['value', value] : ['value', value, e.eventType]);
    }
    lines.push(event);
  }
  let text = lines.map((event) => event.map((l) => l + s.eol).join('') + s.eol).join('');
  if (lines.length > 0 && s.ending !== 'blank') text = text.slice(0, text.length - s.eol.length * (s.ending === 'eol' ? 1 : 2));
  return { text: (s.bom ? '\uFEFF' : '') + text, expected };
}

interface NdjsonStream {
  readonly lines: readonly { readonly value: unknown | undefined; readonly lead: string; readonly trail: string }[];
  readonly eol: string;
  readonly bom: boolean;
  readonly lastEol: boolean;
}

const wsArb = fc.string({ unit: fc.constantFrom(' ', '\t'), maxLength: 3 });
const ndjsonStreamArb: fc.Arbitrary<NdjsonStream> = fc.record({
  // undefined: a blank (or whitespace-only) line
  lines: fc.array(fc.record({ value: fc.option(jsonArb, { nil: undefined, freq: 5 }), lead: wsArb, trail: wsArb }), { maxLength: 10, size: 'max' }),
  eol: fc.constantFrom('\n', '\r\n'),
  bom: fc.boolean(),
  lastEol: fc.boolean(),
});

function ndjsonText(s: NdjsonStream): { text: string; expected: unknown[] } {
  const expected: unknown[] = [];
  const body = s.lines.map((l) => {
    if (l.value === undefined) return l.lead + l.trail;
    expected.push(['value', roundTrip(l.value)]);
    return l.lead + JSON.stringify(l.value) + l.trail;
  });
  const text = body.join(s.eol) + (s.lastEol && body.length > 0 ? s.eol : '');
  return { text: (s.bom ? '\uFEFF' : '') + text, expected };
}

const wholeJsonArb = fc.record({ value: jsonArb, pretty: fc.boolean(), lead: fc.string({ unit: fc.constantFrom(' ', '\t', '\n', '\r\n'), maxLength: 3 }), bom: fc.boolean() });

test('fuzz: a valid SSE stream gives the same events however its bytes are split', () => {
  check(fc.property(sseStreamArb, splitPlanArb, (stream, plan) => {
    const { text, expected } = sseText(stream);
    const bytes = utf8(text);
    const got = run('sse', split(bytes, plan));
    assert.deepEqual(got.log, expected);
    assert.equal(got.parser.malformed, 0);
    assertConsistent(got);
  }), 1500);
});

test('fuzz: a valid NDJSON stream gives the same values however its bytes are split', () => {
  check(fc.property(ndjsonStreamArb, splitPlanArb, (stream, plan) => {
    const { text, expected } = ndjsonText(stream);
    const got = run('ndjson', split(utf8(text), plan));
    assert.deepEqual(got.log, expected);
    assertConsistent(got);
  }), 1500);
});

test('fuzz: a whole JSON document gives one value however its bytes are split', () => {
  check(fc.property(wholeJsonArb, splitPlanArb, (doc, plan) => {
    const text = (doc.bom ? '\uFEFF' : '') + doc.lead + JSON.stringify(doc.value, null, doc.pretty ? 2 : undefined) + doc.lead;
    const got = run('json', split(utf8(text), plan));
    assert.deepEqual(got.log, [['value', roundTrip(doc.value)]]);
    assertConsistent(got);
  }), 500);
});

// ---- garbage in ---------------------------------------------------------------------------------

/** Pieces that make parsers take their rarer branches, glued at random. */
const pieceArb = fc.oneof(
  fc.constantFrom('data:', 'data: ', 'event: x', 'id: 1', 'id:\0', 'retry: 5', 'retry: x', ': c', 'nonsense', '\n', '\r', '\r\n', '\n\n',
    '[DONE]', '{', '}', '[', ']', '"', ',', ':', ' ', '\t', '\uFEFF', 'ï»¿', 'é', '€', '𝄞', '{"a":1}', 'null', '1e999', '-0'),
  fc.string({ unit: 'binary', maxLength: 20 }),
  jsonArb.map((v) => JSON.stringify(v)),
);

/** Bytes: random, or glued pieces with random bytes spliced in (lone continuation bytes, cut characters, overlong forms). */
const garbageArb: fc.Arbitrary<Uint8Array> = fc.oneof(
  fc.uint8Array({ maxLength: 600, size: 'max' }),
  fc.record({ pieces: fc.array(pieceArb, { maxLength: 40, size: 'max' }), noise: fc.array(fc.tuple(fc.nat(), fc.uint8Array({ minLength: 1, maxLength: 3 })), { maxLength: 4 }) })
    .map(({ pieces, noise }) => {
      let bytes: Uint8Array = utf8(pieces.join(''));
      for (const [at, extra] of noise) {
        const i = at % (bytes.length + 1);
        bytes = Buffer.concat([bytes.subarray(0, i), extra, bytes.subarray(i)]);
      }
      return bytes;
    }),
);

function lineEnds(bytes: Uint8Array): number {
  let n = 0;
  for (const b of bytes) if (b === LF || b === CR) n++;
  return n;
}

test('fuzz: random bytes never throw, counters stay consistent, and splitting changes nothing', () => {
  check(fc.property(fc.constantFrom(...FRAMINGS), garbageArb, splitPlanArb, (framing, bytes, plan) => {
    const whole = run(framing, [bytes]);
    const got = run(framing, split(bytes, plan));
    assertConsistent(whole);
    assertConsistent(got);
    // Each delivered thing needs a line (or the end of input) of its own.
    assert.ok(got.values + got.done + got.malformedCalls <= lineEnds(bytes) + 1, 'no more events than lines');
    if (framing === 'json') assert.ok(got.values + got.malformedCalls <= 1, 'one document at most');
    // Far below the buffer limit, the split never matters: not for values, nor for what was malformed.
    assert.deepEqual(got.log, whole.log);
  }), 2500);
});

/** Characters after the last line end, as decoded before end() flushes the decoder: about what a parser retains. */
function tailLength(framing: Framing, bytes: Uint8Array): number {
  const text = new TextDecoder().decode(bytes, { stream: true });
  return framing === 'json' ? text.length : text.length - 1 - Math.max(text.lastIndexOf('\n'), text.lastIndexOf('\r'));
}

test('fuzz: with a small buffer limit, random bytes never throw and counters stay consistent', () => {
  // A limit at random, or right at the edge of what the input leaves buffered (where end() can tip it over).
  const limitArb = fc.oneof(fc.integer({ min: 1, max: 256 }), fc.integer({ min: -2, max: 2 }).map((edge) => ({ edge })));
  check(fc.property(fc.constantFrom(...FRAMINGS), garbageArb, splitPlanArb, limitArb, (framing, bytes, plan, limit) => {
    const max = typeof limit === 'number' ? limit : Math.max(1, tailLength(framing, bytes) + limit.edge);
    assertConsistent(run(framing, split(bytes, plan), max));
  }), 2500);
});

test('found by fuzzing (seed 0x16f022): end() after the decoder flush tips the buffer over its limit', () => {
  // "\0" fits a limit of 1; the cut character (0xC2) comes out of the decoder at end() as U+FFFD, the
  // second character. SSE used to feed eventsource-parser after it had failed, which throws.
  for (const framing of FRAMINGS) {
    const got = run(framing, [Uint8Array.of(0x00, 0xc2)], 1);
    assertConsistent(got);
    assert.equal(got.fatalCalls, 1, framing);
  }
});

test('found by fuzzing (seed 3): a UTF-8 BOM misread as Latin-1 counts the same however it is split', () => {
  // eventsource-parser dropped "ï»¿" only when it came whole in the first chunk.
  const bytes = utf8('ï»¿data: {"a":1}\n\ndata: {"a":2}\n\n');
  const whole = run('sse', [bytes]);
  for (let i = 0; i <= 6; i++) assert.deepEqual(run('sse', [bytes.subarray(0, i), bytes.subarray(i)]).log, whole.log, `split at ${i}`);
  assert.deepEqual(whole.log, [['malformed'], ['value', { a: 2 }]]);
});

/**
 * The documented limit: at most `maxBufferSize` characters of not yet terminated text are kept; beyond
 * it the parser fails (once) and keeps nothing. Here the model is exact: an NDJSON line (or a whole
 * JSON document, or an SSE line with no event pending) is what is retained until its line end.
 */
test('fuzz: the retained buffer never exceeds the limit (fails exactly when it would)', () => {
  const arb = fc.record({
    framing: fc.constantFrom(...FRAMINGS),
    limit: fc.integer({ min: 1, max: 4096 }),
    // line lengths, some of them long and a last one maybe without its line end
    lines: fc.array(fc.nat({ max: 9000 }), { minLength: 1, maxLength: 5 }),
    lastEol: fc.boolean(),
    plan: splitPlanArb.filter((p) => p.mode !== 'bytes'),
  });
  check(fc.property(arb, ({ framing, limit, lines, lastEol, plan }) => {
    // SSE: bare comment lines (no data pending) so only the unterminated line is retained.
    const line = (n: number): string => (framing === 'sse' ? `:${'x'.repeat(n)}` : 'x'.repeat(n));
    const text = lines.map(line).join('\n') + (lastEol ? '\n' : '');
    let shouldFail = false;
    let lastLf = -1;
    let seen = 0;
    const got = run(framing, split(utf8(text), plan), limit, (parser, fed) => {
      for (; seen < fed; seen++) if (text.charCodeAt(seen) === LF && framing !== 'json') lastLf = seen;
      if (fed - lastLf - 1 > limit) shouldFail = true;
      assert.equal(parser.failed, shouldFail, `after ${fed} of ${text.length} chars (limit ${limit})`);
    });
    assertConsistent(got);
    assert.equal(got.parser.failed, shouldFail);
  }), 1000);
});

test('the limit holds for 50 MB of one line without a line end, in every framing', () => {
  // One 64 KiB chunk fed again and again: the test itself allocates nothing that grows.
  const chunk = Buffer.alloc(64 * 1024, 'a'.charCodeAt(0));
  const total = 50 * 1024 * 1024;
  for (const framing of FRAMINGS) {
    const gc = (globalThis as { gc?: () => void }).gc;
    gc?.();
    const before = process.memoryUsage().heapUsed;
    let failedAt = -1;
    const got = run(framing, Array.from({ length: total / chunk.length }, () => chunk), undefined, (parser, fed) => {
      if (parser.failed && failedAt === -1) failedAt = fed;
    });
    assertConsistent(got);
    assert.equal(got.fatalCalls, 1, framing);
    // It fails on the first chunk that takes it past the limit, not later (nothing past it is kept).
    assert.equal(failedAt, (Math.floor(DEFAULT_MAX_BUFFER / chunk.length) + 1) * chunk.length, framing);
    assert.equal(got.values + got.malformedCalls, 0, framing);
    if (gc !== undefined) {
      gc();
      assert.ok(process.memoryUsage().heapUsed - before < 8 * 1024 * 1024, `${framing}: heap grew by ${process.memoryUsage().heapUsed - before}`);
    }
  }
});

test('100k unclosed brackets, and 100k balanced ones, in every framing', () => {
  const open = '['.repeat(100_000);
  const deep = open + ']'.repeat(100_000);
  for (const framing of FRAMINGS) {
    for (const [text, values] of [[`${open}\n`, 0], [`${deep}\n`, 1], [`data: ${open}\n\n`, 0], [`data: ${deep}\n\n`, 1]] as const) {
      const sse = text.startsWith('data:');
      if (sse !== (framing === 'sse')) continue;
      const got = run(framing, split(utf8(text), { mode: 'random', cuts: [1, 5000, 150_000], plain: false }));
      assertConsistent(got);
      assert.equal(got.values, values, framing);
      assert.equal(got.malformedCalls, 1 - values, framing);
    }
  }
});

// ---- adapters: interpret ------------------------------------------------------------------------

/** Values of every odd kind (numbers that JSON cannot even carry included: an adapter may be handed anything). */
const oddArb: fc.Arbitrary<unknown> = fc.oneof(
  jsonArb,
  fc.constantFrom(NaN, Infinity, -Infinity, -1, -0, 0, 1.5, 1e308, Number.MAX_SAFE_INTEGER, '12', '', 'NaN', true, false, null, undefined, [], {}),
  fc.double(),
);
const numishArb = fc.oneof(fc.double(), fc.integer(), oddArb);
/** Text, including a huge string now and then (cheap to make: one repeat). */
const textArb = fc.oneof(
  { weight: 5, arbitrary: fc.string({ unit: 'binary', maxLength: 30 }) },
  { weight: 1, arbitrary: fc.nat({ max: 300_000 }).map((n) => '€'.repeat(n)) },
  { weight: 2, arbitrary: oddArb },
);
const maybe = <T>(arb: fc.Arbitrary<T>) => fc.oneof(arb, oddArb);
const partial = <T extends Record<string, fc.Arbitrary<unknown>>>(fields: T) => fc.record(fields, { requiredKeys: [] });

/** Arrays nested up to 100k deep (JSON.parse builds them without recursion; other code may not). */
const deepArb = fc.nat({ max: 100_000 }).map((depth) => {
  let v: unknown = [];
  for (let i = 0; i < depth; i++) v = [v];
  // fast-check prints a counterexample by recursion: give it a short name instead.
  return Object.defineProperty(v, fc.toStringMethod, { value: () => `<${depth} nested arrays>` });
});
const codeArb = fc.oneof(fc.string(), fc.integer(), fc.constant(null));
/** Error objects as servers send them: a string, or an object with a message and a code. */
const errorArb = fc.oneof(textArb, partial({ message: textArb, code: codeArb, type: codeArb, param: oddArb }));
/**
 * Error objects no server means to send but JSON can carry: a code with own `toString`/`valueOf`
 * (String() of it throws) and very deep nesting (JSON.stringify of it throws). These broke
 * streamError once (String(code), JSON.stringify of deep nesting).
 */
const hostileErrorArb = partial({
  message: textArb,
  code: fc.oneof(codeArb, oddArb, fc.dictionary(fc.constantFrom('toString', 'valueOf', 'toJSON', 'message'), oddArb, { noNullPrototype: true })),
  type: oddArb,
  details: deepArb,
});
const usageArb = maybe(partial({
  prompt_tokens: numishArb,
  completion_tokens: numishArb,
  total_tokens: numishArb,
  completion_tokens_details: maybe(partial({ reasoning_tokens: numishArb })),
}));
const timingsArb = maybe(partial({ prompt_n: numishArb, prompt_ms: numishArb, predicted_n: numishArb, predicted_ms: numishArb, predicted_per_second: numishArb }));
const deltaArb = maybe(partial({ role: textArb, content: textArb, reasoning_content: textArb, reasoning: textArb, tool_calls: oddArb }));
const choiceArb = maybe(partial({ index: numishArb, delta: deltaArb, message: deltaArb, text: textArb, finish_reason: textArb, logprobs: oddArb }));

const openaiEventArb = partial({
  id: textArb,
  object: fc.oneof(fc.constantFrom('chat.completion.chunk', 'text_completion', 'error'), oddArb),
  choices: fc.oneof(fc.array(choiceArb, { maxLength: 5 }), oddArb),
  usage: usageArb,
  timings: timingsArb,
  error: errorArb,
  message: textArb,
});
const ollamaEventArb = partial({
  model: textArb,
  message: maybe(partial({ role: textArb, content: textArb, thinking: textArb })),
  done: fc.oneof(fc.boolean(), oddArb),
  done_reason: textArb,
  prompt_eval_count: numishArb,
  eval_count: numishArb,
  prompt_eval_duration: numishArb,
  eval_duration: numishArb,
  load_duration: numishArb,
  total_duration: numishArb,
  error: errorArb,
});
const llamacppEventArb = partial({
  content: textArb,
  tokens: fc.oneof(fc.array(oddArb, { maxLength: 6 }), oddArb),
  stop: fc.oneof(fc.boolean(), oddArb),
  tokens_predicted: numishArb,
  tokens_evaluated: numishArb,
  timings: timingsArb,
  error: errorArb,
});
const anyEventArb = fc.oneof(openaiEventArb, ollamaEventArb, llamacppEventArb, oddArb, fc.anything({ maxDepth: 3 }));

const INFO_KEYS = new Set(['content', 'reasoning', 'tokens', 'usage', 'responseId', 'serverTimings', 'ignoredTimings', 'done', 'error']);
const USAGE_KEYS = new Set(['promptTokens', 'completionTokens', 'reasoningTokens']);
const TIMING_KEYS = new Set(['promptTokens', 'promptMs', 'predictedTokens', 'predictedMs', 'loadMs', 'totalMs', 'queueMs', 'serverTtftMs', 'cachedTokens', 'meanItlMs']);

function assertFiniteFields(value: unknown, keys: ReadonlySet<string>, what: string): void {
  assert.ok(typeof value === 'object' && value !== null && !Array.isArray(value), `${what} is an object`);
  for (const [k, v] of Object.entries(value)) {
    if (k === 'source' && what === 'serverTimings') {
      assert.ok(['llamacpp', 'vllm', 'ollama', 'tgi'].includes(v as string), `${what}.source ${String(v)}`);
      continue;
    }
    assert.ok(keys.has(k), `${what}.${k} is a known field`);
    if (v !== undefined) assert.ok(typeof v === 'number' && Number.isFinite(v), `${what}.${k} is a finite number, got ${String(v)}`);
  }
}

/** What the client's #onEvent relies on (and what lands in a run file, which must serialize). */
function assertEventInfo(info: EventInfo): void {
  assert.ok(typeof info === 'object' && info !== null && !Array.isArray(info), 'interpret returns an object');
  for (const k of Object.keys(info)) assert.ok(INFO_KEYS.has(k), `unknown EventInfo field ${k}`);
  for (const k of ['content', 'reasoning', 'responseId', 'error'] as const) {
    if (info[k] !== undefined) assert.equal(typeof info[k], 'string', k);
  }
  if (info.tokens !== undefined) assert.ok(Number.isSafeInteger(info.tokens) && info.tokens >= 0, `tokens ${info.tokens}`);
  if (info.done !== undefined) assert.equal(typeof info.done, 'boolean', 'done');
  if (info.usage !== undefined) assertFiniteFields(info.usage, USAGE_KEYS, 'usage');
  if (info.serverTimings !== undefined) assertFiniteFields(info.serverTimings, TIMING_KEYS, 'serverTimings');
  if (info.ignoredTimings !== undefined) for (const n of info.ignoredTimings) assert.equal(typeof n, 'string', 'ignoredTimings');
  assert.doesNotThrow(() => JSON.stringify(info));
}

test('fuzz: every adapter interprets any event shape without throwing, within the EventInfo contract', () => {
  const adapters = API_KINDS.map((api) => adapterFor(api));
  check(fc.property(anyEventArb, (event) => {
    for (const adapter of adapters) {
      const info = adapter.interpret(event);
      assertEventInfo(info);
      // Pure: the same event reads the same twice.
      assert.deepEqual(adapter.interpret(event), info, adapter.api);
    }
  }), 3000);
});

test('fuzz: hostile error objects are read as errors, not thrown', () => {
  const adapters = API_KINDS.map((api) => adapterFor(api));
  check(fc.property(hostileErrorArb, (error) => {
    for (const adapter of adapters) {
      const info = adapter.interpret({ error });
      assertEventInfo(info);
      assert.equal(typeof info.error, 'string', adapter.api);
    }
  }), 300);
});

test('found by fuzzing (seed 0x16f022): an error code with its own toString, an error nested 100k deep', () => {
  const events = [
    '{"error":{"message":"m","code":{"toString":0}}}',
    '{"error":{"type":{"toString":0,"valueOf":0}}}',
    `{"error":{"details":${'['.repeat(100_000)}${']'.repeat(100_000)}}}`,
  ];
  const thrown: string[] = [];
  for (const text of events) {
    for (const api of API_KINDS) {
      try {
        assert.equal(typeof adapterFor(api).interpret(JSON.parse(text)).error, 'string');
      } catch (err) {
        thrown.push(`${api} ${text.slice(0, 48)}: ${(err as Error).message}`);
      }
    }
  }
  assert.deepEqual(thrown, []);
});

test('fuzz: every adapter reads what its parser parsed from random event text', () => {
  // The same shapes, but as a server sends them: text through the adapter's own framing.
  check(fc.property(fc.array(fc.oneof(openaiEventArb, ollamaEventArb, llamacppEventArb), { maxLength: 4 }), (events) => {
    for (const api of API_KINDS) {
      const adapter = adapterFor(api);
      const lines = events.map((e) => JSON.stringify(e) ?? 'null');
      const text = adapter.framing === 'sse' ? lines.map((l) => `data: ${l}\n\n`).join('') : lines.map((l) => `${l}\n`).join('');
      const infos: EventInfo[] = [];
      const parser = createJsonStreamParser(adapter.framing, { onValue: (v) => infos.push(adapter.interpret(v)) });
      parser.feedBytes(utf8(text));
      parser.end();
      assert.equal(infos.length, events.length, api);
      infos.forEach(assertEventInfo);
    }
  }), 200);
});

// ---- adapters: buildRequest ---------------------------------------------------------------------

const messageArb: fc.Arbitrary<ChatMessage> = fc.record({
  role: fc.constantFrom('system', 'user', 'assistant'),
  content: fc.oneof({ weight: 6, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) }, { weight: 1, arbitrary: fc.nat({ max: 200_000 }).map((n) => '𝄞\u2028\0"'.repeat(n)) }),
});
const maxTokensArb = fc.oneof(fc.integer({ min: 1, max: 1 << 20 }), fc.constantFrom(Number.MAX_SAFE_INTEGER, 2 ** 31, 1e21));
const requestSpecArb: fc.Arbitrary<RequestSpec> = fc.record({
  index: fc.nat(),
  warmup: fc.boolean(),
  prompt: fc.record({ messages: fc.array(messageArb, { maxLength: 5 }), maxTokens: maxTokensArb, temperature: fc.double({ min: 0, max: 2, noNaN: true }), source: fc.string() }, { requiredKeys: ['messages'] }),
  maxTokens: maxTokensArb,
  seed: fc.integer(),
  ignoreEos: fc.boolean(),
  temperature: fc.double({ min: 0, max: 2, noNaN: true }),
  scheduledAt: fc.double({ min: 0, noNaN: true }),
}, { requiredKeys: ['index', 'warmup', 'prompt', 'maxTokens', 'ignoreEos', 'scheduledAt'] });

/** Base URLs: fast-check's web URLs (queries, odd but legal paths) and http://host/ + any text the URL parser takes. */
const urlArb = fc.oneof(
  fc.webUrl({ withQueryParameters: true }),
  fc.tuple(fc.string({ unit: 'binary', maxLength: 20 }), fc.constantFrom('', '/v1', '/v1/', '?api-version=1')).map(([p, tail]) => `http://127.0.0.1:8000/${p}${tail}`),
).filter((url) => URL.canParse(url));

function endpointArb(api: EndpointSpec['api']): fc.Arbitrary<EndpointSpec> {
  return fc.record({
    url: urlArb,
    api: fc.constant(api),
    model: fc.string({ unit: 'binary', maxLength: 20 }),
    headers: fc.dictionary(fc.string({ minLength: 1, maxLength: 10 }), fc.string({ maxLength: 10 }), { maxKeys: 3 }),
  }, { requiredKeys: ['url', 'api'] });
}

test('fuzz: every adapter builds a request whose body is JSON and whose path is an origin-form path', () => {
  for (const api of API_KINDS) {
    const adapter = adapterFor(api);
    // Gemini names the model in the path: an endpoint without one is refused before anything is built.
    const endpoints = api === 'gemini' ? endpointArb(api).filter((e) => e.model !== undefined) : endpointArb(api);
    check(fc.property(requestSpecArb, endpoints, (spec, endpoint) => {
      const built = adapter.buildRequest(spec, endpoint);
      assert.equal(built.method, 'POST');
      // A request target a socket can carry: starts with '/', printable ASCII only (the URL parser percent-encodes the rest).
      assert.match(built.path, /^\/[\x21-\x7e]*$/);
      const body: unknown = JSON.parse(built.body);
      assert.ok(typeof body === 'object' && body !== null && !Array.isArray(body));
      const b = body as Record<string, unknown>;
      // Gemini streams by its URL (:streamGenerateContent?alt=sse), not by a body field.
      if (api === 'gemini') assert.match(built.path, /:streamGenerateContent\?(.*&)?alt=sse/);
      else assert.equal(b.stream, true);
      if (endpoint.model !== undefined && api !== 'gemini') assert.equal(b.model, endpoint.model);
      // The prompt survives the trip exactly (lone surrogates and U+2028 included).
      if (api === 'openai-chat' || api === 'ollama' || api === 'azure-openai') assert.deepEqual(b.messages, spec.prompt.messages.map((m) => ({ role: m.role, content: m.content })));
      else if (api === 'anthropic' || api === 'gemini') {
        const { system, turns } = splitSystem(spec.prompt);
        if (api === 'anthropic') {
          assert.equal(b.system, system);
          assert.deepEqual(b.messages, turns.map((m) => ({ role: m.role, content: m.content })));
        } else {
          assert.deepEqual(b.systemInstruction, system === undefined ? undefined : { parts: [{ text: system }] });
          assert.deepEqual(b.contents, turns.map((m) => ({ role: m.role === 'assistant' ? 'model' : 'user', parts: [{ text: m.content }] })));
        }
      } else assert.equal(b.prompt, promptText(spec.prompt));
      const maxTokens = api === 'ollama' ? (b.options as Record<string, unknown>).num_predict : api === 'llamacpp' ? b.n_predict : api === 'gemini' ? (b.generationConfig as Record<string, unknown>).maxOutputTokens : b.max_tokens;
      assert.equal(maxTokens, maxTokensOf(spec));
      assert.equal(built.headers['content-type'], 'application/json');
      for (const v of Object.values(built.headers)) assert.equal(typeof v, 'string');
    }), 150);
  }
});
