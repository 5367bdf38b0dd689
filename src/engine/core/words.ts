// Numbers inside the engine's plain-words messages (verdicts, buffering evidence), which are stored
// in the run file: a fixed en-US form, so a message reads the same on every machine. Surfaces format
// figures with src/present/units.ts; this layer may not import it.

const INT = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });
const ONE = new Intl.NumberFormat('en-US', { maximumFractionDigits: 1 });
const TWO = new Intl.NumberFormat('en-US', { maximumFractionDigits: 2 });

/** "4.32 ms", "45.7 ms", "1,234 ms", "12.3 s". */
export function msWords(ms: number): string {
  const a = Math.abs(ms);
  if (a >= 10_000) return `${ONE.format(ms / 1000)} s`;
  if (a >= 100) return `${INT.format(ms)} ms`;
  return `${(a >= 10 ? ONE : TWO).format(ms)} ms`;
}

/** "2,048". */
export function intWords(n: number): string {
  return INT.format(n);
}
