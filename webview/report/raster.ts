// The timeline's lanes drawn in software: axis-aligned rectangles blended into one RGBA buffer that
// is put on the canvas at once. At a million chunks a frame is ~16 thousand rectangles; each of the
// canvas's own fillRect calls costs about a microsecond (recorded, then rasterized with
// anti-aliasing), where filling a run of a typed array costs a fraction of that. Left and right
// edges keep their coverage (a rectangle over half a pixel blends half of it in), so thin gaps and
// per-chunk ticks look as the canvas would draw them; top and bottom edges snap to whole device
// pixels, at least one tall, so a lane's bar is one solid run of pixels per row.

/** A colour as the buffer stores it (little-endian RGBA in one 32-bit word), and its own opacity. */
export interface Paint { readonly word: number; readonly alpha: number }

let probe: CanvasRenderingContext2D | undefined;

/** Any CSS colour the canvas understands, read back through a 1×1 canvas. */
export function paintOf(css: string): Paint {
  probe ??= document.createElement('canvas').getContext('2d', { willReadFrequently: true }) ?? undefined;
  if (!probe) return { word: 0xff000000, alpha: 1 };
  probe.clearRect(0, 0, 1, 1);
  probe.fillStyle = '#000';
  probe.fillStyle = css;
  probe.fillRect(0, 0, 1, 1);
  const [r, g, b, a] = probe.getImageData(0, 0, 1, 1).data;
  // the probe holds premultiplied-then-unpremultiplied values: exact for opaque colours
  return { word: (0xff000000 | (b! << 16) | (g! << 8) | r!) >>> 0, alpha: a! / 255 };
}

export class PixelLayer {
  #image: ImageData | undefined;
  #px = new Uint32Array(0);
  #w = 0;
  #h = 0;
  #scale = 1;
  #originX = 0;

  /** Sizes the buffer to `cssW` × `cssH` at `dpr`; x coordinates given later are offset by `originX` (css px). */
  resize(cssW: number, cssH: number, dpr: number, originX: number): void {
    const w = Math.max(1, Math.round(cssW * dpr));
    const h = Math.max(1, Math.round(cssH * dpr));
    this.#scale = dpr;
    this.#originX = originX;
    if (w === this.#w && h === this.#h && this.#image) return;
    this.#w = w;
    this.#h = h;
    this.#image = new ImageData(w, h);
    this.#px = new Uint32Array(this.#image.data.buffer);
  }

  clear(p: Paint): void {
    this.#px.fill(p.word);
  }

  /** Blends a rectangle (css px, canvas coordinates) at `alpha` × the paint's own opacity. */
  fill(x: number, y: number, w: number, h: number, p: Paint, alpha = 1): void {
    const s = this.#scale;
    const W = this.#w;
    let x0 = (x - this.#originX) * s;
    let x1 = x0 + w * s;
    if (x0 < 0) x0 = 0;
    if (x1 > W) x1 = W;
    if (!(x1 > x0)) return;
    let y0 = Math.round(y * s);
    let y1 = Math.round((y + h) * s);
    if (y1 <= y0) y1 = y0 + 1;
    if (y0 < 0) y0 = 0;
    if (y1 > this.#h) y1 = this.#h;
    if (y1 <= y0) return;
    const a = alpha * p.alpha;
    const word = p.word;
    const px = this.#px;
    const ix0 = Math.floor(x0);
    const ix1 = Math.ceil(x1) - 1; // the last pixel touched
    if (ix0 === ix1) {
      const c = a * (x1 - x0);
      for (let r = y0; r < y1; r++) blend(px, r * W + ix0, word, c);
      return;
    }
    const left = a * (ix0 + 1 - x0);
    const right = a * (x1 - ix1);
    for (let r = y0; r < y1; r++) {
      const row = r * W;
      blend(px, row + ix0, word, left);
      if (a >= 1) px.fill(word, row + ix0 + 1, row + ix1);
      else for (let i = row + ix0 + 1; i < row + ix1; i++) blend(px, i, word, a);
      blend(px, row + ix1, word, right);
    }
  }

  /** Puts the buffer on the canvas with its top left at (`dx`, `dy`) device pixels. */
  putOn(ctx: CanvasRenderingContext2D, dx: number, dy: number): void {
    if (this.#image) ctx.putImageData(this.#image, dx, dy);
  }
}

function blend(px: Uint32Array, i: number, word: number, a: number): void {
  if (a >= 0.999) { px[i] = word; return; }
  if (a <= 0.001) return;
  const d = px[i]!;
  const k = 1 - a;
  const r = (d & 0xff) * k + (word & 0xff) * a;
  const g = ((d >>> 8) & 0xff) * k + ((word >>> 8) & 0xff) * a;
  const b = ((d >>> 16) & 0xff) * k + ((word >>> 16) & 0xff) * a;
  px[i] = (0xff000000 | ((b + 0.5) << 16) | ((g + 0.5) << 8) | (r + 0.5)) >>> 0;
}
