// Each host test's duration, as scripts/runTests.mjs records node:test's: one JSON line per test in
// test-artifacts/durations-host.jsonl, written whole when the host stage ends, for
// `npm run test:slowest`.
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './build';

const lines: string[] = [];

/** A finished host test: `file` is where it is written (relative to the repository). */
export function recordDuration(file: string, name: string, ms: number, ok: boolean): void {
  lines.push(`${JSON.stringify({ file, name, nesting: 0, suite: false, ms, ok, at: Date.now() })}\n`);
}

/** The in-host suite's result lines ("  ok   NAME (N ms)", "  FAIL NAME (N ms)", test/host/suite/harness.ts). */
export function recordSuiteLine(text: string): void {
  const m = /^ {2}(ok|FAIL) +(.*) \((\d+) ms\)$/.exec(text.split('\n')[0]!);
  if (m) recordDuration('test/host/suite/index.ts', m[2]!, Number(m[3]), m[1] === 'ok');
}

export function writeDurations(): void {
  const file = join(ROOT, 'test-artifacts', 'durations-host.jsonl');
  mkdirSync(join(ROOT, 'test-artifacts'), { recursive: true });
  writeFileSync(`${file}.${process.pid}`, lines.join(''));
  renameSync(`${file}.${process.pid}`, file);
}
