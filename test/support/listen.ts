// Starting a test server on 127.0.0.1: a free port, and every open socket tracked so that close()
// can destroy them (a keep-alive client would otherwise hold the server open). Also a port nothing
// listens on.
import type { Server } from 'node:http';
import { createServer, type AddressInfo, type Socket } from 'node:net';

export async function listenOnLoopback(server: Server): Promise<{ readonly url: string; readonly sockets: ReadonlySet<Socket> }> {
  const sockets = new Set<Socket>();
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, sockets };
}

/** The timers a test server has pending (paced writes, delayed closes), all cleared at once when it closes. */
export class Timers {
  readonly #pending = new Set<NodeJS.Timeout>();

  later(ms: number, fn: () => void): void {
    const t = setTimeout(() => {
      this.#pending.delete(t);
      fn();
    }, Math.max(0, ms));
    this.#pending.add(t);
  }

  clear(): void {
    for (const t of this.#pending) clearTimeout(t);
    this.#pending.clear();
  }
}

/** A test server's close(): once, whatever the callers; pending timers cleared, open sockets destroyed, then the server closed. */
export function closerOf(server: Server, sockets: ReadonlySet<Socket>, timers?: Timers): () => Promise<void> {
  let closing: Promise<void> | undefined;
  return () =>
    (closing ??= new Promise<void>((resolve) => {
      timers?.clear();
      for (const s of sockets) s.destroy();
      server.close(() => resolve());
    }));
}

/** A port on 127.0.0.1 nothing listens on: bound, then closed. */
export async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  const { port } = s.address() as AddressInfo;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}
