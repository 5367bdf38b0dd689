// The local llama.cpp-backed server as the extension sees it: start/stop, its state, a status bar
// item (model and port; click to stop). The launcher and node-llama-cpp load on first start only.
// The server is stopped when the extension deactivates.
import * as vscode from 'vscode';
import type { LocalServerRequest } from '../jobs/job';
import type { LocalServerLease } from '../jobs/resolve';
import { DEFAULT_SLOT_CONTEXT } from '../localServer/defaults';
import type { LocalServerHandle } from '../localServer/types';
import { Command } from './commands';
import type { LocalServerConfig } from './configModel';
import { Disposable } from './dispose';
import type { Log } from './log';
import { loadEngine } from './lazy';
import { bundledBackendAvailable, startFailure } from './bundledBackend';


export type LocalServerState = 'stopped' | 'starting' | 'running' | 'stopping' | 'error';

export class LocalServerManager extends Disposable {
  #state: LocalServerState = 'stopped';
  #handle: LocalServerHandle | undefined;
  /** The parallel slots the running server was started with (a sweep needs one per concurrent stream). */
  #parallel: number | undefined;
  /** The context each slot of the running server holds (a job's longest prompt and its max tokens must fit). */
  #slotContext: number | undefined;
  #starting: Promise<LocalServerHandle> | undefined;
  /** Jobs running against the server now (leases not released). */
  #leases = 0;
  #startingParallel = 0;
  #startingSlotContext = 0;
  #message: string | undefined;
  #config: LocalServerConfig;
  readonly #item: vscode.StatusBarItem;
  readonly #onDidChange = this._register(new vscode.EventEmitter<void>());
  readonly onDidChange = this.#onDidChange.event;

  constructor(config: LocalServerConfig, private readonly log: Log) {
    super();
    this.#config = config;
    this.#item = this._register(vscode.window.createStatusBarItem('llmProfiler.localServer', vscode.StatusBarAlignment.Left, 50));
    this.#item.name = 'LLM Profiler: local server';
  }

  get state(): LocalServerState { return this.#state; }
  get handle(): LocalServerHandle | undefined { return this.#handle; }
  get parallel(): number | undefined { return this.#handle ? this.#parallel : undefined; }
  get slotContext(): number | undefined { return this.#handle ? this.#slotContext : undefined; }
  get message(): string | undefined { return this.#message; }
  get config(): LocalServerConfig { return this.#config; }
  /** The settings ask for the bundled backend and this install has none: not offered first, and a start says what to do instead. */
  get bundledMissing(): boolean { return this.#config.backend === 'bundled' && !bundledBackendAvailable(); }

  /** New settings apply at the next start. */
  setConfig(config: LocalServerConfig): void {
    this.#config = config;
    this.#onDidChange.fire();
  }

  /** Starts the server (or returns the running one). Rejects with a message fit for the user. */
  start(overrides: Partial<Pick<LocalServerConfig, 'parallel'>> & { readonly slotContext?: number } = {}): Promise<LocalServerHandle> {
    if (this.#handle) return Promise.resolve(this.#handle);
    if (this.#starting) {
      // A start already under way with fewer slots than this caller needs would make it measure a
      // queue; with smaller slots, its prompts would not fit.
      const want = overrides.parallel;
      const fits = overrides.slotContext === undefined || overrides.slotContext <= this.#startingSlotContext;
      if ((want === undefined || want <= this.#startingParallel) && fits) return this.#starting;
      return this.#starting.then(
        async () => { await this.stop(); return this.start(overrides); },
        () => this.start(overrides),
      );
    }
    const { slotContext = DEFAULT_SLOT_CONTEXT, ...rest } = overrides;
    const c = { ...this.#config, ...rest };
    this.#startingParallel = c.parallel;
    this.#startingSlotContext = slotContext;
    this.#set('starting');
    this.#starting = (async () => {
      try {
        const { startLocalServer } = await loadEngine();
        const source = c.modelPath ? `model ${c.modelPath}` : `synthetic preset "${c.preset}"`;
        this.log.info(`local server: starting (${c.backend}, ${source}, parallel ${c.parallel}, ${slotContext} tokens per slot, batch ${c.batchSize})`);
        const handle = await startLocalServer({
          backend: c.backend,
          model: c.modelPath ? { kind: 'file', path: c.modelPath } : { kind: 'preset', preset: c.preset },
          port: c.port,
          parallel: c.parallel,
          slotContext,
          batchSize: c.batchSize,
          llamaServerPath: c.llamaServerPath,
          onLog: (line: string) => this.log.info(`[server] ${line}`),
        });
        if (this.isDisposed) { await handle.stop(); throw new Error('the extension is shutting down'); }
        this.#handle = handle;
        this.#parallel = c.parallel;
        this.#slotContext = handle.slotContext ?? slotContext;
        this.log.info(`local server: running at ${handle.url} (model ${handle.model}, pid ${handle.pid})`);
        void handle.exited.then((code: number | null) => {
          if (this.#handle !== handle) return;
          this.#handle = undefined;
          if (this.#state === 'stopping') return;
          this.log.warn(`local server exited unexpectedly (code ${code})`);
          this.#set('error', `exited with code ${code}`);
        });
        this.#set('running');
        return handle;
      } catch (err) {
        const { message, short } = startFailure(err, c.backend);
        this.log.error(`local server: could not start: ${message}`);
        this.#set('error', short);
        throw new Error(message, { cause: err });
      } finally {
        this.#starting = undefined;
      }
    })();
    return this.#starting;
  }

  /**
   * The server a job on the local target runs against: this one, started if needed (under a
   * progress notification), restarted when it has fewer slots than the job keeps in flight (fewer
   * would queue them and a sweep's curve would measure the queue) or slots too small for the job's
   * longest prompt and its max tokens (every such request would fail with HTTP 400). There is no
   * setting for the context: the job's prompts decide it. It keeps running after the job.
   */
  async lease(request: LocalServerRequest): Promise<LocalServerLease> {
    const slotContext = request.slotContext ?? DEFAULT_SLOT_CONTEXT;
    const restart = this.#restartReason(request, slotContext);
    const was = this.#handle?.url;
    if (restart) {
      this.log.info(`local server: ${restart}`);
      await this.stop();
    }
    const handle = this.#handle ?? await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: restart ? `LLM Profiler: ${restart}…` : 'LLM Profiler: starting the local server…' },
      () => this.start({ ...(request.parallel > this.#config.parallel ? { parallel: request.parallel } : {}), slotContext }),
    );
    // said, not only logged: the server the user started is another process now, on another port
    if (restart && was !== undefined) {
      const moved = was !== handle.url ? `: it now listens at ${handle.url} (was ${was})` : '';
      this.log.info(`local server: restarted${moved}`);
      void vscode.window.showInformationMessage(`LLM Profiler: ${restart}${moved}.`);
    }
    const { localEndpoint } = await loadEngine();
    this.#leases++;
    this.#onDidChange.fire();
    let released = false;
    return {
      endpoint: localEndpoint(handle),
      release: async () => {
        if (released) return;
        released = true;
        this.#leases--;
        this.#onDidChange.fire();
      },
    };
  }

  /**
   * Why the running server cannot take the job as it is, in the words the log and the toast use
   * ("restarting the local server with 8 slots (was 4) for this run's concurrency 8"); undefined when it can.
   */
  #restartReason(request: LocalServerRequest, slotContext: number): string | undefined {
    if (!this.#handle) return undefined;
    if ((this.#parallel ?? 0) < request.parallel) {
      return `restarting the local server with ${request.parallel} slots (was ${this.#parallel}) for this run's concurrency ${request.parallel}`;
    }
    if ((this.#slotContext ?? 0) < slotContext) {
      return `restarting the local server with slots of ${slotContext} tokens (was ${this.#slotContext}) for this run's longest prompt and its max tokens`;
    }
    return undefined;
  }

  /** A run is using the server now (it holds a lease): stopping it would fail that run's requests. */
  get inUse(): boolean { return this.#leases > 0; }

  async stop(): Promise<void> {
    const starting = this.#starting;
    if (starting) await starting.catch(() => undefined);
    const h = this.#handle;
    if (!h) { if (this.#state !== 'stopped') this.#set('stopped'); return; }
    this.#set('stopping');
    try {
      await h.stop();
      this.log.info(`local server: stopped (pid ${h.pid})`);
    } finally {
      this.#handle = undefined;
      this.#slotContext = undefined;
      this.#set('stopped');
    }
  }

  #set(state: LocalServerState, message?: string): void {
    this.#state = state;
    this.#message = message;
    this.#render();
    this.#onDidChange.fire();
  }

  #render(): void {
    const h = this.#handle;
    switch (this.#state) {
      case 'running': {
        const port = h ? new URL(h.url).port : '';
        this.#item.text = `$(server-process) ${h?.model ?? 'local'} :${port}`;
        const slots = this.#parallel !== undefined && this.#slotContext !== undefined ? `, ${this.#parallel} slots of ${this.#slotContext} tokens` : '';
        this.#item.tooltip = `LLM Profiler local server at ${h?.url} (pid ${h?.pid}${slots}). Click to stop.`;
        this.#item.command = Command.StopLocalServer;
        this.#item.show();
        break;
      }
      case 'starting':
        this.#item.text = '$(loading~spin) Local server starting';
        this.#item.tooltip = 'LLM Profiler local server is starting';
        this.#item.command = Command.ShowLog;
        this.#item.show();
        break;
      case 'stopping':
        this.#item.text = '$(loading~spin) Local server stopping';
        this.#item.command = undefined;
        this.#item.show();
        break;
      case 'error':
        this.#item.text = '$(error) Local server';
        this.#item.tooltip = `LLM Profiler local server: ${this.#message ?? 'failed'}. Click for the log.`;
        this.#item.command = Command.ShowLog;
        this.#item.show();
        break;
      case 'stopped':
        this.#item.hide();
        break;
    }
  }

  override dispose(): void {
    // The caller awaits stop() first on deactivate; this is the last resort.
    const h = this.#handle;
    if (h) void h.stop();
    super.dispose();
  }
}
