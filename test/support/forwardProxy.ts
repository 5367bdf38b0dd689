// A real forward proxy for tests: the `proxy` package (the one undici's own tests use) on 127.0.0.1,
// answering absolute-form requests (http:// endpoints) and CONNECT tunnels (https:// endpoints), with
// Basic authentication when asked (407 otherwise). It logs every request it handled, so a test can
// assert what went through it and what did not.
import { createServer } from 'node:http';
import type { IncomingMessage } from 'node:http';
import { createProxy } from 'proxy';
import { listenOnLoopback } from './listen';

export interface ProxyLogEntry {
  /** 'CONNECT' or the method of an absolute-form request. */
  readonly method: string;
  /** host:port for CONNECT, the absolute URL otherwise. */
  readonly target: string;
  readonly authorized: boolean;
  readonly at: number;
}

export interface ForwardProxy {
  /** http://127.0.0.1:PORT (no credentials). */
  readonly url: string;
  /** The URL with the credentials when the proxy wants them. */
  readonly authUrl: string;
  readonly log: readonly ProxyLogEntry[];
  close(): Promise<void>;
}

export interface ForwardProxyOptions {
  readonly user?: string;
  readonly password?: string;
  /**
   * Names this proxy resolves itself, as a test's stand-in for DNS (name → IP address): a CONNECT to
   * `name:port` is tunnelled to `IP:port`, an absolute-form request to http://name:port/… is sent to
   * IP:port (the log keeps the name). Lets an endpoint have a name that is not loopback, which would
   * go direct by default.
   */
  readonly hosts?: Readonly<Record<string, string>>;
}

export async function startForwardProxy(options: ForwardProxyOptions = {}): Promise<ForwardProxy> {
  const log: ProxyLogEntry[] = [];
  const server = createProxy(createServer());
  const expected = options.user !== undefined ? `Basic ${Buffer.from(`${options.user}:${options.password ?? ''}`).toString('base64')}` : undefined;
  const authorized = (req: IncomingMessage): boolean => expected === undefined || req.headers['proxy-authorization'] === expected;
  // Logged before the package's own listeners run (prepended), with the verdict it will reach.
  server.prependListener('request', (req: IncomingMessage) => {
    log.push({ method: req.method ?? '?', target: req.url ?? '', authorized: authorized(req), at: performance.now() });
    // an absolute-form request (an http:// endpoint) to a name of `hosts`: the package connects to its address
    const u = URL.canParse(req.url ?? '') ? new URL(req.url!) : undefined;
    const ip = u ? options.hosts?.[u.hostname.toLowerCase()] : undefined;
    if (u && ip !== undefined) {
      u.hostname = ip;
      req.url = u.toString();
    }
  });
  server.prependListener('connect', (req: IncomingMessage) => {
    log.push({ method: 'CONNECT', target: req.url ?? '', authorized: authorized(req), at: performance.now() });
    // The package reads req.url after this listener: the name becomes the address it connects to.
    const colon = req.url?.lastIndexOf(':') ?? -1;
    const ip = colon > 0 ? options.hosts?.[req.url!.slice(0, colon).toLowerCase()] : undefined;
    if (ip !== undefined) req.url = `${ip}${req.url!.slice(colon)}`;
  });
  if (expected !== undefined) server.authenticate = authorized;
  const { url, sockets } = await listenOnLoopback(server);
  const u = new URL(url);
  if (options.user !== undefined) {
    u.username = encodeURIComponent(options.user);
    u.password = encodeURIComponent(options.password ?? '');
  }
  return {
    url,
    authUrl: u.toString().replace(/\/$/, ''),
    log,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
