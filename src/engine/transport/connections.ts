// How connections are made: direct or through a forward proxy (undici's ProxyAgent: CONNECT for
// https:// endpoints, absolute-form requests for http:// ones, as curl does), which certificates are
// trusted, and what each connection's set-up cost (TCP, the proxy's tunnel, the TLS handshake),
// recorded apart from TTFT. Every pool of the engine (the streaming client, detection, /metrics)
// gets its dispatcher here, and every connection failure is put in words here, naming the proxy when
// the proxy is what failed.
import { AsyncLocalStorage } from 'node:async_hooks';
import { isIP, connect as netConnect } from 'node:net';
import type { Socket } from 'node:net';
import { createSecureContext, rootCertificates } from 'node:tls';
import type { SecureContext } from 'node:tls';
import { buildConnector, Pool, ProxyAgent } from 'undici';
import type { Dispatcher } from 'undici';
import { isLoopbackHost } from './loopback';
import { displayUrl } from '../core/redact';
import type { Handshake, NetworkRecord, NetworkSpec } from '../core/types';

const round3 = (ms: number): number => Math.round(ms * 1000) / 1000;

/** The pool settings every caller chooses for itself (connections, keep-alive, timeouts). */
export type PoolSettings = Omit<Pool.Options, 'connect'> & { readonly connectTimeout?: number };

// ---- Which connections go through the proxy ----

function ipv4Number(ip: string): number {
  return ip.split('.').reduce((n, part) => n * 256 + Number(part), 0);
}

/** Whether one NO_PROXY entry covers host:port (curl's and Go's rules: names match themselves and their subdomains). */
function noProxyMatches(entry: string, host: string, port: string): boolean {
  let e = entry.trim().toLowerCase();
  if (e === '') return false;
  if (e === '*') return true;
  // host:port (and [v6]:port) entries match that port only.
  const portMatch = /^(\[[^\]]+\]|[^:]+):(\d+)$/.exec(e);
  if (portMatch) {
    if (portMatch[2] !== port) return false;
    e = portMatch[1]!;
  }
  e = e.replace(/^\[|\]$/g, '');
  const slash = e.indexOf('/');
  if (slash > 0 && isIP(e.slice(0, slash)) === 4 && isIP(host) === 4) {
    const bits = Number(e.slice(slash + 1));
    if (!Number.isInteger(bits) || bits < 0 || bits > 32) return false;
    if (bits === 0) return true;
    const mask = bits === 32 ? 0xffffffff : (~0 << (32 - bits)) >>> 0;
    return ((ipv4Number(e.slice(0, slash)) & mask) >>> 0) === ((ipv4Number(host) & mask) >>> 0);
  }
  if (isIP(e) !== 0 || isIP(host) !== 0) return e === host;
  const name = e.replace(/^\*?\./, '');
  return host === name || host.endsWith(`.${name}`);
}

/**
 * The proxy a request to `url` goes through, or undefined for a direct connection: none set, the
 * host in NO_PROXY, or a loopback address (unless the proxy was given explicitly for it).
 */
export function proxyFor(url: string, network: NetworkSpec | undefined): string | undefined {
  if (network?.proxy === undefined) return undefined;
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return undefined;
  }
  if (!network.proxyLoopback && isLoopbackHost(u.hostname)) return undefined;
  // NO_PROXY names match with or without the root's trailing dot ("example.com." is example.com).
  const host = u.hostname.replace(/^\[|\]$/g, '').replace(/\.$/, '');
  const port = u.port || (u.protocol === 'https:' ? '443' : '80');
  if ((network.noProxy ?? []).some((e) => noProxyMatches(e, host, port))) return undefined;
  return network.proxy;
}

/** What the run file says about how `url` was reached: the proxy (no credentials) and the trust settings. */
export function networkRecord(url: string, network: NetworkSpec | undefined): NetworkRecord {
  const proxy = proxyFor(url, network);
  const tls = {
    ...(network?.caSources?.length ? { ca: [...network.caSources] } : {}),
    ...(network?.insecure ? { insecure: true } : {}),
  };
  return {
    ...(proxy !== undefined ? { proxy: shownProxy(proxy) } : {}),
    ...(url.startsWith('https:') && Object.keys(tls).length > 0 ? { tls } : {}),
  };
}

/** A proxy as shown and stored: no credentials, no trailing slash. */
export function shownProxy(proxy: string): string {
  return displayUrl(proxy).replace(/\/$/, '');
}

/** The warning an output and a run file carry when certificates are not checked. */
export function insecureWarning(url: string, network: NetworkSpec | undefined): string | undefined {
  if (!network?.insecure || !url.startsWith('https:')) return undefined;
  return `certificates are not checked (${network.insecureSource ?? '--insecure'}): anyone between here and ${displayUrl(new URL(url).origin)} could read and change the traffic, the API key included`;
}

// ---- Dispatchers ----

/** The TLS settings of a connection to the endpoint (or to an https:// proxy). */
function tlsOptions(network: NetworkSpec | undefined): { secureContext?: SecureContext; rejectUnauthorized?: boolean } {
  const out: { secureContext?: SecureContext; rejectUnauthorized?: boolean } = {};
  // Passing a CA list replaces Node's roots, so they go first (NODE_EXTRA_CA_CERTS is read into
  // network.ca by whoever builds it). One secure context per dispatcher: given `ca` alone, every
  // tls.connect would parse the whole list again (about 30 ms for Node's 144 roots, on the event loop).
  if (network?.ca?.length) out.secureContext = secureContextFor(network.ca);
  if (network?.insecure) out.rejectUnauthorized = false;
  return out;
}

const contexts = new WeakMap<readonly string[], SecureContext>();
function secureContextFor(ca: readonly string[]): SecureContext {
  let context = contexts.get(ca);
  if (context === undefined) {
    const seen = new Set<string>(rootCertificates.map((c) => c.trim()));
    const extra = ca.map((c) => c.trim()).filter((c) => !seen.has(c) && (seen.add(c), true));
    context = createSecureContext({ ca: [...rootCertificates, ...extra] });
    contexts.set(ca, context);
  }
  return context;
}

type ConnectOptions = buildConnector.Options;
/** undici's connector callback, as one signature. */
type Done = (err: Error | null, socket: Socket | null) => void;
type Connector = (opts: ConnectOptions, callback: Done) => void;
const asUndici = (c: Connector): buildConnector.connector => c as unknown as buildConnector.connector;

/** A proxy connection being set up: where its CONNECT's time is written (the tunnel is made deep inside ProxyAgent). */
interface PendingHandshake {
  tunnelDone?: number;
}
const pendingTunnel = new AsyncLocalStorage<PendingHandshake>();

function connectTimeoutError(host: string, ms: number): Error {
  const err = new Error(`connect timeout (${host}, ${ms} ms)`) as Error & { code: string };
  err.code = 'UND_ERR_CONNECT_TIMEOUT';
  return err;
}

/**
 * A direct connector that times TCP and TLS apart: the TCP connection is made here, then undici's
 * own connector runs the TLS handshake over it (its session cache and SNI rules kept).
 */
function directConnector(tls: ReturnType<typeof tlsOptions>, timeoutMs: number, onHandshake: (h: Handshake) => void): Connector {
  const undiciTls = buildConnector({ ...tls, timeout: timeoutMs } as buildConnector.BuildOptions);
  const plain = buildConnector({ timeout: timeoutMs } as buildConnector.BuildOptions);
  return (opts: ConnectOptions, callback: Done): void => {
    const start = performance.now();
    if (opts.protocol !== 'https:') {
      plain(opts, (err, socket) => {
        if (err === null) {
          const total = round3(performance.now() - start);
          onHandshake({ tcpMs: total, totalMs: total });
        }
        callback(err, socket);
      });
      return;
    }
    const port = Number(opts.port) || 443;
    const tcp = netConnect({ host: opts.hostname, port, noDelay: true, keepAlive: true, keepAliveInitialDelay: 60_000 });
    let done = false;
    const timer = setTimeout(() => {
      if (done) return;
      done = true;
      tcp.destroy();
      callback(connectTimeoutError(opts.hostname, timeoutMs), null);
    }, timeoutMs);
    tcp.once('error', (err) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      callback(err, null);
    });
    tcp.once('connect', () => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      const tcpAt = performance.now();
      undiciTls({ ...opts, httpSocket: tcp }, (err, socket) => {
        if (err === null) {
          const end = performance.now();
          onHandshake({ tcpMs: round3(tcpAt - start), tlsMs: round3(end - tcpAt), totalMs: round3(end - start) });
        } else {
          tcp.destroy();
        }
        callback(err, socket);
      });
    });
  };
}

/** An error of the proxy itself (unreachable, refusing the tunnel, asking for credentials): messages name the proxy, not the endpoint. */
class ProxyError extends Error {
  override readonly name = 'ProxyError';
  constructor(
    message: string,
    readonly code: string,
    readonly status?: number,
  ) {
    super(message);
  }
}

/** Whether credentials were given for the proxy (in its URL, or as a Proxy-Authorization value). */
function proxyHasCredentials(proxy: string, network: NetworkSpec | undefined): boolean {
  return new URL(proxy).username !== '' || network?.proxyAuthorization !== undefined;
}

function proxyStatusError(proxy: string, status: number, target: string, withCredentials: boolean): ProxyError {
  const shown = shownProxy(proxy);
  if (status === 407) {
    const fix = withCredentials ? 'it refused the credentials given' : 'give them in the proxy URL (http://user:password@host:port) or, in VS Code, http.proxyAuthorization';
    return new ProxyError(`the proxy ${shown} requires authentication (HTTP 407 Proxy Authentication Required): ${fix}`, 'PROXY_AUTH', 407);
  }
  if (status === 502 || status === 503 || status === 504) {
    return new ProxyError(`the proxy ${shown} could not reach ${target} (HTTP ${status} to CONNECT)`, 'PROXY_UPSTREAM', status);
  }
  return new ProxyError(`the proxy ${shown} refused a tunnel to ${target} (HTTP ${status} to CONNECT)`, 'PROXY_REFUSED', status);
}

function proxyConnectError(proxy: string, err: Error & { code?: string }): ProxyError {
  const code = err.code ?? 'ERROR';
  return new ProxyError(`${cannotConnect(`the proxy ${shownProxy(proxy)}`, code)}: is it running? (the endpoint was not tried)`, code);
}

/** A Pool to the proxy whose CONNECTs are timed and whose failures name the proxy. */
function proxyClient(proxy: string, url: string | URL, options: Pool.Options, withCredentials: boolean): Pool {
  const pool = new Pool(url, { ...options, connect: asUndici(namingConnector(proxy, options.connect as unknown as Connector)) });
  pool.on('connectionError', () => {});
  const connect = pool.connect.bind(pool) as (o: Dispatcher.ConnectOptions) => Promise<Dispatcher.ConnectData>;
  (pool as { connect: unknown }).connect = async (o: Dispatcher.ConnectOptions): Promise<Dispatcher.ConnectData> => {
    const pending = pendingTunnel.getStore();
    let data: Dispatcher.ConnectData;
    try {
      data = await connect(o);
    } catch (err) {
      throw err instanceof ProxyError ? err : proxyConnectError(proxy, err as Error);
    }
    if (data.statusCode !== 200) {
      data.socket.destroy();
      throw proxyStatusError(proxy, data.statusCode, String(o.path), withCredentials);
    }
    if (pending) pending.tunnelDone = performance.now();
    return data;
  };
  return pool;
}

/** Wraps a connector so that its failures say they are the proxy's. */
function namingConnector(proxy: string, inner: Connector): Connector {
  return (opts, callback) => {
    inner(opts, (err, socket) => {
      if (err !== null) callback(err instanceof ProxyError ? err : proxyConnectError(proxy, err), null);
      else callback(null, socket);
    });
  };
}

/** The dispatcher for one origin: a Pool (direct) or a ProxyAgent whose per-origin pools use `settings`. */
export function createDispatcher(origin: string, network: NetworkSpec | undefined, settings: PoolSettings, onHandshake: (h: Handshake) => void = () => {}): Dispatcher {
  const timeoutMs = settings.connectTimeout ?? 10_000;
  const tls = tlsOptions(network);
  const proxy = proxyFor(origin, network);
  if (proxy === undefined) {
    const pool = new Pool(origin, { ...settings, connect: asUndici(directConnector(tls, timeoutMs, onHandshake)) });
    pool.on('connectionError', () => {});
    return pool;
  }
  const proxyUrl = new URL(proxy);
  const withCredentials = proxyHasCredentials(proxy, network);
  const isHttps = origin.startsWith('https:');
  const proxyTls = proxyUrl.protocol === 'https:' ? { ...tls, timeout: timeoutMs } : { timeout: timeoutMs };
  const agent = new ProxyAgent({
    uri: proxy,
    ...(network?.proxyAuthorization !== undefined ? { token: network.proxyAuthorization } : {}),
    // https:// endpoints through a CONNECT tunnel; http:// ones as absolute-form requests, as curl does
    // (proxies commonly refuse CONNECT to ports other than 443).
    proxyTunnel: isHttps,
    requestTls: tls,
    proxyTls,
    clientFactory: (url: URL, options: object) => proxyClient(proxy, url, options as Pool.Options, withCredentials),
    factory: (o: string | URL, options: object) => {
      const given = (options as { connect?: Connector }).connect!;
      const toProxy = new URL(o).origin === proxyUrl.origin;
      const connect: Connector = toProxy ? namingConnector(proxy, timedProxyHop(given, onHandshake)) : tunnelConnector(given, onHandshake);
      const pool = new Pool(o, { ...settings, connect: asUndici(connect) });
      pool.on('connectionError', () => {});
      return pool;
    },
  } as ProxyAgent.Options);
  return agent;
}

/** The connection to the proxy of an absolute-form (http://) request: TCP to the proxy is its whole set-up. */
function timedProxyHop(inner: Connector, onHandshake: (h: Handshake) => void): Connector {
  return (opts, callback) => {
    const start = performance.now();
    inner(opts, (err, socket) => {
      if (err === null) {
        const total = round3(performance.now() - start);
        onHandshake({ tcpMs: total, totalMs: total });
      }
      callback(err, socket);
    });
  };
}

/** A connection through the proxy's CONNECT tunnel: the tunnel's time (its TCP included), then TLS over it. */
function tunnelConnector(inner: Connector, onHandshake: (h: Handshake) => void): Connector {
  return (opts, callback) => {
    const start = performance.now();
    const pending: PendingHandshake = {};
    pendingTunnel.run(pending, () =>
      inner(opts, (err, socket) => {
        if (err === null) {
          const end = performance.now();
          const tunnel = pending.tunnelDone ?? end;
          onHandshake({ tunnelMs: round3(tunnel - start), ...(opts.protocol === 'https:' ? { tlsMs: round3(end - tunnel) } : {}), totalMs: round3(end - start) });
        }
        callback(err, socket);
      }),
    );
  };
}

// ---- Failures in words ----

/** The usual failures of a connection, in plain words: one table for a run's errors, detection and the reachability check. */
const CONNECT_WORDS: Readonly<Record<string, string>> = {
  ECONNREFUSED: 'connection refused, nothing listens on that port',
  ENOTFOUND: 'no such host',
  EAI_AGAIN: 'the host name could not be looked up (DNS)',
  EHOSTUNREACH: 'no route to the host',
  ENETUNREACH: 'the network is unreachable',
  EHOSTDOWN: 'the host is down',
  ECONNRESET: 'the connection was reset',
  UND_ERR_SOCKET: 'the connection was closed',
  UND_ERR_CONNECT_TIMEOUT: 'connect timeout',
  ETIMEDOUT: 'connect timeout',
};

/**
 * A connection that could not be made, in the one sentence every surface says: "cannot connect to
 * http://127.0.0.1:18181 (connection refused, nothing listens on that port; ECONNREFUSED)". `what` is
 * the URL shown, or "the proxy http://…" when the proxy is the one that failed.
 */
export function cannotConnect(what: string, code: string): string {
  const words = CONNECT_WORDS[code];
  return `cannot connect to ${what} (${words !== undefined ? `${words}; ` : ''}${code})`;
}

const UNTRUSTED = new Set(['SELF_SIGNED_CERT_IN_CHAIN', 'DEPTH_ZERO_SELF_SIGNED_CERT', 'UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY', 'UNABLE_TO_GET_ISSUER_CERT', 'CERT_UNTRUSTED', 'CERT_SIGNATURE_FAILURE']);
/** A connection never made (CONNECT_WORDS's, but a reset or a close: those come after it was made). */
const CONNECT = new Set(Object.keys(CONNECT_WORDS).filter((c) => c !== 'ECONNRESET' && c !== 'UND_ERR_SOCKET'));

/** The codes of a failure and of its causes (undici wraps some, e.g. a tunnel's certificate error). */
function codesOf(err: unknown): { code: string; message: string; error: Error } | undefined {
  let e = err as (Error & { code?: string; cause?: unknown }) | undefined;
  for (let depth = 0; e && depth < 4; depth++) {
    if (e instanceof ProxyError) return { code: e.code, message: e.message, error: e };
    if (typeof e.code === 'string' && (UNTRUSTED.has(e.code) || CONNECT.has(e.code) || e.code.startsWith('CERT_') || e.code.startsWith('ERR_TLS') || e.code.startsWith('ERR_SSL'))) {
      return { code: e.code, message: e.message, error: e };
    }
    e = e.cause as typeof e;
  }
  return undefined;
}

/**
 * A failure to set up a connection (refused, unreachable, a certificate, the proxy), as one line
 * that names what failed and what to do; undefined for anything else (a reset, an HTTP status).
 * `url` is the endpoint's; `network` says whether a proxy was in the way.
 */
export function connectionFailure(err: unknown, url: string, network: NetworkSpec | undefined): { code: string; message: string } | undefined {
  const found = codesOf(err);
  if (found === undefined) {
    // ProxyAgent's own words for a refused tunnel (when the refusal did not pass our client).
    const m = /Proxy response \((\d{3})\) !== 200/.exec((err as Error | undefined)?.message ?? '') ?? /Proxy Authentication Required \((407)\)/.exec((err as Error | undefined)?.message ?? '');
    const proxy = proxyFor(url, network);
    if (m && proxy !== undefined) {
      const e = proxyStatusError(proxy, Number(m[1]), hostPort(url), proxyHasCredentials(proxy, network));
      return { code: e.code, message: e.message };
    }
    return undefined;
  }
  const { code, message } = found;
  if (found.error instanceof ProxyError) return { code, message };
  const origin = displayUrl(url);
  const proxy = proxyFor(url, network);
  const via = proxy !== undefined ? ` (through the proxy ${shownProxy(proxy)})` : '';
  if (UNTRUSTED.has(code)) {
    return { code, message: `the certificate of ${origin} is signed by a CA this machine does not trust (${code})${via}: trust its CA with --ca-file CA.pem or NODE_EXTRA_CA_CERTS (in VS Code: llmProfiler.tls.caFile), or, knowingly, --insecure` };
  }
  if (code === 'CERT_HAS_EXPIRED') return { code, message: `the certificate of ${origin} has expired (${code})${via}: the server must renew it (or, knowingly, --insecure)` };
  if (code === 'CERT_NOT_YET_VALID') return { code, message: `the certificate of ${origin} is not valid yet (${code})${via}: check this machine's clock` };
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') {
    const alt = (found.error as { cert?: { subjectaltname?: unknown } }).cert?.subjectaltname;
    const names = typeof alt === 'string' && alt !== '' ? alt : /cert's altnames: (.*)$/.exec(message)?.[1];
    return { code, message: `the certificate of ${origin} is not for the host "${hostOf(url)}"${names ? ` (it names ${names.slice(0, 200)})` : ''} (${code})${via}: use the host name it was issued for` };
  }
  if (code.startsWith('CERT_') || code.startsWith('ERR_TLS') || code.startsWith('ERR_SSL')) {
    return { code, message: `TLS with ${origin} failed (${code}: ${message.slice(0, 200)})${via}` };
  }
  return { code, message: `${cannotConnect(origin, code)}${via}` };
}

function hostOf(url: string): string {
  try {
    return new URL(url).hostname;
  } catch {
    return url;
  }
}

function hostPort(url: string): string {
  try {
    const u = new URL(url);
    return `${u.hostname}:${u.port || (u.protocol === 'https:' ? '443' : '80')}`;
  } catch {
    return url;
  }
}
