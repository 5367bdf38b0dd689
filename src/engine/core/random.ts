// Seeded randomness, so that the same --seed gives the same prompts and the same arrival schedule.

/** A small, fast, well-distributed 32-bit generator (sfc32), seeded through splitmix32. Returns [0, 1). */
export class Rng {
  #a: number;
  #b: number;
  #c: number;
  #d: number;

  constructor(seed: number) {
    let s = (Math.trunc(seed) ^ 0x9e3779b9) >>> 0;
    const next = () => {
      s = (s + 0x9e3779b9) >>> 0;
      let z = s;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
      return (z ^ (z >>> 16)) >>> 0;
    };
    this.#a = next();
    this.#b = next();
    this.#c = next();
    this.#d = next();
    for (let i = 0; i < 12; i++) this.nextU32();
  }

  nextU32(): number {
    const t = (((this.#a + this.#b) >>> 0) + this.#d) >>> 0;
    this.#d = (this.#d + 1) >>> 0;
    this.#a = this.#b ^ (this.#b >>> 9);
    this.#b = (this.#c + (this.#c << 3)) >>> 0;
    this.#c = ((this.#c << 21) | (this.#c >>> 11)) >>> 0;
    this.#c = (this.#c + t) >>> 0;
    return t;
  }

  /** Uniform in [0, 1). */
  next(): number {
    return this.nextU32() / 4294967296;
  }

  /** Integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }

  /** Standard normal (Box–Muller). */
  normal(): number {
    let u = 0;
    while (u === 0) u = this.next();
    const v = this.next();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
  }

  /**
   * Gamma(shape, scale) by Marsaglia and Tsang (2000); for shape < 1 the usual boost
   * Gamma(shape) = Gamma(shape + 1) · U^(1/shape). Mean shape × scale.
   */
  gamma(shape: number, scale: number): number {
    if (!(shape > 0) || !(scale > 0)) throw new RangeError(`gamma needs shape > 0 and scale > 0, got ${shape}, ${scale}`);
    if (shape < 1) {
      let u = 0;
      while (u === 0) u = this.next();
      return this.gamma(shape + 1, scale) * Math.pow(u, 1 / shape);
    }
    const d = shape - 1 / 3;
    const c = 1 / Math.sqrt(9 * d);
    for (;;) {
      let x: number;
      let v: number;
      do {
        x = this.normal();
        v = 1 + c * x;
      } while (v <= 0);
      v = v * v * v;
      const u = this.next();
      if (u < 1 - 0.0331 * x * x * x * x) return d * v * scale;
      if (Math.log(u) < 0.5 * x * x + d * (1 - v + Math.log(v))) return d * v * scale;
    }
  }
}

/**
 * The gap before the next arrival in an open-loop run, s: gamma with shape `burstiness` and mean
 * 1/rate, exactly as vLLM's get_request (theta = 1 / (rate · burstiness)). burstiness 1 is a
 * Poisson process; below 1 burstier, above 1 more regular.
 */
export function interArrivalS(rng: Rng, rate: number, burstiness: number): number {
  return rng.gamma(burstiness, 1 / (rate * burstiness));
}
