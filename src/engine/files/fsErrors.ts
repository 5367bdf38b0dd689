// A file system error in words, for a line that names the path: "the disk is full (ENOSPC)". The code
// stays in parentheses (what a search or a bug report needs); a code not listed is shown as it is.

const WORDS: Readonly<Record<string, string>> = {
  ENOSPC: 'the disk is full',
  EDQUOT: 'the disk quota is used up',
  EROFS: 'the file system is read-only',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  ENOENT: 'no such file or folder',
  ENOTDIR: 'a part of the path is not a folder',
  EISDIR: 'it is a folder',
  EIO: 'an input/output error (the disk or its connection failed)',
  EMFILE: 'too many open files',
  EFBIG: 'the file is larger than the file system allows',
};

/** "the disk is full (ENOSPC)"; an error without a code: its message. */
export function fsErrorText(e: unknown): string {
  const code = (e as NodeJS.ErrnoException | undefined)?.code;
  if (typeof code === 'string') return WORDS[code] ? `${WORDS[code]} (${code})` : code;
  return e instanceof Error ? e.message : String(e);
}
