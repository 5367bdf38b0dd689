// A test server's request body, read whole: as bytes, or as a JSON object (undefined when the body
// is not one, so the server can answer 400 as a real one would).
import type { IncomingMessage } from 'node:http';

/**
 * The whole body. A request the client gives up on never settles, as its 'end' never comes: no
 * 'error' listener is added, so that node:http drops such a request quietly as it does without one.
 */
export function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve) => {
    const parts: Buffer[] = [];
    req.on('data', (b: Buffer) => parts.push(b));
    req.once('end', () => resolve(Buffer.concat(parts)));
  });
}

/** The body parsed as a JSON object (or array); undefined when it is not JSON or a bare value. */
export async function readJsonBody(req: IncomingMessage): Promise<Record<string, unknown> | undefined> {
  const text = (await readBody(req)).toString('utf8');
  try {
    const v: unknown = JSON.parse(text);
    return v !== null && typeof v === 'object' ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
