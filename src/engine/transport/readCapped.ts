// A response body read up to a bound in bytes: what transport reads of an answer it only inspects (a
// probe's JSON, a /metrics page, a tokenizer's count). A server may send any amount; reading stops at
// the bound, so neither memory nor the time spent reading grows with what it sends.

/** A body read up to a bound: its text (at most the bound's bytes of it), and whether that was all of it. */
export interface CappedBody {
  readonly text: string;
  /** False when the body went on past the bound: reading stopped there and the stream was destroyed. */
  readonly whole: boolean;
}

/** Reads `body` (undici's chunks) up to `max` bytes; past it, stops (leaving the loop destroys the stream). */
export async function readCapped(body: AsyncIterable<unknown>, max: number): Promise<CappedBody> {
  const parts: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    const b = chunk as Buffer;
    if (size + b.length > max) {
      parts.push(b.subarray(0, max - size));
      return { text: Buffer.concat(parts).toString('utf8'), whole: false };
    }
    parts.push(b);
    size += b.length;
  }
  return { text: Buffer.concat(parts, size).toString('utf8'), whole: true };
}
