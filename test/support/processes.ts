// Which processes are alive, read from /proc: the no-orphans checks of the local-server tests.
import { readdirSync, readFileSync } from 'node:fs';

/** Live (not zombie) processes whose command line mentions every needle (another test's model path never matches ours). */
export function processesMentioning(...needles: string[]): number[] {
  const out: number[] = [];
  for (const p of readdirSync('/proc')) {
    if (!/^\d+$/.test(p) || Number(p) === process.pid) continue;
    try {
      const cmd = readFileSync(`/proc/${p}/cmdline`, 'utf8');
      const stat = readFileSync(`/proc/${p}/stat`, 'utf8');
      if (needles.every((n) => cmd.includes(n)) && !/\) Z /.test(stat)) out.push(Number(p));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}
