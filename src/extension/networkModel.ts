// VS Code's http.* settings and llmProfiler.tls.* as the inputs of jobs/networkSpec.ts's buildNetwork,
// which holds the rules both surfaces share (the environment behind the settings, NO_PROXY, loopback
// direct). Pure (no `vscode`): network.ts reads the settings and hands them in.
import type { NetworkInputs } from '../jobs/networkSpec';
import type { ConfigProblem, TlsConfig } from './configModel';

/** The `http.*` settings of VS Code that decide how an extension reaches the network, as read (a user can write anything in settings.json). */
export interface HttpSettings {
  readonly proxy?: unknown;
  readonly proxyStrictSSL?: unknown;
  readonly noProxy?: unknown;
  readonly proxyAuthorization?: unknown;
  readonly proxySupport?: unknown;
  readonly systemCertificates?: unknown;
}

/** The keys of `HttpSettings`, as `vscode.workspace.getConfiguration('http')` names them. */
export const HTTP_KEYS = ['proxy', 'proxyStrictSSL', 'noProxy', 'proxyAuthorization', 'proxySupport', 'systemCertificates'] as const;

export interface NetworkPlan {
  /** For buildNetwork; the OS store, when wanted, is added as `extraCa` by whoever loads it. */
  readonly inputs: NetworkInputs;
  /** Whether the OS's CA store is to be trusted too (http.systemCertificates, default true), for an https:// endpoint. */
  readonly systemCertificates: boolean;
  /** Values of the wrong type: ignored, and reported (never thrown). */
  readonly problems: readonly ConfigProblem[];
}

/** `~/x` as the home folder's x; other paths as they are (buildNetwork resolves relative ones). */
function expandHome(path: string, home: string | undefined): string {
  if (home === undefined) return path;
  if (path === '~') return home;
  return /^~[\\/]/.test(path) ? `${home.replace(/[\\/]+$/, '')}${path.slice(1)}` : path;
}

/**
 * What the settings ask for: http.proxy (else the environment's HTTPS_PROXY…, which buildNetwork
 * reads), http.noProxy beside NO_PROXY, http.proxyAuthorization, http.proxySupport "off" (no proxy
 * at all), llmProfiler.tls.caFile, and certificates unchecked by llmProfiler.tls.insecure or, as VS
 * Code does for every extension's requests, http.proxyStrictSSL: false.
 */
export function networkPlan(http: HttpSettings, tls: TlsConfig, home?: string): NetworkPlan {
  const problems: ConfigProblem[] = [];
  const inputs: { -readonly [K in keyof NetworkInputs]: NetworkInputs[K] } = {};
  // A proxy URL or an authorization may hold credentials: their wrong values are not repeated.
  const wrong = (key: string, want: string, got?: unknown) =>
    problems.push({ setting: `http.${key}`, message: `must be ${want}${got !== undefined ? ` (got ${JSON.stringify(got)})` : ''}; ignored` });

  if (http.proxySupport === 'off') {
    inputs.direct = true;
  } else {
    if (typeof http.proxy === 'string') {
      if (http.proxy.trim() !== '') {
        inputs.proxy = http.proxy.trim();
        inputs.proxySource = 'http.proxy';
      }
    } else if (http.proxy !== undefined && http.proxy !== null) wrong('proxy', 'a string');
    if (Array.isArray(http.noProxy)) {
      const hosts = http.noProxy.filter((h): h is string => typeof h === 'string').map((h) => h.trim()).filter((h) => h !== '');
      const odd = (http.noProxy as unknown[]).find((h) => typeof h !== 'string');
      if (odd !== undefined) wrong('noProxy', 'an array of host names (an entry was not a string)', odd);
      if (hosts.length > 0) inputs.noProxy = hosts;
    } else if (http.noProxy !== undefined && http.noProxy !== null) wrong('noProxy', 'an array of host names', http.noProxy);
    if (typeof http.proxyAuthorization === 'string') {
      if (http.proxyAuthorization.trim() !== '') inputs.proxyAuthorization = http.proxyAuthorization.trim();
    } else if (http.proxyAuthorization !== undefined && http.proxyAuthorization !== null) wrong('proxyAuthorization', 'a string');
  }

  if (tls.caFile !== undefined) {
    inputs.caFiles = [expandHome(tls.caFile, home)];
    inputs.caFlag = 'llmProfiler.tls.caFile';
  }
  if (tls.insecure) {
    inputs.insecure = true;
    inputs.insecureSource = 'llmProfiler.tls.insecure';
  } else if (http.proxyStrictSSL === false) {
    inputs.insecure = true;
    inputs.insecureSource = 'http.proxyStrictSSL: false';
  } else if (http.proxyStrictSSL !== undefined && http.proxyStrictSSL !== null && typeof http.proxyStrictSSL !== 'boolean') {
    wrong('proxyStrictSSL', 'true or false', http.proxyStrictSSL);
  }

  let systemCertificates = true;
  if (typeof http.systemCertificates === 'boolean') systemCertificates = http.systemCertificates;
  else if (http.systemCertificates !== undefined && http.systemCertificates !== null) wrong('systemCertificates', 'true or false', http.systemCertificates);

  return { inputs, systemCertificates, problems };
}

/** Whether the OS store is worth loading for this target: only an https:// endpoint uses it. */
export function wantsSystemCa(plan: NetworkPlan, url: string | undefined): boolean {
  return plan.systemCertificates && url !== undefined && /^https:/i.test(url);
}
