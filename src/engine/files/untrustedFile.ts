// Reading a file someone else may have written (a prompt file from a pull request, a dataset, a file a
// prompt names, another tool's result): by its real path, inside the folders allowed when the caller
// names any, a regular file only (a FIFO never opens, /dev/zero never ends), never under /proc, /sys
// or /dev (a link to /proc/self/environ is a regular file of size 0 holding the process's secrets),
// and bounded by the bytes actually read, never by what stat says, and in time.
import { closeSync, constants, fstatSync, openSync, readSync, realpathSync, type Stats } from 'node:fs';
import { open, realpath } from 'node:fs/promises';
import { isAbsolute, relative, resolve } from 'node:path';

export type UntrustedFileReason = 'missing' | 'special' | 'outside' | 'not-regular' | 'too-large' | 'slow';

/** Why a file was not read; the message is the reason alone ("not a regular file (a FIFO)"): the caller names the file. */
export class UntrustedFileError extends Error {
  override readonly name = 'UntrustedFileError';
  constructor(message: string, readonly reason: UntrustedFileReason, options?: ErrorOptions) {
    super(message, options);
  }
}

export interface UntrustedReadOptions {
  /** Read no more than this: a larger file is refused, whatever its size says. */
  readonly maxBytes: number;
  /** Real folders the file's real path must lie in; absent: anywhere (a file the user named). */
  readonly roots?: readonly string[];
  /** The reason given for a file outside every root (where files may be, how to allow more). */
  readonly outside?: string;
}

export interface UntrustedAsyncOptions extends UntrustedReadOptions {
  /** A read that takes longer is given up (default 60 s). */
  readonly timeoutMs?: number;
}

/** Folders never read from, whatever links lead there: the kernel's views of processes, devices and settings. */
const SPECIAL = process.platform === 'win32' ? [] : ['/proc', '/sys', '/dev'];
/** Open without waiting for a writer (a FIFO) and without following a link swapped in after realpath. */
const OPEN_FLAGS = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0) | (constants.O_NOFOLLOW ?? 0);
const CHUNK = 1024 * 1024;
const DEFAULT_TIMEOUT_MS = 60_000;

/** Whether `child` is `parent` or lies under it (both absolute). */
export function within(parent: string, child: string): boolean {
  const rel = relative(parent, child);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

/** A path's real path (links resolved), or undefined when it cannot be resolved (it does not exist). */
export function realPathOf(path: string): string | undefined {
  try {
    return realpathSync(path);
  } catch {
    return undefined;
  }
}

/** A size in words: "8 MiB", "512 KiB". */
function bytesText(n: number): string {
  return n >= 1024 * 1024 ? `${+(n / 1024 / 1024).toFixed(1)} MiB` : n >= 1024 ? `${+(n / 1024).toFixed(1)} KiB` : `${n} bytes`;
}

function missing(e: unknown): UntrustedFileError {
  const code = (e as NodeJS.ErrnoException).code;
  const why = code === 'ENOENT' ? 'does not exist' : code === 'ELOOP' ? 'a loop of links, or a link that changed while it was read (ELOOP)' : `cannot be read (${code ?? (e as Error).message})`;
  return new UntrustedFileError(why, 'missing', { cause: e });
}

/** The checks on a real path: never under /proc, /sys or /dev; inside a root when there are roots. */
function checkReal(path: string, real: string, o: UntrustedReadOptions): string {
  // /proc's links to pipes and sockets resolve to names such as "pipe:[1234]"
  if (!isAbsolute(real)) throw new UntrustedFileError(`a link to ${real}: not a file on disk`, 'special');
  const special = SPECIAL.find((d) => within(d, real));
  if (special !== undefined) {
    const how = resolve(path) === real ? `under ${special}` : `a link to ${special} (${real})`;
    throw new UntrustedFileError(`${how}: files under /proc, /sys and /dev are never read`, 'special');
  }
  if (o.roots && !o.roots.some((root) => within(root, real))) throw new UntrustedFileError(o.outside ?? 'outside the folders allowed', 'outside');
  return real;
}

function kindOf(st: Stats): string {
  if (st.isDirectory()) return 'a folder';
  if (st.isFIFO()) return 'a FIFO';
  if (st.isCharacterDevice()) return 'a character device';
  if (st.isBlockDevice()) return 'a block device';
  if (st.isSocket()) return 'a socket';
  return 'not a file';
}

function checkRegular(st: Stats): void {
  if (!st.isFile()) throw new UntrustedFileError(`not a regular file (${kindOf(st)})`, 'not-regular');
}

/**
 * A file's bytes as they are read, bounded by the bytes actually read: each read fills `buffer()`
 * (at most CHUNK, and never more than one byte past the limit, which is how a larger file shows).
 */
class BoundedBytes {
  readonly #maxBytes: number;
  readonly #chunks: Buffer[] = [];
  #total = 0;

  constructor(maxBytes: number) {
    this.#maxBytes = maxBytes;
  }

  buffer(): Buffer {
    return Buffer.allocUnsafe(Math.min(CHUNK, this.#maxBytes + 1 - this.#total));
  }

  /** Keeps the `n` bytes a read put in `buf`; false at the end of the file; throws past the limit. */
  took(buf: Buffer, n: number): boolean {
    if (n === 0) return false;
    this.#chunks.push(n === buf.length ? buf : buf.subarray(0, n));
    this.#total += n;
    if (this.#total > this.#maxBytes) throw new UntrustedFileError(`larger than ${bytesText(this.#maxBytes)}`, 'too-large');
    return true;
  }

  bytes(): Buffer {
    return Buffer.concat(this.#chunks, this.#total);
  }
}

/** The file's real path, checked (see checkReal); throws UntrustedFileError. */
function checkedRealPath(path: string, o: UntrustedReadOptions): string {
  let real: string;
  try {
    real = realpathSync(path);
  } catch (e) {
    throw missing(e);
  }
  return checkReal(path, real, o);
}

/** Reads a file as described above, synchronously (the prompt-file reader is synchronous); throws UntrustedFileError. */
export function readUntrustedFileSync(path: string, o: UntrustedReadOptions): Buffer {
  const real = checkedRealPath(path, o);
  let fd: number;
  try {
    fd = openSync(real, OPEN_FLAGS);
  } catch (e) {
    throw missing(e);
  }
  try {
    checkRegular(fstatSync(fd));
    const read = new BoundedBytes(o.maxBytes);
    for (;;) {
      const buf = read.buffer();
      if (!read.took(buf, readSync(fd, buf, 0, buf.length, null))) return read.bytes();
    }
  } finally {
    closeSync(fd);
  }
}

async function readChecked(path: string, o: UntrustedReadOptions): Promise<Buffer> {
  let real: string;
  try {
    real = await realpath(path);
  } catch (e) {
    throw missing(e);
  }
  checkReal(path, real, o);
  const handle = await open(real, OPEN_FLAGS).catch((e: unknown) => {
    throw missing(e);
  });
  try {
    checkRegular(await handle.stat());
    const read = new BoundedBytes(o.maxBytes);
    for (;;) {
      const buf = read.buffer();
      if (!read.took(buf, (await handle.read(buf, 0, buf.length, null)).bytesRead)) return read.bytes();
    }
  } finally {
    await handle.close();
  }
}

/** Reads a file as described above; throws UntrustedFileError (reason 'slow' past the time limit). */
export async function readUntrustedFile(path: string, o: UntrustedAsyncOptions): Promise<Buffer> {
  const ms = o.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new UntrustedFileError(`took longer than ${ms / 1000} s to read`, 'slow')), ms);
  });
  const work = readChecked(path, o);
  // given up on, its failure must not go unhandled
  work.catch(() => undefined);
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}
