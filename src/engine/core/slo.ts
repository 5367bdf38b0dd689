// SLOs as the CLI and settings write them: "ttft=500,tpot=50,itl=100,e2e=20000", in milliseconds.
import type { SloSpec } from './types';

export class SloParseError extends Error {
  override readonly name = 'SloParseError';
}

const KEYS: Readonly<Record<string, keyof SloSpec>> = {
  ttft: 'ttftMs',
  tpot: 'tpotMs',
  itl: 'itlMs',
  e2e: 'e2eMs',
  // vLLM spells it e2el in --goodput; accept it so commands can be carried over.
  e2el: 'e2eMs',
};

/** Parses "ttft=500,tpot=50,e2e=20000" (ms; an optional "ms" suffix is accepted). Throws SloParseError naming the bad part. */
export function parseSlo(text: string): SloSpec {
  const trimmed = text.trim();
  if (trimmed === '') throw new SloParseError('empty SLO: expected e.g. "ttft=500,tpot=50,e2e=20000" (milliseconds)');
  const out: { -readonly [K in keyof SloSpec]: number } = {};
  for (const rawPart of trimmed.split(',')) {
    const part = rawPart.trim();
    if (part === '') throw new SloParseError(`empty part in SLO "${text}": expected key=ms pairs separated by commas`);
    const eq = part.indexOf('=');
    const sep = eq >= 0 ? eq : part.indexOf(':');
    if (sep < 0) throw new SloParseError(`bad SLO part "${part}": expected key=ms, e.g. ttft=500`);
    const key = part.slice(0, sep).trim().toLowerCase();
    const field = KEYS[key];
    if (!field) throw new SloParseError(`unknown SLO "${key}" in "${part}": use ttft, tpot, itl or e2e`);
    const valueText = part.slice(sep + 1).trim().replace(/ms$/i, '').trim();
    const value = Number(valueText);
    if (valueText === '' || !Number.isFinite(value) || value <= 0) {
      throw new SloParseError(`bad SLO value in "${part}": expected a positive number of milliseconds`);
    }
    if (out[field] !== undefined) throw new SloParseError(`SLO "${key}" given twice`);
    out[field] = value;
  }
  return out;
}

/** The inverse of parseSlo, for display and for passing an SLO back to the CLI. */
export function formatSlo(slo: SloSpec): string {
  const parts: string[] = [];
  if (slo.ttftMs !== undefined) parts.push(`ttft=${slo.ttftMs}`);
  if (slo.tpotMs !== undefined) parts.push(`tpot=${slo.tpotMs}`);
  if (slo.itlMs !== undefined) parts.push(`itl=${slo.itlMs}`);
  if (slo.e2eMs !== undefined) parts.push(`e2e=${slo.e2eMs}`);
  return parts.join(',');
}

/** Builds an SloSpec from an object such as a prompt file's `slo:` block ({ ttft: 500, tpot: 50 }); returns the problems found. */
export function sloFromObject(value: unknown): { slo?: SloSpec; problems: string[] } {
  const problems: string[] = [];
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return { problems: ['slo must be a mapping such as { ttft: 500, tpot: 50 } (milliseconds)'] };
  }
  const out: { -readonly [K in keyof SloSpec]: number } = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    const key = k.toLowerCase().replace(/ms$/, '');
    const field = KEYS[key];
    if (!field) {
      problems.push(`unknown SLO "${k}": use ttft, tpot, itl or e2e`);
      continue;
    }
    const n = typeof v === 'string' ? Number(v.replace(/ms$/i, '').trim()) : v;
    if (typeof n !== 'number' || !Number.isFinite(n) || n <= 0) {
      problems.push(`SLO "${k}" must be a positive number of milliseconds`);
      continue;
    }
    out[field] = n;
  }
  return Object.keys(out).length > 0 ? { slo: out, problems } : { problems };
}
