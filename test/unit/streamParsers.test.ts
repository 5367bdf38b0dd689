import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createJsonStreamParser, createNdjsonParser, createSseJsonParser } from '../../src/engine/transport/streamParsers';
import type { Framing, JsonStreamParser } from '../../src/engine/transport/streamParsers';

interface Collected {
  values: unknown[];
  events: (string | undefined)[];
  done: number;
  malformed: number;
  fatal: string[];
}

function collect(framing: Framing, feed: (p: JsonStreamParser) => void, maxBufferSize?: number): Collected {
  const out: Collected = { values: [], events: [], done: 0, malformed: 0, fatal: [] };
  const parser = createJsonStreamParser(
    framing,
    {
      onValue: (v, e) => {
        out.values.push(v);
        out.events.push(e);
      },
      onDone: () => out.done++,
      onFatal: (m) => out.fatal.push(m),
    },
    maxBufferSize === undefined ? {} : { maxBufferSize },
  );
  feed(parser);
  parser.end();
  out.malformed = parser.malformed;
  return out;
}

/** Feeds the bytes split at every offset (two chunks), and byte by byte; every way must agree. */
function everySplit(framing: Framing, text: string, expected: Omit<Collected, 'fatal' | 'events'>): void {
  const bytes = Buffer.from(text, 'utf8');
  const check = (label: string, got: Collected) => {
    assert.deepEqual(got.values, expected.values, label);
    assert.equal(got.done, expected.done, `${label}: [DONE] count`);
    assert.equal(got.malformed, expected.malformed, `${label}: malformed count`);
    assert.deepEqual(got.fatal, [], label);
  };
  check('whole', collect(framing, (p) => p.feedBytes(bytes)));
  for (let i = 0; i <= bytes.length; i++) {
    check(`split at ${i}`, collect(framing, (p) => {
      p.feedBytes(bytes.subarray(0, i));
      p.feedBytes(bytes.subarray(i));
    }));
  }
  check('byte by byte', collect(framing, (p) => {
    for (let i = 0; i < bytes.length; i++) p.feedBytes(bytes.subarray(i, i + 1));
  }));
  // Three chunks: every pair of cut points (fixtures are small enough).
  if (bytes.length <= 160) {
    for (let i = 0; i <= bytes.length; i++) {
      for (let j = i; j <= bytes.length; j += 3) {
        check(`split at ${i},${j}`, collect(framing, (p) => {
          p.feedBytes(bytes.subarray(0, i));
          p.feedBytes(bytes.subarray(i, j));
          p.feedBytes(bytes.subarray(j));
        }));
      }
    }
  }
}

const chat = (content: string) => ({ choices: [{ index: 0, delta: { content } }] });

test('SSE: LF, CRLF and CR line ends give the same events', () => {
  const events = [chat('Hel'), chat('lo'), chat(' wörld')];
  for (const eol of ['\n', '\r\n', '\r']) {
    const text = events.map((e) => `data: ${JSON.stringify(e)}${eol}${eol}`).join('') + `data: [DONE]${eol}${eol}`;
    everySplit('sse', text, { values: events, done: 1, malformed: 0 });
  }
});

test('SSE: a BOM at the start is stripped, split or whole', () => {
  const text = `\uFEFFdata: {"a":1}\n\ndata: {"a":2}\n\n`;
  everySplit('sse', text, { values: [{ a: 1 }, { a: 2 }], done: 0, malformed: 0 });
  // Fed as text, not bytes.
  const got = collect('sse', (p) => p.feed(text));
  assert.deepEqual(got.values, [{ a: 1 }, { a: 2 }]);
});

test('SSE: multibyte UTF-8 split across chunks stays whole', () => {
  const events = [chat('🙂'), chat('日本語'), chat('é'), chat('\u{1F680}x')];
  const text = events.map((e) => `data:${JSON.stringify(e)}\n\n`).join('');
  everySplit('sse', text, { values: events, done: 0, malformed: 0 });
  // No replacement characters anywhere.
  const got = collect('sse', (p) => {
    const b = Buffer.from(text);
    for (let i = 0; i < b.length; i++) p.feedBytes(b.subarray(i, i + 1));
  });
  assert.ok(!JSON.stringify(got.values).includes('\uFFFD'));
});

test('SSE: comments, keep-alives, event and id fields, multi-line data', () => {
  const text = [
    ': keep-alive',
    '',
    ':',
    '',
    'event: message',
    'id: 7',
    'data: {"a":',
    'data: 1}',
    '',
    'data:',
    '',
    'retry: 1000',
    'data: {"b":2}',
    '',
    'event: error',
    'data: {"error":{"message":"boom"}}',
    '',
    'data: [DONE]',
    '',
    '',
  ].join('\n');
  everySplit('sse', text, { values: [{ a: 1 }, { b: 2 }, { error: { message: 'boom' } }], done: 1, malformed: 0 });
  const got = collect('sse', (p) => p.feed(text));
  assert.deepEqual(got.events, ['message', undefined, 'error']);
});

test('SSE: malformed JSON and non-SSE lines are counted and the stream goes on', () => {
  const text = 'data: {"a":1}\n\ndata: {"a":\n\n{"bare":"json"}\n\ndata: not json\n\ndata: {"a":2}\n\ndata: [DONE]\n\n';
  everySplit('sse', text, { values: [{ a: 1 }, { a: 2 }], done: 1, malformed: 3 });
});

test('SSE: a last event without its blank line is still delivered at end()', () => {
  everySplit('sse', 'data: {"a":1}\n\ndata: {"a":2}', { values: [{ a: 1 }, { a: 2 }], done: 0, malformed: 0 });
  everySplit('sse', 'data: {"a":1}\n\ndata: {"a":2}\n', { values: [{ a: 1 }, { a: 2 }], done: 0, malformed: 0 });
  everySplit('sse', 'data: {"a":1}\r\n\r\ndata: {"a":2}\r', { values: [{ a: 1 }, { a: 2 }], done: 0, malformed: 0 });
});

test('SSE: events after [DONE] are still parsed (the caller decides)', () => {
  const got = collect('sse', (p) => p.feed('data: [DONE]\n\ndata: {"late":true}\n\n'));
  assert.equal(got.done, 1);
  assert.deepEqual(got.values, [{ late: true }]);
});

test('SSE: the buffer limit stops the stream with a fatal error', () => {
  const got = collect('sse', (p) => {
    p.feed('data: {"a":1}\n\n');
    for (let i = 0; i < 20; i++) p.feed('x'.repeat(10));
    p.feed('\n\ndata: {"a":2}\n\n');
  }, 100);
  assert.deepEqual(got.values, [{ a: 1 }]);
  assert.equal(got.fatal.length, 1);
  assert.match(got.fatal[0]!, /max buffer size/);
});

test('NDJSON: LF and CRLF, blank lines, a last line without LF', () => {
  const lines = [
    { model: 'm', message: { role: 'assistant', content: 'Hé' }, done: false },
    { model: 'm', message: { role: 'assistant', content: '🙂' }, done: false },
    { model: 'm', message: { role: 'assistant', content: '' }, done: true, eval_count: 2 },
  ];
  for (const eol of ['\n', '\r\n']) {
    const text = lines.map((l) => JSON.stringify(l)).join(`${eol}${eol}`) + eol;
    everySplit('ndjson', text, { values: lines, done: 0, malformed: 0 });
    everySplit('ndjson', lines.map((l) => JSON.stringify(l)).join(eol), { values: lines, done: 0, malformed: 0 });
  }
  everySplit('ndjson', `\uFEFF{"a":1}\n{"a":2}\n`, { values: [{ a: 1 }, { a: 2 }], done: 0, malformed: 0 });
});

test('NDJSON: malformed lines are counted and skipped', () => {
  everySplit('ndjson', '{"a":1}\n{"a":\nnot json at all\n{"a":2}\n', { values: [{ a: 1 }, { a: 2 }], done: 0, malformed: 2 });
});

test('NDJSON: a long line arriving in many small pieces is joined once, and the limit holds', () => {
  const value = { content: 'y'.repeat(5000) };
  const text = `${JSON.stringify(value)}\n`;
  const got = collect('ndjson', (p) => {
    for (let i = 0; i < text.length; i += 7) p.feed(text.slice(i, i + 7));
  });
  assert.deepEqual(got.values, [value]);
  const limited = collect('ndjson', (p) => {
    for (let i = 0; i < text.length; i += 7) p.feed(text.slice(i, i + 7));
  }, 1000);
  assert.deepEqual(limited.values, []);
  assert.equal(limited.fatal.length, 1);
});

test('whole-JSON framing parses one document at the end', () => {
  const doc = { id: 'x', choices: [{ message: { content: 'hi\nthere' } }] };
  everySplit('json', JSON.stringify(doc, null, 2), { values: [doc], done: 0, malformed: 0 });
  everySplit('json', '{"broken":', { values: [], done: 0, malformed: 1 });
});

test('the factories return independent parsers', () => {
  const a: unknown[] = [];
  const b: unknown[] = [];
  const pa = createSseJsonParser({ onValue: (v) => a.push(v) });
  const pb = createNdjsonParser({ onValue: (v) => b.push(v) });
  pa.feed('data: {"x":1}\n');
  pb.feed('{"y":');
  pa.feed('\n');
  pb.feed('2}\n');
  assert.deepEqual(a, [{ x: 1 }]);
  assert.deepEqual(b, [{ y: 2 }]);
});
