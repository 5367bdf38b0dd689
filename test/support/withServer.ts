// One test's server, closed whatever the test does: a scripted server from its options (or any
// server from a start function), with what tests around it need made on first use and undone
// afterwards: a temporary folder, the server as an endpoint, an engine client to it.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEndpointClient } from '../../src/engine/transport/client';
import type { ClientOptions, EndpointClient, EndpointSpec } from '../../src/engine/core/types';
import type { ApiKind } from '../../src/engine/core/apis';
import { startScriptedServer, type ScriptedServer, type ScriptedServerOptions } from './scriptedServer';

/** What withServer can start: anything on a URL that closes. */
export interface Served {
  readonly url: string;
  close(): Promise<void>;
}

export interface WithServerOptions {
  /** The endpoint's API (default openai-chat). */
  readonly api?: ApiKind;
  /** The endpoint's model (default scripted-model, the scripted server's). */
  readonly model?: string;
  /** The client's options over the defaults: one connection, a 10 s timeout, a 5 s idle timeout. */
  readonly client?: Partial<ClientOptions>;
}

/** Made on first use, undone when the test's function returns or throws. */
export interface ServerScope {
  /** The server as an endpoint: its URL with the options' API and model. */
  readonly endpoint: EndpointSpec;
  /** A fresh temporary folder, removed afterwards. */
  readonly dir: string;
  /** An engine client to `endpoint` (options.client), closed afterwards. */
  readonly client: EndpointClient;
}

type Start<S extends Served> = ScriptedServerOptions | (() => Promise<S>);
type Body<S, T> = (server: S, scope: ServerScope) => Promise<T>;

/**
 * Starts the server (a scripted server when given its options), runs `fn` with it and its scope,
 * then closes the client, the server and removes the folder, whatever `fn` did.
 */
export function withServer<T, S extends Served = ScriptedServer>(start: Start<S>, fn: Body<S, T>): Promise<T>;
export function withServer<T, S extends Served = ScriptedServer>(start: Start<S>, options: WithServerOptions, fn: Body<S, T>): Promise<T>;
export async function withServer<T, S extends Served>(start: Start<S>, a: WithServerOptions | Body<S, T>, b?: Body<S, T>): Promise<T> {
  const [options, fn] = typeof a === 'function' ? [{}, a] : [a, b!];
  const server = typeof start === 'function' ? await start() : ((await startScriptedServer(start)) as unknown as S);
  let dir: string | undefined;
  let client: EndpointClient | undefined;
  const endpoint: EndpointSpec = { url: server.url, api: options.api ?? 'openai-chat', model: options.model ?? 'scripted-model' };
  const scope: ServerScope = {
    endpoint,
    get dir() {
      return (dir ??= mkdtempSync(join(tmpdir(), 'with-server-')));
    },
    get client() {
      return (client ??= createEndpointClient(endpoint, { connections: 1, timeoutMs: 10_000, idleTimeoutMs: 5_000, ...options.client }));
    },
  };
  try {
    return await fn(server, scope);
  } finally {
    try {
      await client?.close();
      await server.close();
    } finally {
      if (dir) rmSync(dir, { recursive: true, force: true });
    }
  }
}
