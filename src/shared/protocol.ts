// The one typed protocol between the extension host and its webviews. Both sides import it with
// `import type`. Messages are discriminated unions keyed by `type`, with readonly fields.
import type { Progress, RequestRecord, RunFile } from '../engine/types';

// ---- Report panel (webview/report) ----
// (owned by the report panel work; keep additions in this section)

/** Host → report webview. */
export type ReportHostMessage =
  | { readonly type: 'showRun'; readonly run: RunFile; readonly compareWith?: RunFile }
  | { readonly type: 'runError'; readonly message: string; readonly path?: string }
  | { readonly type: 'liveStart'; readonly runId: string; readonly run: RunFile }
  | { readonly type: 'liveUpdate'; readonly runId: string; readonly progress: Progress; readonly records: readonly RequestRecord[] }
  | { readonly type: 'liveEnd'; readonly runId: string; readonly run: RunFile };

/** Report webview → host. */
export type ReportWebviewMessage =
  | { readonly type: 'ready' }
  | { readonly type: 'exportCsv'; readonly runId: string }
  | { readonly type: 'exportJson'; readonly runId: string }
  | { readonly type: 'exportPng'; readonly name: string; readonly dataUrl: string };

// ---- Sidebar (webview/sidebar) ----
// (owned by the extension work; keep additions in this section)

export type SidebarHostMessage = { readonly type: 'state'; readonly state: unknown };
export type SidebarWebviewMessage = { readonly type: 'ready' };
