// The Node versions the manifest promises agree with what is installed: every runtime dependency runs
// on the oldest Node the manifest allows (VS Code 1.100's extension host is Node 20), and every package,
// dev tools included, on the Node running the tests, so that `npm ci` prints no engine warning.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import semver from 'semver';

const root = join(__dirname, '../..');
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { engines: { node: string } };
const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')) as {
  packages: Record<string, { engines?: { node?: string } | string[]; dev?: boolean; optional?: boolean }>;
};

function nodeRanges(dev: boolean | 'all'): [string, string][] {
  return Object.entries(lock.packages).flatMap(([name, p]): [string, string][] => {
    const range = p.engines && !Array.isArray(p.engines) ? p.engines.node : undefined;
    if (!name || range === undefined || p.optional) return [];
    return dev === 'all' || Boolean(p.dev) === dev ? [[name, range]] : [];
  });
}

test("every runtime dependency supports the oldest Node the manifest's engines allow", () => {
  const floor = semver.minVersion(manifest.engines.node);
  assert.ok(floor, manifest.engines.node);
  const runtime = nodeRanges(false);
  assert.ok(runtime.some(([name]) => name.includes('@opentelemetry/')), 'the lock lists the runtime dependencies with their engines');
  const refused = runtime.filter(([, range]) => !semver.satisfies(floor, range)).map(([name, range]) => `${name} wants ${range}`);
  assert.deepEqual(refused, [], `the manifest says node ${manifest.engines.node}`);
});

test('every package, dev tools included, supports the Node running the tests (npm ci warns of none)', () => {
  const refused = nodeRanges('all').filter(([, range]) => !semver.satisfies(process.version, range)).map(([name, range]) => `${name} wants ${range}`);
  assert.deepEqual(refused, []);
});
