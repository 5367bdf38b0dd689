// The endpoint APIs, one row each: every per-API fact that is data. Detection, the client, the OTLP
// export, the CLI's choices, the run file's schema, the extension's pickers, the manifest's test and
// the docs read it; how to build a request and read its stream's events is the API's adapter
// (engine/transport/adapters/). A new API is a row here plus its adapter file (and the registry's
// line for it, which TypeScript then asks for). Pure data, browser-safe.

/** How a URL alone names an API, without asking the server (a hosted provider's host). */
export interface UrlRule {
  /** The URL's host is one of these (a leading "." matches any name ending so). */
  readonly hosts: readonly string[];
  /** ...and its path matches this, when given... */
  readonly path?: RegExp;
  /** ...and does not match this, when given (Gemini's OpenAI-compatible path is another API's). */
  readonly notPath?: RegExp;
}

/** A GET (from the server root) whose answer tells the API: a 2xx whose JSON has a list under `list`, or one of `keys`; neither given, any 2xx. */
export interface ProbeRule {
  readonly path: string;
  readonly list?: string;
  readonly keys?: readonly string[];
}

/** How `--api auto` tells an API: by the URL, by a probe, and whether a base URL ending in /v1 is this API's. */
export interface Detection {
  readonly url?: UrlRule;
  readonly probe?: ProbeRule;
  readonly v1Root?: true;
}

export interface ApiFacts {
  /** --api's value, the run file's endpoint.api. */
  readonly id: string;
  /** What it is, in a line (the pickers, the manifest's enumDescriptions, the docs). */
  readonly label: string;
  /** A hosted provider's own API: no Prometheus /metrics, no server timings to scrape. */
  readonly hosted: boolean;
  /** How its stream is framed: server-sent events, or one JSON object a line. */
  readonly framing: 'sse' | 'ndjson';
  /** What its stream carries besides the text (for the docs). */
  readonly carries: string;
  /** It takes function definitions (tools) and streams the calls back; absent: tools are not sent to it (noted). */
  readonly tools?: true;
  /** The header its key goes in when the endpoint names none; absent: `Authorization: Bearer`. */
  readonly keyHeader?: string;
  /** How `--api auto` tells it; absent: never detected, only chosen. */
  readonly detect?: Detection;
  /** OpenTelemetry's `gen_ai.provider.name` and `gen_ai.operation.name` for its requests (semantic conventions 1.37). */
  readonly otel: { readonly provider: string; readonly operation: string };
  /** How a cold request keeps out of the prefix cache: its own `cache_prompt: false`, else a nonce before the prompt. */
  readonly cold: 'cache_prompt' | 'nonce';
  /**
   * Its servers may count a prompt's tokens (`POST /tokenize`: vLLM's, llama.cpp's), which sizes
   * synthetic prompts (transport/tokenize.ts): `own`, the API is llama.cpp's server's own, asked
   * wherever it is; `self-hosted`, asked only at a loopback or private address (a server of one's own),
   * never at a hosted service that speaks the same API (it has no such route, and the key goes with every POST).
   */
  readonly tokenize?: 'own' | 'self-hosted';
}

/*
 * Detection's order: a URL that names an API (rows in order); then a base URL ending in /v1; then the
 * probes, all sent at once, those that look into the answer (list, keys) before those that need a
 * 2xx only (an Ollama or llama.cpp server answers /v1/models too), each group in row order.
 */
const ROWS = [
  {
    id: 'openai-chat',
    label: 'OpenAI-compatible /v1/chat/completions (vLLM, SGLang, TGI, llama-server, LM Studio…)',
    hosted: false,
    framing: 'sse',
    carries: 'text and reasoning deltas; tool-call pieces; usage in a last chunk; llama.cpp timings, vLLM per-request metrics, cached tokens when sent',
    tools: true,
    detect: { probe: { path: '/v1/models' }, v1Root: true },
    otel: { provider: 'openai', operation: 'chat' },
    cold: 'nonce',
    tokenize: 'self-hosted',
  },
  {
    id: 'openai-completions',
    label: 'OpenAI-compatible /v1/completions (plain text in, text out)',
    hosted: false,
    framing: 'sse',
    carries: 'text deltas; usage in a last chunk; llama.cpp timings, vLLM per-request metrics when sent',
    otel: { provider: 'openai', operation: 'text_completion' },
    cold: 'nonce',
    tokenize: 'self-hosted',
  },
  {
    id: 'ollama',
    label: 'Ollama\'s /api/chat',
    hosted: false,
    framing: 'ndjson',
    carries: 'text and thinking; whole tool calls; counts and durations (load, prompt, decode) in the last line',
    tools: true,
    detect: { probe: { path: '/api/tags', list: 'models' } },
    otel: { provider: 'ollama', operation: 'chat' },
    cold: 'nonce',
  },
  {
    id: 'llamacpp',
    label: 'llama.cpp\'s own /completion',
    hosted: false,
    framing: 'sse',
    carries: 'text with its token ids; counts and timings (prompt, decode, cached) in the last event',
    detect: { probe: { path: '/props', keys: ['default_generation_settings', 'total_slots'] } },
    otel: { provider: 'llama.cpp', operation: 'text_completion' },
    cold: 'cache_prompt',
    tokenize: 'own',
  },
  {
    id: 'anthropic',
    label: 'Anthropic\'s Messages API',
    hosted: true,
    framing: 'sse',
    carries: 'text and thinking deltas; tool_use blocks in input pieces; usage (cumulative output, cache reads); errors mid-stream',
    tools: true,
    keyHeader: 'x-api-key',
    detect: { url: { hosts: ['.anthropic.com'] } },
    otel: { provider: 'anthropic', operation: 'chat' },
    cold: 'nonce',
  },
  {
    id: 'gemini',
    label: 'Google Gemini\'s generateContent',
    hosted: true,
    framing: 'sse',
    carries: 'text and thought parts; whole functionCall parts; cumulative usage metadata (thoughts, cached tokens)',
    tools: true,
    keyHeader: 'x-goog-api-key',
    detect: { url: { hosts: ['generativelanguage.googleapis.com'], notPath: /\/openai(\/|$)/ } },
    otel: { provider: 'gcp.gemini', operation: 'generate_content' },
    cold: 'nonce',
  },
  {
    id: 'azure-openai',
    label: 'an Azure OpenAI deployment',
    hosted: true,
    framing: 'sse',
    carries: 'as openai-chat, with content-filter results beside the deltas',
    tools: true,
    keyHeader: 'api-key',
    detect: { url: { hosts: ['.openai.azure.com', '.cognitiveservices.azure.com', '.services.ai.azure.com'], path: /\/openai\/deployments\/[^/]+/ } },
    otel: { provider: 'azure.ai.openai', operation: 'chat' },
    cold: 'nonce',
  },
] as const satisfies readonly ApiFacts[];

/** An endpoint API's id. */
export type ApiKind = (typeof ROWS)[number]['id'];

/** A row of the table, its id typed. */
export interface ApiRow extends ApiFacts {
  readonly id: ApiKind;
}

/** The rows, in the order the pickers and the CLI's help list them. */
export const API_TABLE: readonly ApiRow[] = ROWS;

/** The ids, in the table's order: the type, the CLI's choices and the run file's schema take it from here. */
export const API_KINDS: readonly ApiKind[] = ROWS.map((r) => r.id);

const BY_ID: ReadonlyMap<string, ApiRow> = new Map(API_TABLE.map((r) => [r.id, r]));

/** True for a string that is an API's id (a value from outside the types: a setting, a file). */
export function isApiKind(value: unknown): value is ApiKind {
  return typeof value === 'string' && BY_ID.has(value);
}

/** An API's row; undefined for a name that is not one. */
export function apiFacts(api: string): ApiRow | undefined {
  return BY_ID.get(api);
}

/** The API a hosted provider's URL names by its host (and path), without asking it; undefined for any other URL. */
export function apiFromUrl(url: string): ApiKind | undefined {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return undefined;
  }
  if (u.protocol !== 'https:' && u.protocol !== 'http:') return undefined;
  const host = u.hostname.toLowerCase().replace(/\.$/, '');
  const named = API_TABLE.find((r) => {
    const rule = r.detect?.url;
    if (rule === undefined || !rule.hosts.some((h) => (h.startsWith('.') ? host.endsWith(h) : host === h))) return false;
    return (rule.path === undefined || rule.path.test(u.pathname)) && (rule.notPath === undefined || !rule.notPath.test(u.pathname));
  });
  return named?.id;
}

/** The rows with a probe, in the order their answers are read: those that look into the JSON first, then those that need a 2xx only. */
export function probeOrder(): readonly (ApiRow & { readonly detect: { readonly probe: ProbeRule } })[] {
  const probed = API_TABLE.filter((r): r is ApiRow & { readonly detect: { readonly probe: ProbeRule } } => r.detect?.probe !== undefined);
  const looks = (r: (typeof probed)[number]): boolean => r.detect.probe.list !== undefined || r.detect.probe.keys !== undefined;
  return [...probed.filter(looks), ...probed.filter((r) => !looks(r))];
}

/** Whether a probe's answer (its status and parsed JSON) says the server speaks the rule's API. */
export function probeTells(rule: ProbeRule, status: number | undefined, json: unknown): boolean {
  if (status === undefined || status < 200 || status >= 300) return false;
  if (rule.list === undefined && rule.keys === undefined) return true;
  if (typeof json !== 'object' || json === null || Array.isArray(json)) return false;
  const obj = json as Record<string, unknown>;
  if (rule.list !== undefined && Array.isArray(obj[rule.list])) return true;
  return rule.keys?.some((k) => k in obj) === true;
}

/** How detection tells an API, in words (the docs' table). */
function detectionText(r: ApiFacts): string {
  const d = r.detect;
  if (d === undefined) return 'chosen with --api only';
  const parts: string[] = [];
  if (d.url) {
    const hosts = d.url.hosts.map((h) => `\`${h.startsWith('.') ? `*${h}` : h}\``).join(', ');
    parts.push(`by its URL: host ${hosts}${d.url.path ? ` and a path matching \`${d.url.path.source.replace(/\\\//g, '/')}\`` : ''}`);
  }
  if (d.probe) {
    const what = d.probe.list !== undefined ? `a \`${d.probe.list}\` list` : d.probe.keys !== undefined ? `\`${d.probe.keys.join('` or `')}\`` : undefined;
    parts.push(`GET ${d.probe.path} answers${what ? ` with ${what}` : ''}`);
  }
  if (d.v1Root) parts.push('a base URL ending in /v1');
  return parts.join('; ');
}

/** The APIs as a markdown table, from the rows: for the docs. */
export function apiTableMarkdown(): string {
  const cell = (s: string): string => s.replace(/\|/g, '\\|');
  const lines = [
    '| API (`--api`) | What it is | Detected | Key header | Stream | Carries | Hosted | OpenTelemetry provider |',
    '| --- | --- | --- | --- | --- | --- | --- | --- |',
    ...API_TABLE.map((r) => `| \`${r.id}\` | ${cell(r.label)} | ${cell(detectionText(r))} | ${r.keyHeader !== undefined ? `\`${r.keyHeader}\`` : '`Authorization: Bearer`'} | ${r.framing === 'sse' ? 'SSE' : 'NDJSON'} | ${cell(r.carries)} | ${r.hosted ? 'yes' : 'no'} | \`${r.otel.provider}\` |`),
  ];
  return `${lines.join('\n')}\n`;
}
