// Issue 32 §1 through the real workbench: one run's start time in one form, in the reader's locale, on
// its tab, in the run list and in its report's header; the prompt tokens the server counted beside
// those asked in the header and the run list (the scripted server counts every prompt as 8 tokens:
// said as it is). Runs after the other UI steps (test/host/ui.ts); screenshot test-artifacts/host-90-*.png.
import assert from 'node:assert/strict';
import { pickQuickItem, posts, reportFrame, runFromPalette, shot, showSidebar, waitFor, type Step } from './uiKit';

export const numbersSteps: Step[] = [
  {
    name: 'a run\'s start time is one form on its tab, in the run list and in the report\'s header; its prompt tokens as the server counted them',
    fn: async ({ page, server, endpointName }) => {
      await runFromPalette(page, 'View: Close All Editor Groups');
      const before = posts(server);
      await runFromPalette(page, 'LLM Profiler: Profile endpoint');
      await pickQuickItem(page, endpointName);
      await pickQuickItem(page, 'Quick check');
      await waitFor('6 requests at the server', () => posts(server) >= before + 6, 60_000);
      const head = `c=1 · 5 req on ${endpointName}, `;
      // the report's tab once the run has ended (a live one's title starts with "● ")
      const tab = page.locator('.tabs-container .tab .label-name', { hasText: new RegExp(`^${head.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`) }).first();
      await tab.waitFor({ state: 'visible', timeout: 30_000 });
      const title = (await tab.innerText()).trim();
      const on = `on ${endpointName}, `;
      const when = title.slice(title.indexOf(on) + on.length);
      assert.match(when, /\d{4},? \d{1,2}:\d\d:\d\d/, `the date and the time to the second: ${title}`);
      const f = await reportFrame(page);
      const meta = f.locator('.run-header .meta').first();
      await meta.waitFor({ state: 'visible', timeout: 30_000 });
      const text = (await meta.innerText()).trim();
      assert.ok(text.endsWith(` · ${when}`), `the header "${text}" ends with the tab's time "${when}"`);
      assert.match(text, /8-token prompts as the server counted them \(128 asked/, text);
      await shot(page, 'host-90-numbers-report');
      const sb = await showSidebar(page);
      const row = sb.locator('li.item', { hasText: title }).first();
      await row.waitFor({ state: 'visible', timeout: 30_000 });
      assert.equal((await row.locator('.name').innerText()).trim(), title, 'the run list names the run as its tab does, its time included');
      const rowMeta = (await row.locator('.meta').innerText()).trim();
      assert.ok(!/\d{1,2}\/\d{1,2}\/\d{4}|UTC|\d\d:\d\d/.test(rowMeta), `the run list "${rowMeta}" says no time in another form`);
      assert.match(rowMeta, /8-token prompts \(128 asked\)/, rowMeta);
      await shot(page, 'host-91-numbers-sidebar');
    },
  },
];
