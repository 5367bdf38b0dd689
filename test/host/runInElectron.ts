// `npm run test:electron`: the same in-host suite in VS Code desktop through @vscode/test-electron,
// for machines that can download VS Code (this one cannot: it uses code-server, runInCodeServer.ts).
// Pinned to 1.100.3, the version engines.vscode and @types/vscode allow.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runTests } from '@vscode/test-electron';
import { buildForHost, ROOT, SUITE_JS } from './build';
import { writeWorkspace } from './workspace';

async function main(): Promise<number> {
  await buildForHost();
  const base = mkdtempSync(join(tmpdir(), 'llmp-electron-'));
  const ws = writeWorkspace(join(base, 'workspace'));
  const userData = join(base, 'user-data');
  try {
    return await runTests({
      version: '1.100.3',
      extensionDevelopmentPath: ROOT,
      extensionTestsPath: SUITE_JS,
      launchArgs: [ws, '--disable-workspace-trust', '--disable-extensions', '--user-data-dir', userData, '--extensions-dir', join(base, 'extensions')],
      extensionTestsEnv: { LLMP_HOST_USER_DATA: userData },
    });
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
}

main().then((code) => process.exit(code), (err) => {
  console.error(`test:electron: ${(err as Error).message ?? err}`);
  process.exit(1);
});
