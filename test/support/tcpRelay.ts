/**
 * A TCP relay in front of a real server that logs, per connection, who sent what and who closed
 * when: each request's first line, each response's status line, each side's FIN. It can hold a
 * server's FIN back for `delayServerFinMs` before passing it on (bytes are passed at once), as a
 * server thread descheduled between its last chunk and its close does: a client that reuses the
 * connection in that window writes a request the server will never answer.
 *
 * `unanswered()` lists the requests written on a connection the server closed without a single
 * byte of response to them: what llama-server throws away.
 */
import { connect, createServer } from 'node:net';
import type { AddressInfo, Socket } from 'node:net';

export type RelayEventKind = 'open' | 'request' | 'response' | 'server-fin' | 'client-fin';

export interface RelayEvent {
  readonly conn: number;
  readonly kind: RelayEventKind;
  /** performance.now() when the relay saw it. */
  readonly at: number;
  /** The request line ("POST /v1/chat/completions") or the status code. */
  readonly what?: string;
}

export interface TcpRelay {
  readonly url: string;
  readonly events: readonly RelayEvent[];
  /** Requests no response followed on a connection the server closed. */
  unanswered(): RelayEvent[];
  close(): Promise<void>;
}

const REQUEST_LINE = /^(GET|POST|PUT|DELETE|HEAD|OPTIONS|PATCH) (\S+) HTTP\/1\.[01]\r\n/;
const STATUS_LINE = /^HTTP\/1\.[01] (\d{3})/;

export async function startTcpRelay(targetPort: number, options: { readonly delayServerFinMs?: number } = {}): Promise<TcpRelay> {
  const events: RelayEvent[] = [];
  const sockets = new Set<Socket>();
  let conns = 0;
  const server = createServer((client) => {
    const conn = ++conns;
    const upstream = connect(targetPort, '127.0.0.1');
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
    }
    events.push({ conn, kind: 'open', at: performance.now() });
    // Request and status lines start a data event here (one request or response at a time on a
    // connection: pipelining 1), which is all this log needs.
    client.on('data', (b: Buffer) => {
      const m = REQUEST_LINE.exec(b.subarray(0, 300).toString('latin1'));
      if (m) events.push({ conn, kind: 'request', at: performance.now(), what: `${m[1]} ${m[2]}` });
      upstream.write(b);
    });
    upstream.on('data', (b: Buffer) => {
      const m = STATUS_LINE.exec(b.subarray(0, 20).toString('latin1'));
      if (m) events.push({ conn, kind: 'response', at: performance.now(), what: m[1] });
      client.write(b);
    });
    upstream.on('end', () => {
      events.push({ conn, kind: 'server-fin', at: performance.now() });
      const delay = options.delayServerFinMs ?? 0;
      if (delay > 0) setTimeout(() => client.end(), delay);
      else client.end();
    });
    client.on('end', () => {
      events.push({ conn, kind: 'client-fin', at: performance.now() });
      upstream.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    events,
    unanswered() {
      // A request no response followed on its connection: written before the server's FIN reached
      // the client, it was drained or reset by a server already closing.
      const pending = new Map<number, RelayEvent>();
      const closed = new Set<number>();
      for (const e of events) {
        if (e.kind === 'request') pending.set(e.conn, e);
        else if (e.kind === 'response') pending.delete(e.conn);
        else if (e.kind === 'server-fin') closed.add(e.conn);
      }
      return [...pending.values()].filter((e) => closed.has(e.conn));
    },
    close() {
      return new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const s of sockets) s.destroy();
      });
    },
  };
}
