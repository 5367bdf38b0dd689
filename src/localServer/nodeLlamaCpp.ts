// node-llama-cpp, loaded from this package's own node_modules only: the checkout's, the installed
// VSIX's (extension/node_modules) or the npm package's. Never from a folder above it (a workspace's
// node_modules, a home folder's), which Node's resolution would otherwise walk up to.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type * as NodeLlamaCppModule from 'node-llama-cpp';
import { packageRoot } from './paths';

export type NodeLlamaCpp = typeof NodeLlamaCppModule;

/** What a start says where this package carries no node-llama-cpp (the platform-neutral VSIX). */
export class NodeLlamaCppMissingError extends Error {
  override readonly name = 'NodeLlamaCppMissingError';
  constructor(readonly root: string) {
    super(`Cannot find node-llama-cpp in ${join(root, 'node_modules')}: this package does not carry the bundled backend for ${process.platform}-${process.arch}. ` +
      'Use a llama-server binary (--backend llama-server, --llama-server PATH) or profile an endpoint (--url)');
  }
}

/** node-llama-cpp's ES module entry inside `root`/node_modules, or undefined where it is not there. */
export function ownNodeLlamaCppEntry(root: string = packageRoot()): string | undefined {
  const dir = join(root, 'node_modules', 'node-llama-cpp');
  try {
    const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { exports?: Record<string, { import?: string; default?: string } | string>; main?: string };
    const dot = pkg.exports?.['.'];
    const rel = (typeof dot === 'string' ? dot : dot?.import ?? dot?.default) ?? pkg.main ?? 'index.js';
    const entry = join(dir, rel);
    return existsSync(entry) ? entry : undefined;
  } catch {
    return undefined;
  }
}

/** The version of node-llama-cpp in `root`/node_modules ('unknown' where it is not there). */
export function nodeLlamaCppVersion(root: string = packageRoot()): string {
  try {
    return (JSON.parse(readFileSync(join(root, 'node_modules', 'node-llama-cpp', 'package.json'), 'utf8')) as { version?: string }).version ?? 'unknown';
  } catch {
    return 'unknown';
  }
}

let loaded: Promise<NodeLlamaCpp> | undefined;

/** Imports node-llama-cpp from this package's own node_modules (once per process). */
export function loadNodeLlamaCpp(root: string = packageRoot()): Promise<NodeLlamaCpp> {
  loaded ??= (async () => {
    const entry = ownNodeLlamaCppEntry(root);
    if (!entry) throw new NodeLlamaCppMissingError(root);
    return (await import(pathToFileURL(entry).href)) as NodeLlamaCpp;
  })();
  return loaded;
}
