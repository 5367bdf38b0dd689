// The requests still in flight in a live run, on the host's side: the stream deltas of the engine's
// progress reports (Progress.streams) folded into each stream so far, so that a page that comes back
// (`ready`) gets every lane whole in its liveStart, and gathered between two liveUpdates (the throttle
// keeps only the latest progress, so the deltas of the reports in between would be lost). A stream is
// dropped when its record arrives. No `vscode` import: tested in plain node.
import type { RequestRecord, StreamDelta } from '../engine/core/types';

interface Stream { readonly index: number; readonly warmup?: boolean; readonly scheduledAt: number; readonly sentAt: number; readonly chunkMs: number[] }

export class LiveStreams {
  readonly #streams = new Map<number, Stream>();
  #pending = new Map<number, { readonly delta: StreamDelta; readonly chunkMs: number[] }>();

  /** Folds in a report's deltas, then forgets the requests whose records came with it. */
  add(deltas: readonly StreamDelta[] | undefined, records: readonly RequestRecord[] = []): void {
    for (const d of deltas ?? []) {
      let s = this.#streams.get(d.index);
      if (!s) {
        s = { index: d.index, ...(d.warmup ? { warmup: true } : {}), scheduledAt: d.scheduledAt, sentAt: d.sentAt, chunkMs: [] };
        this.#streams.set(d.index, s);
      }
      for (const t of d.chunkMs) s.chunkMs.push(t);
      const p = this.#pending.get(d.index);
      if (p) for (const t of d.chunkMs) p.chunkMs.push(t);
      else this.#pending.set(d.index, { delta: d, chunkMs: [...d.chunkMs] });
    }
    for (const r of records) {
      this.#streams.delete(r.index);
      this.#pending.delete(r.index);
    }
  }

  /** The deltas gathered since the last call, one per stream (for the next liveUpdate). */
  take(): StreamDelta[] {
    const out = [...this.#pending.values()].map(({ delta, chunkMs }) => ({ ...delta, chunkMs }));
    this.#pending = new Map();
    return out;
  }

  /** Every stream in flight from its first chunk (for a liveStart). */
  all(): StreamDelta[] {
    return [...this.#streams.values()].map((s) => ({ ...s, from: 0, chunkMs: s.chunkMs.slice() }));
  }

  get size(): number { return this.#streams.size; }
}
