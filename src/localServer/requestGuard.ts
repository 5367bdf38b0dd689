// Who may talk to the bundled server: programs on this machine, never a web page. Binding 127.0.0.1
// keeps other machines out but not a page in the user's browser, which can reach loopback two ways:
// DNS rebinding (its own host name re-resolved to 127.0.0.1, so the Host header still names that
// host) and plain cross-origin requests (the browser then adds Origin or Sec-Fetch-Site). Our own
// clients (undici in node, curl) send neither.
import type { IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Refusal {
  readonly status: 403 | 421;
  readonly kind: 'host' | 'origin';
  readonly message: string;
}

const quote = (s: string) => JSON.stringify(s.length > 100 ? `${s.slice(0, 100)}…` : s);

/** The Host header values that name this server: its loopback address and `localhost`, with the port. */
export function loopbackHosts(addr: AddressInfo): ReadonlySet<string> {
  const names = [addr.family === 'IPv6' ? `[${addr.address.toLowerCase()}]` : addr.address, 'localhost'];
  const out = new Set(names.map((n) => `${n}:${addr.port}`));
  // A client leaves out the default port.
  if (addr.port === 80) for (const n of names) out.add(n);
  return out;
}

function hostLines(rawHeaders: readonly string[]): number {
  let n = 0;
  for (let i = 0; i < rawHeaders.length; i += 2) if (rawHeaders[i]!.toLowerCase() === 'host') n++;
  return n;
}

/** Why the request must not be served, or undefined when it may be. */
export function refusal(req: IncomingMessage, hosts: ReadonlySet<string>): Refusal | undefined {
  const misdirected = (why: string): Refusal => ({ status: 421, kind: 'host', message: `${why}: this server answers only to ${[...hosts].join(', ')}` });
  const host = req.headers.host;
  if (hostLines(req.rawHeaders) > 1) return misdirected('more than one Host header');
  // HTTP/1.0 clients may leave Host out; browsers never do.
  if (host === undefined && req.httpVersion !== '1.0') return misdirected('no Host header');
  if (host !== undefined && !hosts.has(host.trim().toLowerCase())) return misdirected(`Host ${quote(host)} is not this server`);
  // An absolute-form target's authority overrides Host (RFC 9112, 3.2.2).
  const target = req.url ?? '/';
  if (!target.startsWith('/') && target !== '*') {
    let url: URL | undefined;
    try {
      url = new URL(target);
    } catch {
      // checked below
    }
    if (!url || url.protocol !== 'http:' || !hosts.has(url.host.toLowerCase())) return misdirected(`request target ${quote(target)} is not this server`);
  }
  const origin = req.headers.origin;
  if (origin !== undefined) return { status: 403, kind: 'origin', message: `requests from web pages are refused (Origin ${quote(origin)})` };
  // A browser request without Origin (a link, an image, a form GET) still says where it came from.
  const site = req.headers['sec-fetch-site'];
  if (site !== undefined && site !== 'none') return { status: 403, kind: 'origin', message: `requests from web pages are refused (Sec-Fetch-Site ${quote(String(site))})` };
  return undefined;
}
