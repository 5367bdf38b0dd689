// A new API is one adapter file plus one row of the API table (and the registry's line for its
// adapter): shown on a copy of src/ given a made-up API, "fake-sse", with its own paths, JSON shape
// and key header. The copy must typecheck with nothing else edited, and its CLI, run from source,
// must detect the API against a real server on 127.0.0.1, list its model, send the key where the row
// says, time its stream, and name it in OpenTelemetry as the row does.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { IncomingHttpHeaders, Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunFile } from '../../src/engine/core/types';
import { listenOnLoopback } from '../support/listen';

const ROOT = join(__dirname, '../..');
const KEY = 'k-fake-0123456789';
/** The server holds the first piece this long: the TTFT the run must see at least. */
const FIRST_PIECE_MS = 40;
const PIECES = ['Fa', 'ke', ' A', 'PI'];

/** The one adapter file: the fake API's request and events, in the adapters' own helpers. */
const ADAPTER = `// The fake API of test/integration/newApi.test.ts: POST /fake/stream, SSE of {"piece"} then {"end", "used"}.
import type { EndpointSpec, RequestSpec } from '../../core/types';
import type { BuiltRequest, EndpointAdapter, EventInfo } from './adapter';
import { isObject, str } from '../../core/json';
import { bodyStart, countsUsage, joinPath, jsonHeaders, jsonPost, maxTokensOf, promptText } from './adapter';

export const fakeSseAdapter: EndpointAdapter = {
  api: 'fake-sse',
  probePath: '/fake/info',
  models: { path: '/fake/info', names: (json) => (isObject(json) && Array.isArray(json.served) ? json.served.filter((m): m is string => typeof m === 'string') : []) },

  buildRequest(spec: RequestSpec, endpoint: EndpointSpec): BuiltRequest {
    const { body, prompt } = bodyStart(spec, endpoint);
    body.text = promptText(prompt);
    body.budget = maxTokensOf(spec);
    return jsonPost(joinPath(endpoint, '/fake/stream'), jsonHeaders(endpoint, 'text/event-stream'), body);
  },

  interpret(event: unknown): EventInfo {
    if (!isObject(event)) return {};
    const piece = str(event.piece);
    if (piece) return { content: piece };
    if (event.end !== true || !isObject(event.used)) return {};
    const usage = countsUsage(event.used.in, event.used.out);
    return { done: true, ...(usage ? { usage } : {}) };
  },
};
`;

/** The one row. */
const ROW = `  {
    id: 'fake-sse',
    label: 'A made-up API that streams pieces',
    hosted: false,
    framing: 'sse',
    carries: 'pieces of text; the counts in the last event',
    keyHeader: 'x-fake-key',
    detect: { probe: { path: '/fake/info', keys: ['fake_version'] } },
    otel: { provider: 'fake.provider', operation: 'chat' },
    cold: 'nonce',
  },
`;

/** Run inside the copy: what the OTLP export, the CLI's choices, the settings' check and the docs' table make of the row. */
const READ_BACK = `import { readFileSync } from 'node:fs';
import { runAttributes } from './src/engine/files/otlp';
import { apiTableMarkdown } from './src/engine/core/apis';
import { option } from './src/jobs/options';
import { validateEndpoint } from './src/extension/configModel';
const run = JSON.parse(readFileSync(process.argv[2]!, 'utf8'));
process.stdout.write(JSON.stringify({
  attrs: runAttributes(run),
  choices: option('api').choices,
  settingErrors: validateEndpoint({ name: 'f', url: 'http://127.0.0.1:1', api: 'fake-sse' }, 'user').errors,
  markdown: apiTableMarkdown(),
}));
`;

let copy: string;

/** Runs `node --import tsx …args` in the copy without blocking this process (the fake server answers from it). */
function runInCopy(args: readonly string[], env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', ...args], { cwd: copy, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** Replaces `anchor` (once, exactly) in a file of the copy with `anchor` plus `added`, before or after it. */
function addAt(file: string, anchor: string, added: string, where: 'before' | 'after'): void {
  const text = readFileSync(file, 'utf8');
  assert.equal(text.split(anchor).length, 2, `${anchor} once in ${file}`);
  writeFileSync(file, text.replace(anchor, where === 'before' ? added + anchor : anchor + added));
}

interface Seen { method: string; path: string; headers: IncomingHttpHeaders; body: string }

/** A server speaking the fake API: GET /fake/info says what it is and serves; POST /fake/stream streams pieces; all else is 404. */
async function startFakeServer(): Promise<{ url: string; seen: Seen[]; close(): Promise<void> }> {
  const seen: Seen[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (b: Buffer) => (body += b.toString()));
    req.on('end', () => {
      seen.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, body });
      if (req.method === 'GET' && req.url === '/fake/info') {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ fake_version: 1, served: ['fake-1'] }));
        return;
      }
      if (req.method !== 'POST' || req.url !== '/fake/stream') return void res.writeHead(404).end('not here');
      if (req.headers['x-fake-key'] !== KEY) return void res.writeHead(401).end('no key');
      const budget = (JSON.parse(body) as { budget: number }).budget;
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const pieces = PIECES.slice(0, budget);
      pieces.forEach((piece, i) => setTimeout(() => res.write(`event: piece\ndata: ${JSON.stringify({ piece })}\n\n`), FIRST_PIECE_MS + i * 5));
      setTimeout(() => res.end(`data: ${JSON.stringify({ end: true, used: { in: 7, out: pieces.length } })}\n\n`), FIRST_PIECE_MS + pieces.length * 5 + 5);
    });
  });
  const { url, sockets } = await listenOnLoopback(server);
  return { url, seen, close: async () => {
    for (const s of sockets) s.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  } };
}

before(() => {
  copy = mkdtempSync(join(tmpdir(), 'llmp-new-api-'));
  cpSync(join(ROOT, 'src'), join(copy, 'src'), { recursive: true });
  for (const f of ['tsconfig.json', 'package.json']) cpSync(join(ROOT, f), join(copy, f));
  symlinkSync(join(ROOT, 'node_modules'), join(copy, 'node_modules'), 'dir');
  // the whole change: one new file, one row, the registry's line for the adapter
  const adapters = join(copy, 'src/engine/transport/adapters');
  writeFileSync(join(adapters, 'fakeSse.ts'), ADAPTER);
  addAt(join(copy, 'src/engine/core/apis.ts'), '] as const satisfies readonly ApiFacts[];', ROW, 'before');
  addAt(join(adapters, 'registry.ts'), "import { openaiCompletionsAdapter } from './openaiCompletions';\n", "import { fakeSseAdapter } from './fakeSse';\n", 'after');
  addAt(join(adapters, 'registry.ts'), "  'azure-openai': azureOpenAiAdapter,\n", "  'fake-sse': fakeSseAdapter,\n", 'after');
});

after(() => rmSync(copy, { recursive: true, force: true }));

test('the copy with the fake API typechecks: nothing but the adapter, its row and its registry line was needed', () => {
  const r = spawnSync(join(ROOT, 'node_modules/.bin/tsc'), ['-p', copy, '--noEmit'], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stdout + r.stderr);
});

test('the copy\'s CLI detects the fake API, lists its model, sends its key where its row says and times its stream; OTLP and the docs name it from the row', async () => {
  const fake = await startFakeServer();
  try {
    const out = join(copy, 'run.json');
    const r = await runInCopy(['src/cli/main.ts', 'run', '--url', fake.url, '--api-key-env', 'FAKE_KEY', '--requests', '3', '--max-tokens', '4', '--warmup', '0', '--out', out], { FAKE_KEY: KEY });
    assert.equal(r.code, 0, r.stdout + r.stderr);
    const run = JSON.parse(readFileSync(out, 'utf8')) as RunFile;
    assert.equal(run.endpoint.api, 'fake-sse', 'detected by the row\'s probe');
    assert.equal(run.endpoint.detectedApi, true);
    assert.equal(run.endpoint.model, 'fake-1', 'the model from the adapter\'s model list');
    const measured = run.requests.filter((q) => !q.warmup);
    assert.equal(measured.length, 3);
    for (const q of measured) {
      assert.equal(q.error, undefined);
      assert.ok(q.ttftMs !== undefined && q.ttftMs >= FIRST_PIECE_MS - 1, `TTFT ${q.ttftMs} ms, the server held the first piece ${FIRST_PIECE_MS} ms`);
      assert.equal(q.outputTokens, 4, 'the count from the last event');
      assert.equal(q.promptTokens, 7);
    }
    const posts = fake.seen.filter((s) => s.method === 'POST');
    assert.equal(posts.length, 3);
    for (const p of posts) {
      assert.equal(p.path, '/fake/stream');
      assert.equal(p.headers['x-fake-key'], KEY, 'the key in the row\'s header');
      assert.equal(p.headers.authorization, undefined);
      assert.deepEqual(Object.keys(JSON.parse(p.body) as object).sort(), ['budget', 'model', 'text']);
    }
    assert.ok(fake.seen.some((s) => s.method === 'GET' && s.path === '/fake/info'), 'probed');

    writeFileSync(join(copy, 'readBack.ts'), READ_BACK);
    const b = await runInCopy(['readBack.ts', out]);
    assert.equal(b.code, 0, b.stderr);
    const back = JSON.parse(b.stdout) as { attrs: Record<string, unknown>; choices: string[]; settingErrors: string[]; markdown: string };
    assert.equal(back.attrs['gen_ai.provider.name'], 'fake.provider');
    assert.equal(back.attrs['gen_ai.operation.name'], 'chat');
    assert.ok(back.choices.includes('fake-sse'), 'a choice of --api');
    assert.deepEqual(back.settingErrors, [], 'a valid "api" in the endpoints setting');
    assert.match(back.markdown, /\| `fake-sse` \| A made-up API that streams pieces \| GET \/fake\/info answers with `fake_version` \| `x-fake-key` \| SSE \|/);
  } finally {
    await fake.close();
  }
});
