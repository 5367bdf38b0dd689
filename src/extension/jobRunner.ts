// The one place the extension runs a job (a profile, a sweep, the prefill dial, an A/B): one at a time, under
// a cancellable progress notification and a status bar item, live in the report panel when asked,
// stored when done, and opened. The job itself is built and executed by the engine (src/jobs),
// loaded on the first run.
import * as vscode from 'vscode';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { journalFileName, newRunId } from '../engine/core/runId';
import { displayUrl, scrubRun, secretsOf } from '../engine/core/redact';
import type { ScrubbedRun } from '../engine/core/redact';
import type { NetworkSpec, Progress, RequestRecord, RunFile } from '../engine/core/types';
import type { JobProgress } from '../jobs/execute';
import type { AbResult } from '../engine/run/abRun';
import type { AbJob, BuiltJob } from '../jobs/job';
import type { JobJournal } from '../jobs/journal';
import type { LocalServerHandle, LocalServerOptions } from '../localServer/types';
import { proxyNotice } from '../present/endpointText';
import { describeJob, pulledInLine } from '../present/jobText';
import { progressLine, summaryText } from '../present/runText';
import { sentNotes } from '../present/sentText';
import { allFailedLine } from '../present/outcomeText';
import { formatMs } from '../present/units';
import { Disposable } from './dispose';
import { loadEngine } from './lazy';
import type { EngineModule } from './lazy';
import { startFailure } from './bundledBackend';
import type { LocalServerManager } from './localServerManager';
import type { ConfigService } from './config';
import type { Log } from './log';
import type { NetworkSettings } from './proxySettings';
import type { LiveReport, ReportPanels } from './reportPanel';
import type { RunsModel } from './runsModel';

/** The context key that is true while a run is in progress (package.json's when-clauses read it). */
export const RUN_IN_PROGRESS = 'llmProfiler.runInProgress';

export interface JobRequest {
  /** Short, for the status bar and the log: "my-vllm", "prefill dial (local server)". */
  readonly label: string;
  /** The notification's title: "Profiling my-vllm". */
  readonly title: string;
  /** What the error message says failed (default: "<label> failed"). */
  readonly failed?: string;
  /** Builds the job once the engine is loaded; a UsageError is shown as the reason nothing ran. */
  build(engine: EngineModule): Promise<BuiltJob> | BuiltJob;
  readonly apiKey?: string;
  /** Extra fields stored in the run file (a CodeLens run's `promptRef`). */
  readonly extras?: Readonly<Record<string, unknown>>;
  /** Show the run live in the report panel (a single workload; a sweep or dial opens when it ends). */
  readonly live?: boolean;
}

/** An interleaved A/B job: two sides, one workload (src/jobs/ab.ts). */
export interface AbRequest extends Pick<JobRequest, 'label' | 'title' | 'failed'> {
  build(engine: EngineModule): Promise<{ readonly job: AbJob; readonly warnings: readonly string[] }>;
  /** Side A's key, then B's. */
  readonly apiKeys: readonly [string | undefined, string | undefined];
}

export interface AbOutcome {
  readonly a: RunOutcome;
  readonly b: RunOutcome;
}

export interface RunOutcome {
  readonly runId: string;
  readonly path: string;
  readonly cancelled: boolean;
}

export interface ActiveRun {
  readonly runId: string;
  readonly label: string;
  readonly progress?: JobProgress;
  /** "via proxy http://p:3128" when the requests go through one. */
  readonly via?: string;
}

export class JobRunner extends Disposable {
  #active: (ActiveRun & { abort: AbortController }) | undefined;
  /** The value last given to the `llmProfiler.runInProgress` context key. */
  #contextSet = false;
  /** Insecure-certificate warnings already shown as a notification this session (every run logs its own). */
  readonly #warned = new Set<string>();
  /** Servers a job started itself (the dial's, one per chunk size): stopped if the extension goes away. */
  readonly #servers = new Set<LocalServerHandle>();
  readonly #item: vscode.StatusBarItem;
  readonly #onDidChange = this._register(new vscode.EventEmitter<void>());
  /** Fires when a run starts, progresses, or ends. */
  readonly onDidChange = this.#onDidChange.event;
  readonly #onDidFinish = this._register(new vscode.EventEmitter<RunOutcome>());
  readonly onDidFinish = this.#onDidFinish.event;

  constructor(
    private readonly runs: RunsModel,
    private readonly reports: ReportPanels | undefined,
    private readonly localServer: LocalServerManager,
    private readonly log: Log,
    private readonly network: NetworkSettings,
    /** For `llmProfiler.otlp.endpoint`, read when each run ends. */
    private readonly config?: Pick<ConfigService, 'current'>,
  ) {
    super();
    this.#item = this._register(vscode.window.createStatusBarItem('llmProfiler.run', vscode.StatusBarAlignment.Left, 49));
    this.#item.name = 'LLM Profiler: run in progress';
  }

  get active(): ActiveRun | undefined {
    return this.#active && {
      runId: this.#active.runId,
      label: this.#active.label,
      ...(this.#active.progress ? { progress: this.#active.progress } : {}),
      ...(this.#active.via ? { via: this.#active.via } : {}),
    };
  }

  cancel(): void {
    this.#active?.abort.abort();
  }

  /**
   * Whether a run is in progress, said (with a way to cancel it) when one is: a command that starts a
   * run asks this before its pickers, so no one answers three questions to be told "not now".
   */
  busy(): boolean {
    const a = this.#active;
    if (!a) return false;
    this.log.info(`run not started: a run is already in progress (${a.label})`);
    void vscode.window.showWarningMessage(`LLM Profiler: a run is already in progress (${a.label}). One run at a time: cancel it first, or wait for it to end.`, 'Cancel it').then((pick) => {
      if (pick && this.#active?.runId === a.runId) this.cancel();
    });
    return true;
  }

  /** One run at a time: takes the slot for a new run, or offers to cancel the one in progress. */
  async #claim(label: string): Promise<{ runId: string; abort: AbortController } | undefined> {
    if (this.busy()) return undefined;
    const runId = newRunId();
    const abort = new AbortController();
    this.#active = { runId, label, abort };
    this.#changed();
    return { runId, abort };
  }

  /** Runs a job to a stored run file and shows it. Never throws: problems are shown and logged. */
  async run(req: JobRequest): Promise<RunOutcome | undefined> {
    const claimed = await this.#claim(req.label);
    if (!claimed) return undefined;
    const { runId, abort } = claimed;
    let live: LiveReport | undefined;
    let journal: JobJournal | undefined;
    try {
      const engine = await loadEngine();
      const { job, warnings } = await req.build(engine);
      // The URL's own secrets (a gateway's ?key=, user:password@) join the key in the one scrubber.
      const url = job.kind !== 'dial' && job.target.kind === 'endpoint' ? job.target.url : undefined;
      if (job.kind !== 'dial' && job.target.kind === 'endpoint') this.log.addSecrets(secretsOf(job.target));
      // Proxy and certificates from the settings as they are now; a bad one stops the run here, named.
      const network = await this.network.forUrl(engine, url);
      for (const w of warnings) this.log.warn(`run ${runId}: ${w}`);
      this.log.info(`run ${runId}: ${describeJob(job)}${req.apiKey ? ', with an API key' : ''}`);
      const pulled = pulledInLine(job);
      if (pulled !== undefined) this.log.info(`run ${runId}: ${pulled}`);
      if (url !== undefined) this.#networkNotes(engine, runId, url, network);
      journal = await this.#journal(engine, job, runId);
      const run = await this.#execute(engine, job, req, runId, abort, network, (l) => (live = l), journal);
      const otlp = this.config?.current.otlpEndpoint;
      // The OTLP headers' values are secrets too, known before the run is scrubbed for its exports.
      if (otlp !== undefined) this.log.addSecrets(Object.values(engine.otlpHeadersFromEnv(process.env)));
      // The engine scrubbed what the server said; this is the one scrubber every export goes through
      // (the stored file, the report's exports, OTLP): a server may have echoed a key as its model name.
      const stored = scrubRun(req.extras ? { ...run, ...req.extras } : run, this.log.scrubber);
      const path = await this.runs.save(stored);
      await journal?.discard();
      this.log.info(`run ${runId}: ${run.cancelled ? 'cancelled; kept what finished' : 'done'}: ${summaryText(run)}; saved to ${path}`);
      for (const v of run.summary.verdicts ?? []) this.log.info(`run ${runId}: ${v.message}`);
      for (const n of sentNotes(run)) this.log.warn(`run ${runId}: ${n}`);
      if (otlp !== undefined) void this.#sendOtlp(engine, stored, otlp);
      const outcome: RunOutcome = { runId: run.id, path, cancelled: Boolean(run.cancelled) };
      this.#onDidFinish.fire(outcome);
      const liveReport = live as LiveReport | undefined;
      const allFailed = allFailedLine(stored);
      if (allFailed) this.#allFailedToast(runId, allFailed);
      // the live report closed mid-run: the run is saved all the same, and a toast offers it
      if (liveReport && !liveReport.end(stored)) void this.#savedToast(stored, path);
      else if (liveReport) { /* shown where it ran */ }
      else if (this.reports) this.reports.show(stored);
      else void this.#summaryToast(stored, path);
      return outcome;
    } catch (err) {
      await journal?.abandon().catch(() => undefined);
      const message = this.#failed(err, runId, req);
      // in the live report's place, unless the user closed it
      const liveReport = live as LiveReport | undefined;
      if (liveReport && !liveReport.closed) this.reports?.showError(message);
      return undefined;
    } finally {
      if (this.#active?.runId === runId) this.#active = undefined;
      this.#changed();
    }
  }

  /** Says why a job failed (logged, and shown with a way to its setting or the log); returns the message, scrubbed. */
  #failed(err: unknown, runId: string, req: Pick<JobRequest, 'label' | 'failed'>): string {
    const message = this.log.redact((err as Error).message ?? String(err));
    this.log.error(`run ${runId} (${req.label}) failed: ${message}`);
    // A setting that cannot be used (http.proxy, llmProfiler.tls.caFile…) is named first: offer to open it.
    const setting = (err as Error).name === 'UsageError' ? /^(llmProfiler\.[\w.]+|http\.\w+)\b/.exec(message)?.[1] : undefined;
    const actions = setting ? ['Open settings', 'Show log'] : ['Show log'];
    void vscode.window.showErrorMessage(`LLM Profiler: ${req.failed ?? `${req.label} failed`}: ${message.split('\n')[0]}`, ...actions).then((p) => {
      if (p === 'Open settings') void vscode.commands.executeCommand('workbench.action.openSettings', setting);
      else if (p) this.log.show();
    });
    return message;
  }

  /**
   * Runs an interleaved A/B job (two endpoints, or one with two models) to two stored run files, and
   * opens them side by side in the report's Compare. One slot, as any run; never throws.
   */
  async runAb(req: AbRequest): Promise<AbOutcome | undefined> {
    const claimed = await this.#claim(req.label);
    if (!claimed) return undefined;
    const { runId, abort } = claimed;
    try {
      const engine = await loadEngine();
      const { job, warnings } = await req.build(engine);
      for (const t of job.targets) if (t.kind === 'endpoint') this.log.addSecrets(secretsOf(t));
      // each side's proxy and certificates from the settings as they are now
      const url = (i: number) => { const t = job.targets[i]!; return t.kind === 'endpoint' ? t.url : undefined; };
      const networks = [await this.network.forUrl(engine, url(0)), await this.network.forUrl(engine, url(1))] as const;
      for (const w of warnings) this.log.warn(`run ${runId}: ${w}`);
      this.log.info(`run ${runId}: A/B in ${job.blocks} blocks a side, ${job.workload.requests} measured requests a side: ${req.label}`);
      const result = await this.#executeAb(engine, job, req, [runId, newRunId()], abort, networks);
      const [a, b] = [scrubRun(result.a, this.log.scrubber), scrubRun(result.b, this.log.scrubber)];
      const paths = [await this.runs.save(a), await this.runs.save(b)];
      for (const [i, run] of [a, b].entries()) this.log.info(`run ${run.id} (${i ? 'B' : 'A'}): ${run.cancelled ? 'cancelled; kept what finished' : 'done'}: ${summaryText(run)}; saved to ${paths[i]}`);
      const outcome: AbOutcome = { a: { runId: a.id, path: paths[0]!, cancelled: Boolean(a.cancelled) }, b: { runId: b.id, path: paths[1]!, cancelled: Boolean(b.cancelled) } };
      this.#onDidFinish.fire(outcome.a);
      this.#onDidFinish.fire(outcome.b);
      this.reports?.show(a, b);
      return outcome;
    } catch (err) {
      this.#failed(err, runId, req);
      return undefined;
    } finally {
      if (this.#active?.runId === runId) this.#active = undefined;
      this.#changed();
    }
  }

  #executeAb(engine: EngineModule, job: AbJob, req: AbRequest, runIds: readonly [string, string], abort: AbortController, networks: readonly [NetworkSpec | undefined, NetworkSpec | undefined]): Thenable<AbResult> {
    const runId = runIds[0];
    return vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: req.title, cancellable: true }, async (progress, token) => {
      token.onCancellationRequested(() => abort.abort());
      const side = (i: 0 | 1) => ({ ...(req.apiKeys[i] !== undefined ? { apiKey: req.apiKeys[i] } : {}), ...(networks[i] !== undefined ? { network: networks[i] } : {}) });
      return engine.executeAbJob(job, {
        runIds,
        signal: abort.signal,
        sides: [side(0), side(1)],
        acquireLocalServer: (request) => this.localServer.lease(request),
        startLocalServer: (options) => this.#startServer(engine, options),
        onLog: (line) => this.log.info(`[server] ${line}`),
        onStart: ({ endpoint }, name) => this.log.info(`run ${runId}: ${name}: ${displayUrl(endpoint.url)} (${endpoint.api}${endpoint.model ? `, ${endpoint.model}` : ''})`),
        onProgress: (p) => {
          if (this.#active?.runId !== runId) return;
          this.#active = { ...this.#active, progress: p };
          progress.report({ message: progressLine(p) });
          this.#changed();
        },
      });
    });
  }

  /** Sends a stored run's metrics to the OTLP endpoint of the settings; a failure is logged and shown, never thrown (the run is kept). */
  async #sendOtlp(engine: EngineModule, run: ScrubbedRun, endpoint: string): Promise<void> {
    try {
      const headers = engine.otlpHeadersFromEnv(process.env);
      const timeoutMs = engine.otlpTimeoutFromEnv(process.env);
      const res = await engine.exportRunToOtlp(run, { endpoint, headers, ...(timeoutMs !== undefined ? { timeoutMs } : {}) });
      if (res.ok) {
        this.log.info(`run ${run.id}: OTLP: ${res.requests} request${res.requests === 1 ? '' : 's'} sent to ${res.url}`);
        return;
      }
      const message = `OTLP: could not send the run to ${res.url}: ${res.message}`;
      this.log.warn(`run ${run.id}: ${message}`);
      void vscode.window.showWarningMessage(`LLM Profiler: ${this.log.redact(message)}`, 'Open settings', 'Show log').then((p) => {
        if (p === 'Open settings') void vscode.commands.executeCommand('workbench.action.openSettings', 'llmProfiler.otlp.endpoint');
        else if (p) this.log.show();
      });
    } catch (err) {
      this.log.error(`run ${run.id}: OTLP: ${(err as Error).message ?? String(err)}`);
    }
  }

  /** The proxy the requests go through and unchecked certificates, said before the run (the warning as the CLI words it). */
  #networkNotes(engine: EngineModule, runId: string, url: string, network: NetworkSpec | undefined): void {
    const via = engine.proxyFor(url, network);
    if (via !== undefined) {
      this.log.info(`run ${runId}: ${proxyNotice(engine.shownProxy(via), network?.proxySource)}`);
      if (this.#active?.runId === runId) {
        this.#active = { ...this.#active, via: `via proxy ${engine.shownProxy(via)}` };
        this.#changed();
      }
    }
    const insecure = engine.insecureWarning(url, network);
    if (insecure !== undefined) {
      this.log.warn(`run ${runId}: warning: ${insecure}`);
      if (!this.#warned.has(insecure)) {
        this.#warned.add(insecure);
        void vscode.window.showWarningMessage(`LLM Profiler: ${insecure}.`);
      }
    }
  }

  /**
   * A run's or a sweep's journal in the run store: every finished request written as it finishes, so
   * that a window reloaded or an extension host killed mid-run loses nothing (recovery.ts offers it on
   * the next start). Removed once the run file is saved.
   */
  async #journal(engine: EngineModule, job: BuiltJob['job'], runId: string): Promise<JobJournal | undefined> {
    if (job.kind !== 'run' && job.kind !== 'sweep') return undefined;
    const dir = this.runs.store.dir;
    try {
      await mkdir(dir, { recursive: true });
    } catch (e) {
      this.log.warn(`run ${runId}: no journal (${(e as Error).message}): a window closed mid-run would lose it`);
      return undefined;
    }
    return new engine.JobJournal({
      path: join(dir, journalFileName(runId)),
      scrubber: this.log.scrubber,
      onError: (m) => this.log.warn(`run ${runId}: ${m}`),
    });
  }

  #execute(engine: EngineModule, job: BuiltJob['job'], req: JobRequest, runId: string, abort: AbortController, network: NetworkSpec | undefined, onLive: (l: LiveReport) => void, journal?: JobJournal): Thenable<RunFile> {
    return vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: req.title, cancellable: true }, async (progress, token) => {
      token.onCancellationRequested(() => abort.abort());
      let live: LiveReport | undefined;
      let pending: RequestRecord[] = [];
      let reported = 0;
      return engine.executeJob(job, {
        runId,
        signal: abort.signal,
        ...(journal ? { journal } : {}),
        ...(req.apiKey !== undefined ? { apiKey: req.apiKey } : {}),
        ...(network !== undefined ? { network } : {}),
        acquireLocalServer: (request) => this.localServer.lease(request),
        startLocalServer: (options) => this.#startServer(engine, options),
        onLog: (line) => this.log.info(`[server] ${line}`),
        onStart: ({ skeleton, endpoint }) => {
          const via = this.#active?.runId === runId ? this.#active.via : undefined;
          this.log.info(`run ${runId}: ${displayUrl(endpoint.url)} (${endpoint.api}${endpoint.model ? `, ${endpoint.model}` : ''})${via ? ` · ${via}` : ''}`);
          if (req.live && this.reports) onLive((live = this.reports.startLive(skeleton)));
        },
        ...(req.live ? { onRecord: (r: RequestRecord) => { pending.push(r); }, streams: true } : {}),
        onProgress: (p: JobProgress) => {
          if (this.#active?.runId !== runId) return;
          this.#active = { ...this.#active, progress: p };
          const increment = p.total ? ((p.finished - reported) / p.total) * 100 : undefined;
          reported = p.finished;
          progress.report({ message: progressLine(p), increment });
          this.#changed();
          if (live) {
            const batch = pending;
            pending = [];
            live.update(p as Progress, batch);
          }
        },
        onPoint: (p) => this.log.info(`run ${runId}: ${p.label}: ${p.summary.outputTokensPerSecond.toFixed(1)} tok/s, TPOT p50 ${formatMs(p.summary.tpotMs.p50)}`),
        onConfig: (c) => this.log.info(`run ${runId}: ${c.label}: decode TPOT p99 ${formatMs(c.decode.summary.tpotMs.p99)}, ` +
          `stalls ${c.decode.summary.stalls.count} (${formatMs(c.decode.summary.stalls.totalMs)}), long-prompt TTFT p50 ${formatMs(c.long.summary.ttftMs.p50)}`),
        onStatus: (message) => progress.report({ message }),
      });
    });
  }

  /** A server a job starts itself (the prefill dial's): tracked until it stops, so deactivation can stop it. */
  async #startServer(engine: EngineModule, options: LocalServerOptions): Promise<LocalServerHandle> {
    let handle: LocalServerHandle;
    try {
      handle = await engine.startLocalServer({ ...options, onLog: (line) => this.log.info(`[job server] ${line}`) });
    } catch (err) {
      const { message, short } = startFailure(err, options.backend ?? 'bundled');
      this.log.error(`local server: could not start: ${message}`);
      throw new Error(short, { cause: err });
    }
    this.#servers.add(handle);
    if (this.isDisposed) {
      await handle.stop();
      throw new Error('the extension is shutting down');
    }
    return {
      ...handle,
      stop: async () => {
        try { await handle.stop(); } finally { this.#servers.delete(handle); }
      },
    };
  }

  /** Cancels the run and stops any server a job started (deactivation). */
  async stopServers(): Promise<void> {
    this.cancel();
    await Promise.all([...this.#servers].map((h) => h.stop().catch(() => undefined)));
    this.#servers.clear();
  }

  /** Every request failed: said at once, in the words the report's header uses (the report opens too). */
  #allFailedToast(runId: string, line: string): void {
    this.log.warn(`run ${runId}: ${line}`);
    void vscode.window.showErrorMessage(`LLM Profiler: ${this.log.redact(line)}`, 'Show log').then((p) => { if (p) this.log.show(); });
  }

  /** The live report was closed while its run went on: the run was saved; Open shows it. */
  async #savedToast(run: ScrubbedRun, path: string): Promise<void> {
    this.log.info(`run ${run.id}: its live report was closed mid-run; the run is saved to ${path}`);
    const pick = await vscode.window.showInformationMessage(`LLM Profiler: ${run.cancelled ? 'the run was cancelled; what finished was saved' : 'the run finished and was saved'} (its report was closed): ${summaryText(run)}`, 'Open');
    if (pick === 'Open') this.reports?.show(run);
  }

  async #summaryToast(run: RunFile, path: string): Promise<void> {
    const pick = await vscode.window.showInformationMessage(`${run.cancelled ? 'Cancelled: ' : ''}${summaryText(run)}`, 'Open run file');
    if (pick) await vscode.window.showTextDocument(vscode.Uri.file(path));
  }

  #changed(): void {
    const a = this.#active;
    // the palette's "Cancel run" is there while a run is (package.json: when llmProfiler.runInProgress)
    if (Boolean(a) !== this.#contextSet) {
      this.#contextSet = Boolean(a);
      void vscode.commands.executeCommand('setContext', RUN_IN_PROGRESS, this.#contextSet);
    }
    if (!a) this.#item.hide();
    else {
      this.#item.text = `$(pulse) ${a.label}${a.progress ? ` ${progressLine(a.progress)}` : ''}`;
      this.#item.tooltip = `LLM Profiler: run in progress${a.via ? ` (${a.via})` : ''}. Cancel it from its notification, the sidebar or the command "LLM Profiler: Cancel run".`;
      this.#item.command = 'workbench.view.extension.llmProfiler';
      this.#item.show();
    }
    this.#onDidChange.fire();
  }

  override dispose(): void {
    this.cancel();
    for (const h of this.#servers) void h.stop();
    super.dispose();
  }
}
