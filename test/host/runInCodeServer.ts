// `npm run test:host`: the in-host suite and the UI tests in a real VS Code (code-server 4.100.3,
// installed into a cache outside the clone by scripts/setupCodeServer.ts), driven by Chromium.
//  1. build the extension and the suite; start code-server in its own process group;
//  2. open the workbench with the extension loaded unpacked and the suite as extensionTestsPath:
//     the suite's exit code arrives through window.codeAutomationExit;
//  3. open the workbench again with the universal VSIX installed and drive it as a user would
//     (test/host/ui.ts), then in an untrusted workspace;
//  4. install this machine's platform VSIX (node-llama-cpp and its binary inside) into a fresh
//     code-server and run the bundled local server through the workbench (test/host/uiLocalServer.ts);
//  5. kill code-server's whole group and check that no process of the run is left.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { ensureCodeServer } from '../../scripts/setupCodeServer';
import { startScriptedServer } from '../support/scriptedServer';
import { buildForHost, ROOT, SUITE_JS } from './build';
import { installExtension, startCodeServer, type CodeServer } from './codeServer';
import { packageVsixes, type VsixResult } from './vsix';
import { runLocalServerUiTests } from './uiLocalServer';
import { ARTIFACTS, runUiTests, runUntrustedUiTests } from './ui';
import { writeWorkspace } from './workspace';

const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const SUITE_TIMEOUT_MS = 6 * 60_000;

/** With the suite: the extension unpacked from the checkout plus the suite. Without: the installed VSIX only. */
function workbenchUrl(cs: CodeServer, folder: string, withSuite: boolean): string {
  const base = `${cs.url}/?folder=${encodeURIComponent(folder)}`;
  if (!withSuite) return base;
  const remote = (p: string) => `vscode-remote://127.0.0.1:${cs.port}${p}`;
  const payload: [string, string][] = [['extensionDevelopmentPath', remote(ROOT)], ['extensionTestsPath', remote(SUITE_JS)]];
  return `${base}&payload=${encodeURIComponent(JSON.stringify(payload))}`;
}

async function newPage(browser: Browser, onLog: (line: string) => void): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  const page = await context.newPage();
  await page.exposeFunction('codeAutomationLog', (type: string, args: unknown[]) => {
    const text = Array.isArray(args) ? args.map((a) => (typeof a === 'string' ? a : JSON.stringify(a))).join(' ') : String(args);
    onLog(type === 'error' ? `[host error] ${text}` : text);
  });
  return page;
}

/** Processes (other than this one) whose command line names the run's temporary folder. */
function leftovers(base: string): string[] {
  try {
    const out = execFileSync('ps', ['-eo', 'pid=,args='], { encoding: 'utf8' });
    return out.split('\n').filter((l) => l.includes(base) && !l.includes(' ps ')).map((l) => l.trim());
  } catch {
    return [];
  }
}

async function main(): Promise<number> {
  const t0 = Date.now();
  const lap = (what: string) => console.log(`[host] ${what} at ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  // Screenshots of this run only.
  if (existsSync(ARTIFACTS)) for (const f of readdirSync(ARTIFACTS)) if (/^host-.*\.png$/.test(f)) rmSync(join(ARTIFACTS, f));
  const install = ensureCodeServer();
  lap('code-server ready');
  await buildForHost();
  lap('extension and suite built');

  const base = mkdtempSync(join(tmpdir(), 'llmp-code-server-'));
  const ws = writeWorkspace(join(base, 'workspace'));
  // The UI tests' endpoint, defined in user settings before the workbench starts.
  const uiServer = await startScriptedServer({ ttftMs: 20, itlMs: 3, model: 'ui-model', apis: ['openai-chat'] });
  const userSettings = join(base, 'user-data', 'User', 'settings.json');
  mkdirSync(join(base, 'user-data', 'User'), { recursive: true });
  const settings = {
    'workbench.startupEditor': 'none',
    'workbench.tips.enabled': false,
    'telemetry.telemetryLevel': 'off',
    'extensions.autoCheckUpdates': false,
    'extensions.autoUpdate': false,
    'security.workspace.trust.enabled': false,
    'llmProfiler.endpoints': [{ name: 'ui-scripted', url: uiServer.url, api: 'openai-chat', model: 'ui-model' }],
  };
  writeFileSync(userSettings, JSON.stringify(settings, null, 2));

  let cs: CodeServer | undefined;
  let browser: Browser | undefined;
  // suite and vsixOk are set on every path that reaches the totals (an exception skips them)
  let suite: { passed: number; failed: number };
  let ui = { passed: 0, failed: 0 };
  let vsixOk: { passed: number; failed: number };
  try {
    // ---- the VSIXs: packaged from a production build, checked; the universal one installed for the UI tests ----
    const packaged = await packageVsixes(join(base, 'vsix'));
    const vsix = packaged.universal;
    vsixOk = { passed: 0, failed: 0 };
    const report = (v: VsixResult, name: string, ok: string) => {
      console.log(`VSIX ${name}: ${(v.bytes / 1024).toFixed(0)} KiB, ${v.files.length} files`);
      if (v.problems.length) { console.log(`  FAIL [vsix] ${name} contents:\n       ${v.problems.join('\n       ')}`); vsixOk = { ...vsixOk, failed: vsixOk.failed + 1 }; }
      else { console.log(`  ok   [vsix] ${name}: ${ok}`); vsixOk = { ...vsixOk, passed: vsixOk.passed + 1 }; }
    };
    console.log(`  ${vsix.files.join('\n  ')}`);
    report(vsix, 'universal', 'the bundles, the webviews and media; no sources, maps, tests or node_modules');
    if (packaged.platform) {
      report(packaged.platform, packaged.platform.platform.target, `node-llama-cpp's runtime and the ${packaged.platform.platform.binary} binary only, within the 30 MB budget`);
    } else console.log(`  -- [vsix] node-llama-cpp ships no binary for ${process.platform}-${process.arch}: no platform VSIX here`);
    installExtension(install, base, vsix.path);
    lap('VSIX packaged and installed');
    cs = await startCodeServer(install, base, { LLMP_HOST_USER_DATA: join(base, 'user-data') });
    lap(`code-server listening at ${cs.url} (pgid ${cs.pid})`);
    browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', args: CHROMIUM_ARGS });

    const only = process.env.LLMP_HOST_ONLY; // 'suite', 'ui' or 'platform' while developing
    // ---- the in-host suite ----
    if (!only || only === 'suite') {
    let lastLine = '';
    const page = await newPage(browser, (line) => { lastLine = line; console.log(line); });
    const exitCode = new Promise<number>((resolve) => { void page.exposeFunction('codeAutomationExit', (code: number) => resolve(code)); });
    await page.goto(workbenchUrl(cs, ws, true));
    const timeout = new Promise<number>((resolve) => setTimeout(() => resolve(-1), SUITE_TIMEOUT_MS).unref());
    const code = await Promise.race([exitCode, timeout]);
    const m = /^(\d+) passed, (\d+) failed$/.exec(lastLine);
    suite = m ? { passed: Number(m[1]), failed: Number(m[2]) } : { passed: 0, failed: 1 };
    if (code === -1) { console.log(`[host] the in-host suite did not finish in ${SUITE_TIMEOUT_MS / 1000} s`); suite = { ...suite, failed: suite.failed || 1 }; }
    else if (code !== 0 && !suite.failed) suite = { ...suite, failed: 1 };
    lap(`in-host suite exited with ${code}`);
    await page.context().close();
    } else suite = { passed: 0, failed: 0 };

    // ---- the UI tests, on the installed VSIX ----
    if (!only || only === 'ui') {
    const uiPage = await newPage(browser, () => undefined);
    await uiPage.goto(workbenchUrl(cs, ws, false));
    ui = await runUiTests({ page: uiPage, server: uiServer, endpointName: 'ui-scripted' });
    lap('UI tests done');
    await uiPage.context().close();
    await cs.stop();

    // ---- an untrusted workspace (workspace trust on, a fresh profile) ----
    const wsServer = await startScriptedServer({ ttftMs: 20, itlMs: 3, model: 'ui-model', apis: ['openai-chat'] });
    try {
      const base2 = join(base, 'untrusted');
      const ws2 = join(base2, 'workspace');
      mkdirSync(join(ws2, '.vscode'), { recursive: true });
      writeFileSync(join(ws2, '.vscode', 'settings.json'), JSON.stringify({
        'llmProfiler.endpoints': [{ name: 'ws-untrusted', url: wsServer.url, api: 'openai-chat', model: 'ui-model' }],
      }, null, 2));
      mkdirSync(join(base2, 'user-data', 'User'), { recursive: true });
      writeFileSync(join(base2, 'user-data', 'User', 'settings.json'), JSON.stringify({
        ...settings, 'llmProfiler.endpoints': [], 'security.workspace.trust.enabled': true, 'security.workspace.trust.startupPrompt': 'never',
        'workbench.colorTheme': 'Default Dark Modern',
      }, null, 2));
      installExtension(install, base2, vsix.path);
      cs = await startCodeServer(install, base2, {}, { workspaceTrust: true });
      const page2 = await newPage(browser, () => undefined);
      await page2.goto(`${cs.url}/?folder=${encodeURIComponent(ws2)}`);
      const r = await runUntrustedUiTests({ page: page2, server: wsServer, endpointName: 'ws-untrusted' });
      ui = { passed: ui.passed + r.passed, failed: ui.failed + r.failed };
      lap('untrusted-workspace UI tests done');
      await page2.context().close();
    } finally {
      await wsServer.close();
    }
    }

    // ---- the platform VSIX in a fresh code-server: the bundled local server through the workbench ----
    if (packaged.platform && (!only || only === 'ui' || only === 'platform')) {
      await cs.stop();
      const base3 = join(base, 'platform');
      const ws3 = writeWorkspace(join(base3, 'workspace'));
      mkdirSync(join(base3, 'user-data', 'User'), { recursive: true });
      writeFileSync(join(base3, 'user-data', 'User', 'settings.json'), JSON.stringify({ ...settings, 'llmProfiler.endpoints': [] }, null, 2));
      installExtension(install, base3, packaged.platform.path);
      // its own cache (XDG_CACHE_HOME under base3): no synthetic model, native CPU backend or llama-server of this machine's
      cs = await startCodeServer(install, base3, { LLM_PROFILER_CACHE: '', LLM_PROFILER_CPU_BACKEND: '' });
      const page3 = await newPage(browser, () => undefined);
      await page3.goto(`${cs.url}/?folder=${encodeURIComponent(ws3)}`);
      const r = await runLocalServerUiTests({ page: page3, extensionsDir: join(base3, 'extensions'), binary: packaged.platform.platform.binary });
      ui = { passed: ui.passed + r.passed, failed: ui.failed + r.failed };
      lap(`${packaged.platform.platform.target} VSIX local-server UI tests done`);
      await page3.context().close();
    }
  } finally {
    await browser?.close().catch(() => undefined);
    await cs?.stop();
    await uiServer.close();
    const left = leftovers(base);
    if (left.length) {
      console.log(`[host] processes left behind:\n${left.join('\n')}`);
      ui = { ...ui, failed: ui.failed + 1 };
    }
    if (!process.env.LLMP_KEEP_HOST_DIR) rmSync(base, { recursive: true, force: true });
    else console.log(`[host] kept ${base}`);
  }
  const passed = suite.passed + ui.passed + vsixOk.passed;
  const failed = suite.failed + ui.failed + vsixOk.failed;
  lap('done');
  console.log(`host stage: ${((Date.now() - t0) / 1000).toFixed(0)} s; screenshots in test-artifacts/`);
  console.log(`${passed} passed, ${failed} failed`);
  return failed ? 1 : 0;
}

main().then((code) => process.exit(code), (err) => {
  console.error(`test:host: ${(err as Error).stack ?? err}`);
  process.exit(1);
});
