// The editor reads prompt files on a worker thread (issue 27, item 3): the CodeLens reads a file as
// soon as it is opened, untrusted workspaces included, and YAML costs about a second per MB, so the
// extension host's thread only sends the text and receives the parse. The host's side
// (src/extension/promptWorker/client.ts) runs here under node with the real worker bundle, built by
// esbuild.mjs's own options for dist/promptWorker.js: the host's event loop stays responsive during a
// 6 MB read, a read past its deadline is refused and the next one works, a cancelled read is dropped,
// every corpus file reads as it does on this thread, and without the bundle only small files are read.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { parsePromptFile } from '../../src/engine/prompts/promptFiles';
import { anyPulledIn, promptAccess } from '../../src/engine/prompts/siblingFiles';
import { IN_THREAD_MAX_BYTES, PromptReader, type Cancellation, type PromptReaderOptions } from '../../src/extension/promptWorker/client';
import { readDocument, type DocumentParse, type ParseRequest } from '../../src/extension/promptWorker/request';

const root = join(__dirname, '..', '..');
const corpus = join(root, 'test/fixtures/promptCorpus');
const parts = { parsePromptFile, promptAccess, anyPulledIn };
const inThread = async (r: ParseRequest) => readDocument(parts, r);

let dir = '';
let workerFile = '';
const readers: PromptReader[] = [];

/** A reader over the bundle built here, its log kept; disposed after the tests. */
function reader(o: Partial<PromptReaderOptions> = {}): { reader: PromptReader; log: string[] } {
  const log: string[] = [];
  const r = new PromptReader({ workerFile, inThread, log: (l) => log.push(l), ...o });
  readers.push(r);
  return { reader: r, log };
}

/** A .prompt.yml of about `bytes` bytes: one prompt of many short messages (YAML's slow case: ~1 s per MB). */
function bigPromptYml(bytes: number): string {
  const lines = ['name: big', 'messages:'];
  for (let i = 0, n = 0; n < bytes; i++) {
    const l = `  - role: user\n    content: "message number ${i} with a few words in it to pad the line"`;
    lines.push(l);
    n += l.length + 1;
  }
  return `${lines.join('\n')}\n`;
}
const BIG = bigPromptYml(6 * 1024 * 1024);
const SMALL = 'messages:\n  - role: user\n    content: Say hi.\n';

/** Runs `f` while a 5 ms ticker runs on this thread: the longest gap between two ticks is how long the thread was held. */
async function maxGapDuring<T>(f: () => Promise<T>): Promise<{ value: T; maxGapMs: number; ms: number }> {
  let last = performance.now();
  let maxGapMs = 0;
  const ticker = setInterval(() => {
    const now = performance.now();
    maxGapMs = Math.max(maxGapMs, now - last);
    last = now;
  }, 5);
  const t0 = performance.now();
  const value = await f();
  const ms = performance.now() - t0;
  // one more tick, so that a thread held until the end is seen
  await new Promise((r) => setTimeout(r, 20));
  clearInterval(ticker);
  return { value, maxGapMs, ms };
}

function cancellation(): Cancellation & { cancel(): void } {
  let cancelled = false;
  const listeners = new Set<() => void>();
  return {
    get isCancellationRequested() { return cancelled; },
    onCancellationRequested(l) { listeners.add(l); return { dispose: () => listeners.delete(l) }; },
    cancel() { cancelled = true; for (const l of [...listeners]) l(); },
  };
}

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'prompt-worker-'));
  const { targets, optionsFor } = await import('../../esbuild.mjs');
  const target = targets.find((t) => t.outfile === 'dist/promptWorker.js');
  assert.ok(target, 'esbuild.mjs builds dist/promptWorker.js');
  workerFile = join(dir, 'promptWorker.js');
  await build({ ...optionsFor(target), absWorkingDir: root, outfile: workerFile, sourcemap: false, logLevel: 'silent' });
});

after(() => {
  for (const r of readers) r.dispose();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test('a 6 MB .prompt.yml reads on the thread while this one stays responsive', async () => {
  const { reader: r, log } = reader();
  await r.read({ fileName: 'warm.prompt.yml', text: SMALL });
  const { value, maxGapMs, ms } = await maxGapDuring(() => r.read({ fileName: 'big.prompt.yml', text: BIG }));
  console.log(`6 MB read on the thread in ${ms.toFixed(0)} ms; this thread's longest pause ${maxGapMs.toFixed(1)} ms; ${log.join('; ')}`);
  assert.ok(value && !value.refusal, value?.refusal?.message);
  assert.equal(value.prompts.length, 1);
  assert.ok(value.prompts[0]!.prompt.messages.length > 60_000);
  assert.ok(maxGapMs < 200, `the host's thread was held ${maxGapMs.toFixed(0)} ms during the read`);
  assert.match(log[0] ?? '', /^prompt reader: its thread started in \d+ ms$/);
});

test('a read past its deadline is refused at the deadline, its thread stopped, and the next read works on a fresh one', async () => {
  const { reader: r, log } = reader({ deadlineMs: 100 });
  const t0 = performance.now();
  const late = await r.read({ fileName: 'big.prompt.yml', text: BIG });
  const ms = performance.now() - t0;
  assert.equal(late?.prompts.length, 0);
  assert.equal(late?.refusal?.message, 'reading this prompt file took longer than 0.1 s: stopped, so that the editor stays responsive (the command line reads it without this limit)');
  assert.equal(late?.refusal?.line, 0, 'at the top, where the CodeLens shows it');
  assert.ok(ms < 1000, `refused after ${ms.toFixed(0)} ms, not when the read would have ended`);
  const next = await r.read({ fileName: 'small.prompt.yml', text: SMALL });
  assert.equal(next?.prompts[0]?.prompt.messages[0]?.content, 'Say hi.');
  assert.equal(log.filter((l) => /its thread started/.test(l)).length, 2, log.join('\n'));
  assert.ok(log.some((l) => /big\.prompt\.yml took longer than 0\.1 s to read: its thread was stopped/.test(l)), log.join('\n'));
});

test('a cancelled read is dropped: at once when sent (its answer ignored), never sent when still queued', async () => {
  const { reader: r } = reader();
  const a = cancellation();
  const b = cancellation();
  const t0 = performance.now();
  const running = r.read({ fileName: 'big.prompt.yml', text: BIG }, a);
  const queued = r.read({ fileName: 'other.prompt.yml', text: BIG }, b);
  const after = r.read({ fileName: 'small.prompt.yml', text: SMALL });
  setTimeout(() => { a.cancel(); b.cancel(); }, 30);
  assert.equal(await running, undefined);
  assert.equal(await queued, undefined);
  assert.ok(performance.now() - t0 < 1000, 'both answered when cancelled, not when read');
  // the small read waits only for the one already on the thread, not for the queued one
  const next = await after;
  assert.equal(next?.prompts.length, 1);
  assert.ok(performance.now() - t0 < 4000);
  const pre = cancellation();
  pre.cancel();
  assert.equal(await r.read({ fileName: 'small.prompt.yml', text: SMALL }, pre), undefined, 'cancelled before it was asked');
});

interface Run {
  readonly file: string;
  readonly env?: Record<string, string>;
  readonly vars?: Record<string, unknown>;
}

test('every corpus file reads on the thread exactly as on this one: prompts, warnings, variables and what it pulled in', async () => {
  const { reader: r } = reader();
  const runs = JSON.parse(readFileSync(join(corpus, 'runs.json'), 'utf8')) as Run[];
  assert.ok(runs.length > 30);
  let pulled = 0;
  for (const run of runs) {
    const path = join(corpus, run.file);
    const request: ParseRequest = {
      fileName: path,
      text: readFileSync(path, 'utf8'),
      ...(run.vars ? { vars: run.vars } : {}),
      access: { promptPath: path, trusted: true, workspaceFolders: [corpus], env: run.env ?? {} },
    };
    const there = await r.read(request);
    assert.deepEqual(there, readDocument(parts, request), run.file);
    if (there?.pulledIn) pulled++;
  }
  assert.ok(pulled > 0, 'some corpus files pull in files or variables');
});

test('the thread reads no environment of its own: a trusted read gets the one it is sent, an untrusted one none', async () => {
  const { reader: r } = reader();
  const path = join(root, 'test/fixtures/envProbe.prompty');
  const text = '---\nname: env\ninputs:\n  k:\n    default: ${env:PROMPT_WORKER_PROBE}\n---\nuser:\nk={{k}}\n';
  process.env.PROMPT_WORKER_PROBE = 'FROM-THE-HOST-PROCESS';
  try {
    const read = (trusted: boolean, env?: Record<string, string>) => r.read({ fileName: path, text, access: { promptPath: path, trusted, workspaceFolders: [], ...(env ? { env } : {}) } });
    const sent = await read(true, { PROMPT_WORKER_PROBE: 'sent' });
    assert.equal(sent?.prompts[0]?.prompt.messages[0]?.content, 'k=sent');
    assert.deepEqual(sent?.pulledIn, { files: [], env: ['PROMPT_WORKER_PROBE'] });
    const none = await read(true);
    assert.equal(none?.prompts[0]?.prompt.messages[0]?.content, 'k=', 'not the thread\'s own process.env');
    const untrusted = await read(false, { PROMPT_WORKER_PROBE: 'sent' });
    assert.equal(untrusted?.prompts[0]?.prompt.messages[0]?.content, 'k=');
    assert.match(untrusted?.warnings.map((w) => w.message).join('\n') ?? '', /was not read: the workspace is not trusted/);
  } finally {
    delete process.env.PROMPT_WORKER_PROBE;
  }
});

test('without the bundle: small documents read on this thread, larger ones refused with the reason', async () => {
  const { reader: r, log } = reader({ workerFile: join(dir, 'missing.js') });
  const small: DocumentParse | undefined = await r.read({ fileName: 'small.prompt.yml', text: SMALL });
  assert.deepEqual(small, readDocument(parts, { fileName: 'small.prompt.yml', text: SMALL }));
  const big = await r.read({ fileName: 'big.prompt.yml', text: 'x'.repeat(IN_THREAD_MAX_BYTES + 1) });
  assert.match(big?.refusal?.message ?? '', /^this prompt file \(64 KiB\) is not read in the editor: the prompt reader's thread could not start \(.*missing\.js is missing\), and without it only files up to 64 KiB are read$/);
  assert.equal(log.length, 1, 'said once');
  assert.match(log[0]!, /could not start/);
});

test('a bundle that fails as it loads counts as one that cannot start', async () => {
  const broken = join(dir, 'broken.js');
  (await import('node:fs')).writeFileSync(broken, 'throw new Error("broken bundle");\n');
  const { reader: r, log } = reader({ workerFile: broken });
  const small = await r.read({ fileName: 'small.prompt.yml', text: SMALL });
  assert.equal(small?.prompts.length, 1, 'read on this thread instead');
  assert.match(log.join('\n'), /could not start \(broken bundle\)/);
});

test('dispose stops the thread and answers every read still waiting with undefined', async () => {
  const { reader: r } = reader();
  const running = r.read({ fileName: 'big.prompt.yml', text: BIG });
  const queued = r.read({ fileName: 'small.prompt.yml', text: SMALL });
  setTimeout(() => r.dispose(), 30);
  assert.equal(await running, undefined);
  assert.equal(await queued, undefined);
  assert.equal(await r.read({ fileName: 'small.prompt.yml', text: SMALL }), undefined);
});
