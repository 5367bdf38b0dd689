// The one typed protocol between the extension host and its webviews. Both sides import it with
// `import type`. Messages are discriminated unions keyed by `type`, with readonly fields.
import type { Progress, RequestRecord, RunFile, StreamDelta } from '../engine/core/types';

// ---- Both webviews ----

/**
 * The one form of a moment on every surface of a window (src/present/timeText.ts clockTime): the
 * host's locale (VS Code's display language) and time zone, which it names its tabs and runs in.
 * Each page gets it in its HTML (`<body data-clock>`, src/extension/webviewHtml.ts) and formats its
 * times in it, whatever the browser's own locale and zone (code-server, Remote).
 */
export interface SurfaceClock {
  /** A BCP 47 tag as Intl resolved it ("en-GB"). */
  readonly locale: string;
  /** An IANA zone ("Europe/Berlin"). */
  readonly timeZone: string;
}

// ---- Report panel (webview/report) ----
// (owned by the report panel work; keep additions in this section)

/**
 * Host → report webview. Live mode: `liveStart` carries the run so far (its `requests` are the
 * records finished until then, possibly none); each `liveUpdate` carries only the records finished
 * since the previous one (the host sends the first at once, later ones at most every 100 ms); the
 * page drops any live message whose runId is not the live run's; `liveEnd` carries the final run.
 * `streams`: requests still in flight, as chunk deltas (StreamDelta; in liveStart, each stream so far
 * from its first chunk); a stream's lane is replaced by its record when that arrives. The progress in
 * a liveUpdate carries no streams of its own.
 * A page that was discarded while hidden gets the whole state again (showRun, or liveStart) on `ready`.
 */
export type ReportHostMessage =
  | { readonly type: 'showRun'; readonly run: RunFile; readonly compareWith?: RunFile }
  | { readonly type: 'runError'; readonly message: string; readonly path?: string }
  | { readonly type: 'liveStart'; readonly runId: string; readonly run: RunFile; readonly streams?: readonly StreamDelta[] }
  | { readonly type: 'liveUpdate'; readonly runId: string; readonly progress: Progress; readonly records: readonly RequestRecord[]; readonly streams?: readonly StreamDelta[] }
  | { readonly type: 'liveEnd'; readonly runId: string; readonly run: RunFile }
  /** The run's file was deleted from the workspace: the page keeps what it shows and says so (after each showRun too). */
  | { readonly type: 'runDeleted'; readonly runId: string };

/** Report webview → host. `ready` comes first; exports name the run (the host holds it) or carry a PNG data: URL. */
export type ReportWebviewMessage =
  | { readonly type: 'ready' }
  | { readonly type: 'exportCsv'; readonly runId: string }
  | { readonly type: 'exportJson'; readonly runId: string }
  /** The run as a Trace Event Format file for Perfetto UI / chrome://tracing, and one CSV row per chunk. */
  | { readonly type: 'exportTrace'; readonly runId: string }
  | { readonly type: 'exportChunksCsv'; readonly runId: string }
  | { readonly type: 'exportPng'; readonly name: string; readonly dataUrl: string }
  /** Pin the run shown as the baseline of its endpoint or prompt file (LLM Profiler: Pin as baseline). */
  | { readonly type: 'pinBaseline'; readonly runId: string }
  /**
   * Files dropped on the page (Shift held, as VS Code asks for a drop into a webview): each a URI
   * (text/uri-list, VS Code's resourceurls) or a path (its codefiles). The host opens each as a
   * benchmark result (commands/import.ts); the page never reads a file.
   */
  | { readonly type: 'openDropped'; readonly files: readonly string[] };

// ---- Sidebar (webview/sidebar) ----
// (owned by the extension work; keep additions in this section)

export interface SidebarEndpoint {
  /** 'cfg:<name>' for a configured endpoint, 'local' for the local server. */
  readonly id: string;
  readonly name: string;
  readonly url: string;
  readonly api: string;
  readonly model?: string;
  /** Defined by an untrusted workspace's settings: no stored key, a confirmation before each run. */
  readonly restricted: boolean;
  readonly hasKey: boolean;
  readonly reachable?: 'checking' | 'yes' | 'no';
  /** The last check in words (src/present/endpointText.ts reachText): "reachable (23 ms)", "not reachable: cannot connect to http://h:1 (connection refused, …)". */
  readonly reachNote?: string;
  readonly lastTtftP50Ms?: number;
  readonly lastTpotP50Ms?: number;
  /** In the user's settings: the sidebar offers Edit and Remove. */
  readonly editable?: boolean;
  /** On this machine (localhost, 127.x, ::1): a key is offered as a small link, not a button. */
  readonly keyOptional?: boolean;
  /** Why it cannot be used here (the local server where its bundled backend is missing): never selected by default. */
  readonly unavailable?: string;
}

export interface SidebarLocalServer {
  readonly state: 'stopped' | 'starting' | 'running' | 'stopping' | 'error';
  readonly url?: string;
  readonly model?: string;
  readonly port?: number;
  /** 'preset:tiny' or the model file's name. */
  readonly source: string;
  readonly parallel: number;
  readonly message?: string;
  /** The bundled backend is missing on this platform: what to do instead (a llama-server binary). */
  readonly unavailable?: string;
}

export interface SidebarRun {
  readonly id: string;
  /** What tells it from the other runs: "c=8 · 64 req on vllm, 10:14" (src/present/runText.ts runName). */
  readonly name: string;
  readonly endpointName: string;
  readonly startedAt: string;
  readonly completed: number;
  readonly failed: number;
  readonly cancelled: boolean;
  /** Recovered from the journal of a run whose window or process died. */
  readonly interrupted?: boolean;
  readonly ttftP50Ms?: number;
  readonly tpotP50Ms?: number;
  /** "via proxy http://p:3128", "certificates not checked": how the endpoint was reached, when it changed what was measured. */
  readonly network?: readonly string[];
  /** What a prompt file's prompts were sent with ("max 256 tokens (from the file)"), when the run records it. */
  readonly sent?: string;
  /** Synthetic prompts' length as the server counted it ("255-token prompts as the server counted them (256 asked, …)"; present/workloadText.ts promptWords). */
  readonly prompt?: string;
  /** What this run is pinned as the baseline of: its endpoint (URL and model), its prompt file. */
  readonly baselineOf?: readonly ('endpoint' | 'promptFile')[];
  /** Slower than its baseline (a latency's p50 or p90, or the output throughput): a line each, "TPOT p50 4.1% slower than baseline <run name>". */
  readonly regressed?: readonly string[];
}

export interface SidebarWorkload {
  /** Requests in flight; sessions in flight for conversations (unused by a trace or a ramp). */
  readonly concurrency: number;
  readonly requests: number;
  readonly maxTokens: number;
  readonly promptTokens: number;
  /** Traffic beyond single prompts (the CLI's Traffic options); absent: single prompts. */
  readonly traffic?: SidebarTraffic;
  /** Single prompts read from a dataset file (the CLI's --dataset F) instead of synthetic ones of `promptTokens`. */
  readonly dataset?: string;
  /** A sweep (the CLI's `sweep`): one point per value of the axis, `requests` each. */
  readonly sweep?: SidebarSweep;
}

/** What a sweep from the form varies: concurrency, request rate (req/s) or prompt length (tokens), over these values. */
export interface SidebarSweep {
  readonly axis: 'concurrency' | 'rate' | 'promptTokens';
  readonly values: readonly number[];
}

/**
 * Conversations, a trace replay or a ramp, as the CLI's flags give them (src/jobs/presets.ts
 * trafficValues turns them into the same option values): `chat` is --chat turns=T,user=N,reply=M
 * with --sessions and --think-time; `dataset` is --dataset F --multi-turn (every conversation when
 * `sessions` is absent); `trace` is --trace F --trace-speed X; `ramp` is --ramp SHAPE:FROM-TO.
 */
export type SidebarTraffic =
  | { readonly kind: 'chat'; readonly turns: number; readonly userTokens: number; readonly replyTokens: number; readonly sessions: number; readonly thinkTimeMs: number }
  | { readonly kind: 'dataset'; readonly path: string; readonly sessions?: number; readonly thinkTimeMs: number }
  | { readonly kind: 'trace'; readonly path: string; readonly speed: number }
  | { readonly kind: 'ramp'; readonly shape: 'linear' | 'exponential'; readonly from: number; readonly to: number };

/** What the form's traffic fields start from (src/jobs/presets.ts: the CLI's defaults). */
export interface SidebarTrafficDefaults {
  readonly chat: { readonly turns: number; readonly userTokens: number; readonly replyTokens: number; readonly sessions: number; readonly thinkTimeMs: number };
  readonly traceSpeed: number;
  readonly ramp: { readonly shape: 'linear' | 'exponential'; readonly from: number; readonly to: number };
  /** A sweep's values on each axis, as Profile endpoint's Sweep offers them (src/jobs/presets.ts). */
  readonly sweep?: Readonly<Record<SidebarSweep['axis'], readonly number[]>>;
}

export interface SidebarState {
  readonly endpoints: readonly SidebarEndpoint[];
  readonly localServer: SidebarLocalServer;
  readonly runs: readonly SidebarRun[];
  readonly workload: SidebarWorkload;
  readonly trafficDefaults: SidebarTrafficDefaults;
  readonly running?: { readonly runId: string; readonly label: string; readonly finished: number; readonly total?: number; readonly ttftP50Ms?: number };
  /** Settings problems and corrupt run files, one line each. */
  readonly problems: readonly string[];
  /** The endpoint the last run used, by any path: the form's default until the user picks one. */
  readonly lastEndpointId?: string;
  /** The form switches to this endpoint once per `seq` (after Add or Edit endpoint). */
  readonly select?: { readonly id: string; readonly seq: number };
}

/** A file the form names: a conversations dataset, a trace, or a dataset of single prompts. */
export type SidebarFilePurpose = 'dataset' | 'trace' | 'prompts';

/** Host → sidebar webview. `pickedFile`: the file chosen after a `pickFile` (nothing is sent when the dialog was cancelled). */
export type SidebarHostMessage =
  | { readonly type: 'state'; readonly state: SidebarState }
  | { readonly type: 'pickedFile'; readonly purpose: SidebarFilePurpose; readonly path: string };

/** Sidebar webview → host. */
export type SidebarWebviewMessage =
  | { readonly type: 'ready' }
  | { readonly type: 'run'; readonly endpointId: string; readonly workload: SidebarWorkload }
  | { readonly type: 'cancelRun' }
  | { readonly type: 'startLocalServer'; readonly parallel: number }
  | { readonly type: 'stopLocalServer' }
  /** The chunked-prefill dial on the local server (its own servers, one per chunk size). */
  | { readonly type: 'comparePrefillChunks' }
  | { readonly type: 'openRun'; readonly runId: string }
  | { readonly type: 'compareRuns'; readonly runId: string; readonly otherId: string }
  | { readonly type: 'deleteRun'; readonly runId: string }
  /** Pin the run as the baseline of its endpoint or prompt file (the host asks which when both apply), or unpin it. */
  | { readonly type: 'pinBaseline'; readonly runId: string }
  | { readonly type: 'unpinBaseline'; readonly runId: string }
  | { readonly type: 'addEndpoint' }
  | { readonly type: 'editEndpoint'; readonly endpointId: string }
  | { readonly type: 'removeEndpoint'; readonly endpointId: string }
  /** Set the local server to a llama-server binary picked from disk. */
  | { readonly type: 'useLlamaServer' }
  | { readonly type: 'setApiKey'; readonly endpointId: string }
  | { readonly type: 'checkEndpoints' }
  /** Choose a file for the form (an open dialog; the page never reads a file): answered by `pickedFile`. */
  | { readonly type: 'pickFile'; readonly purpose: SidebarFilePurpose }
  /** Open the first-run walkthrough (Get started, under an empty run list). */
  | { readonly type: 'openWalkthrough' };
