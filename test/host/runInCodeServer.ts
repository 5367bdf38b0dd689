// `npm run test:host`: the in-host suite and the UI tests in a real VS Code (code-server 4.100.3,
// installed into a cache outside the clone by scripts/setupCodeServer.ts), driven by Chromium.
//  1. build the suite (and the extension, unless scripts/test.mjs just built dist/); package the
//     VSIXs and install them, each into its own code-server's folders; start the code-servers, each
//     in its own process group;
//  2. the in-host suite: the workbench with the extension loaded unpacked and the suite as
//     extensionTestsPath; its exit code arrives through window.codeAutomationExit. It runs alone
//     until its tests that measure time (activation, the extension host's pauses) have run;
//  3. then beside it, each in its own code-server and profile, two workbenches at most at once:
//     an untrusted workspace, then the universal VSIX driven as a user would (test/host/ui.ts);
//     after the suite, this machine's platform VSIX (node-llama-cpp and its binary inside) running
//     the bundled local server (test/host/uiLocalServer.ts);
//  4. kill each code-server's whole group and check that no process of the run is left.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { ensureCodeServer } from '../../scripts/setupCodeServer';
import { startScriptedServer, type ScriptedServer } from '../support/scriptedServer';
import { buildForHost, ROOT, SUITE_JS } from './build';
import { installExtension, startCodeServer, type CodeServer } from './codeServer';
import { recordSuiteLine, writeDurations } from './durations';
import { TIMING_DONE } from './suite/harness';
import { packageVsixes, type VsixResult } from './vsix';
import { runLocalServerUiTests } from './uiLocalServer';
import { ARTIFACTS, runUiTests, runUntrustedUiTests } from './ui';
import { writeWorkspace } from './workspace';

const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const SUITE_TIMEOUT_MS = 6 * 60_000;
/** User settings every profile starts from. */
const SETTINGS = {
  'workbench.startupEditor': 'none',
  'workbench.tips.enabled': false,
  'telemetry.telemetryLevel': 'off',
  'extensions.autoCheckUpdates': false,
  'extensions.autoUpdate': false,
  'security.workspace.trust.enabled': false,
};

type Tally = { passed: number; failed: number };
const add = (a: Tally, b: Tally): Tally => ({ passed: a.passed + b.passed, failed: a.failed + b.failed });
const t0 = Date.now();
const lap = (what: string) => console.log(`[host] ${what} at ${((Date.now() - t0) / 1000).toFixed(1)} s`);

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

/** A code-server profile's user settings.json. */
function writeUserSettings(base: string, settings: Record<string, unknown>): void {
  mkdirSync(join(base, 'user-data', 'User'), { recursive: true });
  writeFileSync(join(base, 'user-data', 'User', 'settings.json'), JSON.stringify({ ...SETTINGS, ...settings }, null, 2));
}

/** The VSIXs packaged from a production build and checked: one result per VSIX. */
async function packagedVsixes(dir: string): Promise<{ packaged: Awaited<ReturnType<typeof packageVsixes>>; tally: Tally }> {
  const packaged = await packageVsixes(dir);
  let tally = { passed: 0, failed: 0 };
  const report = (v: VsixResult, name: string, ok: string) => {
    console.log(`VSIX ${name}: ${(v.bytes / 1024).toFixed(0)} KiB, ${v.files.length} files`);
    if (v.problems.length) { console.log(`  FAIL [vsix] ${name} contents:\n       ${v.problems.join('\n       ')}`); tally = add(tally, { passed: 0, failed: 1 }); }
    else { console.log(`  ok   [vsix] ${name}: ${ok}`); tally = add(tally, { passed: 1, failed: 0 }); }
  };
  console.log(`  ${packaged.universal.files.join('\n  ')}`);
  report(packaged.universal, 'universal', 'the bundles, the webviews and media; no sources, maps, tests or node_modules');
  if (packaged.platform) {
    report(packaged.platform, packaged.platform.platform.target, `node-llama-cpp's runtime and the ${packaged.platform.platform.binary} binary only, within the 30 MB budget`);
  } else console.log(`  -- [vsix] node-llama-cpp ships no binary for ${process.platform}-${process.arch}: no platform VSIX here`);
  return { packaged, tally };
}

/**
 * The in-host suite in its own workbench window: `timingDone` once its tests that measure time have
 * run (or it ended), `done` with its tally, from its last line and exit code.
 */
async function startSuite(browser: Browser, cs: CodeServer, ws: string): Promise<{ timingDone: Promise<void>; done: Promise<Tally> }> {
  let lastLine = '';
  let timingDone: () => void = () => undefined;
  const timing = new Promise<void>((resolve) => { timingDone = resolve; });
  const page = await newPage(browser, (line) => {
    lastLine = line;
    if (line === TIMING_DONE) { lap('the suite\'s tests that measure time have run'); timingDone(); return; }
    recordSuiteLine(line);
    console.log(line);
  });
  const exitCode = new Promise<number>((resolve) => { void page.exposeFunction('codeAutomationExit', (code: number) => resolve(code)); });
  await page.goto(workbenchUrl(cs, ws, true));
  const timeout = new Promise<number>((resolve) => setTimeout(() => resolve(-1), SUITE_TIMEOUT_MS).unref());
  const done = Promise.race([exitCode, timeout]).then(async (code) => {
    timingDone();
    const m = /^(\d+) passed, (\d+) failed$/.exec(lastLine);
    let suite = m ? { passed: Number(m[1]), failed: Number(m[2]) } : { passed: 0, failed: 1 };
    if (code === -1) { console.log(`[host] the in-host suite did not finish in ${SUITE_TIMEOUT_MS / 1000} s`); suite = { ...suite, failed: suite.failed || 1 }; }
    else if (code !== 0 && !suite.failed) suite = { ...suite, failed: 1 };
    lap(`in-host suite exited with ${code}`);
    await page.context().close();
    await cs.stop();
    return suite;
  });
  return { timingDone: timing, done };
}

/** Opens the folder in a fresh browser context on `cs`, runs `tests` on the page, closes the context and stops `cs`. */
async function inWorkbench(browser: Browser, cs: CodeServer, folder: string, tests: (page: Page) => Promise<Tally>): Promise<Tally> {
  try {
    const page = await newPage(browser, () => undefined);
    await page.goto(workbenchUrl(cs, folder, false));
    const tally = await tests(page);
    await page.context().close();
    return tally;
  } finally {
    await cs.stop();
  }
}

interface HostRun {
  readonly install: string;
  readonly base: string;
  readonly browser: Browser;
  /** Every code-server started, for the final stop. */
  readonly servers: CodeServer[];
  readonly only: string | undefined;
}

/** Starts a code-server on `base` and remembers it for the final stop. */
async function codeServer(run: HostRun, base: string, env: Record<string, string> = {}, options: { workspaceTrust?: boolean } = {}): Promise<CodeServer> {
  const cs = await startCodeServer(run.install, base, env, options);
  run.servers.push(cs);
  lap(`code-server for ${base.slice(run.base.length + 1) || 'the suite'} listening at ${cs.url} (pgid ${cs.pid})`);
  return cs;
}

/** The UI tests on the universal VSIX, in a profile whose settings define the scripted endpoint. */
async function uiLane(run: HostRun, vsix: string, server: ScriptedServer, after: Promise<unknown>): Promise<Tally> {
  const base = join(run.base, 'ui');
  const ws = writeWorkspace(join(base, 'workspace'));
  writeUserSettings(base, { 'llmProfiler.endpoints': [{ name: 'ui-scripted', url: server.url, api: 'openai-chat', model: 'ui-model' }] });
  await installExtension(run.install, base, vsix);
  const cs = await codeServer(run, base);
  await after.catch(() => undefined);
  const tally = await inWorkbench(run.browser, cs, ws, (page) => runUiTests({ page, server, endpointName: 'ui-scripted', codeServerPid: cs.pid }));
  lap('UI tests done');
  return tally;
}

/** A workspace whose own settings define an endpoint, with workspace trust on and a fresh profile. */
async function untrustedLane(run: HostRun, vsix: string, after: Promise<unknown>): Promise<Tally> {
  const server = await startScriptedServer({ ttftMs: 20, itlMs: 3, model: 'ui-model', apis: ['openai-chat'] });
  try {
    const base = join(run.base, 'untrusted');
    const ws = join(base, 'workspace');
    mkdirSync(join(ws, '.vscode'), { recursive: true });
    writeFileSync(join(ws, '.vscode', 'settings.json'), JSON.stringify({
      'llmProfiler.endpoints': [{ name: 'ws-untrusted', url: server.url, api: 'openai-chat', model: 'ui-model' }],
    }, null, 2));
    writeUserSettings(base, { 'llmProfiler.endpoints': [], 'security.workspace.trust.enabled': true, 'security.workspace.trust.startupPrompt': 'never', 'workbench.colorTheme': 'Default Dark Modern' });
    await installExtension(run.install, base, vsix);
    const cs = await codeServer(run, base, {}, { workspaceTrust: true });
    await after.catch(() => undefined);
    const tally = await inWorkbench(run.browser, cs, ws, (page) => runUntrustedUiTests({ page, server, endpointName: 'ws-untrusted' }));
    lap('untrusted-workspace UI tests done');
    return tally;
  } finally {
    await server.close();
  }
}

/** The platform VSIX in a fresh profile and cache: the bundled local server through the workbench, once `after` has settled. */
async function platformLane(run: HostRun, platform: NonNullable<Awaited<ReturnType<typeof packageVsixes>>['platform']>, after: Promise<unknown>): Promise<Tally> {
  const base = join(run.base, 'platform');
  const ws = writeWorkspace(join(base, 'workspace'));
  writeUserSettings(base, { 'llmProfiler.endpoints': [] });
  await installExtension(run.install, base, platform.path);
  // its own cache (XDG_CACHE_HOME under base): no synthetic model, native CPU backend or llama-server of this machine's
  const cs = await codeServer(run, base, { LLM_PROFILER_CACHE: '', LLM_PROFILER_CPU_BACKEND: '' });
  await after.catch(() => undefined);
  const tally = await inWorkbench(run.browser, cs, ws, (page) => runLocalServerUiTests({ page, extensionsDir: join(base, 'extensions'), binary: platform.platform.binary, codeServerPid: cs.pid }));
  lap(`${platform.platform.target} VSIX local-server UI tests done`);
  return tally;
}

/** The lanes' tallies once all have settled; a lane that throws counts as one failure. */
async function sideBySide(lanes: Promise<Tally>[]): Promise<Tally> {
  const results = await Promise.allSettled(lanes);
  return results.reduce<Tally>((t, r) => {
    if (r.status === 'fulfilled') return add(t, r.value);
    console.log(`[host] a lane failed: ${(r.reason as Error).stack ?? r.reason}`);
    return add(t, { passed: 0, failed: 1 });
  }, { passed: 0, failed: 0 });
}

/**
 * Steps 2 and 3: the suite, alone until its tests that measure time have run, then beside it the UI
 * lanes ('suite', 'ui' or 'platform' in LLMP_HOST_ONLY runs a part).
 */
async function runAll(run: HostRun, uiServer: ScriptedServer): Promise<Tally> {
  const { packaged, tally: vsixOk } = await packagedVsixes(join(run.base, 'vsix'));
  lap('VSIXs packaged');
  let suite: Promise<Tally> = Promise.resolve({ passed: 0, failed: 0 });
  if (!run.only || run.only === 'suite') {
    const ws = writeWorkspace(join(run.base, 'workspace'));
    writeUserSettings(run.base, { 'llmProfiler.endpoints': [{ name: 'ui-scripted', url: uiServer.url, api: 'openai-chat', model: 'ui-model' }] });
    const cs = await codeServer(run, run.base, { LLMP_HOST_USER_DATA: join(run.base, 'user-data') });
    const started = await startSuite(run.browser, cs, ws);
    suite = started.done;
    await started.timingDone;
  }
  // Two workbenches at most at once, and never the bundled llama.cpp server beside the suite: on
  // this 2-core machine either makes a webview's first load in the suite longer than its 15 s
  // waits for one. Each lane's code-server is set up at once, its workbench opened when the one
  // before it is done: beside the suite the untrusted workspace, then the UI tests; after the
  // suite the platform VSIX.
  const none = async (): Promise<Tally> => ({ passed: 0, failed: 0 });
  const uiToo = !run.only || run.only === 'ui';
  const untrusted = uiToo ? untrustedLane(run, packaged.universal.path, Promise.resolve()) : none();
  const ui = uiToo ? uiLane(run, packaged.universal.path, uiServer, untrusted) : none();
  const platform = packaged.platform && run.only !== 'suite' ? platformLane(run, packaged.platform, suite) : none();
  return add(vsixOk, await sideBySide([suite, untrusted, ui, platform]));
}

async function main(): Promise<number> {
  // Screenshots of this run only.
  if (existsSync(ARTIFACTS)) for (const f of readdirSync(ARTIFACTS)) if (/^host-.*\.png$/.test(f)) rmSync(join(ARTIFACTS, f));
  const install = ensureCodeServer();
  lap('code-server ready');
  await buildForHost();
  lap('extension and suite built');
  const base = mkdtempSync(join(tmpdir(), 'llmp-code-server-'));
  // The UI tests' endpoint, defined in user settings before the workbench starts.
  const uiServer = await startScriptedServer({ ttftMs: 20, itlMs: 3, model: 'ui-model', apis: ['openai-chat'] });
  const run: HostRun = { install, base, servers: [], only: process.env.LLMP_HOST_ONLY,
    browser: await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', args: CHROMIUM_ARGS }) };
  let tally = { passed: 0, failed: 0 };
  try {
    tally = await runAll(run, uiServer);
  } finally {
    await run.browser.close().catch(() => undefined);
    for (const cs of run.servers) await cs.stop();
    await uiServer.close();
    const left = leftovers(base);
    if (left.length) {
      console.log(`[host] processes left behind:\n${left.join('\n')}`);
      tally = add(tally, { passed: 0, failed: 1 });
    }
    if (!process.env.LLMP_KEEP_HOST_DIR) rmSync(base, { recursive: true, force: true });
    else console.log(`[host] kept ${base}`);
    writeDurations();
  }
  lap('done');
  console.log(`host stage: ${((Date.now() - t0) / 1000).toFixed(0)} s; screenshots in test-artifacts/`);
  console.log(`${tally.passed} passed, ${tally.failed} failed`);
  return tally.failed ? 1 : 0;
}

main().then((code) => process.exit(code), (err) => {
  console.error(`test:host: ${(err as Error).stack ?? err}`);
  process.exit(1);
});
