// Where the user asked to send requests (a configured endpoint, a typed URL, the local server) made
// into a job's target: workspace trust asked for, the API key looked up. No requests here.
import type { ApiKind } from '../engine/core/apis';
import type { Target } from '../jobs/job';
import type { ConfigService } from './config';
import type { EndpointEntry, LocalServerConfig } from './configModel';
import type { Log } from './log';
import type { ApiKeys } from './secrets';
import type { TrustGate } from './trust';

/** What a picker or a command argument names. */
export type Choice =
  | { readonly kind: 'configured'; readonly entry: EndpointEntry }
  /** A typed URL; `api` when the user picked it (its API could not be detected). */
  | { readonly kind: 'url'; readonly url: string; readonly api?: ApiKind }
  | { readonly kind: 'local' };

export interface ResolvedChoice {
  readonly target: Target;
  readonly apiKey?: string;
  /** Short, for the status bar and the log. */
  readonly label: string;
}

/** The id a choice is remembered by (the last target, which a prompt's ▶ Profile uses). */
export function choiceId(c: Choice): string {
  return c.kind === 'configured' ? c.entry.name : c.kind === 'local' ? 'local' : c.url;
}

/** The local server the settings describe, as a job's target (the job raises the slots it needs). */
function localTarget(ls: LocalServerConfig): Target {
  return {
    kind: 'local',
    server: {
      model: ls.modelPath ? { kind: 'file', path: ls.modelPath } : { kind: 'preset', preset: ls.preset },
      backend: ls.backend,
      ...(ls.llamaServerPath ? { llamaServerPath: ls.llamaServerPath } : {}),
      batchSize: ls.batchSize,
      parallel: ls.parallel,
    },
  };
}

/** Where the last target is kept (the workspace's state). */
export interface TargetMemory {
  get<T>(key: string): T | undefined;
  update(key: string, value: unknown): PromiseLike<void>;
}

const LAST_TARGET_KEY = 'llmProfiler.lastTarget';
/** The APIs picked for typed URLs whose API no probe could tell: asked once, not at every run. */
const URL_APIS_KEY = 'llmProfiler.urlApis';

export class Targets {
  readonly #remembered = new Set<() => void>();

  constructor(
    private readonly config: ConfigService,
    private readonly keys: ApiKeys,
    private readonly trust: TrustGate,
    private readonly log: Log,
    private readonly memory?: TargetMemory,
  ) {}

  /** The id of the endpoint the last run used, by any path (palette, sidebar, a prompt's lens). */
  get last(): string | undefined {
    return this.memory?.get<string>(LAST_TARGET_KEY);
  }

  /** Remembers the choice a run used: ▶ Profile and the pickers start from it. */
  async remember(choice: Choice): Promise<void> {
    if (choice.kind === 'url' && choice.api !== undefined) {
      const apis = this.memory?.get<Record<string, ApiKind>>(URL_APIS_KEY) ?? {};
      if (apis[choice.url] !== choice.api) await this.memory?.update(URL_APIS_KEY, { ...apis, [choice.url]: choice.api });
    }
    const id = choiceId(choice);
    if (this.last === id) return;
    await this.memory?.update(LAST_TARGET_KEY, id);
    for (const f of this.#remembered) f();
  }

  /** Called after the last target changed. */
  onDidRemember(f: () => void): { dispose(): void } {
    this.#remembered.add(f);
    return { dispose: () => { this.#remembered.delete(f); } };
  }

  /** A configured endpoint's name, a URL, or 'local'; undefined for a name that is not configured. */
  find(id: string): Choice | undefined {
    if (id === 'local') return { kind: 'local' };
    const entry = this.config.current.endpoints.find((e) => e.name === id);
    if (entry) return { kind: 'configured', entry };
    if (/^https?:\/\//i.test(id)) {
      const api = this.memory?.get<Record<string, ApiKind>>(URL_APIS_KEY)?.[id];
      return { kind: 'url', url: id, ...(api !== undefined ? { api } : {}) };
    }
    return undefined;
  }

  /** Undefined when the user declined (an untrusted workspace's endpoint not confirmed). */
  async resolve(choice: Choice): Promise<ResolvedChoice | undefined> {
    switch (choice.kind) {
      case 'configured': {
        const e = choice.entry;
        const restricted = this.trust.isRestricted(e);
        if (!(await this.trust.allow(e))) {
          this.log.info(`run not started: "${e.name}" (${e.url}) comes from an untrusted workspace and was not confirmed`);
          return undefined;
        }
        const apiKey = await this.keys.resolve(e, restricted);
        const target: Target = {
          kind: 'endpoint',
          name: e.name,
          url: e.url,
          api: e.api,
          ...(e.model !== undefined ? { model: e.model } : {}),
          ...(e.headers ? { headers: e.headers } : {}),
          ...(e.apiKeyHeader ? { apiKeyHeader: e.apiKeyHeader } : {}),
        };
        return { target, ...(apiKey !== undefined ? { apiKey } : {}), label: e.name };
      }
      case 'url':
        return { target: { kind: 'endpoint', name: new URL(choice.url).host, url: choice.url, api: choice.api ?? 'auto' }, label: choice.url };
      case 'local':
        return { target: localTarget(this.config.current.localServer), label: 'local server' };
    }
  }
}
