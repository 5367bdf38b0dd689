// What a command writes to, and the exit codes, declared once for every command.

/** Where a command writes; injectable for tests, the process's own by default. */
export interface CliIo {
  readonly stdout: NodeJS.WritableStream & { isTTY?: boolean };
  readonly stderr: NodeJS.WritableStream & { isTTY?: boolean };
  readonly env: NodeJS.ProcessEnv;
  readonly cwd: string;
}

export const processIo = (): CliIo => ({ stdout: process.stdout, stderr: process.stderr, env: process.env, cwd: process.cwd() });

export const EXIT = {
  ok: 0,
  /** Some requests failed, the endpoint is down, or a server would not start. */
  failed: 1,
  /** A bad flag (named). */
  usage: 2,
  /** An SLO was missed (with --fail-on-slo). */
  slo: 3,
  /** Ctrl+C: what finished is printed and written. */
  interrupted: 130,
} as const;
