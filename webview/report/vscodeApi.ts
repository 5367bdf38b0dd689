// The one way the report talks to the host: typed messages through acquireVsCodeApi().
import type { ReportWebviewMessage } from '../../src/shared/protocol';

interface VsCodeApi {
  postMessage(message: unknown): void;
  getState(): unknown;
  setState(state: unknown): void;
}
declare function acquireVsCodeApi(): VsCodeApi;

/** What the panel keeps across a reload: enough for the host's serializer to find the run again. */
export interface PanelState {
  readonly runId?: string;
  readonly compareId?: string;
  readonly liveRunId?: string;
}

let api: VsCodeApi | undefined;
function vscode(): VsCodeApi {
  // acquireVsCodeApi may be called only once per page
  api ??= typeof acquireVsCodeApi === 'function'
    ? acquireVsCodeApi()
    : { postMessage: () => undefined, getState: () => undefined, setState: () => undefined };
  return api;
}

type Body<T extends ReportWebviewMessage['type']> = Omit<Extract<ReportWebviewMessage, { type: T }>, 'type'>;

export function post<T extends ReportWebviewMessage['type']>(type: T, body: Body<T>): void {
  vscode().postMessage({ type, ...body });
}

export function setPanelState(state: PanelState): void {
  vscode().setState(state);
}
