// Installs code-server (a real VS Code 1.100.3 workbench + extension host that runs on plain node)
// into a cache outside the clone, keyed by version, for the in-host tests. `npm install code-server`
// runs a postinstall that downloads ripgrep from GitHub, which CI cannot reach, so it is installed
// with --ignore-scripts and its postinstall is done here by hand with Debian's ripgrep instead.
// Idempotent: a finished install carries a marker file and is reused at once.
import { spawnSync } from 'node:child_process';
import { copyFileSync, chmodSync, existsSync, mkdirSync, renameSync, rmSync, symlinkSync, writeFileSync, unlinkSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { userCacheHome } from '../src/localServer/paths';

export const CODE_SERVER_VERSION = '4.100.3';
const MARKER = '.llm-profiler-complete';

export function codeServerCacheDir(version = CODE_SERVER_VERSION): string {
  if (process.env.LLM_PROFILER_CODE_SERVER_DIR) return process.env.LLM_PROFILER_CODE_SERVER_DIR;
  return join(userCacheHome(), 'llm-profiler', `code-server-${version}`);
}

/** The code-server launcher script inside an install. */
export function codeServerEntry(dir: string): string {
  return join(dir, 'node_modules', 'code-server', 'out', 'node', 'entry.js');
}

function log(message: string): void {
  process.stderr.write(`[setup-code-server] ${message}\n`);
}

function sh(cmd: string, args: readonly string[], cwd: string, env: NodeJS.ProcessEnv = {}): void {
  const started = Date.now();
  log(`${cwd}$ ${cmd} ${args.join(' ')}`);
  const r = spawnSync(cmd, args, { cwd, stdio: ['ignore', 'inherit', 'inherit'], env: { ...process.env, ...env } });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed in ${cwd} (exit ${r.status ?? r.signal})`);
  log(`  done in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

function relink(target: string, link: string): void {
  try { unlinkSync(link); } catch { /* not there yet */ }
  symlinkSync(target, link);
}

function findRipgrep(): string {
  for (const p of ['/usr/bin/rg', '/usr/local/bin/rg']) if (existsSync(p)) return p;
  const r = spawnSync('sh', ['-c', 'command -v rg'], { encoding: 'utf8' });
  const found = r.stdout.trim();
  if (r.status === 0 && found) return found;
  throw new Error('ripgrep (rg) not found: install the Debian package "ripgrep" (see .ci/setup-system)');
}

/**
 * node-gyp compiles the native modules against node's headers, which it downloads from nodejs.org
 * unless told where they are. Node packages for Debian (and the official tarballs) ship them in
 * <prefix>/include/node: use those, so the setup needs nothing but the npm registry.
 */
function nodeHeadersEnv(): NodeJS.ProcessEnv {
  if (process.env.npm_config_nodedir) return {};
  const prefix = dirname(dirname(process.execPath));
  if (existsSync(join(prefix, 'include', 'node', 'node.h'))) return { npm_config_nodedir: prefix };
  log(`node headers not found in ${join(prefix, 'include', 'node')}: node-gyp will try to download them from nodejs.org`);
  return {};
}

/** Returns the install directory, installing first when the cache lacks a finished install. */
export function ensureCodeServer(version = CODE_SERVER_VERSION): string {
  const dir = codeServerCacheDir(version);
  if (existsSync(join(dir, MARKER)) && existsSync(codeServerEntry(dir))) return dir;

  const started = Date.now();
  const rg = findRipgrep();
  // Install beside the final place, then rename: an interrupted install never looks finished.
  const work = `${dir}.partial-${process.pid}`;
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  try {
    writeFileSync(join(work, 'package.json'), JSON.stringify({ name: 'code-server-cache', private: true }, null, 2));
    const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
    const gypEnv = nodeHeadersEnv();
    const quiet = ['--no-audit', '--no-fund', '--loglevel=error'];
    sh(npm, ['install', `code-server@${version}`, '--ignore-scripts', '--omit=dev', ...quiet], work);
    const cs = join(work, 'node_modules', 'code-server');
    sh(npm, ['rebuild', 'argon2', ...quiet], work, gypEnv);
    const vscode = join(cs, 'lib', 'vscode');
    sh(npm, ['install', '--omit=dev', '--ignore-scripts', ...quiet], vscode);
    const rgDir = join(vscode, 'node_modules', '@vscode', 'ripgrep', 'bin');
    mkdirSync(rgDir, { recursive: true });
    copyFileSync(rg, join(rgDir, 'rg'));
    chmodSync(join(rgDir, 'rg'), 0o755);
    sh(npm, ['rebuild', 'kerberos', '@parcel/watcher', 'node-pty', '@vscode/spdlog', '@vscode/deviceid', 'native-watchdog', ...quiet], vscode, { npm_config_yes: 'true', ...gypEnv });
    relink('node_modules', join(vscode, 'node_modules.asar'));
    relink('code-linux.sh', join(vscode, 'bin', 'remote-cli', 'code-server'));
    relink('browser-linux.sh', join(vscode, 'bin', 'helpers', 'browser.sh'));
    sh(npm, ['install', '--omit=dev', ...quiet], join(vscode, 'extensions'), gypEnv);
    if (!existsSync(codeServerEntry(work))) throw new Error(`code-server entry missing after install: ${codeServerEntry(work)}`);
    writeFileSync(join(work, MARKER), `${version} ${new Date().toISOString()}\n`);
    mkdirSync(join(dir, '..'), { recursive: true });
    try {
      rmSync(dir, { recursive: true, force: true }); // an unfinished install from before
      renameSync(work, dir);
    } catch (err) {
      // Another process finished first: use theirs.
      if (!existsSync(join(dir, MARKER))) throw err;
      rmSync(work, { recursive: true, force: true });
    }
  } catch (err) {
    rmSync(work, { recursive: true, force: true });
    throw err;
  }
  log(`code-server ${version} installed in ${dir} in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  return dir;
}

if (basename(process.argv[1] ?? '') === 'setupCodeServer.ts') {
  try {
    const dir = ensureCodeServer();
    console.log(dir);
  } catch (err) {
    console.error(`setup-code-server: ${(err as Error).message}`);
    process.exit(1);
  }
}
