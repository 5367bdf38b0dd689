// One interface for every endpoint API: how to ask (path, body, headers), how to read one parsed
// stream event, how its probes and model list read, and the helpers the adapters share. What is plain
// data about an API (framing, key header, detection, hosted) is its row in core/apis.ts. Adapters are
// stateless and pure (no I/O, no clock): the client owns time and sockets. Which adapter serves which
// API is registry.ts.
import type { ContentPart, EndpointSpec, Prompt, RequestSpec, ServerTimings } from '../../core/types';
import type { ApiKind } from '../../core/apis';
import type { Framing } from '../streamParsers';
import { count, duration, isObject, str } from '../../core/json';
import { sentPrompt } from './cacheBust';

export interface BuiltRequest {
  readonly method: 'POST';
  /** Path from the server root, including any base path of the endpoint URL. */
  readonly path: string;
  readonly headers: Record<string, string>;
  readonly body: string;
  /**
   * What of the request this API could not take, and what it was sent as instead ("images are not
   * sent: the openai-completions API takes text only"). The same words for every request of a
   * prompt: the runner records them once per prompt (RunFile.prompts[].notes), the surfaces once per run.
   */
  readonly notes?: readonly string[];
}

export interface UsageInfo {
  readonly promptTokens?: number;
  /** Output tokens; cumulative when a server reports usage on every chunk. */
  readonly completionTokens?: number;
  readonly reasoningTokens?: number;
}

/** What one parsed event means. Every field is optional: most events carry one or two. */
export interface EventInfo {
  /** Output (non-reasoning) text; an empty string is no text. */
  readonly content?: string;
  /** Reasoning text (`reasoning_content` / `reasoning` / Ollama `thinking` / Anthropic `thinking_delta` / Gemini `thought` parts). */
  readonly reasoning?: string;
  /** Tokens in this event, when the server says (llama.cpp `tokens`, several choices' deltas). */
  readonly tokens?: number;
  readonly usage?: UsageInfo;
  readonly responseId?: string;
  readonly serverTimings?: ServerTimings;
  /** Server timing fields that were present but unusable (wrong type, negative, absurd), as "timings.prompt_ms: -5". */
  readonly ignoredTimings?: readonly string[];
  /** The server says the stream is complete (Ollama `done`, llama.cpp `stop`, Anthropic `message_stop`). */
  readonly done?: boolean;
  /** An error object inside the stream. */
  readonly error?: string;
  /** Pieces of tool calls (OpenAI's `delta.tool_calls`, Anthropic's tool_use blocks, Gemini's and Ollama's functionCall parts). */
  readonly toolCalls?: readonly ToolCallDelta[];
}

/**
 * A piece of a streamed tool call. The client joins the pieces by `index`; a piece without one is a
 * call of its own when it names a function (Gemini's and Ollama's whole calls), else the latest
 * call's continuation.
 */
export interface ToolCallDelta {
  /** Which call of the reply: OpenAI's `tool_calls[].index`, Anthropic's content block index. */
  readonly index?: number;
  readonly id?: string;
  readonly name?: string;
  /** A piece of the arguments' JSON text ('' or absent: none in this piece). */
  readonly args?: string;
}

/** The models an API lists: where, and how to read their names from the answer. */
export interface ModelList {
  /** The GET (under the probes' base URL) that lists them; when it is the probe's path too, preflight checks the model in the probe's answer. */
  readonly path: string;
  /** The names, as served, in the server's order. */
  names(json: unknown): string[];
  /** Whether an answer lists all the API serves; absent: it does. */
  complete?(json: unknown): boolean;
  /** A served name that is the one asked for, spelled the API's way (Gemini's "models/x"); the very same name always is. */
  same?(served: string, wanted: string): boolean;
}

/** What an adapter file writes. The registry adds its row's framing (RegisteredAdapter). */
export interface EndpointAdapter {
  readonly api: ApiKind;
  /** A cheap GET used to warm connections and for preflight (e.g. /v1/models). */
  readonly probePath: string;
  /** Headers the API wants on every request, probes included (Anthropic's `anthropic-version`); one the endpoint sets wins. */
  readonly probeHeaders?: Readonly<Record<string, string>>;
  /** The base URL the probes go under, when the API's probe path would repeat part of the endpoint's URL (a Gemini URL ending in /v1beta). */
  probeBaseUrl?(url: string): string;
  /** The models it lists; absent: it lists none. */
  readonly models?: ModelList;
  /** The models the URL itself names (an Azure OpenAI deployment): the server is then not asked. */
  modelsOf?(url: string): string[];
  /** Besides 401 and 403, an answer to the probe that means the key is refused (Gemini's 400 API_KEY_INVALID). */
  keyRefused?(status: number, body: string): boolean;
  /** What a server of this API is called ("an Ollama server"): a 404 on the probe means the URL is not one. Absent: a 404 passes (a gateway without the probe's path). */
  readonly serverName?: string;
  /** The probe's status that means the server is up but not ready: its model is still loading (llama.cpp's 503). */
  readonly loadingStatus?: number;
  buildRequest(spec: RequestSpec, endpoint: EndpointSpec): BuiltRequest;
  interpret(event: unknown): EventInfo;
}

/** An adapter as the registry gives it: with how its API's stream is framed, from the API's row. */
export interface RegisteredAdapter extends EndpointAdapter {
  readonly framing: Framing;
}

/**
 * Splits a base URL into the origin (what a connection pool is for), a base path to prefix and a
 * query to append to every request (`?api-version=…`, a gateway's `?key=…`: sent as given).
 * A trailing `/v1` is dropped because every adapter's path starts from the server root
 * (`http://h:8000/v1` and `http://h:8000` mean the same OpenAI server).
 */
export interface SplitUrl {
  readonly origin: string;
  readonly basePath: string;
  /** `?…` as given, or ''. */
  readonly query: string;
}

export function splitBaseUrl(url: string): SplitUrl {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new Error(`not a valid URL: "${url}"`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new Error(`unsupported URL scheme "${parsed.protocol}" in "${url}" (use http:// or https://)`);
  }
  let basePath = parsed.pathname.replace(/\/+$/, '');
  if (basePath.endsWith('/v1')) basePath = basePath.slice(0, -3);
  return { origin: parsed.origin, basePath, query: parsed.search };
}

/** A request path from the server root: the endpoint's base path, the API's path, the endpoint's query. */
export function requestPath(split: SplitUrl, path: string): string {
  return split.basePath + path + split.query;
}

/** True when the base URL explicitly names an OpenAI-style /v1 root. */
export function endsWithV1(url: string): boolean {
  try {
    return /\/v1\/*$/.test(new URL(url).pathname);
  } catch {
    return false;
  }
}

export function joinPath(endpoint: EndpointSpec, path: string): string {
  return requestPath(splitBaseUrl(endpoint.url), path);
}

/** Completion-style APIs get the chat messages as one plain text (a message's `content` is its text, images left out). */
export function promptText(prompt: Prompt): string {
  if (prompt.messages.length === 1) return prompt.messages[0]!.content;
  return prompt.messages.map((m) => m.content).join('\n\n');
}

/** True when a message of the prompt carries an image. */
export function hasImages(prompt: Prompt): boolean {
  return prompt.messages.some((m) => m.parts?.some((p) => p.type === 'image') === true);
}

/** True when an image of the prompt is an http(s) URL (not a `data:` URL). */
export function hasImageUrls(prompt: Prompt): boolean {
  return prompt.messages.some((m) => m.parts?.some((p) => p.type === 'image' && !p.url.startsWith('data:')) === true);
}

/** The note of a completion-style API given a prompt with images: the text is sent, the images are not. */
export function textOnlyNote(api: ApiKind): string {
  return `images are not sent: the ${api} API takes text only`;
}

/** Whether a request carries function definitions to send (an empty list is none: `--tools none` against a prompt file's own). */
export function hasTools(spec: Pick<RequestSpec, 'tools'>): spec is { readonly tools: NonNullable<RequestSpec['tools']> } {
  return spec.tools !== undefined && spec.tools.length > 0;
}

/** The note of an API that cannot take function definitions: the request goes without them, and no tool call can be timed. */
export function noToolsNote(api: ApiKind): string {
  return `tools are not sent: the ${api} API takes no function definitions, so no tool call is timed`;
}

/** The note of an API that is given image URLs: the server downloads them, inside the request's time. */
export const IMAGE_URL_NOTE = 'image URLs are fetched by the server: the download is part of TTFT';

/** A `data:` URL's media type and base64 payload; undefined for any other URL. */
export function dataUrl(url: string): { readonly mediaType: string; readonly base64: string } | undefined {
  const m = /^data:([^;,]*)((?:;[^;,]*)*),/i.exec(url);
  if (!m) return undefined;
  const payload = url.slice(m[0].length);
  const isBase64 = /;base64$/i.test(m[2]!);
  const base64 = isBase64 ? payload : Buffer.from(decodeURIComponent(payload), 'utf8').toString('base64');
  return { mediaType: m[1] || 'application/octet-stream', base64 };
}

export function jsonHeaders(endpoint: EndpointSpec, accept: string): Record<string, string> {
  return { ...endpoint.headers, 'content-type': 'application/json', accept };
}

/** A request body's opening: the endpoint's model when it names one, and the prompt as sent (a cold request's nonce in it). */
export function bodyStart(spec: RequestSpec, endpoint: EndpointSpec): { readonly body: Record<string, unknown>; readonly prompt: Prompt } {
  const body: Record<string, unknown> = {};
  if (endpoint.model !== undefined) body.model = endpoint.model;
  return { body, prompt: sentPrompt(spec) };
}

/** A POST of a JSON body, with what could not be sent as notes (none: no notes). */
export function jsonPost(path: string, headers: Record<string, string>, body: Record<string, unknown>, notes: readonly string[] = []): BuiltRequest {
  return { method: 'POST', path, headers, body: JSON.stringify(body), ...(notes.length > 0 ? { notes } : {}) };
}

/** The URL with its path's trailing slashes dropped and `pattern` replaced (the probes' base URL of an API whose URLs name more than a base); a string that is no URL as given (the probe says so). */
export function replacePath(url: string, pattern: RegExp, replacement: string): string {
  try {
    const u = new URL(url);
    u.pathname = u.pathname.replace(/\/+$/, '').replace(pattern, replacement);
    return u.toString();
  } catch {
    return url;
  }
}

/** GET /v1/models and its `data[].id` names, as OpenAI, the servers that speak its API, and Anthropic list their models. */
export const OPENAI_MODELS: ModelList = {
  path: '/v1/models',
  names: (json) => (isObject(json) && Array.isArray(json.data) ? json.data.flatMap((m) => (isObject(m) && typeof m.id === 'string' ? [m.id] : [])) : []),
};

/** The prompt and output counts of a final event (llama.cpp's, Ollama's), as usage; undefined when it has neither. */
export function countsUsage(prompt: unknown, completion: unknown): UsageInfo | undefined {
  const usage: { promptTokens?: number; completionTokens?: number } = {};
  const p = count(prompt);
  const c = count(completion);
  if (p !== undefined) usage.promptTokens = p;
  if (c !== undefined) usage.completionTokens = c;
  return p !== undefined || c !== undefined ? usage : undefined;
}

/** `headers` with each of `defaults` added unless a header of that name (in any case) is already there. */
export function withDefaultHeaders(headers: Readonly<Record<string, string>> | undefined, defaults: Readonly<Record<string, string>> | undefined): Record<string, string> {
  const out: Record<string, string> = { ...headers };
  if (defaults === undefined) return out;
  const have = new Set(Object.keys(out).map((k) => k.toLowerCase()));
  for (const [k, v] of Object.entries(defaults)) if (!have.has(k.toLowerCase())) out[k] = v;
  return out;
}

/** A turn of the conversation, as the APIs with a separate system prompt take it: its text, and its parts when it has images. */
export interface Turn {
  readonly role: 'user' | 'assistant';
  readonly content: string;
  readonly parts?: readonly ContentPart[];
}

/**
 * The system messages' text (joined), and the other turns: for APIs that take the system prompt apart
 * from the conversation. A system prompt is text there: `systemImages` says whether one carried images (not sent).
 */
export function splitSystem(prompt: Prompt): { readonly system: string | undefined; readonly turns: readonly Turn[]; readonly systemImages: boolean } {
  const system: string[] = [];
  const turns: Turn[] = [];
  let systemImages = false;
  for (const m of prompt.messages) {
    if (m.role === 'system') {
      system.push(m.content);
      if (m.parts?.some((p) => p.type === 'image')) systemImages = true;
    } else turns.push({ role: m.role, content: m.content, ...(m.parts ? { parts: m.parts } : {}) });
  }
  // A prompt that is only a system text is asked as the user's turn: these APIs need one.
  if (turns.length === 0 && system.length > 0) return { system: undefined, turns: [{ role: 'user', content: system.join('\n\n') }], systemImages };
  return { system: system.length > 0 ? system.join('\n\n') : undefined, turns, systemImages };
}

/** The note of an API whose system prompt is text only, given a system message with images. */
export function systemImagesNote(api: ApiKind): string {
  return `images in system messages are not sent: the ${api} API's system prompt is text only`;
}

/** An error object as servers put it in a stream: `{error: "…"}`, `{error: {message}}`, or vLLM's `{object: "error", message}`. Never throws. */
export function streamError(event: Record<string, unknown>): string | undefined {
  const e = event.error;
  if (typeof e === 'string') return e;
  if (isObject(e)) {
    const message = str(e.message) ?? jsonText(e);
    const code = scalarText(e.code) ?? scalarText(e.type);
    return code !== undefined ? `${message} (${code})` : message;
  }
  if (event.object === 'error') return str(event.message) ?? 'error';
  return undefined;
}

/** A string or a finite number as text; anything else (objects, null) is not a code. */
function scalarText(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return undefined;
}

/** JSON text of a parsed value, or 'error' where it cannot be written (nesting too deep for the stack). */
function jsonText(value: unknown): string {
  try {
    return JSON.stringify(value) ?? 'error';
  } catch {
    return 'error';
  }
}

/** OpenAI usage object, as OpenAI, vLLM, llama.cpp and Ollama's /v1 send it. */
export function openaiUsage(value: unknown): UsageInfo | undefined {
  if (!isObject(value)) return undefined;
  const details = isObject(value.completion_tokens_details) ? value.completion_tokens_details : undefined;
  const usage: { promptTokens?: number; completionTokens?: number; reasoningTokens?: number } = {};
  const p = count(value.prompt_tokens);
  const c = count(value.completion_tokens);
  const r = count(details?.reasoning_tokens);
  if (p !== undefined) usage.promptTokens = p;
  if (c !== undefined) usage.completionTokens = c;
  if (r !== undefined) usage.reasoningTokens = r;
  return usage;
}

/** A server-reported duration longer than this (a day) is not a timing but a bug or a unit mix-up. */
export const MAX_SERVER_MS = 86_400_000;

type MutableTimings = { -readonly [K in keyof ServerTimings]: ServerTimings[K] };

/**
 * Reads the fields of one server timing object, keeping what is valid under our names and a note for
 * each field that was present but unusable (wrong type, negative, absurd): the note goes into the
 * request's `ignoredServerFields`, the value nowhere.
 */
export class TimingReader {
  readonly timings: MutableTimings = {};
  readonly notes: string[] = [];
  readonly #obj: Record<string, unknown>;
  readonly #where: string;

  constructor(obj: Record<string, unknown>, where: string, source?: ServerTimings['source']) {
    this.#obj = obj;
    this.#where = where;
    if (source !== undefined) this.timings.source = source;
  }

  /** A duration field, scaled to ms (`perMs`: units per ms, e.g. 1e6 for ns). */
  ms(field: string, key: 'queueMs' | 'serverTtftMs' | 'promptMs' | 'predictedMs' | 'meanItlMs' | 'loadMs' | 'totalMs', perMs = 1): number | undefined {
    const raw = this.#obj[field];
    if (raw === undefined || raw === null) return undefined;
    const d = duration(raw);
    if (d === undefined || d / perMs > MAX_SERVER_MS) {
      this.#note(field, raw);
      return undefined;
    }
    const v = d / perMs;
    this.timings[key] = v;
    return v;
  }

  count(field: string, key: 'promptTokens' | 'predictedTokens' | 'cachedTokens'): number | undefined {
    const raw = this.#obj[field];
    if (raw === undefined || raw === null) return undefined;
    const c = count(raw);
    if (c === undefined) {
      this.#note(field, raw);
      return undefined;
    }
    this.timings[key] = c;
    return c;
  }

  #note(field: string, raw: unknown): void {
    const shown = typeof raw === 'string' ? JSON.stringify(raw.slice(0, 40)) : typeof raw === 'object' ? (Array.isArray(raw) ? 'a list' : 'an object') : String(raw);
    this.notes.push(`${this.#where}.${field}: ${shown}`);
  }

  /** True when any of our fields was read (the source alone is not a timing). */
  get any(): boolean {
    return Object.keys(this.timings).some((k) => k !== 'source');
  }
}

/** What one event's timing objects gave: the timings (when any) and the notes on fields ignored. */
export interface TimingResult {
  readonly timings?: ServerTimings;
  readonly notes?: readonly string[];
}

function resultOf(reader: TimingReader): TimingResult {
  return {
    ...(reader.any ? { timings: { ...reader.timings } } : {}),
    ...(reader.notes.length > 0 ? { notes: reader.notes } : {}),
  };
}

/**
 * llama.cpp's `timings` object (also sent by its OpenAI-compatible endpoints): prompt_n (prompt
 * tokens evaluated, the cached ones not counted), prompt_ms (the prefill), predicted_n/_ms (the
 * decode) and cache_n (prompt tokens reused from the cache). llama.cpp does not report a queue, so
 * its own TTFT is the prompt's time.
 */
export function llamaTimings(value: unknown): TimingResult | undefined {
  if (!isObject(value)) return undefined;
  const r = new TimingReader(value, 'timings', 'llamacpp');
  r.count('prompt_n', 'promptTokens');
  const prompt = r.ms('prompt_ms', 'promptMs');
  r.count('predicted_n', 'predictedTokens');
  r.ms('predicted_ms', 'predictedMs');
  r.count('cache_n', 'cachedTokens');
  if (prompt !== undefined) r.timings.serverTtftMs = prompt;
  return resultOf(r);
}

/**
 * vLLM's per-request metrics (`--enable-per-request-metrics`): a `metrics` object in the last streamed
 * chunk or the body, with queue_time_ms (queued → scheduled), time_to_first_token_ms (scheduled →
 * first token: the prefill path, the queue NOT in it; vllm/entrypoints `build_per_request_timing_metrics`),
 * generation_time_ms (first → last token) and mean_itl_ms. Our serverTtftMs is from arrival, so it
 * is queue + that; promptMs is that.
 */
export function vllmMetrics(value: unknown): TimingResult | undefined {
  if (!isObject(value)) return undefined;
  const r = new TimingReader(value, 'metrics', 'vllm');
  const queue = r.ms('queue_time_ms', 'queueMs');
  const scheduledToFirst = r.ms('time_to_first_token_ms', 'promptMs');
  r.ms('generation_time_ms', 'predictedMs');
  r.ms('mean_itl_ms', 'meanItlMs');
  if (scheduledToFirst !== undefined) r.timings.serverTtftMs = (queue ?? 0) + scheduledToFirst;
  return r.any ? resultOf(r) : r.notes.length > 0 ? { notes: r.notes } : undefined;
}

/** OpenAI's (and vLLM's) `usage.prompt_tokens_details.cached_tokens`: prompt tokens served from the prefix cache. */
export function openaiCachedTokens(usage: unknown): TimingResult | undefined {
  if (!isObject(usage) || !isObject(usage.prompt_tokens_details)) return undefined;
  return cachedTokens(usage.prompt_tokens_details, 'cached_tokens', 'usage.prompt_tokens_details');
}

/** A count field of `obj` read as the prompt tokens served from the server's cache (`where` names `obj` in a note); undefined when the field is absent. */
export function cachedTokens(obj: Record<string, unknown>, field: string, where: string): TimingResult | undefined {
  if (obj[field] === undefined) return undefined;
  const r = new TimingReader(obj, where);
  r.count(field, 'cachedTokens');
  return resultOf(r);
}

/** An event's timing fields. */
export interface TimingFields {
  serverTimings?: ServerTimings;
  ignoredTimings?: readonly string[];
}

/** `info` with a timing result set as its fields, in place (interpret runs once per streamed event: no copy). */
export function withTimings<T extends TimingFields>(info: T, t: TimingResult | undefined): T {
  if (t?.timings) info.serverTimings = t.timings;
  if (t?.notes) info.ignoredTimings = t.notes;
  return info;
}

/** Several timing results of one event, merged (later ones win field by field). */
export function mergeTimings(...parts: (TimingResult | undefined)[]): TimingResult {
  let timings: MutableTimings | undefined;
  const notes: string[] = [];
  for (const p of parts) {
    if (p?.timings) timings = { ...timings, ...p.timings };
    if (p?.notes) notes.push(...p.notes);
  }
  return { ...(timings ? { timings } : {}), ...(notes.length > 0 ? { notes } : {}) };
}

/**
 * Fields common to the OpenAI request bodies (chat and completions, as OpenAI, vLLM, SGLang, TGI and
 * llama.cpp's /v1 take them): the spec's values only, the precedence already applied by the runner.
 * `ignore_eos` only when asked: OpenAI itself rejects it.
 */
export function commonSampling(spec: RequestSpec, body: Record<string, unknown>): void {
  snakeSampling(spec, body);
  if (spec.responseFormat !== undefined) body.response_format = spec.responseFormat;
  if (spec.seed !== undefined) body.seed = spec.seed;
  if (spec.ignoreEos) body.ignore_eos = true;
}

/**
 * temperature, top_p, stop, frequency_penalty, presence_penalty under OpenAI's names, which the
 * OpenAI APIs, llama.cpp's /completion and Ollama's `options` share: the ones the spec has.
 */
export function snakeSampling(spec: RequestSpec, into: Record<string, unknown>): void {
  if (spec.temperature !== undefined) into.temperature = spec.temperature;
  if (spec.topP !== undefined) into.top_p = spec.topP;
  if (spec.stop !== undefined && spec.stop.length > 0) into.stop = [...spec.stop];
  if (spec.frequencyPenalty !== undefined) into.frequency_penalty = spec.frequencyPenalty;
  if (spec.presencePenalty !== undefined) into.presence_penalty = spec.presencePenalty;
}

/** The max tokens a request is sent with (the spec's: the runner has applied the precedence). */
export function maxTokensOf(spec: RequestSpec): number {
  return spec.maxTokens;
}

/**
 * The JSON schema a response format asks for: `{}` (any JSON) for json_object, the schema of a
 * json_schema (`{}` when it names none); undefined for text or no format. For APIs that take a
 * plain JSON schema (llama.cpp's /completion, Ollama's `format`, Gemini's responseJsonSchema).
 */
export function jsonSchemaOf(spec: RequestSpec): Record<string, unknown> | undefined {
  const f = spec.responseFormat;
  if (f === undefined || f.type === 'text') return undefined;
  if (f.type === 'json_object') return {};
  const schema = f.json_schema.schema;
  return isObject(schema) ? schema : {};
}
