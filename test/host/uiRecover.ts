// A run survives its window: the sidebar starts a long run, the extension host is killed (SIGKILL)
// mid-run, the window is reloaded, and the extension offers the run it left ("A run against
// ui-scripted stopped at … with N of 200 requests"): Recover opens it, marked interrupted, holding
// every request the server finished more than two seconds before the kill. After the kill no request
// reaches the server: nothing of the dead host goes on sending.
import assert from 'node:assert/strict';
import { extensionHosts, reportFrame, showSidebar, shot, waitFor, type Step, type UiContext } from './uiKit';


const complete = (c: UiContext, from: number) => c.server.log.slice(from).filter((e) => e.path === '/v1/chat/completions' && e.endedAt !== undefined && !e.clientClosed);

export const recoverSteps: Step[] = [
  {
    name: 'the extension host killed mid-run: after a reload the run is offered, and Recover opens it with what finished',
    fn: async (c) => {
      const { page } = c;
      assert.ok(c.codeServerPid, 'the code-server\'s process group is known');
      const hosts = extensionHosts(c.codeServerPid);
      assert.equal(hosts.length, 1, `one extension host (${hosts.join(', ')})`);
      const f = await showSidebar(page);
      const first = c.server.log.length;
      await f.locator('#field-requests input').fill('200');
      await f.locator('#field-concurrency input').fill('2');
      await f.locator('#field-maxTokens input').fill('100');
      await f.locator('#run-button').click();
      await waitFor('30 requests finished at the server', () => complete(c, first).length >= 30, 60_000);
      await page.waitForTimeout(2500);
      const killAt = Date.now();
      process.kill(hosts[0]!, 'SIGKILL');
      await page.waitForTimeout(1500);
      const sentAfter = c.server.log.slice(first).filter((e) => e.receivedAt > killAt + 500).length;
      assert.equal(sentAfter, 0, 'no request reached the server from the killed host');
      const due = new Set(complete(c, first).filter((e) => e.endedAt! < killAt - 2000).map((e) => e.streamId));
      await shot(page, 'host-50-extension-host-killed');

      await page.reload();
      await page.locator('.monaco-workbench').waitFor({ state: 'visible', timeout: 60_000 });
      const toast = page.locator('.notifications-toasts .notification-toast', { hasText: 'stopped at' });
      await toast.first().waitFor({ state: 'visible', timeout: 90_000 });
      const text = await toast.first().innerText();
      assert.match(text, /A run against ui-scripted stopped at .* with (\d+) of 200 requests\./);
      const offered = Number(/with (\d+) of 200/.exec(text)![1]);
      assert.ok(offered >= due.size, `the offer counts ${offered} requests, at least the ${due.size} finished 2 s before the kill`);
      await shot(page, 'host-51-recover-offered');
      await toast.first().locator('.monaco-button', { hasText: 'Recover' }).click();

      const r = await reportFrame(page);
      const flags = r.locator('.run-header .flags');
      await flags.waitFor({ state: 'visible', timeout: 30_000 });
      assert.match(await flags.innerText(), /Interrupted: the process stopped after .* with \d+ of 200 requests finished/);
      await shot(page, 'host-52-recovered-report');
      const side = await showSidebar(page);
      await waitFor('the recovered run in the list, marked', async () => (await side.locator('#runs-list li.item .badge', { hasText: 'interrupted' }).count()) >= 1, 30_000);
      const after = page.locator('.notifications-toasts .notification-toast', { hasText: 'stopped at' });
      await waitFor('the offer to go', async () => (await after.count()) === 0, 10_000);
    },
  },
];
