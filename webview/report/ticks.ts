// "Nice" axis ticks (1, 2, 5 × 10^n) for the hand-drawn timeline axis.

function niceStep(span: number, targetCount: number): number {
  if (!(span > 0) || !(targetCount > 0)) return 1;
  const raw = span / targetCount;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const norm = raw / mag;
  const mult = norm < 1.5 ? 1 : norm < 3.5 ? 2 : norm < 7.5 ? 5 : 10;
  return mult * mag;
}

/** Tick positions within [min, max], multiples of a nice step. */
export function niceTicks(min: number, max: number, targetCount: number): { step: number; ticks: number[] } {
  const step = niceStep(max - min, targetCount);
  const ticks: number[] = [];
  const first = Math.ceil(min / step) * step;
  for (let v = first, i = 0; v <= max + step * 1e-9 && i < 1000; i++, v = first + i * step) {
    ticks.push(Math.abs(v) < step * 1e-9 ? 0 : v);
  }
  return { step, ticks };
}
