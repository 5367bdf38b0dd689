// Issue 32's "what is missing where a user looks for it", through the real workbench (code-server in
// Chromium, the universal VSIX installed in a fresh profile), after test/host/ui.ts's other steps:
// the view's title; the sidebar's form kept when the view is hidden and shown again; Check
// reachability in words; "Profile with this dataset" in the Explorer's context menu and a dataset in
// Custom…; a sweep from the sidebar's form and its report (why it ended first, VS Code's words, the
// tiles said pooled); an export named for its run with Open / Reveal in Explorer; a malformed prompt
// file's squiggle and Problems entry at its line and column; a multi-line `${input:diff}` typed in an
// editor; the first-run walkthrough. Screenshots to test-artifacts/host-6*.png.
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative } from 'node:path';
import type { Page } from 'playwright-core';
import type { ScriptedRequestLog } from '../support/scriptedServer';
import { clearToasts, pickQuickItem, posts, quickInput, runFromPalette, shot, showSidebar, waitFor, webviewFrameWith, type Step } from './uiKit';

/** The workspace folder the workbench has open (code-server's `?folder=`). */
function workspaceOf(page: Page): string {
  const folder = new URL(page.url()).searchParams.get('folder');
  assert.ok(folder, `the workbench's URL names its folder: ${page.url()}`);
  return folder;
}

/** Three ShareGPT conversations, each a prompt no synthetic prompt could be. */
const DATASET_PROMPTS = ['Name one queueing model used for LLM servers.', 'What does a prefix cache keep between requests?', 'Why does TPOT rise with the batch?'];
const DATASET = DATASET_PROMPTS.map((p, i) => JSON.stringify({ id: `c${i}`, conversations: [{ from: 'human', value: p }, { from: 'gpt', value: 'A short answer of a few words.' }] })).join('\n');

/** The text of the last user message a request sent, without the nonce a cold request starts with ("[kk99mf-0] "). */
function lastUserText(l: ScriptedRequestLog): string {
  const messages = (l.body.messages ?? []) as { role: string; content: unknown }[];
  const user = [...messages].reverse().find((m) => m.role === 'user');
  const text = typeof user?.content === 'string' ? user.content : JSON.stringify(user?.content);
  return text.replace(/^\[[a-z0-9]+-\d+\] /, '');
}

const chatPosts = (log: readonly ScriptedRequestLog[], from: number) => log.slice(from).filter((l) => l.path === '/v1/chat/completions');

async function showExplorer(page: Page): Promise<void> {
  await runFromPalette(page, 'Show Explorer');
  await page.locator('.explorer-folders-view').first().waitFor({ state: 'visible', timeout: 15_000 });
}

/** A file's row in the Explorer, its folders expanded (the Explorer refreshed first: the test wrote it from outside). */
async function explorerRow(page: Page, path: readonly string[]): Promise<ReturnType<Page['locator']>> {
  await showExplorer(page);
  await runFromPalette(page, 'Refresh Explorer');
  const rowOf = (name: string) => page.locator(`.explorer-folders-view .monaco-list-row[aria-label="${name}"]`).first();
  for (const [i, name] of path.entries()) {
    const row = rowOf(name);
    await row.waitFor({ state: 'visible', timeout: 15_000 });
    if (i === path.length - 1) return row;
    // a refresh may redraw the tree under the click: expand until the next name shows
    const child = rowOf(path[i + 1]!);
    await waitFor(`${name} expanded`, async () => {
      if (await child.isVisible()) return true;
      if ((await row.getAttribute('aria-expanded')) !== 'true') await row.click();
      await page.waitForTimeout(500);
      return child.isVisible();
    }, 15_000);
  }
  throw new Error('unreachable');
}

/** Until no run goes on (its report's tab marked "● " while it does): Profile endpoint refuses to start a second. */
async function noRunGoing(page: Page): Promise<void> {
  await waitFor('the run in progress to end', async () => (await page.locator('.tabs-container .tab', { hasText: '● ' }).count()) === 0, 60_000);
}

/**
 * Picks `file` in VS Code's own open dialog in the browser (titled `title`, opened on `folder`). The
 * dialog shows the folder's parent first, its list empty, then loads `folder` and writes its path
 * over the box: a path typed before then is lost, and Enter on the folder keeps the dialog open. So
 * the path is typed once the box reads `folder` and the list shows its entries, and Enter is pressed
 * once the list shows the file's own folder; the dialog then closes.
 */
async function pickInOpenDialog(page: Page, title: string, folder: string, file: string): Promise<void> {
  const widget = page.locator('.quick-input-widget');
  const dialogTitle = widget.locator('.quick-input-title', { hasText: title });
  const box = widget.locator('.quick-input-box input').first();
  const listed = (name: string) => widget.locator('.quick-input-list .monaco-list-row', { hasText: name }).first().isVisible();
  await dialogTitle.waitFor({ state: 'visible', timeout: 20_000 });
  const shows = async (value: string, entry: string) => (await box.inputValue()) === value && listed(entry);
  await waitFor(`the dialog to show ${folder}/ and list it`, () => shows(`${folder}/`, relative(folder, file).split('/')[0]!), 15_000);
  await box.fill(file);
  await waitFor(`the dialog to take the path and list ${dirname(file)}/`, () => shows(file, basename(file)), 15_000);
  await box.press('Enter');
  await dialogTitle.waitFor({ state: 'hidden', timeout: 15_000 });
}

/** Opens a workspace file from the Explorer (the test may have just written it: Quick Open's file list can lag behind). */
async function openInEditor(page: Page, path: readonly string[]): Promise<void> {
  const row = await explorerRow(page, path);
  await row.click();
  await page.locator('.tabs-container .tab', { hasText: path[path.length - 1]! }).first().waitFor({ state: 'visible', timeout: 15_000 });
}

export const missingSteps: Step[] = [
  {
    name: 'the view\'s title reads "LLM PROFILER", not "LLM PROFILER: PROFILER"',
    fn: async ({ page }) => {
      await showSidebar(page);
      const title = page.locator('.part.sidebar .composite.title .title-label h2').first();
      await title.waitFor({ state: 'visible', timeout: 15_000 });
      assert.equal((await title.innerText()).trim(), 'LLM PROFILER');
      await shot(page, 'host-60-view-title');
    },
  },
  {
    name: 'the sidebar\'s form keeps 3 / 12 / 64 when the view is hidden and shown again',
    fn: async ({ page }) => {
      let f = await showSidebar(page);
      await f.locator('#input-workload-kind').selectOption('single');
      await f.locator('#field-concurrency input').fill('3');
      await f.locator('#field-requests input').fill('12');
      await f.locator('#field-maxTokens input').fill('64');
      await showExplorer(page);
      await page.waitForTimeout(1000);
      f = await showSidebar(page);
      const values = await Promise.all(['concurrency', 'requests', 'maxTokens'].map((k) => f.locator(`#field-${k} input`).inputValue()));
      await shot(page, 'host-61-form-kept');
      assert.deepEqual(values, ['3', '12', '64']);
    },
  },
  {
    name: 'Check reachability says it in words: "ui-scripted: reachable (… ms)"',
    fn: async ({ page, endpointName }) => {
      const f = await showSidebar(page);
      await f.locator('[data-focus="check-endpoints"]').click();
      const status = f.locator('#reach-status');
      await waitFor('the check\'s answer', async () => new RegExp(`(^|; )${endpointName}: reachable \\(\\d[\\d.,]* ms\\)(;|$)`).test((await status.textContent()) ?? ''), 20_000);
      assert.match(await f.locator(`li.item[data-key="cfg:${endpointName}"] .reach-note`).innerText(), /^reachable \(/);
      await shot(page, 'host-62-reachability-said');
    },
  },
  {
    name: 'a ShareGPT .jsonl in the Explorer: right-click offers "Profile with this dataset", which sends its prompts',
    fn: async ({ page, server, endpointName }) => {
      await clearToasts(page);
      const ws = workspaceOf(page);
      mkdirSync(join(ws, 'data'), { recursive: true });
      writeFileSync(join(ws, 'data', 'chat.sharegpt.jsonl'), `${DATASET}\n`);
      const row = await explorerRow(page, ['data', 'chat.sharegpt.jsonl']);
      await row.click({ button: 'right' });
      const item = page.locator('.context-view .monaco-menu .action-label', { hasText: 'Profile with this dataset' });
      await item.waitFor({ state: 'visible', timeout: 10_000 });
      await shot(page, 'host-63-explorer-profile-dataset');
      const from = server.log.length;
      // a menu may drop a click that comes as it opens: hovered (so it has the focus), clicked, and Enter when it is still open
      await item.hover();
      await page.waitForTimeout(300);
      await item.click();
      await page.waitForTimeout(800);
      if (await item.isVisible().catch(() => false)) await page.keyboard.press('Enter');
      await pickQuickItem(page, endpointName);
      await quickInput(page, 'Profile with this dataset: workload');
      await pickQuickItem(page, 'Quick check');
      await waitFor('the quick check at the server', () => chatPosts(server.log, from).length >= 6, 60_000);
      const sent = chatPosts(server.log, from).map(lastUserText);
      assert.ok(sent.every((t) => DATASET_PROMPTS.includes(t)), `every request sent one of the dataset's prompts: ${JSON.stringify(sent)}`);
      await page.locator('.tabs-container .tab', { hasText: 'chat.sharegpt.jsonl' }).first().waitFor({ state: 'visible', timeout: 30_000 })
        .catch(() => undefined);
      await shot(page, 'host-64-dataset-run');
    },
  },
  {
    name: 'Custom… asks for the prompts third: "From a dataset file…" sends the file\'s',
    fn: async ({ page, server, endpointName }) => {
      await clearToasts(page);
      const ws = workspaceOf(page);
      // the dataset (the step before writes it too, but this step stands on its own)
      mkdirSync(join(ws, 'data'), { recursive: true });
      writeFileSync(join(ws, 'data', 'chat.sharegpt.jsonl'), `${DATASET}\n`);
      await noRunGoing(page);
      const from = server.log.length;
      await runFromPalette(page, 'LLM Profiler: Profile endpoint');
      await pickQuickItem(page, endpointName);
      await pickQuickItem(page, 'Custom…');
      await (await quickInput(page, 'Custom workload (1/3)')).press('Enter');
      const requests = await quickInput(page, 'Custom workload (2/3)');
      await requests.fill('4');
      await requests.press('Enter');
      await quickInput(page, 'Custom workload (3/3)');
      await shot(page, 'host-65-custom-prompts');
      await pickQuickItem(page, 'From a dataset file…');
      await pickInOpenDialog(page, 'The dataset whose prompts to send', ws, join(ws, 'data', 'chat.sharegpt.jsonl'));
      await waitFor('the 4 requests (and 1 warmup) at the server', () => chatPosts(server.log, from).length >= 5, 60_000);
      const sent = chatPosts(server.log, from).map(lastUserText);
      assert.ok(sent.every((t) => DATASET_PROMPTS.includes(t)), `the dataset's prompts: ${JSON.stringify(sent)}`);
      await noRunGoing(page);
    },
  },
  {
    name: 'a sweep from the sidebar\'s form: its report says why it ended first, in VS Code\'s words, its tiles said pooled',
    fn: async ({ page, server }) => {
      await clearToasts(page);
      const f = await showSidebar(page);
      const before = posts(server);
      await f.locator('#input-workload-kind').selectOption('sweep');
      await f.locator('#input-sweep-axis').selectOption('concurrency');
      await f.locator('#input-sweep-values').fill('1, 2');
      await f.locator('#field-requests input').fill('3');
      await f.locator('#field-maxTokens input').fill('16');
      await shot(page, 'host-66-sidebar-sweep');
      await f.locator('#run-button').click();
      await waitFor('two points of 3 requests (and a warmup each)', () => posts(server) >= before + 8, 90_000);
      const frame = await webviewFrameWith(page, '.sweep-facts li', 60_000);
      const facts = await frame.locator('.sweep-facts li').allInnerTexts();
      assert.ok(facts.some((t) => /set llmProfiler\.slo in the settings/.test(t)), `VS Code's words for the SLO: ${facts.join(' | ')}`);
      assert.ok(!(await frame.locator('body').innerText()).includes('--slo'), 'no CLI flag in the report');
      assert.match(await frame.locator('.headline .headline-note').innerText(), /^All 2 points pooled \(c=1 to c=2, \d+ requests\)/);
      await shot(page, 'host-67-sweep-report');
    },
  },
  {
    name: 'Export CSV: the default file name is the run\'s name; "saved" offers Open and Reveal in Explorer, which shows it',
    fn: async ({ page }) => {
      await clearToasts(page);
      const frame = await webviewFrameWith(page, '.sweep-facts li', 30_000);
      await frame.locator('button.action', { hasText: 'Export CSV' }).first().click();
      const input = page.locator('.quick-input-widget .quick-input-box input').first();
      await input.waitFor({ state: 'visible', timeout: 20_000 });
      await waitFor('the save dialog\'s file name', async () => /\.csv$/.test(await input.inputValue()), 15_000);
      const name = (await input.inputValue()).split('/').pop()!;
      await shot(page, 'host-68-export-name');
      assert.match(name, /^sweep .* on ui-scripted \d{4}-\d\d-\d\d \d\d-\d\d\.csv$/, `named for the run: ${name}`);
      await input.press('Enter');
      const toast = page.locator('.notifications-toasts .notification-toast', { hasText: 'saved' });
      await toast.first().waitFor({ state: 'visible', timeout: 20_000 });
      const buttons = (await toast.first().locator('.monaco-button').allInnerTexts()).map((t) => t.trim()).filter(Boolean);
      assert.deepEqual(buttons.slice(0, 2), ['Open', 'Reveal in Explorer']);
      await toast.first().locator('.monaco-button', { hasText: 'Reveal in Explorer' }).click();
      const row = page.locator(`.explorer-folders-view .monaco-list-row[aria-label="${name}"]`);
      await row.waitFor({ state: 'visible', timeout: 15_000 });
      await waitFor('the file selected in the Explorer', async () => (await row.getAttribute('aria-selected')) === 'true' || /\bselected\b|\bfocused\b/.test((await row.getAttribute('class')) ?? ''), 10_000);
      await shot(page, 'host-69-export-revealed');
    },
  },
  {
    name: 'a malformed prompt file: a squiggle and a Problems entry at the refusal\'s line and column',
    fn: async ({ page }) => {
      await clearToasts(page);
      await openInEditor(page, ['prompts', 'broken.prompt.yml']);
      await page.locator('.monaco-editor .squiggly-error').first().waitFor({ state: 'attached', timeout: 30_000 });
      // by the mouse: with the focus in the Problems panel, code-server's F1 opens no palette
      await page.locator('.part.statusbar #status\\.problems a, .part.statusbar [id="status.problems"] .statusbar-item-label').first().click();
      const entry = page.locator('.markers-panel .monaco-list-row', { hasText: 'not valid YAML' }).first();
      await entry.waitFor({ state: 'visible', timeout: 20_000 });
      const text = (await entry.innerText()).replace(/\s+/g, ' ');
      await shot(page, 'host-70-prompt-problem');
      assert.match(text, /LLM Profiler/);
      // the place the reader gave, as the message says it (1-based), is where the entry points
      const said = /\(line (\d+), column (\d+)\)/.exec(text);
      assert.ok(said, `the refusal names its line and column: ${text}`);
      assert.match(text, new RegExp(`\\[Ln ${said[1]}, Col ${said[2]}\\]`), text);
      // the panel closed again (by the mouse, as it was opened), the focus back in the editor: as the steps after this one expect the workbench
      await page.locator('.part.panel .title-actions .action-label[aria-label^="Hide Panel"], .part.panel .global-actions .action-label[aria-label^="Hide Panel"]').first().click();
      await page.locator('.markers-panel').first().waitFor({ state: 'hidden', timeout: 10_000 });
      await page.locator('.tabs-container .tab', { hasText: 'broken.prompt.yml' }).first().click();
      // the editor takes the focus a moment after the click: a palette opened before then would lose it
      await page.waitForTimeout(1000);
    },
  },
  {
    name: 'a ${input:diff} is typed in an editor: its newlines reach the server',
    fn: async ({ page, server }) => {
      await clearToasts(page);
      const ws = workspaceOf(page);
      writeFileSync(join(ws, 'prompts', 'review.prompt.md'), ['---', 'description: Review a change', '---', 'List the risks of this change:', '', '${input:diff:paste the diff}', ''].join('\n'));
      await openInEditor(page, ['prompts', 'review.prompt.md']);
      const lens = page.locator('.codelens-decoration a', { hasText: '▶ Profile' }).first();
      await lens.waitFor({ state: 'visible', timeout: 30_000 });
      const from = server.log.length;
      await lens.click();
      const use = page.locator('.codelens-decoration a', { hasText: '✓ Use this text for' });
      await use.waitFor({ state: 'visible', timeout: 30_000 });
      await page.locator('.editor-group-container.active .monaco-editor textarea').first().focus();
      await page.keyboard.type('- a = 1');
      await page.keyboard.press('Enter');
      await page.keyboard.type('+ a = 2');
      await shot(page, 'host-71-multiline-input');
      await use.click();
      await waitFor('the quick check at the server', () => chatPosts(server.log, from).length >= 6, 60_000);
      const sent = chatPosts(server.log, from).map(lastUserText);
      assert.ok(sent.every((t) => t.includes('- a = 1\n+ a = 2')), `the diff's newline kept: ${JSON.stringify(sent[0])}`);
      assert.equal(await page.locator('.tabs-container .tab', { hasText: 'diff (review.prompt.md)' }).count(), 0, 'its editor closed');
    },
  },
  {
    name: 'the first-run walkthrough opens in this fresh profile: four steps ticked by what happened; "New prompt file" opens one with ▶ Profile',
    fn: async ({ page }) => {
      await clearToasts(page);
      await runFromPalette(page, 'LLM Profiler: Get started');
      const walkthrough = page.locator('.gettingStartedContainer');
      await walkthrough.locator('h2.category-title', { hasText: 'Get started with LLM Profiler' }).first().waitFor({ state: 'visible', timeout: 30_000 });
      const steps = (await walkthrough.locator('button.getting-started-step h3.step-title').allInnerTexts()).map((t) => t.trim());
      assert.deepEqual(steps, ['Start the local server', 'Profile it', 'Open a prompt file', 'Add your endpoint']);
      const step = (title: string) => walkthrough.locator('button.getting-started-step', { has: page.locator('h3.step-title', { hasText: title }) });
      // ticked from what happened, not from a click: runs were made; the local server (not bundled in this VSIX) never ran
      await waitFor('"Profile it" ticked: runs were made', async () => (await step('Profile it').getAttribute('aria-checked')) === 'true', 10_000);
      assert.equal(await step('Start the local server').getAttribute('aria-checked'), 'false', 'the local server never ran here');
      await shot(page, 'host-72-walkthrough');
      await step('Open a prompt file').click();
      await step('Open a prompt file').locator('.monaco-button', { hasText: 'New prompt file' }).click();
      await page.locator('.tabs-container .tab', { hasText: 'example.prompt.md' }).first().waitFor({ state: 'visible', timeout: 20_000 });
      await page.locator('.codelens-decoration a', { hasText: '▶ Profile' }).first().waitFor({ state: 'visible', timeout: 30_000 });
      await shot(page, 'host-73-walkthrough-prompt-file');
      await runFromPalette(page, 'LLM Profiler: Get started');
      await waitFor('"Open a prompt file" ticked', async () => (await step('Open a prompt file').getAttribute('aria-checked')) === 'true', 15_000);
      // leave the workbench as found: the walkthrough closed, the example closed unsaved, the focus out of the walkthrough's pages
      for (const name of ['Walkthrough', 'example.prompt.md']) {
        const tab = page.locator('.tabs-container .tab', { hasText: name }).first();
        await tab.click();
        await tab.locator('.tab-actions .action-label').first().click();
        const dialog = page.locator('.monaco-dialog-box');
        await waitFor(`${name} closed, or a question`, async () => (await tab.count()) === 0 || dialog.isVisible(), 10_000);
        if (await dialog.isVisible()) await dialog.locator('.monaco-button', { hasText: 'Don\'t Save' }).click();
      }
      await waitFor('the walkthrough and the example closed', async () => (await page.locator('.tabs-container .tab', { hasText: /Walkthrough|example\.prompt\.md/ }).count()) === 0, 10_000);
      // the focus back in the workbench's own document (not a webview's), where F1 opens the palette
      await page.locator('.part.sidebar .composite.title').first().click();
      await runFromPalette(page, 'Notifications: Clear All Notifications');
    },
  },
];
