// What may be a secret, and how it is kept out of anything shown or written (run files, the
// terminal, logs, the webview). Pure: the extension's settings snapshot and log use it too.
//
// Two defences, both here so every boundary applies the same one:
// - what the user gave is redacted by its shape before it is shown: user:password@ in a URL,
//   secret-looking header values and query values;
// - what a server said (error bodies, ids, model names) may echo a secret or carry terminal escapes:
//   `fromServer` strips control characters, then scrubs every secret known to the job (Scrubber).
import type { EndpointSpec, RunFile } from './types';

const SECRET_NAME = /auth|key|token|secret|cookie|passw|credential|session|signature|jwt|^sig$|^code$/i;

/** What replaces a secret wherever it would appear. */
const REDACTED = '<redacted>';

/** Secrets shorter than this are not scrubbed from free text (a 1–3 character value would mangle every line). */
const MIN_SCRUB_LENGTH = 4;

/** Whether a header's (or query parameter's) value may be a secret, judged by its name (Authorization, X-Api-Key, key, api_key, sig, …). */
export function isSecretHeaderName(name: string): boolean {
  return SECRET_NAME.test(name);
}

/**
 * `[scheme://]user:password@host…` where the URL parser sees no credentials: a value that is not a
 * URL, or one it reads as scheme "user:" (`user:pass@host:port`, typed without http://). Everything
 * up to the last @ goes (a password may hold / or #), the scheme stays.
 */
const USERINFO_BY_SHAPE = /^([a-z][a-z0-9+.-]*:\/\/)?[^]*@/i;

/** A URL (or a value meant as one) as it may be shown or written: no user:password@, secret-looking query values replaced. */
export function displayUrl(url: string): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return url.replace(USERINFO_BY_SHAPE, '$1');
  }
  if (u.host === '' && !u.username) return url.replace(USERINFO_BY_SHAPE, '$1');
  let changed = false;
  if (u.username || u.password) {
    u.username = '';
    u.password = '';
    changed = true;
  }
  if (u.search) {
    const params = new URLSearchParams(u.search);
    for (const [name, value] of [...params]) {
      if (value !== '' && isSecretHeaderName(name)) {
        params.set(name, REDACTED);
        changed = true;
      }
    }
    if (changed) u.search = params.toString();
  }
  // The URL encodes the brackets of <redacted>; keep the placeholder readable.
  return changed ? u.toString().replaceAll(encodeURIComponent(REDACTED), REDACTED) : url;
}

/** Header values that could be secrets are never written: the name stays, the value is replaced. */
export function redactHeaders(headers: Readonly<Record<string, string>> | undefined): Record<string, string> | undefined {
  if (!headers) return undefined;
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) out[k] = isSecretHeaderName(k) ? REDACTED : v;
  return out;
}

/** An endpoint as it may be shown or written: no credentials or secret query values in the URL, credential-like header values redacted. */
export function redactEndpoint<E extends EndpointSpec>(endpoint: E): E {
  const headers = redactHeaders(endpoint.headers);
  return { ...endpoint, url: displayUrl(endpoint.url), ...(headers ? { headers } : {}) };
}

/** The request headers that carry an API key, as the endpoint wants it (see EndpointSpec.apiKeyHeader). */
export function authHeaders(apiKey: string | undefined, header?: string): Record<string, string> {
  if (!apiKey) return {};
  const name = header?.trim().toLowerCase();
  return !name || name === 'authorization' ? { authorization: `Bearer ${apiKey}` } : { [name]: apiKey };
}

/** An authorization value and, for "Bearer sk-…" or "Basic …", the credential after the scheme, which is a secret on its own. */
export function authorizationSecrets(value: string | undefined): string[] {
  if (!value) return [];
  const m = /^\s*\S+\s+(\S{4,})\s*$/.exec(value);
  return m ? [value, m[1]!] : [value];
}

/** Every secret a job holds: the API key, secret-looking header values, the URL's credentials and secret-looking query values. */
export function secretsOf(endpoint: { readonly url?: string; readonly headers?: Readonly<Record<string, string>> | undefined }, apiKey?: string): string[] {
  const out: string[] = [];
  if (apiKey) out.push(apiKey);
  for (const [k, v] of Object.entries(endpoint.headers ?? {})) {
    if (!isSecretHeaderName(k)) continue;
    out.push(...authorizationSecrets(v));
  }
  if (endpoint.url) {
    try {
      const u = new URL(endpoint.url);
      if (u.username) out.push(decodeURIComponent(u.username));
      if (u.password) out.push(decodeURIComponent(u.password));
      for (const [name, value] of new URLSearchParams(u.search)) if (isSecretHeaderName(name)) out.push(value);
    } catch {
      // not a URL: nothing in it to collect
    }
  }
  return out;
}

/**
 * Replaces every known secret in a text, in the forms it can take there: as given, URL-encoded and
 * JSON-escaped. Plain string search (no regular expression built from a secret), longest first.
 */
export class Scrubber {
  /** The secrets as given (kept so `with` does not encode the encoded forms again). */
  readonly #secrets: ReadonlySet<string>;
  readonly #needles: string[];

  constructor(secrets: Iterable<string | undefined> = []) {
    const given = new Set<string>();
    const needles = new Set<string>();
    for (const s of secrets) {
      if (!s || s.length < MIN_SCRUB_LENGTH || given.has(s)) continue;
      given.add(s);
      needles.add(s);
      needles.add(encodeURIComponent(s));
      needles.add(JSON.stringify(s).slice(1, -1));
    }
    this.#secrets = given;
    this.#needles = [...needles].sort((a, b) => b.length - a.length);
  }

  /** A scrubber that also knows these secrets. */
  with(secrets: Iterable<string | undefined>): Scrubber {
    return new Scrubber([...this.#secrets, ...secrets]);
  }

  get empty(): boolean {
    return this.#needles.length === 0;
  }

  scrub(text: string): string {
    let out = text;
    for (const n of this.#needles) if (out.includes(n)) out = out.split(n).join(REDACTED);
    return out;
  }

  /**
   * A message or record with every string in it scrubbed: the same value when nothing changed, a
   * copy of only the parts that did. Arrays of numbers (chunk times) are passed over whole.
   */
  scrubValue<T>(value: T): T {
    return this.empty ? value : (this.#walk(value) as T);
  }

  #walk(value: unknown): unknown {
    if (typeof value === 'string') return this.scrub(value);
    if (typeof value !== 'object' || value === null) return value;
    if (Array.isArray(value)) {
      // `at`, not `value[0]`: an optimized indexed read over arrays of every kind makes V8 box each array of doubles it reads (runFile.ts isNumberArray)
      if (value.length === 0 || typeof value.at(0) === 'number') return value;
      let out: unknown[] | undefined;
      for (let i = 0; i < value.length; i++) {
        const v = this.#walk(value[i]);
        if (v !== value[i]) (out ??= value.slice())[i] = v;
      }
      return out ?? value;
    }
    const entries = Object.entries(value);
    // A name can be a server's word too (a response header's, an imported tool's figure): scrubbed as values are.
    if (entries.some(([k]) => this.scrub(k) !== k)) return Object.fromEntries(entries.map(([k, v]) => [this.scrub(k), this.#walk(v)]));
    let out: Record<string, unknown> | undefined;
    for (const [k, v] of entries) {
      const w = this.#walk(v);
      if (w !== v) (out ??= { ...(value as Record<string, unknown>) })[k] = w;
    }
    return out ?? value;
  }
}

declare const SCRUBBED: unique symbol;

/**
 * A run as it may leave the tool: every export (the run file, the requests and chunks CSV, the trace,
 * OTLP) takes this type, and `scrubRun` is the only way to make one, so no export can be handed a run
 * that has not passed the one scrubber. A brand of the type only: at run time it is a RunFile.
 */
export type ScrubbedRun = RunFile & { readonly [SCRUBBED]: true };

/**
 * The run with its endpoint redacted (URL credentials, secret header values) and every known secret
 * scrubbed from every string in it, names included: a server may echo a key as its model name, a
 * response id or an error, and an imported file may carry one anywhere.
 */
export function scrubRun(run: RunFile, scrubber: Scrubber): ScrubbedRun {
  return scrubber.scrubValue({ ...run, endpoint: redactEndpoint(run.endpoint) }) as ScrubbedRun;
}

/**
 * Terminal and text controls a server could use against whoever reads its words: whole escape
 * sequences first (CSI `ESC [ … final`, OSC `ESC ] … BEL`, their 8-bit forms, two-character `ESC x`),
 * so no parameter text is left behind, then lone C0 controls, DEL, C1 controls, and the bidirectional
 * overrides that make text read differently than it is. Tab and newline stay.
 */
// eslint-disable-next-line no-control-regex
const ESCAPE_SEQUENCE = /\u001b\[[0-?]*[ -/]*[@-~]?|\u009b[0-?]*[ -/]*[@-~]?|\u001b\][^\u0007\u001b\u009c]*(?:\u0007|\u001b\\|\u009c)?|\u009d[^\u0007\u001b\u009c]*(?:\u0007|\u001b\\|\u009c)?|\u001b[ -~]?/g;
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

/** A text with escape sequences and control characters removed (see above); `oneLine` also turns newlines and tabs into spaces. */
export function printable(text: string, oneLine = false): string {
  const out = text.replace(ESCAPE_SEQUENCE, '').replace(CONTROL, '');
  return oneLine ? out.replace(/[\t\n]+/g, ' ') : out;
}

/** The longest text a server may put into one field of a record or message (error messages, ids). */
const SERVER_TEXT_MAX = 500;

/**
 * Text a server said, made safe to keep and show: control characters stripped first (so a secret
 * cut by an escape is whole again), then every known secret scrubbed, then capped at `max` characters.
 */
export function fromServer(text: string, scrubber: Scrubber, max = SERVER_TEXT_MAX, oneLine = false): string {
  const clean = scrubber.scrub(printable(text, oneLine));
  return clean.length > max ? `${clean.slice(0, max)}… (${text.length} characters)` : clean;
}
