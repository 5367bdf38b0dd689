// axe-core on the extension's webviews inside the real workbench (code-server), in a light, a dark
// and a high-contrast colour theme: the report panel (a run and its charts) and the sidebar. Runs
// last, after the other UI steps have left runs to open. No serious or critical violation allowed.
import assert from 'node:assert/strict';
import type { Frame, Page } from 'playwright-core';
import { axeViolations, describeViolations } from '../support/axe';
import { runFromPalette, shot, waitFor, webviewFrameWith, type Step } from './uiKit';

/** The colour themes as VS Code's theme picker labels them, and the body class each gives a webview. */
const THEMES = [
  { label: 'Light Modern', bodyClass: 'vscode-light', slug: 'light' },
  { label: 'Dark Modern', bodyClass: 'vscode-dark', slug: 'dark' },
  { label: 'Dark High Contrast', bodyClass: 'vscode-high-contrast', slug: 'hc' },
] as const;

async function setColorTheme(page: Page, label: string): Promise<void> {
  await runFromPalette(page, 'Preferences: Color Theme');
  const input = page.locator('.quick-input-widget input');
  await input.fill(label);
  // the list filtered down to the theme (on a loaded machine the click could land on a row that is
  // about to move), then Enter, and the picker gone before anything else is typed
  const first = page.locator('.quick-input-list .monaco-list-row').first();
  await waitFor(`the theme list filtered to ${label}`, async () => (await first.innerText().catch(() => '')).includes(label), 15_000);
  await input.press('Enter');
  await page.locator('.quick-input-widget').waitFor({ state: 'hidden', timeout: 15_000 });
  await page.waitForTimeout(800);
}

/** Shows the LLM Profiler view (its icon toggles the side bar: clicked only while the view is not there). */
async function openSidebar(page: Page): Promise<Frame> {
  const icon = page.locator('.part.activitybar .action-item a[aria-label^="LLM Profiler"]').first();
  await icon.waitFor({ state: 'visible', timeout: 30_000 });
  for (let i = 0; i < 3; i++) {
    try {
      return await webviewFrameWith(page, '#run-button', 4000);
    } catch {
      await icon.click();
    }
  }
  return webviewFrameWith(page, '#run-button');
}

/** Opens the newest stored run in the report panel (Open run → the first pick). */
async function openNewestRun(page: Page): Promise<void> {
  await runFromPalette(page, 'LLM Profiler: Open run');
  const row = page.locator('.quick-input-list .monaco-list-row').first();
  await row.waitFor({ state: 'visible', timeout: 15_000 });
  await row.click();
}

export const a11ySteps: Step[] = THEMES.map((t) => ({
  name: `axe: the report panel and the sidebar in the ${t.label} theme have no serious or critical violation`,
  fn: async ({ page }) => {
    await setColorTheme(page, t.label);
    await openNewestRun(page);
    const report = await webviewFrameWith(page, 'table.percentiles');
    await report.waitForSelector(`body.${t.bodyClass}[data-rendered]`, { timeout: 30_000 });
    const sidebar = await openSidebar(page);
    await sidebar.waitForSelector(`body.${t.bodyClass}`, { timeout: 30_000 });
    await shot(page, `host-a11y-${t.slug}`);
    const problems: string[] = [];
    const inReport = await axeViolations(report);
    if (inReport.length) problems.push(`report panel:\n  ${describeViolations(inReport)}`);
    const inSidebar = await axeViolations(sidebar);
    if (inSidebar.length) problems.push(`sidebar:\n  ${describeViolations(inSidebar)}`);
    assert.equal(problems.length, 0, `axe in the ${t.label} theme:\n${problems.join('\n')}`);
  },
}));
