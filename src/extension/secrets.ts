// API keys: in SecretStorage (keyed by endpoint name, remembering the URL origin they were set for)
// or in an environment variable named by the endpoint's settings. Never in settings, run files,
// logs or webviews. Endpoints that an untrusted workspace defined get no key at all.
import type * as vscode from 'vscode';
import { keyOrigin, type EndpointEntry } from './configModel';
import type { Log } from './log';

const PREFIX = 'llmProfiler.apiKey:';

interface StoredKey { readonly key: string; readonly origin: string }

export class ApiKeys {
  constructor(private readonly secrets: vscode.SecretStorage, private readonly log: Log) {}

  async set(endpoint: Pick<EndpointEntry, 'name' | 'url'>, key: string): Promise<void> {
    const value: StoredKey = { key, origin: keyOrigin(endpoint.url) };
    this.log.addSecret(key);
    await this.secrets.store(PREFIX + endpoint.name, JSON.stringify(value));
  }

  async delete(name: string): Promise<void> {
    await this.secrets.delete(PREFIX + name);
  }

  async has(endpoint: Pick<EndpointEntry, 'name' | 'url'>): Promise<boolean> {
    return (await this.#stored(endpoint)) !== undefined;
  }

  async #stored(endpoint: Pick<EndpointEntry, 'name' | 'url'>): Promise<string | undefined> {
    const raw = await this.secrets.get(PREFIX + endpoint.name);
    if (!raw) return undefined;
    try {
      const v = JSON.parse(raw) as StoredKey;
      // A same-named endpoint pointing elsewhere must not receive this key.
      if (typeof v.key === 'string' && v.origin === keyOrigin(endpoint.url)) return v.key;
      return undefined;
    } catch {
      return undefined;
    }
  }

  /**
   * The key to send to this endpoint, or undefined. `restricted` is true for an endpoint defined by
   * an untrusted workspace: it gets neither a stored key nor an environment variable's value.
   */
  async resolve(endpoint: EndpointEntry, restricted: boolean): Promise<string | undefined> {
    if (restricted) return undefined;
    const stored = await this.#stored(endpoint);
    if (stored) { this.log.addSecret(stored); return stored; }
    if (endpoint.apiKeyEnv) {
      const v = process.env[endpoint.apiKeyEnv];
      if (v) { this.log.addSecret(v); return v; }
      this.log.warn(`endpoint "${endpoint.name}": environment variable ${endpoint.apiKeyEnv} is not set; sending no key`);
    }
    return undefined;
  }
}
