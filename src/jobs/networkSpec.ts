// The NetworkSpec a job runs with, from what each surface has: the CLI's flags and the environment
// (HTTPS_PROXY, HTTP_PROXY, ALL_PROXY, NO_PROXY and their lower-case forms, NODE_EXTRA_CA_CERTS), the
// extension's VS Code http.* settings with the environment behind them. One set of rules for both.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { authorizationSecrets, secretsOf } from '../engine/core/redact';
import type { NetworkSpec } from '../engine/core/types';
import { UsageError } from './errors';
import { checkProxyUrl } from './options';
// a proxy variable's `user:pass@host:port` without a scheme is http:// (as curl reads it), not the scheme "user:"
import { withScheme } from './urls';

const HTTPS_NAMES = ['https_proxy', 'HTTPS_PROXY', 'all_proxy', 'ALL_PROXY'] as const;
const HTTP_NAMES = ['http_proxy', 'HTTP_PROXY', 'all_proxy', 'ALL_PROXY'] as const;

/**
 * The secrets a network holds, for a scrubber: the proxy URL's credentials, a Proxy-Authorization
 * value, and the credentials of every proxy variable in the environment (known before anything
 * could print them, even when the variable is not the one used).
 */
export function networkSecrets(network: NetworkSpec | undefined, env: Readonly<Record<string, string | undefined>> = {}): string[] {
  const out = [...secretsOf({ url: network?.proxy }), ...authorizationSecrets(network?.proxyAuthorization)];
  for (const name of new Set([...HTTPS_NAMES, ...HTTP_NAMES])) {
    const v = env[name]?.trim();
    if (v) out.push(...secretsOf({ url: withScheme(v) }));
  }
  return out;
}

/** The environment's proxy for a URL, as curl reads it: https_proxy/HTTPS_PROXY for https://, http_proxy for http:// (HTTP_PROXY too), then all_proxy. */
export function proxyFromEnv(env: Readonly<Record<string, string | undefined>>, url: string): { readonly proxy: string; readonly source: string } | undefined {
  for (const name of url.startsWith('https:') ? HTTPS_NAMES : HTTP_NAMES) {
    const v = env[name]?.trim();
    if (v) return { proxy: withScheme(v), source: name };
  }
  return undefined;
}

/** NO_PROXY / no_proxy as a list of entries. */
function noProxyFromEnv(env: Readonly<Record<string, string | undefined>>): string[] {
  return splitNoProxy(env.no_proxy ?? env.NO_PROXY ?? '');
}

function splitNoProxy(text: string): string[] {
  return text.split(/[,\s]+/).map((s) => s.trim()).filter((s) => s !== '');
}

const PEM = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

/**
 * The certificates in PEM files, each file named in any problem: missing, unreadable, or holding no
 * certificate. `flag` is what the message names (--ca-file, NODE_EXTRA_CA_CERTS, a setting).
 */
function readCaFiles(paths: readonly string[], cwd: string, flag: string): { ca: string[]; caSources: string[] } {
  const ca: string[] = [];
  const caSources: string[] = [];
  for (const p of paths) {
    const file = resolve(cwd, p);
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      throw new UsageError(`${flag}: cannot read ${file} (${code === 'ENOENT' ? 'no such file' : code ?? (e as Error).message})`, flag);
    }
    const certs = text.match(PEM);
    if (!certs) throw new UsageError(`${flag}: ${file} holds no PEM certificate (-----BEGIN CERTIFICATE-----)`, flag);
    ca.push(...certs);
    caSources.push(file);
  }
  return { ca, caSources };
}

export interface NetworkInputs {
  /** An explicit proxy (--proxy, http.proxy); it applies to loopback addresses too when from --proxy. */
  readonly proxy?: string;
  readonly proxySource?: string;
  /** --no-proxy: no proxy at all, whatever the environment says. */
  readonly direct?: boolean;
  readonly noProxy?: readonly string[];
  readonly proxyAuthorization?: string;
  readonly caFiles?: readonly string[];
  readonly caFlag?: string;
  /** PEM certificates already loaded (the system store). */
  readonly extraCa?: { readonly ca: readonly string[]; readonly source: string };
  readonly insecure?: boolean;
  /** What asked for `insecure` (default --insecure): a setting's name in the extension. */
  readonly insecureSource?: string;
}

/**
 * The network for a job whose target is `url` (undefined: the local server, always direct). The
 * environment fills what the inputs leave open; NODE_EXTRA_CA_CERTS is added when other CA files
 * are given, since giving any replaces Node's own list (which holds it).
 */
export function buildNetwork(url: string | undefined, inputs: NetworkInputs, env: Readonly<Record<string, string | undefined>>, cwd: string): NetworkSpec | undefined {
  const out: { -readonly [K in keyof NetworkSpec]: NetworkSpec[K] } = {};
  if (url !== undefined && !inputs.direct) {
    const explicit = inputs.proxy !== undefined && inputs.proxy !== '' ? { proxy: inputs.proxy, source: inputs.proxySource ?? '--proxy' } : undefined;
    const chosen = explicit ?? proxyFromEnv(env, url);
    if (chosen) {
      const problem = checkProxyUrl(chosen.proxy);
      if (problem) throw new UsageError(`${chosen.source} ${problem}`, chosen.source.startsWith('--') ? chosen.source : undefined);
      out.proxy = chosen.proxy;
      out.proxySource = chosen.source;
      if (explicit && chosen.source === '--proxy') out.proxyLoopback = true;
      const noProxy = [...(inputs.noProxy ?? []), ...noProxyFromEnv(env)];
      if (noProxy.length > 0) out.noProxy = noProxy;
      if (inputs.proxyAuthorization) out.proxyAuthorization = inputs.proxyAuthorization;
    }
  }
  const ca: string[] = [];
  const caSources: string[] = [];
  if (inputs.caFiles?.length) {
    const files = readCaFiles(inputs.caFiles, cwd, inputs.caFlag ?? '--ca-file');
    ca.push(...files.ca);
    caSources.push(...files.caSources);
  }
  if (inputs.extraCa && inputs.extraCa.ca.length > 0) {
    ca.push(...inputs.extraCa.ca);
    caSources.push(inputs.extraCa.source);
  }
  const extra = env.NODE_EXTRA_CA_CERTS;
  if (ca.length > 0 && extra) {
    const fromEnv = readCaFiles([extra], cwd, 'NODE_EXTRA_CA_CERTS');
    ca.push(...fromEnv.ca);
    caSources.push(...fromEnv.caSources);
  }
  if (ca.length > 0) {
    out.ca = ca;
    out.caSources = caSources;
  }
  if (inputs.insecure) {
    out.insecure = true;
    if (inputs.insecureSource) out.insecureSource = inputs.insecureSource;
  }
  return Object.keys(out).length > 0 ? out : undefined;
}
