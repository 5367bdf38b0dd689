// The endpoint as every surface names it, with how it was reached when that changes what was
// measured: through a proxy, or with certificates not checked.
import { REACH_TIMEOUT_MS, type ConnectionInfo, type Handshake, type Reach, type RunFile } from '../engine/core/types';
import { median } from '../engine/core/stats';
import { formatMs } from './units';

type RunEndpoint = RunFile['endpoint'];

/** "via proxy http://proxy:3128", "certificates not checked", "trusting CA ca.pem": empty when direct and checked as usual. */
export function networkNotes(endpoint: Partial<RunEndpoint> | undefined): string[] {
  const out: string[] = [];
  if (endpoint?.proxy) out.push(`via proxy ${endpoint.proxy}`);
  if (endpoint?.tls?.insecure) out.push('certificates not checked');
  const ca = endpoint?.tls?.ca ?? [];
  if (ca.length > 0) out.push(`trusting ${ca.map((p) => p.split(/[\\/]/).pop()).join(', ')}`);
  return out;
}

/**
 * The notes a short text carries (a notification, a run list, the status bar): the proxy and
 * unchecked certificates change what was measured; an extra trusted CA does not, and is left to the report.
 */
export function networkShort(endpoint: Partial<RunEndpoint> | undefined): string[] {
  const out: string[] = [];
  if (endpoint?.proxy) out.push(`via proxy ${endpoint.proxy}`);
  if (endpoint?.tls?.insecure) out.push('certificates not checked');
  return out;
}

/** Said before a run through a proxy (`proxy` without credentials): where it came from, and what it changes. */
export function proxyNotice(proxy: string, source: string | undefined): string {
  return `via proxy ${proxy} (from ${source ?? 'the environment'}): connecting and the tunnel are timed apart from TTFT, but every byte passes the proxy`;
}

/** "http://h:8000 (openai-chat, detected, llama-3) · via proxy http://p:3128". */
export function endpointText(endpoint: RunEndpoint): string {
  const notes = networkNotes(endpoint);
  return `${endpoint.url} (${endpoint.api}${endpoint.detectedApi ? ', detected' : ''}${endpoint.model ? `, ${endpoint.model}` : ''})${notes.length ? ` · ${notes.join(' · ')}` : ''}`;
}

function medianOf(list: readonly Handshake[], pick: (h: Handshake) => number | undefined): number | undefined {
  const xs = list.map(pick).filter((x): x is number => x !== undefined);
  return xs.length > 0 ? median(xs) : undefined;
}

/** What setting up the connections cost, kept out of TTFT: "4 warmed: TCP 0.3 ms, tunnel 2.1 ms, TLS 6.0 ms (medians); 1 reopened during the run". */
export function connectionText(connection: ConnectionInfo | undefined): string | undefined {
  if (!connection?.handshakes?.length) return undefined;
  const hs = connection.handshakes;
  const parts: string[] = [];
  const tcp = medianOf(hs, (h) => h.tcpMs);
  const tunnel = medianOf(hs, (h) => h.tunnelMs);
  const tls = medianOf(hs, (h) => h.tlsMs);
  if (tcp !== undefined) parts.push(`TCP ${formatMs(tcp)}`);
  if (tunnel !== undefined) parts.push(`proxy tunnel ${formatMs(tunnel)}`);
  if (tls !== undefined) parts.push(`TLS ${formatMs(tls)}`);
  const reopened = connection.reopened?.length ?? 0;
  return `${connection.connections} warmed: ${parts.join(', ')} (median${hs.length > 1 ? 's' : ''}; not in TTFT)${reopened > 0 ? `; ${reopened} opened during the run` : ''}`;
}

/**
 * "reachable (23 ms)", "not reachable: no answer within 3 s", or "not reachable: " and the check's own
 * sentence, the words a run's error says ("cannot connect to http://127.0.0.1:18181 (connection
 * refused, nothing listens on that port; ECONNREFUSED)"; a proxy that failed named as the proxy).
 */
export function reachText(r: Reach, timeoutMs = REACH_TIMEOUT_MS): string {
  if (r.reachable) return `reachable (${formatMs(r.ms)})`;
  if (r.code === 'TIMEOUT') return `not reachable: no answer within ${formatMs(timeoutMs)}`;
  return `not reachable: ${r.message}`;
}
