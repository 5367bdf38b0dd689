// The sidebar webview view: endpoints (reachability, last p50s), the local server, a small workload
// form with a Run button, and recent runs (baselines marked, and runs that regressed against theirs).
// State flows host → webview as one `state` message; the webview posts `ready` first and the host
// holds state until then.
import { isAbsolute, join } from 'node:path';
import * as vscode from 'vscode';
import { presetWorkload, sweepConcurrencies, SWEEP_PROMPT_LENGTHS, SWEEP_RATES, TRAFFIC_DEFAULTS } from '../jobs/presets';
import { REACH_TIMEOUT_MS, type Reach } from '../engine/core/types';
import { reachText } from '../present/endpointText';
import { runName } from '../present/runText';
import type { BaselineService } from './baselineService';
import { regressionLines } from './baselineText';
import { hostClock } from './clock';
import type { RunIndexEntry } from './runStore';
import type { SidebarEndpoint, SidebarFilePurpose, SidebarHostMessage, SidebarRun, SidebarState, SidebarWebviewMessage, SidebarWorkload } from '../shared/protocol';
import type { Log } from './log';
import { Command } from './commands';
import { useLlamaServerBinary } from './commands/localServer';
import type { ConfigService } from './config';
import { isLoopbackUrl } from '../engine/transport/loopback';
import type { EndpointEntry } from './configModel';
import { Disposable } from './dispose';
import { loadEngine } from './lazy';
import { askFile } from './pickers';
import type { JobRunner } from './jobRunner';
import type { ProfileArgs } from './commands/profile';
import { type LocalServerManager } from './localServerManager';
import { BUNDLED_MISSING } from './bundledBackend';
import type { NetworkSettings } from './proxySettings';
import type { RunsModel } from './runsModel';
import type { ApiKeys } from './secrets';
import type { Services } from './services';
import type { Targets } from './targets';
import type { TrustGate } from './trust';
import { newNonce, webviewHtml } from './webviewHtml';

/** How long Check reachability waits for an answer. */

export class SidebarProvider extends Disposable implements vscode.WebviewViewProvider {
  #view: vscode.WebviewView | undefined;
  #ready = false;
  #reachability = new Map<string, 'checking' | 'yes' | 'no'>();
  /** Each endpoint's last check in words ("reachable (23 ms)", "not reachable: cannot connect to http://h:1 (connection refused, …)"). */
  #reachNotes = new Map<string, string>();
  #hasKey = new Map<string, boolean>();
  #pushTimer: ReturnType<typeof setTimeout> | undefined;
  #workload: SidebarWorkload | undefined;
  /** The endpoints as last seen (name → URL): one that appears or moves is checked at once. */
  #known = new Map<string, string>();
  #select: { id: string; seq: number } | undefined;

  private readonly config: ConfigService;
  private readonly keys: ApiKeys;
  private readonly trust: TrustGate;
  private readonly localServer: LocalServerManager;
  private readonly runs: RunsModel;
  private readonly jobs: JobRunner;
  private readonly log: Pick<Log, 'forWebview' | 'info'>;
  private readonly network: NetworkSettings;
  private readonly targets: Pick<Targets, 'last' | 'onDidRemember'>;
  private readonly baselines: Pick<BaselineService, 'verdict' | 'scopesOf' | 'onDidChange'>;

  constructor(private readonly extensionUri: vscode.Uri, s: Pick<Services, 'config' | 'keys' | 'trust' | 'localServer' | 'runs' | 'jobs' | 'log' | 'network' | 'targets' | 'baselines'> & { readonly context?: Pick<vscode.ExtensionContext, 'secrets'> }) {
    super();
    ({ config: this.config, keys: this.keys, trust: this.trust, localServer: this.localServer, runs: this.runs, jobs: this.jobs, log: this.log, network: this.network, targets: this.targets, baselines: this.baselines } = s);
    const push = () => this.schedulePush();
    for (const e of this.config.current.endpoints) this.#known.set(e.name, e.url);
    this._register(this.config.onDidChange(() => { this.#workload = undefined; this.#endpointsChanged(); void this.#refreshKeys(); push(); }));
    this._register(this.targets.onDidRemember(push));
    // a key set or removed from anywhere (the palette, Edit, Remove): the badges follow
    if (s.context) this._register(s.context.secrets.onDidChange(() => { void this.#refreshKeys(); }));
    this._register(this.localServer.onDidChange(push));
    this._register(this.runs.onDidChange(push));
    // a pin, or a comparison with a baseline worked out: the runs' marks follow
    this._register(this.baselines.onDidChange(push));
    this._register(this.jobs.onDidChange(push));
    this._register({ dispose: () => clearTimeout(this.#pushTimer) });
  }

  /** Whether the view is open and its page ready (tests). */
  get isOpen(): boolean { return this.#view !== undefined && this.#ready; }

  resolveWebviewView(view: vscode.WebviewView): void {
    this.#view = view;
    this.#ready = false;
    const dist = vscode.Uri.joinPath(this.extensionUri, 'dist');
    const media = vscode.Uri.joinPath(this.extensionUri, 'media');
    view.webview.options = { enableScripts: true, localResourceRoots: [dist, media] };
    view.webview.html = this.#html(view.webview);
    const subs = [
      view.webview.onDidReceiveMessage((m: SidebarWebviewMessage) => { void this.#onMessage(m); }),
      view.onDidChangeVisibility(() => { if (view.visible) this.schedulePush(); }),
    ];
    view.onDidDispose(() => { for (const s of subs) s.dispose(); if (this.#view === view) { this.#view = undefined; this.#ready = false; } });
    if (!this.runs.loaded) void this.runs.refresh();
    void this.#refreshKeys();
  }

  #html(webview: vscode.Webview): string {
    return webviewHtml({
      cspSource: webview.cspSource,
      nonce: newNonce(),
      scriptUri: webview.asWebviewUri(vscode.Uri.joinPath(this.extensionUri, 'dist', 'webview', 'sidebar.js')).toString(),
      styleUri: webview.asWebviewUri(vscode.Uri.joinPath(this.extensionUri, 'media', 'sidebar.css')).toString(),
      title: 'LLM Profiler',
      state: this.log.forWebview(this.state()),
      clock: hostClock(),
    });
  }

  /** Coalesces bursts of changes (progress ticks) into one message per ~100 ms. */
  schedulePush(): void {
    if (this.#pushTimer) return;
    this.#pushTimer = setTimeout(() => { this.#pushTimer = undefined; this.#push(); }, 100);
  }

  #push(): void {
    if (!this.#view || !this.#ready || this.isDisposed) return;
    const msg: SidebarHostMessage = { type: 'state', state: this.state() };
    void this.#view.webview.postMessage(this.log.forWebview(msg));
  }

  state(): SidebarState {
    const cfg = this.config.current;
    const endpoints: SidebarEndpoint[] = cfg.endpoints.map((e) => {
      const id = `cfg:${e.name}`;
      const last = this.runs.latestForUrl(e.url);
      return {
        id, name: e.name, url: e.url, api: e.api, model: e.model,
        ...(e.origin === 'user' ? { editable: true } : {}),
        ...(isLoopbackUrl(e.url) ? { keyOptional: true } : {}),
        restricted: this.trust.isRestricted(e),
        hasKey: this.#hasKey.get(e.name) ?? false,
        reachable: this.#reachability.get(id),
        ...(this.#reachNotes.has(id) ? { reachNote: this.#reachNotes.get(id)! } : {}),
        lastTtftP50Ms: last?.ttftP50Ms, lastTpotP50Ms: last?.tpotP50Ms,
      };
    });
    const ls = this.localServer;
    const h = ls.handle;
    const localLast = h ? this.runs.latestForUrl(h.url) : undefined;
    const unavailable = ls.bundledMissing ? BUNDLED_MISSING : undefined;
    endpoints.push({
      id: 'local', name: 'Local server', url: h?.url ?? '(not running)', api: 'openai-chat', model: h?.model,
      restricted: false, hasKey: false, reachable: h ? 'yes' : undefined,
      lastTtftP50Ms: localLast?.ttftP50Ms, lastTpotP50Ms: localLast?.tpotP50Ms,
      ...(unavailable ? { unavailable } : {}),
    });
    const last = this.targets.last;
    const lastEndpointId = last === 'local' ? 'local' : last !== undefined && cfg.endpoints.some((e) => e.name === last) ? `cfg:${last}` : undefined;
    const a = this.jobs.active;
    return {
      endpoints,
      localServer: {
        state: ls.state, url: h?.url, model: h?.model, port: h ? Number(new URL(h.url).port) : undefined,
        source: ls.config.modelPath ? ls.config.modelPath.split(/[\\/]/).pop()! : `preset:${ls.config.preset}`,
        parallel: ls.config.parallel, message: ls.message,
        ...(unavailable ? { unavailable } : {}),
      },
      runs: this.runs.runs.slice(0, 30).map((r) => this.#runOf(r)),
      workload: this.#workload ?? {
        concurrency: cfg.workload.concurrency, requests: cfg.workload.requests,
        maxTokens: cfg.workload.maxTokens, promptTokens: cfg.workload.promptTokens,
      },
      trafficDefaults: { ...TRAFFIC_DEFAULTS, sweep: { concurrency: sweepConcurrencies(presetWorkload('sweep', cfg.workload).concurrency), rate: SWEEP_RATES, promptTokens: SWEEP_PROMPT_LENGTHS } },
      running: a ? { runId: a.runId, label: a.label, finished: a.progress?.finished ?? 0, total: a.progress?.total, ttftP50Ms: a.progress?.ttftP50Ms } : undefined,
      problems: [
        ...this.config.problems.map((p) => `${p.setting}: ${p.message}`),
        ...this.runs.problems.map((p) => `skipped ${p.path.split(/[\\/]/).pop()}: ${p.message}`),
      ],
      ...(lastEndpointId ? { lastEndpointId } : {}),
      ...(this.#select ? { select: this.#select } : {}),
    };
  }

  /** A recent run as the list shows it: its figures, whether it is a baseline, and what regressed against its own. */
  #runOf(r: RunIndexEntry): SidebarRun {
    const pinned = this.baselines.scopesOf(r.id);
    const against = this.baselines.verdict(r);
    const regressed = against?.state === 'compared' && against.regressed.length ? regressionLines(against.regressed, against.base, hostClock()) : [];
    return {
      id: r.id, name: runName(r, { clock: hostClock() }), endpointName: r.endpointName, startedAt: r.startedAt, completed: r.completed, failed: r.failed,
      cancelled: r.cancelled, ...(r.interrupted ? { interrupted: true } : {}), ttftP50Ms: r.ttftP50Ms, tpotP50Ms: r.tpotP50Ms, ...(r.network ? { network: r.network } : {}), ...(r.sent ? { sent: r.sent } : {}), ...(r.prompt ? { prompt: r.prompt } : {}),
      ...(pinned.length ? { baselineOf: pinned } : {}), ...(regressed.length ? { regressed } : {}),
    };
  }

  async #refreshKeys(): Promise<void> {
    for (const e of this.config.current.endpoints) this.#hasKey.set(e.name, await this.keys.has(e));
    this.schedulePush();
  }

  /**
   * An endpoint that appeared or moved (Add, Edit, a settings file) is checked at once while the view
   * is open; when it is the only one, the form switches to it.
   */
  #endpointsChanged(): void {
    const now = this.config.current.endpoints;
    const fresh = now.filter((e) => this.#known.get(e.name) !== e.url);
    this.#known = new Map(now.map((e) => [e.name, e.url]));
    if (!fresh.length) return;
    if (fresh.length === 1) this.#selectEndpoint(fresh[0]!.name);
    // a probe is a request: only for a view that shows its dot (the view checks them all when it opens)
    if (this.#view) void this.#checkReachability(fresh);
  }

  #selectEndpoint(name: string): void {
    this.#select = { id: `cfg:${name}`, seq: (this.#select?.seq ?? 0) + 1 };
    this.schedulePush();
  }

  async #checkReachability(only?: readonly EndpointEntry[]): Promise<void> {
    const all = only ?? this.config.current.endpoints;
    for (const e of all) {
      const id = `cfg:${e.name}`;
      // Probing is a request too: an untrusted workspace's endpoint is not contacted unasked.
      if (this.trust.isRestricted(e)) { this.#reachability.delete(id); this.#reachNotes.delete(id); continue; }
      this.#reachability.set(id, 'checking');
    }
    this.schedulePush();
    const engine = await loadEngine();
    await Promise.all(all.filter((e) => !this.trust.isRestricted(e)).map(async (e) => {
      // Through the engine's client, as every request: no key, no redirect followed; through the proxy the settings name.
      const network = await this.network.forProbe(engine, e.url);
      const answer: Reach = network === null
        ? { reachable: false, code: 'PROXY', message: 'the proxy settings could not be read (see the LLM Profiler log)' }
        : await engine.checkReach(e.url, REACH_TIMEOUT_MS, network);
      const id = `cfg:${e.name}`;
      this.#reachability.set(id, answer.reachable ? 'yes' : 'no');
      this.#reachNotes.set(id, reachText(answer, REACH_TIMEOUT_MS));
      this.log.info(`${e.name}: ${reachText(answer, REACH_TIMEOUT_MS)}`);
    }));
    this.schedulePush();
  }

  /** An open dialog for the form's dataset or trace; the path chosen goes back to the page. */
  async #pickFile(purpose: SidebarFilePurpose): Promise<void> {
    const path = await askFile(purpose);
    if (path === undefined || !this.#view || this.isDisposed) return;
    const msg: SidebarHostMessage = { type: 'pickedFile', purpose, path };
    void this.#view.webview.postMessage(msg);
  }

  async #onMessage(m: SidebarWebviewMessage): Promise<void> {
    switch (m.type) {
      case 'ready':
        this.#ready = true;
        this.#push();
        void this.#checkReachability();
        return;
      case 'run': {
        this.#workload = m.workload;
        const target = m.endpointId === 'local' ? 'local' : m.endpointId.replace(/^cfg:/, '');
        await vscode.commands.executeCommand(Command.ProfileEndpoint, { endpoint: target, ...formJob(m.workload) });
        return;
      }
      case 'openWalkthrough':
        await vscode.commands.executeCommand(Command.GetStarted);
        return;
      case 'pickFile':
        await this.#pickFile(m.purpose);
        return;
      case 'cancelRun':
        this.jobs.cancel();
        return;
      case 'startLocalServer':
        await vscode.commands.executeCommand(Command.StartLocalServer, { parallel: m.parallel });
        return;
      case 'stopLocalServer':
        await vscode.commands.executeCommand(Command.StopLocalServer);
        return;
      case 'comparePrefillChunks':
        await vscode.commands.executeCommand(Command.ComparePrefillChunks);
        return;
      case 'openRun':
        await vscode.commands.executeCommand(Command.OpenRun, m.runId);
        return;
      case 'compareRuns':
        await vscode.commands.executeCommand(Command.CompareRuns, m.runId, m.otherId);
        return;
      case 'deleteRun':
        await vscode.commands.executeCommand(Command.DeleteRun, m.runId);
        return;
      case 'pinBaseline':
        await vscode.commands.executeCommand(Command.PinBaseline, m.runId);
        return;
      case 'unpinBaseline':
        await vscode.commands.executeCommand(Command.UnpinBaseline, m.runId);
        return;
      case 'addEndpoint':
        await vscode.commands.executeCommand(Command.AddEndpoint);
        return;
      case 'editEndpoint':
        await vscode.commands.executeCommand(Command.EditEndpoint, m.endpointId.replace(/^cfg:/, ''));
        return;
      case 'removeEndpoint':
        await vscode.commands.executeCommand(Command.RemoveEndpoint, m.endpointId.replace(/^cfg:/, ''));
        return;
      case 'useLlamaServer':
        await useLlamaServerBinary({ log: this.log });
        return;
      case 'setApiKey':
        await vscode.commands.executeCommand(Command.SetApiKey, m.endpointId.replace(/^cfg:/, ''));
        await this.#refreshKeys();
        return;
      case 'checkEndpoints':
        await this.#checkReachability();
        return;
      default: {
        const never: never = m;
        void never;
      }
    }
  }
}

/** A path typed into the form, relative to the first workspace folder (the extension host's own directory means nothing to the user). */
function inWorkspace(path: string): string {
  if (isAbsolute(path)) return path;
  const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
  return folder ? join(folder, path) : path;
}

function withWorkspacePath<T extends NonNullable<SidebarWorkload['traffic']>>(t: T): T {
  return 'path' in t ? { ...t, path: inWorkspace(t.path) } : t;
}

/**
 * The form's workload as Profile endpoint's arguments: a sweep (its axis's values, `requests` per
 * point), traffic, or single prompts (synthetic, or a dataset's) with the custom preset's figures.
 */
export function formJob(w: SidebarWorkload): Pick<ProfileArgs, 'preset' | 'workload'> {
  // a dataset's prompts keep their own output lengths (a ShareGPT reply's, a line's max_tokens), as `run --dataset F` without --max-tokens
  const figures = { requests: w.requests, ...(w.dataset !== undefined ? { dataset: inWorkspace(w.dataset) } : { maxTokens: w.maxTokens }) };
  if (w.sweep) {
    const v = [...w.sweep.values];
    const axis = w.sweep.axis === 'concurrency' ? { concurrencies: v } : w.sweep.axis === 'rate' ? { rates: v } : { promptLengths: v };
    return { preset: 'sweep', workload: { ...figures, ...(w.sweep.axis === 'promptTokens' ? {} : { promptTokens: w.promptTokens }), ...axis } };
  }
  if (w.traffic) return { preset: 'traffic', workload: { ...w, traffic: withWorkspacePath(w.traffic) } };
  return { preset: 'custom', workload: { concurrency: w.concurrency, promptTokens: w.promptTokens, ...figures } };
}
