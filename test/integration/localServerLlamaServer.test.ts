// The real llama-server behind the same launcher. Skipped (with the reason) when no binary is found:
// build one with `npm run build:llama-server` (about 10 minutes on 2 cores), or put it on PATH.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startLocalServer, LocalServerError } from '../../src/localServer/launcher';
import { findLlamaServer } from '../../src/localServer/paths';
import { ensureSyntheticModel, PRESETS } from '../../src/localServer/synthetic';
import { processesMentioning } from '../support/processes';

const ROOT = join(__dirname, '..', '..');
const binary = findLlamaServer();
const skip = binary ? false : 'no llama-server binary on PATH or in the cache (npm run build:llama-server builds one)';
let dir: string;
let modelPath: string;


async function waitFor(cond: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    if (cond()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.fail(`timed out waiting for ${what}`);
}

before(async () => {
  const bundle = join(ROOT, 'dist', 'localServer.mjs');
  if (!existsSync(bundle) || statSync(bundle).mtimeMs < statSync(join(ROOT, 'src', 'localServer', 'serverMain.ts')).mtimeMs) {
    assert.equal(spawnSync(process.execPath, ['esbuild.mjs'], { cwd: ROOT, stdio: 'inherit' }).status, 0);
  }
  dir = mkdtempSync(join(tmpdir(), 'llmp-llamasrv-'));
  modelPath = await ensureSyntheticModel(PRESETS.tiny, dir);
});

after(async () => {
  await waitFor(() => processesMentioning(dir).length === 0, 5000, 'no process left');
  rmSync(dir, { recursive: true, force: true });
});

test('a missing llama-server binary is a clear error, nothing started', async () => {
  await assert.rejects(
    startLocalServer({ backend: 'llama-server', llamaServerPath: join(tmpdir(), 'no-such-llama-server'), model: { kind: 'file', path: modelPath } }),
    (e: Error) => e instanceof LocalServerError && /llama-server not found or not executable: .*no-such-llama-server/.test(e.message),
  );
});

test('llama-server backend: same launcher, flags mapped, exact tokens with ignore_eos, timings, clean stop', { skip }, async () => {
  const h = await startLocalServer({ backend: 'llama-server', model: { kind: 'file', path: modelPath }, parallel: 3, batchSize: 256, threads: 1, ctxSize: 3 * 1024 });
  try {
    assert.equal(h.backend, 'llama-server');
    assert.match(h.url, /^http:\/\/127\.0\.0\.1:\d+$/);
    const models = (await (await fetch(`${h.url}/v1/models`)).json()) as { data: { id: string }[] };
    assert.ok(models.data.some((m) => m.id === h.model), `alias ${h.model} listed: ${JSON.stringify(models.data)}`);
    const props = (await (await fetch(`${h.url}/props`)).json()) as { total_slots: number; default_generation_settings?: { n_ctx?: number } };
    assert.equal(props.total_slots, 3, '-np mapped');
    const r = (await (
      await fetch(`${h.url}/v1/chat/completions`, { method: 'POST', body: JSON.stringify({ messages: [{ role: 'user', content: 'hi' }], max_tokens: 21, ignore_eos: true }) })
    ).json()) as { usage: { completion_tokens: number }; timings: { predicted_n: number } };
    assert.equal(r.usage.completion_tokens, 21);
    assert.equal(r.timings.predicted_n, 21);
    // Long random generations stay words: without the launcher's -l bans on the synthetic model's
    // byte tokens, llama-server fails most of these with "does not match the expected ... format".
    const texts = await Promise.all(
      [0, 1, 2].map(async (i) => {
        const res = (await (await fetch(`${h.url}/v1/completions`, { method: 'POST', body: JSON.stringify({ prompt: `Story ${i}`, max_tokens: 300, ignore_eos: true }) })).json()) as {
          usage?: { completion_tokens: number };
          choices?: { text: string }[];
          error?: unknown;
        };
        assert.equal(res.usage?.completion_tokens, 300, JSON.stringify(res).slice(0, 300));
        return res.choices![0]!.text;
      }),
    );
    for (const t of texts) assert.doesNotMatch(t, /\uFFFD|<0x|<\|im_start/);
  } finally {
    await h.stop();
  }
  await waitFor(() => processesMentioning(modelPath).length === 0, 5000, 'llama-server and its supervisor to exit');
});

test('llama-server is killed when the launching process is SIGKILLed', { skip }, async () => {
  const script = join(dir, 'parent.mts');
  writeFileSync(
    script,
    `import { startLocalServer } from ${JSON.stringify(join(ROOT, 'src', 'localServer', 'launcher.ts'))};\n` +
      `const h = await startLocalServer({ backend: 'llama-server', model: { kind: 'file', path: ${JSON.stringify(modelPath)} }, parallel: 1, threads: 1 });\n` +
      `process.stdout.write(JSON.stringify({ url: h.url }) + '\\n');\n` +
      `setInterval(() => {}, 1000);\n`,
  );
  const parent = spawn(process.execPath, ['--import', 'tsx', script], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    const info = await new Promise<{ url: string }>((resolve, reject) => {
      let buf = '';
      parent.stdout!.on('data', (c: Buffer) => {
        buf += c.toString();
        const i = buf.indexOf('\n');
        if (i >= 0) resolve(JSON.parse(buf.slice(0, i)) as { url: string });
      });
      parent.once('exit', (code) => reject(new Error(`parent exited early (${code})`)));
    });
    assert.equal((await fetch(`${info.url}/health`)).status, 200);
    assert.ok(processesMentioning(modelPath).length >= 2, 'supervisor and llama-server run');
    parent.kill('SIGKILL');
    await waitFor(() => processesMentioning(modelPath).length === 0, 5000, 'llama-server to exit after its launcher was killed');
  } finally {
    parent.kill('SIGKILL');
  }
});
