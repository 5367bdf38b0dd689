// Short texts shown in the status bar, progress notification, CodeLens and sidebar. Pure.
import type { Progress, RunFile, SloSpec } from '../engine/types';
import type { RunIndexEntry } from './runStore';

export function formatMs(ms: number | undefined): string {
  if (ms === undefined || !Number.isFinite(ms)) return '–';
  if (ms >= 10_000) return `${(ms / 1000).toFixed(1)} s`;
  if (ms >= 100) return `${Math.round(ms)} ms`;
  return `${ms.toFixed(ms >= 10 ? 0 : 1)} ms`;
}

/** "12/40 · TTFT p50 312 ms" (total unknown: "12 done"); finished requests, failed ones included. */
export function progressLine(p: Pick<Progress, 'finished' | 'failed' | 'total' | 'ttftP50Ms'>): string {
  const count = p.total !== undefined ? `${p.finished}/${p.total}` : `${p.finished} done`;
  const failed = p.failed ? ` (${p.failed} failed)` : '';
  const ttft = p.ttftP50Ms !== undefined ? ` · TTFT p50 ${formatMs(p.ttftP50Ms)}` : '';
  return `${count}${failed}${ttft}`;
}

type SloFigures = Pick<RunIndexEntry, 'ttftP99Ms' | 'tpotP99Ms' | 'itlP99Ms' | 'e2eP99Ms' | 'completed'>;

const SLO_KEYS = [['ttftMs', 'ttft', 'ttftP99Ms'], ['tpotMs', 'tpot', 'tpotP99Ms'], ['itlMs', 'itl', 'itlP99Ms'], ['e2eMs', 'e2e', 'e2eP99Ms']] as const;

/**
 * A run's p99s against an SLO, judged as the engine's summary judges `sloMissed` (p99 ≤ limit):
 * "SLO ✓", or "SLO ✗ tpot p99 63 ms > 50 ms" naming each miss. A metric the run has no sample of
 * (ITL of one-token replies) is not held against it, unless nothing completed. Undefined without an SLO.
 */
export function sloVerdict(r: SloFigures, slo: SloSpec | undefined): string | undefined {
  if (!slo || !SLO_KEYS.some(([k]) => slo[k] !== undefined)) return undefined;
  if (!r.completed) return 'SLO ✗ none completed';
  const misses: string[] = [];
  for (const [key, name, field] of SLO_KEYS) {
    const limit = slo[key];
    const value = r[field];
    if (limit === undefined || value === undefined) continue;
    if (value > limit) misses.push(`${name} p99 ${formatMs(value)} > ${formatMs(limit)}`);
  }
  return misses.length ? `SLO ✗ ${misses.join(', ')}` : 'SLO ✓';
}

/**
 * The result shown in place above a prompt: "TTFT p50 312 ms · p99 540 ms · TPOT 41 ms", with the
 * SLO verdict appended when an SLO applies (the prompt file's front matter, else the settings').
 */
export function lensResult(
  r: Pick<RunIndexEntry, 'ttftP50Ms' | 'ttftP99Ms' | 'tpotP50Ms' | 'completed' | 'failed'> & Partial<SloFigures>,
  slo?: SloSpec,
): string {
  const verdict = sloVerdict({ completed: r.completed, ttftP99Ms: r.ttftP99Ms, tpotP99Ms: r.tpotP99Ms, itlP99Ms: r.itlP99Ms, e2eP99Ms: r.e2eP99Ms }, slo);
  if (!r.completed) return [`last run: ${r.failed} failed, none completed`, verdict].filter(Boolean).join(' · ');
  const parts = [`TTFT p50 ${formatMs(r.ttftP50Ms)}`, `p99 ${formatMs(r.ttftP99Ms)}`];
  if (r.tpotP50Ms !== undefined) parts.push(`TPOT ${formatMs(r.tpotP50Ms)}`);
  if (r.failed) parts.push(`${r.failed} failed`);
  if (verdict) parts.push(verdict);
  return parts.join(' · ');
}

export function runLabel(r: Pick<RunIndexEntry, 'endpointName' | 'startedAt'>): string {
  const d = new Date(r.startedAt);
  const when = Number.isNaN(d.getTime()) ? r.startedAt : d.toLocaleString();
  return `${r.endpointName} — ${when}`;
}

/** A one-paragraph summary while the report panel is not available. */
export function summaryText(run: Pick<RunFile, 'endpoint' | 'summary'>): string {
  const s = run.summary;
  const t = s.ttftMs.count ? `TTFT p50 ${formatMs(s.ttftMs.p50)} · p99 ${formatMs(s.ttftMs.p99)}` : 'no TTFT';
  const tp = s.tpotMs.count ? ` · TPOT p50 ${formatMs(s.tpotMs.p50)}` : '';
  return `${run.endpoint.name ?? run.endpoint.url}: ${s.completed} completed, ${s.failed} failed · ${t}${tp} · ${s.outputTokensPerSecond.toFixed(1)} tok/s`;
}
