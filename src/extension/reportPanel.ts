// The report panel's host side: opens the webview, keeps what each panel shows (so a panel whose
// page was discarded while hidden, or restored after a reload, is drawn again from the host's copy),
// queues nothing until the page says `ready`, throttles live updates, and saves exports.
//
// retainContextWhenHidden is off on purpose: a report of a million chunks holds tens of MB in the
// page; the host keeps the run and resends it on `ready`, which costs a redraw (≈1 s for the largest
// runs) only when a hidden panel comes back.
import * as vscode from 'vscode';
import { writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { Progress, RequestRecord, RunFile } from '../engine/types';
import type { ReportHostMessage, ReportWebviewMessage } from '../shared/protocol';
import type { Log } from './log';
import { Disposable } from './dispose';
import { loadFiles } from './lazy';
import { LiveThrottle } from './liveThrottle';
import { newNonce, reportHtml, type ReportInitialState } from './webviewHtml';

/** The webview type: package.json lists `onWebviewPanel:llmProfiler.report` so a panel survives a reload. */
export const REPORT_VIEW_TYPE = 'llmProfiler.report';

export interface LiveReport {
  update(progress: Progress, records: readonly RequestRecord[]): void;
  end(run: RunFile): void;
}

/** Finds a stored run by id, for a panel restored after a reload. */
export type LoadRun = (runId: string) => Promise<RunFile | undefined>;

/** What the page restored after a reload says it was showing (webview/report/vscodeApi.ts PanelState). */
interface PanelState { readonly runId?: string; readonly compareId?: string; readonly liveRunId?: string }

type Shown =
  | { readonly kind: 'empty' }
  | { readonly kind: 'run'; readonly run: RunFile; readonly compareWith?: RunFile }
  | { readonly kind: 'error'; readonly message: string; readonly path?: string }
  | { kind: 'live'; run: RunFile; readonly records: Map<number, RequestRecord>; progress?: Progress };


class ReportPanel {
  readonly panel: vscode.WebviewPanel;
  key: string;
  #shown: Shown = { kind: 'empty' };
  #ready = false;
  #disposed = false;
  readonly #owner: ReportPanels;

  constructor(owner: ReportPanels, panel: vscode.WebviewPanel, key: string) {
    this.#owner = owner;
    this.panel = panel;
    this.key = key;
    const { extensionUri } = owner.context;
    panel.webview.options = {
      enableScripts: true,
      localResourceRoots: [vscode.Uri.joinPath(extensionUri, 'dist'), vscode.Uri.joinPath(extensionUri, 'media')],
    };
    panel.onDidDispose(() => { this.#disposed = true; owner.forget(this); });
    panel.onDidChangeViewState(() => {
      // a page that is not retained is discarded when hidden; it posts `ready` again when shown
      if (!panel.visible) this.#ready = false;
    });
    panel.webview.onDidReceiveMessage((m: ReportWebviewMessage) => void this.#onMessage(m));
    this.#setHtml({ kind: 'loading' });
  }

  get shown(): Shown { return this.#shown; }

  #setHtml(initialState: ReportInitialState): void {
    const w = this.panel.webview;
    const { extensionUri } = this.#owner.context;
    this.#ready = false;
    w.html = reportHtml({
      cspSource: w.cspSource,
      nonce: newNonce(),
      scriptUri: w.asWebviewUri(vscode.Uri.joinPath(extensionUri, 'dist', 'webview', 'report.js')).toString(),
      styleUri: w.asWebviewUri(vscode.Uri.joinPath(extensionUri, 'media', 'report.css')).toString(),
      initialState: this.#owner.scrub(initialState),
    });
  }

  /** Shows something else; `send` false when the page already has it (a live run that just ended). */
  display(shown: Shown, send = true): void {
    this.#shown = shown;
    this.panel.title = titleOf(shown);
    if (send && this.#ready) this.#post(this.#snapshot());
  }

  /** A live delta; dropped when the page is not there (it gets the whole state on `ready`). */
  postLive(msg: ReportHostMessage): void {
    if (this.#ready) this.#post(msg);
  }

  #snapshot(): ReportHostMessage | undefined {
    const s = this.#shown;
    switch (s.kind) {
      case 'empty': return undefined;
      case 'run': return { type: 'showRun', run: s.run, ...(s.compareWith ? { compareWith: s.compareWith } : {}) };
      case 'error': return { type: 'runError', message: s.message, ...(s.path ? { path: s.path } : {}) };
      case 'live': {
        const run = { ...s.run, requests: [...s.records.values()] };
        return { type: 'liveStart', runId: s.run.id, run };
      }
    }
  }

  #post(msg: ReportHostMessage | undefined): void {
    if (!msg || this.#disposed) return;
    void this.panel.webview.postMessage(this.#owner.scrub(msg));
    const s = this.#shown;
    if (msg.type === 'liveStart' && s.kind === 'live' && s.progress) {
      void this.panel.webview.postMessage({ type: 'liveUpdate', runId: s.run.id, progress: s.progress, records: [] } satisfies ReportHostMessage);
    }
  }

  async #onMessage(m: ReportWebviewMessage): Promise<void> {
    switch (m.type) {
      case 'ready':
        this.#ready = true;
        this.#post(this.#snapshot());
        return;
      case 'exportCsv':
      case 'exportJson': {
        const run = this.#runById(m.runId);
        if (!run) { void vscode.window.showErrorMessage(`LLM Profiler: the run ${m.runId} is no longer open in this panel.`); return; }
        await this.#owner.exportRun(run, m.type === 'exportCsv' ? 'csv' : 'json');
        return;
      }
      case 'exportPng':
        await this.#owner.exportPng(m.name, m.dataUrl);
        return;
      default: {
        const never: never = m;
        void never;
      }
    }
  }

  #runById(id: string): RunFile | undefined {
    const s = this.#shown;
    if (s.kind === 'run') return s.run.id === id ? s.run : s.compareWith?.id === id ? s.compareWith : undefined;
    if (s.kind === 'live' && s.run.id === id) return { ...s.run, requests: [...s.records.values()] };
    return undefined;
  }
}

function titleOf(s: Shown): string {
  switch (s.kind) {
    case 'empty': return 'LLM Profiler report';
    case 'error': return 'LLM Profiler: cannot show run';
    case 'live': return `● ${s.run.endpoint?.model ?? s.run.endpoint?.name ?? 'run'} (live)`;
    case 'run': {
      const name = (r: RunFile) => r.endpoint?.model ?? r.endpoint?.name ?? r.id;
      return s.compareWith ? `${name(s.run)} vs ${name(s.compareWith)}` : `Report: ${name(s.run)}`;
    }
  }
}

/**
 * The report panels. Built at activation because the webview serializer must exist for a panel to
 * come back after a reload; cheap (the chart code lives in the webview bundle, run files load on use).
 */
export class ReportPanels extends Disposable {
  readonly context: vscode.ExtensionContext;
  readonly #panels = new Set<ReportPanel>();
  readonly #loadRun: LoadRun;
  /** Every message to a page passes the log's scrubber: no secret this session knows reaches a webview. */
  readonly #log: Pick<Log, 'forWebview'>;

  constructor(context: vscode.ExtensionContext, loadRun: LoadRun, log: Pick<Log, 'forWebview'>) {
    super();
    this.context = context;
    this.#loadRun = loadRun;
    this.#log = log;
    this._register(vscode.window.registerWebviewPanelSerializer(REPORT_VIEW_TYPE, {
      deserializeWebviewPanel: (panel, state) => this.#restore(panel, state as PanelState | undefined),
    }));
    this._register({ dispose: () => { for (const p of [...this.#panels]) p.panel.dispose(); } });
  }

  forget(p: ReportPanel): void { this.#panels.delete(p); }

  scrub<T>(value: T): T { return this.#log.forWebview(value); }

  #panelFor(key: string, preserveFocus = false): ReportPanel {
    for (const p of this.#panels) {
      if (p.key === key) { p.panel.reveal(undefined, preserveFocus); return p; }
    }
    const panel = vscode.window.createWebviewPanel(REPORT_VIEW_TYPE, 'LLM Profiler report',
      { viewColumn: vscode.ViewColumn.Beside, preserveFocus },
      { enableScripts: true, localResourceRoots: [vscode.Uri.joinPath(this.context.extensionUri, 'dist'), vscode.Uri.joinPath(this.context.extensionUri, 'media')] });
    const p = new ReportPanel(this, panel, key);
    this.#panels.add(p);
    return p;
  }

  show(run: RunFile, compareWith?: RunFile): void {
    const p = this.#panelFor(compareWith ? `${run.id}|${compareWith.id}` : run.id);
    p.display({ kind: 'run', run, ...(compareWith ? { compareWith } : {}) });
  }

  showError(message: string, path?: string): void {
    const p = this.#panelFor(`error:${path ?? ''}`);
    p.display({ kind: 'error', message, ...(path ? { path } : {}) });
  }

  startLive(run: RunFile): LiveReport {
    const p = this.#panelFor(run.id, true);
    const records = new Map<number, RequestRecord>();
    for (const r of run.requests) records.set(r.index, r);
    const shown: Shown = { kind: 'live', run, records };
    p.display(shown);
    const throttle = new LiveThrottle<Progress, RequestRecord>((progress, batch) => {
      p.postLive({ type: 'liveUpdate', runId: run.id, progress, records: batch });
    }, 100);
    let ended = false;
    return {
      update: (progress, recs) => {
        if (ended || p.shown !== shown) return; // the panel moved on to something else
        for (const r of recs) records.set(r.index, r);
        shown.progress = progress;
        throttle.update(progress, recs);
      },
      end: (final) => {
        if (ended) return;
        ended = true;
        throttle.close(true);
        if (p.shown !== shown) return;
        p.postLive({ type: 'liveEnd', runId: run.id, run: final });
        // later redraws (a hidden panel shown again, a reload) show the finished run
        p.display({ kind: 'run', run: final }, false);
      },
    };
  }

  async #restore(panel: vscode.WebviewPanel, state: PanelState | undefined): Promise<void> {
    const id = state?.runId ?? state?.liveRunId;
    const p = new ReportPanel(this, panel, id ?? 'restored');
    this.#panels.add(p);
    if (!id) { p.display({ kind: 'error', message: 'This report panel was restored without a run. Open a run from the LLM Profiler view.' }); return; }
    try {
      const run = await this.#loadRun(id);
      const compareWith = state?.compareId ? await this.#loadRun(state.compareId) : undefined;
      if (!run) {
        p.display({ kind: 'error', message: state?.liveRunId
          ? `The run ${id} was still going when the window reloaded; it was not saved.`
          : `The run ${id} is no longer stored. Open its run file again.` });
        return;
      }
      p.key = compareWith ? `${run.id}|${compareWith.id}` : run.id;
      p.display({ kind: 'run', run, ...(compareWith ? { compareWith } : {}) });
    } catch (e) {
      p.display({ kind: 'error', message: (e as Error).message });
    }
  }

  #defaultUri(name: string): vscode.Uri {
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri;
    const safe = name.replace(/[^A-Za-z0-9._-]/g, '_');
    return folder ? vscode.Uri.joinPath(folder, safe) : vscode.Uri.file(join(homedir(), safe));
  }

  async exportRun(run: RunFile, kind: 'csv' | 'json'): Promise<void> {
    const target = await vscode.window.showSaveDialog({
      defaultUri: this.#defaultUri(`${run.id}.${kind}`),
      filters: kind === 'csv' ? { 'CSV': ['csv'] } : { 'Run file (JSON)': ['json'] },
      title: kind === 'csv' ? 'Save the requests as CSV' : 'Save the run file',
    });
    if (!target) return;
    try {
      const m = await loadFiles();
      if (kind === 'csv') await writeFile(target.fsPath, m.requestsToCsv(run), 'utf8');
      else await m.writeRunFile(target.fsPath, run);
      void vscode.window.showInformationMessage(`LLM Profiler: saved ${target.fsPath}`);
    } catch (e) {
      void vscode.window.showErrorMessage(`LLM Profiler: could not save ${target.fsPath}: ${(e as Error).message}`);
    }
  }

  async exportPng(name: string, dataUrl: string): Promise<void> {
    const m = /^data:image\/png;base64,([A-Za-z0-9+/=]+)$/.exec(dataUrl);
    if (!m) { void vscode.window.showErrorMessage('LLM Profiler: the chart could not be exported (not a PNG).'); return; }
    const target = await vscode.window.showSaveDialog({
      defaultUri: this.#defaultUri(name.endsWith('.png') ? name : `${name}.png`),
      filters: { 'PNG image': ['png'] },
      title: 'Save the chart as PNG',
    });
    if (!target) return;
    try {
      await writeFile(target.fsPath, Buffer.from(m[1]!, 'base64'));
    } catch (e) {
      void vscode.window.showErrorMessage(`LLM Profiler: could not save ${target.fsPath}: ${(e as Error).message}`);
    }
  }
}
