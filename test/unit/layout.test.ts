import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, writeFileSync, cpSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { importsOf } from '../checkLayout';

test('importsOf finds static, dynamic, type-only and re-export imports', () => {
  const src = `import type { A } from './a';\nimport * as v from 'vscode';\nconst x = await import('node:fs');\nexport { y } from "../y";\nconst r = require('undici');`;
  assert.deepEqual(importsOf(src), [
    { spec: './a', typeOnly: true },
    { spec: 'vscode', typeOnly: false },
    { spec: 'node:fs', typeOnly: false },
    { spec: '../y', typeOnly: false },
    { spec: 'undici', typeOnly: false },
  ]);
});

test('the layout check fails when the engine imports vscode', () => {
  const dir = mkdtempSync(join(tmpdir(), 'layout-'));
  try {
    mkdirSync(join(dir, 'test'), { recursive: true });
    mkdirSync(join(dir, 'src/engine'), { recursive: true });
    cpSync(join(__dirname, '../checkLayout.ts'), join(dir, 'test/checkLayout.ts'));
    writeFileSync(join(dir, 'src/engine/bad.ts'), `import * as vscode from 'vscode';\nexport const x = vscode;\n`);
    const r = spawnSync(process.execPath, ['--import', 'tsx', join(dir, 'test/checkLayout.ts')], { encoding: 'utf8', cwd: join(__dirname, '../..') });
    assert.equal(r.status, 1, r.stdout + r.stderr);
    assert.match(r.stderr, /src\/engine\/bad\.ts: imports 'vscode'/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
