// What the tests of the bundled llama.cpp server share: dist/localServer.mjs built, a tiny synthetic
// model in the test file's own temporary folder (every process the file starts names it, so a check
// finds any left behind), servers started through the launcher and all stopped after the file's
// tests, and a reader of a server-sent-events reply.
import { after, before } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startLocalServer } from '../../src/localServer/launcher';
import { ensureSyntheticModel, PRESETS } from '../../src/localServer/synthetic';
import type { LocalServerHandle, LocalServerOptions } from '../../src/localServer/types';
import { processesMentioning } from './processes';
import { ensureServerBundle } from './serverBundle';

export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export async function waitFor(cond: () => boolean | Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    if (await cond()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.fail(`timed out waiting for ${what}`);
}

export interface LocalServerKit {
  /** The file's temporary folder (set before its tests run). */
  readonly dir: string;
  /** The tiny synthetic model, in `dir`. */
  readonly modelPath: string;
  /** A server on the model (4 slots, 4096 tokens unless `options` say otherwise), stopped after the file's tests. */
  start(options?: Partial<LocalServerOptions>): Promise<LocalServerHandle>;
  /** Stops it, and checks that its process is gone. */
  stop(h: LocalServerHandle): Promise<void>;
}

/** Registers the file's before and after hooks: after its tests, no process of it is left. */
export function localServerKit(prefix: string): LocalServerKit {
  const started: LocalServerHandle[] = [];
  const kit = {
    dir: '',
    modelPath: '',
    async start(options: Partial<LocalServerOptions> = {}): Promise<LocalServerHandle> {
      const h = await startLocalServer({ model: { kind: 'file', path: kit.modelPath }, parallel: 4, ctxSize: 4 * 1024, ...options });
      started.push(h);
      return h;
    },
    async stop(h: LocalServerHandle): Promise<void> {
      await h.stop();
      assert.equal(pidAlive(h.pid), false, `server ${h.pid} is gone after stop()`);
    },
  };
  before(async () => {
    ensureServerBundle();
    kit.dir = mkdtempSync(join(tmpdir(), prefix));
    kit.modelPath = await ensureSyntheticModel(PRESETS.tiny, kit.dir);
  });
  after(async () => {
    for (const h of started) await h.stop().catch(() => undefined);
    // No process of ours is left: every server, supervisor and llama-server mentioned our temp model.
    await waitFor(() => processesMentioning(kit.dir).length === 0, 5000, 'no process left');
    rmSync(kit.dir, { recursive: true, force: true });
  });
  return kit;
}

export interface SseResult {
  events: Record<string, unknown>[];
  done: boolean;
  chunkTimes: number[];
}

export async function streamSse(url: string, body: unknown, signal?: AbortSignal, onEvent?: (e: Record<string, unknown>) => void): Promise<SseResult> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), signal });
  assert.equal(res.status, 200, `status 200 from ${url}`);
  assert.match(res.headers.get('content-type') ?? '', /text\/event-stream/);
  const out: SseResult = { events: [], done: false, chunkTimes: [] };
  const decoder = new TextDecoder();
  let buf = '';
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    buf += decoder.decode(chunk, { stream: true });
    let i: number;
    while ((i = buf.indexOf('\n\n')) >= 0) {
      const ev = buf.slice(0, i);
      buf = buf.slice(i + 2);
      const data = ev.replace(/^data: /, '');
      if (data === '[DONE]') {
        out.done = true;
        continue;
      }
      const obj = JSON.parse(data) as Record<string, unknown>;
      out.events.push(obj);
      out.chunkTimes.push(performance.now());
      onEvent?.(obj);
    }
  }
  return out;
}

export type ChatChunk = { id: string; choices: { delta: { content?: string; role?: string }; finish_reason: string | null }[]; usage?: { prompt_tokens: number; completion_tokens: number }; timings?: Record<string, number> };

export const chat = (content: string, extra: Record<string, unknown> = {}) => ({ model: 'x', messages: [{ role: 'user', content }], ...extra });
