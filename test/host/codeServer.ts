// code-server 4.100.3 (VS Code 1.100.3 on plain node) in its own process group, bound to
// 127.0.0.1, with its own HOME/XDG folders. Stopping kills the whole group: its extension hosts
// outlive the parent otherwise.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, openSync, closeSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { codeServerEntry } from '../../scripts/setupCodeServer';

export interface CodeServer {
  readonly url: string;
  readonly port: number;
  readonly pid: number;
  readonly userDataDir: string;
  readonly logFile: string;
  stop(): Promise<void>;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

function groupAlive(pgid: number): boolean {
  try { process.kill(-pgid, 0); return true; } catch { return false; }
}

function layout(base: string) {
  const userDataDir = join(base, 'user-data');
  const dirs = { home: join(base, 'home'), ext: join(base, 'extensions'), cfg: join(base, 'xdg-config'), data: join(base, 'xdg-data'), cache: join(base, 'xdg-cache') };
  for (const d of [userDataDir, ...Object.values(dirs)]) mkdirSync(d, { recursive: true });
  const env = { HOME: dirs.home, XDG_CONFIG_HOME: dirs.cfg, XDG_DATA_HOME: dirs.data, XDG_CACHE_HOME: dirs.cache };
  return { userDataDir, dirs, env };
}

/** `code-server --install-extension` into the run's extensions folder (before start); several may run at once. */
export function installExtension(installDir: string, base: string, vsix: string): Promise<void> {
  const { userDataDir, dirs, env } = layout(base);
  const child = spawn(process.execPath, [codeServerEntry(installDir), '--install-extension', vsix, '--user-data-dir', userDataDir, '--extensions-dir', dirs.ext],
    { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'], timeout: 120_000 });
  let out = '';
  child.stdout.on('data', (b: Buffer) => (out += b.toString()));
  child.stderr.on('data', (b: Buffer) => (out += b.toString()));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => {
      if (code === 0) resolve();
      else reject(new Error(`code-server --install-extension failed (exit ${code ?? signal}):\n${out}`));
    });
  });
}

export async function startCodeServer(installDir: string, base: string, env: Record<string, string> = {}, options: { workspaceTrust?: boolean } = {}): Promise<CodeServer> {
  const port = await freePort();
  const { userDataDir, dirs, env: homeEnv } = layout(base);
  const logFile = join(base, 'code-server.log');
  const fd = openSync(logFile, 'a');
  const child: ChildProcess = spawn(process.execPath, [
    codeServerEntry(installDir),
    '--bind-addr', `127.0.0.1:${port}`, '--auth', 'none', '--disable-telemetry', '--disable-update-check',
    ...(options.workspaceTrust ? [] : ['--disable-workspace-trust']), '--user-data-dir', userDataDir, '--extensions-dir', dirs.ext,
  ], {
    detached: true, // setsid: its own process group, killed as a whole
    stdio: ['ignore', fd, fd],
    env: {
      ...process.env, ...homeEnv,
      // Not inherited from whoever ran the tests: the workbench must not try to open a browser or a proxy.
      BROWSER: 'none', NO_PROXY: '127.0.0.1,localhost', http_proxy: '', https_proxy: '', HTTP_PROXY: '', HTTPS_PROXY: '',
      ...env,
    },
  });
  closeSync(fd);
  const pid = child.pid!;
  const url = `http://127.0.0.1:${port}`;
  let exited = false;
  child.once('exit', () => { exited = true; });
  const stop = async (): Promise<void> => {
    for (const [sig, waitMs] of [['SIGTERM', 3000], ['SIGKILL', 3000]] as const) {
      if (!groupAlive(pid)) return;
      try { process.kill(-pid, sig); } catch { /* gone */ }
      const deadline = Date.now() + waitMs;
      while (groupAlive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    }
    if (groupAlive(pid)) throw new Error(`code-server process group ${pid} survived SIGKILL`);
  };
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (exited) throw new Error(`code-server exited before it was ready; see ${logFile}`);
    try {
      const r = await fetch(`${url}/healthz`);
      if (r.ok) break;
    } catch { /* not listening yet */ }
    if (Date.now() > deadline) { await stop(); throw new Error(`code-server not ready after 30 s; see ${logFile}`); }
    await new Promise((r) => setTimeout(r, 200));
  }
  return { url, port, pid, userDataDir, logFile, stop };
}
