// The TCP ports a process listens on, as the kernel tells it: how the supervisor learns the port of
// the llama-server it started (with --port 0, llama-server binds a free port itself). Nothing that
// merely answers on a port, nor a line in a log, can pass for it: a socket counts only when the
// process (or a process it started) holds it open. Linux reads /proc; macOS asks /usr/sbin/lsof.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { endianness } from 'node:os';

export interface Listener {
  /** 127.0.0.1, ::1, 0.0.0.0, :: or any other address, as text. */
  readonly address: string;
  readonly port: number;
}

export interface ProcNetRow extends Listener {
  readonly inode: string;
  /** TCP_LISTEN (state 0A). */
  readonly listening: boolean;
}

/** Hex from /proc/net/tcp{,6}: each 32-bit word is printed in the host's byte order. */
function procAddress(hex: string, littleEndian: boolean): string {
  const bytes: number[] = [];
  for (let w = 0; w < hex.length; w += 8) {
    const word = hex.slice(w, w + 8).match(/../g)!.map((b) => parseInt(b, 16));
    bytes.push(...(littleEndian ? word.reverse() : word));
  }
  if (bytes.length === 4) return bytes.join('.');
  const pieces: string[] = [];
  for (let i = 0; i < 16; i += 2) pieces.push(((bytes[i]! << 8) | bytes[i + 1]!).toString(16));
  const full = pieces.join(':');
  if (full.startsWith('0:0:0:0:0:ffff:')) return `::ffff:${bytes.slice(12).join('.')}`;
  return full === '0:0:0:0:0:0:0:1' ? '::1' : full === '0:0:0:0:0:0:0:0' ? '::' : full;
}

/** The rows of /proc/<pid>/net/tcp or tcp6 (header line skipped). */
export function parseProcNetTcp(text: string, littleEndian: boolean = endianness() === 'LE'): ProcNetRow[] {
  const rows: ProcNetRow[] = [];
  for (const line of text.split('\n').slice(1)) {
    const f = line.trim().split(/\s+/);
    const m = /^([0-9A-Fa-f]{8}|[0-9A-Fa-f]{32}):([0-9A-Fa-f]{4})$/.exec(f[1] ?? '');
    if (!m || f.length < 10) continue;
    rows.push({ address: procAddress(m[1]!, littleEndian), port: parseInt(m[2]!, 16), inode: f[9]!, listening: f[3] === '0A' });
  }
  return rows;
}

/** `lsof -F n` output: the n lines of TCP listeners (`n127.0.0.1:8080`, `n[::1]:8080`, `n*:8080`). */
export function parseLsofListeners(text: string): Listener[] {
  const out: Listener[] = [];
  for (const line of text.split('\n')) {
    const m = /^n(?:\[([^\]]+)\]|([^:[\]]+)):(\d+)$/.exec(line.trim());
    if (m) out.push({ address: m[1] ?? (m[2] === '*' ? '0.0.0.0' : m[2]!), port: Number(m[3]) });
  }
  return out;
}

const read = (path: string): string | undefined => {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
};

/** `pid` and every process it started, and they started (Linux: /proc/<pid>/task/<tid>/children). */
function processTree(pid: number): number[] {
  const out: number[] = [];
  const todo = [pid];
  while (todo.length > 0 && out.length < 256) {
    const p = todo.pop()!;
    out.push(p);
    let tasks: string[];
    try {
      tasks = readdirSync(`/proc/${p}/task`);
    } catch {
      continue;
    }
    for (const t of tasks) todo.push(...(read(`/proc/${p}/task/${t}/children`) ?? '').split(/\s+/).filter(Boolean).map(Number));
  }
  return out;
}

/** The inodes of the sockets a process holds open. */
function socketInodes(pid: number): string[] {
  let fds: string[];
  try {
    fds = readdirSync(`/proc/${pid}/fd`);
  } catch {
    return [];
  }
  const out: string[] = [];
  for (const fd of fds) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (m) out.push(m[1]!);
    } catch {
      // closed meanwhile
    }
  }
  return out;
}

function linuxListeners(pid: number): Listener[] {
  const inodes = new Set(processTree(pid).flatMap(socketInodes));
  if (inodes.size === 0) return [];
  // The tables of the process's own network namespace.
  const rows = ['tcp', 'tcp6'].flatMap((t) => parseProcNetTcp(read(`/proc/${pid}/net/${t}`) ?? ''));
  return rows.filter((r) => r.listening && inodes.has(r.inode)).map(({ address, port }) => ({ address, port }));
}

const LSOF = '/usr/sbin/lsof';

/**
 * The TCP ports `pid` (and on Linux, the processes it started) listens on; undefined where this
 * platform cannot tell (no /proc, no lsof at its fixed path: a PATH lookup could find a planted one).
 */
export function listenersOf(pid: number): Listener[] | undefined {
  if (existsSync('/proc/self/net/tcp')) return linuxListeners(pid);
  if (process.platform === 'darwin' && existsSync(LSOF)) {
    const r = spawnSync(LSOF, ['-nP', '-a', '-p', String(pid), '-iTCP', '-sTCP:LISTEN', '-Fn'], { encoding: 'utf8', timeout: 5000 });
    return r.error ? undefined : parseLsofListeners(r.stdout ?? '');
  }
  return undefined;
}
