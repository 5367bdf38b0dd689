// Where a job's requests go: a URL (its API detected, its model defaulted to the first one it
// lists) or the local server (started for the job, or lent by the caller with enough slots).
import { detectApi, listModels } from '../engine/transport/detect';
import type { EndpointSpec, NetworkSpec } from '../engine/core/types';
import type { LocalServerHandle, LocalServerOptions } from '../localServer/types';
import type { LocalServerRequest, Target } from './job';

/** A local server lent to a job: its endpoint, and what to do when the job is done with it. */
export interface LocalServerLease {
  readonly endpoint: EndpointSpec;
  release(): Promise<void>;
}

export interface ResolveHooks {
  readonly apiKey?: string;
  /** Proxy and certificates for the endpoint (the local server is always reached directly: it is on 127.0.0.1). */
  readonly network?: NetworkSpec;
  readonly signal?: AbortSignal;
  /** The local server for a 'local' target; default: one started for the job and stopped after it. */
  acquireLocalServer?(request: LocalServerRequest): Promise<LocalServerLease>;
  /** Starts a local server; default: the launcher's startLocalServer. */
  startLocalServer?(options: LocalServerOptions): Promise<LocalServerHandle>;
  /** Lines worth showing (the server's log, what was started). */
  onLog?(line: string): void;
}

export interface ResolvedTarget {
  readonly endpoint: EndpointSpec;
  readonly detectedApi: boolean;
  /** Stops what was started for the job; absent when nothing was. */
  readonly release?: () => Promise<void>;
}

/** How long API detection and the model list (when no --model is given) may wait on each GET: remote endpoints can be slow to answer a first one. */
const PROBE_TIMEOUT_MS = 5000;

/** The display name of the local server in run files and lists. */
const LOCAL_SERVER_NAME = 'local server';

export async function startLocalServerFor(request: LocalServerRequest, hooks: ResolveHooks, extra: Partial<LocalServerOptions> = {}): Promise<LocalServerHandle> {
  const start = hooks.startLocalServer ?? (await import('../localServer/launcher')).startLocalServer;
  return start({
    model: request.model,
    backend: request.backend,
    parallel: request.parallel,
    ...(request.llamaServerPath !== undefined ? { llamaServerPath: request.llamaServerPath } : {}),
    ...(request.threads !== undefined ? { threads: request.threads } : {}),
    ...(request.ctxSize !== undefined ? { ctxSize: request.ctxSize } : {}),
    ...(request.slotContext !== undefined ? { slotContext: request.slotContext } : {}),
    ...(request.batchSize !== undefined ? { batchSize: request.batchSize } : {}),
    ...(hooks.onLog ? { onLog: hooks.onLog } : {}),
    ...extra,
  });
}

export function localEndpoint(handle: Pick<LocalServerHandle, 'url' | 'model'>): EndpointSpec {
  return { name: LOCAL_SERVER_NAME, url: handle.url, api: 'openai-chat', model: handle.model };
}

/** The first model the server lists (/v1/models, or /api/tags for Ollama); undefined when it lists none or cannot say. */
async function firstModel(endpoint: Pick<EndpointSpec, 'url' | 'api' | 'headers' | 'apiKeyHeader'>, apiKey: string | undefined, network?: NetworkSpec): Promise<string | undefined> {
  const models = await listModels(endpoint, { timeoutMs: PROBE_TIMEOUT_MS, ...(apiKey ? { apiKey } : {}), ...(network ? { network } : {}) });
  return models[0];
}

/** Resolves a job's target to an endpoint. Throws PreflightError (a one-line reason) when the URL cannot be used. */
export async function resolveTarget(target: Target, hooks: ResolveHooks): Promise<ResolvedTarget> {
  if (target.kind === 'local') {
    if (hooks.acquireLocalServer) {
      const lease = await hooks.acquireLocalServer(target.server);
      return { endpoint: lease.endpoint, detectedApi: false, release: () => lease.release() };
    }
    const handle = await startLocalServerFor(target.server, hooks);
    return { endpoint: localEndpoint(handle), detectedApi: false, release: () => handle.stop() };
  }
  let api = target.api;
  const detectedApi = api === 'auto';
  if (api === 'auto') {
    api = await detectApi(target.url, {
      timeoutMs: PROBE_TIMEOUT_MS,
      ...(hooks.apiKey ? { apiKey: hooks.apiKey } : {}),
      ...(target.apiKeyHeader ? { apiKeyHeader: target.apiKeyHeader } : {}),
      ...(target.headers ? { headers: { ...target.headers } } : {}),
      ...(hooks.network ? { network: hooks.network } : {}),
    });
  }
  const endpoint: EndpointSpec = {
    ...(target.name !== undefined ? { name: target.name } : {}),
    url: target.url,
    api,
    ...(target.headers ? { headers: target.headers } : {}),
    ...(target.apiKeyHeader ? { apiKeyHeader: target.apiKeyHeader } : {}),
  };
  const model = target.model ?? (await firstModel(endpoint, hooks.apiKey, hooks.network));
  return { endpoint: model !== undefined ? { ...endpoint, model } : endpoint, detectedApi };
}
