// The proxy and certificates each job and probe uses: VS Code's http.* settings (http.proxy,
// http.noProxy, http.proxyAuthorization, http.proxyStrictSSL, http.proxySupport,
// http.systemCertificates) and llmProfiler.tls.*, with the environment (HTTPS_PROXY, NO_PROXY,
// NODE_EXTRA_CA_CERTS…) behind them, made into a NetworkSpec by the rules the CLI uses
// (jobs/networkSpec.ts). Read afresh for every job, so a changed setting applies to the next run. The
// proxy's credentials join the log's scrubber before anything could print them.
import { homedir } from 'node:os';
import * as vscode from 'vscode';
import type { NetworkSpec } from '../engine/core/types';
import type { ConfigService } from './config';
import type { EngineModule } from './lazy';
import type { Log } from './log';
import { HTTP_KEYS, networkPlan, wantsSystemCa, type HttpSettings } from './networkModel';

/** VS Code's http.* settings, as the workspace sees them. */
function readHttpSettings(): HttpSettings {
  const c = vscode.workspace.getConfiguration('http');
  const out: Record<string, unknown> = {};
  for (const k of HTTP_KEYS) out[k] = c.get(k);
  return out;
}

/** Where a relative llmProfiler.tls.caFile is looked for: the first workspace folder, else the home folder. */
function baseFolder(): string {
  const f = vscode.workspace.workspaceFolders?.[0];
  return f?.uri.scheme === 'file' ? f.uri.fsPath : homedir();
}

export class NetworkSettings {
  /** Lines already logged once (a setting's problem, what the OS store held): not repeated for every run and probe. */
  readonly #said = new Set<string>();

  constructor(
    private readonly config: Pick<ConfigService, 'current'>,
    private readonly log: Log,
  ) {}

  /**
   * The network for a job or probe whose target is `url` (undefined: the local server, reached
   * directly). Throws the UsageError of a bad setting, naming it (http.proxy, llmProfiler.tls.caFile…).
   */
  async forUrl(engine: Pick<EngineModule, 'buildNetwork' | 'networkSecrets' | 'systemCa'>, url: string | undefined): Promise<NetworkSpec | undefined> {
    if (url === undefined) return undefined;
    const http = readHttpSettings();
    // Secrets first: a message about a bad value must not be the first to print them.
    this.log.addSecrets(
      engine.networkSecrets(
        { ...(typeof http.proxy === 'string' ? { proxy: http.proxy } : {}), ...(typeof http.proxyAuthorization === 'string' ? { proxyAuthorization: http.proxyAuthorization } : {}) },
        process.env,
      ),
    );
    const plan = networkPlan(http, this.config.current.tls, homedir());
    for (const p of plan.problems) this.#once('warn', `settings: ${p.setting}: ${p.message}`);
    let inputs = plan.inputs;
    if (wantsSystemCa(plan, url)) {
      const system = await engine.systemCa();
      if (system.note !== undefined) this.#once('info', `system certificates (http.systemCertificates): ${system.note}`);
      else this.#once('info', `system certificates (http.systemCertificates): ${system.total} in ${system.from}, ${system.ca.length} of them beyond Node's own roots, trusted for https:// endpoints`);
      if (system.ca.length > 0) inputs = { ...inputs, extraCa: { ca: system.ca, source: 'system' } };
    }
    const network = engine.buildNetwork(url, inputs, process.env, baseFolder());
    this.log.addSecrets(engine.networkSecrets(network));
    return network;
  }

  /**
   * For a probe that must not fail loudly (the sidebar's reachability dot): the network, or null when
   * the settings cannot make one (the problem is logged once; the run itself shows it where the user looks).
   */
  async forProbe(engine: Pick<EngineModule, 'buildNetwork' | 'networkSecrets' | 'systemCa'>, url: string): Promise<NetworkSpec | undefined | null> {
    try {
      return await this.forUrl(engine, url);
    } catch (err) {
      this.#once('warn', `cannot reach ${url} as the settings ask: ${(err as Error).message}`);
      return null;
    }
  }

  #once(level: 'info' | 'warn', line: string): void {
    if (this.#said.has(line)) return;
    this.#said.add(line);
    this.log[level](line);
  }
}
