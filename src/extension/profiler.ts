// "Profile endpoint": pick a target and a workload, run the engine under a cancellable progress
// notification, store the run, open the report. The engine loads on the first run, not at activation.
import { randomBytes } from 'node:crypto';
import * as vscode from 'vscode';
import type { DialServer, PrefillDialSpec } from '../engine/sweep';
import type { EndpointSpec, Progress, Prompt, RequestRecord, RunFile, SloSpec } from '../engine/types';
import type { LocalServerHandle } from '../localServer/types';
import type { EndpointEntry, PresetId, WorkloadConfig } from './configModel';
import { presetOverrides, validatePositiveInt } from './configModel';
import { redactHeaders, urlWithoutCredentials } from '../engine/redact';
import type { ConfigService } from './config';
import { Disposable } from './dispose';
import { formatMs, progressLine, summaryText } from './format';
import { startFailure, type LocalServerManager } from './localServerManager';
import type { Log } from './log';
import type { LiveReportLike, ReportHost } from './reportHost';
import { PROMPT_REF_KEY, type PromptRef } from './runStore';
import type { RunsModel } from './runsModel';
import type { ApiKeys } from './secrets';
import type { TrustGate } from './trust';
import { loadEngine } from './engineLoader';

export type Target =
  | { readonly kind: 'configured'; readonly entry: EndpointEntry }
  | { readonly kind: 'url'; readonly url: string }
  | { readonly kind: 'local' };

export interface WorkloadInput {
  /** For the sweep preset: the largest concurrency (the list is 1, 2, 4, … up to it). */
  readonly concurrency?: number;
  /** For the sweep preset: the concurrencies to run, in order (instead of 1, 2, 4, … up to `concurrency`). */
  readonly concurrencies?: readonly number[];
  /** For the sweep preset: stop after a point that shows saturation (default true). */
  readonly stopOnSaturation?: boolean;
  /** For the sweep preset: requests per point. */
  readonly requests?: number;
  readonly maxTokens?: number;
  readonly promptTokens?: number;
}

/** Arguments of the Profile endpoint command when called from code (sidebar, tests, keybindings). */
export interface ProfileArgs {
  /** A configured endpoint's name, a URL, or 'local'. */
  readonly endpoint?: string;
  readonly preset?: PresetId;
  readonly workload?: WorkloadInput;
}

export interface RunOutcome {
  readonly runId: string;
  readonly path: string;
  readonly cancelled: boolean;
}

export interface ActiveRun {
  readonly runId: string;
  readonly label: string;
  readonly progress?: Progress;
}

export interface RunExtras {
  readonly prompts?: readonly Prompt[];
  readonly promptRef?: PromptRef;
  readonly slo?: SloSpec;
}

/** Arguments of the Compare prefill chunk sizes command; every field has the CLI's `prefill-dial` default. */
export interface PrefillDialArgs {
  /** Prefill chunk sizes, tokens per step (default 32, 512). */
  readonly batchSizes?: readonly number[];
  /** Seconds per chunk size (default 12). */
  readonly durationS?: number;
  /** Server slots (default 4): the short decodes take all but one. */
  readonly parallel?: number;
  readonly decodeStreams?: number;
  readonly shortPromptTokens?: number;
  readonly shortMaxTokens?: number;
  readonly longPromptTokens?: number;
  readonly longMaxTokens?: number;
  /** Long prompts per second (default 0.5). */
  readonly longRate?: number;
  /** The synthetic model (default: llmProfiler.localServer.preset); ignored with a modelPath. */
  readonly preset?: 'tiny' | 'small' | 'medium';
}

function newRunId(): string {
  return `${new Date().toISOString().replace(/[:.]/g, '-')}-${randomBytes(3).toString('hex')}`;
}

export class Profiler extends Disposable {
  #active: (ActiveRun & { abort: AbortController }) | undefined;
  /** Servers the prefill dial started (one per chunk size): stopped if the extension goes away mid-dial. */
  readonly #dialServers = new Set<LocalServerHandle>();
  readonly #item: vscode.StatusBarItem;
  readonly #onDidChange = this._register(new vscode.EventEmitter<void>());
  /** Fires when a run starts, progresses, or ends. */
  readonly onDidChange = this.#onDidChange.event;
  readonly #onDidFinish = this._register(new vscode.EventEmitter<RunOutcome>());
  readonly onDidFinish = this.#onDidFinish.event;

  constructor(
    private readonly config: ConfigService,
    private readonly keys: ApiKeys,
    private readonly trust: TrustGate,
    private readonly localServer: LocalServerManager,
    private readonly runs: RunsModel,
    private readonly reports: ReportHost,
    private readonly log: Log,
  ) {
    super();
    this.#item = this._register(vscode.window.createStatusBarItem('llmProfiler.run', vscode.StatusBarAlignment.Left, 49));
    this.#item.name = 'LLM Profiler: run in progress';
  }

  get active(): ActiveRun | undefined {
    return this.#active && { runId: this.#active.runId, label: this.#active.label, progress: this.#active.progress };
  }

  cancel(): void {
    this.#active?.abort.abort();
  }

  /** The whole interactive flow of the Profile endpoint command; args skip the pickers they answer. */
  async profileCommand(args?: ProfileArgs): Promise<RunOutcome | undefined> {
    const target = args?.endpoint ? this.targetFor(args.endpoint) : await this.pickTarget();
    if (!target) return undefined;
    const preset = args?.preset ?? (await this.pickPreset());
    if (!preset) return undefined;
    let input = args?.workload;
    if (preset === 'custom' && !input) {
      input = await this.askCustom(this.config.current.workload);
      if (!input) return undefined;
    }
    return this.run(target, preset, input);
  }

  /** Resolves a name, URL or 'local' to a target; unknown names are reported. */
  targetFor(id: string): Target | undefined {
    if (id === 'local') return { kind: 'local' };
    const entry = this.config.current.endpoints.find((e) => e.name === id);
    if (entry) return { kind: 'configured', entry };
    if (/^https?:\/\//i.test(id)) return { kind: 'url', url: id };
    void vscode.window.showErrorMessage(`LLM Profiler: no endpoint named "${id}" in llmProfiler.endpoints.`);
    return undefined;
  }

  async pickTarget(): Promise<Target | undefined> {
    type Item = vscode.QuickPickItem & { target?: Target; enterUrl?: boolean };
    const items: Item[] = [];
    for (const e of this.config.current.endpoints) {
      const restricted = this.trust.isRestricted(e);
      const last = this.runs.latestForUrl(e.url);
      items.push({
        label: `$(globe) ${e.name}`,
        description: e.url,
        detail: [e.model, e.api === 'auto' ? undefined : e.api, restricted ? 'from an untrusted workspace: asks first, no key' : undefined,
          last?.ttftP50Ms !== undefined ? `last TTFT p50 ${formatMs(last.ttftP50Ms)}` : undefined].filter(Boolean).join(' · ') || undefined,
        target: { kind: 'configured', entry: e },
      });
    }
    const ls = this.localServer;
    items.push({
      label: '$(server-process) Local server',
      description: ls.handle ? ls.handle.url : 'starts it',
      detail: ls.handle ? `running: ${ls.handle.model}` : `llama.cpp on this machine (${ls.config.modelPath ? ls.config.modelPath : `synthetic ${ls.config.preset}`})`,
      target: { kind: 'local' },
    });
    items.push({ label: '$(link) Enter a URL…', enterUrl: true });
    const pick = await vscode.window.showQuickPick(items, { title: 'Profile endpoint', placeHolder: 'Which endpoint?', matchOnDescription: true });
    if (!pick) return undefined;
    if (pick.enterUrl) {
      const url = await vscode.window.showInputBox({
        title: 'Profile endpoint',
        prompt: 'Base URL of an OpenAI-compatible, Ollama or llama.cpp server (no key is sent)',
        placeHolder: 'http://127.0.0.1:8000',
        validateInput: (v) => {
          try {
            const u = new URL(v.trim());
            if (u.protocol !== 'http:' && u.protocol !== 'https:') return 'Use http:// or https://';
            return u.username || u.password ? 'No credentials in the URL: use "LLM Profiler: Set API key" for a configured endpoint' : undefined;
          } catch { return 'Not a URL'; }
        },
      });
      return url ? { kind: 'url', url: url.trim() } : undefined;
    }
    return pick.target;
  }

  async pickPreset(): Promise<PresetId | undefined> {
    const w = this.config.current.workload;
    const q = presetOverrides('quick', w);
    const l = presetOverrides('load', w);
    const s = presetOverrides('sweep', w);
    const items: (vscode.QuickPickItem & { id: PresetId })[] = [
      { id: 'quick', label: 'Quick check', description: `${q.requests} requests, one at a time, ${q.maxTokens} tokens out` },
      { id: 'load', label: 'Load test', description: `${l.requests} requests, ${l.concurrency} concurrent, ${l.maxTokens} tokens out` },
      { id: 'custom', label: 'Custom…', description: 'choose concurrency and requests' },
      { id: 'sweep', label: 'Sweep', description: `concurrency 1, 2, 4, … ${s.concurrency}, ${s.requests} requests each: throughput against latency, the operating point` },
    ];
    const pick = await vscode.window.showQuickPick(items, { title: 'Profile endpoint: workload', placeHolder: 'Which workload?' });
    return pick?.id;
  }

  async askCustom(w: WorkloadConfig): Promise<WorkloadInput | undefined> {
    const c = await vscode.window.showInputBox({ title: 'Custom workload (1/2)', prompt: 'Concurrent requests', value: String(w.concurrency), validateInput: (v) => validatePositiveInt(v, 1, 256) });
    if (c === undefined) return undefined;
    const r = await vscode.window.showInputBox({ title: 'Custom workload (2/2)', prompt: 'Measured requests', value: String(w.requests), validateInput: (v) => validatePositiveInt(v, 1, 100_000) });
    if (r === undefined) return undefined;
    return { concurrency: Number(c), requests: Number(r) };
  }

  /** `minParallel`: the local server's slots must be at least this (a sweep's largest concurrency). */
  async #resolve(target: Target, minParallel = 0): Promise<{ spec: EndpointSpec; apiKey?: string; detectedApi?: boolean } | undefined> {
    const { detectApi } = await loadEngine();
    switch (target.kind) {
      case 'configured': {
        const e = target.entry;
        const restricted = this.trust.isRestricted(e);
        if (!(await this.trust.allow(e))) {
          this.log.info(`run not started: "${e.name}" (${e.url}) comes from an untrusted workspace and was not confirmed`);
          return undefined;
        }
        const apiKey = await this.keys.resolve(e, restricted);
        const api = e.api === 'auto' ? await detectApi(e.url, { apiKey, ...(e.apiKeyHeader ? { apiKeyHeader: e.apiKeyHeader } : {}), headers: e.headers as Record<string, string> | undefined, timeoutMs: 5000 }) : e.api;
        return { spec: { name: e.name, url: e.url, api, model: e.model, headers: e.headers, ...(e.apiKeyHeader ? { apiKeyHeader: e.apiKeyHeader } : {}) }, apiKey, detectedApi: e.api === 'auto' };
      }
      case 'url': {
        const api = await detectApi(target.url, { timeoutMs: 5000 });
        return { spec: { name: new URL(target.url).host, url: target.url, api }, detectedApi: true };
      }
      case 'local': {
        const ls = this.localServer;
        if (ls.handle && (ls.parallel ?? 0) < minParallel) {
          // fewer slots than concurrent streams would queue them: the curve would measure the queue
          this.log.info(`local server: restarting with ${minParallel} parallel slots (it has ${ls.parallel})`);
          await ls.stop();
        }
        const handle = ls.handle ?? await vscode.window.withProgress(
          { location: vscode.ProgressLocation.Notification, title: 'LLM Profiler: starting the local server…' },
          () => ls.start(minParallel > ls.config.parallel ? { parallel: minParallel } : {}),
        );
        return { spec: { name: 'local server', url: handle.url, api: 'openai-chat', model: handle.model } };
      }
    }
  }

  /** One run at a time: takes the slot for a new run, or offers to cancel the one in progress. */
  async #claim(label: string): Promise<{ runId: string; abort: AbortController } | undefined> {
    if (this.#active) {
      const pick = await vscode.window.showWarningMessage(`LLM Profiler: a run is already in progress (${this.#active.label}).`, 'Cancel it');
      if (pick) this.cancel();
      return undefined;
    }
    const runId = newRunId();
    const abort = new AbortController();
    this.#active = { runId, label, abort };
    this.#renderItem();
    return { runId, abort };
  }

  /** Runs one workload against a target. Never throws: problems are shown and logged. */
  async run(target: Target, preset: PresetId, input?: WorkloadInput, extras: RunExtras = {}): Promise<RunOutcome | undefined> {
    const label = target.kind === 'configured' ? target.entry.name : target.kind === 'local' ? 'local server' : target.url;
    const claimed = await this.#claim(label);
    if (!claimed) return undefined;
    const { runId, abort } = claimed;
    this.#onDidChange.fire();
    let live: LiveReportLike | undefined;
    try {
      const cfg = this.config.current;
      const o = presetOverrides(preset, cfg.workload, input);
      const { defaultWorkload, defaultConcurrencies } = await loadEngine();
      const sweepValues = preset === 'sweep' ? (input?.concurrencies?.length ? [...input.concurrencies] : defaultConcurrencies(o.concurrency)) : undefined;
      if (sweepValues) {
        const bad = sweepValues.find((v) => !(Number.isInteger(v) && v >= 1 && v <= 256));
        if (bad !== undefined) throw new Error(`bad sweep concurrency ${bad}: each must be a whole number from 1 to 256`);
      }
      const resolved = await this.#resolve(target, sweepValues ? Math.max(...sweepValues) : 0);
      if (!resolved || abort.signal.aborted) return undefined;
      const workload = defaultWorkload({
        mode: { kind: 'closed', concurrency: o.concurrency },
        requests: o.requests,
        warmup: o.warmup,
        maxTokens: o.maxTokens,
        prompt: extras.promptRef ? { kind: 'file', path: extras.promptRef.file } : { kind: 'synthetic', tokens: o.promptTokens, sharedPrefix: false },
        timeoutMs: o.timeoutMs,
        ...(extras.slo ?? cfg.slo ? { slo: extras.slo ?? cfg.slo } : {}),
      });
      this.log.info(`run ${runId}: ${resolved.spec.url} (${resolved.spec.api}${resolved.spec.model ? `, ${resolved.spec.model}` : ''}), ` +
        `${sweepValues ? `sweep over concurrency ${sweepValues.join(', ')}, ${o.requests} requests per point` : `${o.requests} requests at concurrency ${o.concurrency}`}, ` +
        `${o.maxTokens} tokens out${resolved.apiKey ? ', with an API key' : ''}`);

      const reports = await this.reports.panels();
      // a sweep opens in the panel when it ends: the live view shows one workload, not a curve
      if (reports && !sweepValues) {
        const { summarize } = await loadEngine();
        const skeleton: RunFile = {
          format: 'llm-profiler.run', version: 1, id: runId, startedAt: new Date().toISOString(),
          tool: { name: 'llm-profiler', version: String(vscode.extensions.getExtension('llm-profiler.llm-profiler')?.packageJSON.version ?? '0.0.0') },
          endpoint: { ...resolved.spec, url: urlWithoutCredentials(resolved.spec.url), ...(resolved.spec.headers ? { headers: redactHeaders(resolved.spec.headers)! } : {}) },
          workload, requests: [], summary: summarize([], workload),
        };
        live = reports.startLive(skeleton);
      }

      const { runWorkload, runSweep, pointLabel } = await loadEngine();
      let pending: RequestRecord[] = [];
      const run = sweepValues ? await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: `Sweeping ${label}`, cancellable: true },
        async (progress, token) => {
          token.onCancellationRequested(() => abort.abort());
          let point = 0;
          let reported = 0;
          return runSweep(resolved.spec, { dimension: 'concurrency', values: sweepValues, workload, stopOnSaturation: input?.stopOnSaturation ?? true }, {
            apiKey: resolved.apiKey,
            signal: abort.signal,
            runId,
            detectedApi: resolved.detectedApi,
            prompts: extras.prompts,
            onPoint: (p, i) => {
              point = i + 1;
              this.log.info(`run ${runId}: ${p.label}: ${p.summary.outputTokensPerSecond.toFixed(1)} tok/s, TPOT p50 ${formatMs(p.summary.tpotMs.p50)}`);
            },
            onProgress: (p: Progress) => {
              if (!this.#active || this.#active.runId !== runId) return;
              this.#active = { ...this.#active, progress: p };
              const increment = p.total ? ((p.finished - reported) / p.total) * 100 : undefined;
              reported = p.finished;
              const at = sweepValues[Math.min(point, sweepValues.length - 1)]!;
              progress.report({ message: `point ${pointLabel('concurrency', at)} · ${progressLine(p)}`, increment });
              this.#renderItem();
              this.#onDidChange.fire();
            },
          });
        },
      ) : await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: `Profiling ${label}`, cancellable: true },
        async (progress, token) => {
          token.onCancellationRequested(() => abort.abort());
          let reported = 0;
          return runWorkload(resolved.spec, workload, {
            apiKey: resolved.apiKey,
            signal: abort.signal,
            runId,
            detectedApi: resolved.detectedApi,
            prompts: extras.prompts,
            onRecord: (r: RequestRecord) => { pending.push(r); },
            onProgress: (p: Progress) => {
              if (!this.#active || this.#active.runId !== runId) return;
              this.#active = { ...this.#active, progress: p };
              const increment = p.total ? ((p.finished - reported) / p.total) * 100 : undefined;
              reported = p.finished;
              progress.report({ message: progressLine(p), increment });
              this.#renderItem();
              this.#onDidChange.fire();
              if (live) { const batch = pending; pending = []; live.update(p, batch); }
            },
          });
        },
      );
      const stored: RunFile = extras.promptRef ? { ...run, [PROMPT_REF_KEY]: extras.promptRef } : run;
      const path = await this.runs.save(stored);
      this.log.info(`run ${runId}: ${run.cancelled ? 'cancelled; kept what finished' : 'done'}: ${summaryText(run)}; saved to ${path}`);
      const outcome: RunOutcome = { runId: run.id, path, cancelled: Boolean(run.cancelled) };
      this.#onDidFinish.fire(outcome);
      if (live) live.end(stored);
      else if (reports) reports.show(stored);
      else void this.#summaryToast(stored, path);
      return outcome;
    } catch (err) {
      const message = this.log.redact((err as Error).message ?? String(err));
      this.log.error(`run ${runId} failed: ${message}`);
      if (live) (await this.reports.panels())?.showError(message);
      void vscode.window.showErrorMessage(`LLM Profiler: ${message}`, 'Show log').then((p) => { if (p) this.log.show(); });
      return undefined;
    } finally {
      if (this.#active?.runId === runId) this.#active = undefined;
      this.#renderItem();
      this.#onDidChange.fire();
    }
  }

  /**
   * The chunked-prefill dial: the same mixed workload (short decodes plus an occasional long prompt)
   * on the local server at each prefill chunk size, one server per size, stored as one run whose
   * `prefillDial` the report panel shows side by side. Never throws: problems are shown and logged.
   */
  async prefillDial(args: PrefillDialArgs = {}): Promise<RunOutcome | undefined> {
    const label = 'prefill dial (local server)';
    const claimed = await this.#claim(label);
    if (!claimed) return undefined;
    const { runId, abort } = claimed;
    this.#onDidChange.fire();
    try {
      const cfg = this.config.current;
      const ls = cfg.localServer;
      const batchSizes = args.batchSizes?.length ? [...args.batchSizes] : [32, 512];
      const parallel = args.parallel ?? 4;
      if (!(Number.isInteger(parallel) && parallel >= 2)) throw new Error(`the prefill dial needs at least 2 parallel slots (got ${parallel}): one is kept for the long prompts`);
      const decodeStreams = args.decodeStreams ?? parallel - 1;
      if (!(Number.isInteger(decodeStreams) && decodeStreams >= 1 && decodeStreams < parallel)) {
        throw new Error(`decodeStreams must be a whole number from 1 to ${parallel - 1} (one slot is kept for the long prompts), got ${decodeStreams}`);
      }
      const { runPrefillDial, startLocalServer, defaultWorkload } = await loadEngine();
      const spec: PrefillDialSpec = {
        batchSizes,
        decodeStreams,
        shortPromptTokens: args.shortPromptTokens ?? 16,
        shortMaxTokens: args.shortMaxTokens ?? 48,
        longPromptTokens: args.longPromptTokens ?? 1024,
        longMaxTokens: args.longMaxTokens ?? 4,
        longRate: args.longRate ?? 0.5,
        durationS: args.durationS ?? 12,
        workload: defaultWorkload({ warmup: 0, timeoutMs: cfg.workload.timeoutMs, ...(cfg.slo ? { slo: cfg.slo } : {}) }),
      };
      // as the CLI: each slot holds a long prompt with room to spare (a synthetic word can be more than one token)
      const ctxSize = Math.max(2048, parallel * (2 * spec.longPromptTokens + spec.longMaxTokens + 256));
      this.log.info(`run ${runId}: prefill dial on the local server at chunk sizes ${batchSizes.join(', ')}: ${decodeStreams} short decodes + ` +
        `${spec.longPromptTokens}-token prompts at ${spec.longRate}/s, ${spec.durationS} s each`);
      const run = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: 'Comparing prefill chunk sizes', cancellable: true },
        async (progress, token) => {
          token.onCancellationRequested(() => abort.abort());
          let current = batchSizes[0]!;
          return runPrefillDial(spec, {
            signal: abort.signal,
            runId,
            startServer: async (batchSize): Promise<DialServer> => {
              current = batchSize;
              progress.report({ message: `batch ${batchSize} · starting the local server…` });
              const h = await startLocalServer({
                backend: ls.backend,
                model: ls.modelPath ? { kind: 'file', path: ls.modelPath } : { kind: 'preset', preset: args.preset ?? ls.preset },
                port: 0,
                parallel,
                batchSize,
                ctxSize,
                llamaServerPath: ls.llamaServerPath,
                onLog: (line: string) => this.log.info(`[dial server] ${line}`),
              }).catch((err: unknown) => {
                const { message, short } = startFailure(err, ls.backend);
                this.log.error(`local server (batch ${batchSize}): could not start: ${message}`);
                throw new Error(short);
              });
              this.#dialServers.add(h);
              if (this.isDisposed) { await h.stop(); throw new Error('the extension is shutting down'); }
              return {
                endpoint: { name: 'local server', url: h.url, api: 'openai-chat', model: h.model },
                stop: async () => { try { await h.stop(); } finally { this.#dialServers.delete(h); } },
              };
            },
            onProgress: (p: Progress) => {
              if (!this.#active || this.#active.runId !== runId) return;
              this.#active = { ...this.#active, progress: p };
              progress.report({ message: `batch ${current} · ${progressLine(p)}` });
              this.#renderItem();
              this.#onDidChange.fire();
            },
            onConfig: (c) => this.log.info(`run ${runId}: ${c.label}: decode TPOT p99 ${formatMs(c.decode.summary.tpotMs.p99)}, ` +
              `stalls ${c.decode.summary.stalls.count} (${formatMs(c.decode.summary.stalls.totalMs)}), long-prompt TTFT p50 ${formatMs(c.long.summary.ttftMs.p50)}`),
          });
        },
      );
      const path = await this.runs.save(run);
      this.log.info(`run ${runId}: prefill dial ${run.cancelled ? 'cancelled; kept what finished' : 'done'}; saved to ${path}`);
      const outcome: RunOutcome = { runId: run.id, path, cancelled: Boolean(run.cancelled) };
      this.#onDidFinish.fire(outcome);
      const reports = await this.reports.panels();
      if (reports) reports.show(run);
      else void this.#summaryToast(run, path);
      return outcome;
    } catch (err) {
      const message = this.log.redact((err as Error).message ?? String(err));
      this.log.error(`run ${runId} (prefill dial) failed: ${message}`);
      void vscode.window.showErrorMessage(`LLM Profiler: the prefill dial failed: ${message.split('\n')[0]}`, 'Show log').then((p) => { if (p) this.log.show(); });
      return undefined;
    } finally {
      if (this.#active?.runId === runId) this.#active = undefined;
      this.#renderItem();
      this.#onDidChange.fire();
    }
  }

  /** Stops any server the prefill dial still has running (deactivation). */
  async stopDialServers(): Promise<void> {
    this.cancel();
    await Promise.all([...this.#dialServers].map((h) => h.stop().catch(() => undefined)));
    this.#dialServers.clear();
  }

  async #summaryToast(run: RunFile, path: string): Promise<void> {
    const pick = await vscode.window.showInformationMessage(`${run.cancelled ? 'Cancelled: ' : ''}${summaryText(run)}`, 'Open run file');
    if (pick) await vscode.window.showTextDocument(vscode.Uri.file(path));
  }

  #renderItem(): void {
    const a = this.#active;
    if (!a) { this.#item.hide(); return; }
    this.#item.text = `$(pulse) ${a.label}${a.progress ? ` ${progressLine(a.progress)}` : ''}`;
    this.#item.tooltip = 'LLM Profiler: run in progress. Cancel it from its notification or the sidebar.';
    this.#item.command = 'workbench.view.extension.llmProfiler';
    this.#item.show();
  }

  override dispose(): void {
    this.cancel();
    for (const h of this.#dialServers) void h.stop();
    super.dispose();
  }
}
