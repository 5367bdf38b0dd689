// Units and number formatting for every surface (CLI, extension, webviews): one rule for a duration,
// one for a count. Fixed to en-US so that what a test reads back is deterministic whatever the
// user's locale, and so tables show the engine's value, rounded only for display. Pure.

const cache = new Map<string, Intl.NumberFormat>();
/** `digits` decimals; `trim` drops trailing zeros after the point ("41 ms", not "41.0 ms"). */
function fmt(digits: number, trim = false): Intl.NumberFormat {
  const key = `${digits}${trim ? 't' : ''}`;
  let f = cache.get(key);
  if (!f) {
    f = new Intl.NumberFormat('en-US', { minimumFractionDigits: trim ? 0 : digits, maximumFractionDigits: digits });
    cache.set(key, f);
  }
  return f;
}

/** Decimals that keep three significant figures for typical latencies without noise on big ones. */
function digitsFor(v: number): number {
  const a = Math.abs(v);
  if (a === 0) return 0;
  if (a < 10) return 2;
  if (a < 100) return 1;
  return 0;
}

/** What every surface shows for a value that does not exist (no sample, not finite). */
export const DASH = '–';
const dash = DASH;

/** The smallest duration shown as a number: below it (chunks stamped in one network read) a figure says "< 0.01 ms", not a "0.00" that reads like a bug. */
export const TINY_MS = 0.01;

/**
 * A duration given in ms, everywhere it is shown: three significant figures below 100 ms ("4.32 ms",
 * "45.7 ms"), whole milliseconds below 10 s ("1,234 ms"), then seconds ("12.3 s", "125 s");
 * trailing zeros dropped ("41 ms", "50 ms"); above zero but under 0.01 ms, "< 0.01 ms".
 */
export function formatMs(v: number | undefined): string {
  if (v === undefined || !Number.isFinite(v)) return dash;
  if (v > 0 && v < TINY_MS) return `< ${TINY_MS} ms`;
  if (Math.abs(v) >= 10_000) return `${fmt(digitsFor(v / 1000), true).format(v / 1000)} s`;
  return `${fmt(digitsFor(v), true).format(v)} ms`;
}

/**
 * A number with a fixed count of decimals, for the CLI's aligned tables (vLLM prints `.2f`); a
 * positive value that would print as zero prints as "<0.01" (at two decimals), as formatMs says "< 0.01 ms".
 */
export function fixed(v: number | undefined, digits = 2): string {
  if (v === undefined || !Number.isFinite(v)) return dash;
  const least = 10 ** -digits;
  if (v > 0 && v < least / 2) return `<${least.toFixed(digits)}`;
  return v.toFixed(digits);
}

/** A plain number with sensible decimals (throughput, rates). */
/** A count or rate as people write it: whole numbers as they are, others to 3 significant digits (0.667, 2.86, 12.5), no trailing zeros. */
export function formatQuantity(v: number): string {
  return Number.isInteger(v) || !Number.isFinite(v) ? String(v) : String(Number(v.toPrecision(3)));
}

export function formatNumber(v: number | undefined, unit = ''): string {
  if (v === undefined || !Number.isFinite(v)) return dash;
  const s = fmt(digitsFor(v)).format(v);
  return unit ? `${s} ${unit}` : s;
}

const PRECISE = new Intl.NumberFormat('en-US', { maximumSignificantDigits: 6 });

/** A value in full, for a tooltip: six significant figures, never a float's noise ("122.211 ms", not "122.21059999999999"). */
export function formatPrecise(v: number | undefined, unit = ''): string {
  if (v === undefined || !Number.isFinite(v)) return dash;
  const s = PRECISE.format(v);
  return unit ? `${s} ${unit}` : s;
}

export function formatInt(v: number | undefined): string {
  if (v === undefined || !Number.isFinite(v)) return dash;
  return fmt(0).format(v);
}

/** 0.123 → "12.3 %". */
export function formatPercent(share: number | undefined): string {
  if (share === undefined || !Number.isFinite(share)) return dash;
  return `${fmt(digitsFor(share * 100)).format(share * 100)} %`;
}

/** A signed difference, for the compare table: "+12.3 ms (+4.0 %)". */
export function formatDelta(a: number | undefined, b: number | undefined): string {
  if (a === undefined || b === undefined || !Number.isFinite(a) || !Number.isFinite(b)) return dash;
  const d = b - a;
  const sign = d > 0 ? '+' : d < 0 ? '−' : '±';
  const abs = formatMs(Math.abs(d));
  if (a === 0) return `${sign}${abs}`;
  const pct = (d / a) * 100;
  return `${sign}${abs} (${sign}${fmt(1).format(Math.abs(pct))} %)`;
}

/** Axis labels for a time since run start in ms: "0", "250 ms", "1.5 s", "2 min". */
export function formatAxisMs(v: number, stepMs: number): string {
  if (v === 0) return '0';
  if (stepMs >= 60_000 && Math.abs(v) >= 60_000) return `${trim(v / 60_000)} min`;
  if (stepMs >= 1000 || Math.abs(v) >= 10_000) return `${trim(v / 1000)} s`;
  if (stepMs >= 1) return `${trim(v)} ms`;
  return `${trim(v)} ms`;
}

function trim(v: number): string {
  return String(Math.round(v * 1000) / 1000);
}

/** A moment since the run's start: "850 ms", "3.21 s", "2 min 5.0 s". */
export function formatAt(ms: number): string {
  if (!Number.isFinite(ms)) return dash;
  if (Math.abs(ms) < 1000) return `${fmt(0).format(ms)} ms`;
  if (Math.abs(ms) < 120_000) return `${fmt(2).format(ms / 1000)} s`;
  const m = Math.floor(ms / 60_000);
  return `${m} min ${fmt(1).format((ms - m * 60_000) / 1000)} s`;
}
