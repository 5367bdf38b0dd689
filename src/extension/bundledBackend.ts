// Whether the local server's bundled backend (node-llama-cpp) can load in this install, and what a
// start says when it cannot. Pure: no `vscode` (tested in node).
import { ownNodeLlamaCppEntry } from '../localServer/nodeLlamaCpp';
import { packageRoot } from '../localServer/paths';
import type { LocalServerConfig } from './configModel';

const bundledFound = new Map<string, boolean>();

/**
 * Whether the bundled backend can load here: node-llama-cpp in the extension's own node_modules
 * (`fromDir`: dist/ in the built extension; the package root is found from it), the one the server
 * process loads (src/localServer/nodeLlamaCpp.ts), never a workspace's. A platform VSIX carries it;
 * the platform-neutral VSIX does not. Asked once per folder.
 */
export function bundledBackendAvailable(fromDir: string = __dirname): boolean {
  let found = bundledFound.get(fromDir);
  if (found === undefined) {
    found = ownNodeLlamaCppEntry(packageRoot(fromDir)) !== undefined;
    bundledFound.set(fromDir, found);
  }
  return found;
}

/** What the local server entry and its failure say where the bundled backend is missing: what, and the way forward. */
export const BUNDLED_MISSING = 'the local server is not bundled on this platform: its bundled backend needs node-llama-cpp, which this VSIX does not include. ' +
  'Use a llama-server binary (llama.cpp\'s server) instead, or add an endpoint.';

/** Why a local server did not start, for the log (`message`) and a notification or status line (`short`). */
export function startFailure(err: unknown, backend: LocalServerConfig['backend']): { message: string; short: string; bundledMissing: boolean } {
  let message = err instanceof Error ? err.message : String(err);
  let short = message.split('\n')[0]!;
  const bundledMissing = backend === 'bundled' && /node-llama-cpp/.test(message) && /(Cannot find|ERR_MODULE_NOT_FOUND)/.test(message);
  if (bundledMissing) {
    // The platform-neutral VSIX does not carry node-llama-cpp (native, per platform).
    message = `${BUNDLED_MISSING} Set llmProfiler.localServer.backend to "llama-server" (with llmProfiler.localServer.llamaServerPath or llama-server on PATH), ` +
      'or run the extension from a checkout after `npm ci`. Details:\n' + message;
    short = BUNDLED_MISSING;
  }
  return { message, short, bundledMissing };
}
