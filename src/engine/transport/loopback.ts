// Whether a host is this machine: the one rule behind "loopback goes direct, not through the proxy"
// (network.ts) and "a server here usually needs no key" (the extension). A host that reaches this
// machine but is not recognised would send the API key to a proxy, so the rule reads every spelling
// a URL can carry: hosts are first put in the form the WHATWG URL parser gives (127.1, 0x7f.1 and
// 2130706433 are 127.0.0.1; [::ffff:127.0.0.1] is [::ffff:7f00:1]; letters lower-cased, %-escapes
// decoded), which is the form undici connects to. Pure (no node import): the extension bundle and the
// webviews may use it.
// Beside it, whether a host is private (this machine's or a local network's): where sizing prompts
// may ask the server's tokenizer (transport/tokenize.ts), never a hosted service.

/** A host (brackets around IPv6 optional) in URL-parsed form, or undefined when it is not a host. */
function parsedHost(host: string): string | undefined {
  let h = host.trim();
  if (h.includes(':') && !h.startsWith('[')) h = `[${h}]`;
  if (h === '' || /[/?#@\\]/.test(h)) return undefined;
  try {
    return new URL(`http://${h}/`).hostname;
  } catch {
    return undefined;
  }
}

/** 127.0.0.0/8, and 0.0.0.0 (connecting to it reaches this machine). */
function loopbackV4(octets: readonly number[]): boolean {
  return octets[0] === 127 || octets.every((o) => o === 0);
}

/** The eight 16-bit pieces of an IPv6 address in URL-serialised form (hex, `::` for the longest zero run). */
function v6Pieces(text: string): number[] | undefined {
  const [head, tail, more] = text.split('::');
  if (more !== undefined) return undefined;
  const a = head ? head.split(':') : [];
  const b = tail ? tail.split(':') : [];
  const zeros = tail === undefined ? 0 : 8 - a.length - b.length;
  const pieces = [...a, ...Array<string>(Math.max(0, zeros)).fill('0'), ...b].map((p) => (/^[0-9a-f]{1,4}$/.test(p) ? parseInt(p, 16) : NaN));
  return pieces.length === 8 && pieces.every((p) => !Number.isNaN(p)) ? pieces : undefined;
}

/** ::1, :: (like 0.0.0.0, it reaches this machine), and IPv4-mapped loopback (::ffff:127.x.y.z, ::ffff:0.0.0.0). */
function loopbackV6(text: string): boolean {
  const p = v6Pieces(text);
  if (p === undefined || p.slice(0, 5).some((x) => x !== 0)) return false;
  if (p[5] === 0) return p[6] === 0 && (p[7] === 0 || p[7] === 1);
  return p[5] === 0xffff && loopbackV4([p[6]! >> 8, p[6]! & 0xff, p[7]! >> 8, p[7]! & 0xff]);
}

/**
 * Whether `host` (a URL's hostname, or a bare name or address) is this machine: `localhost` and
 * `*.localhost` (RFC 6761; a trailing dot or capitals too), 127.0.0.0/8, 0.0.0.0, ::1, :: and the
 * IPv4-mapped forms of those IPv4 addresses, however spelt.
 */
export function isLoopbackHost(host: string): boolean {
  return hostIs(host, loopbackV6, loopbackV4, (name) => name === 'localhost' || name.endsWith('.localhost'));
}

/** Whether a URL's host is this machine (see isLoopbackHost); false for what is not a URL. */
export function isLoopbackUrl(url: string): boolean {
  return urlHostIs(url, isLoopbackHost);
}

/** A host told by its kind: an IPv6 address (the brackets off), an IPv4 one (its four numbers), or a name (trailing dots off); false for what is none. */
function hostIs(host: string, v6: (text: string) => boolean, v4: (octets: readonly number[]) => boolean, name: (name: string) => boolean): boolean {
  const h = parsedHost(host);
  if (h === undefined) return false;
  if (h.startsWith('[')) return v6(h.slice(1, -1));
  if (/^\d+\.\d+\.\d+\.\d+$/.test(h)) return v4(h.split('.').map(Number));
  return name(h.replace(/\.+$/, ''));
}

/** `test` of a URL's hostname; false for what is not a URL. */
function urlHostIs(url: string, test: (host: string) => boolean): boolean {
  try {
    return test(new URL(url).hostname);
  } catch {
    return false;
  }
}

/** 10/8, 172.16/12, 192.168/16 (RFC 1918), 169.254/16 (link-local), 100.64/10 (carrier-grade NAT, Tailscale), and this machine's. */
function privateV4(o: readonly number[]): boolean {
  const [a, b] = o as [number, number];
  return loopbackV4(o) || a === 10 || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168) || (a === 169 && b === 254) || (a === 100 && b >= 64 && b <= 127);
}

/** fc00::/7 (unique local), fe80::/10 (link-local), this machine's, and IPv4-mapped private addresses. */
function privateV6(text: string): boolean {
  const p = v6Pieces(text);
  if (p === undefined) return false;
  if (loopbackV6(text) || (p[0]! & 0xfe00) === 0xfc00 || (p[0]! & 0xffc0) === 0xfe80) return true;
  return p.slice(0, 5).every((x) => x === 0) && p[5] === 0xffff && privateV4([p[6]! >> 8, p[6]! & 0xff, p[7]! >> 8, p[7]! & 0xff]);
}

/** Names no public DNS gives out: one label ("gpu-box"), and the suffixes of local networks (RFC 6762, 6761, 8375). */
const LOCAL_SUFFIXES = ['.local', '.localhost', '.internal', '.lan', '.home.arpa'];

/**
 * Whether `host` is this machine or on a private network: isLoopbackHost's, the private and
 * link-local IPv4 and IPv6 ranges, a name of one label, and the local networks' suffixes. A hosted
 * service is never such a host; a server of one's own usually is.
 */
export function isPrivateHost(host: string): boolean {
  return hostIs(host, privateV6, privateV4, (name) => name === 'localhost' || !name.includes('.') || LOCAL_SUFFIXES.some((s) => name.endsWith(s)));
}

/** Whether a URL's host is private (see isPrivateHost); false for what is not a URL. */
export function isPrivateUrl(url: string): boolean {
  return urlHostIs(url, isPrivateHost);
}
