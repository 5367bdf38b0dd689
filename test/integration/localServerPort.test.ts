// Whose port the launcher hands back for the llama-server backend: the one llama-server bound itself
// (--port 0) as the kernel shows it, never one that another local program took or a line of output
// named. A stand-in llama-server (test/support/fakeLlamaServer.ts) on a temporary PATH plays the
// server; an "impostor" HTTP server on 127.0.0.1 plays the program that grabs the port, and counts
// every request that reached it (each would have carried a prompt).
import { test, before, after, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { LocalServerError, startLocalServer } from '../../src/localServer/launcher';
import { ensureSyntheticModel, PRESETS } from '../../src/localServer/synthetic';
import type { LocalServerHandle, LocalServerOptions } from '../../src/localServer/types';
import { writeFakeLlamaServer } from '../support/fakeLlamaServer';
import { processesMentioning } from '../support/processes';
import { ensureServerBundle } from '../support/serverBundle';

let dir: string;
let bin: string;
let modelPath: string;
const savedEnv = { ...process.env };
const handles: LocalServerHandle[] = [];
const impostors: Server[] = [];

before(async () => {
  ensureServerBundle();
  dir = mkdtempSync(join(tmpdir(), 'llmp-port-'));
  bin = writeFakeLlamaServer(dir);
  modelPath = await ensureSyntheticModel(PRESETS.tiny, dir);
});

afterEach(async () => {
  await Promise.all(handles.splice(0).map((h) => h.stop()));
  await Promise.all(impostors.splice(0).map((s) => new Promise((r) => s.close(r))));
  for (const k of Object.keys(process.env)) if (!(k in savedEnv)) delete process.env[k];
  Object.assign(process.env, savedEnv);
});

after(async () => {
  const end = Date.now() + 5000;
  while (processesMentioning(dir).length > 0 && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
  assert.deepEqual(processesMentioning(dir), [], 'no process left');
  rmSync(dir, { recursive: true, force: true });
});

interface Impostor {
  readonly port: number;
  readonly requests: string[];
}

/** An HTTP server on 127.0.0.1:port (0: any) that says yes to everything and logs what reached it. */
async function impostor(port = 0): Promise<Impostor> {
  const requests: string[] = [];
  const server = createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    res.end('{"status":"ok"}');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  impostors.push(server);
  return { port: (server.address() as AddressInfo).port, requests };
}

/** Takes the port llama-server was told to use, as soon as it was told (once the launcher's checks are past). */
function grabGivenPort(givenFile: string): Promise<Impostor | undefined> {
  return new Promise((resolve) => {
    const timer = setInterval(() => {
      if (!existsSync(givenFile)) return;
      const given = Number(readFileSync(givenFile, 'utf8') || 'NaN');
      if (Number.isNaN(given)) return;
      clearInterval(timer);
      resolve(given === 0 ? undefined : impostor(given));
    }, 5);
  });
}

function files(name: string): { given: string; bound: string } {
  const given = join(dir, `${name}.given`);
  const bound = join(dir, `${name}.bound`);
  rmSync(given, { force: true });
  rmSync(bound, { force: true });
  Object.assign(process.env, { FAKE_LLAMA_GIVEN_PORT_FILE: given, FAKE_LLAMA_BOUND_PORT_FILE: bound });
  return { given, bound };
}

async function start(options: Partial<LocalServerOptions> = {}): Promise<LocalServerHandle> {
  const h = await startLocalServer({ backend: 'llama-server', model: { kind: 'file', path: modelPath }, parallel: 1, ctxSize: 1024, readyTimeoutMs: 15_000, ...options });
  handles.push(h);
  return h;
}

test('llama-server found on PATH binds a free port itself (--port 0); the launcher hands back that port', async () => {
  process.env.PATH = `${dir}${delimiter}${savedEnv.PATH ?? ''}`;
  const f = files('plain');
  const h = await start();
  assert.equal(readFileSync(f.given, 'utf8'), '0', 'no port picked in advance');
  assert.equal(new URL(h.url).port, readFileSync(f.bound, 'utf8'));
  const r = await fetch(`${h.url}/health`);
  assert.equal(r.status, 200);
  assert.ok(r.headers.get('x-fake-llama-server'), 'answered by the stand-in');
});

test('a program that takes the port between its choice and llama-server\'s start never gets the requests', async () => {
  const f = files('race');
  process.env.FAKE_LLAMA_BIND_DELAY_MS = '1500';
  const grabbed = grabGivenPort(f.given);
  const h = await start({ llamaServerPath: bin });
  const imp = await grabbed;
  assert.equal(new URL(h.url).port, readFileSync(f.bound, 'utf8'), `the launcher returned ${h.url}`);
  assert.ok((await fetch(`${h.url}/health`)).headers.get('x-fake-llama-server'));
  assert.deepEqual(imp?.requests ?? [], [], 'the impostor was asked');
});

test('an explicit port taken after the launcher checked it: the start fails, the program on it is never asked', async () => {
  const free = await impostor();
  await new Promise((r) => impostors.pop()!.close(r));
  const f = files('explicit');
  process.env.FAKE_LLAMA_BIND_DELAY_MS = '1500';
  const grabbed = grabGivenPort(f.given);
  await assert.rejects(start({ llamaServerPath: bin, port: free.port }), (e: Error) => {
    assert.ok(e instanceof LocalServerError, String(e));
    assert.match(e.message, /exited during start-up \(exit code 1\)[^]*couldn't bind/);
    return true;
  });
  const imp = await grabbed;
  assert.equal(imp?.port, free.port, 'the impostor held the port');
  assert.deepEqual(imp?.requests, [], 'the impostor was asked');
});

test('what llama-server prints cannot pass for the port report: a lying line names another server, the launcher ignores it', async () => {
  const imp = await impostor();
  const f = files('lie');
  process.env.FAKE_LLAMA_LIE_PORT = String(imp.port);
  process.env.FAKE_LLAMA_BIND_DELAY_MS = '300';
  const h = await start({ llamaServerPath: bin });
  assert.equal(new URL(h.url).port, readFileSync(f.bound, 'utf8'));
  assert.notEqual(h.model, 'impostor');
  assert.deepEqual(imp.requests, []);
});
