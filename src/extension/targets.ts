// Where the user asked to send requests (a configured endpoint, a typed URL, the local server) made
// into a job's target: workspace trust asked for, the API key looked up. No requests here.
import type { Target } from '../jobs/job';
import type { ConfigService } from './config';
import type { EndpointEntry, LocalServerConfig } from './configModel';
import type { Log } from './log';
import type { ApiKeys } from './secrets';
import type { TrustGate } from './trust';

/** What a picker or a command argument names. */
export type Choice =
  | { readonly kind: 'configured'; readonly entry: EndpointEntry }
  | { readonly kind: 'url'; readonly url: string }
  | { readonly kind: 'local' };

export interface ResolvedChoice {
  readonly target: Target;
  readonly apiKey?: string;
  /** Short, for the status bar and the log. */
  readonly label: string;
}

/** The id a choice is remembered by (the last target of a prompt's ▶ Profile). */
export function choiceId(c: Choice): string {
  return c.kind === 'configured' ? c.entry.name : c.kind === 'local' ? 'local' : c.url;
}

/** The local server the settings describe, as a job's target (the job raises the slots it needs). */
export function localTarget(ls: LocalServerConfig): Target {
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

export class Targets {
  constructor(
    private readonly config: ConfigService,
    private readonly keys: ApiKeys,
    private readonly trust: TrustGate,
    private readonly log: Log,
  ) {}

  /** A configured endpoint's name, a URL, or 'local'; undefined for a name that is not configured. */
  find(id: string): Choice | undefined {
    if (id === 'local') return { kind: 'local' };
    const entry = this.config.current.endpoints.find((e) => e.name === id);
    if (entry) return { kind: 'configured', entry };
    if (/^https?:\/\//i.test(id)) return { kind: 'url', url: id };
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
        return { target: { kind: 'endpoint', name: new URL(choice.url).host, url: choice.url, api: 'auto' }, label: choice.url };
      case 'local':
        return { target: localTarget(this.config.current.localServer), label: 'local server' };
    }
  }
}
