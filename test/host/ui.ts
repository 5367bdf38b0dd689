// UI tests through the real workbench (code-server in Chromium): "Profile endpoint" from the
// command palette, the sidebar renders and its Run button works; then the endpoint flows
// (uiEndpoints.ts), the report paths (uiReports.ts) and axe on both webviews in three themes
// (uiA11y.ts). Screenshots go to test-artifacts/.
import assert from 'node:assert/strict';
import { endpointSteps } from './uiEndpoints';
import { reportSteps } from './uiReports';
import { a11ySteps } from './uiA11y';
import { recoverSteps } from './uiRecover';
import { missingSteps } from './uiMissing';
import { flowSteps } from './uiFlows';
import { numbersSteps } from './uiNumbers';
import { ARTIFACTS, clearToasts, pickQuickItem, posts, reportFrame, runFromPalette, runSteps, shot, sidebarFrame, waitFor, type Step, type UiContext } from './uiKit';

export { ARTIFACTS, type UiContext };

const steps: Step[] = [
  {
    name: 'the workbench loads with the extension installed from the VSIX',
    fn: async ({ page }) => {
      await page.locator('.monaco-workbench').waitFor({ state: 'visible', timeout: 60_000 });
      await shot(page, 'host-01-workbench');
    },
  },
  {
    name: '"LLM Profiler: Profile endpoint" from the command palette runs a quick check',
    fn: async ({ page, server, endpointName }) => {
      const before = posts(server);
      await runFromPalette(page, 'LLM Profiler: Profile endpoint');
      await pickQuickItem(page, endpointName);
      await shot(page, 'host-02-pick-workload');
      await pickQuickItem(page, 'Quick check');
      await waitFor('6 requests at the server', () => posts(server) >= before + 6, 60_000);
      // The end of the run: the report panel opens and renders the run (its table and its timeline).
      // the tab is named for the run (runText.ts runName): its workload, endpoint and time
      const report = page.locator('.tabs-container .tab', { hasText: 'c=1 · 5 req on ui-scripted, ' });
      await waitFor('the report panel to open', async () => (await report.count()) > 0, 30_000);
      const f = await reportFrame(page);
      const ttftRow = f.locator('table.percentiles tr', { hasText: 'TTFT' }).first();
      await ttftRow.waitFor({ state: 'visible', timeout: 30_000 });
      const ttftCells = await ttftRow.locator('td').allTextContents();
      if (!ttftCells.some((t) => /\d+(\.\d+)? ms/.test(t))) throw new Error(`the report's TTFT row shows no figures: ${ttftCells.join(' | ')}`);
      const drawn = await f.locator('canvas').first().evaluate((c: HTMLCanvasElement) => {
        const ctx = c.getContext('2d');
        if (!ctx || c.width === 0 || c.height === 0) return 0;
        const data = ctx.getImageData(0, 0, c.width, c.height).data;
        let painted = 0;
        for (let i = 3; i < data.length; i += 4) if (data[i]! > 0) painted++;
        return painted;
      });
      if (drawn === 0) throw new Error('the report\'s first canvas is blank');
      await page.waitForTimeout(500);
      await shot(page, 'host-03-profile-done');
    },
  },
  {
    name: 'the sidebar renders its sections and lists the run',
    fn: async ({ page, endpointName }) => {
      const icon = page.locator('.part.activitybar .action-item a[aria-label^="LLM Profiler"]').first();
      await icon.waitFor({ state: 'visible', timeout: 30_000 });
      await icon.click();
      const f = await sidebarFrame(page);
      await f.locator('#run-button').waitFor({ state: 'visible', timeout: 30_000 });
      for (const title of ['Run', 'Endpoints', 'Local server', 'Recent runs']) {
        await f.locator('h2', { hasText: title }).first().waitFor({ state: 'visible', timeout: 10_000 });
      }
      await f.locator('.item .name', { hasText: endpointName }).first().waitFor({ state: 'visible', timeout: 10_000 });
      await waitFor('a run in the list', async () => (await f.locator('#runs-list li.item').count()) >= 1, 15_000);
      await shot(page, 'host-04-sidebar');
    },
  },
  {
    name: 'the sidebar\'s Run button runs the form\'s workload',
    fn: async ({ page, server }) => {
      const f = await sidebarFrame(page);
      const runsBefore = await f.locator('#runs-list li.item').count();
      const before = posts(server);
      await f.locator('#field-requests input').fill('3');
      await f.locator('#field-concurrency input').fill('2');
      await f.locator('#run-button').click();
      await waitFor('the 3 requests (and 1 warmup) at the server', () => posts(server) >= before + 4, 60_000);
      await waitFor('the new run in the sidebar', async () => (await f.locator('#runs-list li.item').count()) > runsBefore, 30_000);
      assert.equal(posts(server) - before, 4, 'requests: the form said 3 (+1 warmup)');
      await shot(page, 'host-05-sidebar-after-run');
    },
  },
  {
    name: 'from the VSIX, Start local server says it is not bundled on this platform (node-llama-cpp), with buttons that lead on',
    fn: async ({ page }) => {
      await runFromPalette(page, 'LLM Profiler: Start local server');
      const toast = page.locator('.notifications-toasts .notification-toast', { hasText: 'not bundled on this platform' });
      await toast.first().waitFor({ state: 'visible', timeout: 60_000 });
      assert.match((await toast.first().innerText()), /node-llama-cpp[\s\S]*llama-server/);
      for (const b of ['Use a llama-server binary…', 'Add endpoint']) {
        assert.equal(await toast.first().locator('.monaco-button', { hasText: b }).count(), 1, `the toast offers "${b}"`);
      }
      await shot(page, 'host-06-local-server-from-vsix');
    },
  },
  {
    name: 'the sidebar\'s Compare prefill chunks button (from the VSIX: the dial needs the local server, which is not bundled: the same way forward)',
    fn: async ({ page }) => {
      // Earlier tests leave error toasts up; VS Code shows only a few at once, so clear them first.
      await clearToasts(page);
      const f = await sidebarFrame(page);
      const dial = f.locator('[data-focus="prefill-dial"]');
      await dial.waitFor({ state: 'visible', timeout: 10_000 });
      await dial.click();
      const toast = page.locator('.notifications-toasts .notification-toast', { hasText: 'prefill dial runs on the local server' });
      await toast.first().waitFor({ state: 'visible', timeout: 60_000 });
      assert.match((await toast.first().innerText()), /not bundled on this platform[\s\S]*node-llama-cpp/);
      assert.equal(await toast.first().locator('.monaco-button', { hasText: 'Use a llama-server binary…' }).count(), 1);
      await shot(page, 'host-07-prefill-dial-from-vsix');
    },
  },
];

/** A workspace whose own settings define an endpoint, opened untrusted (Restricted Mode). */
export async function runUntrustedUiTests(c: UiContext): Promise<{ passed: number; failed: number }> {
  const { page, server, endpointName } = c;
  const hits = () => Object.values(server.hits).reduce((a, b) => a + b, 0);
  const steps: Step[] = [
    {
      name: 'untrusted workspace: Profile endpoint shows a modal with the URL, and Cancel sends nothing',
      fn: async () => {
        await page.locator('.monaco-workbench').waitFor({ state: 'visible', timeout: 60_000 });
        const before = hits();
        await runFromPalette(page, 'LLM Profiler: Profile endpoint');
        await pickQuickItem(page, endpointName);
        await pickQuickItem(page, 'Quick check');
        const dialog = page.locator('.monaco-dialog-box');
        await dialog.waitFor({ state: 'visible', timeout: 30_000 });
        const text = await dialog.innerText();
        assert.ok(text.includes(server.url), `the dialog shows ${server.url}: ${text}`);
        assert.match(text, /not trusted/);
        await shot(page, 'host-07-untrusted-confirmation');
        await dialog.locator('.monaco-button', { hasText: 'Cancel' }).click();
        await dialog.waitFor({ state: 'hidden', timeout: 10_000 });
        await page.waitForTimeout(1500);
        assert.equal(hits(), before, 'no request of any kind reached the endpoint');
      },
    },
    {
      name: 'untrusted workspace: "Send requests" runs it, without any key',
      fn: async () => {
        await runFromPalette(page, 'LLM Profiler: Profile endpoint');
        await pickQuickItem(page, endpointName);
        await pickQuickItem(page, 'Quick check');
        const dialog = page.locator('.monaco-dialog-box');
        await dialog.waitFor({ state: 'visible', timeout: 30_000 });
        await dialog.locator('.monaco-button', { hasText: 'Send requests' }).click();
        await waitFor('6 requests at the server', () => posts(server) >= 6, 60_000);
        assert.ok(server.log.every((l) => l.authorization === undefined), 'no Authorization header');
        await shot(page, 'host-08-untrusted-run');
      },
    },
    {
      name: 'untrusted workspace: the sidebar (dark theme, narrow) marks the endpoint untrusted and offers no key',
      fn: async () => {
        const icon = page.locator('.part.activitybar .action-item a[aria-label^="LLM Profiler"]').first();
        await icon.click();
        const f = await sidebarFrame(page);
        const item = f.locator('li.item', { hasText: endpointName }).first();
        await item.waitFor({ state: 'visible', timeout: 15_000 });
        await item.locator('.badge', { hasText: 'untrusted' }).waitFor({ state: 'visible', timeout: 5000 });
        assert.equal(await item.locator('button', { hasText: /key/i }).count(), 0, 'no Set key button');
        // Keyboard: Tab reaches the Run button.
        await f.locator('#endpoint-select').focus();
        let reached = false;
        for (let i = 0; i < 8 && !reached; i++) {
          await page.keyboard.press('Tab');
          reached = await f.locator('#run-button').evaluate((el) => el === document.activeElement || el.matches(':focus-within'));
        }
        assert.ok(reached, 'Tab from the endpoint picker reaches Run');
        await shot(page, 'host-09-sidebar-dark-untrusted');
      },
    },
  ];
  return runSteps(steps, c);
}

export function runUiTests(c: UiContext): Promise<{ passed: number; failed: number }> {
  const from = (file: string, list: readonly Step[]) => list.map((step) => ({ ...step, file: `test/host/${file}` }));
  return runSteps([...steps, ...from('uiEndpoints.ts', endpointSteps), ...from('uiReports.ts', reportSteps), ...from('uiNumbers.ts', numbersSteps), ...from('uiA11y.ts', a11ySteps), ...from('uiRecover.ts', recoverSteps), ...from('uiMissing.ts', missingSteps), ...from('uiFlows.ts', flowSteps)], c);
}

