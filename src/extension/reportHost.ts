// The one place that reaches the report panel (src/extension/reportPanel.ts). It is registered at
// activation because its webview serializer must exist for a panel to come back after a reload;
// registering is cheap (the chart code lives in the webview bundle, the run-file code loads on use).
import type * as vscode from 'vscode';
import type { RunFile } from '../engine/types';
import { registerReportPanel, type LiveReport, type ReportPanels } from './reportPanel';

export type LiveReportLike = LiveReport;
export type ReportPanelsLike = ReportPanels;

export class ReportHost {
  readonly #panels: ReportPanels | undefined;

  constructor(context: vscode.ExtensionContext, loadRun: (id: string) => Promise<RunFile | undefined>, onError: (message: string) => void) {
    try {
      this.#panels = registerReportPanel(context, { loadRun });
    } catch (err) {
      // Without the panel, runs are still stored and summarized in a notification.
      onError(`report panel unavailable: ${(err as Error).message}`);
    }
  }

  /** The panels, or undefined when they could not be registered (callers fall back to a summary). */
  async panels(): Promise<ReportPanels | undefined> {
    return this.#panels;
  }
}
