// What may be a secret, and how it is kept out of anything shown or written (run files, logs, the
// webview). Pure: the extension's settings snapshot uses it too.
import type { EndpointSpec } from './types';

const SECRET_HEADER = /auth|key|token|secret|cookie|passw|credential|session|signature/i;

/** Whether a header's value may be a secret, judged by its name (Authorization, X-Api-Key, Ocp-Apim-Subscription-Key, …). */
export function isSecretHeaderName(name: string): boolean {
  return SECRET_HEADER.test(name);
}

/** A URL with any user:password@ removed, for anything that is shown or written. */
export function urlWithoutCredentials(url: string): string {
  try {
    const u = new URL(url);
    if (!u.username && !u.password) return url;
    u.username = '';
    u.password = '';
    return u.toString();
  } catch {
    return url;
  }
}

/** Header values that could be secrets are never written: the name stays, the value is replaced. */
export function redactHeaders(headers: Readonly<Record<string, string>> | undefined): Record<string, string> | undefined {
  if (!headers) return undefined;
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) out[k] = SECRET_HEADER.test(k) ? '<redacted>' : v;
  return out;
}

/** An endpoint as it may be shown or written: no user:password@ in the URL, credential-like header values redacted. */
export function redactEndpoint<E extends EndpointSpec>(endpoint: E): E {
  const headers = redactHeaders(endpoint.headers);
  return { ...endpoint, url: urlWithoutCredentials(endpoint.url), ...(headers ? { headers } : {}) };
}

/** The request headers that carry an API key, as the endpoint wants it (see EndpointSpec.apiKeyHeader). */
export function authHeaders(apiKey: string | undefined, header?: string): Record<string, string> {
  if (!apiKey) return {};
  const name = header?.trim().toLowerCase();
  return !name || name === 'authorization' ? { authorization: `Bearer ${apiKey}` } : { [name]: apiKey };
}
