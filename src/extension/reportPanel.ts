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
import { scrubRun } from '../engine/core/redact';
import type { Progress, RequestRecord, RunFile } from '../engine/core/types';
import type { ReportHostMessage, ReportWebviewMessage } from '../shared/protocol';
import { Command } from './commands';
import type { Log } from './log';
import { Disposable } from './dispose';
import { loadFiles } from './lazy';
import { LiveStreams } from './liveStreams';
import { LiveThrottle } from './liveThrottle';
import { compareName, runFileName, runName, runNameParts, safeFileName } from '../present/runText';
import { importedNameParts } from '../present/importText';
import { saidSaved } from './savedFile';
import { hostClock } from './clock';
import { newNonce, reportHtml, type ReportInitialState } from './webviewHtml';

/** The webview type: package.json lists `onWebviewPanel:llmProfiler.report` so a panel survives a reload. */
const REPORT_VIEW_TYPE = 'llmProfiler.report';

export interface LiveReport {
  update(progress: Progress, records: readonly RequestRecord[]): void;
  /** Shows the finished run in the live panel; false when that panel is gone (closed mid-run): the caller says where the run went. */
  end(run: RunFile): boolean;
  /** The user closed the live panel: the run goes on without it. */
  readonly closed: boolean;
}

/** What a run can be saved as from the panel: the requests as CSV, the run file, a Perfetto trace, the chunks as CSV. */
export type ExportKind = 'csv' | 'json' | 'trace' | 'chunks';

const EXPORT_KINDS = { exportCsv: 'csv', exportJson: 'json', exportTrace: 'trace', exportChunksCsv: 'chunks' } as const satisfies Record<string, ExportKind>;

const EXPORT_FILES: Readonly<Record<ExportKind, { suffix: string; filters: Record<string, string[]>; title: string }>> = {
  csv: { suffix: '.csv', filters: { 'CSV': ['csv'] }, title: 'Save the requests as CSV' },
  json: { suffix: '.json', filters: { 'Run file (JSON)': ['json'] }, title: 'Save the run file' },
  trace: { suffix: '.trace.json', filters: { 'Trace (Perfetto, chrome://tracing)': ['json'] }, title: 'Save the run as a trace for Perfetto UI' },
  chunks: { suffix: '.chunks.csv', filters: { 'CSV': ['csv'] }, title: 'Save the chunks as CSV (a row per chunk)' },
};

/** Finds a stored run by id, for a panel restored after a reload. */
export type LoadRun = (runId: string) => Promise<RunFile | undefined>;

/** What the page restored after a reload says it was showing (webview/report/vscodeApi.ts PanelState). */
interface PanelState { readonly runId?: string; readonly compareId?: string; readonly liveRunId?: string }

type Shown =
  | { readonly kind: 'empty' }
  | { readonly kind: 'run'; readonly run: RunFile; readonly compareWith?: RunFile }
  | { readonly kind: 'error'; readonly message: string; readonly path?: string }
  | { kind: 'live'; run: RunFile; readonly records: Map<number, RequestRecord>; progress?: Progress; readonly streams: LiveStreams };


class ReportPanel {
  readonly panel: vscode.WebviewPanel;
  key: string;
  #shown: Shown = { kind: 'empty' };
  #ready = false;
  /** The runs shown here whose files were deleted: the panel keeps its copy and says so. */
  readonly #deleted = new Set<string>();
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
  /** Closed by the user (or by the extension): nothing may be set on its webview any more. */
  get disposed(): boolean { return this.#disposed; }

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
      clock: hostClock(),
    });
  }

  /** Shows something else; `send` false when the page already has it (a live run that just ended). */
  display(shown: Shown, send = true): void {
    // a closed panel's title and webview throw "Webview is disposed"
    if (this.#disposed) return;
    this.#shown = shown;
    for (const id of [...this.#deleted]) if (!shows(shown, id)) this.#deleted.delete(id);
    this.panel.title = titleOf(shown, this.#deleted);
    if (send && this.#ready) this.#post(this.#snapshot());
  }

  /** The run's file was deleted: the page says so (a banner), the title too; a reload finds it no longer stored. */
  markDeleted(runId: string): void {
    if (this.#disposed || !shows(this.#shown, runId) || this.#deleted.has(runId)) return;
    this.#deleted.add(runId);
    this.panel.title = titleOf(this.#shown, this.#deleted);
    if (this.#ready) this.#post({ type: 'runDeleted', runId });
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
        const streams = s.streams.all();
        return { type: 'liveStart', runId: s.run.id, run, ...(streams.length ? { streams } : {}) };
      }
    }
  }

  #post(msg: ReportHostMessage | undefined): void {
    if (!msg || this.#disposed) return;
    void this.panel.webview.postMessage(this.#owner.scrub(msg));
    const s = this.#shown;
    if (msg.type === 'showRun') for (const runId of this.#deleted) void this.panel.webview.postMessage(this.#owner.scrub({ type: 'runDeleted', runId } satisfies ReportHostMessage));
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
      case 'exportJson':
      case 'exportTrace':
      case 'exportChunksCsv': {
        const run = this.#runById(m.runId);
        if (!run) { void vscode.window.showErrorMessage(`LLM Profiler: the run ${m.runId} is no longer open in this panel.`); return; }
        await this.#owner.exportRun(run, EXPORT_KINDS[m.type]);
        return;
      }
      case 'exportPng':
        await this.#owner.exportPng(this.#pngName(m.name), m.dataUrl);
        return;
      case 'pinBaseline':
        // only a run this panel shows, and only a stored one (the command says so otherwise)
        if (typeof m.runId === 'string' && this.#runById(m.runId)) await vscode.commands.executeCommand(Command.PinBaseline, m.runId);
        return;
      case 'openDropped': {
        // strings only, a few: the page is not trusted to send more
        const files = Array.isArray(m.files) ? m.files.filter((f): f is string => typeof f === 'string' && f.length > 0 && f.length < 4096).slice(0, 10) : [];
        if (files.length) await vscode.commands.executeCommand(Command.OpenBenchmarkResult, undefined, files);
        return;
      }
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

  /** A chart's file name from the page ("<run id>-timeline.png") said with its run's name and date, as the other exports are. */
  #pngName(name: string): string {
    const s = this.#shown;
    const runs = s.kind === 'run' ? [s.run, s.compareWith] : s.kind === 'live' ? [s.run] : [];
    const run = runs.find((r) => r !== undefined && name.startsWith(`${r.id}-`));
    return run ? runFileName(nameParts(run), ` ${name.slice(run.id.length + 1)}`) : name;
  }
}

/** Whether a panel shows this run (alone, in a compare, or live). */
function shows(s: Shown, runId: string): boolean {
  return (s.kind === 'run' && (s.run.id === runId || s.compareWith?.id === runId)) || (s.kind === 'live' && s.run.id === runId);
}

/** A run's name: an imported run's says the tool and the file ("GuideLLM sweep rate 1–8/s on benchmarks.json"). */
function nameParts(run: RunFile): ReturnType<typeof runNameParts> {
  return importedNameParts(run) ?? runNameParts(run);
}

/** A tab's title: the run's name (runText.ts runName), two told apart, "(deleted)" when its file is gone. */
function titleOf(s: Shown, deleted: ReadonlySet<string> = new Set()): string {
  switch (s.kind) {
    case 'empty': return 'LLM Profiler report';
    case 'error': return 'LLM Profiler: cannot show run';
    case 'live': return `● ${runName(runNameParts(s.run), { clock: hostClock() })}`;
    case 'run': {
      const a = s.run;
      const b = s.compareWith;
      if (!b) return `${runName(nameParts(a), { clock: hostClock() })}${deleted.has(a.id) ? ' (deleted)' : ''}`;
      const title = compareName({ ...nameParts(a), id: a.id }, { ...nameParts(b), id: b.id }, hostClock());
      const gone = [a, b].filter((r) => deleted.has(r.id));
      return gone.length === 0 ? title : `${title} (${gone.length === 2 ? 'both deleted' : `${gone[0] === a ? 'A' : 'B'} deleted`})`;
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
  /** Every message to a page, and every export, passes the log's scrubber: no secret this session knows reaches a webview or a file. */
  readonly #log: Pick<Log, 'forWebview' | 'scrubber'>;

  constructor(context: vscode.ExtensionContext, loadRun: LoadRun, log: Pick<Log, 'forWebview' | 'scrubber'>) {
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

  /** A run's file was deleted: every panel showing it (alone or in a compare) says so. */
  markDeleted(runId: string): void {
    for (const p of this.#panels) p.markDeleted(runId);
  }

  scrub<T>(value: T): T { return this.#log.forWebview(value); }

  /**
   * Where a new report opens: as a tab in the group of the report opened last, once there is one,
   * unless the editor being typed in is in that group (the report would cover it, and ▶ Profile's
   * ${selection} with it): then beside it. "Beside" alone is beside the active group, so with a report
   * focused each new report took a new group to its right: six reports, six groups, the last pushed
   * past the window's edge, where its page never loaded (seen in the host suite).
   */
  #reportColumn(): vscode.ViewColumn {
    let column: vscode.ViewColumn | undefined;
    for (const p of this.#panels) if (p.panel.viewColumn !== undefined) column = p.panel.viewColumn;
    return column !== undefined && column !== vscode.window.activeTextEditor?.viewColumn ? column : vscode.ViewColumn.Beside;
  }

  #panelFor(key: string, preserveFocus = false): ReportPanel {
    for (const p of this.#panels) {
      if (p.key === key) { p.panel.reveal(undefined, preserveFocus); return p; }
    }
    const panel = vscode.window.createWebviewPanel(REPORT_VIEW_TYPE, 'LLM Profiler report',
      { viewColumn: this.#reportColumn(), preserveFocus },
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
    // requests in flight: their chunks so far, and the deltas gathered for the next liveUpdate
    const streams = new LiveStreams();
    const shown: Shown = { kind: 'live', run, records, streams };
    p.display(shown);
    const throttle = new LiveThrottle<Progress, RequestRecord>((progress, batch) => {
      const deltas = streams.take();
      p.postLive({ type: 'liveUpdate', runId: run.id, progress, records: batch, ...(deltas.length ? { streams: deltas } : {}) });
    }, 100);
    let ended = false;
    return {
      // closed mid-run: let go of it (the run goes on, and is saved and offered when it ends)
      get closed() { return p.disposed; },
      update: (withStreams, recs) => {
        if (ended || p.disposed || p.shown !== shown) return; // the panel was closed, or moved on to something else
        const { streams: deltas, ...progress } = withStreams;
        streams.add(deltas, recs);
        for (const r of recs) records.set(r.index, r);
        shown.progress = progress;
        throttle.update(progress, recs);
      },
      end: (final) => {
        if (ended) return !p.disposed;
        ended = true;
        if (p.disposed) { throttle.close(false); return false; }
        throttle.close(true);
        if (p.shown !== shown) return true;
        p.postLive({ type: 'liveEnd', runId: run.id, run: final });
        // later redraws (a hidden panel shown again, a reload) show the finished run
        p.display({ kind: 'run', run: final }, false);
        return true;
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

  /** A file name (runFileName's: no character a file system refuses) in the first workspace folder, else the home folder. */
  #defaultUri(name: string): vscode.Uri {
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri;
    return folder ? vscode.Uri.joinPath(folder, name) : vscode.Uri.file(join(homedir(), name));
  }

  async exportRun(run: RunFile, kind: ExportKind): Promise<void> {
    const how = EXPORT_FILES[kind];
    const target = await vscode.window.showSaveDialog({
      // the run's name, as its tab and the run list show it, with its date: "c=8 · 64 req on vllm 2026-12-05 10-14.csv"
      defaultUri: this.#defaultUri(runFileName(nameParts(run), how.suffix)),
      filters: how.filters,
      title: how.title,
    });
    if (!target) return;
    try {
      const m = await loadFiles();
      // a run opened from a file, or a live one, has not been through the scrubber: every export goes through it here
      const safe = scrubRun(run, this.#log.scrubber);
      if (kind === 'csv') await writeFile(target.fsPath, m.requestsToCsv(safe), 'utf8');
      else if (kind === 'chunks') await writeFile(target.fsPath, m.chunksToCsv(safe), 'utf8');
      else if (kind === 'trace') await writeFile(target.fsPath, m.traceToJson(safe), 'utf8');
      else await m.writeRunFile(target.fsPath, safe, this.#log.scrubber);
      void saidSaved(`LLM Profiler: saved ${target.fsPath}`, target);
    } catch (e) {
      void vscode.window.showErrorMessage(`LLM Profiler: could not save ${target.fsPath}: ${(e as Error).message}`);
    }
  }

  async exportPng(name: string, dataUrl: string): Promise<void> {
    const m = /^data:image\/png;base64,([A-Za-z0-9+/=]+)$/.exec(dataUrl);
    if (!m) { void vscode.window.showErrorMessage('LLM Profiler: the chart could not be exported (not a PNG).'); return; }
    const target = await vscode.window.showSaveDialog({
      defaultUri: this.#defaultUri(safeFileName(name.endsWith('.png') ? name : `${name}.png`)),
      filters: { 'PNG image': ['png'] },
      title: 'Save the chart as PNG',
    });
    if (!target) return;
    try {
      await writeFile(target.fsPath, Buffer.from(m[1]!, 'base64'));
      void saidSaved(`LLM Profiler: saved the chart as ${target.fsPath}`, target);
    } catch (e) {
      void vscode.window.showErrorMessage(`LLM Profiler: could not save ${target.fsPath}: ${(e as Error).message}`);
    }
  }
}
