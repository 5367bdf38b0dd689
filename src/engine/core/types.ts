// The data that flows through the engine, and the run file (format "llm-profiler.run", version 1)
// that every surface reads. Documented field by field in docs/run-format.md, and checked by the
// schema in runSchema.ts (which fails to compile when it and RunFile disagree): keep the three in step.
// Names in RunFile/RequestRecord/Summary are fixed: other tools read them.

import type { ApiKind } from './apis';

/** Where to send requests. Never holds a secret: the key travels beside it (see ClientOptions.apiKey). */
export interface EndpointSpec {
  readonly name?: string;
  /** Base URL, e.g. http://127.0.0.1:8000 (a trailing /v1 is accepted). */
  readonly url: string;
  readonly api: ApiKind;
  readonly model?: string;
  /** Extra, non-secret headers. */
  readonly headers?: Readonly<Record<string, string>>;
  /**
   * The header the API key travels in: absent (or "authorization") → `Authorization: Bearer <key>`;
   * else `<name>: <key>`, e.g. `api-key` (Azure OpenAI) or `x-api-key`. The name only: never the key.
   */
  readonly apiKeyHeader?: string;
}

/**
 * How connections are made: through a forward proxy or not, and which certificates are trusted.
 * Built by each surface (the CLI from its flags and the environment, the extension from VS Code's
 * http.* settings); holds the proxy's credentials when its URL has them, so like the API key it
 * travels beside the endpoint and is never stored or shown (the run file keeps `RunEndpoint.proxy`,
 * credentials removed, and `RunEndpoint.tls`).
 */
export interface NetworkSpec {
  /** The forward proxy, e.g. http://user:pass@proxy.corp:3128; absent: every connection is direct. */
  readonly proxy?: string;
  /** Hosts reached directly although a proxy is set, in NO_PROXY's syntax: names, .suffixes, *, host:port, IP addresses, CIDR blocks. */
  readonly noProxy?: readonly string[];
  /** Send loopback addresses (localhost, 127.0.0.0/8, [::1]) through the proxy too; by default they go direct (an explicit --proxy sets it). */
  readonly proxyLoopback?: boolean;
  /** A Proxy-Authorization header value (VS Code's http.proxyAuthorization). Secret. */
  readonly proxyAuthorization?: string;
  /** Where the proxy setting came from, for messages: "--proxy", "HTTPS_PROXY", "http.proxy"… */
  readonly proxySource?: string;
  /** PEM certificates trusted in addition to Node's own roots (a --ca-file, NODE_EXTRA_CA_CERTS, the system store). */
  readonly ca?: readonly string[];
  /** Where `ca` came from, for the run file and messages: file paths, or "system". */
  readonly caSources?: readonly string[];
  /** Certificates are not checked at all: explicit opt-in only (--insecure, a setting); the run file and the output say so. */
  readonly insecure?: boolean;
  /** What asked for `insecure`, for messages: "--insecure" (the default), "llmProfiler.tls.insecure", "http.proxyStrictSSL: false". */
  readonly insecureSource?: string;
}

/**
 * Whether anything answers HTTP at a URL (src/engine/transport/detect.ts checkReach): answered (any
 * status) after `ms`, or not, with the failure's code ('ECONNREFUSED', 'TIMEOUT', 'BAD_URL', …) and
 * its sentence (the words a run's error says, src/engine/transport/connections.ts cannotConnect).
 */
export type Reach =
  | { readonly reachable: true; readonly ms: number }
  | { readonly reachable: false; readonly code: string; readonly message: string };

/** How long a reachability check waits for an answer (the sidebar's dots, the URL boxes, Check reachability). */
export const REACH_TIMEOUT_MS = 3000;

/** What a run file says about how its endpoint was reached (no secret in it). */
export interface NetworkRecord {
  /** The proxy the requests went through, credentials removed. */
  readonly proxy?: string;
  readonly tls?: {
    /** Extra certificate sources trusted (file paths, "system"). */
    readonly ca?: readonly string[];
    /** True when certificates were not checked (--insecure). */
    readonly insecure?: boolean;
  };
}

export interface TextPart {
  readonly type: 'text';
  readonly text: string;
}

/** An image in a message: an http(s) URL or a `data:` URL (a local file read into it). */
export interface ImagePart {
  readonly type: 'image';
  readonly url: string;
  readonly alt?: string;
}

export type ContentPart = TextPart | ImagePart;

export interface ChatMessage {
  readonly role: 'system' | 'user' | 'assistant';
  /** The message's text. With `parts`, its text parts joined by blank lines (the images left out). */
  readonly content: string;
  /** Only when the message carries images: its text and images in order. APIs that take images send these. */
  readonly parts?: readonly ContentPart[];
  /** A participant's name (Prompty's `user[name="Alice"]:`), sent as OpenAI's `name` where the API has one. */
  readonly name?: string;
}

/**
 * OpenAI's `response_format` as a prompt file gives it (`{ type: 'json_object' }`, or `{ type: 'json_schema',
 * json_schema: { name, schema, strict? } }`); adapters of other APIs map it to theirs or note that they cannot.
 */
export type ResponseFormat =
  | { readonly type: 'text' }
  | { readonly type: 'json_object' }
  | { readonly type: 'json_schema'; readonly json_schema: Readonly<Record<string, unknown>> };

/** Sampling settings a prompt file may give; the workload's explicit values beat them (WorkloadSpec.explicit). */
export interface SamplingParams {
  readonly maxTokens?: number;
  readonly temperature?: number;
  readonly topP?: number;
  readonly stop?: readonly string[];
  readonly frequencyPenalty?: number;
  readonly presencePenalty?: number;
  readonly responseFormat?: ResponseFormat;
  /** Functions the model may call (OpenAI's `tools`, function definitions); adapters of other APIs map them to theirs (Anthropic `tools`, Gemini `functionDeclarations`). */
  readonly tools?: readonly ToolDefinition[];
}

/** One function the model may call, in OpenAI's form (`{"type":"function","function":{name, description?, parameters?}}`). */
export interface ToolDefinition {
  readonly type: 'function';
  readonly function: {
    readonly name: string;
    readonly description?: string;
    /** A JSON schema of the arguments. */
    readonly parameters?: Readonly<Record<string, unknown>>;
  };
}

export type SamplingKey = keyof SamplingParams;
/** Every sampling key, in the order surfaces list them (the schema and the runner's precedence take them from here). */
export const SAMPLING_KEYS = ['maxTokens', 'temperature', 'topP', 'stop', 'frequencyPenalty', 'presencePenalty', 'responseFormat', 'tools'] as const satisfies readonly SamplingKey[];

/** Where a value a prompt was sent with came from: the workload's explicit value (a flag, a setting), the prompt file, or the defaults. */
export type ParamSource = 'workload' | 'file' | 'default';

/** What one prompt of the run was sent with (RunFile.prompts), and where each value came from. */
export interface PromptRecord {
  /** The prompt file (as given) or dataset line it came from. */
  readonly source?: string;
  readonly name?: string;
  readonly sent: SamplingParams & { readonly maxTokens: number };
  readonly from: { readonly [K in SamplingKey]?: ParamSource };
  /** What of this prompt the endpoint's API could not take, each said once ("images are not sent: the openai-completions API takes text only"). */
  readonly notes?: readonly string[];
}

/** One prompt, as chat messages; completion-style APIs get the messages joined as plain text. */
export interface Prompt extends SamplingParams {
  readonly messages: readonly ChatMessage[];
  /** Where it came from (file path, "synthetic", dataset line), for display. */
  readonly source?: string;
  /** The client's estimate of prompt tokens when the server does not report usage. */
  readonly estimatedTokens?: number;
  /** The prompt's name in its file (front matter `name`, a testData row), for display. */
  readonly name?: string;
}

/**
 * One request to send. Its sampling values (SamplingParams) are the ones to send, precedence applied
 * (workload explicit > prompt file > workload default): adapters send these, never the prompt's own.
 */
export interface RequestSpec extends Omit<SamplingParams, 'maxTokens'> {
  readonly index: number;
  readonly warmup: boolean;
  readonly prompt: Prompt;
  readonly maxTokens: number;
  readonly seed?: number;
  readonly ignoreEos: boolean;
  /** Index into RunFile.prompts of what this request's prompt was sent with. */
  readonly promptRef?: number;
  /** Epoch ms (µs resolution) at which the runner meant this request to start. */
  readonly scheduledAt: number;
  /** How to keep this request out of the server's prefix cache (the adapter applies it); absent: send the prompt as it is. */
  readonly cacheBust?: CacheBust;
  /** With cacheBust "nonce": the short unique text the adapter puts at the start of the first message. */
  readonly nonce?: string;
  /** Keep the reply's content text (a session's next turn carries it): the client returns it as SentRecord.reply. */
  readonly keepReply?: boolean;
}

/** What the client returns: the record, and with RequestSpec.keepReply the content as streamed (never written to a run file). */
export type SentRecord = RequestRecord & { readonly reply?: string };

export type ErrorKind =
  | 'connect' // could not connect / DNS / refused
  | 'http' // non-2xx status (429 included; see status)
  | 'reset' // the connection broke mid-stream
  | 'timeout' // --timeout for the whole request
  | 'idle-timeout' // --idle-timeout between chunks
  | 'malformed' // the stream could not be understood at all
  | 'server' // the server sent an error object in the stream
  | 'empty' // a 2xx response that ended without a single token
  | 'aborted' // cancelled by the user
  | 'overlong' // far more chunks than max_tokens asked for: reading stopped
  | 'worker' // in flight on a worker thread (--workers) that died: its answer was lost with the thread
  | 'other';

export interface RequestError {
  readonly kind: ErrorKind;
  readonly message: string;
  readonly status?: number;
  /** The first bytes of an error body. */
  readonly body?: string;
  /**
   * The server's Retry-After on an HTTP error (429, 503, Anthropic's 529…), in seconds: its
   * delay-seconds, an HTTP date less the response's Date (else the client's clock), or OpenAI's
   * retry-after-ms / 1000. Absent when the response had none or it could not be read.
   */
  readonly retryAfterS?: number;
}

/** Why a request was sent again (src/engine/transport/retry.ts). */
export const RETRY_REASONS = ['connection-closed', 'retry-after'] as const;
export type RetryReason = (typeof RETRY_REASONS)[number];

/**
 * One attempt of a request that was not kept, because the request was sent again:
 * "connection-closed": its connection closed before a single byte of the response came (a keep-alive
 * connection the server was closing as it was reused); "retry-after": the server answered 429, 503 or
 * 529 with Retry-After and the run respected it (--respect-retry-after).
 */
export interface RequestRetry {
  readonly reason: RetryReason;
  /** When that attempt was handed to the socket (epoch ms); when it was dispatched if it never was. */
  readonly sentAt: number;
  /** When it failed, ms after its sentAt. */
  readonly failedAfterMs: number;
  /** How long the client waited after it before sending again, ms: the Retry-After asked for; 0 for a closed connection. */
  readonly waitMs: number;
  /** How that attempt failed. */
  readonly error: RequestError;
}

/** Which server's own timing report a request's `serverTimings` came from. */
export const TIMING_SOURCES = ['llamacpp', 'vllm', 'ollama', 'tgi'] as const;
export type TimingSource = (typeof TIMING_SOURCES)[number];

/**
 * What the server said about its own time for one request, under fixed names, in ms as the server
 * gave them (Ollama's ns are turned into ms; nothing is rounded). See docs/run-format.md for which
 * server field becomes which.
 */
export interface ServerTimings {
  readonly source?: TimingSource;
  /** Time the request waited in the server's queue before it was scheduled (vLLM, TGI). */
  readonly queueMs?: number;
  /** The server's own time from accepting the request to its first token; the queue is included where the server reports it (vLLM, TGI), else (llama.cpp, Ollama) it is the prompt's time. */
  readonly serverTtftMs?: number;
  readonly promptTokens?: number;
  /** Prefill (prompt evaluation) time. */
  readonly promptMs?: number;
  readonly predictedTokens?: number;
  /** Decode (generation) time. */
  readonly predictedMs?: number;
  /** Prompt tokens the server took from its prefix cache (OpenAI/vLLM cached_tokens, llama.cpp cache_n). */
  readonly cachedTokens?: number;
  /** The server's mean inter-token latency (vLLM mean_itl_ms). */
  readonly meanItlMs?: number;
  /** Prefill and decode together, when the server gives only that (TGI x-inference-time). */
  readonly inferenceMs?: number;
  /** Ollama: load_duration, total_duration (ms). */
  readonly loadMs?: number;
  readonly totalMs?: number;
}

/** Why a stream stalled: another request's prefill in the same engine step, a buffer between server and client, or not known. */
export const STALL_CAUSES = ['prefill', 'buffering', 'unknown'] as const;
export type StallCause = (typeof STALL_CAUSES)[number];

/** One stall of one stream (src/engine/analysis/attribution.ts). */
export interface RequestStall {
  /** Index in chunkTimesMs of the chunk that ended the gap. */
  readonly atChunk: number;
  readonly gapMs: number;
  readonly cause: StallCause;
  /** The `index`es of the requests blamed (their prefill ran in the gap); empty unless cause is "prefill". */
  readonly culprits: readonly number[];
}

/** How a run kept prompts from being answered out of the server's prefix cache (see `prefixCache` in the workload). */
export type CacheBust = 'cache_prompt' | 'nonce';

/** One request, as measured. All *At are epoch ms with µs resolution; *Ms are durations. */
export interface RequestRecord {
  readonly index: number;
  readonly responseId?: string;
  readonly warmup: boolean;
  readonly scheduledAt: number;
  /** When the request was handed to the socket (after any wait for a free connection). */
  readonly sentAt: number;
  /** Response headers received, ms after sentAt. */
  readonly headersMs?: number;
  /** First body chunk of any kind (a role-only chunk counts here, not for TTFT), ms after sentAt. */
  readonly firstChunkMs?: number;
  /** First chunk carrying content or reasoning text, ms after sentAt. */
  readonly ttftMs?: number;
  /** First chunk carrying output (non-reasoning) content, ms after sentAt. Equals ttftMs without reasoning. */
  readonly ttfoMs?: number;
  /** (e2eMs − ttftMs) / (outputTokens − 1); only when outputTokens > 1 (metrics.ts `tpotOf`). */
  readonly tpotMs?: number;
  /**
   * The end of the request, ms after sentAt: on success the last chunk carrying a token (the last
   * chunkTimesMs entry, as vLLM's latency), on failure the moment it failed.
   */
  readonly e2eMs?: number;
  /** The last byte of the response (after a trailing usage chunk or [DONE]), ms after sentAt; when body bytes came. */
  readonly lastByteMs?: number;
  readonly promptTokens?: number;
  /** True when promptTokens is the client's estimate (the server reported no usage). */
  readonly promptTokensEstimated?: boolean;
  readonly outputTokens: number;
  readonly reasoningTokens?: number;
  /** 'usage' when the server reported usage, else 'chunks' (one token per content chunk). */
  readonly tokenSource: 'usage' | 'chunks';
  /** Arrival of each chunk carrying content or reasoning, ms after sentAt, in order. */
  readonly chunkTimesMs: readonly number[];
  /** Chunks that carried more than one token (speculative decoding); known only from per-chunk counts. */
  readonly multiTokenChunks?: number;
  readonly serverTimings?: ServerTimings;
  /** Server timing fields present but not used (wrong type, negative, absurd), e.g. "timings.prompt_ms: -5"; at most 10. */
  readonly ignoredServerFields?: readonly string[];
  /** Client TTFT − the server's own TTFT (serverTimings.serverTtftMs): what the network, proxies, the client (and, where the server does not report its queue, the queue) added. */
  readonly transportMs?: number;
  /** Every stall of this stream with its cause (src/engine/analysis/attribution.ts); absent when it had none. */
  readonly stalls?: readonly RequestStall[];
  /** Response headers that name something between the server and the client (via, x-cache, cf-ray, content-encoding, …): lower-case name → value. */
  readonly intermediaries?: Readonly<Record<string, string>>;
  /** How this request was kept cold (`cache_prompt: false`, or a unique leading nonce in the prompt); absent when the prefix cache was allowed. */
  readonly cacheBust?: CacheBust;
  /** The `index` of an earlier request of this run that sent the same prompt (a warm candidate). */
  readonly repeatOf?: number;
  /**
   * (`run --repeat N`, `ab`) Which repetition or block of the run this request was sent in, from 0.
   * `compare` resamples repetitions first, then requests within them, so drift between them is in its interval.
   */
  readonly repeat?: number;
  /** Index into RunFile.prompts: what this request's prompt was sent with. */
  readonly promptRef?: number;
  /** (multi-turn) The session (conversation) this request belongs to, from 0 in the order sessions started. */
  readonly session?: number;
  /** (multi-turn) Its turn in the session, from 0: turn t carries the t earlier user turns and the replies as they were streamed. */
  readonly turn?: number;
  /** (multi-turn) Tokens of the history the request carried before its own user turn (the server's count of the earlier turns where it reported usage, else the client's estimate). */
  readonly historyTokens?: number;
  /** (trace) The request's line in the trace file, from 0 (its timestamp is `scheduledAt` less the run's start). */
  readonly traceLine?: number;
  /** Tool calls the reply streamed, in the order they began; apart from plain text (their argument deltas still count as output chunks). */
  readonly toolCalls?: readonly ToolCallTiming[];
  /** Malformed events skipped in this stream. */
  readonly malformedEvents?: number;
  /** A successful reply far longer than the max_tokens it was sent with: the server ignored the limit. */
  readonly exceedsMaxTokens?: boolean;
  /**
   * Earlier attempts of this request, oldest first, when it was sent more than once (src/engine/transport/retry.ts).
   * Every other field is the last attempt's (sentAt included); scheduledAt is not, so sentAt − scheduledAt
   * includes the attempts and waits. Absent when it was sent once.
   */
  readonly retries?: readonly RequestRetry[];
  readonly httpStatus?: number;
  readonly error?: RequestError;
}

/** One streamed tool call: its name and when its argument deltas came, ms after sentAt. */
export interface ToolCallTiming {
  readonly name?: string;
  /** The first delta of this call (its name or first argument piece). */
  readonly firstDeltaMs: number;
  /** The last delta that carried argument text. */
  readonly lastDeltaMs: number;
  /** Deltas that carried argument text. */
  readonly argDeltas: number;
  /** Characters of the arguments as streamed. */
  readonly argChars: number;
  /** Argument tokens: the server's output count less the content's when it reported usage and one call was made, else one per argument delta. */
  readonly argTokens: number;
}

export interface SloSpec {
  readonly ttftMs?: number;
  readonly tpotMs?: number;
  readonly itlMs?: number;
  readonly e2eMs?: number;
}

/** An open loop's rate ramp over the run (vLLM's ramp-up): from `start` req/s to the mode's `rate`, by the share of the run done. */
export interface RampSpec {
  readonly kind: 'linear' | 'exponential';
  readonly start: number;
}

export type WorkloadMode =
  | { readonly kind: 'closed'; readonly concurrency: number }
  | { readonly kind: 'open'; readonly rate: number; readonly burstiness: number; readonly maxConcurrency?: number; readonly ramp?: RampSpec }
  /** Requests sent at a trace's timestamps (the prompt source is the trace), time divided by `speed`. */
  | { readonly kind: 'trace'; readonly speed: number; readonly maxConcurrency?: number };

/** What a prompt file pulled into its prompts: files by real path (`${file:…}`, images) and environment variables by name (never their values). */
export interface PromptPulledIn {
  readonly files: readonly string[];
  readonly env: readonly string[];
}

export interface WorkloadSpec {
  readonly mode: WorkloadMode;
  /** Measured requests (warmup not included). Either requests or durationS. */
  readonly requests?: number;
  readonly durationS?: number;
  readonly warmup: number;
  readonly maxTokens: number;
  readonly prompt:
    | {
        readonly kind: 'synthetic';
        readonly tokens: number;
        readonly sharedPrefix: boolean;
        /** SGLang's generated shared prefix: request k belongs to group k mod `count`, whose prompts start with the same `prefixTokens` tokens (the rest of `tokens` is its own). */
        readonly groups?: { readonly count: number; readonly prefixTokens: number };
        /**
         * "server": the text is sized so that the server counts `tokens` prompt tokens, its chat template
         * and the cold-cache nonce included (RunFile.promptLength says how). Absent: `tokens` words (≈ tokens).
         */
        readonly sizing?: 'server';
        /** Words of text each prompt was given (its index words included), when sizing made it other than `tokens`. */
        readonly words?: number;
      }
    | {
        readonly kind: 'file';
        readonly path: string;
        /** Values for the file's variables (`--var` text, `--vars` JSON values, the extension's answers): beat the file's samples and defaults. */
        readonly vars?: Readonly<Record<string, unknown>>;
        /** Folders beyond the prompt's project that files it names may be read from (`--allow-read`), absolute. */
        readonly allowRead?: readonly string[];
        /** Environment variables its `${env:…}` may read into what is sent (`--allow-env`). */
        readonly allowEnv?: readonly string[];
        /** What the file pulled into its prompts when it was read: absent when nothing. */
        readonly pulledIn?: PromptPulledIn;
      }
    /** `multiTurn`: each conversation line is a session, its turns sent in order with the history (see `sessions`). */
    | { readonly kind: 'dataset'; readonly path: string; readonly multiTurn?: boolean }
    /** Synthetic sessions (`--chat`): `turns` user turns of `userTokens` each, replies of up to `replyTokens` (the request's max tokens). */
    | { readonly kind: 'chat'; readonly turns: number; readonly userTokens: number; readonly replyTokens: number }
    /** A trace replayed at its timestamps (mode `trace`): Mooncake JSONL or the Azure LLM inference CSV. */
    | { readonly kind: 'trace'; readonly path: string; readonly format: 'mooncake' | 'azure' };
  /**
   * (multi-turn: `chat`, or a dataset with `multiTurn`) Sessions to run, each sending all its turns;
   * replaces `requests`. A closed loop's concurrency counts sessions in flight (each sends its next turn
   * when the last one ended and its think time passed); an open loop's rate counts session arrivals.
   */
  readonly sessions?: number;
  /** (multi-turn) Wait between a reply's end and the next turn's send, ms, unless the turn gives its own. Default 0. */
  readonly thinkTimeMs?: number;
  readonly ignoreEos: boolean;
  readonly seed: number;
  readonly temperature?: number;
  readonly topP?: number;
  /** `--response-format` (json, or a JSON schema file): sent with every request, as a prompt file's would be. */
  readonly responseFormat?: ResponseFormat;
  /** `--tools F.json`: function definitions sent with every request. */
  readonly tools?: readonly ToolDefinition[];
  /**
   * The sampling values the user set (a CLI flag, a workload setting): these beat a prompt file's own.
   * Absent or not listed: a prompt file's value beats the workload's (which is then a default).
   */
  readonly explicit?: readonly SamplingKey[];
  readonly timeoutMs: number;
  readonly idleTimeoutMs: number;
  readonly slo?: SloSpec;
  readonly percentiles: readonly number[];
  readonly stallFactor: number;
  readonly stallFloorMs: number;
  /**
   * "cold" (default): every request is kept out of the server's prefix cache (llama.cpp `cache_prompt:
   * false`; elsewhere a unique leading nonce in the prompt; each request's `cacheBust` says which);
   * "warm": prompts are sent as they are, so repeats may be served from the cache. Absent in older files: warm.
   */
  readonly prefixCache?: 'cold' | 'warm';
  /**
   * Wait as a 429/503/529's Retry-After asks and send the request again (at most 60 s a wait, within
   * timeoutMs), each retry recorded in the request's `retries`. Absent or false (the default): such a
   * reply is a failed request, as the endpoint gave it.
   */
  readonly respectRetryAfter?: boolean;
  /**
   * Worker threads that sent the requests (--workers), each with its own connection pool and clock
   * reads, merged into one run on one time base. In a run file: the threads that ran; absent, one
   * loop (the run's own event loop). Asked for: that many; absent, decided from the stream count.
   */
  readonly workers?: number;
}

/** Stats over a sample. Percentile keys are `p${n}` for each configured percentile (p50, p90, p95, p99 by default). */
export interface Stats {
  readonly count: number;
  readonly mean: number;
  readonly std: number;
  readonly min: number;
  readonly max: number;
  readonly [percentile: `p${string}`]: number;
}

export interface Stall {
  readonly requestIndex: number;
  /** ms after the request's sentAt at which the gap began (the previous chunk's arrival). */
  readonly startMs: number;
  /** Epoch ms of the start, to line stalls up across requests. */
  readonly startAt: number;
  readonly gapMs: number;
  /** The stream's median ITL, against which the gap was judged. */
  readonly medianItlMs: number;
  /** Index in the request's chunkTimesMs of the chunk that ended the gap. */
  readonly atChunk?: number;
  readonly cause?: StallCause;
  /** The requests blamed, with their prompt tokens where known. */
  readonly culprits?: readonly { readonly index: number; readonly promptTokens?: number }[];
}

export interface StallSummary {
  readonly count: number;
  readonly totalMs: number;
  /** Stalled time / decode time, over measured requests. */
  readonly shareOfDecode: number;
  readonly worst: readonly Stall[];
  readonly factor: number;
  readonly floorMs: number;
  /** Stalls counted by cause. */
  readonly byCause?: Readonly<Record<StallCause, number>>;
  /** Stalled ms by cause. */
  readonly msByCause?: Readonly<Record<StallCause, number>>;
}

/** Whether something between the server and the client buffers the stream (src/engine/analysis/buffering.ts). */
export interface BufferingVerdict {
  readonly detected: boolean;
  /** What was seen, in plain words (bunched reads, a periodic flush, headers, client TTFT far above the server's). */
  readonly evidence: readonly string[];
  /** Median TTFT added by the buffer, when it can be told (from the server's own TTFT, else from the first flush). */
  readonly inflationMs?: number;
  /** Streams judged buffered / streams judged. */
  readonly bufferedStreams: number;
  readonly streams: number;
  /** The flush period, when flushes come at a fixed period. */
  readonly periodMs?: number;
}

/** The client's view beside the server's own (requests with server timings only, except ttftClientMs). */
export interface ServerSideSummary {
  readonly sources: readonly TimingSource[];
  /** Measured successful requests that carried server timings. */
  readonly requests: number;
  readonly ttftClientMs: Stats;
  readonly ttftServerMs?: Stats;
  readonly queueMs?: Stats;
  readonly promptMs?: Stats;
  readonly transportMs?: Stats;
  /** Prompt tokens served from the prefix cache, summed, and the requests that had any. */
  readonly cachedTokens: number;
  readonly cachedRequests: number;
}

/** TTFT split cold/warm where prompts repeat (or the server reports cached tokens). */
export interface PrefixCacheSummary {
  /** "cold": the run kept every request out of the cache (how: workload.prefixCache); "warm": the cache was allowed. */
  readonly mode: 'cold' | 'warm';
  readonly coldRequests: number;
  readonly warmRequests: number;
  readonly coldTtftMs?: Stats;
  readonly warmTtftMs?: Stats;
  /** Prompt tokens the server reported cached, summed over measured requests. */
  readonly cachedTokens: number;
}

/** A top cause in plain words, with its number (src/engine/analysis/verdicts.ts). */
export interface Verdict {
  /** `stalls`: stalls another request's prefill caused; `stalls-unknown`: gaps whose cause is not shown (no alarm, said last). */
  readonly kind: 'queue' | 'prefill' | 'stalls' | 'stalls-unknown' | 'buffering' | 'transport' | 'prefix-cache' | 'history' | 'schedule';
  readonly message: string;
  /** The figure the message is about (a share, ms, a count): for sorting and tests. */
  readonly value: number;
}

/** What `cache-check` measured: the same prompt cold, then again (warm), then a variant that differs in its last words. */
export interface PrefixCacheCheck {
  readonly coldTtftMs: number;
  readonly warmTtftMs: number;
  readonly variantTtftMs?: number;
  /** Cached prompt tokens the server reported on the warm request (median over rounds), when it reports them. */
  readonly cachedTokens?: number;
  /** A clear TTFT drop (warm ≤ 70% of cold) or cached tokens reported. */
  readonly hit: boolean;
  readonly rounds: number;
  readonly message: string;
}

export interface Summary {
  readonly completed: number;
  /** Requests that failed; a request the user's Cancel stopped (error kind `aborted`) is not one: see `cancelled`. */
  readonly failed: number;
  /**
   * Requests in flight when the user cancelled the run (error kind `aborted`): not failures, not in
   * `errorsByKind`. Absent when none (and in files written before they were counted apart, where
   * `failed` and `errorsByKind.aborted` include them).
   */
  readonly cancelled?: number;
  readonly errorsByKind: Readonly<Partial<Record<ErrorKind, number>>>;
  /** Failed requests of kind "http" by status ("429": 3), so rate limits (429, 503, 529) count apart; absent when none. */
  readonly errorsByStatus?: Readonly<Record<string, number>>;
  /** Attempts sent again, by reason, over the measured requests (see RequestRecord.retries); absent when none. */
  readonly retries?: Readonly<Partial<Record<RetryReason, number>>>;
  /** Wall time of the measured phase (from its start, after warmup, until every measured request ended), in seconds, as vLLM's dur_s. */
  readonly durationS: number;
  readonly totalInputTokens: number;
  readonly totalOutputTokens: number;
  readonly requestsPerSecond: number;
  readonly outputTokensPerSecond: number;
  readonly totalTokensPerSecond: number;
  readonly ttftMs: Stats;
  readonly ttfoMs?: Stats;
  readonly tpotMs: Stats;
  readonly itlMs: Stats;
  readonly e2eMs: Stats;
  /** Requests/s meeting every SLO given; undefined without SLOs. */
  readonly goodput?: number;
  /** Which SLOs the p99 (or the configured SLO percentile) misses. */
  readonly sloMissed?: readonly (keyof SloSpec)[];
  readonly stalls: StallSummary;
  readonly malformedEvents: number;
  readonly tokenSource: 'usage' | 'chunks' | 'mixed';
  readonly multiTokenChunks: number;
  /** Whether the stream is buffered between the server and the client (absent in files written before it was judged). */
  readonly buffering?: BufferingVerdict;
  /** Client vs server timings, when the server reported its own. */
  readonly server?: ServerSideSummary;
  readonly prefixCache?: PrefixCacheSummary;
  /** (multi-turn) TTFT and the server's cached prompt tokens by turn index. */
  readonly byTurn?: readonly TurnSummary[];
  /** (trace, open loop) How late requests were sent against their schedule. */
  readonly schedule?: ScheduleSummary;
  /** Tool calls streamed: how many requests made one, time to the first delta, argument tokens per second. */
  readonly toolCalls?: ToolCallSummary;
  /** The top causes, most important first. */
  readonly verdicts?: readonly Verdict[];
}

/** One turn index of a multi-turn run: its completed requests' TTFT, history and cached tokens. */
export interface TurnSummary {
  readonly turn: number;
  readonly requests: number;
  readonly ttftMs: Stats;
  /** Mean history tokens carried. */
  readonly historyTokens: number;
  /** Mean prompt tokens (the server's count where reported). */
  readonly promptTokens: number;
  /** Mean cached prompt tokens the server reported; absent when none of this turn's requests reported any figure. */
  readonly cachedTokens?: number;
}

/** Lateness of sends against their schedule (sentAt − scheduledAt), measured requests. */
export interface ScheduleSummary {
  readonly lagMs: Stats;
  /** Requests sent more than SCHEDULE_LATE_MS late. */
  readonly late: number;
  /** False when the client could not keep the schedule (p99 lag over the bound): the load it sent was lighter than asked. */
  readonly kept: boolean;
}

export interface ToolCallSummary {
  /** Completed requests whose reply streamed a tool call. */
  readonly requests: number;
  readonly calls: number;
  /** Time to the first tool-call delta, ms. */
  readonly firstDeltaMs: Stats;
  /** Argument tokens per second from a call's first to its last delta (calls with ≥ 2 argument deltas). */
  readonly argTokensPerS?: Stats;
}

export interface ConnectionInfo {
  readonly connections: number;
  /** Time to open and warm each connection, ms; never part of TTFT. */
  readonly connectMs: readonly number[];
  /**
   * How each connection opened during warming was made, in the order they were ready: TCP connect
   * (to the proxy when there is one), the proxy's CONNECT tunnel, the TLS handshake; ms, never part of TTFT.
   */
  readonly handshakes?: readonly Handshake[];
  /** Connections the run opened after warming (a server closed one, an open loop needed more), with their handshakes. */
  readonly reopened?: readonly Handshake[];
}

/** One connection's set-up, ms. */
export interface Handshake {
  readonly tcpMs?: number;
  /** The proxy's answer to CONNECT (the tunnel); present when the connection went through a proxy. */
  readonly tunnelMs?: number;
  readonly tlsMs?: number;
  /** The whole set-up, from the first byte of the attempt until the connection could carry a request. */
  readonly totalMs: number;
}

export interface SweepPoint {
  readonly label: string;
  readonly concurrency?: number;
  readonly rate?: number;
  readonly promptTokens?: number;
  readonly summary: Summary;
  /** Indexes into RunFile.requests belonging to this point. */
  readonly requestIndexes: readonly number[];
  /** (sweep) Measured mean decoding batch: for each request, how many streams were decoding at each of
   *  its token arrivals, averaged (src/engine/analysis/fit.ts `meanDecodingBatch`). The B of TPOT(B) = base + k·B. */
  readonly meanBatch?: number;
  /** (sweep) Mean prompt tokens as the server counted them (usage), for the prefill fit. */
  readonly measuredPromptTokens?: number;
  /** (imported) The figures the other tool reported for this point, under its own names (RunFile.importedFrom). */
  readonly reported?: Readonly<Record<string, number>>;
}

export interface SweepFit {
  readonly baseMs: number;
  readonly kMs: number;
  readonly ceilingTokensPerSecond: number;
  readonly r2: number;
}

// ---- Sweep extras (src/engine/analysis/fit.ts, src/engine/run/sweep.ts): all optional, beside `fit` ----

/** A point named by the analysis: its position in `sweep.points` and its label. */
export interface SweepPick {
  readonly index: number;
  readonly label: string;
  readonly goodput?: number;
  readonly outputTokensPerSecond: number;
}

export interface SweepResidual {
  readonly label: string;
  /** The B used by the fit (meanBatch, else concurrency). */
  readonly batch: number;
  readonly tpotMs: number;
  readonly predictedMs: number;
  readonly residualMs: number;
}

export interface SweepKnee {
  readonly index: number;
  readonly label: string;
  /** Throughput gained per doubling of the dimension just after the knee (0.13 = 13%). */
  readonly gainPerDoubling: number;
  /** The threshold under which a doubling no longer pays (default 0.15). */
  readonly threshold: number;
}

/** TTFT ≈ aMs + bMsPerToken · promptTokens, from a prompt-length sweep at concurrency 1. */
export interface PrefillFit {
  readonly aMs: number;
  readonly bMsPerToken: number;
  /** 1000 / bMsPerToken; absent when b ≤ 0. */
  readonly prefillTokensPerSecond?: number;
  readonly r2: number;
  readonly residualsMs: readonly number[];
}

export interface SweepVerdict {
  readonly kind:
    | 'too-few-points'
    | 'poor-fit'
    | 'non-monotone'
    | 'not-rising'
    | 'negative-base'
    | 'throughput-falls'
    | 'errors'
    | 'no-slo'
    | 'no-point-meets-slo';
  readonly message: string;
}

/** One chunk size of the chunked-prefill dial (src/engine/run/sweep.ts `runPrefillDial`). */
export interface PrefillDialConfig {
  /** The prefill chunk, tokens per engine step (the local server's --batch-size). */
  readonly batchSize: number;
  readonly label: string;
  /** The short decodes: the streams a long prefill stalls (TPOT p99, stalls). */
  readonly decode: { readonly summary: Summary; readonly requestIndexes: readonly number[] };
  /** The occasional long prompts (their TTFT). */
  readonly long: { readonly summary: Summary; readonly requestIndexes: readonly number[] };
}

/** The chunked-prefill dial: the same mixed workload at two or more prefill chunk sizes. */
export interface PrefillDial {
  readonly configs: readonly PrefillDialConfig[];
  /** Concurrent short decodes (closed loop): the streams that a long prefill stalls. */
  readonly decodeStreams: number;
  readonly shortPromptTokens: number;
  readonly shortMaxTokens: number;
  readonly longPromptTokens: number;
  readonly longMaxTokens: number;
  /** Long prompts per second (open loop, seeded, so every configuration gets the same arrivals). */
  readonly longRate: number;
  /** How long each configuration runs, s. */
  readonly durationS: number;
}

export interface RunFile {
  readonly format: 'llm-profiler.run';
  readonly version: 1;
  readonly id: string;
  /** ISO time the run started. */
  readonly startedAt: string;
  readonly endedAt?: string;
  /** True when the run was cancelled: what finished is still here. */
  readonly cancelled?: boolean;
  /** Present on a run recovered from the journal of a process that died mid-run (`llm-profiler recover`). */
  readonly interrupted?: Interrupted;
  readonly tool: { readonly name: 'llm-profiler'; readonly version: string };
  readonly endpoint: EndpointSpec & NetworkRecord & { readonly detectedApi?: boolean };
  readonly workload: WorkloadSpec;
  /** What each prompt-file prompt was sent with (precedence applied) and where each value came from; requests point here by `promptRef`. */
  readonly prompts?: readonly PromptRecord[];
  readonly connection?: ConnectionInfo;
  readonly requests: readonly RequestRecord[];
  readonly summary: Summary;
  readonly sweep?: {
    readonly dimension: 'concurrency' | 'rate' | 'promptTokens';
    readonly points: readonly SweepPoint[];
    readonly fit?: SweepFit;
    /** What `fit` used as B: the measured mean decoding batch, or the concurrency when not measurable. */
    readonly fitX?: 'meanBatch' | 'concurrency';
    readonly residuals?: readonly SweepResidual[];
    /** The batch at which the fitted TPOT crosses the TPOT SLO: (slo − base) / k. */
    readonly sloBatch?: number;
    readonly knee?: SweepKnee;
    /** Highest goodput whose p99 meets every SLO (interactive work). */
    readonly operatingPoint?: SweepPick;
    /** Highest output tokens/s (offline/batch work). */
    readonly maxThroughputPoint?: SweepPick;
    readonly prefillFit?: PrefillFit;
    readonly verdicts?: readonly SweepVerdict[];
    readonly slo?: SloSpec;
    /** Why the sweep stopped before its last value (saturation), with the label of the last point run and how many points were asked for. */
    readonly stoppedEarly?: { readonly afterLabel: string; readonly reason: string; readonly asked?: number };
    readonly [extra: string]: unknown;
  };
  /** Present on a chunked-prefill dial run (then `sweep` is absent). */
  readonly prefillDial?: PrefillDial;
  /** The server's Prometheus /metrics, scraped before, during and after the run (src/engine/transport/serverMetrics.ts). */
  readonly serverMetrics?: ServerMetrics;
  /** Present on a `cache-check` run. */
  readonly prefixCache?: PrefixCacheCheck;
  /** Present on a run imported from another benchmark tool's result (`llm-profiler import`). */
  readonly importedFrom?: ImportedFrom;
  /** (`run --repeat N`) Each repetition of the workload on its own: requests[].repeat points here by index. */
  readonly repeats?: readonly RepeatSummary[];
  /** (`ab`) This run is one side of an interleaved A/B: its blocks alternate with the other side's. */
  readonly ab?: AbRecord;
  /** How synthetic prompts were sized to the length asked (workload `prompt.sizing: 'server'`). */
  readonly promptLength?: PromptLength;
  readonly [extra: string]: unknown;
}

/**
 * How a run's synthetic prompts were sized so that the server counts the tokens asked: by the
 * server's own tokenizer (`POST /tokenize`: vLLM's counts the chat template, llama.cpp's with its
 * `/apply-template`), by the prompt tokens the warmup's replies reported (usage), or not at all
 * (estimate: one word a token, the server reported neither).
 */
/** How synthetic prompts were sized (PromptLength.method): the server's tokenizer, the warmup's usage, or neither. */
export const SIZING_METHODS = ['tokenize', 'usage', 'estimate'] as const;
export type SizingMethod = (typeof SIZING_METHODS)[number];

/** Which tokenizer answered: vLLM's (chat template counted), llama.cpp's with its template, or llama.cpp's on the text alone. */
export const TOKENIZER_KINDS = ['vllm', 'llama.cpp', 'llama.cpp-text'] as const;
export type TokenizerKind = (typeof TOKENIZER_KINDS)[number];

export interface PromptLength {
  readonly method: SizingMethod;
  /** Prompt tokens asked for (the workload's `prompt.tokens`). */
  readonly asked: number;
  /** Words of text each prompt was given (its index words included; the nonce apart). */
  readonly words: number;
  /**
   * The tokenizer that answered. With method `tokenize`: the one the words were sized with; with
   * `usage`: one whose count the warmup's usage overruled (more than twice, or under half, of it).
   */
  readonly tokenizer?: TokenizerKind;
  /** The warmup's replies' prompt tokens moved the words (what the tokenizer did not count, or all of it without one). */
  readonly usageCorrected?: boolean;
  /** Warmup requests sent beyond the workload's, at a second length, to fit the usage's count to the words (workload.warmup includes them). */
  readonly addedWarmup?: number;
  /** The words are at their fewest and the server still counts more than asked: its template alone is longer than the length asked. */
  readonly shortest?: boolean;
  /** The measured requests' prompt tokens as the server counted them (usage): their median, lowest and highest; absent without usage. */
  readonly sent?: { readonly p50: number; readonly min: number; readonly max: number; readonly requests: number };
}

/** How a run that did not end was recovered from its journal (files/journal.ts, run/recover.ts). */
export interface Interrupted {
  /** ISO time of the last finished request in the journal. */
  readonly lastRecordAt?: string;
  /** ISO time the journal was last written (the process was alive then). */
  readonly lastSeenAt: string;
  /** Requests in flight at the last progress the journal holds: lost with the process. */
  readonly inFlight: number;
  /** Measured requests that finished (and are here). */
  readonly finished: number;
  /** Measured requests planned, when known. */
  readonly total?: number;
  /** ISO time of the recovery. */
  readonly recoveredAt: string;
  /** The journal's file name. */
  readonly journal: string;
  /** (sweep) The label of the point that was running: its finished requests are here, it is not fitted. */
  readonly unfinishedPoint?: string;
  /** (`run --repeat`) The repetition that was running (its index): kept, with the requests it finished, in `repeats`. */
  readonly unfinishedRepetition?: number;
  /** Lines of the journal that could not be read (a line cut by the kill, damage) and were skipped. */
  readonly skippedLines?: number;
}

/** One repetition of a `run --repeat N` (or one block of an `ab` side). */
export interface RepeatSummary {
  readonly index: number;
  /** ISO time the repetition started. */
  readonly startedAt: string;
  readonly durationS: number;
  readonly summary: Summary;
  /** Indexes into RunFile.requests belonging to this repetition. */
  readonly requestIndexes: readonly number[];
}

/** One side of an interleaved A/B run (`llm-profiler ab`). */
export interface AbRecord {
  /** Shared by both sides' run files: they were measured together. */
  readonly pairId: string;
  readonly side: 'A' | 'B';
  /** The other side's run id. */
  readonly otherId: string;
  /** Blocks per side; block i of A ran just before block i of B (or after, alternating who goes first). */
  readonly blocks: number;
  /** Measured requests per block. */
  readonly blockRequests: number;
}

// ---- Runs imported from other benchmark tools (src/engine/files/importers/) ----

/**
 * The tools whose results can be imported, a row each: its id (in run files), its name as its makers
 * spell it, the files of it that are read, and their extensions. Every surface that names the tools
 * (the CLI's usage, the refusal of another file, the file picker, the report's drop hint) reads this
 * list: a new importer is a file in src/engine/files/importers/ and a row here.
 */
export const IMPORT_TOOL_ROWS = [
  { id: 'vllm', label: 'vLLM', reads: "`vllm bench serve --save-result --save-detailed` JSON (and benchmark_serving.py's)", extensions: ['json', 'jsonl'] },
  { id: 'guidellm', label: 'GuideLLM', reads: 'benchmarks.json/.yaml', extensions: ['json', 'yaml', 'yml'] },
  { id: 'aiperf', label: 'AIPerf', reads: 'profile_export.jsonl', extensions: ['jsonl', 'json'] },
] as const;
export type ImportTool = (typeof IMPORT_TOOL_ROWS)[number]['id'];
export const IMPORT_TOOLS: readonly ImportTool[] = IMPORT_TOOL_ROWS.map((t) => t.id);
/** The tools in a sentence: "vLLM, GuideLLM or AIPerf". */
export const IMPORT_TOOL_NAMES = `${IMPORT_TOOL_ROWS.slice(0, -1).map((t) => t.label).join(', ')} or ${IMPORT_TOOL_ROWS[IMPORT_TOOL_ROWS.length - 1].label}`;

/**
 * Where an imported run came from. The requests hold only what the source recorded: a field it
 * does not have is absent, never made up, and `missing` says so in plain words for the report.
 */
export interface ImportedFrom {
  readonly tool: ImportTool;
  /** The tool's version as the file states it; absent when the file does not say. */
  readonly version?: string;
  /** The file imported (as given), and the other files read with it (AIPerf's profile_export_aiperf.json). */
  readonly file: string;
  readonly files?: readonly string[];
  /**
   * How the requests' sentAt were obtained: "absolute" (the source's own wall-clock start times),
   * "relative" (offsets from the run's start, placed on its start time), "none" (the source has no
   * start times: every request is placed at the run's start, and nothing that lines requests up
   * across each other (concurrency, stall culprits, the timeline's positions) is to be read from them).
   */
  readonly startTimes: 'absolute' | 'relative' | 'none';
  /** What the source does not record, so this run lacks, each in plain words ("chunk arrival times: GuideLLM keeps the first and last token only"). */
  readonly missing?: readonly string[];
  /** The figures the tool itself reported for the whole run, under its own names ("median_ttft_ms": 12.3), to set beside ours. */
  readonly reported?: Readonly<Record<string, number>>;
}

// ---- The server's Prometheus /metrics (src/engine/transport/serverMetrics.ts) ----

export const METRICS_FAMILIES = ['vllm', 'sglang', 'llamacpp', 'tgi'] as const;
export type MetricsFamily = (typeof METRICS_FAMILIES)[number];
/** Each family's server, as a person names it. */
export const METRICS_FAMILY_LABELS: Readonly<Record<MetricsFamily, string>> = { vllm: 'vLLM', sglang: 'SGLang', llamacpp: 'llama.cpp', tgi: 'TGI' };

/** A histogram's change over the run: count and sum of what the server observed during it, in ms. */
export interface HistogramDelta {
  /** The server's metric name, e.g. "vllm:time_to_first_token_seconds". */
  readonly metric: string;
  readonly count: number;
  readonly sumMs: number;
  /** sumMs / count. */
  readonly meanMs?: number;
  /** Upper bound (ms) of the bucket holding the p50 / p99 of the delta, when buckets are given. */
  readonly p50Ms?: number;
  readonly p99Ms?: number;
}

export interface ServerMetrics {
  /** The URL scraped (displayUrl: no credentials). */
  readonly url: string;
  readonly family?: MetricsFamily;
  /** Histogram deltas over the run, by what they measure. */
  readonly histograms: {
    readonly ttft?: HistogramDelta;
    readonly queue?: HistogramDelta;
    readonly prefill?: HistogramDelta;
    readonly decode?: HistogramDelta;
    readonly e2e?: HistogramDelta;
    readonly itl?: HistogramDelta;
  };
  /** Counter deltas over the run (prefix-cache hits/queries in tokens, prompt and generated tokens, …): name → delta. */
  readonly counters: Readonly<Record<string, number>>;
  /** Prefix-cache hit rate over the run, hits / queries, when the server counts both. */
  readonly prefixCacheHitRate?: number;
  /** Gauges sampled about once a second: times are ms since the run's start. */
  readonly samples: {
    readonly atMs: readonly number[];
    readonly running: readonly (number | null)[];
    readonly waiting: readonly (number | null)[];
    readonly kvCacheUsage: readonly (number | null)[];
  };
  /** What went wrong or was ignored (a /metrics that is HTML, too large, unparsable, a metric of the wrong type). */
  readonly notes: readonly string[];
}

// ---- Contracts between engine modules (the streaming layer, the runner) ----

export interface ClientOptions {
  /** Keep-alive connections to open and warm before the measured phase (= the run's concurrency). */
  readonly connections: number;
  /**
   * The most connections the pool may hold: `connections` when absent (a closed loop), null for no
   * cap (an open loop without --max-concurrency opens more as arrivals need them, as vLLM's does).
   */
  readonly maxConnections?: number | null;
  readonly timeoutMs: number;
  readonly idleTimeoutMs: number;
  /** Sent as a bearer token; never stored or logged. */
  readonly apiKey?: string;
  /** Proxy and certificates; absent: direct, Node's own trust store. */
  readonly network?: NetworkSpec;
  /** WorkloadSpec.respectRetryAfter: wait out a rate limit's Retry-After and send again. */
  readonly respectRetryAfter?: boolean;
}

/** Live observation of one stream, for progress and the live panel. Called outside the data callback. */
export interface StreamObserver {
  onFirstToken?(index: number, ttftMs: number): void;
  onChunk?(index: number, atMs: number): void;
}

export interface EndpointClient {
  /** Opens and warms the connections before the measured phase. Throws PreflightError when unreachable. */
  warm(): Promise<ConnectionInfo>;
  /** What warming found, with the connections opened since (undefined before warming). */
  connection(): ConnectionInfo | undefined;
  /** Never rejects: a failure is returned in `record.error`, with what arrived before it kept. */
  send(spec: RequestSpec, signal: AbortSignal, observer?: StreamObserver): Promise<SentRecord>;
  close(): Promise<void>;
}

/**
 * Live progress of a run (or of a sweep or dial, over all its points). Counts are of measured
 * requests only: `finished = succeeded + failed`, and `finished ≤ total` when a total is known.
 * Requests the user's Cancel stopped are neither (`cancelled`).
 */
export interface Progress {
  readonly runId: string;
  readonly succeeded: number;
  readonly failed: number;
  /** Requests stopped by the user's Cancel (error kind `aborted`); absent when none. */
  readonly cancelled?: number;
  readonly finished: number;
  /** Planned measured requests, when known (undefined for --duration). */
  readonly total?: number;
  readonly inFlight: number;
  readonly ttftP50Ms?: number;
  readonly outputTokensPerSecond?: number;
  readonly elapsedS: number;
  /**
   * The streams of requests in flight, as deltas: each request once when sent, then the chunks that
   * arrived since the previous report (bounded per report; the rest follows in the next one); a
   * request's entries stop once its record is in. Only the live report reads them (the CLI ignores them).
   */
  readonly streams?: readonly StreamDelta[];
  /** Epoch ms this report was made (with `streams`: where a lane still in flight ends for now). */
  readonly at?: number;
}

/** New chunks of a request still in flight (Progress.streams). */
export interface StreamDelta {
  readonly index: number;
  readonly warmup?: boolean;
  /** Epoch ms the runner meant to send it, and sent it. */
  readonly scheduledAt: number;
  readonly sentAt: number;
  /** How many of its chunks earlier deltas carried: `chunkMs[0]` is chunk number `from`. */
  readonly from: number;
  /** Arrival times of the new chunks, ms since it was sent, as in RequestRecord.chunkTimesMs. */
  readonly chunkMs: readonly number[];
}
