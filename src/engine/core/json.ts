// Small readers for untrusted JSON (stream events, server replies, request bodies). Pure.

/** The value of JSON text, or undefined when it is not JSON. */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * Whether JSON.parse's failure on `text` is the text stopping in the middle (a file cut short):
 * V8 names the end, an unterminated string, or a position at (or past) the last character.
 */
export function jsonEndsEarly(message: string, text: string): boolean {
  if (/end of (JSON )?input|Unterminated string/i.test(message)) return true;
  const at = /at position (\d+)/.exec(message);
  return at !== null && Number(at[1]) >= text.trimEnd().length - 1;
}

/** A JSON object (not null, not an array). */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function str(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/** A finite number, else undefined. */
export function num(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

/** A count (tokens, items): a non-negative safe integer, else undefined. Servers have sent -1 and 3.5. */
export function count(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : undefined;
}

/** A duration or other amount that cannot be negative: a finite number ≥ 0, else undefined. */
export function duration(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : undefined;
}
